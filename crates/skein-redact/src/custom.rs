//! Matchers that are easier to write as code than as a regex: PEM blocks (also truncated and
//! with literal `\n`), passwords in URLs, and the `data:` map of a Kubernetes Secret.
//!
//! Every matcher works on raw (JSON-escaped) text as well as on decoded text: a line break is
//! a real `\n`/`\r` or a run of backslashes followed by `n`/`r`.

use crate::filters;
use crate::generic::Site;

/// Length of a line break at `k` (real or escaped, `\n`, `\\n`, …), or 0.
fn line_break(hay: &[u8], k: usize) -> usize {
    match hay.get(k) {
        Some(b'\n' | b'\r') => 1,
        Some(b'\\') => {
            let n = hay[k..].iter().take_while(|&&b| b == b'\\').count();
            usize::from(matches!(hay.get(k + n), Some(b'n' | b'r'))) * (n + 1)
        }
        _ => 0,
    }
}

/// Skips blanks and line breaks (also escaped tabs: `\t`, and `\\t`, a literal `\t` in the
/// text as the raw line writes it).
fn skip_seps(hay: &[u8], mut k: usize) -> usize {
    loop {
        let slashes = hay[k..].iter().take_while(|&&b| b == b'\\').count();
        match hay.get(k) {
            Some(b' ' | b'\t') => k += 1,
            Some(b'\\') if hay.get(k + slashes) == Some(&b't') => k += slashes + 1,
            _ => match line_break(hay, k) {
                0 => return k,
                n => k += n,
            },
        }
    }
}

fn is_b64(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=')
}

/// `-----BEGIN … PRIVATE KEY-----` (anchor `PRIVATE KEY`) through the END line, or through
/// the last body line when the END line is missing. Needs ≥ 32 base64 characters of body.
pub(crate) fn pem(site: &mut Site<'_>, out: &mut Vec<(usize, usize)>) {
    let (hay, astart, aend) = (site.hay, site.s, site.e);
    let lo = astart.saturating_sub(48);
    let Some(b) = memchr::memmem::rfind(&hay[lo..astart], b"-----BEGIN ") else {
        return;
    };
    let begin = lo + b;
    let kind = &hay[begin + 11..astart];
    if !kind
        .iter()
        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == b' ')
    {
        return;
    }
    let mut k = aend;
    if hay[k..].starts_with(b" BLOCK") {
        k += 6;
    }
    if !hay[k..].starts_with(b"-----") {
        return;
    }
    let (end, count) = pem_body(hay, k + 5);
    if count >= 32 {
        out.push((begin, end));
    }
}

/// Returns (end of the block, number of base64 characters in the body).
fn pem_body(hay: &[u8], mut k: usize) -> (usize, usize) {
    let (mut end, mut count) = (k, 0);
    loop {
        k = skip_seps(hay, k);
        if hay[k..].starts_with(b"-----END") {
            let tail = &hay[k + 8..hay.len().min(k + 80)];
            let close = tail
                .windows(5)
                .position(|w| w == b"-----")
                .map(|p| k + 8 + p + 5);
            return (close.unwrap_or(end), count);
        }
        if count == 0
            && let Some(e) = header_line(hay, k)
        {
            k = e;
            end = e;
            continue;
        }
        let r = k + hay[k..].iter().take_while(|&&b| is_b64(b)).count();
        if r == k {
            return (end, count);
        }
        match hay.get(r) {
            Some(b' ' | b'\t') if r - k < 40 => return (end, count),
            Some(b' ' | b'\t' | b'-') => {}
            Some(_) if line_break(hay, r) > 0 => {}
            // End of text, or a character that ends a truncated body (`…`, a quote).
            _ => return (r, count + r - k),
        }
        count += r - k;
        end = r;
        k = r;
    }
}

/// `Proc-Type: 4,ENCRYPTED`, `DEK-Info: …`, `Comment: …`, `Version: …` header lines.
fn header_line(hay: &[u8], k: usize) -> Option<usize> {
    let name = hay[k..]
        .iter()
        .take(32)
        .take_while(|b| b.is_ascii_alphabetic() || **b == b'-')
        .count();
    if name < 2 || hay.get(k + name..k + name + 2) != Some(b": ") {
        return None;
    }
    let mut e = k + name + 2;
    while e < hay.len() && line_break(hay, e) == 0 && e - k < 200 {
        e += 1;
    }
    Some(e)
}

const DB_SCHEMES: &[&str] = &[
    "postgres",
    "postgresql",
    "mysql",
    "mariadb",
    "mongodb",
    "mongodb+srv",
    "redis",
    "rediss",
    "amqp",
    "amqps",
    "sqlserver",
    "mssql",
    "clickhouse",
    "cockroachdb",
    "couchdb",
    "cassandra",
    "neo4j",
    "neo4j+s",
    "bolt",
    "memcached",
    "oracle",
    "db2",
    "snowflake",
    "kafka",
    "nats",
];

/// `scheme://user:PASSWORD@host` (anchor `://`): only the password is reported.
pub(crate) fn url_password(site: &mut Site<'_>, out: &mut Vec<(usize, usize)>) {
    url(site, out, false);
}

/// Same, restricted to database and broker schemes.
pub(crate) fn db_url_password(site: &mut Site<'_>, out: &mut Vec<(usize, usize)>) {
    url(site, out, true);
}

fn url(site: &mut Site<'_>, out: &mut Vec<(usize, usize)>, db: bool) {
    if let Some(u) = site.url(url_parts)
        && u.db == db
    {
        out.push(u.password);
    }
}

/// `scheme://user:password@host` at the `://` anchor `astart..aend`, if the password is one.
pub(crate) fn url_parts(hay: &[u8], astart: usize, aend: usize) -> Option<UrlParts> {
    // Userinfo first: almost every URL has no `user:password@` and fails here cheaply.
    let u0 = aend;
    let at = u0
        + hay[u0..hay.len().min(u0 + 256)]
            .iter()
            .position(|&b| b == b'@' || b <= b' ' || b"/?#\"'\\<>[]{}|^`".contains(&b))?;
    if hay[at] != b'@' || !hay.get(at + 1).is_some_and(u8::is_ascii_alphanumeric) {
        return None;
    }
    let colon = u0 + hay[u0..at].iter().position(|&b| b == b':')?;
    let (user, pw) = (&hay[u0..colon], &hay[colon + 1..at]);
    if pw == user || !filters::password(pw) {
        return None;
    }
    let mut s = astart;
    while s > 0
        && astart - s < 32
        && (hay[s - 1].is_ascii_alphanumeric() || b"+.-".contains(&hay[s - 1]))
    {
        if matches!(hay[s - 1], b'n' | b'r' | b't') && s >= 2 && hay[s - 2] == b'\\' {
            break;
        }
        s -= 1;
    }
    let scheme = &hay[s..astart];
    if scheme.len() < 2 || !scheme[0].is_ascii_alphabetic() {
        return None;
    }
    let db = DB_SCHEMES
        .iter()
        .any(|d| scheme.eq_ignore_ascii_case(d.as_bytes()));
    Some(UrlParts {
        password: (colon + 1, at),
        db,
    })
}

/// A password found in a URL, and whether the scheme is a database or broker.
#[derive(Debug, Clone, Copy)]
pub(crate) struct UrlParts {
    password: (usize, usize),
    db: bool,
}

/// `.netrc`: `… login <user> password <secret>` (anchor `assw` of `password`), as in
/// `machine <host> login <user> password <secret>`.
pub(crate) fn netrc(site: &mut Site<'_>, out: &mut Vec<(usize, usize)>) {
    let (hay, s, e) = (site.hay, site.s, site.e);
    // `password` as a word followed by a blank: cheap checks before looking back for `login`.
    let word_end = e + 3;
    let blank = |b: Option<&u8>| matches!(b, Some(b' ' | b'\t' | b'\n' | b'\r' | b'n' | b'\\'));
    if s < 2
        || hay[s - 1] != b'p'
        || !hay[e..].starts_with(b"ord")
        || !blank(hay.get(word_end))
        || !blank(hay.get(s - 2))
    {
        return;
    }
    // `login <user> password`, word by word (a byte window would see `machine` come closer
    // once a secret before it is redacted, and redacting twice must change nothing).
    let user_end = seps_back(hay, s - 1);
    let user = word_back(hay, user_end);
    let login_end = seps_back(hay, user);
    if user_end == s - 1 || user == user_end || login_end == user {
        return;
    }
    if &hay[word_back(hay, login_end)..login_end] != b"login" {
        return;
    }
    let k = skip_seps(hay, e + 3);
    if k == e + 3 {
        return;
    }
    let end = k + hay[k..]
        .iter()
        .take_while(|b| !b.is_ascii_whitespace() && !matches!(b, b'"' | b'\'' | b'\\'))
        .count();
    if end - k >= 3 && filters::password(&hay[k..end]) {
        out.push((k, end));
    }
}

/// Start of the separators (blanks, real or escaped line breaks and tabs) that end at `i`.
fn seps_back(hay: &[u8], mut i: usize) -> usize {
    loop {
        if i >= 1 && matches!(hay[i - 1], b' ' | b'\t' | b'\n' | b'\r') {
            i -= 1;
        } else if i >= 2 && hay[i - 2] == b'\\' && matches!(hay[i - 1], b'n' | b'r' | b't') {
            i -= 2;
        } else {
            return i;
        }
    }
}

/// Start of the word (at most 128 bytes, no separator) that ends at `i`.
fn word_back(hay: &[u8], i: usize) -> usize {
    let mut k = i;
    while k > 0 && i - k < 128 && !matches!(hay[k - 1], b' ' | b'\t' | b'\n' | b'\r') {
        if k >= 2 && hay[k - 2] == b'\\' && matches!(hay[k - 1], b'n' | b'r' | b't') {
            break;
        }
        k -= 1;
    }
    k
}

/// Iterates over lines of `hay[from..to]`: (content start, content end).
fn lines(hay: &[u8], from: usize, to: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut k = from;
    std::iter::from_fn(move || {
        if k >= to {
            return None;
        }
        let start = k;
        while k < to && line_break(hay, k) == 0 {
            k += 1;
        }
        let end = k;
        k += line_break(hay, k).max(1);
        Some((start, end))
    })
}

/// `kind: Secret` (anchor `ecret`): every value of the same document's `data:` and
/// `stringData:` maps.
pub(crate) fn k8s_secret(site: &mut Site<'_>, out: &mut Vec<(usize, usize)>) {
    let (hay, astart, aend) = (site.hay, site.s, site.e);
    if astart == 0 || hay[astart - 1] != b'S' || !(aend == hay.len() || line_break(hay, aend) > 0) {
        return;
    }
    let mut i = astart - 1;
    while i > 0 && matches!(hay[i - 1], b' ' | b'\t') {
        i -= 1;
    }
    if !hay[..i].ends_with(b"kind:") {
        return;
    }
    // Start the window at a line start at most 4 KiB back.
    let mut from = astart.saturating_sub(4096);
    if from > 0 {
        while from < astart && line_break(hay, from) == 0 {
            from += 1;
        }
        from += line_break(hay, from);
    }
    let to = hay.len().min(aend + 4096);
    let (mut spans, mut kind_seen, mut data_indent) = (Vec::new(), false, None);
    for (ls, le) in lines(hay, from, to) {
        let line = &hay[ls..le];
        let indent = line.iter().take_while(|&&b| b == b' ').count();
        let content = &line[indent..];
        if content.starts_with(b"---") {
            if kind_seen {
                break;
            }
            spans.clear();
            data_indent = None;
            continue;
        }
        if (ls..=le).contains(&astart) {
            kind_seen = true;
        }
        if content == b"data:" || content == b"stringData:" {
            data_indent = Some(indent);
            continue;
        }
        match data_indent {
            Some(d) if indent > d => {
                if let Some(c) = content.iter().position(|&b| b == b':') {
                    let v0 = ls + indent + c + 1;
                    let v0 = v0 + hay[v0..le].iter().take_while(|&&b| b == b' ').count();
                    let (mut a, mut b) = (v0, le);
                    while a < b && matches!(hay[a], b'"' | b'\'' | b'\\') {
                        a += 1;
                    }
                    while b > a && matches!(hay[b - 1], b'"' | b'\'' | b'\\' | b' ') {
                        b -= 1;
                    }
                    if b - a >= 4 && !filters::is_placeholder(&hay[a..b]) {
                        spans.push((a, b));
                    }
                }
            }
            Some(_) => data_indent = None,
            None => {}
        }
    }
    if kind_seen {
        out.extend(spans);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(f: fn(&mut Site<'_>, &mut Vec<(usize, usize)>), s: &str, anchor: &str) -> Vec<String> {
        let a = s.find(anchor).expect("anchor");
        let mut out = Vec::new();
        f(&mut Site::new(s.as_bytes(), a, a + anchor.len()), &mut out);
        out.iter().map(|&(x, y)| s[x..y].to_owned()).collect()
    }

    const BODY: &str = "MIIEowIBAAKCAQEAuF0mXz1q2Vb7kP3n8Lw0sRt5YhJ6cD4eGf";

    #[test]
    fn pem_forms() {
        let full = format!(
            "x -----BEGIN RSA PRIVATE KEY-----\\n{BODY}\\n{BODY}\\n-----END RSA PRIVATE KEY----- y"
        );
        let got = run(pem, &full, "PRIVATE KEY");
        assert_eq!(got.len(), 1);
        assert!(got[0].ends_with("END RSA PRIVATE KEY-----"), "{got:?}");
        let cut = format!("-----BEGIN OPENSSH PRIVATE KEY-----\n{BODY}\n{BODY}\nThe rest was cut");
        let got = run(pem, &cut, "PRIVATE KEY");
        assert!(got[0].ends_with(BODY), "{got:?}");
        assert!(
            run(
                pem,
                "-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----",
                "PRIVATE KEY"
            )
            .is_empty()
        );
    }

    #[test]
    fn url_passwords() {
        let f = db_url_password;
        assert_eq!(
            run(f, "postgres://app:Xk9$mQ2p@db:5432/x", "://"),
            ["Xk9$mQ2p"]
        );
        assert!(run(f, "postgres://postgres:postgres@localhost/x", "://").is_empty());
        assert!(run(f, "mysql://user:${DB_PASS}@h/x", "://").is_empty());
        assert!(run(url_password, "postgres://a:Xk9mQ2pz@h/x", "://").is_empty());
        assert_eq!(
            run(url_password, r"\nhttps://bob:Xk9mQ2pz@h/x", "://"),
            ["Xk9mQ2pz"]
        );
        assert!(run(url_password, "https://example.com/@scope/pkg:1@x", "://").is_empty());
    }

    #[test]
    fn netrc_entries() {
        assert_eq!(
            run(
                netrc,
                "machine api.x.com\n  login bob\n  password Zq81xk9",
                "assw"
            ),
            ["Zq81xk9"]
        );
        assert!(run(netrc, "the password Zq81xk9", "assw").is_empty());
    }

    #[test]
    fn k8s() {
        let y = "apiVersion: v1\ndata:\n  password: cGFzc3dvcmQxMjM=\n  user: YWRtaW4=\nkind: Secret\nmetadata:\n  name: x\n";
        assert_eq!(
            run(k8s_secret, y, "ecret"),
            ["cGFzc3dvcmQxMjM=", "YWRtaW4="]
        );
        let raw = r#"kind: Secret\nstringData:\n  token: \"abcd1234efgh\"\n"#;
        assert_eq!(run(k8s_secret, raw, "ecret"), ["abcd1234efgh"]);
    }
}
