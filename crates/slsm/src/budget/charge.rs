//! [`JobCharge`]: what one running flush or merge holds, admitted against
//! the memory budget before it is taken (see the [budget's module
//! docs](super) for what is refused, what waits and why nothing deadlocks).
//!
//! * **Owns**: the count of bytes its job holds; the budget's split holds
//!   the same count, changed only through [`JobCharge`]'s methods.
//! * **Thread safety**: a charge belongs to one job (`&mut self`); the
//!   budget behind it is shared.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use super::{JobKind, MemoryBudget};
use crate::memtable::MemRun;
use crate::version::Version;

/// What one job holds, charged to the budget; dropping it releases it.
pub(crate) struct JobCharge {
    budget: Arc<MemoryBudget>,
    kind: JobKind,
    held: usize,
}

impl std::fmt::Debug for JobCharge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "JobCharge({:?}, {} bytes)", self.kind, self.held)
    }
}

impl JobCharge {
    fn new(budget: Arc<MemoryBudget>, kind: JobKind) -> JobCharge {
        JobCharge {
            budget,
            kind,
            held: 0,
        }
    }

    /// Which job's floor it draws on.
    pub fn kind(&self) -> JobKind {
        self.kind
    }

    /// Bytes held now.
    pub fn held(&self) -> usize {
        self.held
    }

    /// Holds `bytes` instead of what it held, if the budget has room for
    /// the growth (a decrease always succeeds). False if refused: nothing
    /// changed.
    pub fn try_set(&mut self, bytes: usize) -> bool {
        let ok = self.budget.set_held(self.kind, self.held, bytes, false);
        if ok {
            self.held = bytes;
        }
        ok
    }

    /// Holds `bytes` whether or not the budget has room (memory already
    /// taken, such as a file's index once it is open): counted as an
    /// overrun if it went past the budget.
    pub fn force(&mut self, bytes: usize) {
        self.budget.set_held(self.kind, self.held, bytes, true);
        self.held = bytes;
    }

    /// [`try_set`](Self::try_set), waiting for room until `deadline`.
    pub fn set_waiting(&mut self, bytes: usize, deadline: Instant) -> bool {
        loop {
            if self.try_set(bytes) {
                return true;
            }
            if !self.budget.wait_for_held(self.kind, bytes, deadline) {
                return false;
            }
        }
    }

    /// Ends the job whose output files `version` now holds: their indexes
    /// and filters move from this charge to the budget's pinned bytes in one
    /// step (`MemoryBudget::rebalance_releasing`), never counted twice or
    /// not at all, and what the memory runs it `flushed` were given past
    /// their reserve comes back.
    pub fn end(mut self, version: &Version, flushed: &[Arc<MemRun>]) {
        self.budget
            .rebalance_releasing(version, Some(self.kind), flushed);
        // The budget took back what this charge held: dropping it gives
        // back nothing.
        self.held = 0;
    }
}

/// The budget's side of a job's charge: handing it out, and changing what
/// the job holds (the room counted past the job's floor).
impl MemoryBudget {
    /// A charge for the memory one flush or merge holds while it runs.
    pub fn job_charge(self: &Arc<Self>, kind: JobKind) -> JobCharge {
        JobCharge::new(Arc::clone(self), kind)
    }

    /// The floor of `kind`'s job.
    fn floor(&self, kind: JobKind) -> usize {
        self.floors[kind as usize]
    }

    /// Sets what `kind`'s job holds from `from` to `to` if the budget has
    /// room (past the job's floor, the cache shrinks first), or if `force`
    /// (counting an overrun if it went past the budget). False if refused.
    fn set_held(&self, kind: JobKind, from: usize, to: usize, force: bool) -> bool {
        let mut split = self.split.lock();
        debug_assert_eq!(split.held[kind as usize], from);
        let floor = self.floor(kind);
        let need = to
            .saturating_sub(floor)
            .saturating_sub(from.saturating_sub(floor));
        if need > 0 && need > self.room(&split) {
            if !force {
                return false;
            }
            self.overruns.fetch_add(1, Ordering::Relaxed);
        }
        split.held[kind as usize] = to;
        self.resize_cache(&split);
        drop(split);
        if to < from {
            self.room.notify_all();
        }
        true
    }

    /// Waits until `kind`'s job could hold `to` (up to `deadline`).
    fn wait_for_held(&self, kind: JobKind, to: usize, deadline: Instant) -> bool {
        let mut split = self.split.lock();
        let floor = self.floor(kind);
        loop {
            let from = split.held[kind as usize];
            let need = to
                .saturating_sub(floor)
                .saturating_sub(from.saturating_sub(floor));
            if need <= self.room(&split) {
                return true;
            }
            if self.room.wait_until(&mut split, deadline).timed_out() {
                return false;
            }
        }
    }
}

impl Drop for JobCharge {
    fn drop(&mut self) {
        if self.held > 0 {
            self.force(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use proptest::prelude::*;

    use super::*;
    use crate::options::Options;

    fn budget(bytes: usize) -> Arc<MemoryBudget> {
        Arc::new(MemoryBudget::new(&Options {
            memory_budget: bytes,
            ..Options::default()
        }))
    }

    fn empty_version() -> Arc<crate::version::Version> {
        let run = crate::memtable::MemRun::new(&Options::default(), 0, &[]);
        Arc::new(crate::version::Version::new(
            vec![Arc::new(run)],
            Vec::new(),
        ))
    }

    /// Everything the budget accounts for but the cache's blocks, plus the
    /// cache's capacity: what the cache may fill to.
    fn committed_with_cache(b: &MemoryBudget) -> u64 {
        let u = b.usage(empty_version);
        u.memory_runs_limit + u.pinned + u.buffers + u.building + u.cache.capacity
    }

    #[test]
    fn a_charge_within_the_floor_leaves_the_cache_alone() {
        let b = budget(4 << 20);
        let before = b.cache().stats().capacity;
        let mut c = b.job_charge(JobKind::Flush);
        assert!(c.try_set(b.floor(JobKind::Flush)));
        assert_eq!(b.cache().stats().capacity, before);
        assert!(c.try_set(b.floor(JobKind::Flush) + 4096));
        assert_eq!(b.cache().stats().capacity, before - 4096);
        drop(c);
        assert_eq!(b.cache().stats().capacity, before);
    }

    #[test]
    fn growth_past_the_cache_is_refused_and_changes_nothing() {
        let b = budget(4 << 20);
        let cache = b.cache().stats().capacity as usize;
        let floor = b.floor(JobKind::Merge);
        let mut c = b.job_charge(JobKind::Merge);
        assert!(!c.try_set(floor + cache + 1));
        assert_eq!(c.held(), 0);
        assert_eq!(b.cache().stats().capacity as usize, cache);
        assert!(c.try_set(floor + cache));
        assert_eq!(b.cache().stats().capacity, 0);
        assert!(!b
            .job_charge(JobKind::Flush)
            .try_set(b.floor(JobKind::Flush) + 1));
        assert_eq!(b.usage(empty_version).overruns, 0);
    }

    #[test]
    fn a_waiting_charge_gets_the_room_another_gives_back() {
        let b = budget(4 << 20);
        let cache = b.cache().stats().capacity as usize;
        let mut flush = b.job_charge(JobKind::Flush);
        assert!(flush.try_set(b.floor(JobKind::Flush) + cache));
        let giver = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            flush.try_set(0)
        });
        let mut merge = b.job_charge(JobKind::Merge);
        let deadline = Instant::now() + Duration::from_secs(10);
        assert!(merge.set_waiting(b.floor(JobKind::Merge) + cache / 2, deadline));
        assert!(giver.join().unwrap());
        let soon = Instant::now() + Duration::from_millis(20);
        assert!(!merge.set_waiting(b.floor(JobKind::Merge) + cache + 1, soon));
    }

    #[test]
    fn a_forced_charge_past_the_budget_counts_an_overrun() {
        let b = budget(4 << 20);
        let cache = b.cache().stats().capacity as usize;
        let mut c = b.job_charge(JobKind::Flush);
        c.force(b.floor(JobKind::Flush) + cache + 100);
        let usage = b.usage(empty_version);
        assert_eq!(usage.overruns, 1);
        assert_eq!(usage.cache.capacity, 0);
    }

    #[derive(Clone, Debug)]
    enum Step {
        Set(usize, usize),
        Force(usize, usize),
        Oversize(usize),
        Reserve(usize),
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            4 => (0..2usize, 0..(3usize << 20)).prop_map(|(k, b)| Step::Set(k, b)),
            1 => (0..2usize, 0..(64usize << 10)).prop_map(|(k, b)| Step::Force(k, b)),
            1 => (0..(1usize << 20)).prop_map(Step::Oversize),
            1 => (0..(256usize << 10)).prop_map(Step::Reserve),
        ]
    }

    proptest! {
        /// Random interleavings of two jobs' charges and releases, writes
        /// bigger than a run and reserve growth, against a model of the
        /// budget: a change is admitted exactly when the model has room
        /// for it past the job's floor, the accounted total (with the
        /// cache's capacity) never passes the budget unless forced, and
        /// an overrun is counted exactly when a forced change needed room
        /// that was not there.
        #[test]
        fn charges_follow_the_model(steps in prop::collection::vec(step(), 1..60)) {
            let total = 4usize << 20;
            let b = budget(total);
            let mut charges = [b.job_charge(JobKind::Flush), b.job_charge(JobKind::Merge)];
            let floors = [b.floor(JobKind::Flush), b.floor(JobKind::Merge)];
            let fixed = b.buffers + floors[0] + floors[1];
            let (mut held, mut oversize, mut overruns) = ([0usize; 2], 0usize, 0u64);
            let runs = b.memory_runs;
            let excess = |held: &[usize; 2]| -> usize {
                held.iter().zip(floors).map(|(&h, f)| h.saturating_sub(f)).sum()
            };
            for s in steps {
                let room = total.saturating_sub(
                    b.run_reserve() * runs + fixed + oversize + excess(&held));
                match s {
                    Step::Set(k, bytes) => {
                        let mut next = held;
                        next[k] = bytes;
                        let need = excess(&next).saturating_sub(excess(&held));
                        let admitted = charges[k].try_set(bytes);
                        prop_assert_eq!(admitted, need == 0 || need <= room);
                        if admitted { held = next; }
                    }
                    Step::Force(k, bytes) => {
                        let mut next = held;
                        next[k] = bytes;
                        let need = excess(&next).saturating_sub(excess(&held));
                        if need > 0 && need > room { overruns += 1; }
                        charges[k].force(bytes);
                        held = next;
                    }
                    Step::Oversize(extra) => {
                        let run = crate::memtable::MemRun::new(&Options::default(), 0, &[]);
                        let got = b.take_oversize(&run, extra, Duration::ZERO);
                        prop_assert_eq!(run.oversize(), if matches!(got, Ok(true)) { extra } else { 0 });
                        match got {
                            Ok(true) => { prop_assert!(extra <= room); oversize += extra; }
                            Ok(false) => prop_assert!(extra > room),
                            Err(_) => prop_assert!(extra > room),
                        }
                    }
                    Step::Reserve(bytes) => {
                        let before = b.run_reserve();
                        let ok = b.make_room_in_run(bytes);
                        let after = b.run_reserve();
                        prop_assert!(after >= before);
                        if ok { prop_assert!(after >= bytes.min(b.run_ceiling)); }
                        prop_assert!((after - before) * runs <= room);
                    }
                }
                let usage = b.usage(empty_version);
                prop_assert_eq!(usage.overruns, overruns);
                if overruns == 0 {
                    prop_assert!(committed_with_cache(&b) <= total as u64,
                        "{} > {}: {:?}", committed_with_cache(&b), total, usage);
                }
                prop_assert!(usage.cache.usage <= usage.cache.capacity);
            }
        }
    }
}
