//! Provider-named assignments: a name that says which service the value belongs to
//! (`AWS_SECRET_ACCESS_KEY`, `RESEND_API_KEY`, `"private_key_id"`) plus a value of that
//! service's shape. They share the generic rule's identifier and value parsing.

use crate::filters;
use crate::generic::{Site, parse};

/// Lower-cased name without separators (`AWS_SECRET_ACCESS_KEY` → `awssecretaccesskey`),
/// at most 64 bytes, in a stack buffer.
pub(crate) struct Squashed {
    buf: [u8; 64],
    len: usize,
}

impl Squashed {
    pub(crate) fn new(name: &[u8]) -> Squashed {
        let mut s = Squashed {
            buf: [0; 64],
            len: 0,
        };
        for &b in name.iter().filter(|b| b.is_ascii_alphanumeric()).take(64) {
            s.buf[s.len] = b.to_ascii_lowercase();
            s.len += 1;
        }
        s
    }
    pub(crate) fn get(&self) -> &[u8] {
        &self.buf[..self.len]
    }
    pub(crate) fn has(&self, w: &[u8]) -> bool {
        memchr::memmem::find(self.get(), w).is_some()
    }
}

/// A provider-named assignment (`RESEND_API_KEY=…`): name and value tests are given.
fn named(
    site: &mut Site<'_>,
    needles: &[&[u8]],
    name_ok: impl Fn(&Squashed) -> bool,
    value_ok: impl Fn(&[u8]) -> bool,
    out: &mut Vec<(usize, usize)>,
) {
    // Cheap first: the raw identifier must contain a needle (ASCII case-insensitive).
    let (hay, Some((a, b))) = (site.hay, site.ident()) else {
        return;
    };
    let name = &hay[a..b];
    if !needles
        .iter()
        .any(|n| name.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n)))
    {
        return;
    }
    if !site.squashed().is_some_and(name_ok) {
        return;
    }
    let (hay, Some(n)) = (site.hay, site.ident()) else {
        return;
    };
    let Some(a) = parse(hay, n) else { return };
    if value_ok(&hay[a.value.0..a.value.1]) {
        out.push(a.value);
    }
}

/// A literal, then `n` characters of a class.
type Part<'a> = (&'a [u8], usize, fn(&u8) -> bool);

fn shape(v: &[u8], parts: &[Part<'_>]) -> bool {
    let mut rest = v;
    for &(lit, n, class) in parts {
        let Some(r) = rest.strip_prefix(lit) else {
            return false;
        };
        if r.len() < n || !r[..n].iter().all(class) {
            return false;
        }
        rest = &r[n..];
    }
    rest.is_empty() || (rest.len() <= 2 && rest.iter().all(u8::is_ascii_digit))
}

/// `RESEND_API_KEY=re_xxxxxxxx_xxxxxxxxxxxxxxxxxxxxxxxx`.
pub(crate) fn resend(site: &mut Site<'_>, out: &mut Vec<(usize, usize)>) {
    let v = |v: &[u8]| {
        shape(
            v,
            &[
                (b"re_", 8, u8::is_ascii_alphanumeric),
                (b"_", 24, u8::is_ascii_alphanumeric),
            ],
        ) && filters::token(v)
    };
    named(site, &[b"resend"], |n| n.has(b"resend"), v, out);
}

/// `MAILCHIMP_API_KEY=<32 hex>-us<N>`.
pub(crate) fn mailchimp(site: &mut Site<'_>, out: &mut Vec<(usize, usize)>) {
    let v = |v: &[u8]| {
        v.len() > 35
            && shape(
                v,
                &[
                    (b"", 32, u8::is_ascii_hexdigit),
                    (b"-us", 1, u8::is_ascii_digit),
                ],
            )
            && filters::token(v)
    };
    named(
        site,
        &[b"chimp", b"mc"],
        |n| n.has(b"mailchimp") || n.get().starts_with(b"mc"),
        v,
        out,
    );
}

/// `CLOUDFLARE_API_TOKEN=…` (40 url-safe) / `CF_API_KEY=…` (37 hex global key).
pub(crate) fn cloudflare(site: &mut Site<'_>, out: &mut Vec<(usize, usize)>) {
    let v = |v: &[u8]| {
        (37..=40).contains(&v.len())
            && v.iter()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'))
            && filters::contextual(v)
    };
    named(
        site,
        &[b"cloudflare", b"cf"],
        |n| n.has(b"cloudflare") || n.get().starts_with(b"cf"),
        v,
        out,
    );
}

/// `"private_key_id": "<40 hex>"` of a GCP service-account key file.
pub(crate) fn gcp_key_id(site: &mut Site<'_>, out: &mut Vec<(usize, usize)>) {
    let v = |v: &[u8]| {
        v.len() == 40
            && v.iter()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
            && filters::token(v)
    };
    named(site, &[b"private"], |n| n.get() == b"privatekeyid", v, out);
}

fn b64ish(v: &[u8]) -> bool {
    v.iter()
        .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
}

/// Tier B `aws-secret-access-key`: a 40-character key assigned to an AWS secret key name.
pub(crate) fn aws_secret(site: &mut Site<'_>, out: &mut Vec<(usize, usize)>) {
    let v = |v: &[u8]| v.len() == 40 && b64ish(v) && filters::aws_secret(v);
    named(
        site,
        &[b"secret"],
        |n| n.get().ends_with(b"secretaccesskey") || n.get().ends_with(b"awssecretkey"),
        v,
        out,
    );
}

/// Tier B `aws-session-token`: a long base64 value assigned to a session-token name.
pub(crate) fn aws_session(site: &mut Site<'_>, out: &mut Vec<(usize, usize)>) {
    let v = |v: &[u8]| v.len() >= 100 && b64ish(v) && filters::token(v);
    named(
        site,
        &[b"ssion"],
        |n| n.get().ends_with(b"sessiontoken"),
        v,
        out,
    );
}

/// `"auth": "<base64>"` entries of the `auths` map of a Docker `config.json` (anchor `"auth`,
/// also as `\"auth\"` in a raw line): every entry, not only the first.
pub(crate) fn docker_auth(site: &mut Site<'_>, out: &mut Vec<(usize, usize)>) {
    let (hay, s, e) = (site.hay, site.s, site.e);
    let skip = |mut k: usize, set: &[u8]| {
        while hay.get(k).is_some_and(|b| set.contains(b)) {
            k += 1;
        }
        k
    };
    let k = skip(e, b"\\");
    if hay.get(k) != Some(&b'"') {
        return;
    }
    let k = skip(k + 1, b" \t");
    if hay.get(k) != Some(&b':') {
        return;
    }
    let k = skip(skip(k + 1, b" \t"), b"\\");
    if hay.get(k) != Some(&b'"') {
        return;
    }
    let a = k + 1;
    let b = a + hay[a..]
        .iter()
        .take_while(|&&c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'='))
        .count();
    // Anywhere before it (not a byte window: a redaction in between must not change the
    // answer).
    if b - a >= 12
        && memchr::memmem::rfind(&hay[..s], b"auths").is_some()
        && filters::token(&hay[a..b])
    {
        out.push((a, b));
    }
}
