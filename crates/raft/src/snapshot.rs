//! A snapshot on disk: the files of a checkpoint of the state machine's
//! database (`Db::checkpoint`, one point in time), packed into one file
//! with openraft's metadata, so openraft can stream it to a follower in
//! chunks and the follower can check it whole before installing it.
//!
//! Layout: `SLSMSNP1`, the metadata's length (u32 LE), the metadata
//! (bincode) and its CRC32C; then per file its name's length (u16 LE, 0
//! ends the list), its name, its size (u64 LE), its bytes and their
//! CRC32C. A snapshot is written under a temporary name, synced and
//! renamed: a crash leaves the old one or the new one.
//!
//! * **Owns**: nothing: functions over paths.
//! * **Thread safety**: blocking file I/O; callers run it off the async
//!   threads.

use std::fs::{self, File};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::Path;

use crate::types::SnapshotMeta;

const MAGIC: &[u8; 8] = b"SLSMSNP1";
/// Longest file name accepted in a snapshot.
const MAX_NAME: usize = 255;

fn corrupt(what: impl Into<String>) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("snapshot: {}", what.into()),
    )
}

/// Packs the files of the checkpoint directory `dir` with `meta` into the
/// snapshot file `out` (written whole under a temporary name first).
pub fn pack(dir: &Path, meta: &SnapshotMeta, out: &Path) -> io::Result<()> {
    let tmp = out.with_extension("tmp");
    let mut w = BufWriter::new(File::create(&tmp)?);
    w.write_all(MAGIC)?;
    let meta_bytes = bincode::serialize(meta).map_err(io::Error::other)?;
    w.write_all(&(meta_bytes.len() as u32).to_le_bytes())?;
    w.write_all(&meta_bytes)?;
    w.write_all(&crc32c::crc32c(&meta_bytes).to_le_bytes())?;
    let mut names: Vec<_> = fs::read_dir(dir)?.collect::<io::Result<Vec<_>>>()?;
    names.sort_by_key(|e| e.file_name());
    for entry in names {
        if !entry.file_type()?.is_file() {
            return Err(corrupt(format!("{} is not a file", entry.path().display())));
        }
        let name = entry
            .file_name()
            .into_string()
            .map_err(|_| corrupt("a file name is not UTF-8"))?;
        let bytes = fs::read(entry.path())?;
        w.write_all(&(name.len() as u16).to_le_bytes())?;
        w.write_all(name.as_bytes())?;
        w.write_all(&(bytes.len() as u64).to_le_bytes())?;
        w.write_all(&bytes)?;
        w.write_all(&crc32c::crc32c(&bytes).to_le_bytes())?;
    }
    w.write_all(&0u16.to_le_bytes())?;
    let file = w.into_inner().map_err(|e| e.into_error())?;
    file.sync_all()?;
    fs::rename(&tmp, out)?;
    sync_dir(out.parent().unwrap_or(Path::new(".")))
}

fn read_exact_vec(r: &mut impl Read, len: usize) -> io::Result<Vec<u8>> {
    let mut buf = vec![0u8; len];
    r.read_exact(&mut buf)?;
    Ok(buf)
}

fn read_u32(r: &mut impl Read) -> io::Result<u32> {
    let mut b = [0u8; 4];
    r.read_exact(&mut b)?;
    Ok(u32::from_le_bytes(b))
}

/// Reads and checks the metadata at the start of a snapshot.
fn read_header(r: &mut impl Read) -> io::Result<SnapshotMeta> {
    let mut magic = [0u8; 8];
    r.read_exact(&mut magic).map_err(|_| corrupt("too short"))?;
    if &magic != MAGIC {
        return Err(corrupt("not an slsm snapshot"));
    }
    let len = read_u32(r)? as usize;
    if len > 64 << 20 {
        return Err(corrupt("metadata too long"));
    }
    let meta = read_exact_vec(r, len)?;
    if read_u32(r)? != crc32c::crc32c(&meta) {
        return Err(corrupt("metadata checksum mismatch"));
    }
    bincode::deserialize(&meta).map_err(|e| corrupt(e.to_string()))
}

/// The metadata of the snapshot file `path`.
pub fn read_meta(path: &Path) -> io::Result<SnapshotMeta> {
    read_header(&mut BufReader::new(File::open(path)?))
}

/// Unpacks the snapshot file `path` into the new directory `dest` (made
/// here; on an error it is removed), every file synced and checked against
/// its checksum. Returns the metadata.
pub fn unpack(path: &Path, dest: &Path) -> io::Result<SnapshotMeta> {
    let result = unpack_into(path, dest);
    if result.is_err() {
        let _ = fs::remove_dir_all(dest);
    }
    result
}

fn unpack_into(path: &Path, dest: &Path) -> io::Result<SnapshotMeta> {
    let mut r = BufReader::new(File::open(path)?);
    let meta = read_header(&mut r)?;
    fs::create_dir(dest)?;
    loop {
        let mut len = [0u8; 2];
        r.read_exact(&mut len)?;
        let len = u16::from_le_bytes(len) as usize;
        if len == 0 {
            break;
        }
        if len > MAX_NAME {
            return Err(corrupt("file name too long"));
        }
        let name = String::from_utf8(read_exact_vec(&mut r, len)?)
            .map_err(|_| corrupt("bad file name"))?;
        if name.contains('/') || name.contains('\0') || name == "." || name == ".." {
            return Err(corrupt(format!("unsafe file name {name:?}")));
        }
        let mut size = [0u8; 8];
        r.read_exact(&mut size)?;
        let size = u64::from_le_bytes(size);
        let mut out = File::create(dest.join(&name))?;
        let mut crc = 0u32;
        let mut left = size;
        let mut buf = vec![0u8; 256 << 10];
        while left > 0 {
            let n = (left as usize).min(buf.len());
            r.read_exact(&mut buf[..n])
                .map_err(|_| corrupt(format!("{name} cut short")))?;
            crc = crc32c::crc32c_append(crc, &buf[..n]);
            out.write_all(&buf[..n])?;
            left -= n as u64;
        }
        if read_u32(&mut r)? != crc {
            return Err(corrupt(format!("{name}: checksum mismatch")));
        }
        out.sync_all()?;
    }
    sync_dir(dest)?;
    Ok(meta)
}

/// Syncs a directory's entries.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta() -> SnapshotMeta {
        SnapshotMeta {
            last_log_id: None,
            last_membership: Default::default(),
            snapshot_id: "t".into(),
        }
    }

    #[test]
    fn a_packed_directory_unpacks_whole_and_damage_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let src = root.path().join("src");
        fs::create_dir(&src).unwrap();
        fs::write(src.join("a"), vec![7u8; 300_000]).unwrap();
        fs::write(src.join("b"), b"bee").unwrap();
        let snap = root.path().join("s.snap");
        pack(&src, &meta(), &snap).unwrap();
        assert_eq!(read_meta(&snap).unwrap().snapshot_id, "t");
        let out = root.path().join("out");
        unpack(&snap, &out).unwrap();
        assert_eq!(fs::read(out.join("a")).unwrap(), vec![7u8; 300_000]);
        assert_eq!(fs::read(out.join("b")).unwrap(), b"bee");
        let mut bytes = fs::read(&snap).unwrap();
        let at = bytes.len() / 2;
        bytes[at] ^= 1;
        fs::write(&snap, &bytes).unwrap();
        let bad = root.path().join("bad");
        let err = unpack(&snap, &bad).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData, "{err}");
        assert!(!bad.exists(), "a refused snapshot leaves nothing");
        fs::write(&snap, &bytes[..bytes.len() - 10]).unwrap();
        assert!(unpack(&snap, &bad).is_err(), "a cut snapshot is refused");
    }
}
