//! The per-line transform of `skein archive`: prune (planned over the whole source) and redact.

use std::collections::{HashMap, HashSet};

use serde_json::Value;
use skein_passes::PruneOptions;
use skein_redact::Redactor;

/// The per-line transform: prune (from a plan made over the whole source), then redact.
pub(super) struct Transforms<'a> {
    pub(super) redactor: Option<&'a Redactor>,
    pub(super) prune: Option<&'a PruneOptions>,
}

/// What prune does to one source line.
pub(super) enum LineAction<'a> {
    Drop,
    Replace(&'a [u8]),
}

/// Prune runs over the whole transcript (it re-parents children of dropped records), and the
/// archive sees new lines one by one; so each source line is mapped to its fate: unchanged
/// (absent from the map), dropped, or replaced by the output line with the same `uuid`. A line
/// that appears after the plan was made is archived as it is.
pub(super) fn prune_plan<'a>(
    input: &'a [u8],
    output: &'a [u8],
) -> HashMap<&'a [u8], LineAction<'a>> {
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
