//! The built-in rules (redaction.md §2), as data: the row types and helpers here, the rows in
//! `rules_a.rs` (tier A) and `rules_bc.rs` (tiers B and C).
//!
//! Every rule has literal anchors for the prefilter and either a regex, run in a window
//! around each anchor hit, or a custom matcher. An anchor written `^x` starts the secret: a
//! hit right after a letter, digit or `_` (not an escape) is dropped before any regex runs. Regexes name the secret `(?P<s>…)` and may use
//! boundary macros that also accept JSON escapes (`\n` before a token, an ANSI colour code):
//! `%L%`/`%R%` (token boundary), `%RD%` (right, `-` counts as token), `%LB%`/`%RB%`
//! (base64 context: `+ / -` and `=` on the right count as token). Patterns are written for
//! both the raw escaped line and the decoded string.
//!
//! Windows: `back` bytes before the anchor and `ahead` after it. A failed search scans the
//! whole window, so windows stay small (≤ 256 ahead); a match that reaches the window's end
//! is searched again without the limit, so long tokens are still found whole.

use crate::filters;
use crate::generic::Site;

/// How much a family can be trusted: A and B are always on, C is the contextual tier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub enum Tier {
    /// Self-identifying prefix tokens: almost no false positives.
    A,
    /// Shorter prefixes or simple context, with boundary, entropy and allowlist checks.
    B,
    /// Generic and contextual rules (`NAME=value`, config files, e-mail addresses); enabled
    /// by `Level::Strict`.
    C,
}

pub(crate) type CustomFn = fn(&mut Site<'_>, &mut Vec<(usize, usize)>);
pub(crate) type CheckFn = fn(&[u8]) -> bool;

pub(crate) enum Pattern {
    Regex {
        re: &'static str,
        back: usize,
        ahead: usize,
    },
    Custom(CustomFn),
    /// A provider's word as the anchor, then every match of `re` (a secret with its own
    /// boundaries) within the `words` words after it on the same line.
    Near {
        re: &'static str,
        words: usize,
    },
}

/// A cheap test around the anchor `s..e`, run before the pattern (literals compare ASCII
/// case-insensitively).
#[derive(Clone, Copy)]
pub(crate) enum Guard {
    None,
    /// The text right before the anchor ends with this.
    Before(&'static str),
    /// The text right after the anchor starts with this.
    After(&'static str),
    /// The byte `.0` bytes after the anchor's start is `.1` (`pat` + 14 + `.`).
    ByteAt(usize, u8),
    /// Any other cheap test on `(hay, s, e)`.
    Fn(fn(&[u8], usize, usize) -> bool),
}

impl Guard {
    pub(crate) fn pass(self, hay: &[u8], s: usize, e: usize) -> bool {
        match self {
            Guard::None => true,
            Guard::Before(w) => {
                s >= w.len() && hay[s - w.len()..s].eq_ignore_ascii_case(w.as_bytes())
            }
            Guard::After(w) => {
                hay.len() - e >= w.len() && hay[e..e + w.len()].eq_ignore_ascii_case(w.as_bytes())
            }
            Guard::ByteAt(off, b) => hay.get(s + off) == Some(&b),
            Guard::Fn(f) => f(hay, s, e),
        }
    }
}

pub(crate) struct Def {
    pub(crate) id: &'static str,
    pub(crate) tier: Tier,
    pub(crate) anchors: &'static [&'static str],
    pub(crate) pattern: Pattern,
    pub(crate) check: Option<CheckFn>,
    pub(crate) guard: Guard,
    pub(crate) about: &'static str,
}

impl Def {
    pub(crate) const fn g(self, guard: Guard) -> Def {
        Def { guard, ..self }
    }
}

/// Every built-in rule in priority order: the order matters only for ties (when spans of two
/// rules of the same tier overlap, the earlier rule names the finding).
pub(crate) fn builtin() -> impl Iterator<Item = &'static Def> {
    crate::rules_a::TIER_A
        .iter()
        .chain(crate::rules_bc::TIER_B)
        .chain(crate::rules_bc::TIER_C)
}

pub(crate) fn expand(re: &str) -> String {
    const ESC: &str = r"\\[nrt]|\\u[0-9a-fA-F]{4}|\[[0-9;]{0,12}m";
    re.replace("%LB%", &format!("(?:^|[^0-9A-Za-z_+/-]|{ESC})"))
        .replace("%RB%", "(?:$|[^0-9A-Za-z_+/=-])")
        .replace("%RD%", "(?:$|[^0-9A-Za-z_-])")
        .replace("%L%", &format!("(?:^|[^0-9A-Za-z_]|{ESC})"))
        .replace("%R%", "(?:$|[^0-9A-Za-z_])")
}

const fn row(
    id: &'static str,
    tier: Tier,
    anchors: &'static [&'static str],
    pattern: Pattern,
    check: Option<CheckFn>,
    guard: Guard,
    about: &'static str,
) -> Def {
    Def {
        id,
        tier,
        anchors,
        pattern,
        check,
        guard,
        about,
    }
}

#[expect(clippy::too_many_arguments, reason = "one row of the rule table")]
pub(crate) const fn rx(
    id: &'static str,
    tier: Tier,
    anchors: &'static [&'static str],
    re: &'static str,
    back: usize,
    ahead: usize,
    check: Option<CheckFn>,
    about: &'static str,
) -> Def {
    row(
        id,
        tier,
        anchors,
        Pattern::Regex { re, back, ahead },
        check,
        Guard::None,
        about,
    )
}

pub(crate) const fn cu(
    id: &'static str,
    tier: Tier,
    anchors: &'static [&'static str],
    f: CustomFn,
    about: &'static str,
) -> Def {
    row(
        id,
        tier,
        anchors,
        Pattern::Custom(f),
        None,
        Guard::None,
        about,
    )
}

#[expect(clippy::too_many_arguments, reason = "one row of the rule table")]
pub(crate) const fn nr(
    id: &'static str,
    tier: Tier,
    anchors: &'static [&'static str],
    re: &'static str,
    words: usize,
    check: Option<CheckFn>,
    guard: Guard,
    about: &'static str,
) -> Def {
    row(
        id,
        tier,
        anchors,
        Pattern::Near { re, words },
        check,
        guard,
        about,
    )
}

pub(crate) const TOK: Option<CheckFn> = Some(filters::token);
pub(crate) const TOKD: Option<CheckFn> = Some(filters::token_with_digit);
pub(crate) const PW: Option<CheckFn> = Some(filters::password);
