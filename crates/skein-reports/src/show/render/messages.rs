//! User and assistant records: prompts, thinking, tool calls with their inputs and results.

use std::fmt::Write as _;

use rustc_hash::FxHashSet;
use serde_json::Value;
use skein_core::record::is_spawn_tool;
use skein_graph::NodeId;

use super::{Renderer, Results, Role, flag, str_at};
use crate::agents::SEND_MESSAGE;
use crate::show::ShowError;
use crate::show::text::{
    escape_html, escape_markdown_html, fence_for, is_interrupt, message_text, result_text, tag,
};
use crate::tools::input_summary;
use crate::tree::Source;

impl Renderer<'_> {
    pub(super) fn user(&mut self, v: &Value, uses: &FxHashSet<&str>, depth: usize) {
        let content = v.pointer("/message/content").unwrap_or(&Value::Null);
        if flag(v, "isCompactSummary") {
            let text = message_text(content);
            let _ = write!(
                self.out,
                "<details>\n<summary>Compaction summary</summary>\n\n{}\n\n</details>\n\n",
                escape_markdown_html(text.trim())
            );
            self.role = None;
            return;
        }
        if flag(v, "isMeta") {
            if self.opts.meta {
                let text = message_text(content);
                let _ = write!(
                    self.out,
                    "<details>\n<summary>Injected context</summary>\n\n{}\n\n</details>\n\n",
                    escape_markdown_html(text.trim())
                );
            }
            return;
        }
        let mut texts: Vec<String> = Vec::new();
        match content {
            Value::String(s) => texts.push(s.clone()),
            Value::Array(blocks) => {
                for b in blocks {
                    match str_at(b, "type") {
                        Some("text") => {
                            texts.push(str_at(b, "text").unwrap_or("").to_owned());
                        }
                        Some("image") => {
                            let media = b
                                .pointer("/source/media_type")
                                .and_then(Value::as_str)
                                .unwrap_or("image");
                            texts.push(format!("*[{media}]*"));
                        }
                        Some("tool_result") => {
                            let id = str_at(b, "tool_use_id").unwrap_or("");
                            if !uses.contains(id) {
                                self.orphan_result(id, b);
                            }
                        }
                        Some(other) => texts.push(format!("*[{other}]*")),
                        None => {}
                    }
                }
            }
            _ => {}
        }
        let text = texts.join("\n\n");
        if text.trim().is_empty() {
            return;
        }
        if is_interrupt(&text) {
            self.para(&format!("*{}*", text.trim()));
            return;
        }
        let md = user_markdown(&text);
        if md.trim().is_empty() {
            return;
        }
        if depth == 0 && !text.trim_start().starts_with('<') {
            self.facts.prompts += 1;
            if self.facts.first_prompt.is_none() && self.in_rewound == 0 {
                self.facts.first_prompt = Some(text.clone());
            }
        }
        self.role = None;
        self.heading(Role::User, depth);
        self.para(&md);
    }

    fn orphan_result(&mut self, id: &str, block: &Value) {
        let text = block.get("content").map(result_text).unwrap_or_default();
        let _ = write!(
            self.out,
            "<details>\n<summary>Result of <code>{}</code> (its call is not on this branch)</summary>\n\n",
            escape_html(id)
        );
        self.fenced("", &text, "result");
        self.out.push_str("</details>\n\n");
    }

    pub(super) fn assistant(
        &mut self,
        src: Source,
        n: NodeId,
        v: &Value,
        results: &Results<'_>,
        depth: usize,
    ) -> Result<(), ShowError> {
        let message = v.get("message").unwrap_or(&Value::Null);
        let content = message.get("content").unwrap_or(&Value::Null);
        let synthetic = str_at(message, "model") == Some("<synthetic>");
        if synthetic || flag(v, "isApiErrorMessage") {
            let text = message_text(content);
            let text = escape_markdown_html(text.trim());
            if flag(v, "isApiErrorMessage") {
                self.para(&format!("> **API error:** {text}"));
            } else if !text.is_empty() {
                self.para(&format!("*{text}* (synthetic message)"));
            }
            return Ok(());
        }
        let blocks: Vec<&Value> = match content {
            Value::Array(b) => b.iter().collect(),
            Value::String(_) => vec![content],
            _ => Vec::new(),
        };
        for b in blocks {
            if let Value::String(s) = b {
                self.heading(Role::Assistant, depth);
                self.para(&escape_markdown_html(s));
                continue;
            }
            match str_at(b, "type") {
                Some("text") => {
                    let t = str_at(b, "text").unwrap_or("");
                    if !t.trim().is_empty() {
                        self.heading(Role::Assistant, depth);
                        self.para(&escape_markdown_html(t));
                    }
                }
                Some("thinking") if self.opts.thinking => {
                    let t = str_at(b, "thinking").unwrap_or("").trim();
                    self.heading(Role::Assistant, depth);
                    if t.is_empty() {
                        self.para("*(thinking)*");
                    } else {
                        let _ = write!(
                            self.out,
                            "<details>\n<summary>Thinking</summary>\n\n{}\n\n</details>\n\n",
                            escape_markdown_html(t)
                        );
                    }
                }
                Some("redacted_thinking") if self.opts.thinking => {
                    self.heading(Role::Assistant, depth);
                    self.para("*(redacted thinking)*");
                }
                Some("tool_use" | "server_tool_use") => {
                    self.heading(Role::Assistant, depth);
                    self.tool_call(src, n, b, results, depth)?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn tool_call(
        &mut self,
        src: Source,
        n: NodeId,
        b: &Value,
        results: &Results<'_>,
        depth: usize,
    ) -> Result<(), ShowError> {
        let name = str_at(b, "name").unwrap_or("tool");
        let id = str_at(b, "id").unwrap_or("");
        if depth == 0 {
            self.facts.tool_calls += 1;
        }
        if name == SEND_MESSAGE {
            self.send_message(src, b, results);
            return Ok(());
        }
        let input = b.get("input");
        let summary = input_summary(name, input);
        let result = results.get(id).map(|&(block, _)| block);
        let is_error = result.is_some_and(|r| flag(r, "is_error"));
        let status = match result {
            None => " · <i>no result</i>",
            Some(_) if is_error => " · <i>error</i>",
            Some(_) => "",
        };
        let _ = write!(
            self.out,
            "<details>\n<summary><b>{}</b> {}{status}</summary>\n\n",
            escape_html(name),
            escape_html(&summary)
        );
        self.tool_input(name, input);
        self.hung_agents(src, n, id, depth)?;
        if let Some(r) = result {
            let text = r.get("content").map(result_text).unwrap_or_default();
            self.out.push_str(if is_error {
                "**Error:**\n\n"
            } else {
                "**Result:**\n\n"
            });
            if text.trim().is_empty() {
                self.out.push_str("*(empty)*\n\n");
            } else {
                self.fenced("", &text, "result");
            }
        }
        self.out.push_str("</details>\n\n");
        Ok(())
    }

    fn tool_input(&mut self, name: &str, input: Option<&Value>) {
        let Some(input) = input else { return };
        let field = |k: &str| input.get(k).and_then(Value::as_str);
        match name {
            "Bash" if field("command").is_some() => {
                self.fenced("sh", field("command").unwrap_or(""), "input");
            }
            "Edit" if field("old_string").is_some() || field("new_string").is_some() => {
                if let Some(p) = field("file_path") {
                    let _ = write!(self.out, "`{p}`\n\n");
                }
                let mut diff = String::new();
                for l in field("old_string").unwrap_or("").lines() {
                    let _ = writeln!(diff, "-{l}");
                }
                for l in field("new_string").unwrap_or("").lines() {
                    let _ = writeln!(diff, "+{l}");
                }
                self.fenced("diff", &diff, "input");
            }
            "Write" if field("content").is_some() => {
                if let Some(p) = field("file_path") {
                    let _ = write!(self.out, "`{p}`\n\n");
                }
                self.fenced("", field("content").unwrap_or(""), "input");
            }
            n if is_spawn_tool(n) && field("prompt").is_some() => {
                self.fenced("", field("prompt").unwrap_or(""), "prompt");
            }
            _ => {
                if input.as_object().is_some_and(serde_json::Map::is_empty) {
                    return;
                }
                let json = serde_json::to_string_pretty(input).unwrap_or_default();
                self.fenced("json", &json, "input");
            }
        }
    }
}

/// A user prompt as Markdown: slash commands and shell escapes written as code, everything
/// else escaped against HTML.
pub(super) fn user_markdown(text: &str) -> String {
    if text.contains("<local-command-caveat>") && tag(text, "local-command-caveat").is_some() {
        let rest = text.replace(
            &format!(
                "<local-command-caveat>{}</local-command-caveat>",
                tag(text, "local-command-caveat").unwrap_or("")
            ),
            "",
        );
        return user_markdown(rest.trim());
    }
    if let Some(name) = tag(text, "command-name") {
        let args = tag(text, "command-args").unwrap_or("").trim();
        let cmd = if args.is_empty() {
            name.trim().to_owned()
        } else {
            format!("{} {args}", name.trim())
        };
        let fence = if cmd.contains('`') { "``" } else { "`" };
        return format!("{fence}{cmd}{fence}");
    }
    let mut out = String::new();
    let mut any = false;
    for (name, lang, prefix) in [
        ("bash-input", "sh", "! "),
        ("bash-stdout", "", ""),
        ("bash-stderr", "", ""),
        ("local-command-stdout", "", ""),
        ("local-command-stderr", "", ""),
    ] {
        if let Some(body) = tag(text, name) {
            any = true;
            if body.trim().is_empty() {
                continue;
            }
            let body = format!("{prefix}{}", body.trim_end());
            let fence = fence_for(&body);
            let _ = write!(out, "{fence}{lang}\n{body}\n{fence}\n\n");
        }
    }
    if any {
        return out.trim_end().to_owned();
    }
    if let Some(body) = tag(text, "task-notification") {
        return format!(
            "<details>\n<summary>Task notification</summary>\n\n{}\n\n</details>",
            escape_markdown_html(body.trim())
        );
    }
    escape_markdown_html(text)
}

#[cfg(test)]
mod tests {
    use super::user_markdown;

    #[test]
    fn slash_commands_and_shell_escapes() {
        assert_eq!(
            user_markdown(
                "<command-name>/review</command-name>\n<command-message>review</command-message>\n<command-args>PR 12</command-args>"
            ),
            "`/review PR 12`"
        );
        assert_eq!(
            user_markdown("<bash-input>ls</bash-input>"),
            "```sh\n! ls\n```"
        );
        assert_eq!(user_markdown("use Vec<u8>"), "use Vec&lt;u8>");
    }
}
