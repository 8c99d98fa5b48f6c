//! Searching a [`Block`]: a target is compared with the block's key
//! prefix once, then, past it, with the entries' stored keys (narrowed
//! first by the block's [`KeyPrefixes`] when it has them).

use std::cmp::Ordering;
use std::ops::Range;

use super::Block;
#[cfg(doc)]
use super::KeyPrefixes;
use crate::key;
use crate::sst::format::Decoded;

impl Block {
    /// Index of the first entry at or after `lo` whose key is `>= target`
    /// (`count` if none): what the reader's entry step
    /// (`RunFile::position_in`) finds, in one call, for the block's tests.
    #[cfg(test)]
    pub fn lower_bound(&self, target: &[u8], lo: usize) -> Decoded<usize> {
        self.lower_bound_within(target, self.narrow(target, lo))
    }

    /// The entries among `from..` whose full keys a search for `target`
    /// must compare: every entry before the range is smaller, every entry
    /// from its end on is larger. Reads only the block's prefix and
    /// [`KeyPrefixes`] when it has them (then usually one entry, or none),
    /// so that a batch can start loading each key's entry before comparing
    /// any.
    pub fn narrow(&self, target: &[u8], from: usize) -> Range<usize> {
        let from = from.min(self.count);
        let rest = match self.target_rest(target) {
            Ok(rest) => rest,
            Err(Ordering::Less) => return from..from,
            Err(_) => return self.count..self.count,
        };
        match self.prefixes().and_then(|p| p.narrow(rest, from)) {
            Some(within) => within,
            None => from..self.count,
        }
    }

    /// [`lower_bound`](Self::lower_bound) among the entries `range`
    /// ([`narrow`](Self::narrow) gave for `target`), comparing full keys
    /// (`range.end` if every one is smaller). `narrow` gives an empty
    /// range to a target outside the block's prefix, so a non-empty one
    /// means the target starts with it: the prefix is not compared again.
    pub fn lower_bound_within(&self, target: &[u8], range: Range<usize>) -> Decoded<usize> {
        let (mut lo, mut hi) = (range.start.min(self.count), range.end.min(self.count));
        if lo >= hi {
            return Ok(lo);
        }
        debug_assert!(
            self.target_rest(target).is_ok(),
            "a range narrow did not give"
        );
        let Some(rest) = target.get(self.prefix.len()..) else {
            return Ok(lo);
        };
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if key::compare(self.key_rest(mid)?, rest) == Ordering::Less {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Ok(lo)
    }

    /// Index of the last entry whose key is `<= target`, if any.
    pub fn last_at_or_before(&self, target: &[u8]) -> Decoded<Option<usize>> {
        let rest = match self.target_rest(target) {
            Ok(rest) => rest,
            Err(Ordering::Less) => return Ok(None),
            Err(_) => return Ok(Some(self.count - 1)),
        };
        let (mut lo, mut hi) = (0, self.count);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if key::compare(self.key_rest(mid)?, rest) == Ordering::Greater {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        Ok(lo.checked_sub(1))
    }

    /// The part of the internal key `target` a search compares with the
    /// entries' stored keys, or, if `target` does not start with the
    /// block's prefix, how it compares with every key of the block.
    fn target_rest<'t>(&self, target: &'t [u8]) -> Result<&'t [u8], Ordering> {
        let prefix = self.key_prefix();
        if prefix.is_empty() {
            return Ok(target);
        }
        let user_key = key::user_key(target);
        match user_key.starts_with(prefix) {
            true => Ok(&target[prefix.len()..]),
            // Not equal: they differ within the prefix, or the target's
            // user key is shorter (then smaller).
            false => Err(user_key.cmp(prefix)),
        }
    }
}
