//! `HRANDFIELD key [count [WITHVALUES]]` and `ZRANDMEMBER key [count
//! [WITHSCORES]]`, in Redis 7.0's order of checks and with its replies: no
//! count, one element (nil for a missing key); a positive count, that many
//! distinct elements (the whole collection, in its order, when it has no
//! more); a negative count, that many picks that may repeat.
//!
//! Picks are uniform. A sorted set's element at a random rank comes from
//! its rank index (O(n / 1024 + 1024) entries read); a hash has no such
//! index, so a pick from a hash of more than 4,096 fields walks to it
//! (O(n); Redis picks from its hash table in O(1)). Small collections, and
//! requests for a quarter of one or more, are read whole once.

use super::zsets::range::{all_members, member_at_rank};
use super::{random_u64, Coll};
use crate::access::Access;
use crate::commands::{fail, int_arg, syntax_error, Fail, Outcome};
use crate::resp::Reply;
use crate::store::Kind;

/// The most elements a reply may hold (as `SRANDMEMBER`'s).
const MAX_RANDOM_REPLY: u64 = 1 << 24;
/// Collections up to this size are read whole for any request.
const READ_WHOLE: usize = 4096;

/// An element and what `WITHVALUES`/`WITHSCORES` adds to it.
type Element = (Vec<u8>, Reply);

/// Where the picks come from.
trait Source {
    fn len(&self) -> usize;
    fn all(&self, acc: &mut dyn Access) -> Result<Vec<Element>, Fail>;
    fn nth(&self, acc: &mut dyn Access, i: usize) -> Result<Element, Fail>;
}

struct Hash(Coll);

impl Source for Hash {
    fn len(&self) -> usize {
        self.0.count() as usize
    }

    fn all(&self, acc: &mut dyn Access) -> Result<Vec<Element>, Fail> {
        let mut out = Vec::with_capacity(self.len());
        self.0.for_each(acc, |field, value| {
            out.push((field.to_vec(), Reply::Bulk(value.to_vec())));
            true
        })?;
        Ok(out)
    }

    fn nth(&self, acc: &mut dyn Access, i: usize) -> Result<Element, Fail> {
        let (mut seen, mut found) = (0, None);
        self.0.for_each(acc, |field, value| {
            if seen == i {
                found = Some((field.to_vec(), Reply::Bulk(value.to_vec())));
                return false;
            }
            seen += 1;
            true
        })?;
        found.ok_or_else(|| fail("ERR corrupt hash: a field is missing"))
    }
}

struct SortedSet(Coll);

impl Source for SortedSet {
    fn len(&self) -> usize {
        self.0.count() as usize
    }

    fn all(&self, acc: &mut dyn Access) -> Result<Vec<Element>, Fail> {
        // From the highest score down, the order Redis lists a whole set in.
        let members = all_members(acc, &self.0, true)?;
        Ok(members
            .into_iter()
            .map(|(s, m)| (m, Reply::Double(s)))
            .collect())
    }

    fn nth(&self, acc: &mut dyn Access, i: usize) -> Result<Element, Fail> {
        match member_at_rank(acc, &self.0, i as i64)? {
            Some((s, m)) => Ok((m, Reply::Double(s))),
            None => Err(fail("ERR corrupt sorted set: a rank is missing")),
        }
    }
}

/// The count (if given) and whether values come with the elements.
fn arguments(a: &[Vec<u8>], word: &[u8]) -> Result<(Option<i64>, bool), Fail> {
    let Some(arg) = a.get(2) else {
        return Ok((None, false));
    };
    let count = int_arg(arg)?;
    if count == i64::MIN {
        return Err(fail("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"));
    }
    match a.get(3) {
        _ if a.len() > 4 => Err(syntax_error()),
        Some(w) if !w.eq_ignore_ascii_case(word) => Err(syntax_error()),
        Some(_) if count.unsigned_abs() > (i64::MAX / 2) as u64 => {
            Err(fail("ERR value is out of range"))
        }
        with => Ok((Some(count), with.is_some())),
    }
}

pub fn hrandfield(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let (count, with) = arguments(a, b"withvalues")?;
    let hash = Coll::load(acc, &a[1], Kind::Hash)?.map(Hash);
    answer(acc, hash, count, with)
}

pub fn zrandmember(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let (count, with) = arguments(a, b"withscores")?;
    let zset = Coll::load(acc, &a[1], Kind::ZSet)?.map(SortedSet);
    answer(acc, zset, count, with)
}

fn random_below(n: usize) -> usize {
    (random_u64() % n as u64) as usize
}

fn answer(
    acc: &mut dyn Access,
    src: Option<impl Source>,
    count: Option<i64>,
    with: bool,
) -> Outcome {
    let Some(count) = count else {
        return match src {
            Some(src) => Ok(Reply::Bulk(src.nth(acc, random_below(src.len()))?.0)),
            None => Ok(Reply::Null),
        };
    };
    let Some(src) = src.filter(|_| count != 0) else {
        return Ok(Reply::Array(Vec::new()));
    };
    if count < 0 && count.unsigned_abs() > MAX_RANDOM_REPLY {
        // Redis would build the reply; here a request may not make the
        // server hold an unbounded one (a positive count asks for no more
        // than the collection holds).
        return Err(fail("ERR count is too large for one reply"));
    }
    let (want, len) = (count.unsigned_abs() as usize, src.len());
    let whole = len <= READ_WHOLE || want.saturating_mul(4) >= len;
    let picked = match (count < 0 || want == 1, whole) {
        // Picks that may repeat.
        (true, true) => {
            let all = src.all(acc)?;
            (0..want).map(|_| all[random_below(len)].clone()).collect()
        }
        (true, false) => (0..want)
            .map(|_| src.nth(acc, random_below(len)))
            .collect::<Result<_, _>>()?,
        (false, _) if want >= len => src.all(acc)?,
        // Distinct picks: a partial Fisher-Yates shuffle.
        (false, true) => {
            let mut all = src.all(acc)?;
            for i in 0..want {
                all.swap(i, i + random_below(len - i));
            }
            all.truncate(want);
            all
        }
        (false, false) => distinct_ranks(want, len)
            .into_iter()
            .map(|i| src.nth(acc, i))
            .collect::<Result<_, _>>()?,
    };
    Ok(match with {
        true => Reply::Pairs(
            picked
                .into_iter()
                .map(|(e, v)| (Reply::Bulk(e), v))
                .collect(),
        ),
        false => Reply::Array(picked.into_iter().map(|(e, _)| Reply::Bulk(e)).collect()),
    })
}

/// `want` distinct positions below `len`, uniformly (Floyd's sampling).
fn distinct_ranks(want: usize, len: usize) -> Vec<usize> {
    let mut chosen = std::collections::BTreeSet::new();
    for j in len - want..len {
        let t = random_below(j + 1);
        if !chosen.insert(t) {
            chosen.insert(j);
        }
    }
    chosen.into_iter().collect()
}
