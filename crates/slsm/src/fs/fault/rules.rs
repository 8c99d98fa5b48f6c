//! What [`FaultFs`](super::FaultFs) injects: the kinds of operation it can
//! fail, and the rules and counters that decide when (a leaf of
//! `fs/fault/`: the file system and its files both consult it).

use std::io;
use std::path::Path;

/// The kinds of operation [`FaultFs`](super::FaultFs) can fail.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FaultOp {
    /// A write to an open file or log (a failed write may still have written
    /// a prefix of its bytes, like a short write followed by an error), or a
    /// log's space reservation.
    Write,
    /// A sync of a file, a log or a directory.
    Sync,
    /// Reading or mapping a file, or listing a directory.
    Read,
    /// A rename.
    Rename,
    /// Creating a file, a log or a directory.
    Create,
    /// Removing a file.
    Remove,
}

pub(super) const FAULT_OPS: usize = 6;

impl FaultOp {
    pub(super) fn index(self) -> usize {
        self as usize
    }
    pub(super) fn mutates(self) -> bool {
        !matches!(self, FaultOp::Read)
    }
}

#[derive(Debug, Default)]
pub(super) struct Faults {
    pub(super) calls: [u64; FAULT_OPS],
    /// `Advice::DontNeed` hints passed through.
    pub(super) dropped_ranges: u64,
    /// Fail the call of this kind whose number is the given one.
    pub(super) nth: Vec<(FaultOp, u64)>,
    /// Fail calls of this kind with this probability (parts per million).
    pub(super) probability: [u32; FAULT_OPS],
    /// After this many more mutating calls every call fails: the power is
    /// off. `Some(0)` means off.
    pub(super) power_left: Option<u64>,
    /// The disk is full: writes and creates fail with `ENOSPC`.
    pub(super) full: bool,
    /// The file system is mounted read-only: every change fails with
    /// `EROFS`.
    pub(super) read_only: bool,
    /// Injected errors are all `ENOSPC` (`Some(true)`), all `EIO`
    /// (`Some(false)`), or either (`None`).
    pub(super) no_space: Option<bool>,
    pub(super) rng: u64,
    pub(super) injected: u64,
}

impl Faults {
    pub(super) fn rand(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub(super) fn powered_off(&self) -> bool {
        self.power_left == Some(0)
    }

    /// Counts a call of kind `op` and decides whether it fails.
    pub(super) fn check(&mut self, op: FaultOp, path: &Path) -> io::Result<()> {
        if self.powered_off() {
            return Err(io::Error::other(format!(
                "faultfs: power is off ({op:?} on {})",
                path.display()
            )));
        }
        if op.mutates() {
            if let Some(left) = self.power_left.as_mut() {
                *left -= 1;
            }
        }
        if self.full && matches!(op, FaultOp::Write | FaultOp::Create) {
            return Err(no_space(op, path));
        }
        if self.read_only && op.mutates() {
            let e = io::Error::from_raw_os_error(libc::EROFS);
            return Err(io::Error::new(
                e.kind(),
                format!("faultfs: {op:?} on {}: {e}", path.display()),
            ));
        }
        let i = op.index();
        self.calls[i] += 1;
        let calls = self.calls[i];
        let mut fail = false;
        self.nth.retain(|&(k, n)| {
            let hit = k == op && n == calls;
            fail |= hit;
            !hit
        });
        let p = self.probability[i];
        if !fail && p > 0 && (self.rand() % 1_000_000) < u64::from(p) {
            fail = true;
        }
        if fail {
            self.injected += 1;
            // Space can run out wherever space is taken: half of the
            // injected write, create and rename errors are ENOSPC.
            let space = matches!(op, FaultOp::Write | FaultOp::Create | FaultOp::Rename);
            let no_space_now = match self.no_space {
                Some(choice) => choice,
                None => space && self.rand().is_multiple_of(2),
            };
            if no_space_now {
                return Err(no_space(op, path));
            }
            return Err(io::Error::other(format!(
                "faultfs: injected {op:?} error (EIO) on {}",
                path.display()
            )));
        }
        Ok(())
    }

    /// How many bytes of a failed `len`-byte write still reach the file.
    pub(super) fn partial(&mut self, len: usize) -> usize {
        if self.powered_off() || len == 0 {
            0
        } else {
            (self.rand() % len as u64) as usize
        }
    }
}

/// An `ENOSPC` error, as the operating system reports it.
pub(super) fn no_space(op: FaultOp, path: &Path) -> io::Error {
    let e = io::Error::from_raw_os_error(libc::ENOSPC);
    io::Error::new(
        e.kind(),
        format!("faultfs: {op:?} on {}: {e}", path.display()),
    )
}
