//! The commands on data: strings, keys and (in `crate::collections`)
//! lists, hashes, sets and sorted sets. Each runs against an `Access`
//! (straight, in a transaction or at a snapshot) and returns its reply;
//! its registry row (`crate::registry`) says which. The failures and
//! integer parsing every command shares are `crate::error`'s, re-exported
//! here.

mod bitfield;
pub(crate) mod bits;
pub(crate) mod hyperloglog;
pub(crate) mod keys;
mod lcs;
pub(crate) mod strings;

pub use crate::error::*;
