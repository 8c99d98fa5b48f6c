//! The keyspace catalog: which keyspaces exist (name, id, TTL) and the next
//! id to hand out. The manifest records it (format 3), so a keyspace exists
//! from the moment its creation is durable, and ids are never reused: the
//! data of a dropped keyspace can never reappear under a new one.

use std::collections::HashSet;

use super::tag::MAX_KEYSPACE_ID;
use crate::codec::{put_bytes, put_u32, put_u64, Reader};

/// Name of the keyspace `Db`'s own methods act on (id 0, never dropped).
pub const DEFAULT_KEYSPACE: &str = "default";
/// Longest keyspace name, in bytes.
pub(crate) const MAX_NAME_LEN: usize = 255;

/// One keyspace.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct KeyspaceRecord {
    /// Its id, whose tag starts every key it stores (never reused).
    pub id: u32,
    /// Its name.
    pub name: String,
    /// Entries expire this many milliseconds after they were written
    /// (0: never).
    pub ttl_millis: u64,
}

/// Every live keyspace and the next id.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Catalog {
    /// Ascending by id; the default keyspace first.
    pub keyspaces: Vec<KeyspaceRecord>,
    /// The id the next keyspace gets.
    pub next_id: u32,
}

impl Default for Catalog {
    fn default() -> Self {
        Catalog {
            keyspaces: vec![KeyspaceRecord {
                id: 0,
                name: DEFAULT_KEYSPACE.to_string(),
                ttl_millis: 0,
            }],
            next_id: 1,
        }
    }
}

impl Catalog {
    /// The keyspace named `name`.
    pub fn by_name(&self, name: &str) -> Option<&KeyspaceRecord> {
        self.keyspaces.iter().find(|k| k.name == name)
    }

    /// The keyspace with id `id`.
    pub fn by_id(&self, id: u32) -> Option<&KeyspaceRecord> {
        self.keyspaces
            .binary_search_by_key(&id, |k| k.id)
            .ok()
            .map(|i| &self.keyspaces[i])
    }

    /// True if keyspace `id` exists (the default one always does).
    #[inline]
    pub fn is_live(&self, id: u32) -> bool {
        id == 0 || self.by_id(id).is_some()
    }

    /// The catalog with keyspace `name` added.
    pub(crate) fn with_new(&self, name: &str, ttl_millis: u64) -> Result<Catalog, String> {
        check_name(name)?;
        if self.next_id > MAX_KEYSPACE_ID {
            return Err("no keyspace ids left".to_string());
        }
        let mut next = self.clone();
        next.keyspaces.push(KeyspaceRecord {
            id: self.next_id,
            name: name.to_string(),
            ttl_millis,
        });
        next.next_id += 1;
        Ok(next)
    }

    /// The catalog without keyspace `name`.
    pub(crate) fn without(&self, name: &str) -> Catalog {
        let mut next = self.clone();
        next.keyspaces.retain(|k| k.name != name);
        next
    }

    /// Appends the encoding (see the manifest's format).
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        put_u32(out, self.next_id);
        put_u32(out, self.keyspaces.len() as u32);
        for k in &self.keyspaces {
            put_u32(out, k.id);
            put_u64(out, k.ttl_millis);
            put_bytes(out, k.name.as_bytes());
        }
    }

    /// Decodes and checks (ids ascending, below `next_id`, names unique and
    /// valid, the default keyspace present); `Err` names the problem.
    pub(crate) fn decode_from(r: &mut Reader<'_>) -> Result<Catalog, String> {
        let truncated = || "keyspace catalog truncated".to_string();
        let next_id = r.u32().ok_or_else(truncated)?;
        let count = r.u32().ok_or_else(truncated)?;
        let mut keyspaces = Vec::new();
        let mut names = HashSet::new();
        for _ in 0..count {
            let id = r.u32().ok_or_else(truncated)?;
            let ttl_millis = r.u64().ok_or_else(truncated)?;
            let name = r.length_prefixed().ok_or_else(truncated)?;
            let name = std::str::from_utf8(name)
                .map_err(|_| format!("keyspace {id} has a name that is not UTF-8"))?;
            if keyspaces
                .last()
                .is_some_and(|k: &KeyspaceRecord| k.id >= id)
                || id >= next_id
            {
                return Err(format!(
                    "keyspace id {id} out of order or not below {next_id}"
                ));
            }
            if !names.insert(name.to_string()) {
                return Err(format!("keyspace {name:?} appears twice"));
            }
            keyspaces.push(KeyspaceRecord {
                id,
                name: name.to_string(),
                ttl_millis,
            });
        }
        if keyspaces.first().map(|k| (k.id, k.name.as_str())) != Some((0, DEFAULT_KEYSPACE)) {
            return Err("the default keyspace is missing".to_string());
        }
        Ok(Catalog { keyspaces, next_id })
    }
}

/// Keyspace names: 1 to 255 bytes of letters, digits, `_`, `-`, `.`, `#`
/// or `$` (fjall's rule), so they print and fit file names.
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    let ok_char = |c: char| c.is_ascii_alphanumeric() || "_-.#$".contains(c);
    if name.is_empty() || name.len() > MAX_NAME_LEN || !name.chars().all(ok_char) {
        return Err(format!(
            "invalid keyspace name {name:?}: 1 to {MAX_NAME_LEN} characters of a-z, A-Z, 0-9, _ - . # $"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_damage() {
        let c = Catalog::default()
            .with_new("users", 0)
            .unwrap()
            .with_new("sessions", 60_000)
            .unwrap()
            .without("users");
        let mut out = Vec::new();
        c.encode_into(&mut out);
        let back = Catalog::decode_from(&mut Reader::new(&out)).unwrap();
        assert_eq!(back, c);
        assert_eq!(back.by_name("sessions").unwrap().id, 2);
        assert!(!back.is_live(1) && back.is_live(2) && back.is_live(0));
        for cut in 0..out.len() {
            assert!(Catalog::decode_from(&mut Reader::new(&out[..cut])).is_err());
        }
        assert!(Catalog::default().with_new("default", 0).is_ok_and(|c| {
            let mut o = Vec::new();
            c.encode_into(&mut o);
            Catalog::decode_from(&mut Reader::new(&o)).is_err()
        }));
        assert!(check_name("a/b").is_err() && check_name("").is_err());
    }
}
