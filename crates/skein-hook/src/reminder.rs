//! The goal reminder printed on SessionStart after a compaction: the request's original prompt
//! and the open items of its task list (`TodoWrite` todos and `TaskCreate`/`TaskUpdate` tasks,
//! followed by `skein_analysis::TaskTracker`), as `hookSpecificOutput.additionalContext`.

use std::fmt::Write as _;

use crate::state::RequestRecord;

/// Longest prompt quoted (Claude Code spills outputs over 10,000 chars to a file).
const MAX_PROMPT_CHARS: usize = 6000;
const MAX_TODOS: usize = 50;

/// The reminder text, or `None` when there is nothing to remind of.
pub fn reminder_text(req: &RequestRecord) -> Option<String> {
    let prompt = req
        .prompt
        .as_deref()
        .map(str::trim)
        .filter(|p| !p.is_empty());
    let open: Vec<_> = req
        .todos
        .iter()
        .flatten()
        .filter(|t| t.status != "completed" && !t.content.trim().is_empty())
        .take(MAX_TODOS)
        .collect();
    if prompt.is_none() && open.is_empty() {
        return None;
    }
    let mut text = String::from(
        "Reminder from skein (the conversation was just compacted): keep working on the \
         user's current request.\n",
    );
    if let Some(p) = prompt {
        let mut quoted: String = p.chars().take(MAX_PROMPT_CHARS).collect();
        if quoted.len() < p.len() {
            quoted.push_str(" […]");
        }
        let _ = write!(
            text,
            "\nOriginal request (opened {}):\n<original-request>\n{quoted}\n</original-request>\n",
            req.opened_at
        );
    }
    if !open.is_empty() {
        text.push_str("\nOpen tasks:\n");
        for t in open {
            let status = if t.status.is_empty() {
                "pending"
            } else {
                &t.status
            };
            let content: String = t.content.chars().take(300).collect();
            match &t.id {
                Some(id) if t.source.as_deref() == Some("tasks") => {
                    let _ = writeln!(text, "- [{status}] task #{id}: {content}");
                }
                _ => {
                    let _ = writeln!(text, "- [{status}] {content}");
                }
            }
        }
    }
    Some(text)
}

/// The JSON object to print on stdout, or `None`.
pub fn render(req: &RequestRecord) -> Option<String> {
    let text = reminder_text(req)?;
    let out = serde_json::json!({
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": text,
        }
    });
    Some(out.to_string())
}
