//! A small JSON tokenizer for the slow path.
//!
//! * [`walk`] visits every string literal of a line with its structural context (strict JSON,
//!   several top-level values allowed, so `{..}{..}` lines work);
//! * [`walk_lenient`] is the fallback for lines that are not JSON: it visits quoted runs and
//!   the raw gaps between them;
//! * [`Decoded`] unescapes one literal and maps decoded offsets back to raw offsets, so a
//!   replacement touches only the bytes of the secret itself.

use memchr::{memchr, memchr2};

pub(crate) use crate::unescape::Decoded;

/// One open container while walking.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Frame {
    /// `key`: raw content span of the current member's key; `ty`: span of this object's
    /// `"type"` string value once seen.
    Object {
        key: Option<(usize, usize)>,
        ty: Option<(usize, usize)>,
    },
    Array {
        index: usize,
    },
}

/// Where a literal sits.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Place<'s> {
    /// Inside valid JSON: the open containers, outermost first.
    Strict(&'s [Frame]),
    /// In a line that is not valid JSON: the key the literal is the value of, if any.
    Lenient(Option<(usize, usize)>),
}

/// Receives literals (content spans, without the quotes) and, in lenient mode, raw gaps.
pub(crate) trait Visitor {
    fn literal(&mut self, src: &[u8], start: usize, end: usize, is_key: bool, place: Place<'_>);
    fn gap(&mut self, src: &[u8], start: usize, end: usize);
}

/// Walks `src` as a sequence of JSON values. `Err(pos)` when it is not valid JSON; the
/// visitor may have seen some literals by then.
pub(crate) fn walk(src: &[u8], v: &mut impl Visitor) -> Result<(), usize> {
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = skip_ws(src, 0);
    'value: loop {
        if stack.is_empty() && i >= src.len() {
            return Ok(());
        }
        match *src.get(i).ok_or(i)? {
            b'{' => {
                stack.push(Frame::Object {
                    key: None,
                    ty: None,
                });
                i = skip_ws(src, i + 1);
                if src.get(i) == Some(&b'}') {
                    stack.pop();
                    i += 1;
                } else {
                    i = key(src, i, &mut stack, v)?;
                    continue 'value;
                }
            }
            b'[' => {
                stack.push(Frame::Array { index: 0 });
                i = skip_ws(src, i + 1);
                if src.get(i) == Some(&b']') {
                    stack.pop();
                    i += 1;
                } else {
                    continue 'value;
                }
            }
            b'"' => {
                let end = string_end(src, i + 1).ok_or(src.len())?;
                v.literal(src, i + 1, end, false, Place::Strict(&stack));
                if let Some(Frame::Object {
                    key: Some((ks, ke)),
                    ty,
                }) = stack.last_mut()
                    && &src[*ks..*ke] == b"type"
                {
                    *ty = Some((i + 1, end));
                }
                i = end + 1;
            }
            b't' => i = word(src, i, b"true")?,
            b'f' => i = word(src, i, b"false")?,
            b'n' => i = word(src, i, b"null")?,
            b'-' | b'0'..=b'9' => {
                i += src[i..]
                    .iter()
                    .take_while(|b| matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
                    .count();
            }
            _ => return Err(i),
        }
        // After a value: separators and closing brackets.
        loop {
            i = skip_ws(src, i);
            match stack.last_mut() {
                None => continue 'value,
                Some(Frame::Array { index }) => match src.get(i) {
                    Some(b',') => {
                        *index += 1;
                        i = skip_ws(src, i + 1);
                        continue 'value;
                    }
                    Some(b']') => {
                        stack.pop();
                        i += 1;
                    }
                    _ => return Err(i),
                },
                Some(Frame::Object { .. }) => match src.get(i) {
                    Some(b',') => {
                        i = key(src, skip_ws(src, i + 1), &mut stack, v)?;
                        continue 'value;
                    }
                    Some(b'}') => {
                        stack.pop();
                        i += 1;
                    }
                    _ => return Err(i),
                },
            }
        }
    }
}

/// Parses `"key" :` at `i`; returns the position of the member's value.
fn key(src: &[u8], i: usize, stack: &mut [Frame], v: &mut impl Visitor) -> Result<usize, usize> {
    if src.get(i) != Some(&b'"') {
        return Err(i);
    }
    let end = string_end(src, i + 1).ok_or(src.len())?;
    if let Some(Frame::Object { key, .. }) = stack.last_mut() {
        *key = Some((i + 1, end));
    }
    v.literal(src, i + 1, end, true, Place::Strict(stack));
    let j = skip_ws(src, end + 1);
    if src.get(j) != Some(&b':') {
        return Err(j);
    }
    Ok(skip_ws(src, j + 1))
}

fn word(src: &[u8], i: usize, w: &[u8]) -> Result<usize, usize> {
    if src[i..].starts_with(w) {
        Ok(i + w.len())
    } else {
        Err(i)
    }
}

fn skip_ws(src: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = src.get(i) {
        i += 1;
    }
    i
}

/// Index of the closing quote of a string whose content starts at `i`.
pub(crate) fn string_end(src: &[u8], mut i: usize) -> Option<usize> {
    loop {
        let j = i + memchr2(b'"', b'\\', src.get(i..)?)?;
        if src[j] == b'"' {
            return Some(j);
        }
        i = j + 2;
    }
}

/// Fallback for lines that are not JSON: quoted runs are literals (a run followed by `:` is
/// a key), everything between them is a raw gap; an unterminated run ends the line.
pub(crate) fn walk_lenient(src: &[u8], v: &mut impl Visitor) {
    let mut i = 0;
    let mut last_key = None;
    while let Some(q) = memchr(b'"', &src[i..]) {
        let s = i + q + 1;
        v.gap(src, i, s - 1);
        let prev = src[..s - 1].iter().rev().find(|b| !b.is_ascii_whitespace());
        let value_of = if prev == Some(&b':') { last_key } else { None };
        let Some(e) = string_end(src, s) else {
            v.literal(src, s, src.len(), false, Place::Lenient(value_of));
            return;
        };
        let is_key = src.get(skip_ws(src, e + 1)) == Some(&b':');
        v.literal(src, s, e, is_key, Place::Lenient(value_of));
        if is_key {
            last_key = Some((s, e));
        }
        i = e + 1;
    }
    v.gap(src, i, src.len());
}

/// Appends the JSON path of a literal in `place` (`message.content[0].input.command`).
pub(crate) fn path(src: &[u8], place: Place<'_>, out: &mut String) {
    match place {
        Place::Strict(stack) => {
            for f in stack {
                match *f {
                    Frame::Object {
                        key: Some((s, e)), ..
                    } => push_key(&src[s..e], out),
                    Frame::Object { key: None, .. } => {}
                    Frame::Array { index } => {
                        out.push('[');
                        out.push_str(&index.to_string());
                        out.push(']');
                    }
                }
            }
            if out.starts_with('.') {
                out.remove(0);
            }
        }
        Place::Lenient(key) => {
            out.push('?');
            if let Some((s, e)) = key {
                push_key(&src[s..e], out);
            }
        }
    }
}

fn push_key(raw: &[u8], out: &mut String) {
    let plain = !raw.is_empty()
        && !raw[0].is_ascii_digit()
        && raw
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$' | b'-'));
    if plain {
        out.push('.');
        out.push_str(&String::from_utf8_lossy(raw));
    } else {
        out.push_str("[\"");
        out.push_str(&String::from_utf8_lossy(raw));
        out.push_str("\"]");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Collect(Vec<(String, bool, String)>);
    impl Visitor for Collect {
        fn literal(&mut self, src: &[u8], s: usize, e: usize, is_key: bool, place: Place<'_>) {
            let mut p = String::new();
            path(src, place, &mut p);
            self.0
                .push((String::from_utf8_lossy(&src[s..e]).into_owned(), is_key, p));
        }
        fn gap(&mut self, _: &[u8], _: usize, _: usize) {}
    }

    #[test]
    fn walks_paths() {
        let src = br#"{"a":[1,{"b":"x\"y"},"z"],"c":{"d":null,"e":"w"}} {"f":"g"}"#;
        let mut c = Collect::default();
        walk(src, &mut c).expect("valid");
        let vals: Vec<_> =
            c.0.iter()
                .filter(|x| !x.1)
                .map(|x| (x.0.as_str(), x.2.as_str()))
                .collect();
        assert_eq!(
            vals,
            [
                ("x\\\"y", "a[1].b"),
                ("z", "a[2]"),
                ("w", "c.e"),
                ("g", "f")
            ]
        );
    }

    #[test]
    fn rejects_garbage() {
        for bad in [
            &br#"{"a":1"#[..],
            br#"{"a" 1}"#,
            b"[1,]x",
            br#"{"a":"x"#,
            br#"{"a":tru}"#,
        ] {
            assert!(
                walk(bad, &mut Collect::default()).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
