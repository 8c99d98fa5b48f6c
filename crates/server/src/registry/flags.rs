//! A command's flags, as Redis names them in its command table
//! (`src/commands/*.json`'s `command_flags`): a small set, tested with
//! [`Flags::has`].
//!
//! * **Owns**: nothing but the names; a leaf module.

/// A set of command flags.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flags(u32);

/// Every flag Redis 7.0 gives commands, by the JSON's name.
const NAMES: &[(&str, Flags)] = &[
    ("WRITE", WRITE),
    ("READONLY", READONLY),
    ("DENYOOM", DENYOOM),
    ("MODULE", MODULE),
    ("ADMIN", ADMIN),
    ("PUBSUB", PUBSUB),
    ("NOSCRIPT", NOSCRIPT),
    ("BLOCKING", BLOCKING),
    ("LOADING", LOADING),
    ("STALE", STALE),
    ("SKIP_MONITOR", SKIP_MONITOR),
    ("SKIP_SLOWLOG", SKIP_SLOWLOG),
    ("ASKING", ASKING),
    ("FAST", FAST),
    ("NO_AUTH", NO_AUTH),
    ("MAY_REPLICATE", MAY_REPLICATE),
    ("SENTINEL", SENTINEL),
    ("ONLY_SENTINEL", ONLY_SENTINEL),
    ("NO_MANDATORY_KEYS", NO_MANDATORY_KEYS),
    ("PROTECTED", PROTECTED),
    ("NO_ASYNC_LOADING", NO_ASYNC_LOADING),
    ("NO_MULTI", NO_MULTI),
    ("MOVABLE_KEYS", MOVABLE_KEYS),
    ("ALLOW_BUSY", ALLOW_BUSY),
    ("TOUCHES_ARBITRARY_KEYS", TOUCHES_ARBITRARY_KEYS),
];

const fn bit(n: u32) -> Flags {
    Flags(1 << n)
}

pub const NONE: Flags = Flags(0);
pub const WRITE: Flags = bit(0);
pub const READONLY: Flags = bit(1);
pub const DENYOOM: Flags = bit(2);
pub const MODULE: Flags = bit(3);
pub const ADMIN: Flags = bit(4);
pub const PUBSUB: Flags = bit(5);
pub const NOSCRIPT: Flags = bit(6);
pub const BLOCKING: Flags = bit(7);
pub const LOADING: Flags = bit(8);
pub const STALE: Flags = bit(9);
pub const SKIP_MONITOR: Flags = bit(10);
pub const SKIP_SLOWLOG: Flags = bit(11);
pub const ASKING: Flags = bit(12);
pub const FAST: Flags = bit(13);
pub const NO_AUTH: Flags = bit(14);
pub const MAY_REPLICATE: Flags = bit(15);
pub const SENTINEL: Flags = bit(16);
pub const ONLY_SENTINEL: Flags = bit(17);
pub const NO_MANDATORY_KEYS: Flags = bit(18);
pub const PROTECTED: Flags = bit(19);
pub const NO_ASYNC_LOADING: Flags = bit(20);
pub const NO_MULTI: Flags = bit(21);
pub const MOVABLE_KEYS: Flags = bit(22);
pub const ALLOW_BUSY: Flags = bit(23);
pub const TOUCHES_ARBITRARY_KEYS: Flags = bit(24);

impl Flags {
    /// True if every flag of `other` is set.
    pub const fn has(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }

    /// True if any flag of `other` is set.
    pub const fn any(self, other: Flags) -> bool {
        self.0 & other.0 != 0
    }

    pub const fn with(self, other: Flags) -> Flags {
        Flags(self.0 | other.0)
    }

    /// The flags named in a JSON description's `command_flags`; a name
    /// Redis 7.0 does not have is `None`.
    pub fn from_names<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<Flags, &'a str> {
        names.into_iter().try_fold(NONE, |all, name| {
            let (_, f) = NAMES.iter().find(|(n, _)| *n == name).ok_or(name)?;
            Ok(all.with(*f))
        })
    }
}

impl std::ops::BitOr for Flags {
    type Output = Flags;
    fn bitor(self, other: Flags) -> Flags {
        self.with(other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back_as_their_flags() {
        let f = Flags::from_names(["WRITE", "FAST"]).unwrap();
        assert!(f.has(WRITE) && f.has(FAST) && f.has(WRITE | FAST));
        assert!(!f.has(READONLY) && !f.has(WRITE | READONLY));
        assert!(f.any(WRITE | READONLY));
        assert_eq!(Flags::from_names(["NOPE"]), Err("NOPE"));
        let all = Flags::from_names(NAMES.iter().map(|(n, _)| *n)).unwrap();
        assert_eq!(all.0.count_ones() as usize, NAMES.len());
    }
}
