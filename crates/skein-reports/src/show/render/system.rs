//! System records (compaction boundaries, API errors, …) and attachments.

use std::fmt::Write as _;

use serde_json::Value;

use super::messages::user_markdown;
use super::{Renderer, Role, str_at};
use crate::show::text::{escape_markdown_html, message_text, tag, thousands};
use crate::tools::clip;

impl Renderer<'_> {
    pub(super) fn system(&mut self, v: &Value) {
        let content = str_at(v, "content").unwrap_or("");
        match str_at(v, "subtype") {
            Some("compact_boundary") => {
                let m = v.get("compactMetadata");
                let trigger = m.and_then(|m| str_at(m, "trigger")).unwrap_or("unknown");
                let tokens = m
                    .and_then(|m| m.get("preTokens"))
                    .and_then(Value::as_u64)
                    .map(|t| format!(", {} tokens before", thousands(t)))
                    .unwrap_or_default();
                if !self.out.is_empty() {
                    self.out.push_str("---\n\n");
                }
                let _ = write!(
                    self.out,
                    "*Conversation compacted ({trigger}{tokens}).*\n\n---\n\n"
                );
                self.role = None;
            }
            Some("api_error") => {
                let retry = match (
                    v.get("retryAttempt").and_then(Value::as_u64),
                    v.get("maxRetries").and_then(Value::as_u64),
                ) {
                    (Some(a), Some(m)) => format!(" (retry {a}/{m})"),
                    _ => String::new(),
                };
                let text = if content.is_empty() {
                    "request failed".to_owned()
                } else {
                    clip(content, 300)
                };
                self.para(&format!(
                    "> **API error{retry}:** {}",
                    escape_markdown_html(&text)
                ));
            }
            Some("local_command") if !content.is_empty() => {
                let body = tag(content, "local-command-stdout")
                    .or_else(|| tag(content, "local-command-stderr"))
                    .unwrap_or(content);
                if !body.trim().is_empty() {
                    self.out.push_str("**Command output:**\n\n");
                    self.fenced("", body, "output");
                }
            }
            Some("informational") if !content.is_empty() => {
                self.para(&format!("> {}", escape_markdown_html(&clip(content, 500))));
            }
            _ => {}
        }
    }

    pub(super) fn attachment(&mut self, v: &Value, depth: usize) {
        let Some(a) = v.get("attachment") else { return };
        if str_at(a, "type") != Some("queued_command") {
            return;
        }
        let text = match a.get("prompt") {
            Some(Value::String(s)) => s.clone(),
            Some(p @ Value::Array(_)) => message_text(p),
            _ => return,
        };
        if text.trim().is_empty() {
            return;
        }
        if depth == 0 {
            self.facts.prompts += 1;
        }
        self.role = None;
        self.heading(Role::User, depth);
        self.para(&format!(
            "{}\n\n*(typed while Claude was working)*",
            user_markdown(&text)
        ));
    }
}
