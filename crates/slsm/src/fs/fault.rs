//! [`FaultFs`]: an in-memory file system for tests that simulates power loss
//! and injects I/O errors.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use super::{FileBytes, FileSystem, FsFile, FsLock};

/// The kinds of operation [`FaultFs`] can fail.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FaultOp {
    /// A `write` on an open file (a failed write may still have written a
    /// prefix of its bytes, like a short write followed by an error).
    Write,
    /// `sync_data` / `sync_all` on a file, or a directory sync.
    Sync,
    /// Reading or mapping a file, or listing a directory.
    Read,
    /// A rename.
    Rename,
    /// Creating a file.
    Create,
    /// Removing a file.
    Remove,
}

const FAULT_OPS: usize = 6;

impl FaultOp {
    fn index(self) -> usize {
        self as usize
    }
    fn mutates(self) -> bool {
        !matches!(self, FaultOp::Read)
    }
}

#[derive(Debug)]
struct Inode {
    data: Vec<u8>,
    /// Bytes known to be durable.
    synced: usize,
}

type Node = Arc<Mutex<Inode>>;

#[derive(Debug, Default)]
struct FaultState {
    /// The namespace as the running program sees it.
    live: BTreeMap<PathBuf, Node>,
    /// The namespace as it would be after a power loss: each directory's
    /// entries as of its last sync.
    durable: BTreeMap<PathBuf, Node>,
    dirs: BTreeSet<PathBuf>,
    locks: BTreeSet<PathBuf>,
    calls: [u64; FAULT_OPS],
    /// Fail the call of this kind whose number (counted from 1 since the
    /// rule was set) is the given one.
    nth: Vec<(FaultOp, u64)>,
    /// Fail calls of this kind with this probability (parts per million).
    probability: [u32; FAULT_OPS],
    /// After this many more mutating calls, every call fails: the power is
    /// off. `Some(0)` means dead.
    power_left: Option<u64>,
    rng: u64,
    injected: u64,
}

impl FaultState {
    fn rand(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Counts a call of kind `op` and decides whether it fails.
    fn check(&mut self, op: FaultOp, path: &Path) -> io::Result<()> {
        if self.power_left == Some(0) {
            return Err(io::Error::other(format!(
                "faultfs: power is off ({op:?} on {})",
                path.display()
            )));
        }
        if op.mutates() {
            if let Some(left) = self.power_left.as_mut() {
                *left -= 1;
            }
        }
        let i = op.index();
        self.calls[i] += 1;
        let calls = self.calls[i];
        let mut fail = false;
        self.nth.retain(|&(k, n)| {
            let hit = k == op && n == calls;
            fail |= hit;
            !hit
        });
        let p = self.probability[i];
        if !fail && p > 0 && (self.rand() % 1_000_000) < u64::from(p) {
            fail = true;
        }
        if fail {
            self.injected += 1;
            return Err(io::Error::other(format!(
                "faultfs: injected {op:?} error on {}",
                path.display()
            )));
        }
        Ok(())
    }

    fn node(&self, path: &Path) -> io::Result<Node> {
        self.live.get(path).cloned().ok_or_else(|| not_found(path))
    }
}

fn not_found(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("faultfs: {} does not exist", path.display()),
    )
}

/// An in-memory file system for tests that simulates power loss and injects
/// I/O errors. Not part of the stable API.
///
/// * Durability is tracked like a POSIX file system that keeps nothing it
///   was not told to: a file's bytes are durable up to its last
///   `sync_data`/`sync_all`; a directory entry (created, renamed, removed)
///   is durable once its directory was synced. [`crash`](Self::crash)
///   rewinds everything else, tearing each file's unsynced tail at a random
///   point.
/// * [`power_off_after`](Self::power_off_after) makes every operation fail
///   after a given number of mutating calls: the moment of the power cut.
/// * [`fail_nth`](Self::fail_nth) and [`fail_with_probability`](Self::fail_with_probability)
///   inject I/O errors into writes, syncs, reads, renames, creates and
///   removes.
#[doc(hidden)]
#[derive(Clone, Debug, Default)]
pub struct FaultFs {
    state: Arc<Mutex<FaultState>>,
}

impl FaultFs {
    /// A new, empty file system whose random choices derive from `seed`.
    pub fn new(seed: u64) -> FaultFs {
        let fs = FaultFs::default();
        fs.state.lock().rng = seed;
        fs
    }

    /// The same file system as an `Arc<dyn FileSystem>` for [`Options`](crate::Options).
    pub fn as_dyn(&self) -> Arc<dyn FileSystem> {
        Arc::new(self.clone())
    }

    /// Fails the `n`-th call (counted from 1, from now on) of kind `op`.
    pub fn fail_nth(&self, op: FaultOp, n: u64) {
        let mut s = self.state.lock();
        let base = s.calls[op.index()];
        s.nth.push((op, base + n.max(1)));
    }

    /// Fails each call of kind `op` with probability `ppm` / 1,000,000.
    pub fn fail_with_probability(&self, op: FaultOp, ppm: u32) {
        self.state.lock().probability[op.index()] = ppm;
    }

    /// Removes every fault rule (not the power cut).
    pub fn clear_faults(&self) {
        let mut s = self.state.lock();
        s.nth.clear();
        s.probability = [0; FAULT_OPS];
    }

    /// Errors injected so far.
    pub fn injected(&self) -> u64 {
        self.state.lock().injected
    }

    /// Calls of each kind so far.
    pub fn calls(&self, op: FaultOp) -> u64 {
        self.state.lock().calls[op.index()]
    }

    /// After `ops` more mutating calls (writes, syncs, renames, creates,
    /// removes), every call fails as if the power were off.
    pub fn power_off_after(&self, ops: u64) {
        self.state.lock().power_left = Some(ops);
    }

    /// Cuts the power now.
    pub fn power_off(&self) {
        self.power_off_after(0);
    }

    /// True once the power is off.
    pub fn is_powered_off(&self) -> bool {
        self.state.lock().power_left == Some(0)
    }

    /// Simulates the machine coming back after a power loss: the namespace
    /// becomes what was durable (entries created, renamed or removed since
    /// their directory's last sync are undone), every file loses its
    /// unsynced bytes except, half of the time, a random prefix of them (a
    /// torn last write), locks are released and the power is back on. Call
    /// it after dropping every `Db` that used this file system.
    pub fn crash(&self) {
        let mut s = self.state.lock();
        let durable: Vec<(PathBuf, Node)> = s
            .durable
            .iter()
            .map(|(p, n)| (p.clone(), n.clone()))
            .collect();
        let mut seen: Vec<*const Mutex<Inode>> = Vec::new();
        for (_, node) in &durable {
            let ptr = Arc::as_ptr(node);
            if seen.contains(&ptr) {
                continue;
            }
            seen.push(ptr);
            let mut inode = node.lock();
            let unsynced = inode.data.len().saturating_sub(inode.synced);
            let keep = if unsynced > 0 && s.rand().is_multiple_of(2) {
                (s.rand() % (unsynced as u64 + 1)) as usize
            } else {
                0
            };
            let len = (inode.synced + keep).min(inode.data.len());
            inode.data.truncate(len);
            inode.synced = len;
        }
        s.live = durable.into_iter().collect();
        s.locks.clear();
        s.power_left = None;
    }

    /// Names and sizes of the live files (for debugging).
    pub fn list(&self) -> Vec<(PathBuf, usize, usize)> {
        let s = self.state.lock();
        s.live
            .iter()
            .map(|(p, n)| {
                let i = n.lock();
                (p.clone(), i.data.len(), i.synced)
            })
            .collect()
    }

    /// Direct access to a file's bytes, bypassing faults (for corruption
    /// tests): applies `f` to the live contents of `path`.
    pub fn edit(&self, path: &Path, f: impl FnOnce(&mut Vec<u8>)) -> io::Result<()> {
        let node = self.state.lock().node(path)?;
        let mut inode = node.lock();
        f(&mut inode.data);
        inode.synced = inode.synced.min(inode.data.len());
        Ok(())
    }

    fn create(&self, path: &Path, must_be_new: bool) -> io::Result<Box<dyn FsFile>> {
        let mut s = self.state.lock();
        s.check(FaultOp::Create, path)?;
        let parent = path.parent().unwrap_or(Path::new(""));
        if !s.dirs.contains(parent) {
            return Err(not_found(parent));
        }
        let node = match s.live.get(path) {
            Some(_) if must_be_new => {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    format!("faultfs: {} exists", path.display()),
                ))
            }
            Some(node) => {
                let mut inode = node.lock();
                inode.data.clear();
                inode.synced = 0; // a truncation is as good as durable
                drop(inode);
                node.clone()
            }
            None => {
                let node = Arc::new(Mutex::new(Inode {
                    data: Vec::new(),
                    synced: 0,
                }));
                s.live.insert(path.to_path_buf(), node.clone());
                node
            }
        };
        Ok(Box::new(FaultFile {
            fs: self.clone(),
            node,
            path: path.to_path_buf(),
        }))
    }
}

struct FaultFile {
    fs: FaultFs,
    node: Node,
    path: PathBuf,
}

impl Debug for FaultFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FaultFile({})", self.path.display())
    }
}

impl Write for FaultFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut s = self.fs.state.lock();
        if let Err(e) = s.check(FaultOp::Write, &self.path) {
            // A failed write may have written part of its bytes.
            if s.power_left != Some(0) && !buf.is_empty() {
                let part = (s.rand() % buf.len() as u64) as usize;
                self.node.lock().data.extend_from_slice(&buf[..part]);
            }
            return Err(e);
        }
        self.node.lock().data.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl FsFile for FaultFile {
    fn sync_data(&mut self) -> io::Result<()> {
        self.fs.state.lock().check(FaultOp::Sync, &self.path)?;
        let mut inode = self.node.lock();
        inode.synced = inode.data.len();
        Ok(())
    }
    fn sync_all(&mut self) -> io::Result<()> {
        self.sync_data()
    }
}

struct FaultLock {
    fs: FaultFs,
    path: PathBuf,
}

impl Drop for FaultLock {
    fn drop(&mut self) {
        self.fs.state.lock().locks.remove(&self.path);
    }
}

impl FileSystem for FaultFs {
    fn create_new(&self, path: &Path) -> io::Result<Box<dyn FsFile>> {
        self.create(path, true)
    }
    fn create_truncate(&self, path: &Path) -> io::Result<Box<dyn FsFile>> {
        self.create(path, false)
    }
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        let mut s = self.state.lock();
        s.check(FaultOp::Read, path)?;
        let node = s.node(path)?;
        let data = node.lock().data.clone();
        Ok(data)
    }
    fn map(&self, path: &Path) -> io::Result<FileBytes> {
        self.read(path).map(FileBytes::Owned)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut s = self.state.lock();
        s.check(FaultOp::Rename, from)?;
        let node = s.live.remove(from).ok_or_else(|| not_found(from))?;
        s.live.insert(to.to_path_buf(), node);
        Ok(())
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        let mut s = self.state.lock();
        s.check(FaultOp::Remove, path)?;
        s.live
            .remove(path)
            .map(|_| ())
            .ok_or_else(|| not_found(path))
    }
    fn read_dir(&self, dir: &Path) -> io::Result<Vec<String>> {
        let mut s = self.state.lock();
        s.check(FaultOp::Read, dir)?;
        if !s.dirs.contains(dir) {
            return Err(not_found(dir));
        }
        Ok(s.live
            .keys()
            .filter(|p| p.parent() == Some(dir))
            .filter_map(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .collect())
    }
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        let mut s = self.state.lock();
        s.check(FaultOp::Create, dir)?;
        // Directories themselves are kept durable (simplification).
        for a in dir.ancestors() {
            s.dirs.insert(a.to_path_buf());
        }
        Ok(())
    }
    fn is_dir(&self, path: &Path) -> io::Result<bool> {
        let s = self.state.lock();
        if s.dirs.contains(path) {
            Ok(true)
        } else if s.live.contains_key(path) {
            Ok(false)
        } else {
            Err(not_found(path))
        }
    }
    fn exists(&self, path: &Path) -> bool {
        let s = self.state.lock();
        s.dirs.contains(path) || s.live.contains_key(path)
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        let mut s = self.state.lock();
        s.check(FaultOp::Sync, dir)?;
        if !s.dirs.contains(dir) {
            return Err(not_found(dir));
        }
        s.durable.retain(|p, _| p.parent() != Some(dir));
        let entries: Vec<(PathBuf, Node)> = s
            .live
            .iter()
            .filter(|(p, _)| p.parent() == Some(dir))
            .map(|(p, n)| (p.clone(), n.clone()))
            .collect();
        s.durable.extend(entries);
        Ok(())
    }
    fn lock(&self, path: &Path) -> io::Result<Option<FsLock>> {
        let mut s = self.state.lock();
        if s.power_left == Some(0) {
            return Err(io::Error::other("faultfs: power is off"));
        }
        if !s.locks.insert(path.to_path_buf()) {
            return Ok(None);
        }
        Ok(Some(FsLock(Box::new(FaultLock {
            fs: self.clone(),
            path: path.to_path_buf(),
        }))))
    }
}
