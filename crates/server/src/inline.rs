//! Inline commands (`SET a "b c"` typed into a telnet session) split into
//! arguments exactly as Redis's `sdssplitargs` splits them: blanks between
//! arguments; double quotes with `\n \r \t \b \a \"` and `\xHH` escapes;
//! single quotes with only `\'`; a quote may open in the middle of an
//! argument (`a"b c"` is `ab c`), and a closing quote must end it. The line
//! ends at its first NUL byte, as C's string does (redis-server 7.0 does
//! not answer such a line at all).

/// Why a line does not split.
#[derive(Debug, PartialEq, Eq)]
pub struct Unbalanced;

/// The arguments of an inline command line (without its line end).
pub fn split_args(line: &[u8]) -> Result<Vec<Vec<u8>>, Unbalanced> {
    let line = match line.iter().position(|&b| b == 0) {
        Some(nul) => &line[..nul],
        None => line,
    };
    let mut args = Vec::new();
    let mut at = 0;
    loop {
        while line.get(at).is_some_and(|&c| is_c_space(c)) {
            at += 1;
        }
        if at == line.len() {
            return Ok(args);
        }
        let (arg, next) = one_arg(line, at)?;
        args.push(arg);
        at = next;
    }
}

/// C's `isspace`.
fn is_c_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r')
}

/// Where we are within one argument.
#[derive(Clone, Copy, PartialEq)]
enum Quote {
    None,
    Double,
    Single,
}

/// The argument starting at `at`, and the offset just past it.
fn one_arg(line: &[u8], mut at: usize) -> Result<(Vec<u8>, usize), Unbalanced> {
    let mut arg = Vec::new();
    let mut quote = Quote::None;
    loop {
        let c = line.get(at).copied();
        let next = line.get(at + 1).copied();
        match quote {
            Quote::Double => match (c, next) {
                (None, _) => return Err(Unbalanced),
                (Some(b'\\'), Some(b'x')) if hex_byte(line, at + 2).is_some() => {
                    arg.push(hex_byte(line, at + 2).unwrap_or_default());
                    at += 3;
                }
                (Some(b'\\'), Some(e)) => {
                    arg.push(unescape(e));
                    at += 1;
                }
                (Some(b'"'), _) => return closed(arg, line, at),
                (Some(c), _) => arg.push(c),
            },
            Quote::Single => match (c, next) {
                (None, _) => return Err(Unbalanced),
                (Some(b'\\'), Some(b'\'')) => {
                    arg.push(b'\'');
                    at += 1;
                }
                (Some(b'\''), _) => return closed(arg, line, at),
                (Some(c), _) => arg.push(c),
            },
            Quote::None => match c {
                None | Some(b' ' | b'\n' | b'\r' | b'\t') => return Ok((arg, at)),
                Some(b'"') => quote = Quote::Double,
                Some(b'\'') => quote = Quote::Single,
                Some(c) => arg.push(c),
            },
        }
        at += 1;
    }
}

/// The argument whose closing quote is at `at`: it must end there.
fn closed(arg: Vec<u8>, line: &[u8], at: usize) -> Result<(Vec<u8>, usize), Unbalanced> {
    match line.get(at + 1) {
        Some(&c) if !is_c_space(c) => Err(Unbalanced),
        _ => Ok((arg, at + 1)),
    }
}

/// The byte a `\c` escape inside double quotes stands for.
fn unescape(c: u8) -> u8 {
    match c {
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        b'b' => 0x08,
        b'a' => 0x07,
        c => c,
    }
}

/// The byte of the two hex digits at `at`, if they are hex digits.
fn hex_byte(line: &[u8], at: usize) -> Option<u8> {
    let digits = std::str::from_utf8(line.get(at..at + 2)?).ok()?;
    match digits.bytes().all(|d| d.is_ascii_hexdigit()) {
        true => u8::from_str_radix(digits, 16).ok(),
        false => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(line: &str) -> Result<Vec<String>, Unbalanced> {
        split_args(line.as_bytes()).map(|args| {
            args.into_iter()
                .map(|a| String::from_utf8_lossy(&a).into_owned())
                .collect()
        })
    }

    #[test]
    fn splits_as_sdssplitargs_does() {
        // Each case checked against redis-server 7.0 (ECHO of the result).
        assert_eq!(split("  set a  b ").unwrap(), ["set", "a", "b"]);
        assert_eq!(split("echo \"a\\x41\\n\"").unwrap(), ["echo", "aA\n"]);
        assert_eq!(split("echo \"\\xZZ\"").unwrap(), ["echo", "xZZ"]);
        assert_eq!(
            split("echo \"a\\\"b\" 'c\\'d'").unwrap(),
            ["echo", "a\"b", "c'd"]
        );
        assert_eq!(split("echo 'a\\nb'").unwrap(), ["echo", "a\\nb"]);
        assert_eq!(split("echo a\"b c\"").unwrap(), ["echo", "ab c"]);
        assert_eq!(split("echo \"\"").unwrap(), ["echo", ""]);
        assert_eq!(
            split("echo \"\\b\\a\\t\"").unwrap(),
            ["echo", "\u{8}\u{7}\t"]
        );
        assert_eq!(split("").unwrap(), Vec::<String>::new());
    }

    #[test]
    fn a_nul_byte_ends_the_line() {
        assert_eq!(split("echo a\0b c").unwrap(), ["echo", "a"]);
    }

    #[test]
    fn unbalanced_quotes_are_errors() {
        assert_eq!(split("echo a\"b"), Err(Unbalanced));
        assert_eq!(split("echo \"a\"b"), Err(Unbalanced));
        assert_eq!(split("echo 'a"), Err(Unbalanced));
        assert_eq!(split("echo \"a\\"), Err(Unbalanced));
    }
}
