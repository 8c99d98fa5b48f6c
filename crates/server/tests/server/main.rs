//! The server's integration tests, one module per command family, in one
//! test binary: each test file used to be its own binary, and linking 33
//! of them against the server, tokio and the redis client took minutes of
//! every CI run. `fdlimit.rs` stays a binary of its own: it lowers the
//! process's open-file limit.

#[path = "../common/mod.rs"]
mod common;

mod acl;
mod bitfield;
mod bitmaps;
mod blocking;
mod busy;
mod client_modes;
mod collections;
mod command_docs;
mod commands;
mod compat;
mod config;
mod dump;
mod dump_streams;
mod fidelity;
mod functions;
mod geo;
mod hyperloglog;
mod introspection_stress;
mod latency;
mod lcs;
mod maxmemory;
mod monitor;
mod mpop_copy;
mod notifications;
mod object;
mod pubsub;
mod random_picks;
mod redis;
mod script_flags;
mod script_libraries;
mod script_sandbox;
mod scripting;
mod slowlog;
mod sort;
mod stores;
mod stream_groups;
mod stream_info;
mod streams;
mod tls;
mod tracking;
mod wait;
mod watch;
mod zset_algebra;
