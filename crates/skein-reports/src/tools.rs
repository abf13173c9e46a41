//! The `skein tools` report: one row per tool call of a session (main transcript first, then
//! each subagent transcript, every file in file order), totals per tool name, and tool loops
//! (runs of consecutive calls of one tool with identical input).
//!
//! A tool call is a distinct `tool_use` id of a file, exactly what [`skein_analysis::ToolPairing`]
//! pairs: blocks without an id are not calls, and a later copy of an id is the same call. The
//! result is the `tool_result` with the same id in the same file.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde::Serialize;
use serde_json::Value;
use skein_analysis::ToolPairing;
use skein_analysis::tools::Pair;

use crate::dates::DateRange;
use crate::session::LoadedSession;

/// Longest `input_summary`, in characters (a longer one ends with `…` at this length).
pub const MAX_SUMMARY_CHARS: usize = 120;

/// Tool name used when a `tool_use` has no `name`.
pub const NO_NAME: &str = "<none>";

/// One tool call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCall {
    pub session_id: String,
    /// The project directory's name (e.g. `-home-me-widgets`).
    pub project: String,
    /// The subagent's id; `None` for calls in the main transcript.
    pub agent_id: Option<String>,
    /// The subagent's type (from its `.meta.json`, else from the spawning call's
    /// `subagent_type`); `None` in the main transcript.
    pub agent_type: Option<String>,
    /// The `tool_use` id of the `Task`/`Agent` call that spawned the subagent, when known.
    pub spawned_by: Option<String>,
    /// The transcript file holding the call.
    pub file: String,
    /// 1-based line of the `tool_use` in `file`.
    pub line: u64,
    /// The record had `isSidechain: true` (always true in agent files; inline sidechains in
    /// old main files).
    pub sidechain: bool,
    pub tool: String,
    /// The `tool_use` id.
    pub id: String,
    /// A short one-line summary of the input (see [`input_summary`]).
    pub input_summary: String,
    /// Whether the result was an error; `None` without a result.
    pub is_error: Option<bool>,
    /// UTF-8 bytes of the result's text; `None` without a result.
    pub result_bytes: Option<u64>,
    /// Milliseconds from the call's timestamp to its result's; `None` when either is missing.
    pub duration_ms: Option<i64>,
    /// A `tool_result` with this id exists in the file.
    pub paired: bool,
    /// The call's record timestamp.
    pub timestamp: Option<String>,
}

/// One transcript of a session, as the tool report sees it.
#[derive(Debug, Clone, Copy)]
pub struct FileView<'a> {
    pub file: &'a std::path::Path,
    pub agent_id: Option<&'a str>,
    pub agent_type: Option<&'a str>,
    pub spawned_by: Option<&'a str>,
    pub tools: &'a ToolPairing,
}

/// The session's transcripts in report order: the main file, then each agent file.
pub fn session_files<V>(s: &LoadedSession<V>) -> Vec<FileView<'_>> {
    let mut out = Vec::with_capacity(1 + s.agents.len());
    if let (Some(path), Some((analysis, _))) = (&s.files.main, &s.main) {
        out.push(FileView {
            file: path,
            agent_id: None,
            agent_type: None,
            spawned_by: None,
            tools: &analysis.tools,
        });
    }
    for a in &s.agents {
        let spawned_by = a.spawned_by.as_deref();
        let agent_type = a
            .file
            .meta
            .as_ref()
            .and_then(|m| m.agent_type.as_deref())
            .or_else(|| {
                spawned_by
                    .and_then(|id| s.links.spawn(id))
                    .and_then(|sp| sp.subagent_type.as_deref())
            });
        out.push(FileView {
            file: &a.file.path,
            agent_id: Some(&a.file.agent_id),
            agent_type,
            spawned_by,
            tools: &a.analysis.tools,
        });
    }
    out
}

/// Every tool call of the session, main transcript first, each file in file order. Input
/// summaries are empty when the session was read without inputs (`I = IgnoredAny`).
pub fn tool_calls<V>(s: &LoadedSession<V>) -> Vec<ToolCall> {
    let project = s.files.project();
    let mut out = Vec::new();
    for f in session_files(s) {
        let file = f.file.display().to_string();
        for u in f.tools.uses() {
            let result = f.tools.result_for(&u.id);
            let tool = u.name.as_deref().unwrap_or(NO_NAME);
            out.push(ToolCall {
                session_id: s.files.session_id.clone(),
                project: project.clone(),
                agent_id: f.agent_id.map(str::to_owned),
                agent_type: f.agent_type.map(str::to_owned),
                spawned_by: f.spawned_by.map(str::to_owned),
                file: file.clone(),
                line: u.line,
                sidechain: u.sidechain,
                tool: tool.to_owned(),
                id: u.id.clone(),
                input_summary: input_summary(tool, u.input.as_ref()),
                is_error: result.map(|r| r.is_error),
                result_bytes: result.map(|r| r.bytes),
                duration_ms: Pair {
                    tool_use: Some(u),
                    result,
                }
                .duration_ms(),
                paired: result.is_some(),
                timestamp: u.timestamp.clone(),
            });
        }
    }
    out
}

/// Which calls (and loops) a report keeps.
#[derive(Debug, Clone, Default)]
pub struct ToolFilter {
    /// Days of the call's timestamp (a loop's first call).
    pub dates: DateRange,
    /// Tool names to keep (exact match); empty keeps all.
    pub tools: Vec<String>,
}

impl ToolFilter {
    /// True when the tool name passes.
    pub fn keeps_tool(&self, tool: &str) -> bool {
        self.tools.is_empty() || self.tools.iter().any(|t| t == tool)
    }

    /// True when the call passes.
    pub fn keeps(&self, call: &ToolCall) -> bool {
        self.keeps_tool(&call.tool) && self.dates.contains_timestamp(call.timestamp.as_deref())
    }

    /// True when the loop passes.
    pub fn keeps_loop(&self, l: &ToolLoop) -> bool {
        self.keeps_tool(&l.tool) && self.dates.contains_timestamp(l.first_timestamp.as_deref())
    }
}

// ---------------------------------------------------------------------------------------------
// Input summaries

/// The input with a JSON-encoded string input (builds before 2.1.92) decoded.
pub fn normalized_input(input: &Value) -> Cow<'_, Value> {
    if let Value::String(s) = input
        && s.trim_start().starts_with('{')
        && let Ok(v @ Value::Object(_)) = serde_json::from_str::<Value>(s)
    {
        return Cow::Owned(v);
    }
    Cow::Borrowed(input)
}

/// The input fields tried in order for a known tool.
fn summary_keys(tool: &str) -> Option<&'static [&'static str]> {
    Some(match tool {
        "Bash" | "PowerShell" | "SlashCommand" => &["command"],
        "BashOutput" => &["bash_id"],
        "KillShell" | "KillBash" => &["shell_id"],
        "Read" | "Write" | "Edit" | "MultiEdit" => &["file_path"],
        "NotebookEdit" | "NotebookRead" => &["notebook_path"],
        "LSP" => &["filePath", "file_path"],
        "Grep" | "Glob" => &["pattern"],
        "LS" => &["path"],
        "Task" | "Agent" => &["description", "subagent_type", "prompt"],
        "Skill" => &["skill", "command", "name"],
        "WebFetch" => &["url"],
        "WebSearch" | "ToolSearch" => &["query"],
        "TaskCreate" => &["subject", "description"],
        "TaskGet" | "TaskStop" | "TaskOutput" => &["taskId", "task_id"],
        "SendMessage" => &["to", "recipient"],
        "ExitPlanMode" => &["plan"],
        _ => return None,
    })
}

/// A string (non-empty), number or boolean as text.
fn scalar(v: &Value) -> Option<Cow<'_, str>> {
    match v {
        Value::String(s) if !s.trim().is_empty() => Some(Cow::Borrowed(s)),
        Value::Number(n) => Some(Cow::Owned(n.to_string())),
        Value::Bool(b) => Some(Cow::Owned(b.to_string())),
        _ => None,
    }
}

/// The first non-empty string argument in input order (the input itself if it is a string).
fn first_string(v: &Value) -> Option<Cow<'_, str>> {
    match v {
        Value::Object(m) => m.values().find_map(|x| match x {
            Value::String(s) if !s.trim().is_empty() => Some(Cow::Borrowed(s.as_str())),
            _ => None,
        }),
        Value::String(s) if !s.trim().is_empty() => Some(Cow::Borrowed(s)),
        _ => None,
    }
}

fn summary_text<'v>(tool: &str, v: &'v Value) -> Option<Cow<'v, str>> {
    match tool {
        "TodoWrite" => {
            let n = v.get("todos")?.as_array()?.len();
            return Some(Cow::Owned(format!(
                "{n} todo{}",
                if n == 1 { "" } else { "s" }
            )));
        }
        "TaskUpdate" => {
            let id = ["taskId", "task_id"]
                .iter()
                .find_map(|k| scalar(v.get(k)?))?;
            return Some(match v.get("status").and_then(scalar) {
                Some(status) => Cow::Owned(format!("{id} {status}")),
                None => id,
            });
        }
        "AskUserQuestion" => {
            if let Some(q) = v
                .get("questions")
                .and_then(|q| q.get(0))
                .and_then(|q| q.get("question"))
                .and_then(scalar)
            {
                return Some(q);
            }
        }
        _ => {}
    }
    if let Some(keys) = summary_keys(tool)
        && let Some(s) = keys.iter().find_map(|k| scalar(v.get(k)?))
    {
        return Some(s);
    }
    first_string(v)
}

/// Collapses whitespace runs to one space, trims, and cuts at `max` characters (the last one
/// then being `…`).
pub fn clip(text: &str, max: usize) -> String {
    let mut out = String::new();
    let mut count = 0;
    let mut space = false;
    let mut cut = false;
    for c in text.chars() {
        if c.is_whitespace() {
            space = count > 0;
            continue;
        }
        let need = 1 + usize::from(space);
        if count + need > max {
            cut = true;
            break;
        }
        if space {
            out.push(' ');
            count += 1;
            space = false;
        }
        out.push(c);
        count += 1;
    }
    if cut && max > 0 {
        while count >= max {
            out.pop();
            count -= 1;
        }
        let trimmed = out.trim_end().len();
        out.truncate(trimmed);
        out.push('…');
    }
    out
}

/// A short, stable, one-line summary of a tool input: for known tools the field that says
/// what the call is about (Bash `command`, Read/Edit/Write `file_path`, Grep/Glob `pattern`,
/// Task/Agent `description`, Skill `skill`, WebFetch `url`, …); for MCP and unknown tools the
/// first non-empty string argument. Whitespace runs become one space; at most
/// [`MAX_SUMMARY_CHARS`] characters. Empty when nothing fits or the input was not read.
pub fn input_summary(tool: &str, input: Option<&Value>) -> String {
    let Some(input) = input else {
        return String::new();
    };
    let input = normalized_input(input);
    summary_text(tool, &input).map_or_else(String::new, |s| clip(&s, MAX_SUMMARY_CHARS))
}

// ---------------------------------------------------------------------------------------------
// Totals per tool

/// Totals for one tool name (`skein tools --by name`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolTotals {
    pub tool: String,
    pub calls: u64,
    /// Distinct session ids with a call.
    pub sessions: u64,
    /// Calls whose result was an error.
    pub errors: u64,
    /// `errors / (calls - unpaired)`, rounded to 4 decimals; `None` when no call has a result.
    pub error_rate: Option<f64>,
    /// Calls without a result.
    pub unpaired: u64,
    /// Sum of the results' text bytes.
    pub result_bytes: u64,
    /// `result_bytes / (calls - unpaired)`, rounded to the nearest byte.
    pub avg_result_bytes: Option<u64>,
    /// Median duration (nearest rank: the lower middle value for an even count).
    pub p50_duration_ms: Option<i64>,
    pub max_duration_ms: Option<i64>,
}

#[derive(Debug, Default)]
struct Acc {
    calls: u64,
    errors: u64,
    unpaired: u64,
    result_bytes: u64,
    sessions: BTreeSet<String>,
    durations: Vec<i64>,
}

/// Accumulates calls into [`ToolTotals`] per tool name.
#[derive(Debug, Default)]
pub struct ToolTotalsBuilder {
    by: BTreeMap<String, Acc>,
}

/// Rounds to 4 decimals.
pub fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

impl ToolTotalsBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts one call.
    pub fn add(&mut self, call: &ToolCall) {
        let acc = match self.by.get_mut(call.tool.as_str()) {
            Some(a) => a,
            None => self.by.entry(call.tool.clone()).or_default(),
        };
        acc.calls += 1;
        acc.errors += u64::from(call.is_error == Some(true));
        acc.unpaired += u64::from(!call.paired);
        acc.result_bytes += call.result_bytes.unwrap_or(0);
        if !acc.sessions.contains(call.session_id.as_str()) {
            acc.sessions.insert(call.session_id.clone());
        }
        if let Some(d) = call.duration_ms {
            acc.durations.push(d);
        }
    }

    /// The totals, sorted by tool name.
    pub fn finish(self) -> Vec<ToolTotals> {
        self.by
            .into_iter()
            .map(|(tool, mut a)| {
                let results = a.calls - a.unpaired;
                a.durations.sort_unstable();
                let p50 =
                    (!a.durations.is_empty()).then(|| a.durations[(a.durations.len() - 1) / 2]);
                ToolTotals {
                    tool,
                    calls: a.calls,
                    sessions: a.sessions.len() as u64,
                    errors: a.errors,
                    error_rate: (results > 0).then(|| round4(a.errors as f64 / results as f64)),
                    unpaired: a.unpaired,
                    result_bytes: a.result_bytes,
                    avg_result_bytes: (results > 0)
                        .then(|| (a.result_bytes + results / 2) / results),
                    p50_duration_ms: p50,
                    max_duration_ms: a.durations.last().copied(),
                }
            })
            .collect()
    }
}

// ---------------------------------------------------------------------------------------------
// Loops

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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use skein_analysis::{AnalysisOptions, NoVisitor, analyze_visit};
    use skein_core::{Parser, SliceLines};
    use skein_sessions::{SessionFiles, SpawnLinks};

    /// A one-file session from JSONL lines.
    fn session(lines: &[String]) -> LoadedSession<NoVisitor> {
        let data = lines.join("\n");
        let analysis = analyze_visit::<_, Value, _>(
            "f.jsonl",
            SliceLines::new(data.as_bytes()),
            &AnalysisOptions::default(),
            &mut Parser::new(),
            &mut NoVisitor,
        )
        .expect("in memory");
        LoadedSession {
            files: SessionFiles {
                session_id: "s".into(),
                project_dir: "p".into(),
                main: Some("f.jsonl".into()),
                agents: Vec::new(),
            },
            main: Some((analysis, NoVisitor)),
            links: SpawnLinks::new(),
            agents: Vec::new(),
        }
    }

    fn call_line(id: &str, name: &str, input: &str) -> String {
        format!(
            r#"{{"type":"assistant","uuid":"u{id}","message":{{"id":"m{id}","content":[{{"type":"tool_use","id":"{id}","name":"{name}","input":{input}}}]}}}}"#
        )
    }

    fn side_line(id: &str, name: &str, input: &str) -> String {
        call_line(id, name, input).replacen('{', r#"{"isSidechain":true,"#, 1)
    }

    fn result_line(id: &str, error: bool) -> String {
        format!(
            r#"{{"type":"user","uuid":"r{id}","message":{{"content":[{{"type":"tool_result","tool_use_id":"{id}","content":"x","is_error":{error}}}]}}}}"#
        )
    }

    /// (tool, count, first_line, last_line) of each loop.
    fn loops(lines: &[String], min: usize) -> Vec<(String, u64, u64, u64)> {
        tool_loops(&session(lines), min)
            .into_iter()
            .map(|l| (l.tool, l.count, l.first_line, l.last_line))
            .collect()
    }

    fn l(tool: &str, count: u64, first: u64, last: u64) -> (String, u64, u64, u64) {
        (tool.to_owned(), count, first, last)
    }

    #[test]
    fn loops_need_min_consecutive_identical_calls() {
        let a = |id: &str| call_line(id, "Bash", r#"{"command":"ls"}"#);
        assert!(loops(&[], 3).is_empty());
        assert!(loops(&[a("1"), a("2")], 3).is_empty());
        assert_eq!(loops(&[a("1"), a("2")], 2), [l("Bash", 2, 1, 2)]);
        assert_eq!(loops(&[a("1"), a("2"), a("3")], 3), [l("Bash", 3, 1, 3)]);
        // one maximal run, not overlapping runs
        assert_eq!(
            loops(&[a("1"), a("2"), a("3"), a("4")], 3),
            [l("Bash", 4, 1, 4)]
        );
        // min 1: every maximal run
        assert_eq!(loops(&[a("1")], 1), [l("Bash", 1, 1, 1)]);
        assert_eq!(loops(&[a("1")], 0), [l("Bash", 1, 1, 1)]);
    }

    #[test]
    fn loops_are_broken_by_any_other_call() {
        let a = |id: &str| call_line(id, "Bash", r#"{"command":"ls"}"#);
        let other_input = call_line("x", "Bash", r#"{"command":"ls -l"}"#);
        let other_tool = call_line("y", "Read", r#"{"command":"ls"}"#);
        assert!(loops(&[a("1"), a("2"), other_input.clone(), a("3")], 3).is_empty());
        assert_eq!(
            loops(&[a("1"), a("2"), other_tool, a("3"), a("4")], 2),
            [l("Bash", 2, 1, 2), l("Bash", 2, 4, 5)]
        );
        // two runs of one tool with different inputs, back to back
        let b = |id: &str| call_line(id, "Bash", r#"{"command":"ls -l"}"#);
        assert_eq!(
            loops(&[a("1"), a("2"), a("3"), b("4"), b("5"), b("6")], 3),
            [l("Bash", 3, 1, 3), l("Bash", 3, 4, 6)]
        );
        // a run at the very end is reported
        assert_eq!(
            loops(&[other_input, a("1"), a("2"), a("3")], 3),
            [l("Bash", 3, 2, 4)]
        );
    }

    #[test]
    fn results_text_and_copies_do_not_break_loops() {
        let a = |id: &str| call_line(id, "Grep", r#"{"pattern":"x","path":"/w"}"#);
        let text = r#"{"type":"assistant","uuid":"t","message":{"content":[{"type":"text","text":"again"}]}}"#;
        let run = [
            a("1"),
            result_line("1", true),
            text.to_owned(),
            a("2"),
            // a later copy of id 1 with another input is not a call
            call_line("1", "Bash", r#"{"command":"rm"}"#),
            result_line("2", false),
            a("3"),
            result_line("3", true),
        ];
        let found = tool_loops(&session(&run), 3);
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].count, found[0].first_line, found[0].last_line),
            (3, 1, 7)
        );
        assert_eq!(found[0].errors, 2);
        assert_eq!(found[0].ids, ["1", "2", "3"]);
        assert_eq!(found[0].input_summary, "x");
    }

    #[test]
    fn identical_means_canonical_json() {
        let one = call_line(
            "1",
            "Edit",
            r#"{"file_path":"/a","old_string":"x","new_string":"y"}"#,
        );
        let reordered = call_line(
            "2",
            "Edit",
            r#"{"new_string":"y","file_path":"/a","old_string":"x"}"#,
        );
        let encoded = call_line(
            "3",
            "Edit",
            r#""{\"old_string\":\"x\",\"new_string\":\"y\",\"file_path\":\"/a\"}""#,
        );
        assert_eq!(loops(&[one, reordered, encoded], 3), [l("Edit", 3, 1, 3)]);
        // numbers compare as written: 1 and 1.0 differ
        let n1 = call_line("4", "Read", r#"{"file_path":"/a","limit":1}"#);
        let n2 = call_line("5", "Read", r#"{"file_path":"/a","limit":1.0}"#);
        assert!(loops(&[n1.clone(), n1.replace("\"4\"", "\"6\""), n2], 3).is_empty());
        // no name: identical `<none>` calls still loop
        let nameless = |id: &str| {
            format!(
                r#"{{"type":"assistant","uuid":"n{id}","message":{{"content":[{{"type":"tool_use","id":"{id}","input":{{}}}}]}}}}"#
            )
        };
        assert_eq!(
            loops(&[nameless("7"), nameless("8")], 2),
            [l(NO_NAME, 2, 1, 2)]
        );
    }

    #[test]
    fn sidechain_calls_form_their_own_stream() {
        let m = |id: &str| call_line(id, "Read", r#"{"file_path":"/x"}"#);
        let s = |id: &str| side_line(id, "Read", r#"{"file_path":"/x"}"#);
        let run = [m("1"), s("2"), m("3"), s("4"), m("5")];
        let found = tool_loops(&session(&run), 2);
        let got: Vec<(bool, u64, u64, u64)> = found
            .iter()
            .map(|l| (l.sidechain, l.count, l.first_line, l.last_line))
            .collect();
        assert_eq!(got, [(false, 3, 1, 5), (true, 2, 2, 4)]);
    }

    #[test]
    fn calls_follow_file_order_with_results() {
        let lines = [
            call_line("1", "Bash", r#"{"command":"ls"}"#),
            result_line("2", false),
            call_line("2", "Read", r#"{"file_path":"/r"}"#),
            result_line("1", true),
        ];
        let calls = tool_calls(&session(&lines));
        let got: Vec<(&str, u64, Option<bool>, bool)> = calls
            .iter()
            .map(|c| (c.id.as_str(), c.line, c.is_error, c.paired))
            .collect();
        assert_eq!(
            got,
            [("1", 1, Some(true), true), ("2", 3, Some(false), true)]
        );
        assert_eq!(calls[1].input_summary, "/r");
        assert_eq!(calls[0].agent_id, None);
        assert_eq!(calls[0].file, "f.jsonl");
    }

    #[test]
    fn summaries_of_known_tools() {
        let s = |tool: &str, v: Value| input_summary(tool, Some(&v));
        assert_eq!(
            s(
                "Bash",
                json!({"command": "cargo  test\n--quiet", "description": "x"})
            ),
            "cargo test --quiet"
        );
        assert_eq!(
            s("Read", json!({"file_path": "/a/b.rs", "offset": 3})),
            "/a/b.rs"
        );
        assert_eq!(
            s("Grep", json!({"path": "/w", "pattern": "fn main"})),
            "fn main"
        );
        assert_eq!(
            s("Task", json!({"prompt": "long", "description": "Find it"})),
            "Find it"
        );
        assert_eq!(
            s("Agent", json!({"prompt": "P", "subagent_type": "Explore"})),
            "Explore"
        );
        assert_eq!(s("Skill", json!({"skill": "pdf", "args": "x"})), "pdf");
        assert_eq!(
            s("WebFetch", json!({"prompt": "p", "url": "https://x.test/"})),
            "https://x.test/"
        );
        assert_eq!(s("TodoWrite", json!({"todos": [1, 2]})), "2 todos");
        assert_eq!(s("TodoWrite", json!({"todos": [1]})), "1 todo");
        assert_eq!(
            s("TaskUpdate", json!({"taskId": "2", "status": "completed"})),
            "2 completed"
        );
        assert_eq!(s("TaskUpdate", json!({"taskId": 7})), "7");
        assert_eq!(
            s(
                "AskUserQuestion",
                json!({"questions": [{"question": "Why?"}]})
            ),
            "Why?"
        );
        assert_eq!(
            s(
                "mcp__srv__run",
                json!({"limit": 3, "sql": "select 1", "db": "x"})
            ),
            "select 1"
        );
        assert_eq!(s("Whatever", json!({"n": 1})), "");
        assert_eq!(s("Read", json!({"path": "/only/generic"})), "/only/generic");
        assert_eq!(input_summary("Bash", None), "");
        // inputs JSON-encoded as strings (old builds)
        assert_eq!(s("Bash", json!("{\"command\":\"ls\"}")), "ls");
        assert_eq!(s("Bash", json!("plain text")), "plain text");
    }

    #[test]
    fn clip_counts_characters() {
        assert_eq!(clip("  a \n\t b  ", 10), "a b");
        assert_eq!(clip("abcdef", 6), "abcdef");
        assert_eq!(clip("abcdefg", 6), "abcde…");
        assert_eq!(clip("abcd efgh", 6), "abcd…");
        assert_eq!(clip("ééééééé", 4), "ééé…");
        let long = "x".repeat(500);
        let c = input_summary("Bash", Some(&json!({ "command": long })));
        assert_eq!(c.chars().count(), MAX_SUMMARY_CHARS);
        assert!(c.ends_with('…'));
    }

    #[test]
    fn canonical_sorts_keys_recursively() {
        let a = json!({"b": 1, "a": {"y": [1, {"d": 2, "c": 3}], "x": "s"}});
        assert_eq!(
            canonical_input(Some(&a)),
            r#"{"a":{"x":"s","y":[1,{"c":3,"d":2}]},"b":1}"#
        );
        let encoded = json!("{\"b\":1,\"a\":2}");
        assert_eq!(canonical_input(Some(&encoded)), r#"{"a":2,"b":1}"#);
        assert_eq!(canonical_input(None), "null");
        assert_eq!(canonical_input(Some(&json!("x\"y"))), r#""x\"y""#);
    }

    fn call(tool: &str, session: &str, res: Option<(bool, u64)>, d: Option<i64>) -> ToolCall {
        ToolCall {
            session_id: session.into(),
            project: "p".into(),
            agent_id: None,
            agent_type: None,
            spawned_by: None,
            file: "f".into(),
            line: 1,
            sidechain: false,
            tool: tool.into(),
            id: "t".into(),
            input_summary: String::new(),
            is_error: res.map(|r| r.0),
            result_bytes: res.map(|r| r.1),
            duration_ms: d,
            paired: res.is_some(),
            timestamp: None,
        }
    }

    #[test]
    fn totals_per_name() {
        let mut b = ToolTotalsBuilder::new();
        b.add(&call("Read", "s1", Some((false, 10)), Some(40)));
        b.add(&call("Bash", "s1", Some((true, 5)), Some(300)));
        b.add(&call("Bash", "s2", Some((false, 6)), Some(100)));
        b.add(&call("Bash", "s2", None, None));
        b.add(&call("Bash", "s2", Some((false, 0)), Some(200)));
        b.add(&call("Bash", "s2", Some((false, 0)), Some(250)));
        let t = b.finish();
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].tool, "Bash");
        assert_eq!(t[0].calls, 5);
        assert_eq!(t[0].sessions, 2);
        assert_eq!(t[0].errors, 1);
        assert_eq!(t[0].unpaired, 1);
        assert_eq!(t[0].error_rate, Some(0.25));
        assert_eq!(t[0].result_bytes, 11);
        assert_eq!(t[0].avg_result_bytes, Some(3));
        assert_eq!(t[0].p50_duration_ms, Some(200));
        assert_eq!(t[0].max_duration_ms, Some(300));
        assert_eq!(t[1].tool, "Read");
        assert_eq!(t[1].p50_duration_ms, Some(40));
        let mut b = ToolTotalsBuilder::new();
        b.add(&call("X", "s", None, None));
        let t = b.finish();
        assert_eq!(
            (t[0].error_rate, t[0].avg_result_bytes, t[0].p50_duration_ms),
            (None, None, None)
        );
    }
}
