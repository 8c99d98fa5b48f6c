//! Keyspace notifications (Redis's `notify-keyspace-events`): a command
//! that changes a key says so ([`Access::notify`](crate::access::Access)),
//! and once its writes commit each notice is published as Redis publishes
//! it, on `__keyspace@0__:<key>` (the event) and `__keyevent@0__:<event>`
//! (the key), for the classes the parameter enables.
//!
//! `expired` notices come from a watch of the keys given an expiry while
//! notifications of that class are on ([`Expiries`], checked every
//! [`EXPIRY_TICK`]): a key is announced once, when its expiry passes, if
//! it still holds that expiry. A key whose expiry was set before the class
//! was enabled (or before a restart) expires silently, as slsm reads an
//! expired key as missing and leaves its removal to compaction.
//!
//! * **Owns**: [`Notices`] (one command's, until published) and
//!   [`Expiries`] (the server's watch of pending expiries).
//! * **Calls**: `pubsub` (to publish) and the keys keyspace (to check an
//!   expiry still holds).
//! * **Thread safety**: `Notices` belongs to one command; `Expiries` is
//!   shared behind a mutex taken only while the class is on.

use std::collections::BTreeSet;
use std::sync::Mutex;
use std::time::Duration;

use crate::pubsub::PubSub;
use crate::store::Spaces;
use crate::tracking::Tracking;

/// Redis's class bits (`server.h`), so flags read the same there and here.
pub const KEYSPACE: u32 = 1 << 0;
pub const KEYEVENT: u32 = 1 << 1;
pub const GENERIC: u32 = 1 << 2;
pub const STRING: u32 = 1 << 3;
pub const LIST: u32 = 1 << 4;
pub const SET: u32 = 1 << 5;
pub const HASH: u32 = 1 << 6;
pub const ZSET: u32 = 1 << 7;
pub const EXPIRED: u32 = 1 << 8;
pub const EVICTED: u32 = 1 << 9;
pub const STREAM: u32 = 1 << 10;
pub const KEY_MISS: u32 = 1 << 11;
pub const MODULE: u32 = 1 << 13;
pub const NEW: u32 = 1 << 14;
/// Not a class: set while some client tracks keys (`crate::tracking`),
/// so that every key a command changes is kept for the invalidation.
pub const TRACKED: u32 = 1 << 30;
/// `A`: every class but key misses and new keys.
pub const ALL: u32 =
    GENERIC | STRING | LIST | SET | HASH | ZSET | EXPIRED | EVICTED | STREAM | MODULE;

/// How often the expiry watch looks for keys whose expiry has passed.
pub const EXPIRY_TICK: Duration = Duration::from_millis(100);

/// The letters of each class, in the order Redis writes them back.
const LETTERS: [(u8, u32); 11] = [
    (b'g', GENERIC),
    (b'$', STRING),
    (b'l', LIST),
    (b's', SET),
    (b'h', HASH),
    (b'z', ZSET),
    (b'x', EXPIRED),
    (b'e', EVICTED),
    (b't', STREAM),
    (b'd', MODULE),
    (b'n', NEW),
];

/// The flags of a `notify-keyspace-events` value, `None` for a letter
/// that names no class.
pub fn parse(classes: &[u8]) -> Option<u32> {
    classes.iter().try_fold(0, |flags, &c| {
        let class = match c {
            b'A' => ALL,
            b'K' => KEYSPACE,
            b'E' => KEYEVENT,
            b'm' => KEY_MISS,
            c => LETTERS.iter().find(|(l, _)| *l == c)?.1,
        };
        Some(flags | class)
    })
}

/// `flags` as Redis writes them (`CONFIG GET`): `A` for all of its
/// classes, else a letter each; then `K`, `E` and `m`.
pub fn format(flags: u32) -> String {
    let mut out = String::new();
    if flags & ALL == ALL {
        out.push('A');
        if flags & NEW != 0 {
            out.push('n');
        }
    } else {
        let set = LETTERS.iter().filter(|(_, class)| flags & class != 0);
        out.extend(set.map(|(l, _)| *l as char));
    }
    for (letter, class) in [('K', KEYSPACE), ('E', KEYEVENT), ('m', KEY_MISS)] {
        if flags & class != 0 {
            out.push(letter);
        }
    }
    out
}

/// What a command starting now collects of its changes ([`Notices`]):
/// the notifications `tuning` asks for, and the changed keys while some
/// client tracks keys.
pub fn notice_flags(tuning: &crate::store::Tuning) -> u32 {
    let tracking = tuning.tracking.load(std::sync::atomic::Ordering::SeqCst);
    tuning.notify_flags() | if tracking { TRACKED } else { 0 }
}

/// True if `flags` publish notices of `class` (a channel kind is on too).
pub fn publishes(flags: u32, class: u32) -> bool {
    flags & class != 0 && flags & (KEYSPACE | KEYEVENT) != 0
}

/// One command's notices (or a transaction's, a script's), in the order
/// it made them, and the expiries it set, kept until its writes commit.
#[derive(Default)]
pub struct Notices {
    flags: u32,
    notices: Vec<(&'static str, Vec<u8>)>,
    expiries: Vec<(u64, Vec<u8>)>,
    /// The keys changed, while [`TRACKED`].
    changed: Vec<Vec<u8>>,
}

impl Notices {
    /// Notices under `flags` (the parameter's value when the command
    /// started): with none enabled, nothing is ever held.
    pub fn new(flags: u32) -> Notices {
        Notices {
            flags,
            ..Notices::default()
        }
    }

    /// True if notices of `class` are published.
    pub fn wants(&self, class: u32) -> bool {
        publishes(self.flags, class)
    }

    /// Redis's `notifyKeyspaceEvent(class, event, key)`.
    pub fn push(&mut self, class: u32, event: &'static str, key: &[u8]) {
        if self.flags & TRACKED != 0 {
            self.changed.push(key.to_vec());
        }
        if self.wants(class) {
            self.notices.push((event, key.to_vec()));
        }
    }

    /// `key` was written expiring at `at` (ms; 0: never).
    pub fn expires(&mut self, key: &[u8], at: u64) {
        if at != 0 && (self.wants(EXPIRED) || self.flags & TRACKED != 0) {
            self.expiries.push((at, key.to_vec()));
        }
    }

    /// Moves `other`'s notices after these.
    pub fn append(&mut self, other: &mut Notices) {
        self.flags |= other.flags;
        self.notices.append(&mut other.notices);
        self.expiries.append(&mut other.expiries);
        self.changed.append(&mut other.changed);
    }

    pub fn is_empty(&self) -> bool {
        self.notices.is_empty() && self.expiries.is_empty() && self.changed.is_empty()
    }

    /// The messages to publish, `(channel, message)`, in order.
    pub fn messages(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut out = Vec::new();
        for (event, key) in &self.notices {
            if self.flags & KEYSPACE != 0 {
                out.push((
                    [b"__keyspace@0__:", key.as_slice()].concat(),
                    event.as_bytes().to_vec(),
                ));
            }
            if self.flags & KEYEVENT != 0 {
                out.push(([b"__keyevent@0__:", event.as_bytes()].concat(), key.clone()));
            }
        }
        out
    }

    /// Publishes the notices (the writes they tell of have committed),
    /// hands the expiries to the watch and the changed keys to tracking.
    pub fn publish(self, pubsub: &PubSub, watch: &Expiries, tracking: &Tracking) {
        if self.is_empty() {
            return;
        }
        if !self.changed.is_empty() {
            tracking.changed(&self.changed);
        }
        for (channel, message) in self.messages() {
            pubsub.publish(false, &channel, &message);
        }
        watch.watch(self.expiries);
    }
}

/// Keys given an expiry while `expired` notices were on, by expiry time.
#[derive(Default)]
pub struct Expiries {
    due: Mutex<BTreeSet<(u64, Vec<u8>)>>,
}

impl Expiries {
    fn watch(&self, expiries: Vec<(u64, Vec<u8>)>) {
        if expiries.is_empty() {
            return;
        }
        let mut due = self.due.lock().unwrap_or_else(|e| e.into_inner());
        due.extend(expiries);
    }

    /// Takes the watched expiries that have passed at `now`.
    fn take_due(&self, now: u64) -> Vec<(u64, Vec<u8>)> {
        let mut due = self.due.lock().unwrap_or_else(|e| e.into_inner());
        let later = due.split_off(&(now.saturating_add(1), Vec::new()));
        std::mem::replace(&mut *due, later).into_iter().collect()
    }

    /// How many expiries are watched (tests, `INFO`).
    pub fn len(&self) -> usize {
        self.due.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One look at the watch at `now`: an `expired` notice for each key whose
/// watched expiry has passed and is still the one it holds (not deleted,
/// overwritten or given another expiry since).
pub fn expire_due(
    pubsub: &PubSub,
    watch: &Expiries,
    tracking: &Tracking,
    sp: &Spaces,
    now: u64,
) -> slsm::Result<()> {
    let flags = notice_flags(&sp.tuning);
    let mut notices = Notices::new(flags);
    for (at, key) in watch.take_due(now) {
        let Some(stored) = sp.ks.get(&key)? else {
            continue;
        };
        // The expiry as stored, read as of just before it passed.
        if crate::store::expiry_of(&stored, at.saturating_sub(1)) == Some(at) {
            notices.push(EXPIRED, "expired", &key);
        }
    }
    notices.publish(pubsub, watch, tracking);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_read_and_write_as_redis_does() {
        for (given, shown) in [
            ("gKE", "gKE"),
            ("$lshzxeKE", "$lshzxeKE"),
            ("KA", "AK"),
            ("EA", "AE"),
            ("", ""),
            ("AnKE", "AnKE"),
            ("Em", "Em"),
        ] {
            assert_eq!(format(parse(given.as_bytes()).unwrap()), shown, "{given}");
        }
        assert_eq!(parse(b"Kq"), None);
        assert_eq!(parse(b"KEA").unwrap() & ALL, ALL);
    }

    #[test]
    fn notices_publish_on_the_channels_enabled_for_their_class() {
        let mut n = Notices::new(parse(b"KEl").unwrap());
        n.push(STRING, "set", b"foo");
        n.push(LIST, "lpush", b"mylist");
        assert_eq!(
            n.messages(),
            vec![
                (b"__keyspace@0__:mylist".to_vec(), b"lpush".to_vec()),
                (b"__keyevent@0__:lpush".to_vec(), b"mylist".to_vec()),
            ]
        );
        // A class on but neither channel kind: nothing is held.
        let mut quiet = Notices::new(parse(b"A").unwrap());
        quiet.push(STRING, "set", b"foo");
        quiet.expires(b"foo", 5);
        assert!(quiet.is_empty());
    }

    #[test]
    fn the_watch_hands_out_each_expiry_once_when_due() {
        let e = Expiries::default();
        e.watch(vec![
            (10, b"a".to_vec()),
            (20, b"b".to_vec()),
            (10, b"c".to_vec()),
        ]);
        assert!(e.take_due(9).is_empty());
        assert_eq!(
            e.take_due(10),
            vec![(10, b"a".to_vec()), (10, b"c".to_vec())]
        );
        assert!(e.take_due(15).is_empty());
        assert_eq!(e.take_due(u64::MAX), vec![(20, b"b".to_vec())]);
        assert!(e.is_empty());
    }
}
