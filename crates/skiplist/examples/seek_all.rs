//! Positioning cursors over R lists: R independent `seek`s against one
//! `OwnedIter::seek_all` (lockstep searches whose cache misses overlap), as
//! a merging iterator over the engine's memory runs does for every seek.
//!
//! `cargo run --release -p slsm-skiplist --example seek_all -- [R] [ENTRIES_PER_LIST]`
//! (defaults 8 and 24576: the engine's memory buffer). Random 8-byte keys,
//! 100-byte values; prints the median of 5 alternating rounds.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use slsm_skiplist::{Bytewise, OwnedIter, SkipList};

const PROBES: usize = 200_000;
const ROUNDS: usize = 5;

fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>());
    let r = args.next().unwrap_or(Ok(8)).expect("R: a number");
    let n = args.next().unwrap_or(Ok(24576)).expect("ENTRIES: a number");
    let mut seed = 0x5eed_u64;
    let lists: Vec<Arc<SkipList<Bytewise>>> = (0..r).map(|_| Arc::new(SkipList::new())).collect();
    for list in &lists {
        for _ in 0..n {
            list.insert(&xorshift(&mut seed).to_be_bytes(), &[7u8; 100]);
        }
    }
    let probes: Vec<[u8; 8]> = (0..PROBES)
        .map(|_| xorshift(&mut seed).to_be_bytes())
        .collect();
    let mut cursors: Vec<OwnedIter<Bytewise>> = lists.iter().map(|l| l.owned_iter()).collect();
    let (mut each, mut all) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let t = Instant::now();
        for p in &probes {
            for c in cursors.iter_mut() {
                c.seek(p);
            }
            black_box(cursors[0].valid());
        }
        each.push(t.elapsed().as_nanos() as f64 / PROBES as f64);
        let t = Instant::now();
        for p in &probes {
            let mut refs: Vec<&mut OwnedIter<Bytewise>> = cursors.iter_mut().collect();
            OwnedIter::seek_all(&mut refs, p);
            black_box(cursors[0].valid());
        }
        all.push(t.elapsed().as_nanos() as f64 / PROBES as f64);
    }
    let (each, all) = (median(each), median(all));
    println!("{r} lists x {n} entries, {PROBES} random seeks, median of {ROUNDS} rounds");
    println!("one seek per list: {each:>8.0} ns per position of all {r} cursors");
    println!("seek_all:          {all:>8.0} ns  ({:.2}x)", all / each);
}
