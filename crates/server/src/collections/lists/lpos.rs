//! `LPOS`: a list scanned a chunk at a time from either end.

use super::elements::elements;
use crate::access::Access;
use crate::collections::{non_negative, Coll};
use crate::commands::{fail, int_arg, syntax_error, Outcome};
use crate::resp::Reply;
use crate::store::Kind;

/// `LPOS key element [RANK r] [COUNT n] [MAXLEN m]`, with Redis 7.0's
/// checks: the positions of the matches from the `r`-th on (from the tail
/// if `r` is negative), at most `n` of them (all if 0) among the first
/// `m` elements scanned (all if 0); one position or nil without `COUNT`.
pub(super) fn lpos(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let (mut rank, mut count, mut maxlen) = (1i64, None, 0i64);
    let mut options = a[3..].iter();
    while let Some(option) = options.next() {
        match (option.to_ascii_lowercase().as_slice(), options.next()) {
            (b"rank", Some(v)) => {
                rank = int_arg(v)?;
                if rank == 0 {
                    return Err(fail("ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list"));
                }
            }
            (b"count", Some(v)) => count = Some(non_negative(v, "ERR COUNT can't be negative")?),
            (b"maxlen", Some(v)) => maxlen = non_negative(v, "ERR MAXLEN can't be negative")?,
            _ => return Err(syntax_error()),
        }
    }
    let Some(list) = Coll::load(acc, &a[1], Kind::List)? else {
        return Ok(count.map_or(Reply::Null, |_| Reply::Array(Vec::new())));
    };
    let len = list.count();
    let scan = if maxlen > 0 { maxlen.min(len) } else { len };
    // Redis negates RANK in C: the most negative one stays negative, and
    // then every match counts, as with -1.
    let from_tail = rank < 0;
    let skip = rank.checked_abs().unwrap_or(1) - 1;
    let want = count.map_or(1, |n| if n == 0 { i64::MAX } else { n });
    let mut found = Vec::new();
    let mut matches = 0i64;
    let mut done = 0;
    while done < scan && (found.len() as i64) < want {
        let n = (scan - done).min(LPOS_CHUNK);
        let (first, last) = match from_tail {
            false => (done, done + n - 1),
            true => (len - done - n, len - done - 1),
        };
        let chunk = elements(acc, &list, first, last)?;
        let positions: Vec<i64> = match from_tail {
            false => (first..=last).collect(),
            true => (first..=last).rev().collect(),
        };
        let values: Vec<&[u8]> = chunk.iter().collect();
        for i in positions {
            if values[(i - first) as usize] == a[2].as_slice() {
                matches += 1;
                if matches > skip {
                    found.push(i);
                    if found.len() as i64 >= want {
                        break;
                    }
                }
            }
        }
        done += n;
    }
    Ok(match count {
        Some(_) => Reply::Array(found.into_iter().map(Reply::Int).collect()),
        None => found.first().map_or(Reply::Null, |&i| Reply::Int(i)),
    })
}

/// Elements `LPOS` reads at a time.
const LPOS_CHUNK: i64 = 1024;
