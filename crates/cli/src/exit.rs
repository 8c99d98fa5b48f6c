//! Exit statuses scripts can rely on.

/// Success.
pub const OK: i32 = 0;
/// `get`: the key does not exist.
pub const NOT_FOUND: i32 = 1;
/// Bad command line or invalid argument.
pub const USAGE: i32 = 2;
/// The database is corrupt (`check`, or any command that met damage).
pub const CORRUPTION: i32 = 3;
/// The database is locked by another process.
pub const LOCKED: i32 = 4;
/// Any other error (I/O, not a database, ...).
pub const OTHER: i32 = 5;

/// A usage error found after clap's parsing (bad hex, bad bench flag).
#[derive(Debug)]
pub struct Usage(pub String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

/// The exit status for an error: the first slsm or usage error in its chain decides.
pub fn code_for(e: &anyhow::Error) -> i32 {
    for cause in e.chain() {
        if cause.downcast_ref::<Usage>().is_some()
            || cause
                .downcast_ref::<slsm_cli::bench::flags::FlagError>()
                .is_some()
        {
            return USAGE;
        }
        if let Some(err) = cause.downcast_ref::<slsm::Error>() {
            return match err {
                slsm::Error::Corruption { .. } => CORRUPTION,
                slsm::Error::Locked(_) => LOCKED,
                slsm::Error::InvalidArgument(_) => USAGE,
                _ => OTHER,
            };
        }
    }
    OTHER
}

/// True if `e` is a write to a closed pipe.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
