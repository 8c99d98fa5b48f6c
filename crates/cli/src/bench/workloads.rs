//! The workloads: what each benchmark thread does, db_bench style.

use super::engine::{BatchOp, Engine, WriteMode};
use super::flags::BenchFlags;
use super::keygen::{generate_key, KeyGen, KeyOrder, Rng, ValueGen};
use super::report::ThreadStats;
use anyhow::Result;
use indicatif::ProgressBar;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Barrier;
use std::time::Instant;

/// Added to the seeds of reading workloads.
pub const READ_SEED_SALT: u64 = 1 << 32;

/// Which keys [`Ctx::read_keys`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReadKeys {
    /// Any key of `[0, num)` (`readrandom`).
    Uniform,
    /// Keys that are not in the database (db_bench's `readmissing`).
    Missing,
    /// Keys of the first 1% of the range (db_bench's `readhot`).
    Hot,
}

/// Batches progress updates so threads rarely touch the shared bar.
struct Ticker<'a> {
    bar: Option<&'a ProgressBar>,
    pending: u64,
}

impl Ticker<'_> {
    #[inline]
    fn tick(&mut self, n: u64) {
        if let Some(bar) = self.bar {
            self.pending += n;
            if self.pending >= 16384 {
                bar.inc(self.pending);
                self.pending = 0;
            }
        }
    }
}

/// Everything a benchmark thread needs.
pub(crate) struct Ctx<'a> {
    pub(crate) flags: &'a BenchFlags,
    /// Seed offset of this workload's first thread.
    pub(crate) seed_base: u64,
    /// 0 for writing workloads, [`READ_SEED_SALT`] for reading ones.
    pub(crate) seed_salt: u64,
    pub(crate) engine: &'a dyn Engine,
    pub(crate) mode: WriteMode,
    pub(crate) bar: Option<&'a ProgressBar>,
}

impl Ctx<'_> {
    fn ticker(&self) -> Ticker<'_> {
        Ticker {
            bar: self.bar,
            pending: 0,
        }
    }

    fn rng(&self, tid: usize) -> Rng {
        Rng::new(self.seed(tid))
    }

    /// Like db_bench, every thread of every workload gets its own seed
    /// (`--seed` + 1000 + a running thread count), so a readrandom does not
    /// replay the keys of the fill before it. Reading threads also add
    /// [`READ_SEED_SALT`], so reads never replay a fill's keys even across
    /// processes (`--use_existing_db`).
    fn seed(&self, tid: usize) -> u64 {
        self.flags
            .seed
            .wrapping_add(1000 + self.seed_base + tid as u64)
            .wrapping_add(self.seed_salt)
    }

    /// Writes (puts or deletes) `ops` keys in `order`, `batch_size` per call.
    pub(crate) fn write(
        &self,
        tid: usize,
        order: KeyOrder,
        ops: u64,
        delete: bool,
        go: &Barrier,
    ) -> Result<ThreadStats> {
        let f = self.flags;
        let (ks, vs, bs) = (f.key_size, f.value_size, f.batch_size);
        let mut rng = self.rng(tid);
        let mut keys = KeyGen::new(order, f.num);
        let mut values = ValueGen::new(self.seed(tid), vs, self.flags.compression_ratio);
        let mut kbuf = vec![0u8; bs * ks];
        let mut ranges = Vec::with_capacity(bs);
        let mut ticker = self.ticker();
        go.wait();
        let mut st = ThreadStats::start();
        let mut t = st.start;
        // db_bench counts no bytes for deletes.
        let per_entry = if delete { 0 } else { ks + vs } as u64;
        while st.done < ops {
            let n = (bs as u64).min(ops - st.done) as usize;
            if n == 1 {
                let key = &mut kbuf[..ks];
                generate_key(keys.next(&mut rng), key);
                if delete {
                    self.engine.delete(key, self.mode)?;
                } else {
                    let v = values.next(vs);
                    self.engine.put(key, v, self.mode)?;
                }
            } else {
                ranges.clear();
                for j in 0..n {
                    generate_key(keys.next(&mut rng), &mut kbuf[j * ks..(j + 1) * ks]);
                    if !delete {
                        ranges.push(values.next_range(vs));
                    }
                }
                let pool = values.pool();
                let batch: Vec<BatchOp<'_>> = (0..n)
                    .map(|j| {
                        let k = &kbuf[j * ks..(j + 1) * ks];
                        if delete {
                            BatchOp::Delete(k)
                        } else {
                            BatchOp::Put(k, &pool[ranges[j].clone()])
                        }
                    })
                    .collect();
                self.engine.write_batch(&batch, self.mode)?;
            }
            let now = Instant::now();
            st.hist.record(now.duration_since(t).as_nanos() as u64);
            t = now;
            st.done += n as u64;
            st.bytes += n as u64 * per_entry;
            ticker.tick(n as u64);
        }
        st.finish = Instant::now();
        Ok(st)
    }

    /// `ops` operations, each on a random key of `[0, num)`: `op(key, rng,
    /// stats)` does one and records its `found` and `bytes`; its latency,
    /// the count and the progress are recorded here.
    fn random_key_ops(
        &self,
        tid: usize,
        ops: u64,
        go: &Barrier,
        op: impl FnMut(&[u8], &mut Rng, &mut ThreadStats) -> Result<()>,
    ) -> Result<ThreadStats> {
        let f = self.flags;
        self.random_key_ops_in(tid, ops, f.num, f.key_size, go, op)
    }

    /// [`random_key_ops`](Self::random_key_ops) on keys of `[0, range)`,
    /// each cut to its first `len` bytes.
    fn random_key_ops_in(
        &self,
        tid: usize,
        ops: u64,
        range: u64,
        len: usize,
        go: &Barrier,
        mut op: impl FnMut(&[u8], &mut Rng, &mut ThreadStats) -> Result<()>,
    ) -> Result<ThreadStats> {
        let mut rng = self.rng(tid);
        let mut key = vec![0u8; self.flags.key_size];
        let mut ticker = self.ticker();
        go.wait();
        let mut st = ThreadStats::start();
        let mut t = st.start;
        while st.done < ops {
            generate_key(rng.uniform(range), &mut key);
            op(&key[..len], &mut rng, &mut st)?;
            let now = Instant::now();
            st.hist.record(now.duration_since(t).as_nanos() as u64);
            t = now;
            st.done += 1;
            ticker.tick(1);
        }
        st.finish = Instant::now();
        Ok(st)
    }

    /// Random point reads.
    pub(crate) fn read_random(&self, tid: usize, ops: u64, go: &Barrier) -> Result<ThreadStats> {
        self.read_keys(tid, ops, ReadKeys::Uniform, go)
    }

    /// Random point reads of the keys `which` says, db_bench's way:
    /// `readmissing` reads a random key less its last byte (no stored key
    /// is that short, so every read misses); `readhot` a random key of the
    /// first 1% of `[0, num)`.
    pub(crate) fn read_keys(
        &self,
        tid: usize,
        ops: u64,
        which: ReadKeys,
        go: &Barrier,
    ) -> Result<ThreadStats> {
        let f = self.flags;
        let (range, len) = match which {
            ReadKeys::Uniform => (f.num, f.key_size),
            ReadKeys::Missing => (f.num, f.key_size.saturating_sub(1)),
            ReadKeys::Hot => (f.num.div_ceil(100).max(1), f.key_size),
        };
        self.random_key_ops_in(tid, ops, range, len, go, |key, _, st| {
            if let Some(n) = self.engine.get(key)? {
                st.found += 1;
                st.bytes += (key.len() + n) as u64;
            }
            Ok(())
        })
    }

    pub(crate) fn multi_read_random(
        &self,
        tid: usize,
        ops: u64,
        go: &Barrier,
    ) -> Result<ThreadStats> {
        let f = self.flags;
        let (ks, bs) = (f.key_size, f.batch_size);
        let mut rng = self.rng(tid);
        let mut kbuf = vec![0u8; ks * bs];
        let mut ticker = self.ticker();
        go.wait();
        let mut st = ThreadStats::start();
        let mut t = st.start;
        while st.done < ops {
            let n = (bs as u64).min(ops - st.done) as usize;
            for j in 0..n {
                generate_key(rng.uniform(f.num), &mut kbuf[j * ks..(j + 1) * ks]);
            }
            let keys: Vec<&[u8]> = kbuf[..n * ks].chunks_exact(ks).collect();
            let (found, bytes) = self.engine.multi_get(&keys)?;
            st.found += found;
            st.bytes += bytes;
            let now = Instant::now();
            st.hist.record(now.duration_since(t).as_nanos() as u64);
            t = now;
            st.done += n as u64;
            ticker.tick(n as u64);
        }
        st.finish = Instant::now();
        Ok(st)
    }

    /// Random seeks, each followed by `--seek_nexts` nexts.
    pub(crate) fn seek_random(&self, tid: usize, ops: u64, go: &Barrier) -> Result<ThreadStats> {
        let nexts = self.flags.seek_nexts;
        self.random_key_ops(tid, ops, go, |key, _, st| {
            let (exact, bytes) = self.engine.seek(key, nexts)?;
            st.found += exact as u64;
            st.bytes += bytes;
            Ok(())
        })
    }

    pub(crate) fn read_seq(&self, ops: u64, reverse: bool, go: &Barrier) -> Result<ThreadStats> {
        let mut ticker = self.ticker();
        go.wait();
        let mut st = ThreadStats::start();
        let mut t = st.start;
        let (mut done, mut bytes) = (0u64, 0u64);
        let hist = &mut st.hist;
        self.engine.scan(ops, reverse, &mut |len| {
            done += 1;
            bytes += len as u64;
            let now = Instant::now();
            hist.record(now.duration_since(t).as_nanos() as u64);
            t = now;
            ticker.tick(1);
        })?;
        st.done = done;
        st.bytes = bytes;
        st.finish = Instant::now();
        Ok(st)
    }

    /// Random gets mixed with puts of random keys: each op is a get with
    /// probability `--readwritepercent` % (`update`, db_bench's
    /// `updaterandom`: every op is a get and then a put of the same key).
    /// `found` counts the gets that found their key, `bytes` every key and
    /// value read or written; `writes` is increased by the puts done.
    pub(crate) fn read_write_random(
        &self,
        tid: usize,
        ops: u64,
        update: bool,
        writes: &AtomicU64,
        go: &Barrier,
    ) -> Result<ThreadStats> {
        let f = self.flags;
        let mut values = ValueGen::new(self.seed(tid), f.value_size, f.compression_ratio);
        self.random_key_ops(tid, ops, go, |key, rng, st| {
            let read = update || rng.uniform(100) < u64::from(f.readwritepercent);
            if read {
                if let Some(len) = self.engine.get(key)? {
                    st.found += 1;
                    st.bytes += (key.len() + len) as u64;
                }
            }
            if update || !read {
                let v = values.next(f.value_size);
                self.engine.put(key, v, self.mode)?;
                st.bytes += (key.len() + v.len()) as u64;
                writes.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        })
    }

    /// readwhilewriting's writer: random puts until `stop`.
    pub(crate) fn background_writer(
        &self,
        tid: usize,
        stop: &AtomicBool,
        go: &Barrier,
    ) -> Result<u64> {
        let f = self.flags;
        let mut rng = self.rng(tid);
        let mut key = vec![0u8; f.key_size];
        let mut values = ValueGen::new(self.seed(tid), f.value_size, f.compression_ratio);
        go.wait();
        let mut pace = Pace::new(f.benchmark_write_rate_limit);
        let mut n = 0;
        while !stop.load(Ordering::Relaxed) {
            generate_key(rng.uniform(f.num), &mut key);
            let value = values.next(f.value_size);
            self.engine.put(&key, value, self.mode)?;
            pace.wrote(key.len() + value.len());
            n += 1;
        }
        Ok(n)
    }
}

/// Keeps a writer at `--benchmark_write_rate_limit` bytes a second: after
/// each write it sleeps while it is ahead of the rate by a millisecond or
/// more (the schedule is kept from the start, so a slow write is made up
/// for by the next ones instead of lowering the rate).
struct Pace {
    rate: u64,
    start: std::time::Instant,
    bytes: u64,
}

impl Pace {
    fn new(rate: u64) -> Pace {
        Pace {
            rate,
            start: std::time::Instant::now(),
            bytes: 0,
        }
    }

    fn wrote(&mut self, bytes: usize) {
        if self.rate == 0 {
            return;
        }
        self.bytes += bytes as u64;
        let due = std::time::Duration::from_secs_f64(self.bytes as f64 / self.rate as f64);
        let ahead = due.saturating_sub(self.start.elapsed());
        if ahead >= std::time::Duration::from_millis(1) {
            std::thread::sleep(ahead);
        }
    }
}
