//! `LCS key1 key2 [LEN] [IDX] [MINMATCHLEN n] [WITHMATCHLEN]`: the longest
//! common subsequence of two strings, as Redis 7.0's `lcsCommand` computes
//! and reports it (the same table, walked back the same way, so the
//! string and the match ranges are Redis's where several are longest).
//!
//! The table takes 4 bytes per pair of positions; as in Redis, a table
//! above the largest bulk string (512 MB) is refused before anything is
//! allocated.

use super::{fail, int_arg, syntax_error, Fail, Outcome};
use crate::access::Access;
use crate::resp::{Reply, MAX_BULK};
use crate::store::Kind;

struct Options {
    len: bool,
    idx: bool,
    min_match: u64,
    with_match_len: bool,
}

fn options(a: &[Vec<u8>]) -> Result<Options, Fail> {
    let mut o = Options {
        len: false,
        idx: false,
        min_match: 0,
        with_match_len: false,
    };
    let mut j = 3;
    while j < a.len() {
        match a[j].to_ascii_lowercase().as_slice() {
            b"idx" => o.idx = true,
            b"len" => o.len = true,
            b"withmatchlen" => o.with_match_len = true,
            b"minmatchlen" if j + 1 < a.len() => {
                o.min_match = int_arg(&a[j + 1])?.max(0) as u64;
                j += 1;
            }
            _ => return Err(syntax_error()),
        }
        j += 1;
    }
    if o.len && o.idx {
        return Err(fail(
            "ERR If you want both the length and indexes, please just use IDX.",
        ));
    }
    Ok(o)
}

/// The string at `key` ("" if missing); `None` for a collection.
fn text(acc: &mut dyn Access, key: &[u8]) -> Result<Option<Vec<u8>>, Fail> {
    Ok(match acc.get(key)? {
        Some(v) if v.kind != Kind::String => None,
        Some(v) => Some(v.data),
        None => Some(Vec::new()),
    })
}

pub fn lcs(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let (Some(x), Some(y)) = (text(acc, &a[1])?, text(acc, &a[2])?) else {
        return Err(fail("ERR The specified keys must contain string values"));
    };
    let o = options(a)?;
    let cells = (x.len() as u64 + 1) * (y.len() as u64 + 1);
    if cells.saturating_mul(4) > MAX_BULK as u64 {
        return Err(fail(
            "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len",
        ));
    }
    let table = Table::build(&x, &y);
    let total = table.at(x.len(), y.len());
    if o.len {
        return Ok(Reply::Int(total as i64));
    }
    let (common, matches) = walk_back(&table, &x, &y, &o);
    if !o.idx {
        return Ok(Reply::Bulk(common));
    }
    Ok(Reply::Map(vec![
        (Reply::bulk("matches"), Reply::Array(matches)),
        (Reply::bulk("len"), Reply::Int(total as i64)),
    ]))
}

/// `at(i, j)`: the length of the LCS of `x[..i]` and `y[..j]`.
struct Table {
    cells: Vec<u32>,
    width: usize,
}

impl Table {
    fn build(x: &[u8], y: &[u8]) -> Table {
        let width = y.len() + 1;
        let mut cells = vec![0u32; (x.len() + 1) * width];
        for i in 1..=x.len() {
            for j in 1..=y.len() {
                cells[i * width + j] = if x[i - 1] == y[j - 1] {
                    cells[(i - 1) * width + j - 1] + 1
                } else {
                    cells[(i - 1) * width + j].max(cells[i * width + j - 1])
                };
            }
        }
        Table { cells, width }
    }

    fn at(&self, i: usize, j: usize) -> u32 {
        self.cells[i * self.width + j]
    }
}

/// The common subsequence and, with `IDX`, its matching ranges (last
/// first, as Redis lists them).
fn walk_back(t: &Table, x: &[u8], y: &[u8], o: &Options) -> (Vec<u8>, Vec<Reply>) {
    let mut common = vec![0u8; t.at(x.len(), y.len()) as usize];
    let mut left = common.len();
    let mut matches = Vec::new();
    // The range being grown backwards: (x start, x end, y start, y end).
    let mut range: Option<(usize, usize, usize, usize)> = None;
    let (mut i, mut j) = (x.len(), y.len());
    while i > 0 && j > 0 {
        let mut emit = false;
        if x[i - 1] == y[j - 1] {
            common[left - 1] = x[i - 1];
            range = match range {
                None => Some((i - 1, i - 1, j - 1, j - 1)),
                Some((xs, xe, ys, ye)) if xs == i && ys == j => Some((xs - 1, xe, ys - 1, ye)),
                Some(r) => {
                    emit = true;
                    Some(r)
                }
            };
            if range.is_some_and(|(xs, _, ys, _)| xs == 0 || ys == 0) {
                emit = true;
            }
            left -= 1;
            i -= 1;
            j -= 1;
        } else {
            if t.at(i - 1, j) > t.at(i, j - 1) {
                i -= 1;
            } else {
                j -= 1;
            }
            emit = range.is_some();
        }
        if let (true, Some((xs, xe, ys, ye))) = (emit, range) {
            let len = (xe - xs + 1) as u64;
            if o.idx && (o.min_match == 0 || len >= o.min_match) {
                let pair = |s: usize, e: usize| {
                    Reply::Array(vec![Reply::Int(s as i64), Reply::Int(e as i64)])
                };
                let mut m = vec![pair(xs, xe), pair(ys, ye)];
                if o.with_match_len {
                    m.push(Reply::Int(len as i64));
                }
                matches.push(Reply::Array(m));
            }
            range = None;
        }
    }
    (common, matches)
}
