//! [`FaultFs`]: a wrapper over any [`FileSystem`] that injects I/O errors
//! and cuts the power, for tests (Pebble's `errorfs` plays this part there).

use std::fmt::Debug;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

mod file;
mod rules;

use file::FaultFile;
pub use rules::FaultOp;
use rules::{Faults, FAULT_OPS};

use super::file_system::{FileSystem, FsFile, FsLock, LogFile, RandomAccessFile};
use super::mem::MemFs;

/// A file system for tests: every operation is passed to the wrapped one
/// (by default a fresh [`MemFs`]) unless a fault rule fails it first.
///
/// * [`fail_nth`](Self::fail_nth) and [`fail_with_probability`](Self::fail_with_probability)
///   inject I/O errors into writes, syncs, reads, renames, creates and
///   removes; a failed write may first write a random prefix of its bytes.
/// * [`power_off_after`](Self::power_off_after) makes every operation fail
///   after a number of mutating calls: the moment of a power cut.
/// * [`crash`](Self::crash), over a [`MemFs`], then rewinds it to what was
///   durable, tearing unsynced writes half of the time, and turns the power
///   back on.
///
/// Not part of the stable API.
#[doc(hidden)]
#[derive(Clone, Debug)]
pub struct FaultFs {
    inner: Arc<dyn FileSystem>,
    mem: Option<MemFs>,
    faults: Arc<Mutex<Faults>>,
}

impl Default for FaultFs {
    fn default() -> Self {
        FaultFs::new(0)
    }
}

impl FaultFs {
    /// Faults over a new, empty [`MemFs`]; random choices derive from `seed`.
    pub fn new(seed: u64) -> FaultFs {
        let mem = MemFs::new();
        let mut fs = FaultFs::wrap(Arc::new(mem.clone()), seed);
        fs.mem = Some(mem);
        fs
    }

    /// Faults over `inner` (the operating system's file system, say).
    pub fn wrap(inner: Arc<dyn FileSystem>, seed: u64) -> FaultFs {
        FaultFs {
            inner,
            mem: None,
            faults: Arc::new(Mutex::new(Faults {
                rng: seed,
                ..Faults::default()
            })),
        }
    }

    /// The same file system as an `Arc<dyn FileSystem>` for [`Options`](crate::options::Options).
    pub fn as_dyn(&self) -> Arc<dyn FileSystem> {
        Arc::new(self.clone())
    }

    /// The wrapped [`MemFs`], if this wraps one.
    pub fn mem(&self) -> Option<&MemFs> {
        self.mem.as_ref()
    }

    /// Fails the `n`-th call (counted from 1, from now on) of kind `op`.
    pub fn fail_nth(&self, op: FaultOp, n: u64) {
        let mut f = self.faults.lock();
        let base = f.calls[op.index()];
        f.nth.push((op, base + n.max(1)));
    }

    /// Fails each call of kind `op` with probability `ppm` / 1,000,000.
    pub fn fail_with_probability(&self, op: FaultOp, ppm: u32) {
        self.faults.lock().probability[op.index()] = ppm;
    }

    /// Removes every fault rule (not the power cut).
    pub fn clear_faults(&self) {
        let mut f = self.faults.lock();
        f.nth.clear();
        f.probability = [0; FAULT_OPS];
    }

    /// Makes the disk full (every write, reservation and create fails with
    /// `ENOSPC`) or gives space back.
    pub fn set_full(&self, full: bool) {
        self.faults.lock().full = full;
    }

    /// What injected errors are: `ENOSPC` (`Some(true)`), `EIO`
    /// (`Some(false)`), or, by default, either at random (`None`).
    pub fn inject_no_space(&self, choice: Option<bool>) {
        self.faults.lock().no_space = choice;
    }

    /// Makes the file system read-only (every change fails with `EROFS`,
    /// as on a read-only mount) or writable again.
    pub fn set_read_only(&self, read_only: bool) {
        self.faults.lock().read_only = read_only;
    }

    /// Errors injected so far.
    pub fn injected(&self) -> u64 {
        self.faults.lock().injected
    }

    /// Calls of each kind so far.
    pub fn calls(&self, op: FaultOp) -> u64 {
        self.faults.lock().calls[op.index()]
    }

    /// Ranges the engine asked to drop from the page cache so far
    /// ([`Advice::DontNeed`](crate::fs::Advice::DontNeed)).
    pub fn dropped_ranges(&self) -> u64 {
        self.faults.lock().dropped_ranges
    }

    /// After `ops` more mutating calls (writes, syncs, renames, creates,
    /// removes), every call fails as if the power were off.
    pub fn power_off_after(&self, ops: u64) {
        self.faults.lock().power_left = Some(ops);
    }

    /// Cuts the power now.
    pub fn power_off(&self) {
        self.power_off_after(0);
    }

    /// True once the power is off.
    pub fn is_powered_off(&self) -> bool {
        self.faults.lock().powered_off()
    }

    /// The machine comes back after a power loss (see [`MemFs::crash`]):
    /// unsynced data is gone but, half of the time per file, a random
    /// prefix of it (a torn write); the power is back on. Only a wrapped
    /// [`MemFs`] can lose anything; over another file system this only turns
    /// the power back on. Call it after dropping every `Db` that used it.
    pub fn crash(&self) {
        let mut f = self.faults.lock();
        if let Some(mem) = &self.mem {
            mem.crash(|unsynced| {
                f.rand()
                    .is_multiple_of(2)
                    .then(|| (f.rand() % (unsynced as u64 + 1)) as usize)
            });
        }
        f.power_left = None;
    }

    /// Names, sizes and durable sizes of the live files of the wrapped
    /// [`MemFs`] (for debugging).
    pub fn list(&self) -> Vec<(PathBuf, usize, usize)> {
        self.mem.as_ref().map(MemFs::list).unwrap_or_default()
    }

    /// Applies `f` to the contents of `path` in the wrapped [`MemFs`],
    /// bypassing faults (for corruption tests).
    pub fn edit(&self, path: &Path, f: impl FnOnce(&mut Vec<u8>)) -> io::Result<()> {
        match &self.mem {
            Some(mem) => mem.edit(path, f),
            None => Err(io::Error::other("faultfs: edit needs a wrapped MemFs")),
        }
    }

    fn check(&self, op: FaultOp, path: &Path) -> io::Result<()> {
        self.faults.lock().check(op, path)
    }

    /// `inner`, the file at `path`, with this file system's faults.
    fn faulty<F: ?Sized>(&self, path: &Path, inner: Box<F>) -> FaultFile<F> {
        FaultFile {
            faults: Arc::clone(&self.faults),
            path: path.to_path_buf(),
            inner,
        }
    }
}

impl FileSystem for FaultFs {
    fn create_new(&self, path: &Path) -> io::Result<Box<dyn FsFile>> {
        self.check(FaultOp::Create, path)?;
        Ok(Box::new(self.faulty(path, self.inner.create_new(path)?)))
    }
    fn create_truncate(&self, path: &Path) -> io::Result<Box<dyn FsFile>> {
        self.check(FaultOp::Create, path)?;
        Ok(Box::new(
            self.faulty(path, self.inner.create_truncate(path)?),
        ))
    }
    fn create_log(&self, path: &Path) -> io::Result<Box<dyn LogFile>> {
        self.check(FaultOp::Create, path)?;
        Ok(Box::new(self.faulty(path, self.inner.create_log(path)?)))
    }
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.check(FaultOp::Read, path)?;
        self.inner.read(path)
    }
    fn open_random(&self, path: &Path) -> io::Result<Box<dyn RandomAccessFile>> {
        self.check(FaultOp::Read, path)?;
        Ok(Box::new(self.faulty(path, self.inner.open_random(path)?)))
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.check(FaultOp::Rename, from)?;
        self.inner.rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.check(FaultOp::Remove, path)?;
        self.inner.remove_file(path)
    }
    fn read_dir(&self, dir: &Path) -> io::Result<Vec<String>> {
        self.check(FaultOp::Read, dir)?;
        self.inner.read_dir(dir)
    }
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        self.check(FaultOp::Create, dir)?;
        self.inner.create_dir_all(dir)
    }
    fn is_dir(&self, path: &Path) -> io::Result<bool> {
        self.inner.is_dir(path)
    }
    fn exists(&self, path: &Path) -> bool {
        self.inner.exists(path)
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        self.check(FaultOp::Sync, dir)?;
        self.inner.sync_dir(dir)
    }
    fn lock(&self, path: &Path) -> io::Result<Option<FsLock>> {
        let f = self.faults.lock();
        if f.powered_off() {
            return Err(io::Error::other("faultfs: power is off"));
        }
        if f.read_only && !self.inner.exists(path) {
            return Err(io::Error::from_raw_os_error(libc::EROFS));
        }
        drop(f);
        self.inner.lock(path)
    }
}
