//! Token shapes that need a decoding step to confirm: a JWT wrapped in one more layer of
//! base64 (`ZXlK…` is base64 of `eyJ`, as Kubernetes Secrets and CI variables store it).

use crate::filters;
use crate::generic::Site;

/// Decoded bytes looked at; a JWT header and the start of its payload fit.
const PEEK: usize = 96;

fn b64_value(c: u8) -> Option<u8> {
    Some(match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' | b'-' => 62,
        b'/' | b'_' => 63,
        _ => return None,
    })
}

/// Decodes up to `PEEK` bytes of base64 (standard or url-safe alphabet).
fn decode_head(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(PEEK);
    let (mut acc, mut bits) = (0u32, 0u32);
    for v in s.iter().map_while(|&c| b64_value(c)) {
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            if out.len() == PEEK {
                break;
            }
        }
    }
    out
}

/// `ZXlK…` (anchor): the base64 run, if it decodes to `header.payload` of a JWT.
pub(crate) fn jwt_base64(site: &mut Site<'_>, out: &mut Vec<(usize, usize)>) {
    let (hay, s) = (site.hay, site.s);
    let len = hay[s..]
        .iter()
        .take_while(|&&c| b64_value(c).is_some())
        .count();
    let mut end = s + len;
    end += hay[end..]
        .iter()
        .take(2)
        .take_while(|&&c| c == b'=')
        .count();
    if len < 60 {
        return;
    }
    let head = decode_head(&hay[s..s + len]);
    // The decoded text is itself a JWT: `eyJ<header>.eyJ<payload>…`.
    let Some(dot) = head.iter().position(|&c| c == b'.') else {
        return;
    };
    if head[dot + 1..].starts_with(b"eyJ") && filters::jwt(&head[..dot]) {
        out.push((s, end));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapped_jwt() {
        // base64("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlLXgxMjM0NTY3")
        let wrapped = "ZXlKaGJHY2lPaUpJVXpJMU5pSjkuZXlKemRXSWlPaUl4TWpNME5UWTNPRGt3SW4wLmMybG5ibUYwZFhKbExYZ3hNak0wTlRZMw==";
        let text = format!("token: {wrapped}\n");
        let s = text.find("ZXlK").expect("anchor");
        let mut out = Vec::new();
        jwt_base64(&mut Site::new(text.as_bytes(), s, s + 4), &mut out);
        assert_eq!(out, [(s, s + wrapped.len())]);
        // base64 of other JSON that happens to start with `eyJ` is not a token.
        let other = "ZXlKbWIyOGlPaUppWVhJaWZRLmV5SjZJam94ZlEubm90LWEtdG9rZW4tYnV0LWxvbmctZW5vdWdo";
        let mut out = Vec::new();
        jwt_base64(&mut Site::new(other.as_bytes(), 0, 4), &mut out);
        assert!(out.is_empty());
    }
}
