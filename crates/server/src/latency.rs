//! `LATENCY` (LATEST HISTORY RESET DOCTOR GRAPH HISTOGRAM HELP), answered
//! as Redis 7.0 answers it with latency monitoring off
//! (`latency-monitor-threshold 0`, its default) and per-command latency
//! tracking off: no events, no histograms. This server keeps neither
//! (the slow log, `SLOWLOG`, records slow commands), so `CONFIG GET`
//! reports both off and `CONFIG SET` refuses to turn them on. Monitoring
//! tools that poll `LATENCY LATEST` get Redis's empty answer, not an
//! unknown command.

use crate::commands::{fail, Outcome};
use crate::resp::Reply;

const HELP: &[&str] = &[
    "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DOCTOR",
    "    Return a human readable latency analysis report.",
    "GRAPH <event>",
    "    Return an ASCII latency graph for the <event> class.",
    "HISTORY <event>",
    "    Return time-latency samples for the <event> class.",
    "LATEST",
    "    Return the latest latency samples for all events.",
    "RESET [<event> ...]",
    "    Reset latency data of one or more <event> classes.",
    "    (default: reset all data for all event classes)",
    "HISTOGRAM [COMMAND ...]",
    "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
    "    If no commands are specified then all histograms are replied.",
    "HELP",
    "    Prints this help.",
];

const DOCTOR: &str = "Latency monitoring is not kept by slsm serve: LATENCY LATEST and HISTORY are always empty, and latency-monitor-threshold stays 0. Slow commands are recorded by the slow log (SLOWLOG GET).\n";

pub fn command(a: &[Vec<u8>]) -> Outcome {
    crate::registry::check_subcommand("latency", a)?;
    Ok(match a[1].to_ascii_lowercase().as_slice() {
        b"help" => Reply::Array(HELP.iter().map(|l| Reply::Simple(l.to_string())).collect()),
        b"latest" | b"history" => Reply::Array(Vec::new()),
        b"reset" => Reply::Int(0),
        b"doctor" => Reply::Verbatim(DOCTOR.as_bytes().to_vec()),
        b"histogram" => Reply::Map(Vec::new()),
        _ => {
            return Err(fail(&format!(
                "ERR No samples available for event '{}'",
                String::from_utf8_lossy(&a[2])
            )))
        }
    })
}
