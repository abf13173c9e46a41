//! The per-line transform on the way into the archive: prune (planned over the whole source)
//! and redact.

use std::collections::{HashMap, HashSet};

use serde_json::Value;
use skein_passes::PruneOptions;
use skein_redact::Redactor;

/// The per-line transform: prune (from a plan made over the whole source), then redact.
#[derive(Debug, Clone, Copy, Default)]
pub struct Transforms<'a> {
    pub redactor: Option<&'a Redactor>,
    pub prune: Option<&'a PruneOptions>,
}

impl Transforms<'_> {
    /// `bytes` (a JSON text, e.g. a sidecar) as it is archived: redacted when redaction is on.
    pub fn text(&self, bytes: &[u8]) -> Vec<u8> {
        match self.redactor {
            Some(r) => redacted(r, bytes),
            None => bytes.to_vec(),
        }
    }
}

/// What prune does to one source line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineAction<'a> {
    Drop,
    Replace(&'a [u8]),
}

/// Prune runs over the whole transcript (it re-parents children of dropped records), and the
/// archive sees new lines one by one; so each source line is mapped to its fate: unchanged
/// (absent from the map), dropped, or replaced by the output line with the same `uuid`. A line
/// that appears after the plan was made is archived as it is.
pub fn prune_plan<'a>(input: &'a [u8], output: &'a [u8]) -> HashMap<&'a [u8], LineAction<'a>> {
    let lines = |b: &'a [u8]| b.split(|&c| c == b'\n').filter(|l| !l.is_empty());
    let kept: HashSet<&[u8]> = lines(output).collect();
    let uuid = |l: &[u8]| {
        serde_json::from_slice::<Value>(l)
            .ok()
            .and_then(|v| v.get("uuid").and_then(Value::as_str).map(str::to_owned))
    };
    let input_set: HashSet<&[u8]> = lines(input).collect();
    let mut rewritten: HashMap<String, &[u8]> = HashMap::new();
    for l in lines(output).filter(|l| !input_set.contains(l)) {
        if let Some(u) = uuid(l) {
            rewritten.entry(u).or_insert(l);
        }
    }
    let mut plan = HashMap::new();
    for l in lines(input).filter(|l| !kept.contains(l)) {
        let action = match uuid(l).and_then(|u| rewritten.get(&u)) {
            Some(r) => LineAction::Replace(r),
            None => LineAction::Drop,
        };
        plan.entry(l).or_insert(action);
    }
    plan
}

/// Redacts one transcript line (with or without its `\n`), appending the result and a `\n`.
pub fn redact_line(redactor: &Redactor, line: &[u8], out: &mut Vec<u8>) {
    let body = line.strip_suffix(b"\n").unwrap_or(line);
    redactor.redact_line(body, out);
    out.push(b'\n');
}

/// `bytes` (a JSON text) redacted.
pub fn redacted(redactor: &Redactor, bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    redactor.redact_line(bytes, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_maps_dropped_and_rewritten_lines() {
        let input = b"{\"uuid\":\"a\",\"x\":1}\n{\"uuid\":\"b\",\"x\":2}\n{\"uuid\":\"c\"}\n";
        let output = b"{\"uuid\":\"a\",\"x\":1}\n{\"uuid\":\"c\",\"parentUuid\":\"a\"}\n";
        let plan = prune_plan(input, output);
        assert_eq!(plan.get(&b"{\"uuid\":\"a\",\"x\":1}"[..]), None);
        assert_eq!(
            plan.get(&b"{\"uuid\":\"b\",\"x\":2}"[..]),
            Some(&LineAction::Drop)
        );
        assert_eq!(
            plan.get(&b"{\"uuid\":\"c\"}"[..]),
            Some(&LineAction::Replace(
                b"{\"uuid\":\"c\",\"parentUuid\":\"a\"}"
            ))
        );
    }
}
