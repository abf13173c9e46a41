//! Line orchestration: raw prefilter, JSON walk over candidate lines, decode, detect, splice.

use memchr::memchr;

use crate::engine::{Engine, Hit};
use crate::json::{self, Decoded, Frame, Place, Visitor};
use crate::protect;
use crate::{Finding, LineOutcome, RuleCounts};

pub(crate) fn line(
    engine: &Engine,
    decode_all: bool,
    line: &[u8],
    out: &mut Vec<u8>,
) -> LineOutcome {
    let mut cands = Vec::new();
    let odd = engine.scan(line, true, &mut cands);
    if cands.is_empty() && !odd && !decode_all {
        out.extend_from_slice(line);
        return LineOutcome::default();
    }
    cands.sort_unstable_by_key(|h| h.start);
    let mut v = LineVisitor {
        engine,
        cands: &cands,
        odd,
        all: decode_all,
        edits: Vec::new(),
        findings: Vec::new(),
        uuid: None,
        marked_key: None,
        dec: Decoded::default(),
        kdec: Decoded::default(),
        scratch: Vec::new(),
        hits: Vec::new(),
    };
    let fallback = json::walk(line, &mut v).is_err();
    if fallback {
        v.edits.clear();
        v.findings.clear();
        v.uuid = None;
        v.marked_key = None;
        json::walk_lenient(line, &mut v);
    }
    let changed = splice(engine, line, &mut v.edits, out);
    for f in &mut v.findings {
        f.uuid.clone_from(&v.uuid);
    }
    LineOutcome {
        changed,
        findings: if changed { v.findings } else { Vec::new() },
        fallback,
    }
}

pub(crate) fn jsonl(
    engine: &Engine,
    decode_all: bool,
    data: &[u8],
    out: &mut Vec<u8>,
) -> RuleCounts {
    let mut counts = RuleCounts::new();
    let mut rest = data;
    while !rest.is_empty() {
        let (body, term, next) = match memchr(b'\n', rest) {
            Some(i) if i > 0 && rest[i - 1] == b'\r' => (&rest[..i - 1], &rest[i - 1..=i], i + 1),
            Some(i) => (&rest[..i], &rest[i..=i], i + 1),
            None => (rest, &rest[rest.len()..], rest.len()),
        };
        counts.add(&line(engine, decode_all, body, out).findings);
        out.extend_from_slice(term);
        rest = &rest[next..];
    }
    counts
}

pub(crate) fn text(engine: &Engine, text: &[u8], out: &mut Vec<u8>) -> Vec<Finding> {
    let mut hits = Vec::new();
    engine.detect(text, &mut hits);
    let mut edits = Vec::new();
    let mut findings = Vec::new();
    for h in hits {
        let (s, e) = snap(text, h.start, h.end);
        edits.push((s, e, h.rule));
        findings.push(Finding {
            rule_id: engine.rules[h.rule].id.clone(),
            json_path: String::new(),
            start: s,
            end: e,
            uuid: None,
        });
    }
    splice(engine, text, &mut edits, out);
    findings
}

/// Widens a span to UTF-8 character boundaries (works on invalid UTF-8 too).
fn snap(text: &[u8], mut s: usize, mut e: usize) -> (usize, usize) {
    while s > 0 && (text[s] & 0xC0) == 0x80 {
        s -= 1;
    }
    while e < text.len() && (text[e] & 0xC0) == 0x80 {
        e += 1;
    }
    (s, e)
}

/// Writes `src` with each edit span replaced by its placeholder; returns whether anything
/// was replaced. Overlapping edits are merged.
fn splice(
    engine: &Engine,
    src: &[u8],
    edits: &mut [(usize, usize, usize)],
    out: &mut Vec<u8>,
) -> bool {
    edits.sort_unstable();
    let mut last = 0;
    let mut i = 0;
    while i < edits.len() {
        let (s, mut e, rule) = edits[i];
        i += 1;
        while i < edits.len() && edits[i].0 < e {
            e = e.max(edits[i].1);
            i += 1;
        }
        out.extend_from_slice(&src[last..s]);
        out.extend_from_slice(b"[REDACTED:");
        out.extend_from_slice(engine.rules[rule].id.as_bytes());
        out.push(b']');
        last = e;
    }
    out.extend_from_slice(&src[last..]);
    !edits.is_empty()
}

struct LineVisitor<'a> {
    engine: &'a Engine,
    cands: &'a [Hit],
    odd: bool,
    all: bool,
    edits: Vec<(usize, usize, usize)>,
    findings: Vec<Finding>,
    uuid: Option<String>,
    /// A key that held a candidate: its value is scanned too.
    marked_key: Option<(usize, usize)>,
    dec: Decoded,
    /// Decoded key of the current value, when the key has escapes.
    kdec: Decoded,
    scratch: Vec<u8>,
    hits: Vec<Hit>,
}

impl LineVisitor<'_> {
    /// Does any raw candidate start in `s..e`?
    fn candidate_in(&self, s: usize, e: usize) -> bool {
        let i = self.cands.partition_point(|h| h.start < s);
        self.cands.get(i).is_some_and(|h| h.start < e.max(s + 1))
    }

    fn report(
        &mut self,
        src: &[u8],
        place: Option<Place<'_>>,
        base: usize,
        plen: usize,
        decoded: bool,
    ) {
        for h in std::mem::take(&mut self.hits) {
            if h.start < plen {
                continue;
            }
            let text = &self.scratch[plen..];
            let (ds, de) = snap(text, h.start - plen, h.end - plen);
            let (rs, re) = if decoded {
                (self.dec.raw_start(ds), self.dec.raw_end(de))
            } else {
                (ds, de)
            };
            self.edits.push((base + rs, base + re, h.rule));
            let mut json_path = String::new();
            if let Some(p) = place {
                json::path(src, p, &mut json_path);
            } else {
                json_path.push('?');
            }
            let (start, end) = if place.is_some() {
                (ds, de)
            } else {
                (base + ds, base + de)
            };
            self.findings.push(Finding {
                rule_id: self.engine.rules[h.rule].id.clone(),
                json_path,
                start,
                end,
                uuid: None,
            });
        }
    }
}

impl Visitor for LineVisitor<'_> {
    fn literal(&mut self, src: &[u8], s: usize, e: usize, is_key: bool, place: Place<'_>) {
        if is_key {
            // A key with a candidate, or spelled with unusual escapes, gives its value context.
            let odd_key = self.odd && memchr(b'\\', &src[s..e]).is_some() && {
                self.kdec.decode(&src[s..e]);
                self.kdec.odd
            };
            if self.all || odd_key || self.candidate_in(s, e) {
                self.marked_key = Some((s, e));
            }
            return;
        }
        let (key, top) = match place {
            Place::Strict(stack) => match stack.last() {
                Some(Frame::Object { key, .. }) => (*key, stack.len() == 1),
                _ => (None, false),
            },
            Place::Lenient(k) => (k, true),
        };
        // The key as text: decoded when it has escapes (`"\u0075uid"` is `uuid`).
        let need = self.all || (key.is_some() && self.marked_key == key) || self.candidate_in(s, e);
        let key_bytes = match key {
            Some((a, b)) if memchr(b'\\', &src[a..b]).is_some() => {
                self.kdec.decode(&src[a..b]);
                Some(self.kdec.text.as_slice())
            }
            Some((a, b)) => Some(&src[a..b]),
            None => None,
        };
        if let Some(k) = key_bytes {
            if k == b"uuid" && top && self.uuid.is_none() {
                self.uuid = Some(String::from_utf8_lossy(&src[s..e]).into_owned());
            }
            // Lines that are not JSON have no structure to tell Claude Code's own ids from
            // a tool's data: everything there is scanned.
            if let Place::Strict(stack) = place
                && protect::protected(src, k, stack)
            {
                return;
            }
        }
        let raw = &src[s..e];
        let has_escape = memchr(b'\\', raw).is_some();
        if !(need || self.odd && has_escape) {
            return;
        }
        if has_escape {
            self.dec.decode(raw);
            if !need && !self.dec.odd {
                return;
            }
        }
        self.scratch.clear();
        if let Some(k) = key_bytes {
            self.scratch.push(b'"');
            self.scratch.extend_from_slice(k);
            self.scratch.extend_from_slice(b"\": \"");
        }
        let plen = self.scratch.len();
        self.scratch
            .extend_from_slice(if has_escape { &self.dec.text } else { raw });
        let mut hits = std::mem::take(&mut self.hits);
        self.engine.detect(&self.scratch, &mut hits);
        self.hits = hits;
        self.report(src, Some(place), s, plen, has_escape);
    }

    fn gap(&mut self, src: &[u8], s: usize, e: usize) {
        if !(self.all || self.candidate_in(s, e)) {
            return;
        }
        self.scratch.clear();
        self.scratch.extend_from_slice(&src[s..e]);
        let mut hits = std::mem::take(&mut self.hits);
        self.engine.detect(&self.scratch, &mut hits);
        self.hits = hits;
        self.report(src, None, s, 0, false);
    }
}
