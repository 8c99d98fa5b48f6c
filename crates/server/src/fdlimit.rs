//! The open-files limit a server needs: a descriptor per client, plus the
//! engine's (run files, logs, the manifest, the lock) and the listener's.
//! As Redis does at startup (`adjustOpenFilesLimit`), the soft limit is
//! raised to what `maxclients` needs, as far as the hard limit allows (or
//! further, for a process that may raise the hard limit); where it cannot
//! be, `maxclients` is lowered to what the limit leaves, with a warning.
//! Otherwise clients could take every descriptor, and the engine's next log
//! or run file would fail to open ("Too many open files"), failing writes.

/// Descriptors kept beyond the clients' (at most half of a small limit).
const RESERVED: u64 = 1024;

/// The `maxclients` the open-files limit allows for `asked`, after raising
/// the limit as far as it goes, and a warning if that is fewer than asked.
pub fn fit_maxclients(asked: usize) -> (usize, Option<String>) {
    let Some((soft, hard)) = limits() else {
        return (asked, None); // no limit to read: nothing to fit
    };
    let needed = (asked as u64).saturating_add(RESERVED);
    let limit = match soft >= needed {
        true => soft,
        false => raise(needed, hard).unwrap_or(soft),
    };
    let reserved = RESERVED.min(limit / 2);
    let allowed = limit.saturating_sub(reserved).max(1);
    match allowed >= asked as u64 {
        true => (asked, None),
        false => (
            allowed as usize,
            Some(format!(
                "the open files limit is {limit} (ulimit -n), which leaves {allowed} of the \
                 --maxclients {asked} asked for once the database's files are kept: serving \
                 at most {allowed} clients (raise the limit to {needed} for all of them)"
            )),
        ),
    }
}

/// The soft and hard `RLIMIT_NOFILE` (`u64::MAX`: unlimited).
#[cfg(unix)]
fn limits() -> Option<(u64, u64)> {
    let mut now = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one `rlimit` to the pointer, which points to
    // a live, writable one.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut now) } == 0;
    ok.then(|| (as_u64(now.rlim_cur), as_u64(now.rlim_max)))
}

#[cfg(not(unix))]
fn limits() -> Option<(u64, u64)> {
    None
}

#[cfg(unix)]
// `rlim_t` is `u64` here but narrower on some 32-bit targets.
#[allow(clippy::useless_conversion)]
fn as_u64(limit: libc::rlim_t) -> u64 {
    match limit == libc::RLIM_INFINITY {
        true => u64::MAX,
        false => u64::from(limit),
    }
}

/// Raises the soft limit to `needed`: past the hard limit if the process
/// may (root), else to the hard limit. The new soft limit, if it changed.
#[cfg(unix)]
fn raise(needed: u64, hard: u64) -> Option<u64> {
    let set = |soft: u64, hard: u64| {
        let new = libc::rlimit {
            rlim_cur: soft as libc::rlim_t,
            rlim_max: hard as libc::rlim_t,
        };
        // SAFETY: setrlimit reads one `rlimit` from the pointer, which
        // points to a live one; it changes only this process's limit.
        unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &new) == 0 }
    };
    if needed > hard && hard != u64::MAX && set(needed, needed) {
        return Some(needed);
    }
    let soft = needed.min(hard);
    set(soft, hard).then_some(soft)
}

#[cfg(not(unix))]
fn raise(_needed: u64, _hard: u64) -> Option<u64> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limit_that_holds_the_clients_keeps_them_all() {
        let (soft, _) = limits().unwrap();
        let asked = (soft.min(1 << 20) / 4) as usize;
        assert_eq!(fit_maxclients(asked), (asked, None));
    }

    #[test]
    fn more_clients_than_any_limit_allows_are_cut_with_a_warning() {
        let (allowed, warning) = fit_maxclients(usize::MAX / 2);
        let (soft, _) = limits().unwrap();
        assert!(allowed < usize::MAX / 2);
        assert!(allowed as u64 <= soft, "{allowed} clients, limit {soft}");
        assert!(warning.unwrap().contains("open files limit"));
    }
}
