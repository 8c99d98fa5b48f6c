//! Value ownership: every stored value is dropped exactly once (removed
//! values and the values left in a dropped map, through the epoch
//! collector and the per-thread object pools), for values of several
//! sizes and alignments, including zero-sized ones.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_epoch as epoch;
use slsm_extent::ExtentMap;

/// Runs the epoch collector until `done` holds (deferred destruction is
/// lazy, and an exited thread hands its last garbage over in its TLS
/// destructors, which may run after `thread::scope` has returned); panics
/// if it never does.
fn collect_until(done: impl Fn() -> bool, left: impl Fn() -> usize) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        for _ in 0..1_000 {
            if done() {
                return;
            }
            epoch::pin().flush();
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    panic!("deferred values were never dropped: {} left", left());
}

#[derive(Clone)]
#[repr(align(64))]
struct Big {
    _tag: Arc<()>,
    pad: [u64; 9],
}

fn exercise<T, const C: usize>(n: u64, make: impl Fn(u64) -> T + Sync, token: &Arc<()>)
where
    T: Clone + Send + Sync + 'static,
{
    let m = ExtentMap::<T, C>::with_leaf_capacity();
    // Several threads, so values are freed by threads other than the one
    // that allocated them.
    std::thread::scope(|s| {
        for t in 0..3u64 {
            let (m, make) = (&m, &make);
            s.spawn(move || {
                for i in (t..n).step_by(3) {
                    m.insert(i * 10, 5, make(i)).unwrap();
                }
                for i in (t..n).step_by(6) {
                    assert!(m.remove(i * 10, 5).is_some());
                    assert!(m.lookup(i * 10).is_none());
                }
                for i in 0..n {
                    drop(m.lookup(i * 10));
                }
            });
        }
    });
    assert!(Arc::strong_count(token) > 1);
    drop(m);
    collect_until(
        || Arc::strong_count(token) == 1,
        || Arc::strong_count(token) - 1,
    );
}

#[test]
fn values_are_dropped_exactly_once() {
    // Under Miri two dozen values already cross threads in every value
    // shape and split the leaves of capacity 4 and 8; more only lengthens
    // the epoch drain.
    let n = if cfg!(miri) { 24 } else { 2_000 };
    let token = Arc::new(());
    exercise::<Arc<()>, 4>(n, |_| token.clone(), &token);
    exercise::<Arc<()>, 64>(n, |_| token.clone(), &token);
    exercise::<(Arc<()>, u8), 8>(n, |_| (token.clone(), 1), &token);
    exercise::<Big, 4>(
        n,
        |i| Big {
            _tag: token.clone(),
            pad: [i; 9],
        },
        &token,
    );
}

#[test]
fn zero_sized_values() {
    let m = ExtentMap::<(), 4>::with_leaf_capacity();
    for i in 0..100 {
        m.insert(i * 2, 1, ()).unwrap();
    }
    assert_eq!(m.len(), 100);
    for i in 0..100 {
        assert_eq!(m.remove(i * 2, 1), Some(()));
    }
    assert!(m.is_empty());
}

#[test]
fn big_values_round_trip() {
    let m = ExtentMap::<Big, 4>::with_leaf_capacity();
    let tag = Arc::new(());
    let n = if cfg!(miri) { 40 } else { 200 };
    for i in 0..n {
        let v = Big {
            _tag: tag.clone(),
            pad: [i; 9],
        };
        m.insert(i * 4, 3, v).unwrap();
    }
    for i in 0..n {
        let e = m.lookup(i * 4 + 2).unwrap();
        assert_eq!(e.value.pad, [i; 9]);
        assert_eq!(std::ptr::addr_of!(e.value) as usize % 64, 0);
    }
    for i in (0..n).rev() {
        assert_eq!(m.remove(i * 4, 3).unwrap().pad, [i; 9]);
    }
}
