//! The files of a [`FaultFs`](super::FaultFs): each operation asks the
//! fault plan first, then goes to the wrapped file.

use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::Mutex;

use super::rules::{FaultOp, Faults};
use crate::fs::file_system::{Advice, FsFile, LogFile, LogSync, RandomAccessFile};

/// A file of a [`FaultFs`]: faults first, then the wrapped file.
#[derive(Debug)]
pub(super) struct FaultFile<F: ?Sized> {
    pub faults: Arc<Mutex<Faults>>,
    pub path: PathBuf,
    pub inner: Box<F>,
}

impl<F: ?Sized> FaultFile<F> {
    fn check(&self, op: FaultOp) -> io::Result<()> {
        self.faults.lock().check(op, &self.path)
    }

    /// Fails a write of `len` bytes, or says how many may go through.
    fn check_write(&self, len: usize) -> Result<(), (io::Error, usize)> {
        let mut f = self.faults.lock();
        f.check(FaultOp::Write, &self.path)
            .map_err(|e| (e, f.partial(len)))
    }
}

impl Write for FaultFile<dyn FsFile> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if let Err((e, part)) = self.check_write(buf.len()) {
            let _ = self.inner.write_all(&buf[..part]);
            return Err(e);
        }
        self.inner.write_all(buf)?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl FsFile for FaultFile<dyn FsFile> {
    fn sync_data(&mut self) -> io::Result<()> {
        self.check(FaultOp::Sync)?;
        self.inner.sync_data()
    }
    fn sync_all(&mut self) -> io::Result<()> {
        self.check(FaultOp::Sync)?;
        self.inner.sync_all()
    }
}

impl LogFile for FaultFile<dyn LogFile> {
    fn reserve(&mut self, len: u64) -> io::Result<()> {
        self.check(FaultOp::Write)?;
        self.inner.reserve(len)
    }
    fn write_at(&mut self, offset: u64, bytes: &[u8]) -> io::Result<()> {
        if let Err((e, part)) = self.check_write(bytes.len()) {
            let _ = self.inner.write_at(offset, &bytes[..part]);
            return Err(e);
        }
        self.inner.write_at(offset, bytes)
    }
    fn start_writeback(&mut self, upto: u64) {
        self.inner.start_writeback(upto);
    }
    fn sync(&mut self, upto: u64) -> io::Result<()> {
        self.check(FaultOp::Sync)?;
        self.inner.sync(upto)
    }
    fn truncate(&mut self, len: u64) -> io::Result<()> {
        self.check(FaultOp::Sync)?;
        self.inner.truncate(len)
    }
    fn detached_sync(&self) -> Option<Arc<dyn LogSync>> {
        let inner = self.inner.detached_sync()?;
        Some(Arc::new(FaultSync {
            faults: Arc::clone(&self.faults),
            path: self.path.clone(),
            inner,
        }))
    }
}

/// A [`FaultFile`] log's syncs from another thread: the fault plan first.
#[derive(Debug)]
struct FaultSync {
    faults: Arc<Mutex<Faults>>,
    path: PathBuf,
    inner: Arc<dyn LogSync>,
}

impl LogSync for FaultSync {
    fn sync(&self, upto: u64) -> io::Result<()> {
        self.faults.lock().check(FaultOp::Sync, &self.path)?;
        self.inner.sync(upto)
    }
}

impl RandomAccessFile for FaultFile<dyn RandomAccessFile> {
    fn len(&self) -> u64 {
        self.inner.len()
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.check(FaultOp::Read)?;
        self.inner.read_at(offset, buf)
    }
    fn read_at_uncached(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.check(FaultOp::Read)?;
        self.inner.read_at_uncached(offset, buf)
    }
    fn read_vec_at(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        self.check(FaultOp::Read)?;
        self.inner.read_vec_at(offset, len)
    }
    fn read_vec_at_uncached(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        self.check(FaultOp::Read)?;
        self.inner.read_vec_at_uncached(offset, len)
    }
    fn read_vec_at_if_cached(&self, offset: u64, len: usize) -> io::Result<Option<Vec<u8>>> {
        self.check(FaultOp::Read)?;
        self.inner.read_vec_at_if_cached(offset, len)
    }
    fn advise(&self, advice: Advice) {
        if matches!(advice, Advice::DontNeed(..)) {
            self.faults.lock().dropped_ranges += 1;
        }
        self.inner.advise(advice);
    }
}
