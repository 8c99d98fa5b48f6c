//! Where a list's elements sit: at consecutive indexes `head..tail`,
//! each under its index's sub-key, so a range of positions is one range
//! of sub-keys.

use crate::access::Access;
use crate::collections::Coll;
use crate::commands::{fail, Fail};
use crate::resp::Bulks;

/// The sub-key of index `i`: byte order is index order.
pub(super) fn index_key(i: i64) -> [u8; 8] {
    ((i as u64) ^ (1 << 63)).to_be_bytes()
}

pub(super) fn missing_element() -> Fail {
    fail("ERR corrupt list: an element is missing")
}

/// The elements at positions `first..=last` of `list`.
pub(super) fn elements(
    acc: &mut dyn Access,
    list: &Coll,
    first: i64,
    last: i64,
) -> Result<Bulks, Fail> {
    let want = (last - first + 1) as usize;
    let from = index_key(list.head + first);
    let to = index_key(list.head + last + 1);
    let values = list.values(acc, &from, Some(&to), want)?;
    if values.len() != want {
        return Err(missing_element());
    }
    Ok(values)
}
