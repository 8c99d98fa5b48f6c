//! `LATENCY` answers as redis-server 7.0 answered the same requests with
//! latency monitoring off, its default (`REDIS_REPLIES`): no events, no
//! samples, Redis's errors; `DOCTOR` says why in this server's words, and
//! `HISTOGRAM` is empty, as Redis's with latency tracking off.

use crate::common;
use common::{expect_replies, Server};

const REDIS_REPLIES: &[(&[&str], &str)] = &[
    (&["latency", "latest"], "*0\r\n"),
    (&["latency", "history", "command"], "*0\r\n"),
    (&["latency", "history"], "-ERR wrong number of arguments for 'latency|history' command\r\n"),
    (&["latency", "reset"], ":0\r\n"),
    (&["latency", "reset", "command", "x"], ":0\r\n"),
    (&["latency", "graph", "command"], "-ERR No samples available for event 'command'\r\n"),
    (&["latency", "help"], "*17\r\n+LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n+DOCTOR\r\n+    Return a human readable latency analysis report.\r\n+GRAPH <event>\r\n+    Return an ASCII latency graph for the <event> class.\r\n+HISTORY <event>\r\n+    Return time-latency samples for the <event> class.\r\n+LATEST\r\n+    Return the latest latency samples for all events.\r\n+RESET [<event> ...]\r\n+    Reset latency data of one or more <event> classes.\r\n+    (default: reset all data for all event classes)\r\n+HISTOGRAM [COMMAND ...]\r\n+    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.\r\n+    If no commands are specified then all histograms are replied.\r\n+HELP\r\n+    Prints this help.\r\n"),
    (&["latency", "foo"], "-ERR unknown subcommand 'foo'. Try LATENCY HELP.\r\n"),
    (&["latency"], "-ERR wrong number of arguments for 'latency' command\r\n"),
    (&["latency", "graph"], "-ERR wrong number of arguments for 'latency|graph' command\r\n"),
    (&["config", "get", "latency-monitor-threshold"], "*2\r\n$25\r\nlatency-monitor-threshold\r\n$1\r\n0\r\n"),
    (&["latency", "histogram"], "*0\r\n"),
    (&["config", "get", "latency-tracking"], "*2\r\n$16\r\nlatency-tracking\r\n$2\r\nno\r\n"),
];

#[test]
fn latency_answers_as_redis_with_monitoring_off() {
    let s = Server::start(None);
    expect_replies(&s, REDIS_REPLIES);
    let mut c = s.conn();
    let doctor: String = redis::cmd("LATENCY").arg("DOCTOR").query(&mut c).unwrap();
    assert!(doctor.contains("SLOWLOG"), "{doctor}");
}
