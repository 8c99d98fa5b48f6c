//! [`MemFs`]: a file system in memory, for databases that never touch the
//! disk, and for tests that cut the power.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use super::file_system::{FileSystem, FsFile, FsLock, LogFile, LogSync, RandomAccessFile};

/// A file's bytes and how many of them are durable. The bytes are shared
/// with mappings: an append copies them only while a reader still maps an
/// older version (run files are mapped once complete, so in practice never).
#[derive(Debug, Default)]
struct Inode {
    data: Arc<Vec<u8>>,
    /// Bytes known to be durable (synced).
    synced: usize,
}

type Node = Arc<Mutex<Inode>>;

#[derive(Debug, Default)]
struct MemState {
    /// The namespace as the running program sees it.
    live: BTreeMap<PathBuf, Node>,
    /// The namespace as it would be after a power loss: each directory's
    /// entries as of its last sync.
    durable: BTreeMap<PathBuf, Node>,
    dirs: BTreeSet<PathBuf>,
    locks: BTreeSet<PathBuf>,
}

impl MemState {
    fn node(&self, path: &Path) -> io::Result<Node> {
        self.live.get(path).cloned().ok_or_else(|| not_found(path))
    }
}

/// A file system held in memory: what [`Options::in_memory`](crate::options::Options::in_memory)
/// opens a database on, and what crash tests run on.
///
/// * Contents live as long as any clone of this `MemFs` (or of the
///   [`Options`](crate::options::Options) holding it): reopening a database on the
///   same `MemFs` finds what the previous `Db` left; the last clone dropped
///   frees everything.
/// * Every operation takes effect at once. Durability is tracked like a
///   POSIX file system that keeps nothing it was not told to: a file's
///   bytes are durable up to its last sync, a directory entry (created,
///   renamed, removed) once its directory was synced. [`crash`](Self::crash)
///   rewinds everything else, as a power loss would.
/// * Mapping a file shares its bytes (no copy).
/// * `Send + Sync`; operations are serialised by one lock per file system
///   (namespace) and one per file (contents).
#[derive(Clone, Debug, Default)]
pub struct MemFs {
    state: Arc<Mutex<MemState>>,
}

impl MemFs {
    /// A new, empty file system.
    pub fn new() -> MemFs {
        MemFs::default()
    }

    /// Total bytes of all files.
    pub fn used_bytes(&self) -> u64 {
        let s = self.state.lock();
        s.live.values().map(|f| f.lock().data.len() as u64).sum()
    }

    /// Simulates the machine coming back after a power loss: the namespace
    /// becomes what was durable (entries created, renamed or removed since
    /// their directory's last sync are undone), every file loses its
    /// unsynced bytes except, when `torn` returns `Some(n)` for a file with
    /// `unsynced` bytes, the first `n` of them (a torn last write), and
    /// locks are released. Call it after dropping every `Db` that used it.
    pub fn crash(&self, mut torn: impl FnMut(usize) -> Option<usize>) {
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
            let keep = if unsynced > 0 {
                torn(unsynced).unwrap_or(0)
            } else {
                0
            };
            let len = (inode.synced + keep.min(unsynced)).min(inode.data.len());
            Arc::make_mut(&mut inode.data).truncate(len);
            inode.synced = len;
        }
        s.live = durable.into_iter().collect();
        s.locks.clear();
    }

    /// Names, sizes and durable sizes of the live files (for debugging).
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

    /// Applies `f` to the live contents of `path` (for corruption tests).
    pub fn edit(&self, path: &Path, f: impl FnOnce(&mut Vec<u8>)) -> io::Result<()> {
        let node = self.state.lock().node(path)?;
        let mut inode = node.lock();
        f(Arc::make_mut(&mut inode.data));
        inode.synced = inode.synced.min(inode.data.len());
        Ok(())
    }

    fn create(&self, path: &Path, must_be_new: bool) -> io::Result<Node> {
        let mut s = self.state.lock();
        let parent = path.parent().unwrap_or(Path::new(""));
        if !s.dirs.contains(parent) {
            return Err(not_found(parent));
        }
        match s.live.get(path) {
            Some(_) if must_be_new => Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("memfs: {} exists", path.display()),
            )),
            Some(node) => {
                let mut inode = node.lock();
                inode.data = Arc::default();
                inode.synced = 0; // a truncation is as good as durable
                drop(inode);
                Ok(node.clone())
            }
            None => {
                let node: Node = Arc::default();
                s.live.insert(path.to_path_buf(), node.clone());
                Ok(node)
            }
        }
    }
}

fn not_found(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("memfs: {} does not exist", path.display()),
    )
}

/// A file open for appending.
#[derive(Debug)]
struct MemFile {
    node: Node,
}

impl Write for MemFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        Arc::make_mut(&mut self.node.lock().data).extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl FsFile for MemFile {
    fn sync_data(&mut self) -> io::Result<()> {
        let mut inode = self.node.lock();
        inode.synced = inode.data.len();
        Ok(())
    }
    fn sync_all(&mut self) -> io::Result<()> {
        self.sync_data()
    }
}

/// A log file: reserved space is zeros, writes land at their offsets.
#[derive(Debug)]
struct MemLog {
    node: Node,
}

impl LogFile for MemLog {
    fn reserve(&mut self, len: u64) -> io::Result<()> {
        let mut inode = self.node.lock();
        let data = Arc::make_mut(&mut inode.data);
        if (data.len() as u64) < len {
            data.resize(len as usize, 0);
        }
        Ok(())
    }
    fn write_at(&mut self, offset: u64, bytes: &[u8]) -> io::Result<()> {
        let mut inode = self.node.lock();
        let data = Arc::make_mut(&mut inode.data);
        let (start, end) = (offset as usize, offset as usize + bytes.len());
        if data.len() < end {
            data.resize(end, 0);
        }
        data[start..end].copy_from_slice(bytes);
        Ok(())
    }
    fn start_writeback(&mut self, _upto: u64) {}
    fn sync(&mut self, upto: u64) -> io::Result<()> {
        let mut inode = self.node.lock();
        inode.synced = inode.synced.max((upto as usize).min(inode.data.len()));
        Ok(())
    }
    fn truncate(&mut self, len: u64) -> io::Result<()> {
        let mut inode = self.node.lock();
        Arc::make_mut(&mut inode.data).truncate(len as usize);
        inode.synced = inode.data.len();
        Ok(())
    }
    fn detached_sync(&self) -> Option<Arc<dyn LogSync>> {
        Some(Arc::new(MemLogSync(Arc::clone(&self.node))))
    }
}

/// [`MemLog`]'s syncs from another thread: the same bookkeeping.
#[derive(Debug)]
struct MemLogSync(Node);

impl LogSync for MemLogSync {
    fn sync(&self, upto: u64) -> io::Result<()> {
        let mut inode = self.0.lock();
        inode.synced = inode.synced.max((upto as usize).min(inode.data.len()));
        Ok(())
    }
}

/// A file open for reads: the bytes it had when opened (run files do not
/// change once written).
#[derive(Debug)]
struct MemRandomFile {
    data: Arc<Vec<u8>>,
}

impl RandomAccessFile for MemRandomFile {
    fn len(&self) -> u64 {
        self.data.len() as u64
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let start = usize::try_from(offset).map_err(|_| eof())?;
        let bytes = start
            .checked_add(buf.len())
            .and_then(|end| self.data.get(start..end))
            .ok_or_else(eof)?;
        buf.copy_from_slice(bytes);
        Ok(())
    }
    fn in_memory(&self) -> Option<Arc<Vec<u8>>> {
        Some(Arc::clone(&self.data))
    }
}

fn eof() -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        "memfs: read past the end of the file",
    )
}

struct MemLock {
    fs: MemFs,
    path: PathBuf,
}

impl Drop for MemLock {
    fn drop(&mut self) {
        self.fs.state.lock().locks.remove(&self.path);
    }
}

impl FileSystem for MemFs {
    fn create_new(&self, path: &Path) -> io::Result<Box<dyn FsFile>> {
        Ok(Box::new(MemFile {
            node: self.create(path, true)?,
        }))
    }
    fn create_truncate(&self, path: &Path) -> io::Result<Box<dyn FsFile>> {
        Ok(Box::new(MemFile {
            node: self.create(path, false)?,
        }))
    }
    fn create_log(&self, path: &Path) -> io::Result<Box<dyn LogFile>> {
        Ok(Box::new(MemLog {
            node: self.create(path, true)?,
        }))
    }
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        let node = self.state.lock().node(path)?;
        let data = node.lock().data.as_ref().clone();
        Ok(data)
    }
    fn open_random(&self, path: &Path) -> io::Result<Box<dyn RandomAccessFile>> {
        let node = self.state.lock().node(path)?;
        let data = Arc::clone(&node.lock().data);
        Ok(Box::new(MemRandomFile { data }))
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut s = self.state.lock();
        let node = s.live.remove(from).ok_or_else(|| not_found(from))?;
        s.live.insert(to.to_path_buf(), node);
        Ok(())
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        let mut s = self.state.lock();
        s.live
            .remove(path)
            .map(|_| ())
            .ok_or_else(|| not_found(path))
    }
    fn read_dir(&self, dir: &Path) -> io::Result<Vec<String>> {
        let s = self.state.lock();
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
        for a in dir.ancestors() {
            if s.live.contains_key(a) {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    format!("memfs: {} is a file", a.display()),
                ));
            }
        }
        // Directories themselves are durable at once (a simplification:
        // the engine syncs the parent of a directory it creates anyway).
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
        if !s.locks.insert(path.to_path_buf()) {
            return Ok(None);
        }
        Ok(Some(FsLock::new(MemLock {
            fs: self.clone(),
            path: path.to_path_buf(),
        })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_directories_and_locks() {
        let fs = MemFs::new();
        let dir = Path::new("/db");
        let file = dir.join("a");
        assert!(fs.create_new(&file).is_err(), "parent must exist");
        fs.create_dir_all(dir).unwrap();
        let mut f = fs.create_new(&file).unwrap();
        f.write_all(b"hello ").unwrap();
        f.write_all(b"world").unwrap();
        assert_eq!(fs.read(&file).unwrap(), b"hello world");
        assert!(fs.create_new(&file).is_err());
        fs.rename(&file, &dir.join("b")).unwrap();
        assert!(!fs.exists(&file));
        assert_eq!(fs.read_dir(dir).unwrap(), vec!["b".to_string()]);
        assert_eq!(fs.used_bytes(), 11);
        let lock = fs.lock(&dir.join("LOCK")).unwrap();
        assert!(lock.is_some());
        assert!(fs.lock(&dir.join("LOCK")).unwrap().is_none());
        drop(lock);
        assert!(fs.lock(&dir.join("LOCK")).unwrap().is_some());
        fs.remove_file(&dir.join("b")).unwrap();
        assert!(fs.read(&dir.join("b")).is_err());
        fs.create_truncate(&dir.join("c")).unwrap();
        assert!(!fs.is_dir(&dir.join("c")).unwrap());
        assert!(fs.is_dir(dir).unwrap());
    }

    /// A power loss keeps synced bytes and entries of synced directories
    /// only; a torn write keeps a prefix of the unsynced bytes.
    #[test]
    fn crash_keeps_what_was_synced() {
        let fs = MemFs::new();
        let dir = Path::new("/db");
        fs.create_dir_all(dir).unwrap();
        let mut f = fs.create_new(&dir.join("kept")).unwrap();
        f.write_all(b"durable").unwrap();
        f.sync_data().unwrap();
        f.write_all(b" lost").unwrap();
        fs.sync_dir(dir).unwrap();
        let mut log = fs.create_log(&dir.join("log")).unwrap();
        log.reserve(16).unwrap();
        log.write_at(0, b"abcdef").unwrap();
        log.sync(4).unwrap();
        fs.sync_dir(dir).unwrap();
        fs.create_new(&dir.join("unsynced-entry")).unwrap();
        fs.crash(|_| None);
        assert_eq!(fs.read(&dir.join("kept")).unwrap(), b"durable");
        assert_eq!(fs.read(&dir.join("log")).unwrap(), b"abcd");
        assert!(!fs.exists(&dir.join("unsynced-entry")));
        let mut f = fs.create_truncate(&dir.join("kept")).unwrap();
        f.write_all(b"0123456789").unwrap();
        fs.crash(|unsynced| Some(unsynced / 2));
        assert_eq!(fs.read(&dir.join("kept")).unwrap(), b"01234");
    }
}
