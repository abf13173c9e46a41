//! Tier C: the generic `NAME = value` rule (`.env`, YAML, JSON, TOML, shell, CLI flags).
//!
//! The anchor is a keyword inside an identifier (`oken` in `GITHUB_TOKEN`). The matcher
//! widens it to the whole identifier, requires an assignment operator and a value, and then
//! applies the name and value filters of redaction.md §3.6–3.7. It works the same on raw
//! (escaped) and on decoded text: `\"` counts as a quote, `\n` before a name is not part of it.

use memchr::memmem;

use crate::filters;
use crate::named::Squashed;

/// A value computed at most once per anchor hit; `Known(None)` means "looked, not there".
#[derive(Clone, Copy)]
enum Cached<T> {
    Unknown,
    Known(Option<T>),
}

/// An anchor hit handed to custom matchers, with the identifier around it computed once and
/// shared by every name-based rule of the anchor.
pub(crate) struct Site<'h> {
    pub(crate) hay: &'h [u8],
    pub(crate) s: usize,
    pub(crate) e: usize,
    /// `hay` is a raw (escaped) line: matches there only guide the slow path, which scans the
    /// decoded strings again.
    pub(crate) raw: bool,
    /// The identifier around the anchor, once `ident_done`.
    ident: Option<(usize, usize)>,
    ident_done: bool,
    squashed: Option<Squashed>,
    /// Password span found by the URL matchers (shared by the two URL rules).
    url: Cached<crate::custom::UrlParts>,
}

impl<'h> Site<'h> {
    pub(crate) fn new(hay: &'h [u8], s: usize, e: usize) -> Site<'h> {
        Site {
            hay,
            s,
            e,
            raw: false,
            ident: None,
            ident_done: false,
            squashed: None,
            url: Cached::Unknown,
        }
    }

    pub(crate) fn ident(&mut self) -> Option<(usize, usize)> {
        if !self.ident_done {
            self.ident = ident(self.hay, self.s, self.e);
            self.ident_done = true;
        }
        self.ident
    }

    /// Parses the URL around a `://` anchor once for every URL rule.
    pub(crate) fn url(
        &mut self,
        parse: fn(&[u8], usize, usize) -> Option<crate::custom::UrlParts>,
    ) -> Option<crate::custom::UrlParts> {
        if let Cached::Known(u) = self.url {
            return u;
        }
        let u = parse(self.hay, self.s, self.e);
        self.url = Cached::Known(u);
        u
    }

    pub(crate) fn squashed(&mut self) -> Option<&Squashed> {
        let (a, b) = self.ident()?;
        let hay = self.hay;
        Some(
            self.squashed
                .get_or_insert_with(|| Squashed::new(&hay[a..b])),
        )
    }
}

/// Which keyword family a name must contain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    Password,
    Secret,
    Token,
    ApiKey,
}

const PASSWORD: &[&str] = &["password", "passwd", "passphrase"];
const SECRET: &[&str] = &["secret", "credential"];
/// Words that make `<word>[_]key` an API-key name (`api_key`, `accessKey`, `PRIVATE_KEY`).
const KEY_PREFIXES: &[&str] = &[
    "api",
    "access",
    "private",
    "secret",
    "app",
    "client",
    "auth",
    "master",
    "encryption",
    "signing",
    "account",
    "service",
    "license",
    "subscription",
    "consumer",
    "shared",
    "admin",
    "server",
];

/// Services whose name makes `<service>…_key` a credential name even without `api`/`secret`
/// before `key` (gitleaks' semi-generic rules name the same services).
const PROVIDERS: &[&str] = &[
    "adafruit",
    "adobe",
    "airtable",
    "algolia",
    "alibaba",
    "aliyun",
    "amplitude",
    "anthropic",
    "artifactory",
    "asana",
    "atlassian",
    "azure",
    "beamer",
    "bintray",
    "bitbucket",
    "bittrex",
    "braintree",
    "clickhouse",
    "cloudflare",
    "codecov",
    "cohere",
    "coinbase",
    "confluence",
    "confluent",
    "contentful",
    "datadog",
    "deepseek",
    "discord",
    "doppler",
    "droneci",
    "dropbox",
    "dynatrace",
    "easypost",
    "etsy",
    "facebook",
    "fastly",
    "finicity",
    "finnhub",
    "firebase",
    "flickr",
    "freshbooks",
    "gemini",
    "github",
    "gitlab",
    "gitter",
    "gocardless",
    "google",
    "grafana",
    "groq",
    "heroku",
    "hubspot",
    "intercom",
    "jfrog",
    "jira",
    "kraken",
    "kucoin",
    "launchdarkly",
    "linear",
    "linkedin",
    "looker",
    "mailchimp",
    "mailgun",
    "mapbox",
    "mattermost",
    "meraki",
    "messagebird",
    "message_bird",
    "mistral",
    "mixpanel",
    "netlify",
    "newrelic",
    "new_relic",
    "nytimes",
    "okta",
    "openai",
    "openrouter",
    "pinecone",
    "plaid",
    "planetscale",
    "postmark",
    "privateai",
    "private_ai",
    "pusher",
    "rapidapi",
    "replicate",
    "segment",
    "sendbird",
    "sendgrid",
    "sentry",
    "shopify",
    "slack",
    "snyk",
    "sonar",
    "square",
    "squarespace",
    "stripe",
    "sumologic",
    "supabase",
    "telegram",
    "travis",
    "twilio",
    "twitch",
    "twitter",
    "typeform",
    "vercel",
    "yandex",
    "zendesk",
];

/// [`PROVIDERS`] as one automaton: a name is searched once, not once per provider.
static PROVIDER_NAMES: std::sync::LazyLock<aho_corasick::AhoCorasick> =
    std::sync::LazyLock::new(|| {
        aho_corasick::AhoCorasick::new(PROVIDERS).expect("a few literals always build")
    });

/// What may follow the keyword inside the name (`GITHUB_TOKEN_PROD`, `secret_key_base`,
/// camelCase `mySecretString`: the name is lower-cased, so the `_` is optional).
fn tail_ok(tail: &[u8]) -> bool {
    const TAILS: &[&str] = &[
        "key",
        "value",
        "val",
        "str",
        "string",
        "b64",
        "base64",
        "hex",
        "raw",
        "plain",
        "plaintext",
        "base",
        "key_base",
        "keybase",
        "secret",
        "token",
        "pass",
        "prod",
        "production",
        "dev",
        "development",
        "test",
        "staging",
        "stage",
        "live",
        "local",
        "old",
        "new",
        "current",
        "primary",
        "secondary",
        "master",
        "admin",
        "root",
        "encoded",
        "encrypted",
    ];
    let t = tail.strip_prefix(b"_").unwrap_or(tail);
    tail.iter().all(|b| b.is_ascii_digit() || *b == b'_') || TAILS.iter().any(|w| w.as_bytes() == t)
}

/// A name whose last word before the keyword is one of these is not a credential
/// (`max_tokens`, `page_token`, `csrf_token`, `public_key`, `forgot_password`).
fn head_stop(word: &[u8]) -> bool {
    matches!(
        word,
        b"public"
            | b"csrf"
            | b"xsrf"
            | b"page"
            | b"next"
            | b"continuation"
            | b"cancel"
            | b"cancellation"
            | b"max"
            | b"min"
            | b"num"
            | b"total"
            | b"input"
            | b"output"
            | b"prompt"
            | b"completion"
            | b"cache"
            | b"sort"
            | b"primary"
            | b"foreign"
            | b"partition"
            | b"hash"
            | b"hashed"
            | b"idempotency"
            | b"forgot"
            | b"reset"
            | b"confirm"
            | b"sync"
            | b"lexer"
            | b"parse"
            | b"parser"
            | b"count"
            | b"budget"
            | b"estimate"
            | b"estimated"
            | b"thinking"
            | b"reasoning"
            | b"cached"
            | b"remaining"
            | b"used"
    )
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')
}

/// `name <op> value` found around an anchor: the value span.
pub(crate) struct Assign {
    pub(crate) value: (usize, usize),
    /// The value was inside quotes (so punctuation is part of it, not code).
    pub(crate) quoted: bool,
}

/// Widens the anchor at `astart..aend` to the identifier around it; stops at `\n`, `\t`,
/// `\r` escapes on the left.
pub(crate) fn ident(hay: &[u8], astart: usize, aend: usize) -> Option<(usize, usize)> {
    let mut i = astart;
    while i > 0 && astart - i < 64 && is_ident(hay[i - 1]) {
        if matches!(hay[i - 1], b'n' | b'r' | b't') && i >= 2 && hay[i - 2] == b'\\' {
            break;
        }
        i -= 1;
    }
    let mut j = aend;
    while j < hay.len() && is_ident(hay[j]) {
        j += 1;
        if j - aend > 40 {
            return None;
        }
    }
    Some((i, j))
}

/// Reads the operator and the value after the identifier `i..j`.
pub(crate) fn parse(hay: &[u8], (i, j): (usize, usize)) -> Option<Assign> {
    let flag = hay[i..j].starts_with(b"--");
    let key_quoted = quote_at(hay, j).is_some();
    // 2. Closing quote of a key, operator, opening quote.
    let mut k = skip_quote(hay, j);
    if i > 0 && hay[i - 1] == b'<' && hay.get(j) == Some(&b'>') {
        // `<apiToken>\n    value\n</apiToken>`: an XML element is the assignment.
        k = skip_breaks(hay, j + 1);
    } else if !(flag && hay.get(k) == Some(&b' ')) {
        k = skip_type(hay, skip_blank(hay, k));
        let comma = hay.get(k) == Some(&b',');
        k += operator(&hay[k..hay.len().min(k + 4)], key_quoted)?;
        // `("API_TOKEN", "…")` only: a comma before an unquoted word is a list.
        if comma && quote_at(hay, skip_blank(hay, k)).is_none() {
            return None;
        }
    }
    k = skip_blank(hay, k);
    let quoted = k < hay.len() && quote_at(hay, k).is_some();
    if quoted {
        k = skip_quote(hay, k);
    }
    // 3. The value: up to a quote, a backslash (raw escape), a blank or a separator.
    let start = k;
    while k < hay.len() {
        if k - start > 4096 {
            return None;
        }
        let stop = match hay[k] {
            b'"' | b'\'' | b'`' | b'\\' => true,
            b' ' | b'\t' | b'\n' | b'\r' | 0..=0x1f => {
                if quoted {
                    return None; // a quoted value with blanks is prose, not a credential
                }
                true
            }
            b',' | b';' | b')' | b']' | b'}' | b'<' | b'>' | b'|' | b'&' => !quoted,
            _ => false,
        };
        if stop {
            break;
        }
        k += 1;
    }
    Some(Assign {
        value: (start, k),
        quoted,
    })
}

/// Generic rule: finds `name <op> value` around the anchor and pushes the value span.
pub(crate) fn assignment(class: Class, site: &mut Site<'_>, out: &mut Vec<(usize, usize)>) {
    let Some(name) = site.ident() else { return };
    let hay = site.hay;
    if !name_ok(class, &hay[name.0..name.1]) {
        return;
    }
    let Some(a) = parse(hay, name) else { return };
    // In a raw line a `\uXXXX` escape (a non-ASCII character some writers escape) cuts the
    // value short; whether it is a secret is decided on the decoded string.
    if site.raw && hay[a.value.1..].starts_with(b"\\u") {
        out.push((a.value.0, a.value.1 + 2));
        return;
    }
    let value = &hay[a.value.0..a.value.1];
    let (min_len, min_entropy) = match class {
        Class::Password => (6, 2.3),
        _ => (8, 3.0),
    };
    let numeric = !value.is_empty() && value.iter().all(u8::is_ascii_digit);
    let ok = if numeric {
        class == Class::Password && value.len() >= min_len && !filters::mostly_one_byte(value)
    } else {
        filters::looks_secret(value, min_len, min_entropy)
            // `SECRET_KEY = 'django-insecure-k#9x!2@v^m(q)…'`: quoted random text with
            // punctuation, which the code filters would take for an expression.
            || (a.quoted && filters::random_punct(value))
    };
    if ok {
        out.push(a.value);
    }
}

/// Length of the assignment operator at the start of `w`: `=`, `:`, `:=`, `=>`, Make's `::=`,
/// `:::=`, `?=`, PHP's `.=`, `??=`, `||=`, and `,` between a quoted name and its value
/// (`setProperty("API_TOKEN", "…")`); `None` for comparisons (`==`, `=~`) and paths (`::`).
fn operator(w: &[u8], key_quoted: bool) -> Option<usize> {
    match w {
        [b':', b':', b':', b'=', ..] => Some(4),
        [b':', b':', b'=', ..] | [b'?', b'?', b'=', ..] | [b'|', b'|', b'=', ..] => Some(3),
        [b':' | b'?' | b'.', b'=', ..] | [b'=', b'>', ..] => Some(2),
        [b'=', b'=' | b'~', ..] | [b':', b':', ..] => None,
        [b'=' | b':', ..] => Some(1),
        [b',', ..] if key_quoted => Some(1),
        _ => None,
    }
}

/// Skips a string type between a name and its `=` (`var apiToken string = …`, TypeScript's
/// `apiToken: string = …`); otherwise returns `k`.
fn skip_type(hay: &[u8], k: usize) -> usize {
    let m = if hay.get(k) == Some(&b':') {
        skip_blank(hay, k + 1)
    } else {
        k
    };
    for t in [&b"string"[..], b"String", b"str", b"&str"] {
        if hay[m..].starts_with(t) {
            let n = skip_blank(hay, m + t.len());
            if hay.get(n) == Some(&b'=') && hay.get(n + 1) != Some(&b'=') {
                return n;
            }
        }
    }
    k
}

/// Skips blanks and line breaks, real or escaped (`\n`, `\r`, `\t` in a raw line).
fn skip_breaks(hay: &[u8], mut k: usize) -> usize {
    let start = k;
    while k < hay.len() && k - start < 256 {
        match hay[k] {
            b' ' | b'\t' | b'\n' | b'\r' => k += 1,
            b'\\' if matches!(hay.get(k + 1), Some(b'n' | b'r' | b't')) => k += 2,
            _ => break,
        }
    }
    k
}

fn quote_at(hay: &[u8], k: usize) -> Option<usize> {
    let mut m = k;
    while m < hay.len() && m - k < 4 && hay[m] == b'\\' {
        m += 1;
    }
    matches!(hay.get(m), Some(b'"' | b'\'' | b'`')).then_some(m + 1)
}

fn skip_quote(hay: &[u8], k: usize) -> usize {
    quote_at(hay, k).unwrap_or(k)
}

fn skip_blank(hay: &[u8], mut k: usize) -> usize {
    let start = k;
    while k < hay.len() && k - start < 8 && matches!(hay[k], b' ' | b'\t') {
        k += 1;
    }
    k
}

/// Name filter: the name must contain a keyword of `class`, with an allowed tail after the
/// last keyword and no stop word right before it.
fn name_ok(class: Class, name: &[u8]) -> bool {
    let orig = match name.iter().position(|&b| b != b'-' && b != b'.') {
        Some(p) => &name[p..name.len().min(p + 128)],
        None => return false,
    };
    let mut buf = [0u8; 128];
    for (d, &s) in buf.iter_mut().zip(orig) {
        *d = if s == b'-' || s == b'.' {
            b'_'
        } else {
            s.to_ascii_lowercase()
        };
    }
    let norm = &buf[..orig.len()];
    let found = match class {
        Class::Password => last_of(norm, PASSWORD),
        Class::Secret => last_of(norm, SECRET),
        Class::Token => last_of(norm, &["token"]),
        Class::ApiKey => memmem::rfind(norm, b"key").and_then(|k| {
            let head = &norm[..k];
            let head = head.strip_suffix(b"_").unwrap_or(head);
            KEY_PREFIXES
                .iter()
                .find(|p| head.ends_with(p.as_bytes()))
                .map(|p| (head.len() - p.len(), k + 3 - (head.len() - p.len())))
                // `ALGOLIA_SEARCH_KEY`, `ADAFRUIT_IO_KEY`: a provider's name anywhere before.
                .or_else(|| PROVIDER_NAMES.is_match(head).then_some((k, 3)))
        }),
    };
    let Some((pos, kw)) = found else { return false };
    let tail = &norm[pos + kw..];
    // Plural `credentials` / `passwords` name a secret too; plural `tokens` never does, nor
    // `secrets` (a vault or a list of them: `keyVaultToStoreSecrets: cmp2-qat-1208358310`).
    let plural_ok = match class {
        Class::Password | Class::ApiKey => true,
        Class::Secret => kw == "credential".len(),
        Class::Token => false,
    };
    if !((tail == b"s" && plural_ok) || tail_ok(tail)) {
        return false;
    }
    // The last word before the keyword: it starts after `_`, at a camelCase hump, or at the
    // start of the name.
    let mut end = pos;
    if end > 0 && norm[end - 1] == b'_' {
        end -= 1;
    }
    let mut start = end;
    // (A hump at `end` itself is where the keyword starts, not the head word: `publicToken`.)
    while start > 0
        && norm[start - 1] != b'_'
        && !(start < end
            && orig[start].is_ascii_uppercase()
            && orig[start - 1].is_ascii_lowercase())
    {
        start -= 1;
    }
    !head_stop(&norm[start..end])
}

/// The keyword of `kws` that ends last in `h`: (position, length).
fn last_of(h: &[u8], kws: &[&str]) -> Option<(usize, usize)> {
    kws.iter()
        .filter_map(|k| memmem::rfind(h, k.as_bytes()).map(|p| (p, k.len())))
        .max_by_key(|&(p, l)| p + l)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(class: Class, s: &str, anchor: &str) -> Option<String> {
        let a = s.find(anchor).expect("anchor present");
        let mut out = Vec::new();
        assignment(
            class,
            &mut Site::new(s.as_bytes(), a, a + anchor.len()),
            &mut out,
        );
        out.first().map(|&(x, y)| s[x..y].to_owned())
    }

    #[test]
    fn finds_assignments() {
        let t = Class::Token;
        assert_eq!(
            find(t, "export GITHUB_TOKEN=a8f5f167f44f4964e6c9", "OKEN").as_deref(),
            Some("a8f5f167f44f4964e6c9")
        );
        assert_eq!(
            find(t, r#"{\"auth_token\": \"Zx81kQp0Lm2vB7\"}"#, "oken").as_deref(),
            Some("Zx81kQp0Lm2vB7")
        );
        assert_eq!(
            find(t, r"x\nAPI_TOKEN: 'Zx81kQp0Lm2vB7'", "OKEN").as_deref(),
            Some("Zx81kQp0Lm2vB7")
        );
        assert_eq!(
            find(t, "--token Zx81kQp0Lm2vB7", "oken").as_deref(),
            Some("Zx81kQp0Lm2vB7")
        );
        let p = Class::Password;
        assert_eq!(
            find(p, "DB_PASSWORD=hunter22", "ASSW").as_deref(),
            Some("hunter22")
        );
        let django = "k#9x!2@v^m(q)z8w&l%0t+e*r=u-y3n7b5c$h1j4g6f";
        let line = format!("SECRET_KEY = 'django-insecure-{django}'");
        assert_eq!(
            find(Class::Secret, &line, "ECRET").as_deref(),
            Some(format!("django-insecure-{django}").as_str())
        );
        assert_eq!(
            find(
                Class::ApiKey,
                "ALGOLIA_SEARCH_KEY=Zx81kQp0Lm2vB7aa9",
                "_KEY"
            )
            .as_deref(),
            Some("Zx81kQp0Lm2vB7aa9")
        );
        // The syntaxes gitleaks' rule tests embed a secret in, beyond `=` and `:`.
        for s in [
            r#"var algoliaToken string = "Zx81kQp0Lm2vB7aa""#,
            r#"const algoliaToken: string = "Zx81kQp0Lm2vB7aa";"#,
            r#"$algoliaToken .= "Zx81kQp0Lm2vB7aa""#,
            r#"algolia_token ::= "Zx81kQp0Lm2vB7aa""#,
            r#"algolia_token :::= "Zx81kQp0Lm2vB7aa""#,
            r#"algolia_token ?= "Zx81kQp0Lm2vB7aa""#,
            r#"System.setProperty("algolia_token", "Zx81kQp0Lm2vB7aa")"#,
            r"<algoliaToken>\n    Zx81kQp0Lm2vB7aa\n</algoliaToken>",
        ] {
            assert_eq!(
                find(t, s, "oken").as_deref(),
                Some("Zx81kQp0Lm2vB7aa"),
                "{s}"
            );
        }
    }

    #[test]
    fn rejects_code() {
        let t = Class::Token;
        for s in [
            r#""input_tokens":3"#,
            "max_tokens = 4096",
            "tokens = self.0.clone()",
            "paren_token: parenthesized!(content in input)",
            "let token = lexer.next_token()?;",
            "if token == expected_value {",
            "next_page_token: Zx81kQp0Lm2vB7",
            "token: Option<String>",
            "token_type: Bearer",
            "csrf_token = Zx81kQp0Lm2vB7",
            "token = \"the token is stored elsewhere\"",
            "api_token = '[a-z0-9!@#$%^&*(-_=+)]{50}'",
            "token = '${{ secrets.DEPLOY_TOKEN }}-x1!@#'",
            "token: '<%= ENV[\"TOKEN_1a\"] %>!@#$%^&'",
            "Settings(bot=\"xoxb-token\", SLACK_APP_TOKEN=x9Zq81kQp0Lm2vB7)",
            "lookup(\"token\", fallback_value_42x)",
        ] {
            let a = s.find("oken").expect("anchor");
            let mut out = Vec::new();
            assignment(t, &mut Site::new(s.as_bytes(), a, a + 4), &mut out);
            assert!(out.is_empty(), "{s}");
        }
    }
}
