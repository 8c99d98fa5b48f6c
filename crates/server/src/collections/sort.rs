//! `SORT key [BY pattern] [LIMIT offset count] [GET pattern ...] [ASC|DESC]
//! [ALPHA] [STORE destination]` and `SORT_RO` (no `STORE`), as Redis 7.0's
//! `sortCommandGeneric` runs them: a list, set or sorted set sorted by its
//! elements as numbers (ties by their bytes) or as strings (`ALPHA`), or
//! by the strings or hash fields a pattern names (`weight_*`,
//! `obj_*->field`); a `BY` without `*` keeps the collection's own order (a
//! set's sorted as strings when stored, as Redis does for replication);
//! `GET` patterns (`#` for the element) replace each element in the reply;
//! `STORE` writes the result as a list (deleting the destination when it
//! is empty) and answers its length.
//!
//! `ALPHA` compares bytes (C's `strcoll` in the "C" locale; Redis under
//! another locale would collate by it). The reply's order among equal
//! `BY` values follows the collection's own order, which for a set is its
//! hash order, not Redis's.

use super::{delete_key, hashes, lists, sets, wrong_type, zsets, Coll};
use crate::access::Access;
use crate::commands::{fail, int_arg, syntax_error, Fail, Outcome};
use crate::cursors::Cursors;
use crate::resp::Reply;
use crate::store::Kind;

#[derive(Default)]
struct Options {
    desc: bool,
    alpha: bool,
    /// `LIMIT offset count` (count -1: to the end).
    limit: (i64, i64),
    by: Option<Vec<u8>>,
    gets: Vec<Vec<u8>>,
    store: Option<Vec<u8>>,
}

fn options(a: &[Vec<u8>], read_only: bool) -> Result<Options, Fail> {
    let mut o = Options {
        limit: (0, -1),
        ..Options::default()
    };
    let mut j = 2;
    while j < a.len() {
        let left = a.len() - j - 1;
        match a[j].to_ascii_lowercase().as_slice() {
            b"asc" => o.desc = false,
            b"desc" => o.desc = true,
            b"alpha" => o.alpha = true,
            b"limit" if left >= 2 => {
                o.limit = (int_arg(&a[j + 1])?, int_arg(&a[j + 2])?);
                j += 2;
            }
            b"store" if left >= 1 && !read_only => {
                o.store = Some(a[j + 1].clone());
                j += 1;
            }
            b"by" if left >= 1 => {
                // A pattern names keys no ACL check saw (none without a
                // `*`: the elements are then not sorted).
                if a[j + 1].contains(&b'*') && !crate::acl::caller::reads_every_key(a) {
                    return Err(fail(
                        "ERR BY option of SORT denied due to insufficient ACL permissions.",
                    ));
                }
                o.by = Some(a[j + 1].clone());
                j += 1;
            }
            b"get" if left >= 1 => {
                if !crate::acl::caller::reads_every_key(a) {
                    return Err(fail(
                        "ERR GET option of SORT denied due to insufficient ACL permissions.",
                    ));
                }
                o.gets.push(a[j + 1].clone());
                j += 1;
            }
            _ => return Err(syntax_error()),
        }
        j += 1;
    }
    Ok(o)
}

/// The text C sees of an argument: up to its first NUL.
fn c_str(b: &[u8]) -> &[u8] {
    b.split(|&c| c == 0).next().unwrap_or_default()
}

/// What `pattern` names for `element` (Redis's `lookupKeyByPattern`): the
/// element for `#`; the string at the key made by putting the element in
/// place of the first `*`; with `->field` after the `*`, that field of the
/// hash there. `None` when there is no `*`, or no such string or field.
fn lookup(acc: &mut dyn Access, pattern: &[u8], element: &[u8]) -> Result<Option<Vec<u8>>, Fail> {
    if c_str(pattern) == b"#" {
        return Ok(Some(element.to_vec()));
    }
    let Some(star) = c_str(pattern).iter().position(|&c| c == b'*') else {
        return Ok(None);
    };
    let after = &c_str(pattern)[star + 1..];
    let arrow = after
        .windows(2)
        .position(|w| w == b"->")
        .filter(|&i| after.len() > i + 2);
    let (postfix, field) = match arrow {
        Some(i) => (
            &pattern[star + 1..star + 1 + i],
            Some(&pattern[star + 3 + i..]),
        ),
        None => (&pattern[star + 1..], None),
    };
    let key = [&pattern[..star], element, postfix].concat();
    let Some(v) = acc.get(&key)? else {
        return Ok(None);
    };
    match (field, v.kind) {
        (None, Kind::String) => Ok(Some(v.data)),
        (Some(field), Kind::Hash) => hashes::field_of(acc, &key, field),
        _ => Ok(None),
    }
}

/// The elements of the collection at `key`, in its own order, and
/// whether it is a set; nothing for a missing key.
fn elements(acc: &mut dyn Access, key: &[u8]) -> Result<(Vec<Vec<u8>>, bool), Fail> {
    let Some(v) = acc.get(key)? else {
        return Ok((Vec::new(), false));
    };
    let kind = v.kind;
    if !matches!(kind, Kind::List | Kind::Set | Kind::ZSet) {
        return Err(wrong_type());
    }
    let Some(c) = Coll::load(acc, key, kind)? else {
        return Ok((Vec::new(), false));
    };
    Ok(match kind {
        Kind::List => (lists::all_elements(acc, &c)?, false),
        Kind::Set => (sets::members(acc, &c)?, true),
        _ => {
            let members = zsets::range::all_members(acc, &c, false)?;
            (members.into_iter().map(|(_, m)| m).collect(), false)
        }
    })
}

/// `SORT` and `SORT_RO` (the registry's handler).
pub fn run(name: &str, a: &[Vec<u8>], acc: &mut dyn Access, _: &Cursors) -> Outcome {
    sort(a, acc, name == "sort_ro")
}

pub fn sort(a: &[Vec<u8>], acc: &mut dyn Access, read_only: bool) -> Outcome {
    let mut o = options(a, read_only)?;
    let (mut items, is_set) = elements(acc, &a[1])?;
    let mut dont_sort = o.by.as_ref().is_some_and(|by| !c_str(by).contains(&b'*'));
    if dont_sort && is_set && (o.store.is_some() || acc.in_script_call()) {
        // Redis sorts a set it stores or hands a script, so that replicas
        // agree.
        (dont_sort, o.alpha, o.by) = (false, true, None);
    }
    let len = items.len() as i64;
    let start = o.limit.0.clamp(0, len);
    let count = o.limit.1.clamp(-1, len);
    let (start, end) = match count < 0 {
        true => (start, len - 1),
        false => (start, (start + count - 1).min(len - 1)),
    };
    let (start, end) = if start >= len {
        (len - 1, len - 2)
    } else {
        (start, end)
    };
    if dont_sort {
        // A list or sorted set in its own order, or reversed; a set as it
        // is walked.
        if o.desc && !is_set {
            items.reverse();
        }
    } else {
        items = sorted(acc, items, &o)?;
    }
    let picked = match end >= start {
        true => &items[start as usize..=end as usize],
        false => &[][..],
    };
    let mut out = Vec::with_capacity(picked.len() * o.gets.len().max(1));
    for element in picked {
        if o.gets.is_empty() {
            out.push(Some(element.clone()));
        }
        for pattern in &o.gets {
            out.push(lookup(acc, pattern, element)?);
        }
    }
    let Some(dest) = o.store else {
        return Ok(Reply::Array(
            out.into_iter()
                .map(|e| e.map_or(Reply::Null, Reply::Bulk))
                .collect(),
        ));
    };
    let values: Vec<Vec<u8>> = out.into_iter().map(Option::unwrap_or_default).collect();
    let existed = delete_key(acc, &dest)?;
    if !values.is_empty() {
        lists::store(acc, &dest, &values)?;
        acc.notify(crate::notify::LIST, "sortstore", &dest);
    } else if existed {
        acc.notify(crate::notify::GENERIC, "del", &dest);
    }
    Ok(Reply::Int(values.len() as i64))
}

/// What an element sorts by: a number, or bytes (`None`: a missing `BY`
/// value, first in `ALPHA` order).
enum Weight {
    Number(f64),
    Text(Option<Vec<u8>>),
}

fn sorted(acc: &mut dyn Access, items: Vec<Vec<u8>>, o: &Options) -> Result<Vec<Vec<u8>>, Fail> {
    let mut weighted = Vec::with_capacity(items.len());
    let mut bad_number = false;
    for element in items {
        let by = match &o.by {
            Some(pattern) => lookup(acc, pattern, &element)?,
            None => Some(element.clone()),
        };
        let weight = match (o.alpha, by) {
            (true, by) => Weight::Text(o.by.as_ref().and(by)),
            // A missing BY value weighs 0, as in Redis.
            (false, None) => Weight::Number(0.0),
            (false, Some(v)) => {
                let (n, all, overflowed) = zsets::members::strtod(&v);
                // C's strtod also sets ERANGE for a subnormal result,
                // which Redis's SORT refuses too.
                let subnormal = n != 0.0 && n.abs() < f64::MIN_POSITIVE;
                bad_number |= !all || n.is_nan() || overflowed || subnormal;
                Weight::Number(n)
            }
        };
        weighted.push((weight, element));
    }
    if bad_number {
        return Err(fail(
            "ERR One or more scores can't be converted into double",
        ));
    }
    let stored = o.store.is_some();
    // Stable, as glibc's merge sort behind Redis's `qsort`.
    weighted.sort_by(|(wa, a), (wb, b)| {
        let ord = match (wa, wb) {
            (Weight::Number(x), Weight::Number(y)) => x
                .partial_cmp(y)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then_with(|| a.cmp(b)),
            (Weight::Text(x), Weight::Text(y)) if o.by.is_some() => match (x, y) {
                (Some(x), Some(y)) if stored => x.cmp(y),
                (Some(x), Some(y)) => c_str(x).cmp(c_str(y)),
                (x, y) => x.is_some().cmp(&y.is_some()),
            },
            _ if stored => a.cmp(b),
            _ => c_str(a).cmp(c_str(b)),
        };
        if o.desc {
            ord.reverse()
        } else {
            ord
        }
    });
    Ok(weighted.into_iter().map(|(_, e)| e).collect())
}
