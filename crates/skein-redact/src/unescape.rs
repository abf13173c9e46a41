//! Unescaping one JSON string literal, with a map from decoded offsets back to raw offsets so
//! that a replacement touches only the raw bytes of the secret.

use memchr::memchr;

/// One escape sequence: `dlen` decoded bytes at `d` came from `rlen` raw bytes at `r`.
#[derive(Debug, Clone, Copy)]
struct Esc {
    d: usize,
    dlen: usize,
    r: usize,
    rlen: usize,
}

/// An unescaped literal plus the map back to its raw bytes.
#[derive(Debug, Default)]
pub(crate) struct Decoded {
    pub(crate) text: Vec<u8>,
    escapes: Vec<Esc>,
    /// The literal has escapes no JSON.stringify would write (`\/`, `\u00XX` for a printable
    /// ASCII character): the raw prefilter cannot be trusted for it.
    pub(crate) odd: bool,
}

impl Decoded {
    /// Unescapes raw literal content. Never fails: invalid escapes stay as they are, lone
    /// surrogates become U+FFFD.
    pub(crate) fn decode(&mut self, raw: &[u8]) {
        self.text.clear();
        self.escapes.clear();
        self.odd = false;
        let mut i = 0;
        while let Some(off) = memchr(b'\\', &raw[i..]) {
            let j = i + off;
            self.text.extend_from_slice(&raw[i..j]);
            let mut buf = [0u8; 4];
            let (bytes, rlen): (&[u8], usize) = match raw.get(j + 1) {
                Some(b'"') => (b"\"", 2),
                Some(b'\\') => (b"\\", 2),
                Some(b'/') => {
                    self.odd = true;
                    (b"/", 2)
                }
                Some(b'b') => (b"\x08", 2),
                Some(b'f') => (b"\x0c", 2),
                Some(b'n') => (b"\n", 2),
                Some(b'r') => (b"\r", 2),
                Some(b't') => (b"\t", 2),
                Some(b'u') => match hex4(raw, j + 2) {
                    Some(cu) => {
                        let (c, rlen) = match cu {
                            0xD800..=0xDBFF => match low_surrogate(raw, j + 6) {
                                Some(lo) => {
                                    let c = 0x10000 + ((cu - 0xD800) << 10) + (lo - 0xDC00);
                                    (char::from_u32(c).unwrap_or('\u{FFFD}'), 12)
                                }
                                None => ('\u{FFFD}', 6),
                            },
                            _ => (char::from_u32(cu).unwrap_or('\u{FFFD}'), 6),
                        };
                        if (0x20..0x80).contains(&cu) {
                            self.odd = true;
                        }
                        (c.encode_utf8(&mut buf).as_bytes(), rlen)
                    }
                    None => (b"\\", 1),
                },
                _ => (b"\\", 1),
            };
            if rlen > 1 {
                self.escapes.push(Esc {
                    d: self.text.len(),
                    dlen: bytes.len(),
                    r: j,
                    rlen,
                });
            }
            self.text.extend_from_slice(bytes);
            i = j + rlen;
        }
        self.text.extend_from_slice(&raw[i..]);
    }

    /// Raw offset of decoded offset `d` taken as the start of a span.
    pub(crate) fn raw_start(&self, d: usize) -> usize {
        let k = self.escapes.partition_point(|e| e.d <= d);
        match k.checked_sub(1).map(|k| self.escapes[k]) {
            None => d,
            Some(e) if d < e.d + e.dlen => e.r,
            Some(e) => e.r + e.rlen + (d - e.d - e.dlen),
        }
    }

    /// Raw offset of decoded offset `d` taken as the (exclusive) end of a span.
    pub(crate) fn raw_end(&self, d: usize) -> usize {
        let k = self.escapes.partition_point(|e| e.d < d);
        match k.checked_sub(1).map(|k| self.escapes[k]) {
            None => d,
            Some(e) if d <= e.d + e.dlen => e.r + e.rlen,
            Some(e) => e.r + e.rlen + (d - e.d - e.dlen),
        }
    }
}

fn hex4(raw: &[u8], i: usize) -> Option<u32> {
    let h = raw.get(i..i + 4)?;
    let s = std::str::from_utf8(h).ok()?;
    if !h.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    u32::from_str_radix(s, 16).ok()
}

fn low_surrogate(raw: &[u8], i: usize) -> Option<u32> {
    if raw.get(i..i + 2)? != b"\\u" {
        return None;
    }
    hex4(raw, i + 2).filter(|c| (0xDC00..=0xDFFF).contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_maps_offsets() {
        let raw = br"a\nb\u0041c\ud83d\ude00d\ud800e";
        let mut d = Decoded::default();
        d.decode(raw);
        assert_eq!(d.text, "a\nbAc\u{1F600}d\u{FFFD}e".as_bytes());
        assert!(d.odd);
        // "A" is decoded byte 3, raw bytes 4..10.
        assert_eq!((d.raw_start(3), d.raw_end(4)), (4, 10));
        // the emoji: decoded 5..9, raw 11..23
        assert_eq!((d.raw_start(5), d.raw_end(9)), (11, 23));
        // 'e' after the lone surrogate
        assert_eq!((d.raw_start(13), d.raw_end(14)), (30, 31));
        assert_eq!(d.raw_end(0), 0);
    }
}
