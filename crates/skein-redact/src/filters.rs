//! Checks run on a candidate secret after its pattern matched: randomness, placeholders,
//! and "this is code, not data" heuristics (redaction.md §3.5–3.7).

/// Shannon entropy in bits per byte.
pub(crate) fn entropy(s: &[u8]) -> f64 {
    if s.is_empty() {
        return 0.0;
    }
    let mut counts = [0u32; 256];
    for &b in s {
        counts[b as usize] += 1;
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}

/// True when one byte makes up at least half of `s` (`xxxxxxxx`, `********`, `0000…`).
pub(crate) fn mostly_one_byte(s: &[u8]) -> bool {
    // Boyer-Moore majority vote, then a count: no 256-entry table per call.
    let (mut cand, mut n) = (0u8, 0usize);
    for &b in s {
        if n == 0 {
            cand = b;
        }
        n = if b == cand { n + 1 } else { n - 1 };
    }
    let count = memchr::memchr_iter(cand, s).count();
    !s.is_empty() && (count * 2 > s.len() || (count * 2 == s.len() && s.len() <= 16))
}

/// A run of letters that looks random rather than like a word or an identifier: long, both
/// cases, upper case neither rare (camelCase) nor dominant (CONSTANT_CASE).
pub(crate) fn random_letters(s: &[u8]) -> bool {
    let letters = s.iter().filter(|b| b.is_ascii_alphabetic()).count();
    let upper = s.iter().filter(|b| b.is_ascii_uppercase()).count();
    letters >= 20 && upper * 5 >= letters && upper * 5 <= letters * 4 && entropy(s) >= 3.5
}

/// Placeholder prefixes, compared case-insensitively against the start of a value.
const PLACEHOLDER_PREFIXES: &[&str] = &[
    "your",
    "my_",
    "my-",
    "xxx",
    "***",
    "...",
    "change_me",
    "changeme",
    "change-me",
    "replace",
    "insert",
    "enter_",
    "enter-",
    "example",
    "sample",
    "dummy",
    "placeholder",
    "redacted",
    "todo",
    "tbd",
    "none",
    "null",
    "nil",
    "undefined",
    "true",
    "false",
    "secret",
    "password",
    "passwd",
    "token",
    "<",
    "${",
    "{{",
    "$(",
    "%(",
    "%s",
    "sha256:",
    "sha512-",
    "sha1-",
];

/// File extensions that mark a value as a path to a secret rather than the secret.
const FILE_SUFFIXES: &[&str] = &[
    ".pem", ".key", ".json", ".txt", ".crt", ".cer", ".p12", ".pfx", ".jks", ".env", ".yaml",
    ".yml", ".toml", ".ini", ".cfg", ".conf", ".js", ".ts", ".py", ".rs", ".sh", ".md", ".gpg",
];

/// Values that start like a reference to another variable or object.
const REFS: &[&str] = &[
    "self.",
    "this.",
    "process.env",
    "os.environ",
    "os.getenv",
    "env.",
    "config.",
    "settings.",
    "props.",
    "params.",
    "args.",
    "options.",
    "ctx.",
    "context.",
    "request.",
    "req.",
    "window.",
    "import.meta",
];

pub(crate) fn starts_with_ci(s: &[u8], p: &str) -> bool {
    s.len() >= p.len() && s[..p.len()].eq_ignore_ascii_case(p.as_bytes())
}

fn ends_with_ci(s: &[u8], p: &str) -> bool {
    s.len() >= p.len() && s[s.len() - p.len()..].eq_ignore_ascii_case(p.as_bytes())
}

pub(crate) fn is_placeholder(v: &[u8]) -> bool {
    (v.contains(&b'[') && memchr::memmem::find(v, b"[REDACTED:").is_some())
        || has_run(v, b'#', 4)
        || has_run(v, b'*', 4)
        || sequential(v)
        // An elided example (`sk-ant-api03-...`, `ghp_…`): no credential contains an ellipsis.
        || memchr::memmem::find(v, b"...").is_some()
        || memchr::memmem::find(v, "…".as_bytes()).is_some()
        || (v.contains(&b'X') && memchr::memmem::find(v, b"EXAMPLE").is_some())
        || v.first().is_some_and(|f| {
            let f = f.to_ascii_lowercase();
            PLACEHOLDER_PREFIXES
                .iter()
                .any(|p| p.as_bytes()[0] == f && starts_with_ci(v, p))
        })
        || mostly_one_byte(v)
}

/// The value reads like code: a call, a path, a reference to another variable, a type.
pub(crate) fn is_code(v: &[u8]) -> bool {
    let first = v.first().copied().unwrap_or(b' ');
    if matches!(
        first,
        b'$' | b'%'
            | b'{'
            | b'<'
            | b'['
            | b'('
            | b'&'
            | b'*'
            | b'!'
            | b'@'
            | b'#'
            | b':'
            | b'='
            | b'/'
            | b'\\'
            | b'~'
            | b'.'
            | b','
            | b';'
            | b'-'
            | b'+'
            | b'|'
            | b'?'
    ) {
        return true;
    }
    if v.iter()
        .any(|b| matches!(b, b'(' | b')' | b'{' | b'}' | b'<' | b'>' | b'[' | b']'))
    {
        return true;
    }
    let pair = v
        .windows(2)
        .any(|w| matches!(w, b"::" | b"->" | b"=>" | b":/"));
    if pair {
        return true;
    }
    REFS.iter().any(|p| starts_with_ci(v, p)) || FILE_SUFFIXES.iter().any(|s| ends_with_ci(v, s))
}

/// Generic "does this value look like a credential" test shared by the contextual rules.
pub(crate) fn looks_secret(v: &[u8], min_len: usize, min_entropy: f64) -> bool {
    if v.len() < min_len || is_code(v) || is_placeholder(v) {
        return false;
    }
    let digits = v.iter().filter(|b| b.is_ascii_digit()).count();
    let wordish = v
        .iter()
        .all(|b| b.is_ascii_alphabetic() || matches!(b, b'_' | b'.' | b'-'));
    if wordish && !random_letters(v) {
        return false;
    }
    // CONSTANT_CASE names (`MY_TOKEN_V2`) and version/number strings.
    if v.iter()
        .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || *b == b'_')
        && v.contains(&b'_')
    {
        return false;
    }
    if digits > 0 && v.iter().all(|b| b.is_ascii_digit() || *b == b'.') && v.contains(&b'.') {
        return false;
    }
    !is_phrase(v) && entropy(v) >= min_entropy
}

/// Quoted random text with punctuation (Django's `get_random_secret_key()` alphabet
/// `a-z0-9!@#$%^&*(-_=+)`): long, high entropy, letters and digits and several punctuation
/// marks, and nothing of a template, regex, URL or placeholder.
pub(crate) fn random_punct(v: &[u8]) -> bool {
    const TEMPLATES: &[&str] = &["${", "$(", "{{", "%(", "<%", "#{"];
    let punct = v.iter().filter(|b| b.is_ascii_punctuation()).count();
    v.len() >= 24
        && punct >= 3
        && v.iter().any(u8::is_ascii_lowercase)
        && v.iter().any(u8::is_ascii_digit)
        && !v.iter().any(|b| b.is_ascii_whitespace() || *b == b'\\')
        && !TEMPLATES
            .iter()
            .any(|t| memchr::memmem::find(v, t.as_bytes()).is_some())
        && !v
            .windows(3)
            .any(|w| w == b"://" || w == b"[a-" || w == b"[A-" || w == b"[0-")
        && !is_placeholder(v)
        && !is_phrase(v)
        && entropy(v) >= 4.0
}

/// Words joined by `-`, `_` or `.` (`dev-only-secret-not-for-production`): a description or a
/// placeholder, not a random credential. Needs ≥ 4 parts, ≥ 80 % of them single-case words
/// or short numbers.
pub(crate) fn is_phrase(v: &[u8]) -> bool {
    let parts: Vec<&[u8]> = v
        .split(|b| matches!(b, b'-' | b'_' | b'.'))
        .filter(|p| !p.is_empty())
        .collect();
    let wordy = |p: &&&[u8]| {
        (p.iter().all(u8::is_ascii_lowercase) || p.iter().all(u8::is_ascii_uppercase))
            || (p.len() <= 4 && p.iter().all(u8::is_ascii_digit))
    };
    parts.len() >= 4 && parts.iter().filter(wordy).count() * 5 >= parts.len() * 4
}

/// Prefix tokens: the body must look random (a typed placeholder like `ghp_xxxx…` must not).
/// Placeholders written as words (`sq0atp-REPLACE_WITH_YOUR_TOKEN`) are not tokens either.
pub(crate) fn token(s: &[u8]) -> bool {
    entropy(s) >= 3.0
        && !mostly_one_byte(s)
        && !has_run(s, b'x', 6)
        && !has_run(s, b'X', 6)
        && !has_run(s, b'#', 4)
        && !has_run(s, b'*', 4)
        && !sequential(s)
        && !worded(s)
        && !placeholder_tail(s)
}

/// Mostly ascending runs (`1234567890`, `abcdef`): a typed example, not a random value.
fn sequential(s: &[u8]) -> bool {
    let alnum = s.iter().filter(|b| b.is_ascii_alphanumeric()).count();
    let (mut inside, mut run) = (0, 1);
    for w in s.windows(2) {
        if w[0].is_ascii_alphanumeric() && w[1] == w[0].wrapping_add(1) {
            run += 1;
        } else {
            if run >= 5 {
                inside += run;
            }
            run = 1;
        }
    }
    if run >= 5 {
        inside += run;
    }
    alnum > 0 && inside * 2 >= alnum
}

/// A last part of twelve or more letters in one case or in capitalised words
/// (`xoxe.xoxp-1-RANDOMSTRINGHERE`, `…-SlackAppConfigurationAccessTokenHere`).
fn placeholder_tail(s: &[u8]) -> bool {
    let last = s
        .rsplit(|b| matches!(b, b'-' | b'_' | b'.'))
        .next()
        .unwrap_or(s);
    if last.len() < 12 || !last.iter().all(u8::is_ascii_alphabetic) {
        return false;
    }
    let one_case =
        last.iter().all(u8::is_ascii_lowercase) || last.iter().all(u8::is_ascii_uppercase);
    // Capitalised words: every capital starts a run of at least three lower-case letters.
    let words = last[0].is_ascii_uppercase()
        && last
            .split(u8::is_ascii_uppercase)
            .skip(1)
            .all(|w| w.len() >= 2 && w.iter().all(u8::is_ascii_lowercase));
    one_case || words
}

/// Prefix token whose body mixes cases (`ico-…`: a lower-case hex body is a file hash).
pub(crate) fn mixed_case_token(s: &[u8]) -> bool {
    token_with_digit(s) && s.iter().any(u8::is_ascii_uppercase)
}

/// After its first part, only words of three or more letters in one case, at least two of
/// them (`sq0atp-REPLACE_WITH_YOUR_TOKEN`, `xoxb-your-bot-token`): a placeholder. Random
/// bodies split by `-`/`_` always leave some part that is not such a word.
fn worded(s: &[u8]) -> bool {
    let mut parts = s.split(|b| matches!(b, b'-' | b'_' | b'.')).skip(1);
    let word = |p: &[u8]| {
        p.len() >= 3
            && (p.iter().all(u8::is_ascii_lowercase) || p.iter().all(u8::is_ascii_uppercase))
    };
    let mut n = 0;
    parts.all(|p| {
        n += 1;
        word(p)
    }) && n >= 2
}

fn has_run(s: &[u8], b: u8, n: usize) -> bool {
    s.windows(n).any(|w| w.iter().all(|&c| c == b))
}

pub(crate) fn token_with_digit(s: &[u8]) -> bool {
    token(s) && s.iter().any(u8::is_ascii_digit)
}

/// AWS key id: random and not one of the documented `…EXAMPLE` keys.
pub(crate) fn aws(s: &[u8]) -> bool {
    token(s) && !s.windows(7).any(|w| w == b"EXAMPLE")
}

pub(crate) fn aws_secret(s: &[u8]) -> bool {
    entropy(s) >= 3.5 && !s.windows(7).any(|w| w == b"EXAMPLE")
}

/// Letters-only tokens (Hugging Face): must look random.
pub(crate) fn letters_token(s: &[u8]) -> bool {
    let body = s.iter().position(|&b| b == b'_').map_or(s, |i| &s[i + 1..]);
    let body = body
        .iter()
        .position(|&b| b == b'_')
        .map_or(body, |i| &body[i + 1..]);
    random_letters(body)
}

/// Last path segment of a webhook URL must look random.
pub(crate) fn random_tail(s: &[u8]) -> bool {
    let tail = s
        .rsplit(|&b| b == b'/')
        .find(|p| !p.is_empty())
        .unwrap_or(s);
    token(tail)
}

/// Auth header / bearer values.
pub(crate) fn header_value(s: &[u8]) -> bool {
    looks_secret(s, 8, 3.0)
}

/// Values found next to a provider keyword (Discord, Twilio, Cloudflare…).
pub(crate) fn contextual(s: &[u8]) -> bool {
    looks_secret(s, 8, 3.2)
}

/// Passwords in URLs, `.netrc`, XML and `curl -u`: anything that is not a placeholder.
pub(crate) fn password(s: &[u8]) -> bool {
    const WORDS: &[&str] = &[
        "pass", "pwd", "pw", "user", "username", "admin", "root", "test",
    ];
    !(s.len() < 3
        || is_placeholder(s)
        || WORDS.iter().any(|w| s.eq_ignore_ascii_case(w.as_bytes()))
        || (s.len() <= 5 && s.iter().all(u8::is_ascii_digit))
        || matches!(s.first(), Some(b'$' | b'{' | b'<' | b'%' | b'*' | b'[')))
}

/// JWT: the header must decode to a JSON object naming an algorithm or a type.
pub(crate) fn jwt(s: &[u8]) -> bool {
    let header = s.split(|&b| b == b'.').next().unwrap_or(s);
    let decoded = b64url_decode(&header[..header.len().min(512)]);
    decoded.starts_with(b"{") && (contains(&decoded, b"\"alg\"") || contains(&decoded, b"\"typ\""))
}

fn contains(h: &[u8], n: &[u8]) -> bool {
    h.windows(n.len()).any(|w| w == n)
}

fn b64url_decode(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for &c in s {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' | b'+' => 62,
            b'_' | b'/' => 63,
            _ => break,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entropy_and_randomness() {
        assert!(entropy(b"aaaa") < 0.01);
        assert!((entropy(b"abcd") - 2.0).abs() < 1e-9);
        assert!(random_letters(b"qWeRtYzXcVbNmAsDfGhJkLpO"));
        assert!(!random_letters(b"AbstractSingletonProxyFactoryBean"));
        assert!(!token(b"ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"));
    }

    #[test]
    fn code_and_placeholders() {
        for v in [
            &b"${API_KEY}"[..],
            b"self.token",
            b"os.environ[\"X\"]",
            b"f(x)",
            b"<your-key>",
        ] {
            assert!(!looks_secret(v, 8, 3.0), "{}", String::from_utf8_lossy(v));
        }
        assert!(!looks_secret(b"settings.SECRET_KEY", 8, 3.0));
        assert!(!looks_secret(b"MY_TOKEN_V2", 8, 3.0));
        assert!(looks_secret(b"s3cr3t-P4ssw0rd!x", 8, 3.0));
        assert!(!looks_secret(
            b"dev-only-secret-not-for-production-use-minimum-64-bytes",
            8,
            3.0
        ));
        assert!(looks_secret(
            b"123e4567-e89b-12d3-a456-426614174000",
            8,
            3.0
        ));
    }

    #[test]
    fn jwt_header() {
        assert!(jwt(
            b"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxIn0.sig"
        ));
        assert!(!jwt(b"eyJmb28iOiJiYXIifQ.eyJzdWIiOiIxIn0.sig"));
    }
}
