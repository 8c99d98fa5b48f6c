//! The tracking tables and the messages their changes send (what
//! `Tracking` guards with its mutex): Redis's `TrackingTable`,
//! `PrefixTable` and each client's tracking flags.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Weak};

use super::options::Options;
use crate::clients::{Client, TRACKING_BCAST, TRACKING_BROKEN, TRACKING_ON};
use crate::pubsub::Subscriber;

/// One tracking client.
pub(super) struct Tracker {
    pub client: Arc<Client>,
    pub options: Options,
    /// A message found its redirect target gone.
    pub broken: bool,
}

impl Tracker {
    /// Publishes the state to `CLIENT LIST`.
    fn show(&self) {
        let bits = TRACKING_ON
            | if self.broken { TRACKING_BROKEN } else { 0 }
            | if self.options.mode.bcast {
                TRACKING_BCAST
            } else {
                0
            };
        self.client.set_tracking(bits, self.options.redirect as i64);
    }
}

#[derive(Default)]
pub(super) struct Tables {
    /// Key → the clients that read it since it last changed (ids of
    /// clients no longer tracking are left to be skipped, as in Redis).
    pub keys: HashMap<Vec<u8>, Vec<u64>>,
    /// How many (key, client) pairs `keys` holds.
    pub items: usize,
    /// BCAST prefix → its clients.
    pub prefixes: BTreeMap<Vec<u8>, Vec<u64>>,
    pub trackers: HashMap<u64, Tracker>,
    pub outboxes: HashMap<u64, Weak<Subscriber>>,
}

impl Tables {
    /// Redis's `enableTracking`: the options replace the old ones, but a
    /// BCAST client's prefixes are added to those it has (none given: the
    /// empty prefix, every key).
    pub fn enable(&mut self, client: &Arc<Client>, mut options: Options) {
        let id = client.id;
        let mut prefixes = match self.trackers.remove(&id) {
            Some(old) if options.mode.bcast => old.options.prefixes,
            _ => Vec::new(),
        };
        if options.mode.bcast {
            if options.prefixes.is_empty() {
                options.prefixes.push(Vec::new());
            }
            for p in options.prefixes.drain(..) {
                let clients = self.prefixes.entry(p.clone()).or_default();
                if !clients.contains(&id) {
                    clients.push(id);
                }
                if !prefixes.contains(&p) {
                    prefixes.push(p);
                }
            }
        }
        options.prefixes = prefixes;
        let tracker = Tracker {
            client: Arc::clone(client),
            options,
            broken: false,
        };
        tracker.show();
        self.trackers.insert(id, tracker);
    }

    /// Redis's `disableTracking`: the client leaves its prefixes; the keys
    /// it read stay in the table until they change.
    pub fn disable(&mut self, id: u64) {
        let Some(tracker) = self.trackers.remove(&id) else {
            return;
        };
        for p in &tracker.options.prefixes {
            if let Some(clients) = self.prefixes.get_mut(p) {
                clients.retain(|&c| c != id);
                if clients.is_empty() {
                    self.prefixes.remove(p);
                }
            }
        }
        tracker.client.set_tracking(0, -1);
    }

    pub fn remember<'k>(&mut self, id: u64, keys: impl Iterator<Item = &'k [u8]>) {
        for key in keys {
            let clients = match self.keys.get_mut(key) {
                Some(clients) => clients,
                None => self.keys.entry(key.to_vec()).or_default(),
            };
            if !clients.contains(&id) {
                clients.push(id);
                self.items += 1;
            }
        }
    }

    /// Forgets keys until at most `max` are tracked (0: no bound), telling
    /// their clients (Redis's `trackingLimitUsedSlots`; it picks keys at
    /// random, this takes them in the table's order, which is as good).
    pub fn evict_over(&mut self, max: usize) {
        while max > 0 && self.keys.len() > max {
            let Some(key) = self.keys.keys().next().cloned() else {
                return;
            };
            self.forget_and_tell(&key, 0);
        }
    }

    /// Forgets `key`, telling the default-mode clients that read it but
    /// `writer` if it asked for `NOLOOP` (Redis's `trackingInvalidateKey`).
    fn forget_and_tell(&mut self, key: &[u8], writer: u64) {
        let Some(ids) = self.keys.remove(key) else {
            return;
        };
        self.items -= ids.len();
        for id in ids {
            let told = self
                .trackers
                .get(&id)
                .is_some_and(|t| !(t.options.mode.bcast || t.options.noloop && id == writer));
            if told {
                self.send(id, Some(&[key]));
            }
        }
    }

    /// `keys` changed, by client `writer` (0: none, e.g. an expiry).
    pub fn changed(&mut self, keys: &[Vec<u8>], writer: u64) {
        let mut seen = HashSet::with_capacity(keys.len());
        let keys: Vec<&[u8]> = keys
            .iter()
            .map(Vec::as_slice)
            .filter(|k| seen.insert(*k))
            .collect();
        if !self.keys.is_empty() {
            for key in &keys {
                self.forget_and_tell(key, writer);
            }
        }
        if !self.prefixes.is_empty() {
            self.broadcast(keys, writer);
        }
    }

    /// BCAST: each prefix's clients get the changed keys under it, sorted,
    /// in one message (a `NOLOOP` client none of its own).
    fn broadcast(&mut self, mut keys: Vec<&[u8]>, writer: u64) {
        keys.sort_unstable();
        let sends: Vec<(u64, Vec<&[u8]>)> = self
            .prefixes
            .iter()
            .filter_map(|(prefix, ids)| {
                let under: Vec<&[u8]> = keys
                    .iter()
                    .copied()
                    .filter(|k| k.starts_with(prefix))
                    .collect();
                (!under.is_empty()).then_some((ids, under))
            })
            .flat_map(|(ids, under)| ids.iter().map(move |&id| (id, under.clone())))
            .filter(|(id, _)| {
                let noloop = self.trackers.get(id).is_some_and(|t| t.options.noloop);
                !(noloop && *id == writer)
            })
            .collect();
        for (id, under) in sends {
            self.send(id, Some(&under));
        }
    }

    /// Every key is gone: each tracking client is told so, once, and the
    /// table is emptied (Redis's `trackingInvalidateKeysOnFlush`).
    pub fn flushed(&mut self) {
        let ids: Vec<u64> = self.trackers.keys().copied().collect();
        for id in ids {
            self.send(id, None);
        }
        self.keys.clear();
        self.items = 0;
    }

    /// Sends client `id` an invalidation of `keys` (`None`: every key).
    fn send(&mut self, id: u64, keys: Option<&[&[u8]]>) {
        if let Some(target) = self.target(id) {
            // A redirect reaches a RESP2 connection only as a message on
            // the channel it subscribed to.
            let as_message = target.redirected && target.outbox.client.subscribed();
            target.outbox.deliver_invalidation(keys, as_message);
        }
    }

    /// Where client `id`'s messages go now; `None` if nowhere: its
    /// redirect target is gone (it is told so, in RESP3) or it is.
    fn target(&mut self, id: u64) -> Option<Target> {
        let own = upgrade(self.outboxes.get(&id));
        let tracker = self.trackers.get_mut(&id)?;
        let redirect = tracker.options.redirect;
        if redirect == 0 {
            return own.map(|outbox| Target {
                outbox,
                redirected: false,
            });
        }
        if let Some(outbox) = upgrade(self.outboxes.get(&redirect)) {
            return Some(Target {
                outbox,
                redirected: true,
            });
        }
        tracker.broken = true;
        tracker.show();
        if let Some(own) = own {
            own.deliver_redirect_broken(redirect);
        }
        None
    }
}

/// Redis's `checkPrefixCollisionsOrReply`: the error for a prefix of
/// `new` that overlaps (is a prefix of, or has as a prefix) one of `own`
/// or another of `new`.
pub(super) fn collision(own: &[Vec<u8>], new: &[Vec<u8>]) -> Option<String> {
    let overlap = |a: &[u8], b: &[u8]| {
        let n = a.len().min(b.len());
        a[..n] == b[..n]
    };
    let show = |p: &[u8]| String::from_utf8_lossy(p).into_owned();
    for (i, p) in new.iter().enumerate() {
        if let Some(o) = own.iter().find(|o| overlap(o, p)) {
            return Some(format!(
                "ERR Prefix '{}' overlaps with an existing prefix '{}'. Prefixes for a single client must not overlap.",
                show(p),
                show(o)
            ));
        }
        if let Some(o) = new[i + 1..].iter().find(|o| overlap(p, o)) {
            return Some(format!(
                "ERR Prefix '{}' overlaps with another provided prefix '{}'. Prefixes for a single client must not overlap.",
                show(p),
                show(o)
            ));
        }
    }
    None
}

/// Where a tracking client's messages go.
struct Target {
    outbox: Arc<Subscriber>,
    redirected: bool,
}

fn upgrade(outbox: Option<&Weak<Subscriber>>) -> Option<Arc<Subscriber>> {
    outbox.and_then(Weak::upgrade)
}
