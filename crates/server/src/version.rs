//! What the server says it is, and the clock replies it shares: leaves
//! that anything may use.

use crate::resp::Reply;

/// The version clients see in HELLO and INFO.
pub const REDIS_VERSION: &str = "7.2.0";

/// `TIME`: the Unix time, seconds and microseconds, as two bulk strings.
pub fn time_reply() -> Reply {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    Reply::Array(vec![
        Reply::bulk(now.as_secs().to_string()),
        Reply::bulk(now.subsec_micros().to_string()),
    ])
}
