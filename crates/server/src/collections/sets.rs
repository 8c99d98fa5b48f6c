//! Set commands: SADD SREM SISMEMBER SMISMEMBER SMEMBERS SCARD SPOP
//! SRANDMEMBER SMOVE SINTER SUNION SDIFF, their STORE forms, SINTERCARD. A member is one element, its
//! sub-key the member's 64-bit hash (xxh3, big endian) then the member,
//! its value empty.
//!
//! Hash order, as Redis's own dictionary has (it leaves the order
//! unspecified), makes a random sub-key a random place among the members
//! whatever they look like, so `SPOP` and `SRANDMEMBER` pick from the
//! whole set, and the deletion markers a run of `SPOP`s leaves are spread
//! over the set rather than piled where the next pop looks. (In member
//! order, members sharing a prefix, as `element:000123` do, sit in one
//! narrow band of the key space: a random start missed it most of the
//! time, fell back to the first member, and every pop stepped over the
//! markers of all the pops before it: 0.6K `SPOP`s a second.)

use std::collections::BTreeSet;

use xxhash_rust::xxh3::xxh3_64;

use super::{positive_count, random_u64, wrong_type, Coll};
use crate::access::Access;
use crate::commands::{fail, int_arg, Fail, Outcome};
use crate::cursors::Cursors;
use crate::notify::{GENERIC, SET};
use crate::resp::Reply;
use crate::store::Kind;

/// The most members `SRANDMEMBER` with a negative count returns.
const MAX_RANDOM_REPLY: u64 = 1 << 24;

pub fn run(name: &str, a: &[Vec<u8>], acc: &mut dyn Access, _: &Cursors) -> Outcome {
    match name {
        "sadd" => {
            let mut set = Coll::load_or_new(acc, &a[1], Kind::Set)?;
            let mut added = 0;
            for m in &a[2..] {
                added += add(acc, &mut set, m)? as i64;
            }
            if added > 0 {
                set.save_and_tell(acc, SET, "sadd")?;
            }
            Ok(Reply::Int(added))
        }
        "srem" => {
            let Some(mut set) = Coll::load(acc, &a[1], Kind::Set)? else {
                return Ok(Reply::Int(0));
            };
            let mut removed = 0;
            for m in &a[2..] {
                removed += remove(acc, &mut set, m)? as i64;
            }
            if removed > 0 {
                set.save_and_tell(acc, SET, "srem")?;
            }
            Ok(Reply::Int(removed))
        }
        "sismember" => {
            let set = Coll::load(acc, &a[1], Kind::Set)?;
            Ok(Reply::Int(is_member(acc, set.as_ref(), &a[2])? as i64))
        }
        "smismember" => {
            let set = Coll::load(acc, &a[1], Kind::Set)?;
            let mut out = Vec::with_capacity(a.len() - 2);
            for m in &a[2..] {
                out.push(Reply::Int(is_member(acc, set.as_ref(), m)? as i64));
            }
            Ok(Reply::Array(out))
        }
        "smembers" => Ok(Reply::Set(bulks(members_of(acc, &a[1])?))),
        "scard" => Ok(Reply::Int(
            Coll::load(acc, &a[1], Kind::Set)?.map_or(0, |s| s.count()),
        )),
        "spop" => spop(a, acc),
        "srandmember" => srandmember(a, acc),
        "smove" => smove(a, acc),
        "sinterstore" | "sunionstore" | "sdiffstore" => store(name, a, acc),
        "sintercard" => sintercard(a, acc),
        _ => Ok(Reply::Set(bulks(combined(name, &a[1..], acc)?))),
    }
}

fn bulks(members: impl IntoIterator<Item = Vec<u8>>) -> Vec<Reply> {
    members.into_iter().map(Reply::Bulk).collect()
}

pub(super) fn is_member(acc: &mut dyn Access, set: Option<&Coll>, m: &[u8]) -> Result<bool, Fail> {
    match set {
        Some(set) => Ok(acc.item(&member_key(set, m))?.is_some()),
        None => Ok(false),
    }
}

/// Adds `m`; true if it is new.
fn add(acc: &mut dyn Access, set: &mut Coll, m: &[u8]) -> Result<bool, Fail> {
    let key = member_key(set, m);
    if acc.item(&key)?.is_some() {
        return Ok(false);
    }
    acc.put_item(&key, b"")?;
    set.len += 1;
    Ok(true)
}

/// Removes `m`; true if it was there.
fn remove(acc: &mut dyn Access, set: &mut Coll, m: &[u8]) -> Result<bool, Fail> {
    if acc.item(&member_key(set, m))?.is_none() {
        return Ok(false);
    }
    remove_member(acc, set, m)?;
    Ok(true)
}

/// Removes `m`, a member.
fn remove_member(acc: &mut dyn Access, set: &mut Coll, m: &[u8]) -> Result<(), Fail> {
    acc.del_item(&member_key(set, m))?;
    set.len -= 1;
    Ok(())
}

/// Every member of the set at `key` (none if it is missing).
fn members_of(acc: &mut dyn Access, key: &[u8]) -> Result<Vec<Vec<u8>>, Fail> {
    match Coll::load(acc, key, Kind::Set)? {
        Some(set) => members(acc, &set),
        None => Ok(Vec::new()),
    }
}

/// The items-keyspace key of member `m`.
fn member_key(set: &Coll, m: &[u8]) -> Vec<u8> {
    let mut sub = Vec::with_capacity(8 + m.len());
    sub.extend_from_slice(&xxh3_64(m).to_be_bytes());
    sub.extend_from_slice(m);
    set.item_key(&sub)
}

/// The member a sub-key holds.
fn member_of(sub: &[u8]) -> Result<Vec<u8>, Fail> {
    match sub.get(8..) {
        Some(m) => Ok(m.to_vec()),
        None => Err(fail("ERR corrupt set: a short member key")),
    }
}

pub(super) fn members(acc: &mut dyn Access, set: &Coll) -> Result<Vec<Vec<u8>>, Fail> {
    let mut subs = Vec::new();
    set.for_each(acc, |sub, _| {
        subs.push(sub.to_vec());
        true
    })?;
    subs.iter().map(|sub| member_of(sub)).collect()
}

/// Sets up to this many members are read whole for a random pick, which
/// is then uniform.
const PICK_FROM_WHOLE: i64 = 4096;

/// Random members of a non-empty set. A set of up to [`PICK_FROM_WHOLE`]
/// members is read once and each pick is uniform among what remains; a
/// larger one is not read whole for a pick: it takes the first member at
/// or after a random sub-key (wrapping around), so members following long
/// gaps of the sub-key order come up more often (Redis picks from its hash
/// table, uniformly, in O(1); a uniform pick here would walk the set).
enum Picker {
    Whole(Vec<Vec<u8>>),
    Seek,
}

impl Picker {
    fn new(acc: &mut dyn Access, set: &Coll) -> Result<Picker, Fail> {
        Ok(match set.count() <= PICK_FROM_WHOLE {
            true => Picker::Whole(members(acc, set)?),
            false => Picker::Seek,
        })
    }

    /// A member; with `take`, one not picked before.
    fn pick(&mut self, acc: &mut dyn Access, set: &Coll, take: bool) -> Result<Vec<u8>, Fail> {
        match self {
            Picker::Whole(all) if all.is_empty() => {
                Err(fail("ERR corrupt set: a member is missing"))
            }
            Picker::Whole(all) => {
                let i = (random_u64() % all.len() as u64) as usize;
                Ok(match take {
                    true => all.swap_remove(i),
                    false => all[i].clone(),
                })
            }
            Picker::Seek => seek_member(acc, set),
        }
    }
}

/// The first member at or after a random sub-key, wrapping around.
fn seek_member(acc: &mut dyn Access, set: &Coll) -> Result<Vec<u8>, Fail> {
    let start = random_u64().to_be_bytes();
    let found = match set.items(acc, &start, None, 1)?.pop() {
        Some(found) => Some(found),
        None => set.items(acc, b"", None, 1)?.pop(),
    };
    match found {
        Some((sub, _)) => member_of(&sub),
        None => Err(fail("ERR corrupt set: a member is missing")),
    }
}

fn spop(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    if a.len() > 3 {
        return Err(crate::commands::syntax_error());
    }
    let count = a.get(2).map(|c| positive_count(c)).transpose()?;
    let Some(mut set) = Coll::load(acc, &a[1], Kind::Set)? else {
        return Ok(match count {
            Some(_) => Reply::Set(Vec::new()),
            None => Reply::Null,
        });
    };
    let n = count.unwrap_or(1).min(set.count() as usize);
    let mut popped = Vec::with_capacity(n);
    let mut picker = Picker::new(acc, &set)?;
    for _ in 0..n {
        let m = picker.pick(acc, &set, true)?;
        remove_member(acc, &mut set, &m)?;
        popped.push(m);
    }
    if n > 0 {
        set.save_and_tell(acc, SET, "spop")?;
    }
    Ok(match count {
        Some(_) => Reply::Set(bulks(popped)),
        None => popped.pop().map_or(Reply::Null, Reply::Bulk),
    })
}

fn srandmember(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    if a.len() > 3 {
        return Err(crate::commands::syntax_error());
    }
    let count = a.get(2).map(|c| int_arg(c)).transpose()?;
    if count == Some(i64::MIN) {
        return Err(fail("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"));
    }
    let Some(set) = Coll::load(acc, &a[1], Kind::Set)? else {
        return Ok(match count {
            Some(_) => Reply::Array(Vec::new()),
            None => Reply::Null,
        });
    };
    let Some(count) = count else {
        let m = Picker::new(acc, &set)?.pick(acc, &set, false)?;
        return Ok(Reply::Bulk(m));
    };
    if count < 0 && count.unsigned_abs() > MAX_RANDOM_REPLY {
        // Redis would build the reply; here a request may not make the
        // server hold an unbounded one.
        return Err(fail("ERR count is too large for one reply"));
    }
    let want = count.unsigned_abs() as usize;
    if count < 0 {
        // Repeats allowed: each pick on its own.
        let mut out = Vec::with_capacity(want.min(1 << 16));
        let mut picker = Picker::new(acc, &set)?;
        for _ in 0..want {
            out.push(Reply::Bulk(picker.pick(acc, &set, false)?));
        }
        return Ok(Reply::Array(out));
    }
    let len = set.count() as usize;
    let mut all = members(acc, &set)?;
    if want < len {
        // A partial Fisher-Yates shuffle: `want` distinct members.
        for i in 0..want {
            let j = i + (random_u64() % (len - i) as u64) as usize;
            all.swap(i, j);
        }
        all.truncate(want);
    }
    Ok(Reply::Array(bulks(all)))
}

/// In Redis's order of checks: a missing source answers 0 whatever the
/// destination holds; then both types; a move within one set changes
/// nothing.
fn smove(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let Some(source) = acc.get(&a[1])? else {
        return Ok(Reply::Int(0));
    };
    if source.kind != Kind::Set || acc.get(&a[2])?.is_some_and(|v| v.kind != Kind::Set) {
        return Err(wrong_type());
    }
    let Some(mut source) = Coll::load(acc, &a[1], Kind::Set)? else {
        return Ok(Reply::Int(0));
    };
    if a[1] == a[2] {
        return Ok(Reply::Int(is_member(acc, Some(&source), &a[3])? as i64));
    }
    if !remove(acc, &mut source, &a[3])? {
        return Ok(Reply::Int(0));
    }
    source.save_and_tell(acc, SET, "srem")?;
    // A member the destination holds already leaves it untouched (and a
    // WATCH of it holding), as in Redis.
    let mut dest = Coll::load_or_new(acc, &a[2], Kind::Set)?;
    if add(acc, &mut dest, &a[3])? {
        dest.save_and_tell(acc, SET, "sadd")?;
    }
    Ok(Reply::Int(1))
}

/// `SINTER`, `SUNION` or `SDIFF` (`op`) of the sets at `keys` (a missing
/// key is an empty set).
fn combined(op: &str, keys: &[Vec<u8>], acc: &mut dyn Access) -> Result<BTreeSet<Vec<u8>>, Fail> {
    let mut sets = Vec::with_capacity(keys.len());
    for key in keys {
        sets.push(members_of(acc, key)?.into_iter().collect::<BTreeSet<_>>());
    }
    let mut rest = sets.into_iter();
    let first = rest.next().unwrap_or_default();
    Ok(match op {
        "sinter" => rest.fold(first, |acc, s| acc.intersection(&s).cloned().collect()),
        "sunion" => rest.fold(first, |mut acc, s| {
            acc.extend(s);
            acc
        }),
        "sdiff" => rest.fold(first, |acc, s| acc.difference(&s).cloned().collect()),
        _ => return Err(fail("ERR unknown command")),
    })
}

/// `SINTERSTORE`, `SUNIONSTORE`, `SDIFFSTORE dest key...`: the result
/// replaces whatever `dest` held (its expiry too); an empty one deletes it.
fn store(name: &str, a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let out = combined(name.trim_end_matches("store"), &a[2..], acc)?;
    let dest = &a[1];
    let existed = acc.get(dest)?;
    if let Some(old) = &existed {
        super::drop_items_of(acc, dest, old)?;
        acc.del(dest)?;
    }
    if !out.is_empty() {
        let mut set = Coll::load_or_new(acc, dest, Kind::Set)?;
        for m in &out {
            add(acc, &mut set, m)?;
        }
        let event = match name {
            "sinterstore" => "sinterstore",
            "sunionstore" => "sunionstore",
            _ => "sdiffstore",
        };
        set.save_and_tell(acc, SET, event)?;
    } else if existed.is_some() {
        acc.notify(GENERIC, "del", dest);
    }
    Ok(Reply::Int(out.len() as i64))
}

/// `SINTERCARD numkeys key... [LIMIT n]`, with Redis 7.0's checks.
fn sintercard(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let n = match int_arg(&a[1]) {
        Ok(n) if n > 0 => n as usize,
        _ => return Err(fail("ERR numkeys should be greater than 0")),
    };
    if n > a.len() - 2 {
        return Err(fail(
            "ERR Number of keys can't be greater than number of args",
        ));
    }
    let mut limit = 0;
    let mut options = a[2 + n..].iter();
    while let Some(option) = options.next() {
        match (option.to_ascii_lowercase().as_slice(), options.next()) {
            (b"limit", Some(value)) => {
                limit = super::non_negative(value, "ERR LIMIT can't be negative")?;
            }
            _ => return Err(crate::commands::syntax_error()),
        }
    }
    let count = combined("sinter", &a[2..2 + n], acc)?.len() as i64;
    Ok(Reply::Int(if limit > 0 { count.min(limit) } else { count }))
}
