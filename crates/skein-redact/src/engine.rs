//! Detection engine: literal anchors found by SIMD multi-literal search, then each anchor's
//! rules confirmed in a window around the hit (redaction.md §4).
//!
//! Anchors of ≥ 4 bytes go to packed (Teddy) searchers of at most 32 patterns each, the
//! slim-Teddy sweet spot, ordered by [`crate::layout`]; the 3-byte anchors go to one small
//! Aho-Corasick automaton (itself Teddy-backed), and 2-byte anchors (`Q~`) to a memchr pass on
//! their rare last byte. Two markers flag escapes the raw patterns cannot see through.

use aho_corasick::{AhoCorasick, MatchKind, packed};
use memchr::memmem;
use regex::bytes::Regex;

use crate::confirm::{lead_ok, odd_escape, regex_at, regex_near};
use crate::generic::Site;
use crate::table::{CheckFn, CustomFn, Guard};

/// A confirmed secret: rule index and byte span in the scanned text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Hit {
    pub(crate) rule: usize,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// A built-in rule's regex, compiled on first use.
///
/// Compiling all ~60 built-in regexes takes several milliseconds, more than everything else a
/// hook process does on an incremental Stop; most runs confirm no candidate at all, so only
/// the rules whose anchors are actually hit pay for their regex. The patterns are constants
/// (every one is compiled by a unit test), so compiling cannot fail at run time.
pub(crate) struct LazyRegex {
    src: String,
    cell: std::sync::OnceLock<(Regex, usize)>,
}

impl LazyRegex {
    pub(crate) fn new(src: String) -> LazyRegex {
        LazyRegex {
            src,
            cell: std::sync::OnceLock::new(),
        }
    }

    /// Compiles the pattern (once per process and rule).
    pub(crate) fn compile(src: &str) -> Result<(Regex, usize), regex::Error> {
        let re = regex::bytes::RegexBuilder::new(src)
            .unicode(false)
            .build()?;
        let group = re.capture_names().position(|n| n == Some("s")).unwrap_or(0);
        Ok((re, group))
    }

    /// The regex and the index of its secret group (`s`, else the whole match).
    pub(crate) fn get(&self) -> (&Regex, usize) {
        let (re, group) = self.cell.get_or_init(|| {
            Self::compile(&self.src).expect("built-in regexes compile (checked by a unit test)")
        });
        (re, *group)
    }
}

pub(crate) enum Matcher {
    /// Regex with the secret in capture group `s`, searched in a window around the anchor.
    Regex {
        re: LazyRegex,
        back: usize,
        ahead: usize,
    },
    Custom(CustomFn),
    /// Every match of the regex's group `s` in the window after the anchor (see
    /// [`crate::table::Pattern::Near`]).
    Near {
        re: LazyRegex,
        words: usize,
    },
    /// User rule: regex over the whole text once one of its keywords occurs.
    User {
        re: Regex,
        group: usize,
    },
}

pub(crate) struct Rule {
    pub(crate) id: String,
    /// Higher wins when spans overlap: user rules 4, tier A 3, B 2, C 1.
    pub(crate) priority: u8,
    pub(crate) matcher: Matcher,
    pub(crate) check: Option<CheckFn>,
    pub(crate) guard: Guard,
}

enum Finder {
    Packed(packed::Searcher),
    Ac(AhoCorasick),
}

impl Finder {
    fn each(&self, hay: &[u8], mut f: impl FnMut(usize, usize, usize)) {
        match self {
            Finder::Packed(s) => s
                .find_iter(hay)
                .for_each(|m| f(m.pattern().as_usize(), m.start(), m.end())),
            Finder::Ac(a) => a
                .find_iter(hay)
                .for_each(|m| f(m.pattern().as_usize(), m.start(), m.end())),
        }
    }
}

/// Anchors shorter than 3 bytes that end in the same byte: that byte, and per anchor the bytes
/// before it and its id.
type TinyGroup = (u8, Vec<(Vec<u8>, usize)>);

/// Built by [`crate::Redactor::new`]; immutable and shareable across threads.
pub(crate) struct Engine {
    pub(crate) rules: Vec<Rule>,
    /// Finders with the global anchor id of each of their patterns and the bytes their Teddy
    /// masks cover (4 for the long anchors, 3 for the short ones).
    finders: Vec<(Finder, Vec<usize>, usize)>,
    /// Rules to confirm per global anchor id, including those of hidden anchors.
    anchor_rules: Vec<Vec<Entry>>,
    /// Global anchor ids of the `\u00` and `/\/` markers.
    escapes: [usize; 2],
    /// Anchors shorter than 3 bytes, found by one memchr pass on their last bytes: per last
    /// byte, the bytes before it and the anchor id.
    tiny: Vec<TinyGroup>,
    /// User keywords (pattern i → rule indices) and keyword-less user rules.
    user_kw: Option<(AhoCorasick, Vec<Vec<usize>>)>,
    always: Vec<usize>,
    allow: Vec<Regex>,
    allow_literal: Vec<Vec<u8>>,
    placeholder: memmem::Finder<'static>,
    slash: memmem::Finder<'static>,
}

pub(crate) struct EngineParts {
    pub(crate) rules: Vec<Rule>,
    /// (anchor, rule index) pairs of the built-in rules.
    pub(crate) anchors: Vec<(Vec<u8>, usize)>,
    pub(crate) user_keywords: Vec<(Vec<u8>, usize)>,
    pub(crate) always: Vec<usize>,
    pub(crate) allow: Vec<Regex>,
    pub(crate) allow_literal: Vec<Vec<u8>>,
}

/// Patterns per packed searcher: slim Teddy (8 buckets, AVX2 32 bytes per step) is used up
/// to 32 patterns; above that fat Teddy processes half as many bytes per step.
pub(crate) const GROUP: usize = 32;

/// Offsets inside `a` at which a match of `b` could start (and so be hidden by leftmost-first).
fn starts_inside(a: &[u8], b: &[u8]) -> Vec<usize> {
    (0..a.len())
        .filter(|&k| b.starts_with(&a[k..]) || a[k..].starts_with(b))
        .collect()
}

/// A rule to confirm at an anchor hit.
#[derive(Clone)]
struct Entry {
    rule: usize,
    /// The anchor starts the secret: it must follow a token boundary.
    lead: bool,
    /// For a rule of another anchor that may hide inside this one: its offset and literal.
    off: usize,
    hidden: Option<Box<[u8]>>,
}

impl Engine {
    pub(crate) fn new(p: EngineParts) -> Result<Engine, aho_corasick::BuildError> {
        let mut names: Vec<Vec<u8>> = Vec::new();
        let mut rules_of: Vec<Vec<(usize, bool)>> = Vec::new();
        for (a, r) in p.anchors {
            let (a, lead) = match a.strip_prefix(b"^") {
                Some(rest) => (rest.to_vec(), true),
                None => (a, false),
            };
            let id = names.iter().position(|n| *n == a).unwrap_or_else(|| {
                names.push(a);
                rules_of.push(Vec::new());
                names.len() - 1
            });
            if !rules_of[id].iter().any(|&(x, _)| x == r) {
                rules_of[id].push((r, lead));
            }
        }
        // Escape markers: `\u00` (a printable character written as `\u00XX` may hide an
        // anchor or break a secret) and `/\/` (a writer that escapes `/` turned `://` or
        // `1//0` into something no anchor matches).
        let escapes = [names.len(), names.len() + 1];
        names.extend([b"\\u00".to_vec(), b"/\\/".to_vec()]);
        rules_of.extend([Vec::new(), Vec::new()]);
        let mut anchor_rules: Vec<Vec<Entry>> = rules_of
            .iter()
            .map(|rs| {
                rs.iter()
                    .map(|&(rule, lead)| Entry {
                        rule,
                        lead,
                        off: 0,
                        hidden: None,
                    })
                    .collect()
            })
            .collect();
        let (long, short): (Vec<usize>, Vec<usize>) =
            (0..names.len()).partition(|&i| names[i].len() >= 4);
        // Two-byte anchors (`Q~`, `6~`) and `@` would force short Teddy masks; they get one
        // memchr pass on their (rare) last bytes instead.
        let (short, tiny): (Vec<usize>, Vec<usize>) =
            short.into_iter().partition(|&i| names[i].len() >= 3);
        let mut tiny_groups: Vec<TinyGroup> = Vec::new();
        for i in tiny {
            let (&last, head) = names[i].split_last().expect("anchors are not empty");
            match tiny_groups.iter_mut().find(|(b, _)| *b == last) {
                Some((_, heads)) => heads.push((head.to_vec(), i)),
                None => tiny_groups.push((last, vec![(head.to_vec(), i)])),
            }
        }
        let mut finders = Vec::new();
        // The 4-byte and the 3-byte anchors each get their own searchers (Teddy masks as many
        // bytes as the shortest pattern has), with the patterns ordered into buckets.
        for (set, width) in [(&long, 4), (&short, 3)] {
            if set.is_empty() {
                continue;
            }
            let set_pats: Vec<&[u8]> = set.iter().map(|&i| names[i].as_slice()).collect();
            for order in crate::layout::layout(&set_pats, GROUP, width) {
                let chunk: Vec<usize> = order.iter().map(|&k| set[k]).collect();
                let pats: Vec<&[u8]> = chunk.iter().map(|&i| names[i].as_slice()).collect();
                let mut cfg = packed::Config::new();
                cfg.match_kind(packed::MatchKind::LeftmostFirst)
                    .heuristic_pattern_limits(false);
                let mut b = cfg.builder();
                b.extend(&pats);
                let finder = match b.build() {
                    Some(s) => Finder::Packed(s),
                    None => Finder::Ac(leftmost(&pats)?),
                };
                // Leftmost-first hides a hit that starts inside another hit of the same
                // searcher, so an anchor also carries the rules of every anchor of its searcher
                // that could start inside it, with the offset; they run only if that anchor
                // really is there.
                for &i in &chunk {
                    for &j in chunk.iter().filter(|&&j| j != i) {
                        for off in starts_inside(&names[i], &names[j]) {
                            let hidden: Box<[u8]> = names[j].clone().into_boxed_slice();
                            let extra: Vec<Entry> = rules_of[j]
                                .iter()
                                .map(|&(rule, lead)| Entry {
                                    rule,
                                    lead,
                                    off,
                                    hidden: Some(hidden.clone()),
                                })
                                .collect();
                            anchor_rules[i].extend(extra);
                        }
                    }
                }
                finders.push((finder, chunk, width));
            }
        }
        let user_kw = if p.user_keywords.is_empty() {
            None
        } else {
            let mut kws: Vec<Vec<u8>> = Vec::new();
            let mut of: Vec<Vec<usize>> = Vec::new();
            for (k, r) in p.user_keywords {
                let id = kws.iter().position(|x| *x == k).unwrap_or_else(|| {
                    kws.push(k);
                    of.push(Vec::new());
                    kws.len() - 1
                });
                of[id].push(r);
            }
            // Overlapping search: a keyword inside another must still run its own rules.
            Some((AhoCorasick::new(&kws)?, of))
        };
        Ok(Engine {
            rules: p.rules,
            finders,
            tiny: tiny_groups,
            anchor_rules,
            escapes,
            user_kw,
            always: p.always,
            allow: p.allow,
            allow_literal: p.allow_literal,
            placeholder: memmem::Finder::new(b"[REDACTED:").into_owned(),
            slash: memmem::Finder::new(b"\\/").into_owned(),
        })
    }

    /// Finds all confirmed secrets in `hay`. `raw`: `hay` is a whole escaped line (the
    /// prefilter); the result is a superset guide for the slow path, and the return value
    /// tells whether the line has escapes the raw patterns cannot see through.
    pub(crate) fn scan(&self, hay: &[u8], raw: bool, hits: &mut Vec<Hit>) -> bool {
        let mut odd = false;
        let mut anchored = false;
        let mut spans = Vec::new();
        let mut on_anchor = |a: usize, s: usize, e: usize| {
            if a == self.escapes[0] {
                odd = odd || (raw && odd_escape(hay, s));
                return;
            }
            if self.escapes[1..].contains(&a) {
                odd = odd || raw;
                return;
            }
            anchored = true;
            let lead = lead_ok(hay, s);
            let mut own = Site::new(hay, s, e);
            own.raw = raw;
            for entry in &self.anchor_rules[a] {
                let (r, rule) = (entry.rule, &self.rules[entry.rule]);
                let (s, e, lead) = match &entry.hidden {
                    None => (s, e, lead),
                    Some(lit) => {
                        let s2 = s + entry.off;
                        if !hay[s2..].starts_with(lit) {
                            continue;
                        }
                        (s2, s2 + lit.len(), lead_ok(hay, s2))
                    }
                };
                if (entry.lead && !lead) || !rule.guard.pass(hay, s, e) {
                    continue;
                }
                let mut other;
                let site = if entry.hidden.is_some() {
                    other = Site::new(hay, s, e);
                    other.raw = raw;
                    &mut other
                } else {
                    &mut own
                };
                spans.clear();
                match &rule.matcher {
                    Matcher::Regex { re, back, ahead } => {
                        let (re, group) = re.get();
                        regex_at(re, group, *back, *ahead, hay, s, e, &mut spans);
                    }
                    Matcher::Custom(f) => f(site, &mut spans),
                    Matcher::Near { re, words } => {
                        let (re, group) = re.get();
                        regex_near(re, group, *words, hay, e, &mut spans);
                    }
                    Matcher::User { .. } => {}
                }
                for &(a, b) in &spans {
                    if b > a && rule.check.is_none_or(|c| c(&hay[a..b])) {
                        hits.push(Hit {
                            rule: r,
                            start: a,
                            end: b,
                        });
                    }
                }
            }
        };
        for (finder, ids, _) in &self.finders {
            finder.each(hay, |p, s, e| on_anchor(ids[p], s, e));
        }
        let mut on_tiny = |i: usize| {
            for (_, heads) in self.tiny.iter().filter(|(b, _)| *b == hay[i]) {
                for (head, a) in heads {
                    if i >= head.len() && &hay[i - head.len()..i] == head.as_slice() {
                        on_anchor(*a, i - head.len(), i + 1);
                    }
                }
            }
        };
        match self.tiny.as_slice() {
            [] => {}
            [(a, _)] => memchr::memchr_iter(*a, hay).for_each(&mut on_tiny),
            [(a, _), (b, _)] => memchr::memchr2_iter(*a, *b, hay).for_each(&mut on_tiny),
            [(a, _), (b, _), (c, _)] => {
                memchr::memchr3_iter(*a, *b, *c, hay).for_each(&mut on_tiny);
            }
            more => {
                for (b, _) in more {
                    memchr::memchr_iter(*b, hay).for_each(&mut on_tiny);
                }
            }
        }
        self.scan_user(hay, raw, hits);
        // An escaped `/` can break any pattern near an anchor: let the slow path decode.
        odd || (raw && anchored && self.slash.find(hay).is_some())
    }

    fn scan_user(&self, hay: &[u8], raw: bool, hits: &mut Vec<Hit>) {
        let mut run: Vec<usize> = self.always.clone();
        if let Some((ac, of)) = &self.user_kw {
            for m in ac.find_overlapping_iter(hay) {
                if raw {
                    let rule = of[m.pattern().as_usize()][0];
                    hits.push(Hit {
                        rule,
                        start: m.start(),
                        end: m.end(),
                    });
                } else {
                    run.extend(&of[m.pattern().as_usize()]);
                }
            }
        }
        run.sort_unstable();
        run.dedup();
        for r in run {
            if let Matcher::User { re, group } = &self.rules[r].matcher {
                let mut locs = re.capture_locations();
                let mut pos = 0;
                while pos <= hay.len() {
                    let Some(m) = re.captures_read_at(&mut locs, hay, pos) else {
                        break;
                    };
                    let (a, b) = locs.get(*group).unwrap_or((m.start(), m.end()));
                    if b > a {
                        hits.push(Hit {
                            rule: r,
                            start: a,
                            end: b,
                        });
                    }
                    pos = if m.end() > pos { m.end() } else { pos + 1 };
                }
            }
        }
    }

    /// Full detection on decoded text: scan, drop hits on existing placeholders and
    /// allow-listed values, merge overlaps (the higher-priority rule names the span).
    pub(crate) fn detect(&self, text: &[u8], hits: &mut Vec<Hit>) {
        hits.clear();
        self.scan(text, false, hits);
        if hits.is_empty() {
            return;
        }
        for p in self.placeholder.find_iter(text) {
            // `[REDACTED:<rule id>]` exactly; a bare `[REDACTED:` is ordinary text.
            let id = p + b"[REDACTED:".len();
            let len = text[id..]
                .iter()
                .take(65)
                .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
                .count();
            if len == 0 || text.get(id + len) != Some(&b']') {
                continue;
            }
            let end = id + len + 1;
            // A hit that touches a placeholder may owe its boundary to the placeholder's `[`
            // or `]` (`Bearer x_SECRET=[REDACTED:…]`: the secret that stood there gave none),
            // so it is dropped: redacting the output again must change nothing.
            hits.retain(|h| h.end < p || h.start > end);
        }
        hits.retain(|h| {
            let v = &text[h.start..h.end];
            !self.allow_literal.iter().any(|l| l == v)
                && !self.allow.iter().any(|re| re.is_match(v))
        });
        hits.sort_unstable_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
        let mut merged: Vec<Hit> = Vec::with_capacity(hits.len());
        for h in hits.drain(..) {
            match merged.last_mut() {
                Some(last) if h.start < last.end => {
                    let (ph, pl) = (self.rules[h.rule].priority, self.rules[last.rule].priority);
                    if ph > pl || (ph == pl && h.rule < last.rule) {
                        last.rule = h.rule;
                    }
                    last.end = last.end.max(h.end);
                }
                _ => merged.push(h),
            }
        }
        *hits = merged;
    }
}

fn leftmost<P: AsRef<[u8]>>(pats: &[P]) -> Result<AhoCorasick, aho_corasick::BuildError> {
    AhoCorasick::builder()
        .match_kind(MatchKind::LeftmostFirst)
        .build(pats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{RedactOptions, Redactor};

    /// The speed depends on these (redaction.md §4, §7; docs/redact.md "Throughput"): every
    /// anchor in a slim Teddy searcher of at most 32 patterns, at most four of 4-byte masks and
    /// one of 3-byte masks, and the few shorter anchors (`Q~`, `6~`, `@`) in one memchr pass.
    #[test]
    fn prefilter_stays_on_the_fast_path() {
        let r = Redactor::new(&RedactOptions::default()).expect("compile");
        let e = &r.engine;
        assert!(
            e.finders
                .iter()
                .all(|(f, ids, _)| matches!(f, Finder::Packed(_)) && ids.len() <= GROUP)
        );
        let long = e.finders.iter().filter(|(_, _, w)| *w == 4).count();
        let short = e.finders.iter().filter(|(_, _, w)| *w == 3).count();
        assert!(long <= 4, "{long} searchers of 4-byte anchors");
        assert_eq!(short, 1, "3-byte anchors need more than one searcher");
        assert_eq!(long + short, e.finders.len());
        assert!(e.tiny.len() <= 3, "one memchr3 pass");
    }

    /// Built-in regexes are compiled lazily, on the first hit of their anchors; a pattern that
    /// does not compile would panic there, so every one is compiled here.
    #[test]
    fn every_builtin_regex_compiles() {
        let mut n = 0;
        for d in crate::table::builtin() {
            if let crate::table::Pattern::Regex { re, .. }
            | crate::table::Pattern::Near { re, .. } = d.pattern
            {
                let (re, group) = LazyRegex::compile(&crate::table::expand(re))
                    .unwrap_or_else(|e| panic!("{}: {e}", d.id));
                assert!(group < re.captures_len(), "{}", d.id);
                n += 1;
            }
        }
        assert!(n > 40, "{n} regex rules");
    }
}
