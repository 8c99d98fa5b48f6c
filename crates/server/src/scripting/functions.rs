//! Function libraries (`FUNCTION LOAD`, `FCALL`), as Redis 7.0 keeps
//! them (`functions.c`): a library is code whose first line names it
//! (`#!lua name=mylib`) and whose top level registers functions; function
//! names are unique across libraries, compared without case, as Redis's
//! dictionary does.
//!
//! Libraries are data: they are kept in a keyspace of their own
//! ([`KEYSPACE`]: library name to code), written before a change is
//! acknowledged and read back at start, so they survive restarts as they
//! do in Redis's RDB and AOF. `FLUSHALL` leaves them, as in Redis.
//!
//! Owns: the registry of libraries and the keyspace they are kept in.
//! May call: the engine (that keyspace) and this thread's interpreter
//! (to run a library's code when it is loaded). Thread-safety: one mutex;
//! every change is made under it, the keyspace write included, so the
//! registry and the keyspace change together.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use super::registration::{check_name, Registered};
use super::vm;

/// The keyspace libraries are kept in.
pub const KEYSPACE: &str = "redis-functions";

/// Library load ids and registry generations: unique in the process, so
/// a thread's interpreter never mistakes one load of a library for
/// another.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn next_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// A function of a library, as `FUNCTION LIST` shows it.
pub struct FunctionInfo {
    pub name: String,
    pub description: Option<Vec<u8>>,
    pub flags: u8,
}

/// A loaded library.
pub struct Library {
    pub name: String,
    /// The code as loaded, its `#!` line included.
    pub code: Vec<u8>,
    /// Unique to this load: a thread's interpreter reloads a library
    /// whose id changed (`FUNCTION LOAD REPLACE`).
    pub id: u64,
    pub functions: Vec<FunctionInfo>,
}

impl Library {
    /// The code after the `#!` line (from its newline, so that line
    /// numbers count from the `#!` line as in Redis).
    pub fn body(&self) -> &[u8] {
        let at = self.code.iter().position(|&b| b == b'\n').unwrap_or(0);
        &self.code[at..]
    }
}

/// The libraries, by name, and their functions, by lowercase name.
#[derive(Default, Clone)]
pub struct Registry {
    pub libraries: BTreeMap<String, Arc<Library>>,
    functions: HashMap<String, Arc<Library>>,
    /// Changes with every change of the libraries: a thread's interpreter
    /// drops the libraries it loaded when it sees a new one.
    pub generation: u64,
}

impl Registry {
    /// The library holding function `name` (any case), and the function.
    pub fn function(&self, name: &str) -> Option<(Arc<Library>, &FunctionInfo)> {
        let lib = self.functions.get(&name.to_ascii_lowercase())?;
        let f = lib
            .functions
            .iter()
            .find(|f| f.name.eq_ignore_ascii_case(name))?;
        Some((Arc::clone(lib), f))
    }

    pub fn function_count(&self) -> usize {
        self.functions.len()
    }

    /// Adds `lib`; its name and functions must be free.
    fn link(&mut self, lib: Arc<Library>) {
        for f in &lib.functions {
            self.functions
                .insert(f.name.to_ascii_lowercase(), Arc::clone(&lib));
        }
        self.libraries.insert(lib.name.clone(), lib);
    }

    fn unlink(&mut self, name: &str) -> Option<Arc<Library>> {
        let lib = self.libraries.remove(name)?;
        for f in &lib.functions {
            self.functions.remove(&f.name.to_ascii_lowercase());
        }
        Some(lib)
    }

    /// The first function of `lib` another library has.
    fn collision(&self, lib: &Library) -> Option<String> {
        lib.functions
            .iter()
            .find(|f| self.functions.contains_key(&f.name.to_ascii_lowercase()))
            .map(|f| f.name.clone())
    }

    /// Checks `code` and loads it into this thread's interpreter: the
    /// library it makes, not yet added. `replace`: a library of the same
    /// name may be replaced. Errors are Redis's texts.
    pub fn create(&mut self, code: &[u8], replace: bool) -> Result<Library, String> {
        let name = library_name(code)?;
        if self.libraries.contains_key(&name) && !replace {
            return Err(format!("Library '{name}' already exists"));
        }
        let body = &code[code.iter().position(|&b| b == b'\n').unwrap_or(0)..];
        let (registered, _) = vm::with_vm(|vm| vm.load_library(body))
            .map_err(|e| e.trim_start_matches("ERR ").to_string())??;
        if registered.is_empty() {
            return Err("No functions registered".into());
        }
        let lib = Library {
            name,
            code: code.to_vec(),
            id: next_id(),
            functions: registered.into_iter().map(info_of).collect(),
        };
        // A function of the library this one replaces is no collision.
        let taken = lib.functions.iter().find(|f| {
            self.functions
                .get(&f.name.to_ascii_lowercase())
                .is_some_and(|owner| owner.name != lib.name)
        });
        match taken {
            Some(f) => Err(format!("Function {} already exists", f.name)),
            None => Ok(lib),
        }
    }

    /// Adds `lib`, replacing the library of its name.
    pub fn install(&mut self, lib: Library) {
        self.install_shared(Arc::new(lib));
    }

    fn install_shared(&mut self, lib: Arc<Library>) {
        self.unlink(&lib.name);
        self.link(lib);
    }

    /// Removes library `name` (if it is there).
    pub fn remove(&mut self, name: &str) {
        self.unlink(name);
    }

    /// Removes library `name` and returns it.
    pub fn take(&mut self, name: &str) -> Option<Arc<Library>> {
        self.unlink(name)
    }

    /// Marks the registry changed (see [`Registry::generation`]).
    pub fn touch(&mut self) {
        self.generation = next_id();
    }

    /// `restored` joined to these libraries as `FUNCTION RESTORE`'s
    /// `APPEND` (`replace` false) or `REPLACE` does; Redis's errors.
    pub fn join(&mut self, restored: Vec<Arc<Library>>, replace: bool) -> Result<(), String> {
        let mut joined = self.clone();
        for lib in &restored {
            if joined.libraries.contains_key(&lib.name) {
                if !replace {
                    return Err(format!("Library {} already exists", lib.name));
                }
                joined.unlink(&lib.name);
            }
        }
        for lib in &restored {
            if let Some(f) = joined.collision(lib) {
                return Err(format!("Function {f} already exists"));
            }
        }
        restored
            .into_iter()
            .for_each(|lib| joined.install_shared(lib));
        *self = joined;
        Ok(())
    }
}

fn info_of(r: Registered) -> FunctionInfo {
    FunctionInfo {
        name: r.name,
        description: r.description,
        flags: r.flags,
    }
}

/// The library name in `code`'s `#!` line, checked as Redis checks it
/// (`functionExtractLibMetaData`, the name rule, the engine).
fn library_name(code: &[u8]) -> Result<String, String> {
    if !code.starts_with(b"#!") {
        return Err("Missing library metadata".into());
    }
    let end = code
        .iter()
        .position(|&b| b == b'\n')
        .ok_or("Invalid library metadata")?;
    // Split as Redis splits it (`sdssplitargs`: `name="my lib"` quoted).
    let parts = crate::inline::split_args(&code[..end]).map_err(|_| "Invalid library metadata")?;
    let mut parts = parts
        .iter()
        .map(|p| String::from_utf8_lossy(p).into_owned());
    let engine = parts.next().ok_or("Invalid library metadata")?[2..].to_string();
    let mut name = None;
    for part in parts {
        let lower = part.to_ascii_lowercase();
        match lower.strip_prefix("name=") {
            Some(_) if name.is_some() => {
                return Err("Invalid metadata value, name argument was given multiple times".into())
            }
            Some(_) => name = Some(part[5..].to_string()),
            None => return Err(format!("Invalid metadata value given: {part}")),
        }
    }
    let name = name.ok_or("Library name was not given")?;
    check_name(&name)?;
    if !engine.eq_ignore_ascii_case("lua") {
        return Err(format!("Engine '{engine}' not found"));
    }
    Ok(name)
}

/// The server's function libraries.
pub struct Functions {
    registry: Mutex<Registry>,
    /// Where they are kept: the database's keyspace (a cluster node's
    /// database changes when it installs a snapshot: [`Functions::reload`]).
    space: Mutex<slsm::Keyspace>,
}

impl Functions {
    /// The libraries kept in `db`, loaded. One that no longer loads (it
    /// cannot, unless its code was damaged) is reported and left out; its
    /// code stays in the keyspace.
    pub fn open(db: &slsm::Db) -> slsm::Result<Functions> {
        let (registry, space) = Self::load(db)?;
        Ok(Functions {
            registry: Mutex::new(registry),
            space: Mutex::new(space),
        })
    }

    /// Serves the libraries kept in `db` from now on, in place of those
    /// loaded before.
    pub fn reload(&self, db: &slsm::Db) -> slsm::Result<()> {
        let (registry, space) = Self::load(db)?;
        *self.registry() = registry;
        *self.space.lock().unwrap_or_else(|p| p.into_inner()) = space;
        Ok(())
    }

    fn load(db: &slsm::Db) -> slsm::Result<(Registry, slsm::Keyspace)> {
        let space = db.keyspace(KEYSPACE)?;
        let mut registry = Registry::default();
        for entry in space.iter() {
            let (name, code) = entry?;
            match registry.create(&code, false) {
                Ok(lib) => registry.install(lib),
                Err(e) => eprintln!(
                    "slsm serve: function library {} not loaded: {e}",
                    String::from_utf8_lossy(&name)
                ),
            }
        }
        Ok((registry, space))
    }

    pub fn registry(&self) -> MutexGuard<'_, Registry> {
        self.registry.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Writes `after` to the keyspace (what differs from `before`), in
    /// one batch.
    pub fn persist(
        &self,
        db: &slsm::Db,
        before: &Registry,
        after: &Registry,
        opts: &slsm::WriteOptions,
    ) -> slsm::Result<()> {
        let space = self.space.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let mut batch = slsm::WriteBatch::new();
        for name in before.libraries.keys() {
            if !after.libraries.contains_key(name) {
                batch.delete_in(&space, name);
            }
        }
        for (name, lib) in &after.libraries {
            if before.libraries.get(name).map(|l| l.id) != Some(lib.id) {
                batch.put_in(&space, name, &lib.code);
            }
        }
        db.write_opt(batch, opts)
    }
}
