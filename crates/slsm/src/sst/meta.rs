//! Reading a run file's metadata at open: the footer, then the
//! properties, range-tombstone, filter and index blocks it points to, each
//! checksummed and cross-checked (see `format.rs` for the layout).

use std::path::Path;

use super::format::{self, check_block, Corrupt, Footer, Handle, FOOTER_LEN};
use super::index::Index;
use super::properties::RunProperties;
use crate::bloom::Filter;
use crate::error::{Error, Result};
use crate::fs::RandomAccessFile;
use crate::key;
use crate::rangedel::RangeTombstone;

/// The metadata decoded from the footer and meta blocks.
pub(super) struct Meta {
    pub file: format::FileProperties,
    pub index: Index,
    pub filter: Filter,
    pub range_dels: Vec<RangeTombstone>,
}

/// Reads and verifies the meta block `h`; returns its payload.
fn meta_block(file: &dyn RandomAccessFile, path: &Path, h: Handle, what: &str) -> Result<Vec<u8>> {
    let limit = file.len() - FOOTER_LEN as u64;
    if !h.within(limit) {
        return Err(Error::corruption(
            path,
            limit,
            format!("{what} block handle outside the file"),
        ));
    }
    let mut stored = vec![0u8; h.len as usize];
    file.read_at(h.offset, &mut stored)
        .map_err(|e| Error::io(path, e))?;
    let (codec, payload) = check_block(&stored, h.offset, what)
        .map_err(|c| Error::corruption(path, c.offset, c.reason))?;
    if codec != 0 {
        return Err(Error::corruption(
            path,
            h.offset,
            format!("{what} block is not stored raw"),
        ));
    }
    let len = payload.len();
    stored.truncate(len);
    Ok(stored)
}

pub(super) fn read_meta(file: &dyn RandomAccessFile, path: &Path) -> Result<Meta> {
    let corrupt_at = |c: Corrupt| Error::corruption(path, c.offset, c.reason);
    let footer_at = file.len() - FOOTER_LEN as u64;
    let mut footer = vec![0u8; FOOTER_LEN];
    file.read_at(footer_at, &mut footer)
        .map_err(|e| Error::io(path, e))?;
    let footer = Footer::decode(&footer, footer_at).map_err(corrupt_at)?;
    let payload = meta_block(file, path, footer.properties, "properties")?;
    let props =
        format::decode_properties(&payload, file.len(), footer.body_crc).ok_or_else(|| {
            Error::corruption(path, footer.properties.offset, "malformed properties block")
        })?;
    let payload = meta_block(file, path, footer.range_dels, "range tombstone")?;
    let range_dels = format::decode_range_tombstones(&payload)
        .filter(|l| l.len() as u64 == props.props.range_tombstones)
        .ok_or_else(|| {
            Error::corruption(
                path,
                footer.range_dels.offset,
                "malformed range tombstone block",
            )
        })?;
    let filter = meta_block(file, path, footer.filter, "filter")?;
    let filter = Filter::decode(&filter)
        .ok_or_else(|| Error::corruption(path, footer.filter.offset, "malformed filter block"))?;
    let at = footer.index.offset;
    if at != props.props.data_bytes {
        return Err(Error::corruption(
            path,
            at,
            "index block does not follow the data blocks",
        ));
    }
    let payload = meta_block(file, path, footer.index, "index")?;
    let index = Index::decode(&payload, at, props.props.data_bytes).map_err(corrupt_at)?;
    check_props(&props.props, &index).map_err(|why| Error::corruption(path, at, why))?;
    Ok(Meta {
        file: props,
        index,
        filter,
        range_dels,
    })
}

/// Cross-checks the properties against the fence pointers.
fn check_props(props: &RunProperties, index: &Index) -> std::result::Result<(), &'static str> {
    let Some(last) = index.len().checked_sub(1) else {
        return match props.entries {
            0 => Ok(()),
            _ => Err("properties count entries but there are no data blocks"),
        };
    };
    if props.entries < index.len() as u64 || props.tombstones > props.entries {
        return Err("entry counts disagree with the index");
    }
    if key::user_key(index.last_key(last)) != props.max_user_key.as_slice()
        || props.min_user_key > props.max_user_key
    {
        return Err("min/max user keys disagree with the index");
    }
    Ok(())
}
