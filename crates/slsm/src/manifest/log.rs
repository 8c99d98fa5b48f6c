//! The manifest as a log: its records, how a file of them is read (a torn
//! last record left out, damage anywhere else refused), and
//! [`ManifestLog`], the writer the version set keeps.
//!
//! * **Owns**: the open manifest file and the state it describes.
//! * **Calls**: the file system, the snapshot and edit codecs.
//! * **Thread safety**: `ManifestLog` is not shared; its one user (the
//!   version set) calls it under the lock that serialises every change.
//! * **Durability**: [`ManifestLog::record`] returns `Ok` only once the new
//!   state is durable: an edit appended and the file's data synced, or a
//!   new file written whole and renamed into place with its directory
//!   synced. After an error the file may end in a torn edit, which a reader
//!   leaves out; the next `record` then writes a new file whole, so nothing
//!   is ever appended after a torn edit.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::state::{Cursor, Manifest, MANIFEST_FORMAT_VERSION, MANIFEST_MAGIC, PREFIX_LEN};
use super::{edit, snapshot};
use crate::codec::{masked_crc, put_u32, u32_at, Reader};
use crate::error::{Error, Result};
use crate::files::MANIFEST_FILE;
use crate::fs::durable;
use crate::fs::{FileSystem, FsFile};

/// Bytes before a record's kind: its length and CRC.
const RECORD_HEADER: usize = 8;

/// How many bytes the search for a whole record behind a bad one may
/// checksum before it gives up and calls the damage corruption (the safe
/// answer). A manifest is at most three snapshots or
/// `Options::max_manifest_file_size` long; only hostile input comes near
/// this.
const RESYNC_BUDGET: usize = 64 << 20;

/// What a record holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum RecordKind {
    /// The whole state; the first record of a file and only that.
    Snapshot = 1,
    /// The change from the state before it.
    Edit = 2,
}

/// The magic, the version and their CRC.
pub(super) fn file_header() -> Vec<u8> {
    let mut out = Vec::with_capacity(PREFIX_LEN);
    out.extend_from_slice(&MANIFEST_MAGIC);
    put_u32(&mut out, MANIFEST_FORMAT_VERSION);
    let crc = masked_crc(&out);
    put_u32(&mut out, crc);
    out
}

/// Whether the first 12 bytes are intact (their CRC follows them).
pub(super) fn header_intact(bytes: &[u8]) -> bool {
    bytes.len() >= PREFIX_LEN && u32_at(bytes, 12) == masked_crc(&bytes[..12])
}

/// Appends a record of `kind` holding `payload`.
pub(super) fn put_record(out: &mut Vec<u8>, kind: RecordKind, payload: &[u8]) {
    let start = out.len();
    put_u32(out, u32::try_from(payload.len() + 1).unwrap_or(u32::MAX));
    put_u32(out, 0);
    out.push(kind as u8);
    out.extend_from_slice(payload);
    let crc = masked_crc(&out[start + RECORD_HEADER..]);
    out[start + 4..start + RECORD_HEADER].copy_from_slice(&crc.to_le_bytes());
}

/// What [`decode`] found.
#[derive(Debug)]
pub(crate) struct Decoded {
    /// The state the log ends in.
    pub manifest: Manifest,
    /// Edits applied after the snapshot.
    pub edits: usize,
    /// Where a torn last record began, if the log ends in one.
    pub torn_at: Option<u64>,
}

impl Decoded {
    /// A manifest read from a file without edits.
    pub(super) fn alone(manifest: Manifest) -> Decoded {
        Decoded {
            manifest,
            edits: 0,
            torn_at: None,
        }
    }
}

/// One record's place in the file.
enum Next {
    /// The file ends here.
    End,
    /// A whole record whose CRC matches.
    Whole {
        kind: u8,
        payload_at: usize,
        end: usize,
    },
    /// A record cut short or failing its CRC.
    Bad,
}

fn next_record(bytes: &[u8], at: usize) -> Next {
    if at == bytes.len() {
        return Next::End;
    }
    if bytes.len() - at <= RECORD_HEADER {
        return Next::Bad;
    }
    let len = u32_at(bytes, at) as usize;
    let end = match (at + RECORD_HEADER).checked_add(len) {
        Some(end) if len > 0 && end <= bytes.len() => end,
        _ => return Next::Bad,
    };
    if u32_at(bytes, at + 4) != masked_crc(&bytes[at + RECORD_HEADER..end]) {
        return Next::Bad;
    }
    Next::Whole {
        kind: bytes[at + RECORD_HEADER],
        payload_at: at + RECORD_HEADER + 1,
        end,
    }
}

/// Whether a whole record starts anywhere after `at`: then the bad record
/// at `at` is damage in the middle, not a torn tail. `None` when the
/// search ran out of budget (damage, to be safe).
fn whole_record_after(bytes: &[u8], at: usize) -> Option<bool> {
    let mut spent = 0usize;
    for p in at + 1..bytes.len().saturating_sub(RECORD_HEADER) {
        let len = u32_at(bytes, p) as usize;
        let fits = len > 0 && len <= bytes.len() - p - RECORD_HEADER;
        if !fits || bytes[p + RECORD_HEADER] != RecordKind::Edit as u8 {
            continue;
        }
        spent += len;
        if spent > RESYNC_BUDGET {
            return None;
        }
        if matches!(next_record(bytes, p), Next::Whole { .. }) {
            return Some(true);
        }
    }
    Some(false)
}

/// Reads a version-4 file: the snapshot, then every whole edit.
pub(super) fn decode(bytes: &[u8], file: &Path) -> Result<Decoded> {
    let (payload_at, end) = match next_record(bytes, PREFIX_LEN) {
        Next::Whole {
            kind,
            payload_at,
            end,
        } if kind == RecordKind::Snapshot as u8 => (payload_at, end),
        Next::Whole { .. } => {
            return Err(Error::corruption(
                file,
                PREFIX_LEN as u64,
                "the manifest's first record is not a snapshot",
            ));
        }
        Next::End | Next::Bad => {
            let reason = "the manifest's snapshot record is missing, cut short or damaged";
            return Err(Error::corruption(file, PREFIX_LEN as u64, reason));
        }
    };
    let mut cur = Cursor {
        r: Reader::at(&bytes[..end], payload_at),
        file,
    };
    let mut decoded = Decoded::alone(snapshot::decode(&mut cur)?);
    let mut at = end;
    loop {
        match next_record(bytes, at) {
            Next::End => return Ok(decoded),
            Next::Whole {
                kind,
                payload_at,
                end,
            } if kind == RecordKind::Edit as u8 => {
                let mut cur = Cursor {
                    r: Reader::at(&bytes[..end], payload_at),
                    file,
                };
                decoded.manifest = edit::decode_onto(&decoded.manifest, &mut cur, at)?;
                decoded.edits += 1;
                at = end;
            }
            Next::Whole { kind, .. } => {
                let reason = format!(
                    "manifest record of kind {kind} after the snapshot (only edits may follow it)"
                );
                return Err(Error::corruption(file, at as u64, reason));
            }
            Next::Bad => {
                if whole_record_after(bytes, at) == Some(false) {
                    decoded.torn_at = Some(at as u64);
                    return Ok(decoded);
                }
                let reason =
                    "manifest record cut short or failing its checksum, with records after it";
                return Err(Error::corruption(file, at as u64, reason));
            }
        }
    }
}

/// What one [`ManifestLog::record`] wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Written {
    /// Nothing: the file already says this.
    Nothing,
    /// An edit of this many bytes, appended and synced.
    Edit(u64),
    /// A new file of this many bytes, in place of the old.
    File(u64),
}

/// The manifest file being appended to. See the [module docs](self).
pub(crate) struct ManifestLog {
    fs: Arc<dyn FileSystem>,
    dir: PathBuf,
    /// `None` until the first record, and after a failed append: the next
    /// record writes a new file.
    open: Option<OpenFile>,
    /// A change that finds the file larger than this and than three times
    /// its snapshot writes a new one: a rewrite then costs about what the
    /// edits since the last one did (every change costs O(1) amortised
    /// bytes), and an open replays at most a few snapshots' worth.
    max_file_size: u64,
}

struct OpenFile {
    file: Box<dyn FsFile>,
    /// The state the file describes.
    state: Manifest,
    /// Bytes of the file, and of its header and snapshot.
    len: u64,
    snapshot_len: u64,
}

impl ManifestLog {
    /// The writer of `dir/MANIFEST`; its first record writes a new file,
    /// and so does any that finds the file larger than `max_file_size` and
    /// than three times its snapshot.
    pub fn new(fs: Arc<dyn FileSystem>, dir: &Path, max_file_size: u64) -> ManifestLog {
        ManifestLog {
            fs,
            dir: dir.to_path_buf(),
            open: None,
            max_file_size,
        }
    }

    /// Makes `next` the durable state: an edit from the state the file
    /// holds, or a new file when there is none yet, the last append failed,
    /// or the edits have outgrown the snapshot.
    ///
    /// Fails with [`Error::InvalidArgument`], writing nothing, if `next`
    /// breaks an invariant of [`Manifest::validate`].
    pub fn record(&mut self, next: &Manifest) -> Result<Written> {
        next.validate().map_err(|reason| {
            Error::InvalidArgument(format!(
                "refusing to store an inconsistent manifest: {reason}"
            ))
        })?;
        let limit = self.max_file_size;
        let due = |o: &OpenFile| o.len > limit.max(3 * o.snapshot_len);
        let Some(open) = self.open.as_mut().filter(|o| !due(o)) else {
            return self.write_new_file(next);
        };
        if open.state == *next {
            return Ok(Written::Nothing);
        }
        let mut record = Vec::new();
        put_record(
            &mut record,
            RecordKind::Edit,
            &edit::encode(&open.state, next),
        );
        let appended = open
            .file
            .write_all(&record)
            .and_then(|()| open.file.sync_data());
        if let Err(e) = appended {
            self.open = None;
            return Err(Error::io(self.dir.join(MANIFEST_FILE), e));
        }
        open.len += record.len() as u64;
        open.state = next.clone();
        Ok(Written::Edit(record.len() as u64))
    }

    fn write_new_file(&mut self, next: &Manifest) -> Result<Written> {
        self.open = None;
        let bytes = next.encode();
        let file = durable::replace_file_with(&*self.fs, &self.dir, MANIFEST_FILE, &bytes)?;
        let len = bytes.len() as u64;
        self.open = Some(OpenFile {
            file,
            state: next.clone(),
            len,
            snapshot_len: len,
        });
        Ok(Written::File(len))
    }
}
