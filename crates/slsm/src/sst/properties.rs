//! [`RunProperties`]: what is known of a run file, the record the manifest
//! and the file itself both keep (a leaf of `sst/`).

/// What is known of a run file: its identity, size, checksum and contents.
/// The same record lives in the manifest (one per run of every level) and in
/// the run file itself (its properties block and footer).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct RunProperties {
    /// The file's number; its name is [`crate::files::run_file_name`] of it.
    pub file_number: u64,
    /// Point entries (values and tombstones).
    pub entries: u64,
    /// Entries of kind `Kind::Delete`.
    pub tombstones: u64,
    /// Range tombstones.
    pub range_tombstones: u64,
    /// Smallest user key of the point entries (empty for an empty run).
    pub min_user_key: Vec<u8>,
    /// Largest user key of the point entries (empty for an empty run).
    pub max_user_key: Vec<u8>,
    /// Smallest sequence number of any entry or range tombstone (0 if none).
    pub min_seq: u64,
    /// Largest sequence number of any entry or range tombstone (0 if none).
    pub max_seq: u64,
    /// Size of the whole file in bytes.
    pub file_size: u64,
    /// Bytes of the data blocks as stored (compressed).
    pub data_bytes: u64,
    /// Bytes of the data blocks uncompressed.
    pub raw_data_bytes: u64,
    /// CRC32C of every byte of the file before its footer.
    pub checksum: u32,
}

impl RunProperties {
    /// Appends the record as the manifest stores it: the integers, then the
    /// two keys, length-prefixed.
    pub(crate) fn encode_into(&self, out: &mut Vec<u8>) {
        use crate::codec::{put_bytes, put_u64};
        for v in [
            self.file_number,
            self.file_size,
            self.entries,
            self.tombstones,
            self.range_tombstones,
            self.min_seq,
            self.max_seq,
            self.data_bytes,
            self.raw_data_bytes,
            u64::from(self.checksum),
        ] {
            put_u64(out, v);
        }
        put_bytes(out, &self.min_user_key);
        put_bytes(out, &self.max_user_key);
    }

    /// Decodes what [`encode_into`](Self::encode_into) wrote; `None` if the
    /// input is short or malformed.
    pub(crate) fn decode_from(r: &mut crate::codec::Reader<'_>) -> Option<RunProperties> {
        let mut ints = [0u64; 10];
        for v in &mut ints {
            *v = r.u64()?;
        }
        let [file_number, file_size, entries, tombstones, range_tombstones, min_seq, max_seq, data_bytes, raw_data_bytes, checksum] =
            ints;
        Some(RunProperties {
            file_number,
            file_size,
            entries,
            tombstones,
            range_tombstones,
            min_seq,
            max_seq,
            data_bytes,
            raw_data_bytes,
            checksum: u32::try_from(checksum).ok()?,
            min_user_key: r.length_prefixed()?.to_vec(),
            max_user_key: r.length_prefixed()?.to_vec(),
        })
    }
}
