//! Benchmark: slsm-skiplist vs crossbeam-skiplist.
//!
//! ```text
//! cargo run --release -p slsm-skiplist --example bench -- [--n 4194304] [--mg-n 2000000]
//!     [--conc-n 2000000] [--reps 3] [--quick] [--sweep] [--json target/skiplist-bench.json]
//! ```
//! Every figure is the median of `--reps` runs (the 96- and 256-byte value
//! rows use `min(reps, 1)` unless `--full` is given, to keep the default run short).

use std::alloc::{GlobalAlloc, Layout, System};
use std::fmt::Write as _;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering};
use std::time::Instant;

use crossbeam_skiplist::SkipMap;
use slsm_skiplist::{Options, SkipList};

/// Counting allocator (only counts while `COUNTING` is set, so the
/// multi-threaded phases do not share a hot counter).
struct Counting;
static ALLOCATED: AtomicIsize = AtomicIsize::new(0);
static COUNTING: AtomicBool = AtomicBool::new(false);

// SAFETY: forwards to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATED.fetch_add(l.size() as isize, Ordering::Relaxed);
        }
        // SAFETY: caller upholds GlobalAlloc's contract.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATED.fetch_sub(l.size() as isize, Ordering::Relaxed);
        }
        // SAFETY: caller upholds GlobalAlloc's contract.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATED.fetch_add(new as isize - l.size() as isize, Ordering::Relaxed);
        }
        // SAFETY: caller upholds GlobalAlloc's contract.
        unsafe { System.realloc(p, l, new) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn counting<T>(f: impl FnOnce() -> T) -> (T, isize) {
    COUNTING.store(true, Ordering::SeqCst);
    let before = ALLOCATED.load(Ordering::SeqCst);
    let r = f();
    let after = ALLOCATED.load(Ordering::SeqCst);
    COUNTING.store(false, Ordering::SeqCst);
    (r, after - before)
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

struct Data {
    keys: Vec<[u8; 32]>,
    order: Vec<u32>,
    vals: Vec<u8>,
}

impl Data {
    fn new(n: usize, seed: u64) -> Data {
        let mut r = Rng(seed);
        let keys: Vec<[u8; 32]> = (0..n)
            .map(|_| {
                let mut k = [0u8; 32];
                for c in k.chunks_mut(8) {
                    c.copy_from_slice(&r.next().to_le_bytes());
                }
                k
            })
            .collect();
        let mut order: Vec<u32> = (0..n as u32).collect();
        for i in (1..n).rev() {
            order.swap(i, r.below(i + 1));
        }
        let vals = (0..4096).map(|_| r.next() as u8).collect();
        Data { keys, order, vals }
    }
    fn val(&self, i: usize, vs: usize) -> &[u8] {
        let off = (i * 61) % 1024;
        &self.vals[off..off + vs]
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

static CPU_TIME: AtomicBool = AtomicBool::new(false);

/// On-CPU nanoseconds of the calling thread (Linux schedstat), if available.
fn thread_cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

/// Wall-clock timer, or (with `--cpu-time`) the measuring thread's on-CPU time,
/// which removes time spent descheduled on a shared machine.
struct Timer {
    wall: Instant,
    cpu: Option<u64>,
}

impl Timer {
    fn now() -> Timer {
        let cpu = if CPU_TIME.load(Ordering::Relaxed) {
            thread_cpu_ns()
        } else {
            None
        };
        Timer {
            wall: Instant::now(),
            cpu,
        }
    }
}

fn ns_per(t: Timer, n: usize) -> f64 {
    let ns = match (t.cpu, thread_cpu_ns().filter(|_| t.cpu.is_some())) {
        (Some(a), Some(b)) => (b - a) as f64,
        _ => t.wall.elapsed().as_nanos() as f64,
    };
    ns / n as f64
}

fn wall_ns_per(t: Instant, n: usize) -> f64 {
    t.elapsed().as_nanos() as f64 / n as f64
}

struct Args {
    n: usize,
    mg_n: usize,
    conc_n: usize,
    reps: usize,
    seed_reps: Option<usize>,
    full: bool,
    sweep: bool,
    json: String,
    skip_seed: bool,
    ours_only: bool,
    only32: bool,
    skip_mg: bool,
    skip_conc: bool,
}

fn parse() -> Args {
    let mut a = Args {
        n: 4_194_304,
        mg_n: 2_000_000,
        conc_n: 2_000_000,
        reps: 3,
        seed_reps: None,
        full: false,
        sweep: false,
        json: "target/skiplist-bench.json".into(),
        skip_seed: false,
        ours_only: false,
        only32: false,
        skip_mg: false,
        skip_conc: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(f) = it.next() {
        let mut num = || {
            it.next()
                .and_then(|s| s.parse::<usize>().ok())
                .expect("number")
        };
        match f.as_str() {
            "--n" => a.n = num(),
            "--mg-n" => a.mg_n = num(),
            "--conc-n" => a.conc_n = num(),
            "--reps" => a.reps = num().max(1),
            "--seed-reps" => a.seed_reps = Some(num().max(1)),
            "--quick" => {
                a.n = 262_144;
                a.mg_n = 200_000;
                a.conc_n = 200_000;
                a.reps = 1;
            }
            "--full" => a.full = true,
            "--cpu-time" => CPU_TIME.store(true, Ordering::Relaxed),
            "--sweep" => a.sweep = true,
            "--skip-seed" => a.skip_seed = true,
            "--ours-only" => a.ours_only = true,
            "--only-32" => a.only32 = true,
            "--skip-mg" => a.skip_mg = true,
            "--skip-conc" => a.skip_conc = true,
            "--json" => a.json = it.next().expect("path"),
            "--help" | "-h" => {
                println!("flags: --n N --mg-n N --conc-n N --reps R --seed-reps R --cpu-time --quick --full --sweep --skip-seed --skip-mg --skip-conc --ours-only --only-32 --json PATH");
                std::process::exit(0);
            }
            other => panic!("unknown flag {other}"),
        }
    }
    a
}

/// (insert ns/op, get ns/op, bytes/entry) for one implementation.
fn run_ours(d: &Data, vs: usize, opts: &Options) -> (f64, f64, f64) {
    let (list, bytes) = counting(|| {
        let list = SkipList::with_options(opts.clone());
        let t = Timer::now();
        for (i, k) in d.keys.iter().enumerate() {
            list.insert(k, d.val(i, vs));
        }
        (list, ns_per(t, d.keys.len()))
    });
    let (list, ins) = list;
    let t = Timer::now();
    for &i in &d.order {
        black_box(list.get(&d.keys[i as usize]).unwrap());
    }
    let get = ns_per(t, d.keys.len());
    assert!(bytes as usize >= list.memory_usage());
    let mem = list.memory_usage() as f64 / d.keys.len() as f64;
    (ins, get, mem)
}

fn run_cb_vec(d: &Data, vs: usize) -> (f64, f64, f64) {
    let ((map, ins), bytes) = counting(|| {
        let map: SkipMap<Vec<u8>, Vec<u8>> = SkipMap::new();
        let t = Timer::now();
        for (i, k) in d.keys.iter().enumerate() {
            map.insert(k.to_vec(), d.val(i, vs).to_vec());
        }
        (map, ns_per(t, d.keys.len()))
    });
    let t = Timer::now();
    for &i in &d.order {
        black_box(map.get(&d.keys[i as usize][..]).unwrap());
    }
    let get = ns_per(t, d.keys.len());
    (ins, get, bytes as f64 / d.keys.len() as f64)
}

fn run_cb_arr(d: &Data, vs: usize) -> (f64, f64, f64) {
    let ((map, ins), bytes) = counting(|| {
        let map: SkipMap<[u8; 32], Vec<u8>> = SkipMap::new();
        let t = Timer::now();
        for (i, k) in d.keys.iter().enumerate() {
            map.insert(*k, d.val(i, vs).to_vec());
        }
        (map, ns_per(t, d.keys.len()))
    });
    let t = Timer::now();
    for &i in &d.order {
        black_box(map.get(&d.keys[i as usize]).unwrap());
    }
    let get = ns_per(t, d.keys.len());
    (ins, get, bytes as f64 / d.keys.len() as f64)
}

fn med3(reps: usize, mut f: impl FnMut() -> (f64, f64, f64)) -> (f64, f64, f64) {
    let r: Vec<_> = (0..reps).map(|_| f()).collect();
    (
        median(r.iter().map(|x| x.0).collect()),
        median(r.iter().map(|x| x.1).collect()),
        median(r.iter().map(|x| x.2).collect()),
    )
}

fn main() {
    let a = parse();
    let mut json = String::from("{\n");
    let opts = Options::default();
    println!(
        "slsm-skiplist bench: n={} mg_n={} conc_n={} reps={} options={:?}",
        a.n, a.mg_n, a.conc_n, a.reps, opts
    );
    if CPU_TIME.load(Ordering::Relaxed) {
        println!("sections 1-2 timed by the measuring thread's on-CPU time (--cpu-time)");
    }

    if a.sweep {
        let d = Data::new(a.n, 7);
        println!(
            "\n== sweep: {} x 32B keys, 32B values (median of {}) ==",
            a.n, a.reps
        );
        println!(
            "{:>10} {:>9} {:>12} {:>12} {:>12}",
            "max_height", "branching", "insert ns", "get ns", "bytes/entry"
        );
        json.push_str("  \"sweep\": [\n");
        let mut first = true;
        for b in [2u32, 4] {
            for h in [8usize, 12, 16, 20] {
                let o = Options {
                    max_height: h,
                    branching: b,
                    ..Options::default()
                };
                let (i, g, m) = med3(a.reps, || run_ours(&d, 32, &o));
                println!("{h:>10} {b:>9} {i:>12.1} {g:>12.1} {m:>12.1}");
                if !first {
                    json.push_str(",\n");
                }
                first = false;
                let _ = write!(json, "    {{\"max_height\": {h}, \"branching\": {b}, \"insert_ns\": {i:.1}, \"get_ns\": {g:.1}, \"bytes_per_entry\": {m:.1}}}");
            }
        }
        json.push_str("\n  ],\n");
    }

    if !a.skip_seed {
        let d = Data::new(a.n, 1);
        println!("\n== 1. seed workload: {} random 32B keys; insert all, then get all in random order ==", a.n);
        println!(
            "{:>6} {:<28} {:>10} {:>10} {:>12} {:>9} {:>9}",
            "value", "impl", "insert ns", "get ns", "bytes/entry", "ins x", "get x"
        );
        json.push_str("  \"seed\": [\n");
        let mut first = true;
        for vs in [32usize, 96, 256] {
            if a.only32 && vs != 32 {
                continue;
            }
            let sr = a.seed_reps.unwrap_or(a.reps);
            let reps = if vs == 32 || a.full { sr } else { 1 };
            let ours = med3(reps, || run_ours(&d, vs, &opts));
            let mut rows = vec![("slsm SkipList", ours)];
            if !a.ours_only {
                rows.push((
                    "crossbeam SkipMap<Vec,Vec>",
                    med3(reps, || run_cb_vec(&d, vs)),
                ));
                rows.push((
                    "crossbeam SkipMap<[u8;32],Vec>",
                    med3(reps, || run_cb_arr(&d, vs)),
                ));
            }
            for (name, r) in rows {
                let (xi, xg) = (r.0 / ours.0, r.1 / ours.1);
                println!(
                    "{vs:>6} {name:<28} {:>10.1} {:>10.1} {:>12.1} {xi:>9.2} {xg:>9.2}",
                    r.0, r.1, r.2
                );
                if !first {
                    json.push_str(",\n");
                }
                first = false;
                let _ = write!(json, "    {{\"value_size\": {vs}, \"impl\": \"{name}\", \"reps\": {reps}, \"insert_ns\": {:.1}, \"get_ns\": {:.1}, \"bytes_per_entry\": {:.1}, \"insert_vs_slsm\": {xi:.2}, \"get_vs_slsm\": {xg:.2}}}", r.0, r.1, r.2);
            }
            println!(
                "       -> key+value = {} B; slsm overhead {:.1} B/entry",
                32 + vs,
                ours.2 - (32 + vs) as f64
            );
        }
        json.push_str("\n  ],\n");
    }

    // 2. multi_get.
    if !a.skip_mg {
        let d = Data::new(a.mg_n, 2);
        let list = SkipList::with_options(opts.clone());
        for (i, k) in d.keys.iter().enumerate() {
            list.insert(k, d.val(i, 32));
        }
        let total = (a.mg_n / 2).max(1024);
        println!(
            "\n== 2. multi_get over {} keys: {} random present keys per batch size ==",
            a.mg_n, total
        );
        println!(
            "{:>6} {:>14} {:>14} {:>14} {:>8} {:>8}",
            "batch", "multi_get", "finger", "indep ns/key", "ind/mg", "ind/fing"
        );
        json.push_str("  \"multi_get\": [\n");
        let mut r = Rng(3);
        for (bi, bs) in [1usize, 8, 64, 1024].into_iter().enumerate() {
            let nb = total.div_ceil(bs);
            let batches: Vec<Vec<&[u8]>> = (0..nb)
                .map(|_| (0..bs).map(|_| &d.keys[r.below(a.mg_n)][..]).collect())
                .collect();
            let nk = nb * bs;
            let mut mr = Vec::new();
            let mut fr = Vec::new();
            let mut ir = Vec::new();
            for _ in 0..a.reps {
                let t = Timer::now();
                for b in &batches {
                    black_box(list.multi_get(b));
                }
                mr.push(ns_per(t, nk));
                let t = Timer::now();
                for b in &batches {
                    black_box(list.multi_get_finger(b));
                }
                fr.push(ns_per(t, nk));
                let t = Timer::now();
                for b in &batches {
                    black_box(list.multi_get_independent(b));
                }
                ir.push(ns_per(t, nk));
            }
            let (m, f, i) = (median(mr), median(fr), median(ir));
            println!(
                "{bs:>6} {m:>14.1} {f:>14.1} {i:>14.1} {:>8.2} {:>8.2}",
                i / m,
                i / f
            );
            if bi > 0 {
                json.push_str(",\n");
            }
            let _ = write!(json, "    {{\"batch\": {bs}, \"multi_get_ns_per_key\": {m:.1}, \"finger_ns_per_key\": {f:.1}, \"independent_ns_per_key\": {i:.1}, \"speedup\": {:.2}, \"finger_speedup\": {:.2}}}", i / m, i / f);
        }
        json.push_str("\n  ],\n");
    }

    // 3. Concurrent inserts.
    if !a.skip_conc {
        let d = Data::new(a.conc_n, 4);
        println!(
            "\n== 3. concurrent inserts: {} keys total (32B/32B), wall ns per insert ==",
            a.conc_n
        );
        println!(
            "{:>8} {:>14} {:>14} {:>8}",
            "threads", "slsm ns/op", "crossbeam ns/op", "ratio"
        );
        json.push_str("  \"concurrent\": [\n");
        for (ti, threads) in [1usize, 2].into_iter().enumerate() {
            let chunk = a.conc_n.div_ceil(threads);
            let mut ours = Vec::new();
            let mut cb = Vec::new();
            for _ in 0..a.reps {
                let list = SkipList::with_options(opts.clone());
                let t = Instant::now();
                std::thread::scope(|s| {
                    for part in d.keys.chunks(chunk) {
                        let (list, d) = (&list, &d);
                        s.spawn(move || {
                            for k in part {
                                list.insert(k, d.val(k[0] as usize, 32));
                            }
                        });
                    }
                });
                ours.push(wall_ns_per(t, a.conc_n));
                assert_eq!(list.len(), a.conc_n);
                drop(list);
                let map: SkipMap<Vec<u8>, Vec<u8>> = SkipMap::new();
                let t = Instant::now();
                std::thread::scope(|s| {
                    for part in d.keys.chunks(chunk) {
                        let (map, d) = (&map, &d);
                        s.spawn(move || {
                            for k in part {
                                map.insert(k.to_vec(), d.val(k[0] as usize, 32).to_vec());
                            }
                        });
                    }
                });
                cb.push(wall_ns_per(t, a.conc_n));
            }
            let (o, c) = (median(ours), median(cb));
            println!("{threads:>8} {o:>14.1} {c:>14.1} {:>8.2}", c / o);
            if ti > 0 {
                json.push_str(",\n");
            }
            let _ = write!(json, "    {{\"threads\": {threads}, \"slsm_ns_per_op\": {o:.1}, \"crossbeam_ns_per_op\": {c:.1}, \"crossbeam_over_slsm\": {:.2}}}", c / o);
        }
        json.push_str("\n  ],\n");
    }
    let _ = write!(json, "  \"n\": {}, \"reps\": {}\n}}\n", a.n, a.reps);
    if let Some(dir) = std::path::Path::new(&a.json).parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    std::fs::write(&a.json, json).expect("write json");
    println!("\nwrote {}", a.json);
}
