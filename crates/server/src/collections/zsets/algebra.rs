//! Sorted-set algebra: ZUNION, ZINTER, ZDIFF, ZUNIONSTORE, ZINTERSTORE,
//! ZDIFFSTORE, ZINTERCARD.
//!
//! As in Redis: an input may be a sorted set or a set (whose members score
//! 1), a missing key is empty; `WEIGHTS` multiply each input's scores and
//! `AGGREGATE SUM|MIN|MAX` combines a member's scores across the inputs
//! (a weighted score or a sum that is NaN, `inf * 0` or `inf + -inf`,
//! counts as 0). The union and the intersection take their inputs from
//! the smallest to the largest, as Redis does, in a stable order (Redis's
//! `qsort` need not be: that can change only the rounding of a sum of
//! three or more fractional scores).
//!
//! The intersection and the difference read their first input whole and
//! check its members in each other input: one point read per member
//! while that input is more than `WHOLE_READ` times larger than the
//! members left to check, else by reading the input whole (a read per
//! member costs about what reading `WHOLE_READ` members in order does).
//! The union reads every input whole. The result is built in memory, as
//! Redis builds it.

use std::cmp::Ordering;
use std::collections::HashMap;

use super::members::{score_of, store_result};
use super::walk::walk_from;
use crate::access::Access;
use crate::collections::{sets, wrong_type, Coll};
use crate::commands::{fail, int_arg, syntax_error, Fail, Outcome};
use crate::resp::Reply;
use crate::store::Kind;

/// See the module docs.
const WHOLE_READ: usize = 8;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Union,
    Inter,
    Diff,
}

#[derive(Clone, Copy)]
enum Aggregate {
    Sum,
    Min,
    Max,
}

impl Aggregate {
    /// Redis's `zunionInterAggregate`.
    fn into(self, target: &mut f64, value: f64) {
        match self {
            Aggregate::Sum => {
                *target += value;
                if target.is_nan() {
                    *target = 0.0;
                }
            }
            Aggregate::Min if value < *target => *target = value,
            Aggregate::Max if value > *target => *target = value,
            _ => {}
        }
    }
}

/// One input: a sorted set, a set, or nothing; and its weight.
struct Input {
    coll: Option<Coll>,
    weight: f64,
}

impl Input {
    fn open(acc: &mut dyn Access, key: &[u8]) -> Result<Input, Fail> {
        let coll = match acc.get(key)? {
            None => None,
            Some(v) if matches!(v.kind, Kind::ZSet | Kind::Set) => Some(Coll::decode(key, &v)?),
            Some(_) => return Err(wrong_type()),
        };
        Ok(Input { coll, weight: 1.0 })
    }

    fn len(&self) -> usize {
        self.coll.as_ref().map_or(0, |c| c.count().max(0) as usize)
    }

    /// Every member and its (unweighted) score.
    fn entries(&self, acc: &mut dyn Access) -> Result<Vec<(Vec<u8>, f64)>, Fail> {
        let Some(c) = &self.coll else {
            return Ok(Vec::new());
        };
        if c.kind == Kind::Set {
            return Ok(sets::members(acc, c)?
                .into_iter()
                .map(|m| (m, 1.0))
                .collect());
        }
        let mut out = Vec::with_capacity(self.len().min(1 << 16));
        walk_from(acc, c, &[], |s, m| {
            out.push((m.to_vec(), s));
            true
        })?;
        Ok(out)
    }

    /// `member`'s (unweighted) score, if it is here.
    fn score(&self, acc: &mut dyn Access, member: &[u8]) -> Result<Option<f64>, Fail> {
        match &self.coll {
            None => Ok(None),
            Some(c) if c.kind == Kind::Set => {
                Ok(sets::is_member(acc, Some(c), member)?.then_some(1.0))
            }
            Some(c) => score_of(acc, c, member),
        }
    }

    /// The (unweighted) scores of `members` here, `None` for those absent.
    fn scores_of(
        &self,
        acc: &mut dyn Access,
        members: &[(Vec<u8>, f64)],
    ) -> Result<Vec<Option<f64>>, Fail> {
        if self.len() > members.len().saturating_mul(WHOLE_READ) {
            return members.iter().map(|(m, _)| self.score(acc, m)).collect();
        }
        let all: HashMap<Vec<u8>, f64> = self.entries(acc)?.into_iter().collect();
        Ok(members.iter().map(|(m, _)| all.get(m).copied()).collect())
    }

    /// A score times the weight, NaN counting 0.
    fn weighted(&self, score: f64) -> f64 {
        let s = self.weight * score;
        if s.is_nan() {
            0.0
        } else {
            s
        }
    }
}

/// A parsed request.
struct Request {
    op: Op,
    inputs: Vec<Input>,
    aggregate: Aggregate,
    with_scores: bool,
    limit: i64,
}

pub(super) fn run(name: &str, a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let store = name.ends_with("store");
    let card_only = name == "zintercard";
    let op = match name.trim_start_matches('z').trim_end_matches("store") {
        "union" => Op::Union,
        "diff" => Op::Diff,
        _ => Op::Inter,
    };
    let r = parse(name, a, acc, op, store, card_only)?;
    if card_only {
        let count = combine(acc, &r, r.limit)?.len() as i64;
        return Ok(Reply::Int(count));
    }
    let mut out = combine(acc, &r, 0)?;
    out.sort_by(|x, y| {
        x.1.partial_cmp(&y.1)
            .unwrap_or(Ordering::Equal)
            .then_with(|| x.0.cmp(&y.0))
    });
    let picked = out.into_iter().map(|(m, s)| (s, m)).collect();
    match store {
        true => {
            let event = match op {
                Op::Union => "zunionstore",
                Op::Diff => "zdiffstore",
                Op::Inter => "zinterstore",
            };
            store_result(acc, &a[1], picked, Some(event))
        }
        false => Ok(super::range::members_reply(picked, r.with_scores)),
    }
}

/// Parses request `a` in Redis's order of checks: the key count, then the
/// inputs' types, then the options.
fn parse(
    name: &str,
    a: &[Vec<u8>],
    acc: &mut dyn Access,
    op: Op,
    store: bool,
    card_only: bool,
) -> Result<Request, Fail> {
    let at = if store { 2 } else { 1 };
    let n = int_arg(&a[at])?;
    if n < 1 {
        return Err(fail(&format!(
            "ERR at least 1 input key is needed for '{name}' command"
        )));
    }
    if n as u64 > (a.len() - at - 1) as u64 {
        return Err(syntax_error());
    }
    let n = n as usize;
    let mut inputs = Vec::with_capacity(n);
    for key in &a[at + 1..at + 1 + n] {
        inputs.push(Input::open(acc, key)?);
    }
    let mut r = Request {
        op,
        inputs,
        aggregate: Aggregate::Sum,
        with_scores: false,
        limit: 0,
    };
    let mut i = at + 1 + n;
    let combines = op != Op::Diff && !card_only;
    while i < a.len() {
        let left = a.len() - i;
        match a[i].to_ascii_lowercase().as_slice() {
            b"weights" if combines && left > n => {
                for (input, w) in r.inputs.iter_mut().zip(&a[i + 1..i + 1 + n]) {
                    input.weight = super::members::parse_score(w)
                        .ok_or_else(|| fail("ERR weight value is not a float"))?;
                }
                i += 1 + n;
            }
            b"aggregate" if combines && left >= 2 => {
                r.aggregate = match a[i + 1].to_ascii_lowercase().as_slice() {
                    b"sum" => Aggregate::Sum,
                    b"min" => Aggregate::Min,
                    b"max" => Aggregate::Max,
                    _ => return Err(syntax_error()),
                };
                i += 2;
            }
            b"withscores" if !store && !card_only => {
                r.with_scores = true;
                i += 1;
            }
            b"limit" if card_only && left >= 2 => {
                r.limit =
                    crate::collections::non_negative(&a[i + 1], "ERR LIMIT can't be negative")?;
                i += 2;
            }
            _ => return Err(syntax_error()),
        }
    }
    Ok(r)
}

/// The members of the result and their scores, in no order; for an
/// intersection at most `limit` of them if `limit` is positive.
fn combine(acc: &mut dyn Access, r: &Request, limit: i64) -> Result<Vec<(Vec<u8>, f64)>, Fail> {
    let mut order: Vec<&Input> = r.inputs.iter().collect();
    if r.op != Op::Diff {
        order.sort_by_key(|input| input.len());
    }
    match r.op {
        Op::Union => union(acc, &order, r.aggregate),
        Op::Inter => inter(acc, &order, r.aggregate, limit),
        Op::Diff => diff(acc, &order),
    }
}

fn union(
    acc: &mut dyn Access,
    inputs: &[&Input],
    aggregate: Aggregate,
) -> Result<Vec<(Vec<u8>, f64)>, Fail> {
    let mut all: HashMap<Vec<u8>, f64> = HashMap::new();
    for input in inputs {
        for (m, s) in input.entries(acc)? {
            let s = input.weighted(s);
            match all.get_mut(&m) {
                Some(target) => aggregate.into(target, s),
                None => {
                    all.insert(m, s);
                }
            }
        }
    }
    Ok(all.into_iter().collect())
}

/// The first input's members found in every other, their scores combined
/// in input order. As Redis computes it, a later input's weighted score
/// joins the sum (or the minimum, the maximum) before any NaN is made 0.
fn inter(
    acc: &mut dyn Access,
    inputs: &[&Input],
    aggregate: Aggregate,
    limit: i64,
) -> Result<Vec<(Vec<u8>, f64)>, Fail> {
    let Some((first, rest)) = inputs.split_first() else {
        return Ok(Vec::new());
    };
    let mut left: Vec<(Vec<u8>, f64)> = first
        .entries(acc)?
        .into_iter()
        .map(|(m, s)| (m, first.weighted(s)))
        .collect();
    for input in rest {
        if left.is_empty() {
            break;
        }
        let scores = input.scores_of(acc, &left)?;
        let mut found = scores.into_iter();
        left.retain_mut(|(_, target)| match found.next().flatten() {
            Some(s) => {
                aggregate.into(target, s * input.weight);
                true
            }
            None => false,
        });
    }
    if limit > 0 {
        left.truncate(limit as usize);
    }
    Ok(left)
}

/// The first input's members found in no other, with their scores.
fn diff(acc: &mut dyn Access, inputs: &[&Input]) -> Result<Vec<(Vec<u8>, f64)>, Fail> {
    let Some((first, rest)) = inputs.split_first() else {
        return Ok(Vec::new());
    };
    let mut left = first.entries(acc)?;
    for input in rest {
        if left.is_empty() {
            break;
        }
        if input.len() == 0 {
            continue;
        }
        let scores = input.scores_of(acc, &left)?;
        let mut found = scores.into_iter();
        left.retain(|_| found.next().flatten().is_none());
    }
    Ok(left)
}
