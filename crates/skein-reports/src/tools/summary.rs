//! Input summaries: the one-line `input_summary` of a call, and `clip`.

use std::borrow::Cow;

use serde_json::Value;
use skein_core::record::is_spawn_tool;

use super::MAX_SUMMARY_CHARS;

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
        n if is_spawn_tool(n) => &["description", "subagent_type", "prompt"],
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
