//! The names of the files in a database directory: numbered run files and
//! write-ahead logs, the manifest, the lock. A file's number is unique in
//! the database (runs and logs draw from one counter).

/// Name of the manifest file.
pub const MANIFEST_FILE: &str = "MANIFEST";
/// Name of the lock file.
pub const LOCK_FILE: &str = "LOCK";

/// The kind of a database file, from its name (see [`parse_file_name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FileKind {
    /// A run file, `NNNNNN.run`.
    Run,
    /// A write-ahead log, `NNNNNN.wal`.
    Wal,
}

/// Name of run file `number`: at least six digits, then `.run`.
pub fn run_file_name(number: u64) -> String {
    format!("{number:06}.run")
}

/// Name of WAL file `number`: at least six digits, then `.wal`.
pub fn wal_file_name(number: u64) -> String {
    format!("{number:06}.wal")
}

/// Parses a run or WAL file name produced by [`run_file_name`] or
/// [`wal_file_name`]. Only the canonical spelling is accepted (so
/// `"1.run"` and `"0000001.run"` are not database files).
pub fn parse_file_name(name: &str) -> Option<(u64, FileKind)> {
    let (stem, ext) = name.split_once('.')?;
    let kind = match ext {
        "run" => FileKind::Run,
        "wal" => FileKind::Wal,
        _ => return None,
    };
    if stem.len() < 6 || !stem.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let number: u64 = stem.parse().ok()?;
    (format!("{number:06}") == stem).then_some((number, kind))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names() {
        assert_eq!(run_file_name(7), "000007.run");
        assert_eq!(wal_file_name(1234567), "1234567.wal");
        assert_eq!(parse_file_name("000007.run"), Some((7, FileKind::Run)));
        assert_eq!(
            parse_file_name("1234567.wal"),
            Some((1234567, FileKind::Wal))
        );
        assert_eq!(
            parse_file_name(&run_file_name(u64::MAX)),
            Some((u64::MAX, FileKind::Run))
        );
        for bad in [
            "7.run",
            "0000007.run",
            "000007.sst",
            "000007",
            "MANIFEST",
            "MANIFEST.tmp",
            "00000a.run",
            "+00007.run",
            "000007.run.tmp",
            "99999999999999999999.wal",
            "",
        ] {
            assert_eq!(parse_file_name(bad), None, "{bad}");
        }
    }
}
