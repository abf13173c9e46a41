//! A line source whose lines are rewritten on the way through: an analysis that must see
//! only redacted text (`skein export --redact`) reads the redacted lines as if they were the
//! input, so that every fact taken from them (text, titles, tool inputs, paths) is redacted
//! without each consumer redacting its own copy.

use std::io;

use crate::lines::{Line, LineSource};

/// Lines of `inner`, each non-blank line's text passed through `map`.
///
/// `map(text, out)` appends the new text to `out` and returns whether it differs from
/// `text`; an unchanged line is handed on as it is (no copy). A rewritten line keeps its
/// number, offset and terminator; its `text` and `raw` are the new bytes, so `raw` is no
/// longer the input's bytes and [`Line::len`] is the new length. [`LineSource::consumed`] still
/// counts input bytes. Lines over the maximum length (no bytes kept) pass unchanged.
#[derive(Debug)]
pub struct MapLines<S, F> {
    inner: S,
    map: F,
    /// The rewritten text followed by the line's terminator.
    buf: Vec<u8>,
    mapped: bool,
}

impl<S, F> MapLines<S, F> {
    pub fn new(inner: S, map: F) -> Self {
        Self {
            inner,
            map,
            buf: Vec::new(),
            mapped: false,
        }
    }
}

impl<S: LineSource, F: FnMut(&[u8], &mut Vec<u8>) -> bool> LineSource for MapLines<S, F> {
    fn advance(&mut self) -> io::Result<bool> {
        self.mapped = false;
        if !self.inner.advance()? {
            return Ok(false);
        }
        let line = self.inner.line();
        if line.too_long.is_none() && !line.is_blank() {
            self.buf.clear();
            if (self.map)(line.text, &mut self.buf) {
                self.buf.extend_from_slice(&line.raw[line.text.len()..]);
                self.mapped = true;
            }
        }
        Ok(true)
    }

    fn line(&self) -> Line<'_> {
        let line = self.inner.line();
        if !self.mapped {
            return line;
        }
        let end = self.buf.len() - (line.raw.len() - line.text.len());
        Line {
            text: &self.buf[..end],
            raw: &self.buf,
            ..line
        }
    }

    fn had_bom(&self) -> bool {
        self.inner.had_bom()
    }

    fn consumed(&self) -> u64 {
        self.inner.consumed()
    }

    fn set_max_line(&mut self, max: usize) {
        self.inner.set_max_line(max);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lines::SliceLines;

    #[test]
    fn rewrites_changed_lines_and_keeps_the_rest() {
        let data = b"keep\r\nsecret here\n\nlast secret";
        let upper = |t: &[u8], out: &mut Vec<u8>| {
            if t.windows(6).any(|w| w == b"secret") {
                out.extend_from_slice(b"[X]");
                true
            } else {
                out.extend_from_slice(t);
                false
            }
        };
        let mut lines = MapLines::new(SliceLines::new(data), upper);
        let mut seen = Vec::new();
        while let Some(l) = lines.next_line().expect("read") {
            seen.push((l.number, l.offset, l.text.to_vec(), l.raw.to_vec()));
        }
        assert_eq!(
            seen,
            vec![
                (1, 0, b"keep".to_vec(), b"keep\r\n".to_vec()),
                (2, 6, b"[X]".to_vec(), b"[X]\n".to_vec()),
                (3, 18, b"".to_vec(), b"\n".to_vec()),
                (4, 19, b"[X]".to_vec(), b"[X]".to_vec()),
            ]
        );
        assert_eq!(lines.consumed(), data.len() as u64);
    }
}
