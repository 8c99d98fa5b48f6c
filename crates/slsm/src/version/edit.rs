//! [`VersionEdit`]: one change to the set of runs, applied by
//! [`VersionSet::apply`](super::VersionSet::apply).

use std::sync::Arc;

use super::{DiskRun, Version};
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
}

impl VersionEdit {
    /// True if the edit changes what the manifest records (the levels or
    /// the flushed sequence), not only memory runs.
    pub fn changes_disk(&self) -> bool {
        !self.added.is_empty() || !self.removed.is_empty() || self.flushed_sequence.is_some()
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
