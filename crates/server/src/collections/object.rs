//! `OBJECT` (ENCODING REFCOUNT IDLETIME FREQ HELP) and `MEMORY USAGE`: the
//! introspection tools use (`redis-cli --memkeys`, `--bigkeys` scripts,
//! admin dashboards). `MEMORY`'s other subcommands are the server's
//! (`admin::memory`).
//!
//! What they can say here, decided and written down:
//! - `OBJECT ENCODING` answers the encoding Redis 7.0 would give the value
//!   as it is now, from its size and contents (`int`/`embstr`/`raw`,
//!   `quicklist`, `intset`/`hashtable`, `listpack`/`hashtable`,
//!   `listpack`/`skiplist`, `stream`), with Redis's default thresholds.
//!   Redis converts one way only and makes a string `raw` once `APPEND` or
//!   `SETRANGE` touch it, so a value that shrank or was edited in place
//!   can name another encoding in Redis.
//! - `OBJECT REFCOUNT` is Redis's: shared small integers report
//!   2147483647, everything else 1.
//! - `OBJECT IDLETIME` and `OBJECT FREQ` are 0: no access clock nor
//!   counter is kept per key (it would make every read a write; the LRU
//!   and LFU eviction policies evict at random, `crate::eviction`). Each
//!   is Redis's error under the other kind of policy.
//! - `MEMORY USAGE` estimates the bytes the key takes in the engine: its
//!   entry, plus its elements' entries (key prefix, sub-key, value and the
//!   engine's 16 bytes of sequence and expiry per entry), extrapolated
//!   from the first `SAMPLES` entries (default 5, 0 for all) as Redis
//!   extrapolates from its samples.

use super::{sets, zsets, Coll};
use crate::access::Access;
use crate::commands::{canonical_int, fail, int_arg, syntax_error, Fail, Outcome};
use crate::cursors::Cursors;
use crate::resp::Reply;
use crate::store::{Kind, Value};
use std::sync::atomic::Ordering;

/// Redis's defaults: `set-max-intset-entries`,
/// `hash-max-listpack-entries`/`-value`, `zset-max-listpack-entries`/`-value`.
const INTSET_ENTRIES: i64 = 512;
const LISTPACK_ENTRIES: i64 = 128;
const LISTPACK_VALUE: usize = 64;
/// The engine's bytes per entry beyond key and value: the sequence
/// trailer and the server's expiry header.
const ENTRY_OVERHEAD: usize = 16;

const OBJECT_HELP: &[&str] = &[
    "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "ENCODING <key>",
    "    Return the kind of internal representation used in order to store the value",
    "    associated with a <key>.",
    "FREQ <key>",
    "    Return the access frequency index of the <key>. The returned integer is",
    "    proportional to the logarithm of the recent access frequency of the key.",
    "IDLETIME <key>",
    "    Return the idle time of the <key>, that is the approximated number of",
    "    seconds elapsed since the last access to the key.",
    "REFCOUNT <key>",
    "    Return the number of references of the value associated with the specified",
    "    <key>.",
    "HELP",
    "    Prints this help.",
];

pub fn run(name: &str, a: &[Vec<u8>], acc: &mut dyn Access, _: &Cursors) -> Outcome {
    crate::registry::check_subcommand(name, a)?;
    let sub = a[1].to_ascii_lowercase();
    match (name, sub.as_slice()) {
        ("object", b"help") => Ok(Reply::Array(
            OBJECT_HELP
                .iter()
                .map(|l| Reply::Simple(l.to_string()))
                .collect(),
        )),
        ("object", _) => object(&sub, &a[2], acc),
        (_, b"usage") => usage(a, acc),
        _ => Err(fail("ERR MEMORY subcommand runs on the server")),
    }
}

fn object(sub: &[u8], key: &[u8], acc: &mut dyn Access) -> Outcome {
    let Some(v) = acc.get(key)? else {
        return Ok(Reply::Null);
    };
    match sub {
        b"encoding" => Ok(Reply::bulk(encoding(key, &v, acc)?)),
        b"refcount" => Ok(Reply::Int(match shared_integer(&v) {
            true => i64::from(i32::MAX),
            false => 1,
        })),
        // No access clock nor counter is kept per key (it would make every
        // read a write): an idle time of 0, a frequency of 0.
        _ => match (sub, acc.tuning().lfu.load(Ordering::Relaxed)) {
            (b"idletime", false) | (b"freq", true) => Ok(Reply::Int(0)),
            (b"idletime", true) => Err(fail(
                "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.",
            )),
            _ => Err(fail(
                "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.",
            )),
        },
    }
}

/// A string Redis would hold as one of its shared integers (0..10000).
fn shared_integer(v: &Value) -> bool {
    v.kind == Kind::String
        && v.data.len() <= 20
        && canonical_int(&v.data).is_some_and(|n| (0..10_000).contains(&n))
}

fn encoding(key: &[u8], v: &Value, acc: &mut dyn Access) -> Result<&'static str, Fail> {
    if v.kind == Kind::String {
        return Ok(match &v.data {
            d if d.len() <= 20 && canonical_int(d).is_some() => "int",
            // A HyperLogLog is built in place: always raw in Redis.
            d if d.len() <= 44 && !d.starts_with(b"HYLL") => "embstr",
            _ => "raw",
        });
    }
    if v.kind == Kind::Stream {
        return Ok("stream");
    }
    let c = Coll::decode(key, v)?;
    Ok(match c.kind {
        Kind::List => "quicklist",
        Kind::Set
            if c.count() <= INTSET_ENTRIES
                && sets::members(acc, &c)?
                    .iter()
                    .all(|m| canonical_int(m).is_some()) =>
        {
            "intset"
        }
        Kind::Set => "hashtable",
        Kind::Hash if c.count() <= LISTPACK_ENTRIES && all_short(acc, &c)? => "listpack",
        Kind::Hash => "hashtable",
        _ if c.count() <= LISTPACK_ENTRIES
            && zsets::range::all_members(acc, &c, false)?
                .iter()
                .all(|(_, m)| m.len() <= LISTPACK_VALUE) =>
        {
            "listpack"
        }
        _ => "skiplist",
    })
}

/// True if every field and value of hash `c` is short enough for a
/// listpack.
fn all_short(acc: &mut dyn Access, c: &Coll) -> Result<bool, Fail> {
    let mut short = true;
    c.for_each(acc, |f, v| {
        short = f.len() <= LISTPACK_VALUE && v.len() <= LISTPACK_VALUE;
        short
    })?;
    Ok(short)
}

/// `MEMORY USAGE key [SAMPLES count]`.
fn usage(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let mut samples = 5usize;
    let mut i = 3;
    while i < a.len() {
        if !(a[i].eq_ignore_ascii_case(b"samples") && i + 1 < a.len()) {
            return Err(syntax_error());
        }
        samples = match int_arg(&a[i + 1])? {
            n if n < 0 => return Err(syntax_error()),
            0 => usize::MAX,
            n => n as usize,
        };
        i += 2;
    }
    let Some(v) = acc.get(&a[2])? else {
        return Ok(Reply::Null);
    };
    let own = a[2].len() + v.data.len() + ENTRY_OVERHEAD;
    if matches!(v.kind, Kind::String | Kind::Stream) {
        return Ok(Reply::Int(own as i64));
    }
    let c = Coll::decode(&a[2], &v)?;
    let prefix = c.prefix().len();
    let (mut seen, mut bytes) = (0usize, 0usize);
    c.for_each(acc, |sub, value| {
        seen += 1;
        bytes += prefix + sub.len() + value.len() + ENTRY_OVERHEAD;
        seen < samples
    })?;
    // A sorted set keeps two entries per member (by name, by score).
    let entries = c.count().max(0) as usize * if c.kind == Kind::ZSet { 2 } else { 1 };
    let per_entry = bytes.checked_div(seen).unwrap_or(0);
    Ok(Reply::Int((own + per_entry * entries) as i64))
}
