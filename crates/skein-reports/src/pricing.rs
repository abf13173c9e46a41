//! Model prices for `skein usage`: a table embedded in the binary (`pricing.json` beside this
//! crate's manifest), which a user file can extend or override.
//!
//! Prices are USD per million tokens for base input, output, 5-minute and 1-hour cache
//! writes, and cache reads. A model can have a `long_context` band (a request whose prompt,
//! `input + cache writes + cache reads`, exceeds `threshold` tokens is billed entirely at the
//! band's rates, as Anthropic bills long-context requests) and a `fast_multiplier` (applied to
//! every rate of a request made in fast mode, `usage.speed == "fast"`).
//!
//! Model names are matched after normalisation (see [`normalize_model`]): a pattern matches
//! the exact name, or the name followed by `-YYYYMMDD` or `-latest`; the longest matching
//! pattern wins, and entries of an override file are tried before the embedded ones.

use serde::Deserialize;

use crate::usage::Tokens;

/// The embedded table (JSON).
pub const EMBEDDED_JSON: &str = include_str!("../pricing.json");

/// Rates in USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct Rates {
    pub input: f64,
    pub output: f64,
    pub cache_write_5m: f64,
    pub cache_write_1h: f64,
    pub cache_read: f64,
}

/// A band of higher rates for requests with long prompts.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct LongContext {
    /// Prompt tokens (input + cache writes + cache reads) above which the band applies.
    pub threshold: u64,
    #[serde(flatten)]
    pub rates: Rates,
}

fn one() -> f64 {
    1.0
}

/// One priced model (or model family).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ModelPrice {
    /// A display name.
    pub name: String,
    /// Normalised model-name patterns (see the module documentation).
    #[serde(rename = "match")]
    pub patterns: Vec<String>,
    #[serde(flatten)]
    pub rates: Rates,
    #[serde(default)]
    pub long_context: Option<LongContext>,
    /// Multiplier on every rate for fast-mode requests (1 when absent).
    #[serde(default = "one")]
    pub fast_multiplier: f64,
}

/// A price table.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PricingTable {
    /// Where the prices come from.
    #[serde(default)]
    pub source: String,
    /// The day the prices were checked.
    #[serde(default)]
    pub as_of: String,
    pub models: Vec<ModelPrice>,
}

/// Why a price file was refused.
#[derive(Debug, thiserror::Error)]
pub enum PricingError {
    #[error("{origin}: invalid price table: {source}")]
    Parse {
        origin: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("{origin}: model {model:?}: {problem}")]
    Invalid {
        origin: String,
        model: String,
        problem: &'static str,
    },
}

/// A model name reduced to the form the patterns use, and whether it names fast mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NormalizedModel {
    pub name: String,
    pub fast: bool,
}

/// Normalises a model name for price lookup: lower case; a `[…]` suffix (`[1m]`) dropped; a
/// provider prefix dropped (everything through the last `anthropic.` or `/`, as in
/// `us.anthropic.claude-…` or `anthropic/claude-…`); a Vertex `@date` turned into `-date`;
/// a Bedrock `-vN` / `-vN:M` suffix dropped; a `-fast` suffix (added by `skein usage` to
/// fast-mode requests) dropped and reported as `fast`.
pub fn normalize_model(model: &str) -> NormalizedModel {
    let mut s = model.trim().to_ascii_lowercase();
    if let Some(i) = s.find('[') {
        s.truncate(i);
    }
    if let Some(i) = s.rfind("anthropic.") {
        s.drain(..i + "anthropic.".len());
    }
    if let Some(i) = s.rfind('/') {
        s.drain(..=i);
    }
    s = s.replace('@', "-");
    if let Some(i) = s.rfind("-v") {
        let rest = &s[i + 2..];
        let ok = !rest.is_empty()
            && rest
                .split(':')
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
        if ok {
            s.truncate(i);
        }
    }
    let fast = s.ends_with("-fast");
    if fast {
        s.truncate(s.len() - "-fast".len());
    }
    NormalizedModel { name: s, fast }
}

/// Whether `pattern` names `name`: equal, or followed by `-YYYYMMDD` or `-latest`.
fn pattern_matches(pattern: &str, name: &str) -> bool {
    let Some(rest) = name.strip_prefix(pattern) else {
        return false;
    };
    if rest.is_empty() || rest == "-latest" {
        return true;
    }
    rest.strip_prefix('-')
        .is_some_and(|d| d.len() == 8 && d.bytes().all(|b| b.is_ascii_digit()))
}

impl PricingTable {
    /// The table embedded in the binary.
    pub fn embedded() -> Self {
        Self::from_json(EMBEDDED_JSON, "embedded price table")
            .expect("the embedded price table is valid (tested)")
    }

    /// Parses a table; `origin` names it in errors.
    pub fn from_json(text: &str, origin: &str) -> Result<Self, PricingError> {
        let table: Self = serde_json::from_str(text).map_err(|source| PricingError::Parse {
            origin: origin.to_owned(),
            source,
        })?;
        for m in &table.models {
            let invalid = |problem| PricingError::Invalid {
                origin: origin.to_owned(),
                model: m.name.clone(),
                problem,
            };
            if m.patterns.is_empty() {
                return Err(invalid("no \"match\" patterns"));
            }
            let mut all = vec![m.rates];
            all.extend(m.long_context.map(|l| l.rates));
            let bad = |x: f64| !x.is_finite() || x < 0.0;
            if all.iter().any(|r| {
                [
                    r.input,
                    r.output,
                    r.cache_write_5m,
                    r.cache_write_1h,
                    r.cache_read,
                ]
                .into_iter()
                .any(bad)
            }) || bad(m.fast_multiplier)
            {
                return Err(invalid("a rate is negative or not a number"));
            }
        }
        Ok(table)
    }

    /// This table with `overrides`' entries consulted first (the embedded table extended or
    /// overridden by a user file).
    #[must_use]
    pub fn overridden_by(self, overrides: Self) -> Self {
        let mut models = overrides.models;
        models.extend(self.models);
        Self {
            source: if overrides.source.is_empty() {
                self.source
            } else {
                overrides.source
            },
            as_of: if overrides.as_of.is_empty() {
                self.as_of
            } else {
                overrides.as_of
            },
            models,
        }
    }

    /// The price entry for a model name and whether the name asks for fast mode; `None` for
    /// an unknown model. Among several matching patterns the longest wins, then the first.
    pub fn lookup(&self, model: &str) -> Option<(&ModelPrice, bool)> {
        let n = normalize_model(model);
        let mut best: Option<(&ModelPrice, usize)> = None;
        for m in &self.models {
            for p in &m.patterns {
                let p = p.to_ascii_lowercase();
                if pattern_matches(&p, &n.name) && best.is_none_or(|(_, len)| p.len() > len) {
                    best = Some((m, p.len()));
                }
            }
        }
        best.map(|(m, _)| (m, n.fast))
    }
}

impl ModelPrice {
    /// Whether a request with these tokens is billed at the long-context band's rates.
    pub fn is_long(&self, t: &Tokens) -> bool {
        let prompt = t.input + t.cache_creation + t.cache_read;
        self.long_context.is_some_and(|l| prompt > l.threshold)
    }

    /// The cost in USD of one request's tokens.
    pub fn cost(&self, t: &Tokens, fast: bool) -> f64 {
        self.cost_at(t, self.is_long(t), fast)
    }

    /// The cost in USD of `t` (one request's tokens, or the sum of several requests' of one
    /// band) at the base rates, or at the long-context band's when `long` and there is one.
    pub fn cost_at(&self, t: &Tokens, long: bool, fast: bool) -> f64 {
        let rates = match &self.long_context {
            Some(l) if long => &l.rates,
            _ => &self.rates,
        };
        let per_mtok = t.input as f64 * rates.input
            + t.output as f64 * rates.output
            + t.cache_creation_5m as f64 * rates.cache_write_5m
            + t.cache_creation_1h as f64 * rates.cache_write_1h
            + t.cache_read as f64 * rates.cache_read;
        let multiplier = if fast { self.fast_multiplier } else { 1.0 };
        per_mtok / 1_000_000.0 * multiplier
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(input: u64, output: u64, cw5: u64, cw1: u64, read: u64) -> Tokens {
        Tokens {
            input,
            output,
            cache_creation: cw5 + cw1,
            cache_creation_5m: cw5,
            cache_creation_1h: cw1,
            cache_read: read,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn embedded_table_parses_and_prices_known_models() {
        let t = PricingTable::embedded();
        assert!(!t.as_of.is_empty());
        let cases = [
            ("claude-opus-4-7", 5.0),
            ("claude-opus-4-6", 5.0),
            ("claude-opus-4-5-20251101", 5.0),
            ("claude-opus-4-1-20250805", 15.0),
            ("claude-opus-4-20250514", 15.0),
            ("claude-sonnet-4-6", 3.0),
            ("claude-sonnet-4-5-20250929", 3.0),
            ("claude-sonnet-4-20250514", 3.0),
            ("claude-haiku-4-5-20251001", 1.0),
            ("claude-3-7-sonnet-20250219", 3.0),
            ("claude-3-5-sonnet-latest", 3.0),
            ("claude-3-5-haiku-20241022", 0.8),
            ("claude-3-haiku-20240307", 0.25),
            ("claude-3-opus-20240229", 15.0),
            ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", 3.0),
            ("claude-opus-4-1@20250805", 15.0),
            ("anthropic/claude-sonnet-4-6", 3.0),
            ("claude-opus-4-6[1m]", 5.0),
        ];
        for (name, input) in cases {
            let (m, fast) = t.lookup(name).unwrap_or_else(|| panic!("{name} priced"));
            assert!(!fast, "{name}");
            assert!(close(m.rates.input, input), "{name}: {}", m.rates.input);
        }
        for unknown in [
            "claude-opus-4-9",
            "gpt-5",
            "claude-opus-4-1-x",
            "<synthetic>",
            "",
        ] {
            assert!(t.lookup(unknown).is_none(), "{unknown}");
        }
    }

    #[test]
    fn costs_follow_rates_bands_and_fast_mode() {
        let t = PricingTable::embedded();
        let (opus, _) = t.lookup("claude-opus-4-7").expect("priced");
        // 1M of each kind: 5 + 25 + 6.25 + 10 + 0.5.
        let all = tokens(1_000_000, 1_000_000, 1_000_000, 1_000_000, 1_000_000);
        assert!(close(opus.cost(&all, false), 46.75));
        let (fast_opus, fast) = t.lookup("claude-opus-4-7-fast").expect("priced");
        assert!(fast);
        assert!(close(
            fast_opus.cost(&tokens(100_000, 0, 0, 0, 0), fast),
            3.0
        ));
        let (sonnet, _) = t.lookup("claude-sonnet-4-5").expect("priced");
        // 150k input + 100k cache read: prompt 250k > 200k, whole request at $6 / $0.60.
        let long = tokens(150_000, 10_000, 0, 0, 100_000);
        assert!(close(sonnet.cost(&long, false), 0.9 + 0.225 + 0.06));
        let short = tokens(150_000, 10_000, 0, 0, 50_000);
        assert!(close(sonnet.cost(&short, false), 0.45 + 0.15 + 0.015));
    }

    #[test]
    fn normalisation_and_overrides() {
        assert_eq!(
            normalize_model("US.Anthropic.Claude-Opus-4-6-v1"),
            NormalizedModel {
                name: "claude-opus-4-6".into(),
                fast: false
            }
        );
        assert!(normalize_model("claude-opus-4-6-fast").fast);
        let user = PricingTable::from_json(
            r#"{"models":[{"name":"mine","match":["claude-opus-4-7","my-model"],
                "input":1,"output":2,"cache_write_5m":3,"cache_write_1h":4,"cache_read":5}]}"#,
            "test",
        )
        .expect("valid");
        let t = PricingTable::embedded().overridden_by(user);
        assert_eq!(
            t.lookup("claude-opus-4-7").map(|m| m.0.name.as_str()),
            Some("mine")
        );
        assert_eq!(
            t.lookup("my-model-20260101").map(|m| m.0.name.as_str()),
            Some("mine")
        );
        assert!(t.lookup("claude-opus-4-6").is_some());
        let bad = PricingTable::from_json(
            r#"{"models":[{"name":"x","match":["x"],"input":-1,"output":2,"cache_write_5m":3,"cache_write_1h":4,"cache_read":5}]}"#,
            "test",
        );
        assert!(matches!(bad, Err(PricingError::Invalid { .. })));
        assert!(matches!(
            PricingTable::from_json("{", "test"),
            Err(PricingError::Parse { .. })
        ));
    }
}
