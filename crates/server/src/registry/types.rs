//! What a registry row says, and what a served command is once joined
//! with Redis's facts: the types of the table (`table.rs` holds it).

use crate::access::Access;
use crate::commands::Outcome;
use crate::cursors::Cursors;
use crate::resp::{Reply, Request};
use crate::session::{Session, Then};
use crate::shared::Shared;

use super::flags::{Flags, MAY_REPLICATE, NONE, READONLY, WRITE};

/// A data command: runs against an engine access (straight, in a
/// transaction or at a snapshot), given its lowercase name and arguments.
pub type DataFn = fn(&str, &[Vec<u8>], &mut dyn Access, &Cursors) -> Outcome;

/// A command on the connection or the server.
pub type ControlFn = fn(&Shared, &mut Session, &str, &Request) -> (Reply, Then);

/// How a data command reaches the engine outside `MULTI`.
#[derive(Clone, Copy)]
pub enum Mode {
    /// Straight writes and reads: nothing read decides a write.
    Direct,
    /// In an engine transaction of its own, retried on a conflict: it
    /// reads before it writes, or writes several keys.
    Transaction,
    /// At one snapshot: it reads a collection and writes nothing.
    Snapshot,
    /// As its arguments say (`SET ... NX` reads before it writes).
    ByArgs(fn(&[Vec<u8>]) -> Mode),
}

impl Mode {
    /// The mode for these arguments.
    pub fn of(self, args: &[Vec<u8>]) -> Mode {
        match self {
            Mode::ByArgs(decide) => decide(args),
            fixed => fixed,
        }
    }
}

/// Where a command may run in a cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// On any node, without consensus: the connection's own state, the
    /// node's introspection, `CLUSTER`, `MULTI`.
    Anywhere,
    /// Reads the data: on the leader after a read-index round; on a
    /// follower only after `READONLY` (as it is there).
    Read,
    /// Changes the data: proposed by the leader as a log entry.
    Write,
    /// On the leader only, not as a log entry (pub/sub, `WATCH`).
    Leader,
}

/// Where a server command runs in a cluster.
#[derive(Clone, Copy)]
pub enum Place {
    Fixed(Class),
    ByArgs(fn(&Request) -> Class),
}

/// How a command runs.
#[derive(Clone, Copy)]
pub enum Run {
    /// On the data: `handler` against an engine access, outside `MULTI`
    /// as `mode` says; inside one (and in a log entry, and under a
    /// script's `redis.call`) against the transaction.
    Data { mode: Mode, handler: DataFn },
    /// A script or function (`EVAL`, `FCALL`, ...): `handler` outside
    /// `MULTI`; inside one, or applied from the log, the script runs in
    /// the transaction (`scripting::eval_in`).
    Script { handler: ControlFn },
    /// `PUBLISH` and `SPUBLISH`: inside `MULTI` the message is sent once
    /// the transaction commits.
    Publish { handler: ControlFn },
    /// On the connection or the server. `in_tx`, if set, is what it does
    /// inside `MULTI` instead (against the transaction: `DBSIZE` counts
    /// what it sees); otherwise it runs once, in its place.
    Control {
        place: Place,
        handler: ControlFn,
        in_tx: Option<DataFn>,
    },
}

/// What a row of [`rows`] says of a command.
pub struct Row {
    pub name: &'static str,
    pub run: Run,
    /// Flags slsm adds to Redis's (a deliberate difference).
    pub extra: Flags,
    /// A command Redis does not have: its arity and flags.
    pub own: Option<(i32, Flags)>,
}

impl Row {
    pub const fn data(name: &'static str, mode: Mode, handler: DataFn) -> Row {
        Row::new(name, Run::Data { mode, handler })
    }

    pub const fn control(name: &'static str, class: Class, handler: ControlFn) -> Row {
        Row::placed(name, Place::Fixed(class), handler)
    }

    pub const fn placed(name: &'static str, place: Place, handler: ControlFn) -> Row {
        let in_tx = None;
        Row::new(
            name,
            Run::Control {
                place,
                handler,
                in_tx,
            },
        )
    }

    pub const fn new(name: &'static str, run: Run) -> Row {
        Row {
            name,
            run,
            extra: NONE,
            own: None,
        }
    }

    /// Inside `MULTI`, the command runs `f` against the transaction.
    pub const fn in_tx(mut self, f: DataFn) -> Row {
        if let Run::Control { place, handler, .. } = self.run {
            self.run = Run::Control {
                place,
                handler,
                in_tx: Some(f),
            };
        }
        self
    }

    pub const fn adding(mut self, extra: Flags) -> Row {
        self.extra = extra;
        self
    }

    pub const fn own(mut self, arity: i32, flags: Flags) -> Row {
        self.own = Some((arity, flags));
        self
    }
}

/// One subcommand of a container (`CONFIG GET`): Redis's.
pub struct Sub {
    /// Lowercase, without the container's name.
    pub name: &'static str,
    /// The exact count of words, or at least `-arity`.
    pub arity: i32,
    pub flags: Flags,
}

/// A served command: Redis's facts and slsm's row, joined.
pub struct Command {
    pub name: &'static str,
    /// The exact count of words, or at least `-arity`.
    pub arity: i32,
    pub flags: Flags,
    /// Redis's subcommands, for a container (empty otherwise).
    pub subcommands: Vec<Sub>,
    pub run: Run,
}

impl Command {
    /// The handler of a command on the data.
    pub fn data(&self) -> Option<DataFn> {
        match self.run {
            Run::Data { handler, .. } => Some(handler),
            _ => None,
        }
    }

    pub fn is_script(&self) -> bool {
        matches!(self.run, Run::Script { .. })
    }

    /// A container's subcommand `sub` (any case).
    pub fn subcommand(&self, sub: &[u8]) -> Option<&Sub> {
        let sub = String::from_utf8_lossy(sub).to_ascii_lowercase();
        self.subcommands.iter().find(|s| s.name == sub)
    }

    /// The flags of `req`: its subcommand's for a container, else its own.
    pub fn flags_of(&self, req: &[Vec<u8>]) -> Flags {
        match req.get(1).and_then(|sub| self.subcommand(sub)) {
            Some(sub) => sub.flags,
            None => self.flags,
        }
    }

    /// True if `req` changes the data or is sent on to replicas (Redis's
    /// `write` and `may-replicate`: what `CLIENT PAUSE WRITE` holds).
    pub fn may_replicate(&self, req: &Request) -> bool {
        self.flags_of(req).any(WRITE | MAY_REPLICATE)
    }

    /// Where `req` may run in a cluster.
    pub fn class(&self, req: &Request) -> Class {
        match self.run {
            Run::Data { .. } if self.flags.has(WRITE) => Class::Write,
            Run::Data { .. } => Class::Read,
            Run::Script { .. } if self.flags.has(READONLY) => Class::Read,
            Run::Script { .. } => Class::Write,
            Run::Publish { .. } => Class::Leader,
            Run::Control { place, .. } => match place {
                Place::Fixed(class) => class,
                Place::ByArgs(decide) => decide(req),
            },
        }
    }
}
