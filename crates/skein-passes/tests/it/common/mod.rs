//! Invariant checks shared by the fixture, property and corpus tests. They use serde_json
//! values and their own graph walk, not the crate's code.

#![allow(dead_code, reason = "each test binary uses a subset")]

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

/// One physical line: its bytes without the terminator, and its parse.
pub(crate) struct Line {
    pub(crate) bytes: Vec<u8>,
    pub(crate) value: Option<Value>,
}

pub(crate) fn lines(data: &[u8]) -> Vec<Line> {
    let data = data.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(data);
    let mut out = Vec::new();
    let mut rest = data;
    while !rest.is_empty() {
        let (line, next) = match memchr_nl(rest) {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, &rest[rest.len()..]),
        };
        let text = line.strip_suffix(b"\r").unwrap_or(line);
        out.push(Line {
            bytes: text.to_vec(),
            value: parse(text),
        });
        rest = next;
    }
    out
}

/// serde_json after the repair every reader needs (lone surrogates, invalid UTF-8).
pub(crate) fn parse(text: &[u8]) -> Option<Value> {
    serde_json::from_slice::<Value>(&skein_core::repair::repair_line(text))
        .ok()
        .filter(Value::is_object)
}

fn memchr_nl(b: &[u8]) -> Option<usize> {
    b.iter().position(|&c| c == b'\n')
}

fn blank(b: &[u8]) -> bool {
    b.iter().all(|c| matches!(c, b' ' | b'\t' | b'\r'))
}

pub(crate) fn uuid(v: &Value) -> Option<&str> {
    v.get("uuid").and_then(Value::as_str)
}

pub(crate) fn parent(v: &Value) -> Option<&str> {
    v.get("parentUuid").and_then(Value::as_str)
}

/// Tool ids in a record's content: (uses, results).
pub(crate) fn tool_ids(v: &Value) -> (Vec<String>, Vec<String>) {
    let mut uses = Vec::new();
    let mut results = Vec::new();
    if let Some(blocks) = v["message"]["content"].as_array() {
        for b in blocks {
            match b["type"].as_str() {
                Some("tool_use" | "server_tool_use") => {
                    if let Some(id) = b["id"].as_str() {
                        uses.push(id.to_owned());
                    }
                }
                Some("tool_result") => {
                    if let Some(id) = b["tool_use_id"].as_str() {
                        results.push(id.to_owned());
                    }
                }
                _ => {}
            }
        }
    }
    (uses, results)
}

/// The leaf of the conversation, computed independently: chain records only; terminals are
/// chain records no chain record names as parent; from each, walk up through injected
/// (`isMeta`), sidechain and team records and non-messages to the nearest main user/assistant
/// record; the latest in file order wins. (The SDK stops at the first user/assistant record
/// and prefers non-meta ones, so a trailing hook-feedback record or a progress record below a
/// tool call can make it pick a record in the middle of the conversation; see
/// `sdk_leaf`.) Falls back to the SDK's leaf.
pub(crate) fn active_leaf(ls: &[Line]) -> Option<String> {
    leaf(ls, true).or_else(|| sdk_leaf(ls))
}

/// The Claude Code SDK's active leaf: walk up to the nearest user/assistant record; prefer
/// non-sidechain, non-meta, non-team candidates; latest in file order.
pub(crate) fn sdk_leaf(ls: &[Line]) -> Option<String> {
    leaf(ls, false)
}

fn leaf(ls: &[Line], walk_through: bool) -> Option<String> {
    let chain = |v: &Value| {
        matches!(
            v["type"].as_str(),
            Some("user" | "assistant" | "progress" | "system" | "attachment")
        ) && uuid(v).is_some()
    };
    let excluded = |v: &Value| {
        v["isSidechain"] == Value::Bool(true)
            || v["isMeta"] == Value::Bool(true)
            || v["teamName"].as_str().is_some_and(|t| !t.is_empty())
    };
    let mut first: BTreeMap<String, usize> = BTreeMap::new();
    for (i, l) in ls.iter().enumerate() {
        if let Some(v) = &l.value
            && let Some(u) = uuid(v)
        {
            first.entry(u.to_owned()).or_insert(i);
        }
    }
    let mut has_chain_child: BTreeSet<String> = BTreeSet::new();
    for l in ls {
        if let Some(v) = &l.value
            && chain(v)
            && let Some(p) = parent(v)
        {
            has_chain_child.insert(p.to_owned());
        }
    }
    let mut best: Option<(bool, usize)> = None;
    for (u, &i) in &first {
        let v = ls[i].value.as_ref().expect("record");
        if !chain(v) || has_chain_child.contains(u) {
            continue;
        }
        let mut cur = i;
        let mut seen = BTreeSet::new();
        let found = loop {
            let v = ls[cur].value.as_ref().expect("record");
            let message = matches!(v["type"].as_str(), Some("user" | "assistant"));
            if message && !(walk_through && excluded(v)) {
                break Some(cur);
            }
            if !seen.insert(cur) {
                break None;
            }
            match parent(v).and_then(|p| first.get(p)) {
                Some(&p) => cur = p,
                None => break None,
            }
        };
        let Some(c) = found else { continue };
        let preferred = !excluded(ls[c].value.as_ref().expect("record"));
        let key = (preferred, c);
        if best.is_none_or(|b| key > b) {
            best = Some(key);
        }
    }
    best.map(|(_, i)| {
        uuid(ls[i].value.as_ref().expect("record"))
            .expect("uuid")
            .to_owned()
    })
}

/// The uuids from `leaf` up to its root (parent links only).
pub(crate) fn ancestors(ls: &[Line], leaf: &str) -> Vec<String> {
    let mut first: BTreeMap<&str, &Value> = BTreeMap::new();
    for l in ls {
        if let Some(v) = &l.value
            && let Some(u) = uuid(v)
        {
            first.entry(u).or_insert(v);
        }
    }
    let mut out = Vec::new();
    let mut cur = Some(leaf);
    while let Some(u) = cur {
        if out.iter().any(|o| o == u) {
            break;
        }
        out.push(u.to_owned());
        cur = first.get(u).and_then(|v| parent(v));
    }
    out
}

/// Parents naming no record of the file.
pub(crate) fn dangling(ls: &[Line]) -> BTreeSet<String> {
    let uuids: BTreeSet<&str> = ls
        .iter()
        .filter_map(|l| l.value.as_ref().and_then(uuid))
        .collect();
    ls.iter()
        .filter_map(|l| l.value.as_ref().and_then(parent))
        .filter(|p| !uuids.contains(p))
        .map(str::to_owned)
        .collect()
}

/// The text blocks (and string contents) of user and assistant records, by uuid.
pub(crate) fn texts(ls: &[Line]) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for l in ls {
        let Some(v) = &l.value else { continue };
        if !matches!(v["type"].as_str(), Some("user" | "assistant")) {
            continue;
        }
        let Some(u) = uuid(v) else { continue };
        let slot = out.entry(u.to_owned()).or_default();
        match &v["message"]["content"] {
            Value::String(s) => slot.push(s.clone()),
            Value::Array(blocks) => {
                for b in blocks {
                    if b["type"] == "text"
                        && let Some(t) = b["text"].as_str()
                    {
                        slot.push(t.to_owned());
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// What the invariant check found (for figures).
#[derive(Debug, Default)]
pub(crate) struct Checked {
    pub(crate) changed_lines: usize,
    pub(crate) id_only_changes: usize,
}

/// The invariants every pass keeps between `input` and `output`:
/// * every output line is valid JSON or a blank/invalid input line passed through unchanged;
/// * every output line with a uuid is byte-equal to an input line with that uuid, or a
///   rewrite of one; a rewrite that changes only `parentUuid` changes only that value's bytes;
/// * metadata lines (no uuid) are byte-equal to an input line unless an id field changed;
/// * no new dangling parent;
/// * a tool call and its result are both present or both absent.
pub(crate) fn check(input: &[u8], output: &[u8]) -> Checked {
    let ins = lines(input);
    let outs = lines(output);
    let in_bytes: BTreeSet<&[u8]> = ins.iter().map(|l| l.bytes.as_slice()).collect();
    let mut by_uuid: BTreeMap<&str, Vec<&Line>> = BTreeMap::new();
    for l in &ins {
        if let Some(u) = l.value.as_ref().and_then(uuid) {
            by_uuid.entry(u).or_default().push(l);
        }
    }
    let mut checked = Checked::default();
    for (n, l) in outs.iter().enumerate() {
        let Some(v) = &l.value else {
            assert!(
                blank(&l.bytes) || in_bytes.contains(l.bytes.as_slice()),
                "output line {} is not JSON and not an input line: {}",
                n + 1,
                String::from_utf8_lossy(&l.bytes)
            );
            continue;
        };
        if in_bytes.contains(l.bytes.as_slice()) {
            continue;
        }
        checked.changed_lines += 1;
        let Some(u) = uuid(v) else {
            // Metadata: only leafUuid may change.
            let orig = ins.iter().filter_map(|i| i.value.as_ref()).find(|i| {
                let mut w = (*i).clone();
                w["leafUuid"] = v["leafUuid"].clone();
                &w == v
            });
            assert!(
                orig.is_some(),
                "metadata line {} changed: {}",
                n + 1,
                String::from_utf8_lossy(&l.bytes)
            );
            continue;
        };
        let origs = by_uuid
            .get(u)
            .unwrap_or_else(|| panic!("output uuid {u} not in the input"));
        // An id-only rewrite: restoring the ids gives an input record.
        let id_only = origs.iter().find(|o| {
            let ov = o.value.as_ref().expect("record");
            let mut w = v.clone();
            for k in ["parentUuid", "logicalParentUuid"] {
                match ov.get(k) {
                    Some(x) => w[k] = x.clone(),
                    None => {
                        w.as_object_mut().map(|m| m.remove(k));
                    }
                }
            }
            &w == ov
        });
        if let Some(o) = id_only {
            checked.id_only_changes += 1;
            let a = &o.bytes;
            let b = &l.bytes;
            let pre = a.iter().zip(b).take_while(|(x, y)| x == y).count();
            let suf = a[pre..]
                .iter()
                .rev()
                .zip(b[pre..].iter().rev())
                .take_while(|(x, y)| x == y)
                .count();
            let old = String::from_utf8_lossy(&a[pre..a.len() - suf]);
            let new = String::from_utf8_lossy(&b[pre..b.len() - suf]);
            // The differing bytes lie inside one id value (a uuid or null).
            let ok = |s: &str| {
                s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '"' | '.'))
            };
            assert!(
                ok(&old) && ok(&new),
                "id-only change touched other bytes: {old:?} -> {new:?}"
            );
        }
    }
    // No new dangling parent.
    let before = dangling(&ins);
    for d in dangling(&outs) {
        assert!(before.contains(&d), "new dangling parent {d}");
    }
    // Tool pairs together.
    let pairs = |ls: &[Line]| {
        let mut uses = BTreeSet::new();
        let mut results = BTreeSet::new();
        for l in ls {
            if let Some(v) = &l.value {
                let (u, r) = tool_ids(v);
                uses.extend(u);
                results.extend(r);
            }
        }
        (uses, results)
    };
    let (iu, ir) = pairs(&ins);
    let (ou, or) = pairs(&outs);
    for id in iu.intersection(&ir) {
        assert_eq!(
            ou.contains(id),
            or.contains(id),
            "tool call {id} and its result were split"
        );
    }
    checked
}

/// The output's active leaf is the input's, or an ancestor of it that was kept.
pub(crate) fn check_leaf(input: &[u8], output: &[u8]) {
    let ins = lines(input);
    let outs = lines(output);
    let Some(leaf) = active_leaf(&ins) else {
        return;
    };
    let out_leaf = active_leaf(&outs).expect("output has an active leaf");
    let up = ancestors(&ins, &leaf);
    assert!(
        up.contains(&out_leaf),
        "active leaf moved from {leaf} to {out_leaf}, not one of its ancestors"
    );
}

/// User and assistant text of the input's active branch (that of the conversation leaf and
/// that of the SDK's leaf) survives in the output.
pub(crate) fn check_branch_text(input: &[u8], output: &[u8]) {
    let ins = lines(input);
    let want = texts(&ins);
    let have = texts(&lines(output));
    let branch: BTreeSet<String> = [active_leaf(&ins), sdk_leaf(&ins)]
        .into_iter()
        .flatten()
        .flat_map(|l| ancestors(&ins, &l))
        .collect();
    for u in branch {
        let Some(ts) = want.get(&u) else { continue };
        if ts.is_empty() {
            continue;
        }
        let got = have
            .get(&u)
            .unwrap_or_else(|| panic!("record {u} of the active branch lost"));
        for t in ts {
            assert!(got.contains(t), "text of {u} lost");
        }
    }
}
