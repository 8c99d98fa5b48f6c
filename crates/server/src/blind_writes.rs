//! Blind writes: `SET key value` (no options) and `MSET`, which read
//! nothing and reply `+OK` whatever the keys held, so a run of them is one
//! batch of puts. The single node writes a pipeline of them so
//! (`pipeline`), and a cluster node applies a log entry of them so
//! (`cluster::apply`).
//!
//! * **Owns**: nothing; plain functions of the requests.

use slsm::{Keyspace, WriteBatch};

use crate::resp::Request;
use crate::store;

/// True for `SET key value` with no options, and for `MSET`.
pub fn is_blind_write(req: &Request) -> bool {
    let name = req[0].as_slice();
    match req.len() {
        3 => name.eq_ignore_ascii_case(b"set"),
        n => n >= 3 && !n.is_multiple_of(2) && name.eq_ignore_ascii_case(b"mset"),
    }
}

/// The puts of `group`'s blind writes, in order, as one batch: a string
/// replaces whatever the key held (the elements of a collection it
/// replaced are swept as unowned) and clears its time to live.
pub fn batch(ks: &Keyspace, group: &[Request]) -> WriteBatch {
    let mut batch = WriteBatch::new();
    let mut stored = Vec::new();
    for req in group {
        for pair in req[1..].chunks_exact(2) {
            store::encode_into(&pair[1], 0, &mut stored);
            batch.put_in(ks, &pair[0], &stored);
        }
    }
    batch
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(args: &[&str]) -> Request {
        args.iter().map(|a| a.as_bytes().to_vec()).collect()
    }

    #[test]
    fn only_plain_sets_and_msets_are_blind() {
        assert!(is_blind_write(&req(&["SET", "k", "v"])));
        assert!(is_blind_write(&req(&["set", "k", "v"])));
        assert!(is_blind_write(&req(&["MSET", "a", "1", "b", "2"])));
        assert!(!is_blind_write(&req(&["SET", "k", "v", "EX", "10"])));
        assert!(!is_blind_write(&req(&["SET", "k", "v", "GET"])));
        assert!(!is_blind_write(&req(&["MSET", "a", "1", "b"])));
        assert!(!is_blind_write(&req(&["MSET", "a"])));
        assert!(!is_blind_write(&req(&["SETNX", "k", "v"])));
    }
}
