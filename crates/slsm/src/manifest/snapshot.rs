//! The snapshot record: the whole state (identity, counters, every level's
//! runs, the catalog), and the version-3 file that was one snapshot under
//! one CRC.

use std::collections::HashSet;
use std::path::Path;

use super::state::{
    check_counters, check_run, put_len, Cursor, Manifest, MANIFEST_FORMAT_VERSION, PREFIX_V3,
};
use crate::codec::{masked_crc, put_u64, Reader};
use crate::db_id::DbId;
use crate::error::{Error, Result};
use crate::keyspace::catalog::Catalog;
use crate::sst::RunProperties;

/// The snapshot payload of `m`.
pub(super) fn encode(m: &Manifest) -> Vec<u8> {
    let mut out = Vec::with_capacity(encoded_len_hint(m));
    out.extend_from_slice(&m.db_id);
    put_u64(&mut out, m.next_file_number);
    put_u64(&mut out, m.last_sequence);
    put_u64(&mut out, m.min_wal_number);
    put_len(&mut out, m.levels.len());
    for level in &m.levels {
        put_len(&mut out, level.len());
        for run in level {
            run.encode_into(&mut out);
        }
    }
    m.catalog.encode_into(&mut out);
    out
}

fn encoded_len_hint(m: &Manifest) -> usize {
    let runs: usize = m
        .runs()
        .map(|r| 90 + r.min_user_key.len() + r.max_user_key.len())
        .sum();
    let catalog: usize = m.catalog.keyspaces.iter().map(|k| 14 + k.name.len()).sum();
    52 + 4 * m.levels.len() + runs + catalog
}

/// Decodes a snapshot payload; `cur` must end where the payload does.
pub(super) fn decode(cur: &mut Cursor<'_>) -> Result<Manifest> {
    let manifest = decode_body(cur)?;
    if !cur.r.is_empty() {
        let at = cur.r.pos();
        let reason = format!(
            "{} unexpected bytes after the keyspace catalog",
            cur.r.remaining()
        );
        return Err(cur.error_at(at, reason));
    }
    Ok(manifest)
}

/// A version-3 file: header, snapshot payload, CRC of everything before it.
pub(super) fn decode_legacy(bytes: &[u8], file: &Path) -> Result<Manifest> {
    const CRC_LEN: usize = 4;
    if bytes.len() < PREFIX_V3 + CRC_LEN {
        let reason = format!("manifest of {} bytes is too short", bytes.len());
        return Err(Error::corruption(file, 0, reason));
    }
    let crc_at = bytes.len() - CRC_LEN;
    if crate::codec::u32_at(bytes, crc_at) != masked_crc(&bytes[..crc_at]) {
        return Err(Error::corruption(
            file,
            crc_at as u64,
            "manifest checksum mismatch",
        ));
    }
    let mut cur = Cursor {
        r: Reader::at(&bytes[..crc_at], PREFIX_V3),
        file,
    };
    decode(&mut cur)
}

fn decode_body(cur: &mut Cursor<'_>) -> Result<Manifest> {
    let db_id: DbId = cur
        .field("database id", |r| r.bytes(16))?
        .try_into()
        .expect("16 bytes");
    let next_file_number = cur.field("next_file_number", Reader::u64)?;
    let last_sequence = cur.field("last_sequence", Reader::u64)?;
    let counters_at = cur.r.pos();
    let min_wal_number = cur.field("min_wal_number", Reader::u64)?;
    check_counters(next_file_number, min_wal_number).map_err(|r| cur.error_at(counters_at, r))?;
    let level_count = cur.field("level count", Reader::u32)?;
    let mut levels = Vec::new();
    let mut seen = HashSet::new();
    for _ in 0..level_count {
        let run_count = cur.field("run count", Reader::u32)?;
        let mut level = Vec::new();
        for _ in 0..run_count {
            let at = cur.r.pos();
            let run = cur.field("run record", RunProperties::decode_from)?;
            check_run(&run, next_file_number, last_sequence, &mut seen)
                .map_err(|r| cur.error_at(at, r))?;
            level.push(run);
        }
        levels.push(level);
    }
    let at = cur.r.pos();
    let catalog = Catalog::decode_from(&mut cur.r).map_err(|r| cur.error_at(at, r))?;
    Ok(Manifest {
        format_version: MANIFEST_FORMAT_VERSION,
        db_id,
        next_file_number,
        last_sequence,
        min_wal_number,
        levels,
        catalog,
    })
}
