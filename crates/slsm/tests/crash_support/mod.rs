//! Shared by the crash and fault tests: a deterministic random workload, a
//! text encoding of its operations (the crash child reports them to the
//! parent over a pipe), a model of the expected contents, and the recovery
//! check ("the database equals the model after some allowed prefix of the
//! operations").
#![allow(dead_code)]

use std::collections::BTreeMap;

use slsm::{Db, Options, WriteBatch, WriteOptions};

/// splitmix64: small, seedable, good enough for workloads.
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
    /// True with probability `percent`%.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// One mutation inside an operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mut {
    Put(Vec<u8>, Vec<u8>),
    Del(Vec<u8>),
    Range(Vec<u8>, Vec<u8>),
}

/// One acknowledged-or-not unit of work: a single write, a `WriteBatch`,
/// or a bulk load (`ingest`: puts of ascending keys, durable on return,
/// so always `sync`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Op {
    pub id: u64,
    pub sync: bool,
    pub batch: bool,
    pub ingest: bool,
    pub muts: Vec<Mut>,
}

pub const KEY_SPACE: u64 = 1000;

pub fn key(i: u64) -> Vec<u8> {
    format!("k{i:04}").into_bytes()
}

/// Options that make flushes, merges and WAL rotation happen constantly.
/// Runs are sealed by entry count (100) as often as by size (16 KiB), so
/// one log often holds several runs.
pub fn crash_options() -> Options {
    Options {
        run_size: 16 << 10,
        run_entries: 100,
        memory_runs: 3,
        level_runs: 2,
        fence_entries: 8,
        // A new MANIFEST whenever the edits pass twice the snapshot, so
        // crashes and faults meet both of its ways of changing (an edit
        // appended, a new file renamed into place) often.
        max_manifest_file_size: 0,
        ..Options::default()
    }
}

/// A generator of random operations. `tag` makes values unique across
/// generators (every cycle uses its own), so a value that was never written
/// can never match the model by accident.
pub struct Workload {
    pub rng: Rng,
    pub tag: u64,
    pub next_id: u64,
    /// Percentage of operations written with `sync: true`.
    pub sync_percent: u64,
}

impl Workload {
    pub fn new(seed: u64, tag: u64) -> Workload {
        Workload {
            rng: Rng(seed),
            tag,
            next_id: 0,
            sync_percent: 10,
        }
    }

    fn value(&mut self, id: u64, j: usize) -> Vec<u8> {
        // Now and then a value big enough that its WAL record (4 KiB or
        // more) is appended with pwrite(2) instead of through the map.
        let pad = if self.rng.chance(3) {
            4096 + self.rng.below(4096) as usize
        } else {
            self.rng.below(300) as usize
        };
        let mut v = format!("v{}-{id}-{j}-", self.tag).into_bytes();
        v.extend(std::iter::repeat_n(b'x', pad));
        v
    }

    fn one_mut(&mut self, id: u64, j: usize) -> Mut {
        let r = self.rng.below(100);
        if r < 70 {
            let k = key(self.rng.below(KEY_SPACE));
            Mut::Put(k, self.value(id, j))
        } else if r < 92 {
            Mut::Del(key(self.rng.below(KEY_SPACE)))
        } else {
            let a = self.rng.below(KEY_SPACE);
            let len = 1 + self.rng.below(30);
            Mut::Range(key(a), key(a + len))
        }
    }

    pub fn next_op(&mut self) -> Op {
        let id = self.next_id;
        self.next_id += 1;
        if self.rng.chance(2) {
            return self.ingest_op(id);
        }
        let sync = self.rng.chance(self.sync_percent);
        let batch = self.rng.chance(20);
        let n = if batch {
            1 + self.rng.below(8) as usize
        } else {
            1
        };
        let muts = (0..n).map(|j| self.one_mut(id, j)).collect();
        Op {
            id,
            sync,
            batch,
            ingest: false,
            muts,
        }
    }

    /// A bulk load of 1 to 12 distinct keys, in ascending order.
    fn ingest_op(&mut self, id: u64) -> Op {
        let n = 1 + self.rng.below(12);
        let keys: std::collections::BTreeSet<u64> =
            (0..n).map(|_| self.rng.below(KEY_SPACE)).collect();
        let muts = keys
            .into_iter()
            .enumerate()
            .map(|(j, k)| Mut::Put(key(k), self.value(id, j)))
            .collect();
        Op {
            id,
            sync: true,
            batch: true,
            ingest: true,
            muts,
        }
    }
}

/// Applies `op` to `db` through the public API.
pub fn apply_db(db: &Db, op: &Op) -> slsm::Result<()> {
    if op.ingest {
        let pairs = op.muts.iter().map(|m| match m {
            Mut::Put(k, v) => (k, v),
            _ => unreachable!("a load holds puts only"),
        });
        return db.ingest(pairs).map(|_| ());
    }
    let wo = WriteOptions {
        sync: op.sync,
        ..WriteOptions::default()
    };
    if !op.batch && op.muts.len() == 1 {
        match &op.muts[0] {
            Mut::Put(k, v) => return db.put_opt(k, v, &wo),
            Mut::Del(k) => return db.delete_opt(k, &wo),
            Mut::Range(a, b) if !op.sync => return db.delete_range(a, b),
            Mut::Range(..) => {}
        }
    }
    let ranges = op.muts.iter().any(|m| matches!(m, Mut::Range(..)));
    if op.batch && !ranges && op.id.is_multiple_of(3) {
        return apply_as_transaction(db, op, &wo);
    }
    let mut b = WriteBatch::new();
    for m in &op.muts {
        match m {
            Mut::Put(k, v) => b.put(k, v),
            Mut::Del(k) => b.delete(k),
            Mut::Range(a, z) => b.delete_range(a, z),
        };
    }
    db.write_opt(b, &wo)
}

/// A batch of puts and deletes committed as a transaction that reads
/// nothing (it cannot conflict): the same writes, all or nothing, through
/// the transaction's commit path (it logs outside the gate that orders
/// validations).
fn apply_as_transaction(db: &Db, op: &Op, wo: &WriteOptions) -> slsm::Result<()> {
    let mut tx = db.transaction();
    for m in &op.muts {
        match m {
            Mut::Put(k, v) => tx.put(k, v)?,
            Mut::Del(k) => tx.delete(k)?,
            Mut::Range(..) => unreachable!("no range deletions in a transaction"),
        }
    }
    tx.commit_opt(wo)
}

pub type Model = BTreeMap<Vec<u8>, Vec<u8>>;

/// Applies `op` to the model, in batch order (later mutations win; a range
/// deletion hides puts earlier in the same batch).
pub fn apply_model(model: &mut Model, op: &Op) {
    for m in &op.muts {
        match m {
            Mut::Put(k, v) => {
                model.insert(k.clone(), v.clone());
            }
            Mut::Del(k) => {
                model.remove(k);
            }
            Mut::Range(a, z) => {
                let doomed: Vec<Vec<u8>> = model
                    .range(a.clone()..z.clone())
                    .map(|(k, _)| k.clone())
                    .collect();
                for k in doomed {
                    model.remove(&k);
                }
            }
        }
    }
}

fn s(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).expect("workload bytes are ASCII")
}

/// `id sync batch mut;mut;...` (batch 2: a bulk load) with muts `P,key,value`, `D,key`, `R,a,b`.
pub fn encode_op(op: &Op) -> String {
    let muts: Vec<String> = op
        .muts
        .iter()
        .map(|m| match m {
            Mut::Put(k, v) => format!("P,{},{}", s(k), s(v)),
            Mut::Del(k) => format!("D,{}", s(k)),
            Mut::Range(a, z) => format!("R,{},{}", s(a), s(z)),
        })
        .collect();
    format!(
        "{} {} {} {}",
        op.id,
        op.sync as u8,
        op.batch as u8 + op.ingest as u8,
        muts.join(";")
    )
}

pub fn decode_op(line: &str) -> Option<Op> {
    let mut parts = line.splitn(4, ' ');
    let id = parts.next()?.parse().ok()?;
    let sync = parts.next()? == "1";
    let (batch, ingest) = match parts.next()? {
        "0" => (false, false),
        "1" => (true, false),
        "2" => (true, true),
        _ => return None,
    };
    let mut muts = Vec::new();
    for m in parts.next()?.split(';') {
        let f: Vec<&str> = m.split(',').collect();
        muts.push(match (f.first()?, f.len()) {
            (&"P", 3) => Mut::Put(f[1].into(), f[2].into()),
            (&"D", 2) => Mut::Del(f[1].into()),
            (&"R", 3) => Mut::Range(f[1].into(), f[2].into()),
            _ => return None,
        });
    }
    Some(Op {
        id,
        sync,
        batch,
        ingest,
        muts,
    })
}

/// Reads the whole database forwards and backwards, runs `check`, and
/// returns the contents. Any disagreement is an error.
pub fn read_all(db: &Db) -> Result<Model, String> {
    db.check().map_err(|e| format!("check failed: {e}"))?;
    let mut fwd = Vec::new();
    for item in db.iter() {
        let (k, v) = item.map_err(|e| format!("forward iteration: {e}"))?;
        fwd.push((k.to_vec(), v.to_vec()));
    }
    let mut back = Vec::new();
    for item in db.iter().rev() {
        let (k, v) = item.map_err(|e| format!("backward iteration: {e}"))?;
        back.push((k.to_vec(), v.to_vec()));
    }
    back.reverse();
    if fwd != back {
        return Err(format!(
            "forward ({} entries) and backward ({} entries) iteration disagree",
            fwd.len(),
            back.len()
        ));
    }
    if fwd.windows(2).any(|w| w[0].0 >= w[1].0) {
        return Err("iteration is not strictly ascending".into());
    }
    // Spot-check point reads against the scan.
    for (i, (k, v)) in fwd.iter().enumerate() {
        if i % 7 == 0 {
            let got = db.get(k).map_err(|e| format!("get: {e}"))?;
            if got.as_deref() != Some(&v[..]) {
                return Err(format!("get({}) disagrees with the scan", s(k)));
            }
        }
    }
    Ok(fwd.into_iter().collect())
}

/// What the caller was told about an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Returned `Ok`: must be applied if anything after it is.
    Acked,
    /// Returned an I/O error: may or may not have been applied.
    Failed,
    /// Failed and known not to be applied (refused, or superseded by a
    /// later write that succeeded).
    Rejected,
}

/// Finds the prefix length `l` in `min_len..=ops.len()` such that applying
/// `ops[..l]` to `base` gives `got`. Returns `l`, or a description of the
/// closest miss.
pub fn match_prefix(
    base: &Model,
    ops: &[Op],
    min_len: usize,
    got: &Model,
) -> Result<usize, String> {
    let st = vec![Status::Acked; ops.len()];
    match_history(base, ops, &st, min_len, got)
}

/// Like [`match_prefix`], but each `Failed` operation inside the prefix may
/// be applied or not, and `Rejected` ones are never applied. Returns the
/// prefix length of the first match.
pub fn match_history(
    base: &Model,
    ops: &[Op],
    status: &[Status],
    min_len: usize,
    got: &Model,
) -> Result<usize, String> {
    const MAX_CANDIDATES: usize = 512;
    let mut cands: Vec<Model> = vec![base.clone()];
    let mut first_miss: Option<(usize, String)> = None;
    for l in 0..=ops.len() {
        if l >= min_len {
            if cands.iter().any(|c| c == got) {
                return Ok(l);
            }
            if first_miss.is_none() {
                first_miss = Some((l, describe_diff(&cands[0], got)));
            }
        }
        if l == ops.len() {
            break;
        }
        match status[l] {
            Status::Acked => cands.iter_mut().for_each(|c| apply_model(c, &ops[l])),
            Status::Rejected => {}
            Status::Failed => {
                let mut more = Vec::new();
                for c in &cands {
                    let mut n = c.clone();
                    apply_model(&mut n, &ops[l]);
                    if !cands.contains(&n) && !more.contains(&n) {
                        more.push(n);
                    }
                }
                cands.extend(more);
                if cands.len() > MAX_CANDIDATES {
                    return Err(format!(
                        "too many failed operations to verify ({})",
                        cands.len()
                    ));
                }
            }
        }
    }
    let (l, diff) = first_miss.unwrap_or((min_len, String::new()));
    Err(format!(
        "recovered state matches no allowed history of the {} operations \
         (allowed prefix lengths {min_len}..={}); vs prefix {l}: {diff}",
        ops.len(),
        ops.len()
    ))
}

pub fn describe_diff(want: &Model, got: &Model) -> String {
    let mut out = Vec::new();
    for (k, v) in want {
        match got.get(k) {
            None => out.push(format!("missing {}", s(k))),
            Some(g) if g != v => out.push(format!(
                "{}: want {} got {}",
                s(k),
                s(&v[..v.len().min(24)]),
                s(&g[..g.len().min(24)])
            )),
            _ => {}
        }
    }
    for k in got.keys() {
        if !want.contains_key(k) {
            out.push(format!("unexpected {}", s(k)));
        }
    }
    let n = out.len();
    out.truncate(6);
    format!("{n} differences: {}", out.join(", "))
}
