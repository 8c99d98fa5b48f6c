//! Shared test helpers: the internal-key order and a sorted-vector model.
#![allow(dead_code)]

use std::cmp::Ordering;
use std::ops::Bound;

use slsm_skiplist::{KeyOrder, LowerBounds, SkipList};

/// LSM-style internal key: `user_key ++ seq` (8-byte big-endian), ordered by
/// user key ascending, then seq DESCENDING (newest first).
#[derive(Clone, Copy, Debug, Default)]
pub struct InternalOrder;

pub fn split(k: &[u8]) -> (&[u8], &[u8]) {
    if k.len() >= 8 {
        k.split_at(k.len() - 8)
    } else {
        (k, &[])
    }
}

impl KeyOrder for InternalOrder {
    fn user_key<'a>(&self, key: &'a [u8]) -> &'a [u8] {
        split(key).0
    }
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        let (ua, ta) = split(a);
        let (ub, tb) = split(b);
        ua.cmp(ub).then_with(|| tb.cmp(ta))
    }
}

/// The internal-key order whose node prefix is the 8 bytes of the user key
/// after `shared` (`key_prefix_past`), as the engine's memory runs use it.
#[derive(Clone, Debug, Default)]
pub struct SharedPrefixOrder {
    pub shared: Vec<u8>,
}

impl KeyOrder for SharedPrefixOrder {
    fn user_key<'a>(&self, key: &'a [u8]) -> &'a [u8] {
        InternalOrder.user_key(key)
    }
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        InternalOrder.compare(a, b)
    }
    fn prefix(&self, key: &[u8]) -> u64 {
        slsm_skiplist::key_prefix_past(&self.shared, self.user_key(key))
    }
}

pub fn ikey(user: &[u8], seq: u64) -> Vec<u8> {
    let mut k = user.to_vec();
    k.extend_from_slice(&seq.to_be_bytes());
    k
}

/// Sorted-vector model of the map under an order.
pub struct Model<'o, O: KeyOrder> {
    pub order: &'o O,
    pub v: Vec<(Vec<u8>, Vec<u8>)>,
}

impl<'o, O: KeyOrder> Model<'o, O> {
    pub fn new(order: &'o O) -> Self {
        Model {
            order,
            v: Vec::new(),
        }
    }
    pub fn insert(&mut self, k: &[u8], val: &[u8]) -> bool {
        match self.v.binary_search_by(|e| self.order.compare(&e.0, k)) {
            Ok(_) => false,
            Err(i) => {
                self.v.insert(i, (k.to_vec(), val.to_vec()));
                true
            }
        }
    }
    pub fn get(&self, k: &[u8]) -> Option<&[u8]> {
        self.v
            .binary_search_by(|e| self.order.compare(&e.0, k))
            .ok()
            .map(|i| &self.v[i].1[..])
    }
    fn ge_idx(&self, k: &[u8]) -> usize {
        self.v
            .partition_point(|e| self.order.compare(&e.0, k) == Ordering::Less)
    }
    fn gt_idx(&self, k: &[u8]) -> usize {
        self.v
            .partition_point(|e| self.order.compare(&e.0, k) != Ordering::Greater)
    }
    pub fn lower_bound(&self, k: &[u8]) -> Option<(&[u8], &[u8])> {
        self.v.get(self.ge_idx(k)).map(|e| (&e.0[..], &e.1[..]))
    }
    pub fn last_le(&self, k: &[u8]) -> Option<(&[u8], &[u8])> {
        let i = self.gt_idx(k);
        (i > 0).then(|| (&self.v[i - 1].0[..], &self.v[i - 1].1[..]))
    }
    pub fn range(&self, lo: Bound<&[u8]>, hi: Bound<&[u8]>) -> &[(Vec<u8>, Vec<u8>)] {
        let a = match lo {
            Bound::Unbounded => 0,
            Bound::Included(k) => self.ge_idx(k),
            Bound::Excluded(k) => self.gt_idx(k),
        };
        let b = match hi {
            Bound::Unbounded => self.v.len(),
            Bound::Included(k) => self.gt_idx(k),
            Bound::Excluded(k) => self.ge_idx(k),
        };
        if a >= b {
            &[]
        } else {
            &self.v[a..b]
        }
    }
}

pub fn pairs<'a>(it: impl Iterator<Item = (&'a [u8], &'a [u8])>) -> Vec<(Vec<u8>, Vec<u8>)> {
    it.map(|(k, v)| (k.to_vec(), v.to_vec())).collect()
}

pub type OwnedRange = (Bound<Vec<u8>>, Bound<Vec<u8>>);

pub fn bounds(a: &[u8], b: &[u8]) -> Vec<OwnedRange> {
    let mk = |k: &[u8]| {
        vec![
            Bound::Unbounded,
            Bound::Included(k.to_vec()),
            Bound::Excluded(k.to_vec()),
        ]
    };
    let mut out = Vec::new();
    for lo in mk(a) {
        for hi in mk(b) {
            out.push((lo.clone(), hi));
        }
    }
    out
}

pub fn as_ref(b: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    match b {
        Bound::Unbounded => Bound::Unbounded,
        Bound::Included(k) => Bound::Included(&k[..]),
        Bound::Excluded(k) => Bound::Excluded(&k[..]),
    }
}

/// Checks every read API of `list` against `model` using `probes`.
/// `pattern` drives which end a double-ended iteration pulls from.
pub fn check_all<O: KeyOrder>(
    list: &SkipList<O>,
    model: &Model<'_, O>,
    probes: &[Vec<u8>],
    pattern: &[bool],
) {
    list.check_invariants().unwrap();
    assert_eq!(list.len(), model.v.len());
    assert_eq!(list.is_empty(), model.v.is_empty());
    // Full iteration, both directions.
    assert_eq!(pairs(list.iter()), model.v);
    let mut rev = pairs(list.iter().rev());
    rev.reverse();
    assert_eq!(rev, model.v);
    // Point queries.
    let refs: Vec<&[u8]> = probes.iter().map(|p| &p[..]).collect();
    let expect: Vec<Option<&[u8]>> = refs.iter().map(|k| model.get(k)).collect();
    for (k, e) in refs.iter().zip(&expect) {
        assert_eq!(list.get(k), *e);
        assert_eq!(list.lower_bound(k), model.lower_bound(k));
    }
    assert_eq!(list.multi_get(&refs), expect);
    assert_eq!(list.multi_get_independent(&refs), expect);
    assert_eq!(list.multi_get_finger(&refs), expect);
    let expect_bounds: Vec<_> = refs.iter().map(|k| model.lower_bound(k)).collect();
    assert_eq!(list.lower_bounds(&refs), expect_bounds);
    // Stepped searches, stepped as often as `pattern` says before the end.
    let mut stepped = LowerBounds::new(refs.iter().map(|k| (list, *k)));
    let steps = pattern.iter().filter(|&&b| b).count() * 3;
    for _ in 0..steps {
        stepped.step();
    }
    assert_eq!(stepped.finish(), expect_bounds);
    // Finger in caller (random) order, then sorted order, then reversed.
    let mut f = list.finger();
    for k in &refs {
        assert_eq!(f.seek_ge(k), model.lower_bound(k));
    }
    let mut sorted = refs.clone();
    sorted.sort_by(|a, b| list.order().compare(a, b));
    for k in sorted.iter().chain(sorted.iter().rev()) {
        assert_eq!(f.seek_ge(k), model.lower_bound(k));
    }
    // Cursor seeks and moves.
    let mut it = list.iter();
    for k in &refs {
        it.seek(k);
        assert_eq!(it.entry(), model.lower_bound(k));
        if it.valid() {
            let i = model.v.iter().position(|e| e.0 == it.key()).unwrap();
            it.move_next();
            assert_eq!(it.entry(), model.v.get(i + 1).map(|e| (&e.0[..], &e.1[..])));
            it.seek(k);
            it.move_prev();
            let p = i
                .checked_sub(1)
                .map(|j| (&model.v[j].0[..], &model.v[j].1[..]));
            assert_eq!(it.entry(), p);
        }
        it.seek_for_prev(k);
        assert_eq!(it.entry(), model.last_le(k));
    }
    it.seek_to_first();
    assert_eq!(it.entry(), model.v.first().map(|e| (&e.0[..], &e.1[..])));
    it.seek_to_last();
    assert_eq!(it.entry(), model.v.last().map(|e| (&e.0[..], &e.1[..])));
    // Ranges with every bound kind, forward, backward, and meeting in the middle.
    for w in refs.windows(2).take(6) {
        for (lo, hi) in bounds(w[0], w[1]) {
            let want = model.range(as_ref(&lo), as_ref(&hi));
            let r = (as_ref(&lo), as_ref(&hi));
            assert_eq!(pairs(list.range(r)), want, "{lo:?} {hi:?}");
            let mut back = pairs(list.range(r).rev());
            back.reverse();
            assert_eq!(back, want);
            let mut it = list.range(r);
            let (mut front, mut tail) = (Vec::new(), Vec::new());
            for (i, &fwd) in pattern.iter().cycle().enumerate() {
                let e = if fwd { it.next() } else { it.next_back() };
                match e {
                    Some(e) if fwd => front.push((e.0.to_vec(), e.1.to_vec())),
                    Some(e) => tail.push((e.0.to_vec(), e.1.to_vec())),
                    None => break,
                }
                assert!(i <= want.len());
            }
            assert!(it.next().is_none() && it.next_back().is_none());
            tail.reverse();
            front.extend(tail);
            assert_eq!(front, want);
            // Cursor stays within the range.
            let mut c = list.range(r);
            c.seek_to_last();
            assert_eq!(c.entry(), want.last().map(|e| (&e.0[..], &e.1[..])));
            c.seek(w[0]);
            let first = want
                .iter()
                .find(|x| list.order().compare(&x.0, w[0]) != Ordering::Less)
                .map(|e| (&e.0[..], &e.1[..]));
            assert_eq!(c.entry(), first);
        }
    }
}
