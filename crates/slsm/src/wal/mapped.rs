//! A WAL writer that appends through a shared memory mapping of the log.
//!
//! Copying a record into a `MAP_SHARED` mapping puts it in the kernel's page
//! cache at once: it survives a crash of the process exactly like a
//! `write(2)` would, without a system call per commit. That is the default
//! durability of the engine (handed to the OS before a write returns) at the
//! cost of a `memcpy`. `sync` makes it durable against power loss.
//!
//! The file is reserved ahead of the writes with `fallocate`, so a full disk
//! is reported as an error when the space is reserved instead of a `SIGBUS`
//! when a page is first written. The reserved tail is zeros; the reader
//! treats a zero-filled tail as the end of the log, and [`finish`]
//! truncates the file to its records when the log is retired.
//!
//! [`finish`]: MappedWal::finish

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use memmap2::{MmapMut, MmapOptions};

use super::writer::check_payload_len;
use super::{encode_file_header, record_crc, FILE_HEADER_LEN, RECORD_HEADER_LEN};
use crate::error::{Error, Result};
use crate::fsutil;

/// Space is reserved in steps of this many bytes (at least).
const GROW_STEP: u64 = 4 << 20;
/// Records at least this big are appended with `pwrite(2)` instead of a
/// copy into the map (measured: a 64-entry batch of 116-byte entries
/// appends ~9% faster that way; single small records are faster mapped).
const WRITE_CALL_MIN: usize = 4096;
/// Smallest mapping (address space only; file space is reserved in steps).
const MIN_MAP_LEN: u64 = 64 << 20;
/// Every this many appended bytes, the writeback of the full pages appended
/// so far is started (`sync_file_range(SYNC_FILE_RANGE_WRITE)`, which does
/// not wait), like RocksDB's `wal_bytes_per_sync`. A later `sync` (at the
/// latest when the log is retired, on the write path) then finds little
/// left to write instead of waiting for the whole log.
const WRITEBACK_STEP: u64 = 256 << 10;
/// Page size assumed for writeback ranges (only whole pages behind the
/// append position are handed to writeback, so the page being filled is
/// not write-protected under the writer).
const PAGE: u64 = 4096;

/// An append-only log written through a shared mapping.
///
/// Not thread-safe by itself (`&mut self`); the engine's write queue
/// serialises appends. Durability: after `append` returns, the record
/// survives a process crash; after `sync`, a machine crash. After an I/O
/// error the writer is poisoned and every later call fails.
pub struct MappedWal {
    file: File,
    path: PathBuf,
    log_number: u64,
    map: MmapMut,
    /// Length of the mapping: address space reserved once, ahead of the
    /// file, so the log rarely has to be remapped (each remap costs a TLB
    /// shootdown on every core running the process).
    map_len: u64,
    /// Bytes written: the file header plus every record.
    len: u64,
    /// Bytes reserved (the file's length and the mapping's).
    reserved: u64,
    synced: u64,
    /// Writeback was started for the bytes below this offset.
    writeback_started: u64,
    /// The file's length changed since the last `sync`.
    size_dirty: bool,
    poisoned: Option<Error>,
    /// Reused buffer for records appended with `pwrite(2)`.
    scratch: Vec<u8>,
}

fn round_up(n: u64) -> u64 {
    n.div_ceil(GROW_STEP) * GROW_STEP
}

impl MappedWal {
    /// Creates log `log_number` at `path` (which must not exist), reserving
    /// up to `expected_bytes` (at most one growth step) to start with, and
    /// makes its header and directory entry durable.
    pub fn create(path: &Path, log_number: u64, expected_bytes: u64) -> Result<MappedWal> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        let made = Self::init(file, path, log_number, expected_bytes);
        if made.is_err() {
            let _ = std::fs::remove_file(path);
        }
        made
    }

    fn init(file: File, path: &Path, log_number: u64, expected: u64) -> Result<MappedWal> {
        // Reserve a first step only; `grow` adds more as the log fills, so
        // a small or idle database does not pin `expected` bytes per log.
        let reserved = round_up(expected.clamp(FILE_HEADER_LEN as u64 + 1, GROW_STEP));
        reserve(&file, path, 0, reserved)?;
        let map_len = round_up(expected.saturating_mul(2).max(MIN_MAP_LEN));
        let map = map(&file, path, map_len)?;
        let mut wal = MappedWal {
            file,
            path: path.to_path_buf(),
            log_number,
            map,
            map_len,
            len: 0,
            reserved,
            synced: 0,
            writeback_started: 0,
            size_dirty: true,
            poisoned: None,
            scratch: Vec::new(),
        };
        wal.put(&encode_file_header(log_number));
        wal.sync()?;
        fsutil::sync_parent_dir(path)?;
        Ok(wal)
    }

    fn put(&mut self, bytes: &[u8]) {
        let at = self.len as usize;
        self.map[at..at + bytes.len()].copy_from_slice(bytes);
        self.len += bytes.len() as u64;
    }

    fn check_poisoned(&self) -> Result<()> {
        match &self.poisoned {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    fn poisoning<T>(&mut self, r: Result<T>) -> Result<T> {
        if let Err(e) = &r {
            self.poisoned = Some(e.clone());
        }
        r
    }

    /// Appends one record. On return it is in the page cache.
    pub fn append(&mut self, payload: &[u8]) -> Result<()> {
        self.check_poisoned()?;
        check_payload_len(payload.len())?;
        let need = self.len + (RECORD_HEADER_LEN + payload.len()) as u64;
        if need > self.reserved {
            let grown = self.grow(need);
            self.poisoning(grown)?;
        }
        let len_bytes = (payload.len() as u32).to_le_bytes();
        let crc = record_crc(len_bytes, payload).to_le_bytes();
        if payload.len() >= WRITE_CALL_MIN {
            return self.append_by_write(crc, len_bytes, payload, need);
        }
        // The payload first and the header last is not needed for
        // correctness (the CRC covers both), but keeps a torn record's
        // header zero in the common case.
        let at = self.len as usize;
        let body = at + RECORD_HEADER_LEN;
        self.map[body..body + payload.len()].copy_from_slice(payload);
        self.map[at + 4..at + 8].copy_from_slice(&len_bytes);
        self.map[at..at + 4].copy_from_slice(&crc);
        self.len = need;
        self.start_writeback_if_due();
        Ok(())
    }

    /// Starts (without waiting) the writeback of the whole pages appended
    /// since the last call, once `WRITEBACK_STEP` bytes have accumulated.
    /// Only a hint to the kernel: an error here is ignored, and the next
    /// `sync` reports it (the kernel keeps writeback errors for `fsync`).
    fn start_writeback_if_due(&mut self) {
        if self.len - self.writeback_started < WRITEBACK_STEP {
            return;
        }
        use std::os::fd::AsRawFd;
        let from = self.writeback_started;
        let to = self.len / PAGE * PAGE;
        self.unmap_written(from, to);
        // SAFETY: `sync_file_range` only reads its integer arguments; the
        // descriptor is owned by `self.file` and open during the call.
        unsafe {
            libc::sync_file_range(
                self.file.as_raw_fd(),
                from as i64,
                (to - from) as i64,
                libc::SYNC_FILE_RANGE_WRITE,
            )
        };
        self.writeback_started = to;
    }

    /// Drops `[from, to)` (whole pages behind the writer) from this
    /// process' page tables before their writeback starts. Writeback has to
    /// write-protect every mapped dirty page, one TLB shootdown per page
    /// (an interrupt to each core running the process: measured ~10% of
    /// the writer's time on 8-byte entries); unmapping the range first
    /// costs one batched shootdown and leaves writeback nothing to protect.
    /// It also keeps the log's pages out of the resident set.
    fn unmap_written(&mut self, from: u64, to: u64) {
        #[cfg(target_os = "linux")]
        if from < to {
            // SAFETY: the range lies inside the map and behind every write
            // (the writer only appends at `len >= to`, and nothing reads the
            // map). On a shared file mapping MADV_DONTNEED only removes the
            // page-table entries: the pages, and their dirty state, stay in
            // the page cache, and a later access would fault the same bytes
            // back in.
            let _ = unsafe {
                self.map.unchecked_advise_range(
                    memmap2::UncheckedAdvice::DontNeed,
                    from as usize,
                    (to - from) as usize,
                )
            };
        }
        #[cfg(not(target_os = "linux"))]
        let _ = (from, to);
    }

    /// Appends one big record with `pwrite(2)` into the same page cache the
    /// map shows: for a few KiB the system call is cheaper than taking a
    /// write fault on every fresh page of the map.
    fn append_by_write(
        &mut self,
        crc: [u8; 4],
        len_bytes: [u8; 4],
        payload: &[u8],
        need: u64,
    ) -> Result<()> {
        use std::os::unix::fs::FileExt;
        self.scratch.clear();
        self.scratch.extend_from_slice(&crc);
        self.scratch.extend_from_slice(&len_bytes);
        self.scratch.extend_from_slice(payload);
        let r = self
            .file
            .write_all_at(&self.scratch, self.len)
            .map_err(|e| Error::io(&self.path, e));
        if self.scratch.capacity() > 4 << 20 {
            self.scratch = Vec::new();
        }
        self.poisoning(r)?;
        self.len = need;
        self.start_writeback_if_due();
        Ok(())
    }

    fn grow(&mut self, need: u64) -> Result<()> {
        let target = round_up(need.max(self.reserved + GROW_STEP));
        reserve(
            &self.file,
            &self.path,
            self.reserved,
            target - self.reserved,
        )?;
        if target > self.map_len {
            self.map_len = round_up(target.saturating_mul(2));
            self.map = map(&self.file, &self.path, self.map_len)?;
        }
        self.reserved = target;
        self.size_dirty = true;
        Ok(())
    }

    /// Nothing to do: appended records are already in the page cache.
    pub fn flush(&mut self) -> Result<()> {
        self.check_poisoned()
    }

    /// Makes every appended record durable (`msync` + `fdatasync`).
    pub fn sync(&mut self) -> Result<()> {
        self.check_poisoned()?;
        if self.synced == self.len && !self.size_dirty {
            return Ok(());
        }
        let from = self.synced as usize;
        let r = self
            .map
            .flush_range(from, self.len as usize - from)
            .and_then(|()| self.file.sync_data())
            .map_err(|e| Error::io(&self.path, e));
        self.poisoning(r)?;
        self.synced = self.len;
        self.size_dirty = false;
        Ok(())
    }

    /// Retires the log: trims the reserved tail and syncs.
    pub fn finish(mut self) -> Result<()> {
        self.sync()?;
        let len = self.len;
        let r = self
            .file
            .set_len(len)
            .and_then(|()| self.file.sync_all())
            .map_err(|e| Error::io(&self.path, e));
        self.poisoning(r)
    }

    /// Bytes written (header and records).
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True if only the header has been written.
    pub fn is_empty(&self) -> bool {
        self.len <= FILE_HEADER_LEN as u64
    }

    /// The log's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The log's number.
    pub fn log_number(&self) -> u64 {
        self.log_number
    }
}

/// Reserves `[offset, offset + len)` of `file` on disk.
fn reserve(file: &File, path: &Path, offset: u64, len: u64) -> Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: `fallocate` only reads its integer arguments; the descriptor
    // is owned by `file` and open for the duration of the call.
    let rc = unsafe { libc::fallocate(file.as_raw_fd(), 0, offset as i64, len as i64) };
    if rc == 0 {
        Ok(())
    } else {
        // Including EOPNOTSUPP: the engine then falls back to the buffered
        // writer rather than risk SIGBUS on a sparse mapping.
        Err(Error::io(path, std::io::Error::last_os_error()))
    }
}

fn map(file: &File, path: &Path, len: u64) -> Result<MmapMut> {
    // SAFETY: the file is created and owned by this writer; nothing else
    // truncates it while the writer lives (the engine deletes logs only
    // after retiring them). The mapping may extend past the end of the file,
    // but the writer only touches bytes below `reserved`, which `fallocate`
    // has allocated, so no access can fault past the end (SIGBUS).
    unsafe { MmapOptions::new().len(len as usize).map_mut(file) }.map_err(|e| Error::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wal::{RecoveryMode, WalReader};

    fn read_all(path: &Path) -> (Vec<Vec<u8>>, bool) {
        let mut r = WalReader::open(path, Some(7), RecoveryMode::Strict).unwrap();
        let mut out = Vec::new();
        while let Some((_, p)) = r.next_record().unwrap() {
            out.push(p.to_vec());
        }
        (out, r.tail_dropped().is_some())
    }

    #[test]
    fn pages_dropped_behind_the_writer_keep_their_records() {
        // Small records go through the map; every WRITEBACK_STEP the pages
        // behind the writer are unmapped and handed to writeback, unsynced.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("000007.wal");
        let mut w = MappedWal::create(&path, 7, 1 << 20).unwrap();
        let records: Vec<Vec<u8>> = (0..40_000u32)
            .map(|i| i.to_le_bytes().repeat(1 + i as usize % 30))
            .collect();
        for r in &records {
            w.append(r).unwrap();
        }
        assert!(w.writeback_started > 8 * WRITEBACK_STEP);
        let (got, _) = read_all(&path);
        assert_eq!(got, records);
        drop(w);
        assert_eq!(read_all(&path).0, records);
    }

    #[test]
    fn records_round_trip_through_growth_and_finish() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("000007.wal");
        let mut w = MappedWal::create(&path, 7, 1000).unwrap();
        let records: Vec<Vec<u8>> = (0..3000u32)
            .map(|i| vec![(i % 251) as u8; (i as usize * 37) % 9000])
            .collect();
        for (i, r) in records.iter().enumerate() {
            w.append(r).unwrap();
            if i % 1000 == 0 {
                w.sync().unwrap();
            }
        }
        // Readable while still reserved (zero tail), as after a crash.
        let (got, _) = read_all(&path);
        assert_eq!(got, records);
        w.finish().unwrap();
        let (got, torn) = read_all(&path);
        assert_eq!(got, records);
        assert!(!torn, "a finished log has no tail to drop");
    }

    #[test]
    fn dropped_writer_leaves_a_readable_log() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("000007.wal");
        {
            let mut w = MappedWal::create(&path, 7, 0).unwrap();
            w.append(b"one").unwrap();
            w.append(b"").unwrap();
            w.append(b"three").unwrap();
        }
        let (got, _) = read_all(&path);
        assert_eq!(got, vec![b"one".to_vec(), vec![], b"three".to_vec()]);
    }

    #[test]
    fn create_refuses_an_existing_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("000007.wal");
        std::fs::write(&path, b"x").unwrap();
        assert!(MappedWal::create(&path, 7, 0).is_err());
        assert_eq!(std::fs::read(&path).unwrap(), b"x");
    }
}
