//! A database's identity: sixteen random bytes chosen when it is created,
//! recorded in the manifest and in every run file, so a file of another
//! database copied into the directory is recognised. A leaf: the run
//! files, the manifest and the jobs all name it.

use std::io;

/// A database's unique identity, chosen when it is created.
pub type DbId = [u8; 16];

/// A fresh database identity: random bytes from the operating system,
/// mixed with the time and the process id where those are not available.
pub fn new_db_id() -> DbId {
    let mut id = [0u8; 16];
    if std::fs::File::open("/dev/urandom")
        .and_then(|mut f| io::Read::read_exact(&mut f, &mut id))
        .is_err()
    {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        id[..8].copy_from_slice(&(nanos as u64).to_le_bytes());
        id[8..12].copy_from_slice(&std::process::id().to_le_bytes());
        let addr = &id as *const _ as u64;
        id[12..].copy_from_slice(&(addr as u32).to_le_bytes());
    }
    id
}
