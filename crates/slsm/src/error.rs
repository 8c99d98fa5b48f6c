//! The engine's error type.
//!
//! Every fallible public operation returns [`Result`]. Library code never
//! panics on I/O errors or on bad data read from disk: it returns one of these
//! variants, each with a message that says what went wrong and what to do.

use std::fmt;
use std::io;
use std::path::PathBuf;

/// The result type of every fallible slsm operation.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong. Messages are meant for the person running the program.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// An operating-system I/O error, with the file or directory involved.
    Io {
        /// The path the operation was working on.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// Stored data failed a checksum or a structural check. Nothing wrong is
    /// returned as data; `file` and `offset` say where the damage is.
    Corruption {
        /// The damaged file.
        file: PathBuf,
        /// Byte offset of the damaged record or block in `file`.
        offset: u64,
        /// What check failed.
        reason: String,
    },
    /// The caller passed something the engine does not accept (an oversized
    /// key or value, an invalid option, an empty range).
    InvalidArgument(String),
    /// Another process, or another `Db` in this process, holds the lock on
    /// the directory.
    Locked(PathBuf),
    /// A write to a database opened read-only.
    ReadOnly(PathBuf),
    /// The directory exists, is not empty, and is not an slsm database (or
    /// was written by an incompatible format version).
    NotADatabase {
        /// The directory.
        path: PathBuf,
        /// Why it was rejected.
        reason: String,
    },
    /// A transaction could not commit: a key or range it read was written
    /// by someone else after its snapshot. Nothing of it was applied; run
    /// it again.
    Conflict,
    /// A write through a handle (a `Keyspace`, a `Transaction`) that
    /// outlived its `Db`: the database was closed. Reads through such
    /// handles go on working; nothing was written.
    Closed(PathBuf),
}

impl Error {
    /// An [`Error::Io`] for `path`.
    pub fn io(path: impl Into<PathBuf>, source: io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// An [`Error::Corruption`] at `offset` of `file`.
    pub fn corruption(file: impl Into<PathBuf>, offset: u64, reason: impl Into<String>) -> Self {
        Error::Corruption {
            file: file.into(),
            offset,
            reason: reason.into(),
        }
    }

    /// True for [`Error::Corruption`].
    pub fn is_corruption(&self) -> bool {
        matches!(self, Error::Corruption { .. })
    }

    /// True if the device (or the user's quota) is out of space: the
    /// operation may succeed once space is freed, without reopening.
    pub fn is_no_space(&self) -> bool {
        match self {
            Error::Io { source, .. } => {
                source.kind() == io::ErrorKind::StorageFull
                    || source.kind() == io::ErrorKind::QuotaExceeded
                    || matches!(
                        source.raw_os_error(),
                        Some(libc::ENOSPC) | Some(libc::EDQUOT)
                    )
            }
            _ => false,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { path, source } => write!(f, "I/O error on {}: {source}", path.display()),
            Error::Corruption {
                file,
                offset,
                reason,
            } => write!(
                f,
                "corruption in {} at offset {offset}: {reason} (run `slsm check` on the database; \
                 restore from a backup or reopen with best-effort recovery)",
                file.display()
            ),
            Error::InvalidArgument(msg) => write!(f, "invalid argument: {msg}"),
            Error::Locked(path) => write!(
                f,
                "database {} is locked by another process or another open Db; close it first",
                path.display()
            ),
            Error::NotADatabase { path, reason } => {
                write!(f, "{} is not an slsm database: {reason}", path.display())
            }
            Error::ReadOnly(path) => write!(
                f,
                "database {} is open read-only; open it with Db::open to write",
                path.display()
            ),
            Error::Conflict => write!(
                f,
                "transaction conflict: a key or range it read was written since its snapshot; \
                 nothing was applied, retry the transaction"
            ),
            Error::Closed(path) => write!(
                f,
                "database {} is closed (its Db was dropped): nothing was written",
                path.display()
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl Clone for Error {
    fn clone(&self) -> Self {
        match self {
            Error::Io { path, source } => Error::Io {
                path: path.clone(),
                source: io::Error::new(source.kind(), source.to_string()),
            },
            Error::Corruption {
                file,
                offset,
                reason,
            } => Error::Corruption {
                file: file.clone(),
                offset: *offset,
                reason: reason.clone(),
            },
            Error::InvalidArgument(m) => Error::InvalidArgument(m.clone()),
            Error::Locked(p) => Error::Locked(p.clone()),
            Error::ReadOnly(p) => Error::ReadOnly(p.clone()),
            Error::Conflict => Error::Conflict,
            Error::Closed(p) => Error::Closed(p.clone()),
            Error::NotADatabase { path, reason } => Error::NotADatabase {
                path: path.clone(),
                reason: reason.clone(),
            },
        }
    }
}
