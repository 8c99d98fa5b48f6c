//! [`AtSnapshot`]: the access of commands that only read (see the
//! module above).

use slsm::Snapshot;

use super::{collect_items, collect_lent, collect_values, live_keys, range_after, Access, Item};
use crate::resp::Bulks;
use crate::store::{now_ms, Spaces, Value};

/// At one snapshot, for commands that only read: consistent like a
/// transaction's reads, without a transaction to begin, track and
/// validate. Writes are refused (a command run here that wrote would be a
/// bug in the server's read-only list).
pub struct AtSnapshot<'a> {
    pub snap: &'a Snapshot,
    pub sp: &'a Spaces,
}

fn read_only() -> slsm::Error {
    slsm::Error::InvalidArgument("a read-only command tried to write".into())
}

impl Access for AtSnapshot<'_> {
    fn get(&mut self, key: &[u8]) -> slsm::Result<Option<Value>> {
        Ok(self
            .snap
            .get_in(&self.sp.ks, key)?
            .and_then(|v| Value::decode(&v, now_ms())))
    }

    fn set(&mut self, _key: &[u8], _value: &Value) -> slsm::Result<()> {
        Err(read_only())
    }

    fn del(&mut self, _key: &[u8]) -> slsm::Result<()> {
        Err(read_only())
    }

    fn keys_after(&mut self, after: Option<&[u8]>, limit: usize) -> slsm::Result<Vec<Vec<u8>>> {
        live_keys(
            self.snap
                .range_in::<Vec<u8>, _>(&self.sp.ks, range_after(after)),
            limit,
        )
    }

    fn item(&mut self, key: &[u8]) -> slsm::Result<Option<Vec<u8>>> {
        Ok(self.snap.get_in(&self.sp.items, key)?.map(|v| v.to_vec()))
    }

    fn put_item(&mut self, _key: &[u8], _value: &[u8]) -> slsm::Result<()> {
        Err(read_only())
    }

    fn del_item(&mut self, _key: &[u8]) -> slsm::Result<()> {
        Err(read_only())
    }

    fn items(
        &mut self,
        from: &[u8],
        to: &[u8],
        limit: usize,
        strip: usize,
    ) -> slsm::Result<Vec<Item>> {
        collect_lent(self.snap.range_in(&self.sp.items, from..to), limit, strip)
    }

    fn values(&mut self, from: &[u8], to: &[u8], limit: usize) -> slsm::Result<Bulks> {
        collect_values(self.snap.range_in(&self.sp.items, from..to), limit)
    }

    fn items_rev(
        &mut self,
        from: &[u8],
        to: &[u8],
        limit: usize,
        strip: usize,
    ) -> slsm::Result<Vec<Item>> {
        collect_items(
            self.snap.range_in(&self.sp.items, from..to).rev(),
            limit,
            strip,
        )
    }

    fn new_version(&mut self) -> slsm::Result<u64> {
        Err(read_only())
    }

    fn tuning(&self) -> &crate::store::Tuning {
        &self.sp.tuning
    }

    fn drop_elements(&mut self, _from: &[u8], _to: &[u8]) -> slsm::Result<()> {
        Err(read_only())
    }
}
