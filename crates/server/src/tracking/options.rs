//! What `CLIENT TRACKING ON` asks for: a leaf, shared by the session
//! (its [`Mode`]) and the tables.

/// What a tracking client's session needs to know of its own mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mode {
    pub bcast: bool,
    pub optin: bool,
    pub optout: bool,
}

/// `CLIENT TRACKING ON`'s options.
#[derive(Clone, Debug, Default)]
pub struct Options {
    pub mode: Mode,
    pub noloop: bool,
    /// The client the messages go to (0: the tracking client itself).
    pub redirect: u64,
    pub prefixes: Vec<Vec<u8>>,
}
