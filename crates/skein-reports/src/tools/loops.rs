//! Tool loops (`skein tools --loops`): runs of consecutive calls of one tool with identical
//! input.

use std::fmt::Write as _;

use serde::Serialize;
use serde_json::Value;

use super::{NO_NAME, input_summary, normalized_input, session_files};
use crate::session::LoadedSession;

/// A run of at least N consecutive calls of one tool with identical input, within one file
/// (and one of its main/sidechain streams), in file order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolLoop {
    pub session_id: String,
    pub project: String,
    pub agent_id: Option<String>,
    pub agent_type: Option<String>,
    pub file: String,
    pub sidechain: bool,
    pub tool: String,
    pub input_summary: String,
    /// Calls in the run.
    pub count: u64,
    pub first_line: u64,
    pub last_line: u64,
    pub first_timestamp: Option<String>,
    pub last_timestamp: Option<String>,
    /// Calls in the run whose result was an error.
    pub errors: u64,
    /// The calls' `tool_use` ids, in order.
    pub ids: Vec<String>,
}

/// The input as canonical JSON: object keys sorted (recursively), no whitespace; a
/// JSON-encoded string input is decoded first. Two inputs are identical when these are equal.
pub fn canonical_input(input: Option<&Value>) -> String {
    let mut out = String::new();
    match input {
        Some(v) => write_canonical(&normalized_input(v), &mut out),
        None => out.push_str("null"),
    }
    out
}

fn write_canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            let mut entries: Vec<(&String, &Value)> = m.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (k, x)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let _ = write!(out, "{}", Value::String(k.clone()));
                out.push(':');
                write_canonical(x, out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(x, out);
            }
            out.push(']');
        }
        other => {
            let _ = write!(out, "{other}");
        }
    }
}

/// Tool loops of the session: per file (main first, then agents) and per stream within the
/// file (main-chain and sidechain records apart), every maximal run of at least `min`
/// consecutive calls in file order with the same tool name and the same canonical input
/// ([`canonical_input`]). Any other call in the same stream ends a run; text between calls
/// does not. Loops are ordered by file, then first line. The session must have been read with
/// inputs (`I = serde_json::Value`); without them, inputs compare equal.
pub fn tool_loops<V>(s: &LoadedSession<V>, min: usize) -> Vec<ToolLoop> {
    let min = min.max(1);
    let project = s.files.project();
    let mut out = Vec::new();
    for f in session_files(s) {
        let file = f.file.display().to_string();
        let mut found: Vec<ToolLoop> = Vec::new();
        for stream in [false, true] {
            let uses: Vec<_> = f
                .tools
                .uses()
                .iter()
                .filter(|u| u.sidechain == stream)
                .collect();
            let mut start = 0;
            let mut key = String::new();
            for i in 0..=uses.len() {
                let next = uses.get(i).map(|u| {
                    (
                        u.name.as_deref().unwrap_or(NO_NAME),
                        canonical_input(u.input.as_ref()),
                    )
                });
                let same = match (&next, uses.get(start)) {
                    (Some((name, k)), Some(first)) if i > start => {
                        *name == first.name.as_deref().unwrap_or(NO_NAME) && *k == key
                    }
                    _ => false,
                };
                if same {
                    continue;
                }
                let run = &uses[start..i];
                if run.len() >= min {
                    let first = run[0];
                    let last = run[run.len() - 1];
                    let tool = first.name.as_deref().unwrap_or(NO_NAME);
                    found.push(ToolLoop {
                        session_id: s.files.session_id.clone(),
                        project: project.clone(),
                        agent_id: f.agent_id.map(str::to_owned),
                        agent_type: f.agent_type.map(str::to_owned),
                        file: file.clone(),
                        sidechain: stream,
                        tool: tool.to_owned(),
                        input_summary: input_summary(tool, first.input.as_ref()),
                        count: run.len() as u64,
                        first_line: first.line,
                        last_line: last.line,
                        first_timestamp: first.timestamp.clone(),
                        last_timestamp: last.timestamp.clone(),
                        errors: run
                            .iter()
                            .filter(|u| f.tools.result_for(&u.id).is_some_and(|r| r.is_error))
                            .count() as u64,
                        ids: run.iter().map(|u| u.id.clone()).collect(),
                    });
                }
                start = i;
                if let Some((_, k)) = next {
                    key = k;
                }
            }
        }
        found.sort_by_key(|l| l.first_line);
        out.extend(found);
    }
    out
}
