//! Benchmark: the LWN article's fill / check / delete table plus an
//! IOMMU-like allocate/free pattern, `ExtentMap` against `Mutex<BTreeMap>`
//! and `RwLock<BTreeMap>`.
//!
//! ```text
//! cargo run --release -p slsm-extent --example extent_bench -- [--runs N] [--n N]
//!     [--iommu-ops N] [--threads 1,2,4] [--json PATH] [--sweep] [--only-extent]
//! ```
//!
//! Prints medians over `--runs` repetitions (default 9) and the ratio
//! `baseline time / ExtentMap time` (> 1: ExtentMap is faster) as the
//! median of the per-run ratios (paired: the phases of the implementations
//! run back to back, see `measure_interleaved`), and writes the same
//! figures as JSON (default `target/extent-bench.json`).
//! `--sweep` additionally compares leaf capacities 32 / 64 / 128;
//! `--only-extent` times ExtentMap alone (for profiling).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Mutex, RwLock};
use std::time::Instant;

use slsm_extent::ExtentMap;

trait Map: Send + Sync {
    fn create() -> Self;
    fn ins(&self, s: u64, l: u64, v: u64) -> bool;
    fn get(&self, p: u64) -> Option<u64>;
    fn del(&self, s: u64, l: u64) -> bool;
    fn hole(&self, hint: u64, limit: u64, len: u64, align: u64, v: u64) -> Option<u64>;
}

impl<const C: usize> Map for ExtentMap<u64, C> {
    fn create() -> Self {
        ExtentMap::with_leaf_capacity()
    }
    fn ins(&self, s: u64, l: u64, v: u64) -> bool {
        self.insert(s, l, v).is_ok()
    }
    fn get(&self, p: u64) -> Option<u64> {
        self.lookup(p).map(|e| e.value)
    }
    fn del(&self, s: u64, l: u64) -> bool {
        self.remove(s, l).is_some()
    }
    fn hole(&self, hint: u64, limit: u64, len: u64, align: u64, v: u64) -> Option<u64> {
        self.insert_hole(hint, limit, len, align, v).ok()
    }
}

type Tree = BTreeMap<u64, (u64, u64)>;

fn tree_ins(t: &mut Tree, s: u64, l: u64, v: u64) -> bool {
    let e = s + l;
    if let Some((&ps, &(pl, _))) = t.range(..e).next_back() {
        if ps + pl > s {
            return false;
        }
    }
    t.insert(s, (l, v));
    true
}

fn tree_get(t: &Tree, p: u64) -> Option<u64> {
    let (&s, &(l, v)) = t.range(..=p).next_back()?;
    (p - s < l).then_some(v)
}

fn tree_del(t: &mut Tree, s: u64, l: u64) -> bool {
    match t.get(&s) {
        Some(&(ml, _)) if ml == l => t.remove(&s).is_some(),
        _ => false,
    }
}

fn align_up(x: u64, a: u64) -> Option<u64> {
    Some(x.checked_add(a - 1)? & !(a - 1))
}

/// First fit at or after `hint`, under the caller's lock.
fn tree_hole(t: &mut Tree, hint: u64, limit: u64, len: u64, align: u64, v: u64) -> Option<u64> {
    let mut c = align_up(hint, align)?;
    if let Some((&s, &(l, _))) = t.range(..c).next_back() {
        if s + l > c {
            c = align_up(s + l, align)?;
        }
    }
    for (&s, &(l, _)) in t.range(c..) {
        if c.checked_add(len)? > limit {
            return None;
        }
        if s >= c + len {
            break;
        }
        if s + l > c {
            c = align_up(s + l, align)?;
        }
    }
    if c.checked_add(len)? > limit {
        return None;
    }
    t.insert(c, (len, v));
    Some(c)
}

struct MutexTree(Mutex<Tree>);
struct RwTree(RwLock<Tree>);

impl Map for MutexTree {
    fn create() -> Self {
        MutexTree(Mutex::new(Tree::new()))
    }
    fn ins(&self, s: u64, l: u64, v: u64) -> bool {
        tree_ins(&mut self.0.lock().unwrap(), s, l, v)
    }
    fn get(&self, p: u64) -> Option<u64> {
        tree_get(&self.0.lock().unwrap(), p)
    }
    fn del(&self, s: u64, l: u64) -> bool {
        tree_del(&mut self.0.lock().unwrap(), s, l)
    }
    fn hole(&self, hint: u64, limit: u64, len: u64, align: u64, v: u64) -> Option<u64> {
        tree_hole(&mut self.0.lock().unwrap(), hint, limit, len, align, v)
    }
}

impl Map for RwTree {
    fn create() -> Self {
        RwTree(RwLock::new(Tree::new()))
    }
    fn ins(&self, s: u64, l: u64, v: u64) -> bool {
        tree_ins(&mut self.0.write().unwrap(), s, l, v)
    }
    fn get(&self, p: u64) -> Option<u64> {
        tree_get(&self.0.read().unwrap(), p)
    }
    fn del(&self, s: u64, l: u64) -> bool {
        tree_del(&mut self.0.write().unwrap(), s, l)
    }
    fn hole(&self, hint: u64, limit: u64, len: u64, align: u64, v: u64) -> Option<u64> {
        tree_hole(&mut self.0.write().unwrap(), hint, limit, len, align, v)
    }
}

/// splitmix64: deterministic, dependency-free randomness.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// `n` extents of random length 1..=48 on a 64-stride grid, shuffled.
fn workload(n: usize) -> Vec<(u64, u64)> {
    let mut rng = Rng(42);
    let mut v: Vec<(u64, u64)> = (0..n as u64).map(|i| (i * 64, 1 + rng.below(48))).collect();
    for i in (1..v.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        v.swap(i, j);
    }
    v
}

fn par<F: Fn(usize) + Sync>(threads: usize, f: F) -> f64 {
    let t0 = Instant::now();
    std::thread::scope(|s| {
        for t in 0..threads {
            let f = &f;
            s.spawn(move || f(t));
        }
    });
    t0.elapsed().as_secs_f64() * 1e3
}

/// Splits the workload among `threads`.
fn split(work: &[(u64, u64)], threads: usize) -> Vec<&[(u64, u64)]> {
    work.chunks(work.len().div_ceil(threads).max(1)).collect()
}

/// Times one table phase (0 fill, 1 check, 2 delete) on `m`; each thread
/// works on its own part.
fn table_phase<M: Map>(m: &M, phase: usize, parts: &[&[(u64, u64)]]) -> f64 {
    par(parts.len(), |t| match phase {
        0 => {
            for &(s, l) in parts[t] {
                assert!(m.ins(s, l, s));
            }
        }
        1 => {
            for &(s, l) in parts[t] {
                assert_eq!(m.get(s + l / 2), Some(s));
            }
        }
        _ => {
            for &(s, l) in parts[t] {
                assert!(m.del(s, l));
            }
        }
    })
}

/// (fill, check, delete) milliseconds for one run.
fn table_run<M: Map>(work: &[(u64, u64)], threads: usize) -> [f64; 3] {
    let m = M::create();
    let parts = split(work, threads);
    [0, 1, 2].map(|p| table_phase(&m, p, &parts))
}

/// IOMMU-like: each thread allocates (next-fit from its own hint, random
/// length of 1..=16 pages, alignment 1, 2 or 4 pages) and frees a random
/// live allocation, keeping about `LIVE` allocations; `ops` in total.
fn iommu_run<M: Map>(ops: usize, threads: usize) -> f64 {
    iommu_on(&M::create(), ops, threads)
}

fn iommu_on<M: Map>(m: &M, ops: usize, threads: usize) -> f64 {
    const PAGE: u64 = 4096;
    const LIVE: usize = 256;
    const LIMIT: u64 = 1 << 44;
    let per = ops / threads;
    par(threads, |t| {
        let mut rng = Rng(7 + t as u64);
        let mut live: Vec<(u64, u64)> = Vec::with_capacity(LIVE * 2);
        let mut hint = (t as u64) << 40;
        for _ in 0..per {
            if live.len() < LIVE || (live.len() < 2 * LIVE && rng.below(2) == 0) {
                let len = PAGE * (1 + rng.below(16));
                let align = PAGE << rng.below(3);
                let s = match m.hole(hint, LIMIT, len, align, t as u64) {
                    Some(s) => s,
                    None => m.hole(0, LIMIT, len, align, t as u64).expect("space"),
                };
                hint = s + len;
                live.push((s, len));
            } else {
                let i = rng.below(live.len() as u64) as usize;
                let (s, l) = live.swap_remove(i);
                assert!(m.del(s, l));
            }
        }
    })
}

/// The three compared implementations, for phase-by-phase interleaving
/// (static dispatch inside each phase via `on_map!`).
enum AnyMap {
    Extent(ExtentMap<u64>),
    Mutex(MutexTree),
    RwLock(RwTree),
}

impl AnyMap {
    fn create(i: usize) -> Self {
        match i {
            0 => AnyMap::Extent(Map::create()),
            1 => AnyMap::Mutex(Map::create()),
            _ => AnyMap::RwLock(Map::create()),
        }
    }
}

macro_rules! on_map {
    ($m:expr, $x:ident => $body:expr) => {
        match $m {
            AnyMap::Extent($x) => $body,
            AnyMap::Mutex($x) => $body,
            AnyMap::RwLock($x) => $body,
        }
    };
}

/// Times per phase and run (`[impl][phase][run]`) for ExtentMap,
/// `Mutex<BTreeMap>`, `RwLock<BTreeMap>` (in that order). Interleaved phase by phase: each run builds the three
/// maps and times fill on each, then check on each, then delete on each,
/// then the IOMMU pattern on three fresh maps; the order of the
/// implementations rotates from run to run. So background load on a shared
/// machine (which drifts over tens of milliseconds) hits all of them alike,
/// and no implementation always runs first or last. One warm-up run is not
/// counted.
fn measure_interleaved(
    runs: usize,
    work: &[(u64, u64)],
    iommu_ops: usize,
    threads: usize,
) -> Vec<[Vec<f64>; 4]> {
    let parts = split(work, threads);
    let mut r: Vec<[Vec<f64>; 4]> = (0..3).map(|_| Default::default()).collect();
    for run in 0..=runs {
        let order: Vec<usize> = (0..3).map(|k| (k + run) % 3).collect();
        let mut record = |i: usize, p: usize, ms: f64| {
            if run > 0 {
                r[i][p].push(ms);
            }
        };
        let maps: Vec<AnyMap> = (0..3).map(AnyMap::create).collect();
        for p in 0..3 {
            for &i in &order {
                let ms = on_map!(&maps[i], m => table_phase(m, p, &parts));
                record(i, p, ms);
            }
        }
        drop(maps);
        let maps: Vec<AnyMap> = (0..3).map(AnyMap::create).collect();
        for &i in &order {
            let ms = on_map!(&maps[i], m => iommu_on(m, iommu_ops, threads));
            record(i, 3, ms);
        }
    }
    r
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// One run: [fill, check, delete, iommu] in ms.
fn once<M: Map>(work: &[(u64, u64)], iommu_ops: usize, threads: usize) -> [f64; 4] {
    let [f, c, d] = table_run::<M>(work, threads);
    [f, c, d, iommu_run::<M>(iommu_ops, threads)]
}

/// Medians per phase of the runs of several implementations. The runs are
/// interleaved (A B C A B C ...) so that background load on a shared
/// machine affects all implementations alike.
fn measure_all(runs: usize, fs: &[&dyn Fn() -> [f64; 4]]) -> Vec<[f64; 4]> {
    let mut r: Vec<[Vec<f64>; 4]> = fs.iter().map(|_| Default::default()).collect();
    for f in fs {
        f(); // warm-up (allocator, page faults), not counted
    }
    for _ in 0..runs {
        for (i, f) in fs.iter().enumerate() {
            let x = f();
            for p in 0..4 {
                r[i][p].push(x[p]);
            }
        }
    }
    r.into_iter().map(|v| v.map(median)).collect()
}

const PHASES: [&str; 4] = ["fill", "check", "delete", "iommu"];

fn main() {
    let mut runs = 9;
    let mut n = 100_000;
    let mut iommu_ops = 400_000;
    let mut threads = vec![1, 2, 4];
    let mut json = String::from("target/extent-bench.json");
    let mut sweep = false;
    let mut only_extent = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().unwrap_or_else(|| panic!("{a} needs a value"));
        match a.as_str() {
            "--runs" => runs = val().parse().unwrap(),
            "--n" => n = val().parse().unwrap(),
            "--iommu-ops" => iommu_ops = val().parse().unwrap(),
            "--threads" => threads = val().split(',').map(|t| t.parse().unwrap()).collect(),
            "--json" => json = val(),
            "--sweep" => sweep = true,
            // For profiling (`perf record`): time only ExtentMap.
            "--only-extent" => only_extent = true,
            "--bench" => {} // passed by `cargo bench`
            other => panic!("unknown argument {other}"),
        }
    }
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    let work = workload(n);
    println!(
        "ExtentMap vs Mutex<BTreeMap> / RwLock<BTreeMap>: {n} extents, {iommu_ops} IOMMU ops, \
         medians of {runs} runs, {cores} CPUs{}",
        if threads.iter().any(|&t| t > cores) {
            " (thread counts above the CPU count oversubscribe)"
        } else {
            ""
        }
    );
    let mut js = String::new();
    let _ = write!(
        js,
        "{{\n  \"extents\": {n},\n  \"iommu_ops\": {iommu_ops},\n  \"runs\": {runs},\n  \"cpus\": {cores},\n  \"leaf_cap\": {},\n  \"results\": [",
        slsm_extent::DEFAULT_LEAF_CAP
    );
    println!(
        "\n{:<7} {:>3}  {:>10} {:>10} {:>10}  {:>10} {:>10}",
        "phase", "thr", "extent ms", "mutex ms", "rwlock ms", "mutex/ext", "rwlock/ext"
    );
    let mut first = true;
    if only_extent {
        for &t in &threads {
            let r = measure_all(runs, &[&|| once::<ExtentMap<u64>>(&work, iommu_ops, t)]);
            println!("{t} threads: {:?}", r[0]);
        }
        return;
    }
    for &t in &threads {
        let r = measure_interleaved(runs, &work, iommu_ops, t);
        for p in 0..4 {
            let (e, mx, rw) = (
                median(r[0][p].clone()),
                median(r[1][p].clone()),
                median(r[2][p].clone()),
            );
            let ratio =
                |b: usize| median(r[b][p].iter().zip(&r[0][p]).map(|(b, e)| b / e).collect());
            let (rmx, rrw) = (ratio(1), ratio(2));
            println!(
                "{:<7} {:>3}  {:>10.2} {:>10.2} {:>10.2}  {:>9.2}x {:>9.2}x",
                PHASES[p], t, e, mx, rw, rmx, rrw
            );
            let _ = write!(
                js,
                "{}\n    {{\"phase\": \"{}\", \"threads\": {t}, \"extent_ms\": {:.3}, \"mutex_btree_ms\": {:.3}, \"rwlock_btree_ms\": {:.3}, \"mutex_over_extent\": {:.3}, \"rwlock_over_extent\": {:.3}}}",
                if first { "" } else { "," },
                PHASES[p],
                e,
                mx,
                rw,
                rmx,
                rrw
            );
            first = false;
        }
    }
    js.push_str("\n  ]");
    if sweep {
        println!("\nLeaf-capacity sweep (ExtentMap only, ms):");
        println!(
            "{:<5} {:>3}  {:>8} {:>8} {:>8} {:>8}",
            "cap", "thr", "fill", "check", "delete", "iommu"
        );
        js.push_str(",\n  \"sweep\": [");
        let mut first = true;
        for &t in &threads {
            let r = measure_all(
                runs,
                &[
                    &|| once::<ExtentMap<u64, 32>>(&work, iommu_ops, t),
                    &|| once::<ExtentMap<u64, 64>>(&work, iommu_ops, t),
                    &|| once::<ExtentMap<u64, 128>>(&work, iommu_ops, t),
                ],
            );
            for (cap, r) in [32, 64, 128].into_iter().zip(r) {
                println!(
                    "{cap:<5} {t:>3}  {:>8.2} {:>8.2} {:>8.2} {:>8.2}",
                    r[0], r[1], r[2], r[3]
                );
                let _ = write!(
                    js,
                    "{}\n    {{\"leaf_cap\": {cap}, \"threads\": {t}, \"fill_ms\": {:.3}, \"check_ms\": {:.3}, \"delete_ms\": {:.3}, \"iommu_ms\": {:.3}}}",
                    if first { "" } else { "," },
                    r[0], r[1], r[2], r[3]
                );
                first = false;
            }
        }
        js.push_str("\n  ]");
    }
    js.push_str("\n}\n");
    if let Some(dir) = std::path::Path::new(&json).parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    std::fs::write(&json, js).expect("write JSON");
    println!("\nJSON written to {json}");
}
