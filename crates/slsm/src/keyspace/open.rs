//! Opening, listing and dropping keyspaces: the `Db` side of
//! [`Keyspace`].

use std::sync::Arc;

use super::catalog::{check_name, DEFAULT_KEYSPACE};
use super::handle::Keyspace;
use super::rules::KeyspaceOptions;
use super::rules::Rules;
use super::state::KeyspaceState;
use super::tag::Tag;
use crate::db::handle::Db;
use crate::error::{Error, Result};
use crate::version::VersionEdit;

impl Db {
    /// The keyspace `name`, created (durably, before this returns) if it
    /// does not exist. Names are 1 to 255 characters of `a-z A-Z 0-9 _ - .
    /// # $`; `"default"` is the keyspace `Db`'s own methods use.
    ///
    /// Errors: [`Error::InvalidArgument`] for an invalid name,
    /// [`Error::ReadOnly`] to create one in a read-only database.
    pub fn keyspace(&self, name: &str) -> Result<Keyspace> {
        self.open_keyspace(name, None)
    }

    /// [`keyspace`](Self::keyspace) with options: a TTL (fixed when the
    /// keyspace is created) and a compaction filter (for this open).
    ///
    /// ```
    /// use std::time::Duration;
    /// use slsm::{FilterDecision, KeyspaceOptions};
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = slsm::Db::open(dir.path(), slsm::Options::default())?;
    /// let sessions = db.keyspace_with("sessions", KeyspaceOptions::default().ttl(Duration::from_secs(3600)))?;
    /// sessions.put("token", "alice")?; // gone in an hour, for reads and on disk
    /// let logs = db.keyspace_with(
    ///     "logs",
    ///     KeyspaceOptions::default().compaction_filter(|_key: &[u8], value: &[u8]| {
    ///         match value.starts_with(b"DEBUG") {
    ///             true => FilterDecision::Remove,
    ///             false => FilterDecision::Keep,
    ///         }
    ///     }),
    /// )?;
    /// logs.put("1", "DEBUG noise")?; // dropped by the next flush or merge
    /// # Ok::<(), slsm::Error>(())
    /// ```
    ///
    /// Errors: as [`keyspace`](Self::keyspace), and
    /// [`Error::InvalidArgument`] for a TTL other than the one the
    /// keyspace was created with.
    pub fn keyspace_with(&self, name: &str, opts: KeyspaceOptions) -> Result<Keyspace> {
        self.open_keyspace(name, Some(opts))
    }

    fn open_keyspace(&self, name: &str, opts: Option<KeyspaceOptions>) -> Result<Keyspace> {
        let inner = &self.inner;
        let mut open = inner.keyspaces.lock();
        let ttl = opts
            .as_ref()
            .and_then(|o| o.ttl)
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1));
        let state = match open.get(name) {
            Some(state) => Arc::clone(state),
            None => {
                let state = Arc::new(self.load_or_create(name, ttl.unwrap_or(0))?);
                open.insert(name.to_string(), Arc::clone(&state));
                state
            }
        };
        if ttl.is_some_and(|t| t != state.ttl_millis) {
            return Err(Error::InvalidArgument(format!(
                "keyspace {name:?} has a TTL of {} ms, fixed when it was created (0: none)",
                state.ttl_millis
            )));
        }
        if let Some(opts) = opts {
            let rules = Rules {
                ttl_millis: state.ttl_millis,
                filter: opts.compaction_filter,
            };
            inner.rules.set(state.id, rules);
        }
        Ok(Keyspace::new(Arc::clone(inner), state))
    }

    /// The state of keyspace `name` from the catalog, or of a new one.
    fn load_or_create(&self, name: &str, ttl_millis: u64) -> Result<KeyspaceState> {
        let inner = &self.inner;
        check_name(name).map_err(Error::InvalidArgument)?;
        let catalog = inner.versions.catalog();
        if let Some(record) = catalog.by_name(name) {
            return Ok(KeyspaceState::new(record.id, name, record.ttl_millis));
        }
        inner.refuse_if_read_only()?;
        let next = catalog
            .with_new(name, ttl_millis)
            .map_err(Error::InvalidArgument)?;
        inner.versions.apply(VersionEdit {
            catalog: Some(next),
            ..VersionEdit::default()
        })?;
        Ok(KeyspaceState::new(catalog.next_id, name, ttl_millis))
    }

    /// The names of every keyspace, `"default"` first, then in order of
    /// creation.
    pub fn keyspace_names(&self) -> Vec<String> {
        let catalog = self.inner.versions.catalog();
        catalog.keyspaces.iter().map(|k| k.name.clone()).collect()
    }

    /// Drops keyspace `name` and every key in it. Its run files that hold
    /// nothing else are deleted at once; its keys in shared files go as
    /// merges rewrite them (no scan now). Handles on it fail from now on;
    /// a new keyspace of the same name starts empty.
    ///
    /// Errors: [`Error::InvalidArgument`] for `"default"` or a keyspace
    /// that does not exist.
    pub fn drop_keyspace(&self, name: &str) -> Result<()> {
        let inner = &self.inner;
        inner.refuse_if_read_only()?;
        if name == DEFAULT_KEYSPACE {
            return Err(Error::InvalidArgument(
                "the default keyspace cannot be dropped".into(),
            ));
        }
        let mut open = inner.keyspaces.lock();
        let catalog = inner.versions.catalog();
        let Some(record) = catalog.by_name(name) else {
            return Err(Error::InvalidArgument(format!("no keyspace {name:?}")));
        };
        let tag = Tag::of(record.id);
        let (start, end) = (tag.as_bytes().to_vec(), tag.end());
        let version = inner.versions.current_arc();
        let removed = version
            .disk_runs_newest_first()
            .filter(|r| {
                // Its keys and its range tombstones (which the key bounds do
                // not cover) all belong to the keyspace.
                let inside = |k: &[u8]| k >= start.as_slice() && k <= end.as_slice();
                let p = r.file.properties();
                inside(&p.min_user_key)
                    && p.max_user_key < end
                    && r.file
                        .range_tombstones()
                        .iter()
                        .all(|t| inside(&t.start) && inside(&t.end))
            })
            .cloned()
            .collect();
        // On an error the keyspace lives on, its handles too, and `apply`
        // has put the manifest that lists it back on disk.
        inner.versions.apply(VersionEdit {
            catalog: Some(catalog.without(name)),
            removed,
            ..VersionEdit::default()
        })?;
        // Handles fail from here on. A write through one that slipped in
        // since the new catalog was installed is as if made just before the
        // drop: gone with it.
        if let Some(state) = open.remove(name) {
            state.mark_dropped();
        }
        crate::reaper::drain();
        Ok(())
    }
}
