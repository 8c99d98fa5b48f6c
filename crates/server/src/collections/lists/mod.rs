//! List commands: LPUSH RPUSH LPUSHX RPUSHX LPOP RPOP LLEN LRANGE LINDEX
//! LSET LTRIM LREM LINSERT RPOPLPUSH LMOVE, and LPOS (`lpos.rs`).
//!
//! A list's elements sit at consecutive indexes `head..tail` (see
//! [`Coll`]): a push at either end writes one element and moves one end,
//! a pop reads and deletes one, and `LRANGE` reads one contiguous range.
//! `LREM` and `LINSERT`, which change the middle, rewrite the list (O(n),
//! as in Redis). The blocking pops (`BLPOP` ...) are in `blocking.rs`.

mod elements;
mod lpos;

use super::{positions, positive_count, wrong_type, Coll};
use crate::access::Access;
use crate::commands::{fail, int_arg, syntax_error, Fail, Outcome};
use crate::cursors::Cursors;
use crate::notify::LIST;
use crate::resp::Reply;
use crate::store::Kind;
use elements::{elements, index_key, missing_element};

/// The end of a list a command works at.
#[derive(Clone, Copy, PartialEq, Eq)]
enum End {
    Left,
    Right,
}

impl End {
    /// The keyspace notification of a push at this end.
    fn push_event(self) -> &'static str {
        match self {
            End::Left => "lpush",
            End::Right => "rpush",
        }
    }

    /// The keyspace notification of a pop at this end.
    fn pop_event(self) -> &'static str {
        match self {
            End::Left => "lpop",
            End::Right => "rpop",
        }
    }
}

pub fn run(name: &str, a: &[Vec<u8>], acc: &mut dyn Access, _: &Cursors) -> Outcome {
    match name {
        "lpush" | "rpush" | "lpushx" | "rpushx" => push(name, a, acc),
        "lpop" => pop(a, acc, End::Left),
        "rpop" => pop(a, acc, End::Right),
        "llen" => Ok(Reply::Int(
            Coll::load(acc, &a[1], Kind::List)?.map_or(0, |l| l.count()),
        )),
        "lrange" => lrange(a, acc),
        "lindex" => lindex(a, acc),
        "lset" => lset(a, acc),
        "ltrim" => ltrim(a, acc),
        "lrem" => lrem(a, acc),
        "linsert" => linsert(a, acc),
        "rpoplpush" => lmove(acc, &a[1], &a[2], End::Right, End::Left),
        "lpos" => lpos::lpos(a, acc),
        "lmove" => {
            let end = |arg: &[u8]| match arg.to_ascii_lowercase().as_slice() {
                b"left" => Ok(End::Left),
                b"right" => Ok(End::Right),
                _ => Err(syntax_error()),
            };
            let (from, to) = (end(&a[3])?, end(&a[4])?);
            lmove(acc, &a[1], &a[2], from, to)
        }
        _ => Err(fail("ERR unknown command")),
    }
}

/// Adds `value` at `end` of `list`.
fn push_one(acc: &mut dyn Access, list: &mut Coll, end: End, value: &[u8]) -> Result<(), Fail> {
    let at = match end {
        End::Left => {
            list.head -= 1;
            list.head
        }
        End::Right => {
            list.tail += 1;
            list.tail - 1
        }
    };
    acc.put_item(&list.item_key(&index_key(at)), value)?;
    Ok(())
}

/// Removes and returns the element at `end` of a non-empty `list`.
fn pop_one(acc: &mut dyn Access, list: &mut Coll, end: End) -> Result<Vec<u8>, Fail> {
    let at = match end {
        End::Left => list.head,
        End::Right => list.tail - 1,
    };
    let key = list.item_key(&index_key(at));
    let value = acc.item(&key)?.ok_or_else(missing_element)?;
    acc.del_item(&key)?;
    match end {
        End::Left => list.head += 1,
        End::Right => list.tail -= 1,
    }
    Ok(value)
}

fn push(name: &str, a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let end = match name.starts_with('l') {
        true => End::Left,
        false => End::Right,
    };
    let mut list = match name.ends_with('x') {
        true => match Coll::load(acc, &a[1], Kind::List)? {
            Some(l) => l,
            None => return Ok(Reply::Int(0)),
        },
        false => Coll::load_or_new(acc, &a[1], Kind::List)?,
    };
    for value in &a[2..] {
        push_one(acc, &mut list, end, value)?;
    }
    list.save_and_tell(acc, LIST, end.push_event())?;
    Ok(Reply::Int(list.count()))
}

fn pop(a: &[Vec<u8>], acc: &mut dyn Access, end: End) -> Outcome {
    if a.len() > 3 {
        let name = String::from_utf8_lossy(&a[0]).to_ascii_lowercase();
        return Err(fail(&format!(
            "ERR wrong number of arguments for '{name}' command"
        )));
    }
    let count = a.get(2).map(|c| positive_count(c)).transpose()?;
    let Some(mut list) = Coll::load(acc, &a[1], Kind::List)? else {
        return Ok(match count {
            Some(_) => Reply::NullArray,
            None => Reply::Null,
        });
    };
    let Some(count) = count else {
        let value = pop_one(acc, &mut list, end)?;
        list.save_and_tell(acc, LIST, end.pop_event())?;
        return Ok(Reply::Bulk(value));
    };
    let n = count.min(list.count() as usize);
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(Reply::Bulk(pop_one(acc, &mut list, end)?));
    }
    if n > 0 {
        list.save_and_tell(acc, LIST, end.pop_event())?;
    }
    Ok(Reply::Array(out))
}

fn lrange(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let (start, stop) = (int_arg(&a[2])?, int_arg(&a[3])?);
    let Some(list) = Coll::load(acc, &a[1], Kind::List)? else {
        return Ok(Reply::Array(Vec::new()));
    };
    let Some((first, last)) = positions(start, stop, list.count()) else {
        return Ok(Reply::Array(Vec::new()));
    };
    Ok(Reply::Bulks(elements(acc, &list, first, last)?))
}

/// The position `index` names in a list of `len` (negative: from the end).
fn position(index: i64, len: i64) -> Option<i64> {
    let i = if index < 0 { len + index } else { index };
    (0..len).contains(&i).then_some(i)
}

/// Redis looks the key up before it parses the index (here and in LSET).
fn lindex(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let Some(list) = Coll::load(acc, &a[1], Kind::List)? else {
        return Ok(Reply::Null);
    };
    let index = int_arg(&a[2])?;
    let Some(i) = position(index, list.count()) else {
        return Ok(Reply::Null);
    };
    let value = acc.item(&list.item_key(&index_key(list.head + i)))?;
    Ok(Reply::Bulk(value.ok_or_else(missing_element)?))
}

fn lset(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let Some(mut list) = Coll::load(acc, &a[1], Kind::List)? else {
        return Err(fail("ERR no such key"));
    };
    let index = int_arg(&a[2])?;
    let Some(i) = position(index, list.count()) else {
        return Err(fail("ERR index out of range"));
    };
    acc.put_item(&list.item_key(&index_key(list.head + i)), &a[3])?;
    list.save_and_tell(acc, LIST, "lset")?;
    Ok(Reply::ok())
}

fn ltrim(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let (start, stop) = (int_arg(&a[2])?, int_arg(&a[3])?);
    let Some(mut list) = Coll::load(acc, &a[1], Kind::List)? else {
        return Ok(Reply::ok());
    };
    let len = list.count();
    let (keep_from, keep_to) = positions(start, stop, len).unwrap_or((len, len - 1));
    for i in (0..keep_from).chain(keep_to + 1..len) {
        acc.del_item(&list.item_key(&index_key(list.head + i)))?;
    }
    let head = list.head;
    list.head = head + keep_from;
    list.tail = head + keep_to + 1;
    if list.tail < list.head {
        list.tail = list.head;
    }
    list.save_and_tell(acc, LIST, "ltrim")?;
    Ok(Reply::ok())
}

/// Replaces the elements of `list` with `values` (same or fewer slots),
/// told as `event`.
fn rewrite(
    acc: &mut dyn Access,
    list: &mut Coll,
    values: &[Vec<u8>],
    event: &'static str,
) -> Result<(), Fail> {
    for i in list.head..list.tail {
        acc.del_item(&list.item_key(&index_key(i)))?;
    }
    list.tail = list.head;
    for v in values {
        push_one(acc, list, End::Right, v)?;
    }
    list.save_and_tell(acc, LIST, event)
}

/// A new list at `key` (which holds nothing) of `values`, head first.
pub(super) fn store(acc: &mut dyn Access, key: &[u8], values: &[Vec<u8>]) -> Result<(), Fail> {
    let mut list = Coll::load_or_new(acc, key, Kind::List)?;
    for v in values {
        push_one(acc, &mut list, End::Right, v)?;
    }
    list.save(acc)
}

/// Every element of `list`, head first.
pub(super) fn all_elements(acc: &mut dyn Access, list: &Coll) -> Result<Vec<Vec<u8>>, Fail> {
    match list.count() {
        0 => Ok(Vec::new()),
        n => Ok(elements(acc, list, 0, n - 1)?
            .iter()
            .map(<[u8]>::to_vec)
            .collect()),
    }
}

fn lrem(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let count = int_arg(&a[2])?;
    let Some(mut list) = Coll::load(acc, &a[1], Kind::List)? else {
        return Ok(Reply::Int(0));
    };
    let mut values = all_elements(acc, &list)?;
    let limit = match count {
        0 => usize::MAX,
        n => n.unsigned_abs() as usize,
    };
    let mut removed = 0;
    let mut keep = |v: &Vec<u8>| {
        let drop = removed < limit && *v == a[3];
        removed += drop as usize;
        !drop
    };
    if count < 0 {
        values.reverse();
        values.retain(&mut keep);
        values.reverse();
    } else {
        values.retain(&mut keep);
    }
    if removed > 0 {
        rewrite(acc, &mut list, &values, "lrem")?;
    }
    Ok(Reply::Int(removed as i64))
}

fn linsert(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let after = match a[2].to_ascii_lowercase().as_slice() {
        b"before" => false,
        b"after" => true,
        _ => return Err(syntax_error()),
    };
    let Some(mut list) = Coll::load(acc, &a[1], Kind::List)? else {
        return Ok(Reply::Int(0));
    };
    let mut values = all_elements(acc, &list)?;
    let Some(at) = values.iter().position(|v| *v == a[3]) else {
        return Ok(Reply::Int(-1));
    };
    values.insert(at + after as usize, a[4].clone());
    rewrite(acc, &mut list, &values, "linsert")?;
    Ok(Reply::Int(list.count()))
}

fn lmove(acc: &mut dyn Access, src: &[u8], dst: &[u8], from: End, to: End) -> Outcome {
    let Some(mut source) = Coll::load(acc, src, Kind::List)? else {
        return Ok(Reply::Null);
    };
    if src == dst {
        let value = pop_one(acc, &mut source, from)?;
        push_one(acc, &mut source, to, &value)?;
        source.save(acc)?;
        acc.notify(LIST, to.push_event(), src);
        acc.notify(LIST, from.pop_event(), src);
        return Ok(Reply::Bulk(value));
    }
    // The destination's type is checked before anything moves, as Redis does.
    let mut dest = match acc.get(dst)? {
        Some(v) if v.kind != Kind::List => return Err(wrong_type()),
        _ => Coll::load_or_new(acc, dst, Kind::List)?,
    };
    let value = pop_one(acc, &mut source, from)?;
    push_one(acc, &mut dest, to, &value)?;
    // Told as Redis tells them: the push, then the pop (and the source's
    // deletion if it was its last element).
    dest.save_and_tell(acc, LIST, to.push_event())?;
    source.save_and_tell(acc, LIST, from.pop_event())?;
    Ok(Reply::Bulk(value))
}
