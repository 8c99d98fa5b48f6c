//! `DUMP key` and `RESTORE key ttl payload [REPLACE] [ABSTTL] [IDLETIME s]
//! [FREQ f]`, in Redis 7.0's order of checks, with Redis's payload format
//! (`rdb.rs`): a value `DUMP`ed by redis-server restores here and one
//! dumped here restores in redis-server, so keys move between the two
//! with the tools that copy by `DUMP`/`RESTORE`.
//!
//! Every type is dumped and restored, streams with their consumer groups
//! (`stream.rs`). `IDLETIME` and `FREQ` are checked and ignored: there is
//! no eviction to inform.

mod encoding;
pub mod functions;
mod lzf;
mod packed;
mod rdb;
mod stream;

pub use rdb::{frame, read as read_payload, write as write_payload, Object, Refused};
pub use stream::{GroupObject, StreamObject};

use super::{delete_key, hashes, lists, sets, streams, zsets, Coll};
use crate::access::Access;
use crate::commands::{fail, int_arg, syntax_error, Fail, Outcome};
use crate::cursors::Cursors;
use crate::resp::Reply;
use crate::store::{now_ms, Kind, Value};

/// Members or fields written per internal command when restoring.
const CHUNK: usize = 1024;

pub fn run(name: &str, a: &[Vec<u8>], acc: &mut dyn Access, _: &Cursors) -> Outcome {
    match name {
        "dump" => dump(&a[1], acc),
        _ => restore(a, acc),
    }
}

fn dump(key: &[u8], acc: &mut dyn Access) -> Outcome {
    let Some(v) = acc.get(key)? else {
        return Ok(Reply::Null);
    };
    let object = match v.kind {
        Kind::String => Object::String(v.data),
        Kind::Stream => Object::Stream(Box::new(streams::persist::read_whole(acc, key)?)),
        _ => collection(acc, &Coll::decode(key, &v)?)?,
    };
    Ok(Reply::Bulk(rdb::write(&object)))
}

/// A list, set, sorted set or hash, read whole.
fn collection(acc: &mut dyn Access, c: &Coll) -> Result<Object, Fail> {
    Ok(match c.kind {
        Kind::List => Object::List(lists::all_elements(acc, c)?),
        Kind::Set => Object::Set(sets::members(acc, c)?),
        Kind::ZSet => Object::ZSet(
            zsets::range::all_members(acc, c, false)?
                .into_iter()
                .map(|(score, m)| (m, score))
                .collect(),
        ),
        _ => {
            let mut fields = Vec::new();
            c.for_each(acc, |f, v| {
                fields.push((f.to_vec(), v.to_vec()));
                true
            })?;
            Object::Hash(fields)
        }
    })
}

/// RESTORE's options.
#[derive(Default)]
struct Options {
    replace: bool,
    absttl: bool,
}

fn options(a: &[Vec<u8>]) -> Result<Options, Fail> {
    let mut o = Options::default();
    let (mut idle, mut freq) = (false, false);
    let mut i = 4;
    while i < a.len() {
        let more = i + 1 < a.len();
        match a[i].to_ascii_lowercase().as_slice() {
            b"replace" => o.replace = true,
            b"absttl" => o.absttl = true,
            b"idletime" if more && !freq => {
                if int_arg(&a[i + 1])? < 0 {
                    return Err(fail("ERR Invalid IDLETIME value, must be >= 0"));
                }
                idle = true;
                i += 1;
            }
            b"freq" if more && !idle => {
                if !(0..=255).contains(&int_arg(&a[i + 1])?) {
                    return Err(fail("ERR Invalid FREQ value, must be >= 0 and <= 255"));
                }
                freq = true;
                i += 1;
            }
            _ => return Err(syntax_error()),
        }
        i += 1;
    }
    Ok(o)
}

fn restore(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let key = &a[1];
    let o = options(a)?;
    if !o.replace && acc.get(key)?.is_some() {
        return Err(fail("BUSYKEY Target key name already exists."));
    }
    let ttl = int_arg(&a[2])?;
    if ttl < 0 {
        return Err(fail("ERR Invalid TTL value, must be >= 0"));
    }
    let object = match rdb::read(&a[3]) {
        Ok(object) => object,
        Err(Refused::VersionOrChecksum) => {
            return Err(fail("ERR DUMP payload version or checksum are wrong"))
        }
        Err(Refused::BadFormat) => return Err(fail("ERR Bad data format")),
    };
    if o.replace {
        delete_key(acc, key)?;
    }
    let now = now_ms() as i64;
    let expires_at = match (ttl, o.absttl) {
        (0, _) => 0,
        (t, true) => t,
        (t, false) => t.saturating_add(now),
    };
    if expires_at != 0 && expires_at <= now {
        // Already expired: nothing is created (a replaced key is gone).
        return Ok(Reply::ok());
    }
    create(acc, key, object)?;
    if expires_at != 0 {
        if let Some(mut v) = acc.get(key)? {
            v.expires_at = expires_at as u64;
            acc.set(key, &v)?;
        }
    }
    acc.notify(crate::notify::GENERIC, "restore", key);
    Ok(Reply::ok())
}

/// Writes `object` at `key`, which holds nothing.
fn create(acc: &mut dyn Access, key: &[u8], object: Object) -> Result<(), Fail> {
    match object {
        Object::String(s) => Ok(acc.set(key, &Value::new(s, 0))?),
        Object::List(items) => lists::store(acc, key, &items),
        Object::ZSet(members) => {
            let picked = members.into_iter().map(|(m, s)| (s, m)).collect();
            zsets::members::store_result(acc, key, picked, None).map(drop)
        }
        Object::Set(members) => in_chunks(acc, "sadd", key, members, |m| vec![m]),
        Object::Hash(fields) => in_chunks(acc, "hset", key, fields, |(f, v)| vec![f, v]),
        Object::Stream(s) => streams::persist::create(acc, key, *s),
    }
}

/// Runs `command key args...` over `items`, `CHUNK` at a time.
fn in_chunks<T>(
    acc: &mut dyn Access,
    command: &str,
    key: &[u8],
    items: Vec<T>,
    args: impl Fn(T) -> Vec<Vec<u8>>,
) -> Result<(), Fail> {
    let mut items = items.into_iter().peekable();
    while items.peek().is_some() {
        let mut request = vec![command.as_bytes().to_vec(), key.to_vec()];
        request.extend(items.by_ref().take(CHUNK).flat_map(&args));
        match command {
            "sadd" => sets::run(command, &request, acc, &Default::default())?,
            _ => hashes::run(command, &request, acc, &Default::default())?,
        };
    }
    Ok(())
}
