//! Every session of the shared corpus through `skein show`: every user prompt that is not on
//! a rewound branch must be rendered, and the sessions whose record chain breaks are bridged.
//! The graph is walked here with its own code (serde_json values, the rule written from the
//! issue's wording), not skein's.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use serde_json::Value;

use crate::common;
use common::{corpus, jsonl_files, note, ok, skein, stdout};

const CHAIN: [&str; 5] = ["user", "assistant", "progress", "system", "attachment"];

struct Record {
    line: usize,
    v: Value,
}

/// The records with a string uuid, first copy of each, in file order.
fn records(path: &Path) -> Vec<Record> {
    let data = std::fs::read(path).expect("read");
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for (i, l) in data.split(|&b| b == b'\n').enumerate() {
        let Ok(v) = serde_json::from_slice::<Value>(l) else {
            continue;
        };
        if let Some(u) = v["uuid"].as_str()
            && seen.insert(u.to_owned())
        {
            out.push(Record { line: i + 1, v });
        }
    }
    out
}

/// The SDK's leaf and the bridged walk, written from the wording: the indices of the
/// whole history's records, and the number of seams bridged.
fn independent_walk(recs: &[Record]) -> Option<(HashSet<usize>, usize)> {
    let index: HashMap<&str, usize> = recs
        .iter()
        .enumerate()
        .map(|(i, r)| (r.v["uuid"].as_str().expect("uuid"), i))
        .collect();
    let parent = |i: usize| {
        recs[i].v["parentUuid"]
            .as_str()
            .and_then(|p| index.get(p).copied())
    };
    let chain = |i: usize| CHAIN.contains(&recs[i].v["type"].as_str().unwrap_or(""));
    let message = |i: usize| matches!(recs[i].v["type"].as_str(), Some("user" | "assistant"));
    let mut has_chain_child = vec![false; recs.len()];
    for i in 0..recs.len() {
        if chain(i)
            && let Some(p) = parent(i)
        {
            has_chain_child[p] = true;
        }
    }
    let mut candidates = Vec::new();
    for t in (0..recs.len()).filter(|&i| chain(i) && !has_chain_child[i]) {
        let mut cur = Some(t);
        let mut seen = HashSet::new();
        while let Some(c) = cur {
            if !seen.insert(c) {
                break;
            }
            if message(c) {
                candidates.push(c);
                break;
            }
            cur = parent(c);
        }
    }
    let flag = |i: usize, k: &str| recs[i].v[k].as_bool() == Some(true);
    let excluded = |i: usize| {
        flag(i, "isSidechain")
            || flag(i, "isMeta")
            || recs[i].v["teamName"]
                .as_str()
                .is_some_and(|t| !t.is_empty())
    };
    let preferred: Vec<usize> = candidates
        .iter()
        .copied()
        .filter(|&c| !excluded(c))
        .collect();
    let pool = if preferred.is_empty() {
        &candidates
    } else {
        &preferred
    };
    let leaf = pool.iter().copied().max_by_key(|&c| recs[c].line)?;
    let boundary = |i: usize| recs[i].v["subtype"] == "compact_boundary";
    let logical = |i: usize| {
        recs[i].v["logicalParentUuid"]
            .as_str()
            .and_then(|p| index.get(p).copied())
    };
    let no_parent = |i: usize| parent(i).is_none() && !(boundary(i) && logical(i).is_some());
    let team = |i: usize| {
        recs[i].v["teamName"]
            .as_str()
            .is_some_and(|t| !t.is_empty())
    };
    let main_chain = |i: usize| chain(i) && !flag(i, "isSidechain") && !team(i);
    let first_root = (0..recs.len()).find(|&i| main_chain(i) && no_parent(i));
    let mut on = HashSet::new();
    let mut seams = 0;
    let mut cur = Some(leaf);
    while let Some(c) = cur {
        if !on.insert(c) {
            break;
        }
        cur = parent(c).or_else(|| if boundary(c) { logical(c) } else { None });
        if cur.is_none() && Some(c) != first_root {
            cur = (0..c).rev().find(|&j| main_chain(j) && !on.contains(&j));
            seams += usize::from(cur.is_some());
        }
    }
    Some((on, seams))
}

/// A user prompt: typed text (not meta, a compaction summary, a command wrapper or an
/// interrupt marker); its text.
fn prompt_text(v: &Value) -> Option<String> {
    if v["type"] != "user"
        || [
            "isMeta",
            "isCompactSummary",
            "isSidechain",
            "isVisibleInTranscriptOnly",
        ]
        .iter()
        .any(|k| v[k].as_bool() == Some(true))
    {
        return None;
    }
    let text = match &v["message"]["content"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b["type"] == "text")
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => return None,
    };
    let t = text.trim();
    (!t.is_empty() && !t.starts_with('<') && !t.starts_with("[Request interrupted"))
        .then(|| t.to_owned())
}

/// The longest run of plain characters (letters, digits, spaces) in the prompt's first
/// 300 characters: what must appear in the Markdown whatever the escaping.
fn probe(text: &str) -> Option<String> {
    let head: String = text.chars().take(300).collect();
    head.split(|c: char| !(c.is_alphanumeric() || c == ' '))
        .map(str::trim)
        .max_by_key(|s| s.len())
        .filter(|s| s.len() >= 6)
        .map(str::to_owned)
}

#[test]
fn corpus_every_prompt_off_rewound_branches_is_shown() {
    let Some(corpus) = corpus() else { return };
    let cwd = tempfile::tempdir().expect("tmp");
    let mut sessions = 0;
    let mut checked = 0;
    let mut bridged = Vec::new();
    for f in jsonl_files(&corpus) {
        if f.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("agent-"))
        {
            continue;
        }
        let recs = records(&f);
        let Some((on, seams)) = independent_walk(&recs) else {
            continue;
        };
        let path = f.to_str().expect("utf8");
        let md = stdout(ok(&skein(&["show", "-q", path], cwd.path())));
        sessions += 1;
        if seams > 0 {
            bridged.push(path.to_owned());
            assert!(
                md.matches("> ⚠ **Seam:**").count() == seams,
                "{path}: {seams} seams expected"
            );
        }
        let index: HashMap<&str, usize> = recs
            .iter()
            .enumerate()
            .map(|(i, r)| (r.v["uuid"].as_str().expect("uuid"), i))
            .collect();
        for (i, r) in recs.iter().enumerate() {
            let Some(text) = prompt_text(&r.v) else {
                continue;
            };
            if !on.contains(&i) {
                // Not on the history: it must fork off it (a rewound branch).
                let mut cur = r.v["parentUuid"]
                    .as_str()
                    .and_then(|p| index.get(p).copied());
                let mut seen = HashSet::new();
                let mut forks = false;
                while let Some(c) = cur {
                    if on.contains(&c) {
                        forks = true;
                        break;
                    }
                    if !seen.insert(c) {
                        break;
                    }
                    cur = recs[c].v["parentUuid"]
                        .as_str()
                        .and_then(|p| index.get(p).copied());
                }
                assert!(
                    forks,
                    "{path}:{}: a prompt neither shown nor rewound",
                    r.line
                );
                continue;
            }
            if let Some(p) = probe(&text) {
                checked += 1;
                assert!(
                    md.contains(&p),
                    "{path}:{}: prompt {p:?} not rendered",
                    r.line
                );
            }
        }
    }
    for name in [
        "entireio__cli/5d/107d133886",
        "entireio__cli/fc/99c919b212",
        "marot__spotter/test/fixtures/transcripts/4d5611e5",
    ] {
        assert!(
            bridged.iter().any(|p| p.contains(name)),
            "{name} is bridged: {bridged:#?}"
        );
    }
    note(&format!(
        "history: {sessions} corpus sessions, {checked} prompts found in the Markdown, {} bridged",
        bridged.len()
    ));
}
