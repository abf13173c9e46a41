//! Repairs for lines that are JSON in grammar but that strict parsers refuse: invalid UTF-8
//! bytes (replaced by U+FFFD, as `String::from_utf8_lossy` does) and lone UTF-16 surrogate
//! escapes such as `\ud83d` without its pair (replaced by the escape `\ufffd`).

use std::borrow::Cow;

/// Applies both repairs; `Cow::Borrowed` when the line needed neither.
pub fn repair_line(line: &[u8]) -> Cow<'_, [u8]> {
    let utf8 = String::from_utf8_lossy(line);
    match utf8 {
        Cow::Borrowed(s) => match fix_lone_surrogates(s.as_bytes()) {
            Some(fixed) => Cow::Owned(fixed),
            None => Cow::Borrowed(line),
        },
        Cow::Owned(s) => {
            let bytes = s.into_bytes();
            match fix_lone_surrogates(&bytes) {
                Some(fixed) => Cow::Owned(fixed),
                None => Cow::Owned(bytes),
            }
        }
    }
}

fn hex4(b: &[u8]) -> Option<u16> {
    if b.len() < 4 {
        return None;
    }
    let s = std::str::from_utf8(&b[..4]).ok()?;
    u16::from_str_radix(s, 16).ok()
}

fn is_high(u: u16) -> bool {
    (0xD800..0xDC00).contains(&u)
}

fn is_low(u: u16) -> bool {
    (0xDC00..0xE000).contains(&u)
}

/// Rewrites every `\uXXXX` escape that is an unpaired surrogate to `\ufffd`. Returns `None`
/// when there was none. Escaped backslashes (`\\ud83d`) are not escapes and are left alone.
pub fn fix_lone_surrogates(line: &[u8]) -> Option<Vec<u8>> {
    // Fast path: no `\u` followed by d/D at all.
    if !memchr::memmem::find_iter(line, b"\\u")
        .any(|i| matches!(line.get(i + 2), Some(b'd' | b'D')))
    {
        return None;
    }
    let mut out: Option<Vec<u8>> = None;
    let mut copied = 0;
    let mut i = 0;
    while let Some(rel) = memchr::memchr(b'\\', &line[i..]) {
        let at = i + rel;
        match line.get(at + 1) {
            Some(b'u') => {
                let Some(unit) = hex4(&line[at + 2..]) else {
                    i = at + 2;
                    continue;
                };
                if is_high(unit) {
                    let next = &line[at + 6..];
                    if next.starts_with(b"\\u") && hex4(&next[2..]).is_some_and(is_low) {
                        i = at + 12;
                        continue;
                    }
                } else if !is_low(unit) {
                    i = at + 6;
                    continue;
                }
                let buf = out.get_or_insert_with(|| Vec::with_capacity(line.len()));
                buf.extend_from_slice(&line[copied..at]);
                buf.extend_from_slice(b"\\ufffd");
                copied = at + 6;
                i = at + 6;
            }
            Some(_) => i = at + 2,
            None => break,
        }
    }
    let mut buf = out?;
    buf.extend_from_slice(&line[copied..]);
    Some(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixed(s: &str) -> String {
        String::from_utf8(
            fix_lone_surrogates(s.as_bytes()).unwrap_or_else(|| s.as_bytes().to_vec()),
        )
        .expect("utf8")
    }

    #[test]
    fn lone_surrogates_become_replacement() {
        assert_eq!(fixed(r#""a\ud83d b""#), r#""a\ufffd b""#);
        assert_eq!(fixed(r#""\udc00""#), r#""\ufffd""#);
        assert_eq!(fixed(r#""\ud83d""#), r#""\ufffd""#);
        assert_eq!(fixed(r#""\uD83D\uD83D\uDE00""#), r#""\ufffd\uD83D\uDE00""#);
    }

    #[test]
    fn pairs_and_escaped_backslashes_untouched() {
        assert!(fix_lone_surrogates(br#""\ud83d\ude00""#).is_none());
        assert!(fix_lone_surrogates(br#""\\ud83d""#).is_none());
        assert!(fix_lone_surrogates(br#""\\\\ud83d \u0041""#).is_none());
        assert_eq!(fixed(r#""\\\ud83d""#), r#""\\\ufffd""#);
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        let got = repair_line(b"{\"a\":\"\xff\xc3\"}");
        assert_eq!(&*got, "{\"a\":\"\u{FFFD}\u{FFFD}\"}".as_bytes());
    }
}
