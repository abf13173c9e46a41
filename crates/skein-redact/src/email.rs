//! The `email` rule (tier C): `local@domain.tld` at an `@` anchor.
//!
//! What counts as an address, and what does not (docs/redact.md, "E-mail addresses"):
//! * the domain has at least two labels and ends in a real top-level domain (a country code
//!   or a common generic one), so `user@host`, `pkg@1.2.3`, `x@self.weights`,
//!   `@pytest.fixture` and `image@sha256:…` are not addresses;
//! * the local part is not empty (`@scope/pkg`, decorators, `@file` mentions), is not
//!   `git` (the SSH user of `git@github.com:org/repo` remotes), and is not the user of a URL
//!   (`https://user@host`, `scheme://user:pass@host`: the URL rules own those);
//! * `user@host` targets of `ssh`/`scp`/`rsync`/`sftp`/`mosh` commands and `user@host:path`
//!   remote specs are logins, not addresses;
//! * placeholder and no-reply addresses are kept: `noreply@anthropic.com` (every commit
//!   Claude co-authors), reserved domains (`example.com`/`.org`/`.net` and their
//!   subdomains, `.test`, `.example`, `.invalid`, `.localhost`, `.local`) and a few
//!   placeholder domains (`test.com`, `domain.com`, `yourdomain.com`, `your-domain.com`,
//!   `company.com`).
//!
//! Works on raw (JSON-escaped) and decoded text: `\n`/`\t`/`\"`/`\u00XX` before the local
//! part are escapes, not part of it.

use crate::generic::Site;

/// Country-code top-level domains, two letters each.
const CC: &str = "ac ad ae af ag ai al am ao aq ar as at au aw ax az ba bb bd be bf bg bh bi bj bm bn bo br bs bt bw by bz \
ca cc cd cf cg ch ci ck cl cm cn co cr cu cv cw cx cy cz de dj dk dm do dz ec ee eg er es et eu fi fj fk fm fo fr \
ga gd ge gf gg gh gi gl gm gn gp gq gr gs gt gu gw gy hk hm hn hr ht hu id ie il im in io iq ir is it je jm jo jp \
ke kg kh ki km kn kp kr kw ky kz la lb lc li lk lr ls lt lu lv ly ma mc md me mg mh mk ml mm mn mo mp mq mr ms mt \
mu mv mw mx my mz na nc ne nf ng ni nl no np nr nu nz om pa pe pf pg ph pk pl pm pn pr ps pt pw py qa re ro rs ru \
rw sa sb sc sd se sg sh si sk sl sm sn so sr ss st su sv sx sy sz tc td tf tg th tj tk tl tm tn to tr tt tv tw tz \
ua ug uk us uy uz va vc ve vg vi vn vu wf ws ye yt za zm zw";

/// Generic top-level domains seen in addresses (the long tail is left out on purpose: a
/// `.fixture` or `.option` is far more often a decorator than an address).
const GENERIC: &[&str] = &[
    "com",
    "org",
    "net",
    "edu",
    "gov",
    "mil",
    "int",
    "info",
    "biz",
    "name",
    "pro",
    "aero",
    "coop",
    "museum",
    "mobi",
    "asia",
    "tel",
    "travel",
    "jobs",
    "app",
    "dev",
    "page",
    "cloud",
    "tech",
    "online",
    "site",
    "store",
    "shop",
    "blog",
    "email",
    "digital",
    "systems",
    "solutions",
    "agency",
    "company",
    "group",
    "team",
    "studio",
    "design",
    "media",
    "news",
    "network",
    "services",
    "software",
    "space",
    "website",
    "xyz",
    "top",
    "club",
    "live",
    "life",
    "world",
    "today",
    "one",
    "global",
    "zone",
    "works",
    "tools",
    "center",
    "link",
    "academy",
    "consulting",
    "energy",
    "finance",
    "health",
    "law",
    "llc",
    "ltd",
    "inc",
    "science",
    "social",
    "work",
    "fyi",
    "gmbh",
    "berlin",
    "london",
    "nyc",
    "paris",
    "tokyo",
    "amsterdam",
    "swiss",
    "bank",
    "capital",
    "ventures",
    "partners",
    "labs",
    "io",
];

/// Domains whose addresses are placeholders (compared lower-cased, also as a suffix after
/// a dot for the reserved ones).
const RESERVED: &[&str] = &["example.com", "example.org", "example.net", "example.edu"];
const PLACEHOLDER: &[&str] = &[
    "test.com",
    "domain.com",
    "yourdomain.com",
    "your-domain.com",
    "company.com",
];
const RESERVED_TLD: &[&str] = &["test", "example", "invalid", "localhost", "local"];
const KEPT: &[&str] = &["noreply@anthropic.com"];

fn local_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'%' | b'+' | b'-')
}

fn label_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-'
}

/// Start of the local part ending at `at`, past any escape (`\n`, `\t`, `\u0020`) glued to it.
fn local_start(hay: &[u8], at: usize) -> Option<usize> {
    let mut k = at;
    while k > 0 && at - k < 64 && local_char(hay[k - 1]) {
        k -= 1;
    }
    // Longer than a local part can be (64): not an address, and not the tail of one.
    if k > 0 && at - k == 64 && local_char(hay[k - 1]) {
        return None;
    }
    let slashes = hay[..k].iter().rev().take_while(|&&b| b == b'\\').count();
    if slashes % 2 == 1 {
        // `\n…` / `\u00XX…`: the first bytes belong to the escape.
        let hex4 = hay
            .get(k + 1..k + 5)
            .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit));
        k += if hay[k] == b'u' && hex4 { 5 } else { 1 };
    }
    // A local part neither starts nor ends with a dot (`q.gi._@…` is the tail of something
    // else, and would be found differently once that something is redacted).
    (k < at && hay[k] != b'.' && hay[at - 1] != b'.').then_some(k)
}

/// End of the domain starting at `d`, and the start of its last label.
fn domain(hay: &[u8], d: usize) -> Option<(usize, usize)> {
    let (mut k, mut labels) = (d, 0);
    let mut last;
    loop {
        let n = hay[k..]
            .iter()
            .take(63)
            .take_while(|&&b| label_char(b))
            .count();
        if n == 0 || hay[k] == b'-' || hay[k + n - 1] == b'-' {
            return None;
        }
        labels += 1;
        last = k;
        k += n;
        if k - d > 253 {
            return None;
        }
        // Another label follows only after a dot and a label character (`a.com.` ends a
        // sentence).
        if hay.get(k) == Some(&b'.') && hay.get(k + 1).is_some_and(|&b| label_char(b)) {
            k += 1;
        } else {
            break;
        }
    }
    (labels >= 2).then_some((k, last))
}

fn tld_ok(tld: &[u8]) -> bool {
    if !tld.iter().all(u8::is_ascii_alphabetic) {
        return false;
    }
    let t = tld.to_ascii_lowercase();
    match t.len() {
        2 => CC.split(' ').any(|c| c.as_bytes() == t.as_slice()),
        3..=24 => GENERIC.iter().any(|g| g.as_bytes() == t.as_slice()),
        _ => false,
    }
}

/// A placeholder or no-reply address that is kept.
fn kept(addr: &[u8], dom: &[u8]) -> bool {
    let addr = addr.to_ascii_lowercase();
    let dom = dom.to_ascii_lowercase();
    let sub_of = |d: &str| {
        dom.as_slice() == d.as_bytes()
            || (dom.ends_with(d.as_bytes()) && dom[dom.len() - d.len() - 1] == b'.')
    };
    KEPT.iter().any(|k| k.as_bytes() == addr.as_slice())
        || RESERVED.iter().any(|d| sub_of(d))
        || PLACEHOLDER.iter().any(|d| dom.as_slice() == d.as_bytes())
        || RESERVED_TLD.iter().any(|t| sub_of(t))
}

/// The command before `k` (up to eight words back, not past a line break, `;`, `|` or `&`)
/// is `ssh`, `scp`, `sftp`, `rsync`, `mosh` or `ssh-copy-id`. Counted in words, not bytes, so
/// that redacting a secret between the command and the address cannot change the answer.
fn ssh_target(hay: &[u8], k: usize) -> bool {
    let is_cmd = |w: &[u8]| {
        let w = w.rsplit(|&b| b == b'/').next().unwrap_or(w);
        let w = w.strip_prefix(b"$(").unwrap_or(w);
        let w = w.trim_ascii_start();
        matches!(
            w.strip_prefix(b"\"").unwrap_or(w),
            b"ssh" | b"scp" | b"sftp" | b"rsync" | b"mosh" | b"ssh-copy-id"
        )
    };
    let seg = &hay[k.saturating_sub(4096)..k];
    for word in seg.rsplit(u8::is_ascii_whitespace).take(9) {
        // A line or command break inside the word: only what follows it counts.
        let brk = word
            .windows(2)
            .rposition(|w| w == b"\\n")
            .map(|p| p + 2)
            .into_iter()
            .chain(
                word.iter()
                    .rposition(|b| matches!(b, b';' | b'|' | b'&'))
                    .map(|p| p + 1),
            )
            .max();
        if let Some(p) = brk {
            return is_cmd(&word[p..]);
        }
        if is_cmd(word) {
            return true;
        }
    }
    false
}

/// `local@domain.tld` around the `@` at `site.s`.
pub(crate) fn email(site: &mut Site<'_>, out: &mut Vec<(usize, usize)>) {
    let (hay, at) = (site.hay, site.s);
    let Some(k) = local_start(hay, at) else {
        return;
    };
    let Some((end, last)) = domain(hay, at + 1) else {
        return;
    };
    if !tld_ok(&hay[last..end]) || hay.get(end).is_some_and(|&b| b == b'@' || b == b'_') {
        return;
    }
    // `user@host:path` (scp, rsync, git remotes): a login, not an address.
    if hay.get(end) == Some(&b':')
        && hay
            .get(end + 1)
            .is_some_and(|&b| !matches!(b, b' ' | b'\t' | b'"' | b'\'' | b'\\'))
    {
        return;
    }
    let local = &hay[k..at];
    if local.eq_ignore_ascii_case(b"git") {
        return;
    }
    match k.checked_sub(1).map(|i| hay[i]) {
        // Placeholders (`$USER@…`, `${name}@…`), a second `@`, and the user of a URL
        // (`scheme://user@host`, `scheme://user:pass@host`).
        Some(b'$' | b'{' | b'@' | b'/') => return,
        Some(b':') if !hay[..k - 1].ends_with(b"mailto") => {
            let lo = k.saturating_sub(200);
            let token_start = hay[lo..k]
                .iter()
                .rposition(|b| b.is_ascii_whitespace() || matches!(b, b'"' | b'\'' | b'<'))
                .map_or(lo, |p| lo + p + 1);
            if memchr::memmem::find(&hay[token_start..k], b"://").is_some() {
                return;
            }
        }
        _ => {}
    }
    if kept(&hay[k..end], &hay[at + 1..end]) || ssh_target(hay, k) {
        return;
    }
    out.push((k, end));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        for (i, _) in text.match_indices('@') {
            email(&mut Site::new(text.as_bytes(), i, i + 1), &mut out);
        }
        out.iter().map(|&(a, b)| &text[a..b]).collect()
    }

    #[test]
    fn addresses() {
        assert_eq!(
            find("Author: Jane Doe <jane.doe@acme-corp.io>"),
            ["jane.doe@acme-corp.io"]
        );
        assert_eq!(
            find(r"x\nbob+tag@mail.corp.co.uk\n"),
            ["bob+tag@mail.corp.co.uk"]
        );
        assert_eq!(find("write to bob@corp.de."), ["bob@corp.de"]);
        assert_eq!(find(r#"{\"email\":\"ann@gmail.com\"}"#), ["ann@gmail.com"]);
        assert_eq!(find("mailto:ann@gmail.com"), ["ann@gmail.com"]);
        assert_eq!(find(r"\tann@gmail.com"), ["ann@gmail.com"]);
    }

    #[test]
    fn not_addresses() {
        for t in [
            "git@github.com:acme/widgets.git",
            "ssh -i key.pem ubuntu@ec2-1-2-3-4.compute.amazonaws.com",
            "scp a.txt deploy@build.acme.io:/srv/",
            "rsync -a ./ deploy@build.acme.io:site/",
            "npm i @scope/pkg react@18.2.0 lodash@^4.17",
            r"\n@pytest.fixture",
            "user@host",
            "x = a@b.T",
            "https://bob@github.com/acme/r.git",
            "https://bob:pw@git.acme.io/r.git",
            "git config user.email $GITHUB_USER@users.noreply.github.com",
            "Co-Authored-By: Claude <noreply@anthropic.com>",
            "test@example.com ann@sub.example.org x@y.test root@localhost",
            "docker pull nginx@sha256:0123abcd",
            "golang.org/x/tools@v0.21.0",
        ] {
            assert!(find(t).is_empty(), "{t}: {:?}", find(t));
        }
    }
}
