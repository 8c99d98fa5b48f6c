//! [`MemFs`]: a file system in memory, for databases that never touch the
//! disk.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use super::{FileBytes, FileSystem, FsFile, FsLock};

/// A file's bytes. Appends copy only while a reader still maps an older
/// version (run files are mapped once complete, so in practice never).
type Inode = Arc<Mutex<Arc<Vec<u8>>>>;

#[derive(Debug, Default)]
struct MemState {
    files: BTreeMap<PathBuf, Inode>,
    dirs: BTreeSet<PathBuf>,
    locks: BTreeSet<PathBuf>,
}

/// A file system held in memory: what [`Options::in_memory`](crate::Options::in_memory)
/// opens a database on.
///
/// * Contents live as long as any clone of this `MemFs` (or of the
///   [`Options`](crate::Options) holding it): reopening a database on the
///   same `MemFs` finds what the previous `Db` left; the last clone dropped
///   frees everything.
/// * Every operation takes effect at once and is "durable" for as long as
///   the process lives: syncs are no-ops, nothing survives the process.
/// * Mapping a file shares its bytes (no copy); files are immutable once
///   mapped by the engine.
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
        s.files.values().map(|f| f.lock().len() as u64).sum()
    }

    fn node(&self, path: &Path) -> io::Result<Inode> {
        self.state
            .lock()
            .files
            .get(path)
            .cloned()
            .ok_or_else(|| not_found(path))
    }

    fn create(&self, path: &Path, must_be_new: bool) -> io::Result<Box<dyn FsFile>> {
        let mut s = self.state.lock();
        let parent = path.parent().unwrap_or(Path::new(""));
        if !s.dirs.contains(parent) {
            return Err(not_found(parent));
        }
        if must_be_new && s.files.contains_key(path) {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("memfs: {} exists", path.display()),
            ));
        }
        let node: Inode = Arc::default();
        s.files.insert(path.to_path_buf(), node.clone());
        Ok(Box::new(MemFile { node }))
    }
}

fn not_found(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("memfs: {} does not exist", path.display()),
    )
}

struct MemFile {
    node: Inode,
}

impl Debug for MemFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MemFile")
    }
}

impl Write for MemFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        Arc::make_mut(&mut self.node.lock()).extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl FsFile for MemFile {
    fn sync_data(&mut self) -> io::Result<()> {
        Ok(())
    }
    fn sync_all(&mut self) -> io::Result<()> {
        Ok(())
    }
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
        self.create(path, true)
    }
    fn create_truncate(&self, path: &Path) -> io::Result<Box<dyn FsFile>> {
        self.create(path, false)
    }
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        let node = self.node(path)?;
        let data = node.lock().as_ref().clone();
        Ok(data)
    }
    fn map(&self, path: &Path) -> io::Result<FileBytes> {
        let node = self.node(path)?;
        let data = node.lock().clone();
        Ok(FileBytes::Shared(data))
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut s = self.state.lock();
        let node = s.files.remove(from).ok_or_else(|| not_found(from))?;
        s.files.insert(to.to_path_buf(), node);
        Ok(())
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        let mut s = self.state.lock();
        s.files
            .remove(path)
            .map(|_| ())
            .ok_or_else(|| not_found(path))
    }
    fn read_dir(&self, dir: &Path) -> io::Result<Vec<String>> {
        let s = self.state.lock();
        if !s.dirs.contains(dir) {
            return Err(not_found(dir));
        }
        Ok(s.files
            .keys()
            .filter(|p| p.parent() == Some(dir))
            .filter_map(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .collect())
    }
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        let mut s = self.state.lock();
        for a in dir.ancestors() {
            if s.files.contains_key(a) {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    format!("memfs: {} is a file", a.display()),
                ));
            }
            s.dirs.insert(a.to_path_buf());
        }
        Ok(())
    }
    fn is_dir(&self, path: &Path) -> io::Result<bool> {
        let s = self.state.lock();
        if s.dirs.contains(path) {
            Ok(true)
        } else if s.files.contains_key(path) {
            Ok(false)
        } else {
            Err(not_found(path))
        }
    }
    fn exists(&self, path: &Path) -> bool {
        let s = self.state.lock();
        s.dirs.contains(path) || s.files.contains_key(path)
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        if self.state.lock().dirs.contains(dir) {
            Ok(())
        } else {
            Err(not_found(dir))
        }
    }
    fn lock(&self, path: &Path) -> io::Result<Option<FsLock>> {
        let mut s = self.state.lock();
        if !s.locks.insert(path.to_path_buf()) {
            return Ok(None);
        }
        Ok(Some(FsLock(Box::new(MemLock {
            fs: self.clone(),
            path: path.to_path_buf(),
        }))))
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
        let mapped = fs.map(&file).unwrap();
        f.write_all(b"world").unwrap();
        assert_eq!(&mapped[..], b"hello ", "a map is a snapshot");
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
}
