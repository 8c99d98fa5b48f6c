//! Redis's glob patterns (`KEYS`, `SCAN MATCH`, `CONFIG GET`): `*`, `?`,
//! `[abc]`, `[^a-z]`, and `\` to escape.

/// Most `*`s (runs of them count as one, a trailing one not at all) a
/// pattern that matches anything may have: Redis's protection against
/// abusive patterns stops its matcher past 1,000 nested `*`s, so such a
/// pattern matches nothing there, and here too.
const MAX_STARS: usize = 1000;

/// True if `text` matches `pattern`.
pub fn matches(pattern: &[u8], text: &[u8]) -> bool {
    if inner_stars(pattern) > MAX_STARS {
        return false;
    }
    let (mut p, mut t) = (0, 0);
    // Where to resume after the last `*`: (pattern index, text index).
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() {
            match pattern[p] {
                b'*' => {
                    star = Some((p, t));
                    p += 1;
                    continue;
                }
                b'?' => {
                    p += 1;
                    t += 1;
                    continue;
                }
                b'[' => {
                    if let Some((ok, next)) = class(pattern, p, text[t]) {
                        if ok {
                            p = next;
                            t += 1;
                            continue;
                        }
                    }
                }
                b'\\' if p + 1 < pattern.len() && pattern[p + 1] == text[t] => {
                    p += 2;
                    t += 1;
                    continue;
                }
                c if c == text[t] => {
                    p += 1;
                    t += 1;
                    continue;
                }
                _ => {}
            }
        }
        match star {
            Some((sp, st)) => {
                p = sp + 1;
                t = st + 1;
                star = Some((sp, st + 1));
            }
            None => return false,
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

/// The runs of `*` in `pattern` that are not at its end (escaped ones and
/// those in a class aside).
fn inner_stars(pattern: &[u8]) -> usize {
    let (mut runs, mut i) = (0, 0);
    while i < pattern.len() {
        match pattern[i] {
            b'\\' => i += 2,
            b'[' => {
                i += 1;
                while i < pattern.len() && pattern[i] != b']' {
                    i += if pattern[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'*' => {
                while pattern.get(i) == Some(&b'*') {
                    i += 1;
                }
                runs += (i < pattern.len()) as usize;
            }
            _ => i += 1,
        }
    }
    runs
}

/// Whether `c` is in the class opening at `pattern[at]` (`[`), and the
/// index after it; `None` if the class is not closed.
fn class(pattern: &[u8], at: usize, c: u8) -> Option<(bool, usize)> {
    let mut i = at + 1;
    let negate = pattern.get(i) == Some(&b'^');
    if negate {
        i += 1;
    }
    let mut found = false;
    while i < pattern.len() && pattern[i] != b']' {
        if pattern[i] == b'\\' && i + 1 < pattern.len() {
            found |= pattern[i + 1] == c;
            i += 2;
        } else if i + 2 < pattern.len() && pattern[i + 1] == b'-' && pattern[i + 2] != b']' {
            let (lo, hi) = (
                pattern[i].min(pattern[i + 2]),
                pattern[i].max(pattern[i + 2]),
            );
            found |= (lo..=hi).contains(&c);
            i += 3;
        } else {
            found |= pattern[i] == c;
            i += 1;
        }
    }
    (i < pattern.len()).then_some((found != negate, i + 1))
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn globs() {
        assert!(matches(b"*", b"anything"));
        assert!(matches(b"h?llo", b"hello"));
        assert!(matches(b"h*llo", b"heeeello"));
        assert!(matches(b"h[ae]llo", b"hallo"));
        assert!(!matches(b"h[^e]llo", b"hello"));
        assert!(matches(b"h[a-b]llo", b"hbllo"));
        assert!(matches(b"user:*:name", b"user:42:name"));
        assert!(!matches(b"user:*:name", b"user:42:age"));
        assert!(matches(b"a\\*b", b"a*b"));
        assert!(!matches(b"a\\*b", b"axb"));
        assert!(matches(b"", b""));
        assert!(!matches(b"", b"a"));
    }

    /// Redis's matcher gives up past 1,000 nested stars (its suite's
    /// "very long nested loops" regression).
    #[test]
    fn a_pattern_of_more_than_1000_stars_matches_nothing() {
        let key = vec![b'a'; 50_000];
        assert!(!matches(&b"*?".repeat(50_000), &key));
        assert!(matches(&b"*?".repeat(1000), &key));
        assert!(!matches(&b"*?".repeat(1001), &key));
        // Runs of stars count once; a trailing one, escaped ones and those
        // in a class not at all.
        assert!(matches(
            &b"**a"
                .repeat(1000)
                .iter()
                .chain(b"*")
                .copied()
                .collect::<Vec<_>>(),
            &key
        ));
        assert!(matches(
            &[b"\\*".repeat(1200), b"*".to_vec()].concat(),
            &b"*".repeat(1200)
        ));
        assert!(matches(&b"[*]".repeat(1200), &b"*".repeat(1200)));
    }
}
