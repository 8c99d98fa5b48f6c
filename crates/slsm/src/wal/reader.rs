//! [`WalReader`]: reads the records of a log file back, telling a torn tail
//! from corruption in the middle.

use std::path::{Path, PathBuf};

use super::format::{
    encode_file_header, record_crc, RecoveryMode, TailDrop, TailDropKind, FILE_HEADER_LEN,
    MAX_RECORD_LEN, RECORD_HEADER_LEN, WAL_FORMAT_VERSION, WAL_MAGIC,
};
use super::resync::{find_valid_record, Scan};
use crate::codec::{mask_crc, u32_at as le_u32, u64_at as le_u64};
use crate::error::{Error, Result};

/// How many candidate records the forward scan after a bad record may
/// checksum before giving up (each costs about a microsecond: a few seconds
/// at most). Behind a torn record of random bytes, about `len / 2^32` of the
/// offsets are candidates, so only a torn record of hundreds of megabytes
/// comes near it; then the damage is treated as corruption (never silently
/// as a torn tail), which is the safe answer.
const RESYNC_BUDGET: u64 = 1 << 22;

/// Reads the records of one log file in order.
///
/// The whole file is read into memory by [`open`](Self::open): log files are
/// bounded by the memory-buffer size, and a private copy cannot be changed
/// or truncated under the reader. See the [module docs](super) for how torn
/// tails and corruption are told apart.
///
/// ```no_run
/// # use slsm::wal::{WalReader, RecoveryMode};
/// # fn f(path: &std::path::Path) -> slsm::Result<()> {
/// let mut reader = WalReader::open(path, Some(7), RecoveryMode::Strict)?;
/// while let Some((offset, payload)) = reader.next_record()? {
///     // decode and apply the write batch in `payload`
/// #   let _ = (offset, payload);
/// }
/// if let Some(drop) = reader.tail_dropped() {
///     // truncate the file to reader.valid_end() or start a new log
/// #   let _ = drop;
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct WalReader {
    path: PathBuf,
    data: Vec<u8>,
    mode: RecoveryMode,
    log_number: Option<u64>,
    /// Offset of the next record to read.
    pos: usize,
    state: State,
    tail: Option<TailDrop>,
}

#[derive(Debug)]
enum State {
    Reading,
    Done,
    Failed(Error),
}

/// What the file header check found.
enum Header {
    /// A valid header with this log number.
    Valid(u64),
    /// An empty file: nothing was ever written.
    Empty,
    /// A header cut short by a crash (a prefix of a valid header), or a file
    /// that is entirely zero bytes.
    Torn,
    /// Not a valid header.
    Bad(String),
}

impl WalReader {
    /// Reads the log file at `path` and checks its file header.
    ///
    /// `expected_log_number`, when given, must match the number in the
    /// header. Errors:
    /// * [`Error::Io`] if the file cannot be read;
    /// * [`Error::Corruption`] at offset 0 for a bad header (wrong magic,
    ///   checksum or log number) in [`RecoveryMode::Strict`]; in
    ///   [`RecoveryMode::BestEffort`] the file is treated as empty and the
    ///   whole file is reported by [`tail_dropped`](Self::tail_dropped);
    /// * [`Error::NotADatabase`] in both modes for a valid header of an
    ///   unknown format version (never dropped: it may hold data).
    ///
    /// An empty file, a header cut short by a crash, or an all-zero file is
    /// an empty log (the latter two are reported as a torn tail).
    pub fn open(path: &Path, expected_log_number: Option<u64>, mode: RecoveryMode) -> Result<Self> {
        Self::open_with(&crate::fs::StdFs, path, expected_log_number, mode)
    }

    /// [`open`](Self::open) through the file system `fs`.
    pub fn open_with(
        fs: &dyn crate::fs::FileSystem,
        path: &Path,
        expected_log_number: Option<u64>,
        mode: RecoveryMode,
    ) -> Result<Self> {
        let data = fs.read(path).map_err(|e| Error::io(path, e))?;
        let mut reader = WalReader {
            path: path.to_path_buf(),
            data,
            mode,
            log_number: None,
            pos: 0,
            state: State::Done,
            tail: None,
        };
        match check_header(&reader.data, expected_log_number, path)? {
            Header::Valid(n) => {
                reader.log_number = Some(n);
                reader.pos = FILE_HEADER_LEN;
                reader.state = State::Reading;
            }
            Header::Empty => {}
            Header::Torn => reader.drop_from(0, TailDropKind::Torn),
            Header::Bad(reason) => match mode {
                RecoveryMode::Strict => return Err(Error::corruption(path, 0, reason)),
                RecoveryMode::BestEffort => reader.drop_from(0, TailDropKind::Corruption),
            },
        }
        Ok(reader)
    }

    /// Returns the next record as `(file offset of its header, payload)`, or
    /// `None` at the end of the valid part of the log.
    ///
    /// In [`RecoveryMode::Strict`], corruption before the last valid record
    /// is returned as [`Error::Corruption`] with the damaged record's offset,
    /// and every later call returns the same error.
    pub fn next_record(&mut self) -> Result<Option<(u64, &[u8])>> {
        match &self.state {
            State::Reading => {}
            State::Done => return Ok(None),
            State::Failed(e) => return Err(e.clone()),
        }
        let pos = self.pos;
        if pos == self.data.len() {
            self.state = State::Done;
            return Ok(None);
        }
        match check_record(&self.data, pos) {
            Ok(len) => {
                let start = pos + RECORD_HEADER_LEN;
                self.pos = start + len;
                Ok(Some((pos as u64, &self.data[start..start + len])))
            }
            Err(reason) => self.handle_bad_record(pos, reason).map(|()| None),
        }
    }

    /// Decides between torn tail and corruption for the bad record at `pos`.
    fn handle_bad_record(&mut self, pos: usize, reason: &str) -> Result<()> {
        let next_valid = match find_valid_record(&self.data, pos + 1, RESYNC_BUDGET) {
            Scan::NotFound => {
                self.drop_from(pos, TailDropKind::Torn);
                return Ok(());
            }
            Scan::Found(at) => format!("a valid record follows at offset {at}"),
            Scan::GaveUp(at) => {
                format!("gave up searching for later valid records at offset {at}")
            }
        };
        match self.mode {
            RecoveryMode::BestEffort => {
                self.drop_from(pos, TailDropKind::Corruption);
                Ok(())
            }
            RecoveryMode::Strict => {
                let err = Error::corruption(
                    &self.path,
                    pos as u64,
                    format!("WAL record {reason}, and {next_valid}, so this is not a torn tail"),
                );
                self.state = State::Failed(err.clone());
                Err(err)
            }
        }
    }

    /// Stops reading and reports everything from `offset` on as dropped.
    fn drop_from(&mut self, offset: usize, kind: TailDropKind) {
        self.state = State::Done;
        self.tail = Some(TailDrop {
            offset: offset as u64,
            bytes: (self.data.len() - offset) as u64,
            kind,
        });
    }

    /// Offset just past the last record returned so far (after the end: past
    /// the last good record). Truncating the file to this length removes a
    /// torn tail. A value of 0 means the file has no valid header: do not
    /// append to it; delete it or start a new log instead.
    pub fn valid_end(&self) -> u64 {
        self.pos as u64
    }

    /// What was dropped at the end, once [`next_record`](Self::next_record)
    /// has returned `None`: a torn tail (both modes) or the damaged rest of
    /// the file ([`RecoveryMode::BestEffort`]). `None` if the file ended
    /// cleanly.
    pub fn tail_dropped(&self) -> Option<TailDrop> {
        self.tail
    }

    /// The log number from the file header, or `None` if the file has no
    /// valid header (empty, torn, or dropped in best-effort mode).
    pub fn log_number(&self) -> Option<u64> {
        self.log_number
    }

    /// The log file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Size of the file in bytes.
    pub fn file_len(&self) -> u64 {
        self.data.len() as u64
    }
}

/// Checks the file header. Only an unknown format version is an error here.
fn check_header(data: &[u8], expected: Option<u64>, path: &Path) -> Result<Header> {
    if data.is_empty() {
        return Ok(Header::Empty);
    }
    if data.iter().all(|&b| b == 0) {
        return Ok(Header::Torn);
    }
    if data.len() < FILE_HEADER_LEN {
        return Ok(short_header(data, expected));
    }
    if data[0..8] != WAL_MAGIC {
        return Ok(Header::Bad("not an slsm WAL file (bad magic)".into()));
    }
    let stored_crc = le_u32(data, 20);
    if stored_crc != mask_crc(crc32c::crc32c(&data[0..20])) {
        return Ok(Header::Bad("WAL file header checksum mismatch".into()));
    }
    let version = le_u32(data, 8);
    if version != WAL_FORMAT_VERSION {
        return Err(Error::NotADatabase {
            path: path.to_path_buf(),
            reason: format!(
                "WAL format version {version} is not supported (this build reads version \
                 {WAL_FORMAT_VERSION}); open the database with the slsm version that wrote it"
            ),
        });
    }
    let number = le_u64(data, 12);
    match expected {
        Some(want) if want != number => Ok(Header::Bad(format!(
            "WAL file header says log number {number}, but the file name says {want}"
        ))),
        _ => Ok(Header::Valid(number)),
    }
}

/// A file shorter than a header is torn if it is a prefix of the header the
/// writer would have written (the log number is only compared when known).
fn short_header(data: &[u8], expected: Option<u64>) -> Header {
    let reference = encode_file_header(expected.unwrap_or(0));
    let compared = if expected.is_some() {
        data.len()
    } else {
        data.len().min(12)
    };
    if data[..compared] == reference[..compared] {
        Header::Torn
    } else {
        Header::Bad(format!(
            "WAL file of {} bytes is too short for a file header and is not a prefix of one",
            data.len()
        ))
    }
}

/// Verifies the record at `pos`; returns its payload length or why it is bad.
fn check_record(data: &[u8], pos: usize) -> Result<usize, &'static str> {
    let remaining = data.len() - pos;
    if remaining < RECORD_HEADER_LEN {
        return Err("header runs past the end of the file");
    }
    let len = le_u32(data, pos + 4) as usize;
    if len > MAX_RECORD_LEN {
        return Err("has an impossible length");
    }
    if len > remaining - RECORD_HEADER_LEN {
        return Err("payload runs past the end of the file");
    }
    let mut len_bytes = [0u8; 4];
    len_bytes.copy_from_slice(&data[pos + 4..pos + 8]);
    let payload = &data[pos + RECORD_HEADER_LEN..pos + RECORD_HEADER_LEN + len];
    if le_u32(data, pos) != record_crc(len_bytes, payload) {
        return Err("checksum mismatch");
    }
    Ok(len)
}
