//! Secret redaction for Claude Code JSONL transcripts.
//!
//! [`Redactor::redact_line`] takes one JSONL line and writes it back with every secret inside
//! a JSON string value replaced by `[REDACTED:<rule-id>]`. Everything else stays
//! byte-identical: a line without findings is copied unchanged, and in a changed line only
//! the bytes of each secret are replaced (the placeholder needs no JSON escaping), so every
//! valid input line stays valid JSON. Redacting twice gives the same bytes as redacting once.
//!
//! How it works (see `docs/redact.md` and the research in redaction.md):
//! 1. **Prefilter on the raw line.** SIMD multi-literal search for the rules' anchors
//!    (`ghp_`, `sk-ant-`, `PRIVATE KEY`, `oken`…), each hit confirmed by its rules in a small
//!    window. Patterns tolerate JSON escapes around a secret (`\n` before it). Lines with no
//!    confirmed candidate, and no unusual escape (`\/`, `\u0041`), are copied as they are.
//! 2. **Slow path for candidate lines.** The line is walked as JSON; string values that hold a
//!    candidate (or an unusual escape) are unescaped and scanned again with all filters, then
//!    the secret spans are mapped back to raw bytes and replaced.
//!
//! Never touched: ids (`uuid`, `parentUuid`, `sessionId`, `requestId`, `id`, `tool_use_id`,
//! `agentId`, `promptId`, …), `timestamp`, thinking `signature`, base64 media (`data` of a
//! `source`/base64 block, `base64`), `encrypted_content`, and object keys.
//!
//! Lines that are not JSON are handled without panicking: quoted runs are treated as string
//! literals and the text between them as raw text (see [`LineOutcome::fallback`]).
//!
//! ```
//! use skein_redact::{Redactor, RedactOptions};
//! let r = Redactor::new(&RedactOptions::default()).unwrap();
//! let line = br#"{"uuid":"u1","message":{"content":"export GITHUB_TOKEN=ghp_R8x2Lk9QwZt4Vb7Nc1Md5Pf3Hs6Jg0Ya2Xe8"}}"#;
//! let mut out = Vec::new();
//! let outcome = r.redact_line(line, &mut out);
//! assert_eq!(out, br#"{"uuid":"u1","message":{"content":"export GITHUB_TOKEN=[REDACTED:github-token]"}}"#);
//! assert_eq!(outcome.findings[0].json_path, "message.content");
//! ```

mod confirm;
mod counts;
mod custom;
mod email;
mod engine;
mod filters;
mod generic;
mod json;
mod layout;
mod named;
mod protect;
mod redact;
mod rules_a;
mod rules_bc;
mod shapes;
mod table;
mod unescape;

use regex::bytes::RegexBuilder;
use serde::{Deserialize, Serialize};

pub use counts::RuleCounts;
use engine::{Engine, EngineParts, LazyRegex, Matcher, Rule};
pub use table::Tier;
use table::{Pattern, builtin};

/// Which rule tiers run. Tiers A and B are always on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// Provider tokens and structured secrets only (tiers A and B).
    Standard,
    /// Also the generic and contextual rules of tier C (`PASSWORD=…`, `.netrc`, …).
    #[default]
    Strict,
}

/// Options, e.g. from the `[redact]` section of a TOML config.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RedactOptions {
    pub level: Level,
    /// Extra rules; they win over built-in rules when spans overlap.
    pub user_rules: Vec<UserRule>,
    /// Regexes; a finding whose secret text matches one is kept as it is.
    pub allowlist: Vec<String>,
    /// Exact secret texts to keep as they are.
    pub allow_literals: Vec<String>,
    /// Rule ids (built-in or user) to switch off.
    pub disable: Vec<String>,
    /// Decode and scan every string value of every line instead of only the lines the raw
    /// prefilter flags (slower; for audits and for testing the fast path).
    pub decode_all: bool,
}

/// A user rule. The regex runs on the unescaped string value; the secret is the capture
/// group named `secret`, else group 1, else the whole match.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserRule {
    /// `[A-Za-z0-9._-]{1,64}`, distinct from the built-in ids.
    pub id: String,
    pub regex: String,
    /// Literals of which one must occur for the rule to run (case-sensitive). Without
    /// keywords the regex runs on every line, which is slow.
    #[serde(default)]
    pub keywords: Vec<String>,
}

/// One redacted secret. Never contains the secret itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub rule_id: String,
    /// Path of the string value, e.g. `message.content[0].input.command`; `?.key` or `?` on
    /// lines that are not JSON, empty for [`Redactor::redact_text`].
    pub json_path: String,
    /// Byte offsets of the secret in the unescaped string value (UTF-8).
    pub start: usize,
    pub end: usize,
    /// The record's top-level `uuid`, if it has one.
    pub uuid: Option<String>,
}

/// What [`Redactor::redact_line`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineOutcome {
    /// False when the output bytes equal the input bytes.
    pub changed: bool,
    pub findings: Vec<Finding>,
    /// The line had candidates but was not valid JSON, so the lenient scan was used.
    pub fallback: bool,
}

/// A rule as listed by [`builtin_rules`] and [`Redactor::rules`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuleInfo {
    pub id: String,
    /// `None` for user rules.
    pub tier: Option<Tier>,
    pub description: String,
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("user rule id `{id}` must be 1 to 64 characters of A-Z a-z 0-9 . _ -")]
    InvalidRuleId { id: String },
    #[error("rule id `{id}` is used twice")]
    DuplicateRuleId { id: String },
    #[error("user rule `{id}`: invalid regex")]
    UserRegex {
        id: String,
        #[source]
        source: regex::Error,
    },
    #[error(
        "user rule `{id}`: keyword {index} is empty or contains a quote, backslash or control character"
    )]
    InvalidKeyword { id: String, index: usize },
    #[error("allowlist entry {index}: invalid regex")]
    Allowlist {
        index: usize,
        #[source]
        source: regex::Error,
    },
    #[error("unknown rule `{id}` in `disable`")]
    UnknownRule { id: String },
    /// Not returned any more: built-in regexes are compiled on first use, and a unit test
    /// compiles every one of them. Kept so that matching on the error stays stable.
    #[error("built-in rule `{id}` does not compile (a bug)")]
    BuiltinRegex {
        id: &'static str,
        #[source]
        source: regex::Error,
    },
    #[error("cannot build the prefilter")]
    Prefilter(#[from] aho_corasick::BuildError),
}

/// Every built-in rule, in priority order.
pub fn builtin_rules() -> impl Iterator<Item = RuleInfo> {
    builtin().map(|d| RuleInfo {
        id: d.id.to_owned(),
        tier: Some(d.tier),
        description: d.about.to_owned(),
    })
}

/// A compiled rule set. Cheap to share across threads (`&Redactor` is `Sync`).
pub struct Redactor {
    engine: Engine,
    infos: Vec<RuleInfo>,
    decode_all: bool,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redactor")
            .field("rules", &self.infos.len())
            .field("decode_all", &self.decode_all)
            .finish_non_exhaustive()
    }
}

impl Redactor {
    pub fn new(opts: &RedactOptions) -> Result<Redactor, Error> {
        let user_ids: Vec<&str> = opts.user_rules.iter().map(|u| u.id.as_str()).collect();
        if let Some(id) = opts
            .disable
            .iter()
            .find(|d| !user_ids.contains(&d.as_str()) && !builtin().any(|b| b.id == *d))
        {
            return Err(Error::UnknownRule { id: id.clone() });
        }
        let mut p = EngineParts {
            rules: Vec::new(),
            anchors: Vec::new(),
            user_keywords: Vec::new(),
            always: Vec::new(),
            allow: Vec::new(),
            allow_literal: opts
                .allow_literals
                .iter()
                .map(|s| s.as_bytes().to_vec())
                .collect(),
        };
        let mut infos = Vec::new();
        for d in builtin() {
            if (d.tier == Tier::C && opts.level == Level::Standard)
                || opts.disable.iter().any(|x| x == d.id)
            {
                continue;
            }
            let matcher = match d.pattern {
                // Compiled on first use (see `LazyRegex`); `every_builtin_regex_compiles`
                // keeps `Error::BuiltinRegex` out of reach.
                Pattern::Regex { re, back, ahead } => Matcher::Regex {
                    re: LazyRegex::new(table::expand(re)),
                    back,
                    ahead,
                },
                Pattern::Custom(f) => Matcher::Custom(f),
                Pattern::Near { re, words } => Matcher::Near {
                    re: LazyRegex::new(table::expand(re)),
                    words,
                },
            };
            let priority = match d.tier {
                Tier::A => 3,
                Tier::B => 2,
                Tier::C => 1,
            };
            p.anchors.extend(
                d.anchors
                    .iter()
                    .map(|a| (a.as_bytes().to_vec(), p.rules.len())),
            );
            p.rules.push(Rule {
                id: d.id.to_owned(),
                priority,
                matcher,
                check: d.check,
                guard: d.guard,
            });
            infos.push(RuleInfo {
                id: d.id.to_owned(),
                tier: Some(d.tier),
                description: d.about.to_owned(),
            });
        }
        for (i, u) in opts.user_rules.iter().enumerate() {
            let id_ok = (1..=64).contains(&u.id.len())
                && u.id
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
            if !id_ok {
                return Err(Error::InvalidRuleId { id: u.id.clone() });
            }
            if builtin().any(|b| b.id == u.id) || user_ids[..i].contains(&u.id.as_str()) {
                return Err(Error::DuplicateRuleId { id: u.id.clone() });
            }
            if let Some(index) = u.keywords.iter().position(|k| {
                k.is_empty() || k.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\')
            }) {
                return Err(Error::InvalidKeyword {
                    id: u.id.clone(),
                    index,
                });
            }
            if opts.disable.contains(&u.id) {
                continue;
            }
            let re = RegexBuilder::new(&u.regex)
                .build()
                .map_err(|source| Error::UserRegex {
                    id: u.id.clone(),
                    source,
                })?;
            let group = re
                .capture_names()
                .position(|n| n == Some("secret"))
                .unwrap_or(usize::from(re.captures_len() > 1));
            let idx = p.rules.len();
            if u.keywords.is_empty() {
                p.always.push(idx);
            }
            p.user_keywords
                .extend(u.keywords.iter().map(|k| (k.as_bytes().to_vec(), idx)));
            p.rules.push(Rule {
                id: u.id.clone(),
                priority: 4,
                matcher: Matcher::User { re, group },
                check: None,
                guard: table::Guard::None,
            });
            infos.push(RuleInfo {
                id: u.id.clone(),
                tier: None,
                description: format!("user rule: {}", u.regex),
            });
        }
        for (index, a) in opts.allowlist.iter().enumerate() {
            p.allow.push(
                RegexBuilder::new(a)
                    .build()
                    .map_err(|source| Error::Allowlist { index, source })?,
            );
        }
        Ok(Redactor {
            engine: Engine::new(p)?,
            infos,
            decode_all: opts.decode_all,
        })
    }

    /// Redacts one JSONL line (without its line terminator), appending the result to `out`.
    pub fn redact_line(&self, line: &[u8], out: &mut Vec<u8>) -> LineOutcome {
        redact::line(&self.engine, self.decode_all, line, out)
    }

    /// Redacts plain text (a sidecar `tool-results/*.txt`, a log), appending to `out`.
    pub fn redact_text(&self, text: &[u8], out: &mut Vec<u8>) -> Vec<Finding> {
        redact::text(&self.engine, text, out)
    }

    /// Redacts a whole JSONL buffer line by line (each line as [`Redactor::redact_line`];
    /// `\n` and `\r\n` terminators and a last line without one are kept), appending to
    /// `out`, and returns the findings counted by rule id (for an audit trail of the write).
    pub fn redact_jsonl(&self, data: &[u8], out: &mut Vec<u8>) -> RuleCounts {
        redact::jsonl(&self.engine, self.decode_all, data, out)
    }

    /// The active rules (after level, `disable` and user rules).
    pub fn rules(&self) -> &[RuleInfo] {
        &self.infos
    }
}
