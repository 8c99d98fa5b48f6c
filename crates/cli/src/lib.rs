//! The `slsm` command line's library: a db_bench-compatible benchmark harness
//! generic over the engine ([`bench`]), the slsm adapter ([`engine`]), and
//! the admin and plot commands of the binary.

pub mod allocator;
pub mod bench;
pub mod cluster_admin;
#[cfg(feature = "engine")]
pub mod engine;

/// The message for a failed command: each cause in `e`'s chain once. An
/// error that already quotes its cause (slsm's I/O error names the file and
/// then the OS message) is not followed by that cause again, which `{:#}`
/// would print.
pub fn error_message(e: &anyhow::Error) -> String {
    let mut message = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if message.ends_with(&text) {
            continue;
        }
        if !message.is_empty() {
            message.push_str(": ");
        }
        message.push_str(&text);
    }
    message
}

#[cfg(test)]
mod tests {
    use super::error_message;

    /// Like slsm's I/O error: quotes its source and returns it.
    #[derive(Debug)]
    struct Quoting(std::io::Error);

    impl std::fmt::Display for Quoting {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "I/O error on /db/000006.wal: {}", self.0)
        }
    }

    impl std::error::Error for Quoting {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn a_cause_already_quoted_is_not_repeated() {
        let io = std::io::Error::other("No space left on device");
        let e = anyhow::Error::new(Quoting(io)).context("fillrandom");
        assert_eq!(
            error_message(&e),
            "fillrandom: I/O error on /db/000006.wal: No space left on device"
        );
        let plain = anyhow::anyhow!("inner").context("outer");
        assert_eq!(error_message(&plain), "outer: inner");
    }
}
