//! [`VersionEdit`]: one change to the set of runs, applied by
//! [`VersionSet::apply`](super::VersionSet::apply).

use std::sync::Arc;

use super::runs::{DiskRun, Version};
use crate::keyspace::catalog::Catalog;
use crate::memtable::MemRun;

/// A change to the runs of the database: memory runs sealed or flushed,
/// run files added to or removed from levels. Built by the component that
/// decides the change (the memory buffer, a flush or merge job, recovery)
/// and applied atomically: readers see the version before or after it,
/// never a mixture.
#[derive(Default)]
pub(crate) struct VersionEdit {
    /// A new active memory run; the current active run is sealed.
    pub new_active: Option<Arc<MemRun>>,
    /// Memory runs whose contents are now in run files.
    pub flushed_mems: Vec<Arc<MemRun>>,
    /// Run files added, with their level.
    pub added: Vec<(usize, Arc<DiskRun>)>,
    /// Run files merged away; deleted once no reader holds them.
    pub removed: Vec<Arc<DiskRun>>,
    /// Every write with a sequence number up to this one is in run files.
    pub flushed_sequence: Option<u64>,
    /// The keyspace catalog after a keyspace was created or dropped.
    pub catalog: Option<Catalog>,
}

impl VersionEdit {
    /// True if the edit changes what the manifest records (the levels or
    /// the flushed sequence), not only memory runs.
    pub fn changes_disk(&self) -> bool {
        !self.added.is_empty()
            || !self.removed.is_empty()
            || self.flushed_sequence.is_some()
            || self.catalog.is_some()
    }

    /// The version `current` becomes with this edit.
    pub fn applied_to(&self, current: &Version) -> Version {
        let mut mems = current.mems.clone();
        if let Some(run) = &self.new_active {
            mems[0].seal();
            mems.insert(0, Arc::clone(run));
        }
        mems.retain(|m| !self.flushed_mems.iter().any(|f| Arc::ptr_eq(f, m)));
        let mut levels = current.levels.clone();
        for level in &mut levels {
            level.retain(|r| !self.removed.iter().any(|x| Arc::ptr_eq(x, r)));
        }
        for (level, run) in &self.added {
            while levels.len() <= *level {
                levels.push(Vec::new());
            }
            levels[*level].push(Arc::clone(run));
        }
        while levels.len() > 1 && levels.last().is_some_and(|l| l.is_empty()) {
            levels.pop();
        }
        Version::new(mems, levels)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::{FileSystem, MemFs};
    use crate::key::{encode, Kind};
    use crate::options::Options;
    use crate::sst::{RunBuilder, RunFile, RunOptions};
    use std::path::Path;

    fn disk_run(fs: &Arc<dyn FileSystem>, number: u64) -> Arc<DiskRun> {
        let path = Path::new("/db").join(crate::files::run_file_name(number));
        let mut b = RunBuilder::create_with(Arc::clone(fs), &path, RunOptions::default()).unwrap();
        b.add(&encode(&number.to_be_bytes(), 1, Kind::Value), b"v")
            .unwrap();
        b.finish().unwrap();
        let file = RunFile::open_with(Arc::clone(fs), &path).unwrap();
        Arc::new(DiskRun::new(number, Arc::new(file)))
    }

    /// Sealing, flushing and merging change exactly the runs they name, and
    /// the read order (memory runs newest first, then level by level) follows.
    #[test]
    fn edits_change_the_runs_they_name() {
        let fs: Arc<dyn FileSystem> = Arc::new(MemFs::new());
        fs.create_dir_all(Path::new("/db")).unwrap();
        let opts = Options::default();
        let first = Arc::new(MemRun::new(&opts, 1, &[]));
        let v0 = Version::new(vec![Arc::clone(&first)], Vec::new());
        let second = Arc::new(MemRun::new(&opts, 1, &[]));
        let seal = VersionEdit {
            new_active: Some(Arc::clone(&second)),
            ..VersionEdit::default()
        };
        assert!(!seal.changes_disk());
        let v1 = seal.applied_to(&v0);
        assert!(Arc::ptr_eq(v1.active(), &second));
        assert_eq!(v1.mems.len(), 2);
        let (a, b) = (disk_run(&fs, 10), disk_run(&fs, 11));
        let flush = VersionEdit {
            flushed_mems: vec![Arc::clone(&first)],
            added: vec![(0, Arc::clone(&a)), (2, Arc::clone(&b))],
            flushed_sequence: Some(5),
            ..VersionEdit::default()
        };
        assert!(flush.changes_disk());
        let v2 = flush.applied_to(&v1);
        assert_eq!(v2.mems.len(), 1);
        assert_eq!(v2.levels.len(), 3);
        let order: Vec<&str> = v2
            .sources()
            .iter()
            .map(|s| match s {
                crate::version::Source::Mem(_) => "mem",
                crate::version::Source::Disk(r) if r.number == 10 => "a",
                crate::version::Source::Disk(_) => "b",
            })
            .collect();
        assert_eq!(order, ["mem", "a", "b"]);
        let merge = VersionEdit {
            removed: vec![Arc::clone(&b)],
            ..VersionEdit::default()
        };
        let v3 = merge.applied_to(&v2);
        assert_eq!(v3.levels.len(), 1, "empty deepest levels are dropped");
        assert_eq!(v3.disk_runs_newest_first().count(), 1);
    }
}
