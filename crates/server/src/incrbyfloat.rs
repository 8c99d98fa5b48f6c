//! INCRBYFLOAT's arithmetic, exactly as Redis does it.
//!
//! Redis adds in C's `long double` (80-bit extended precision on x86-64,
//! 128-bit on most other 64-bit Linux targets) and prints the sum with
//! `%.17Lf`, trailing zeros removed: `SET f 1e10` then `INCRBYFLOAT f 3.1`
//! answers `10000000003.09999999962747097`, and `1e400` is a valid
//! increment. Rust has no `long double`, and an `f64` gives other digits
//! (`10000000003.1`) and other limits, so the few lines that parse, add
//! and print are C (`csrc/incrbyfloat.c`), compiled by the build script
//! with the platform's C compiler: the same type Redis gets on the same
//! platform.

use std::os::raw::{c_char, c_long};

/// The longest text parsed or produced (Redis's `MAX_LONG_DOUBLE_CHARS`).
const MAX_CHARS: usize = 5 * 1024;

extern "C" {
    fn slsm_incrbyfloat(
        cur: *const c_char,
        cur_len: usize,
        by: *const c_char,
        by_len: usize,
        out: *mut c_char,
    ) -> c_long;
}

/// Why an increment failed.
#[derive(Debug, PartialEq, Eq)]
pub enum IncrError {
    /// The stored value or the increment is not a float (Redis's
    /// "value is not a valid float").
    NotAFloat,
    /// The sum is NaN or infinite.
    NotFinite,
}

/// The text of `current` (absent: 0) plus `by`, as Redis's INCRBYFLOAT
/// stores and returns it.
pub fn incr_by_float(current: Option<&[u8]>, by: &[u8]) -> Result<Vec<u8>, IncrError> {
    // On the stack: the text is at most MAX_CHARS, and usually a few bytes.
    let mut out = [0u8; MAX_CHARS];
    let (cur_ptr, cur_len) = match current {
        Some(c) => (c.as_ptr().cast::<c_char>(), c.len()),
        None => (std::ptr::null(), 0),
    };
    // SAFETY: `cur_ptr` is null or points to `cur_len` readable bytes, `by`
    // to `by.len()`; the C side copies at most MAX_CHARS - 1 of either into
    // its own buffer (longer input is rejected before any copy) and writes
    // at most MAX_CHARS bytes to `out`, which has that many.
    let n = unsafe {
        slsm_incrbyfloat(
            cur_ptr,
            cur_len,
            by.as_ptr().cast(),
            by.len(),
            out.as_mut_ptr().cast(),
        )
    };
    match n {
        -1 | -2 => Err(IncrError::NotAFloat),
        n if n < 0 => Err(IncrError::NotFinite),
        n => Ok(out[..n as usize].to_vec()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn incr(cur: Option<&str>, by: &str) -> Result<String, IncrError> {
        incr_by_float(cur.map(str::as_bytes), by.as_bytes()).map(|v| String::from_utf8(v).unwrap())
    }

    #[test]
    fn answers_as_redis_does() {
        // The examples of Redis's INCRBYFLOAT documentation.
        assert_eq!(incr(Some("10.50"), "0.1").unwrap(), "10.6");
        assert_eq!(incr(Some("10.6"), "-5").unwrap(), "5.6");
        assert_eq!(incr(Some("5.0e3"), "2.0e2").unwrap(), "5200");
        assert_eq!(incr(None, "3").unwrap(), "3");
        assert_eq!(incr(Some("1"), "-1").unwrap(), "0");
        assert_eq!(incr(Some("-0.0"), "0").unwrap(), "0");
        assert_eq!(incr(Some("0"), "0x10").unwrap(), "16");
    }

    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    #[test]
    fn extended_precision_digits_match_redis_on_x86_64() {
        // Measured against redis-server 7.0 on x86-64.
        assert_eq!(
            incr(Some("10000000000.0"), "3.1").unwrap(),
            "10000000003.09999999962747097"
        );
        assert!(incr(Some("0"), "1e400")
            .unwrap()
            .starts_with("10000000000000000000281"));
    }

    #[test]
    fn rejects_what_redis_rejects() {
        for bad in ["", " 1", "1 ", "abc", "nan", "1e99999", "1.2.3"] {
            assert_eq!(incr(Some("1"), bad), Err(IncrError::NotAFloat), "{bad:?}");
            assert_eq!(incr(Some(bad), "1"), Err(IncrError::NotAFloat), "{bad:?}");
        }
        assert_eq!(
            incr(Some("1"), &"1".repeat(MAX_CHARS)),
            Err(IncrError::NotAFloat)
        );
        assert_eq!(incr(Some("0"), "inf"), Err(IncrError::NotFinite));
        assert_eq!(incr(Some("-inf"), "1"), Err(IncrError::NotFinite));
    }
}
