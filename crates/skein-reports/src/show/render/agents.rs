//! Subagents nested under their calls, old inline sidechains, and `SendMessage` calls
//! rendered as messages from one agent to another.

use std::fmt::Write as _;

use serde_json::Value;
use skein_graph::NodeId;

use super::{Renderer, Results, plural, rendered_lines, str_at};
use crate::agents::{MAIN, SentMessage, sender_of};
use crate::show::text::{escape_html, escape_markdown_html, thousands, truncate};
use crate::show::{ShowError, branch, read_lines, subtree_branch};
use crate::tree::{Hung, Source};

impl Renderer<'_> {
    pub(super) fn agent(&mut self, i: usize, depth: usize) -> Result<(), ShowError> {
        if !self.rendered_agents.insert(i) {
            return Ok(());
        }
        let a = &self.s.agents[i];
        let b = branch(&a.analysis, None, self.opts.bridge);
        let mut wanted = rendered_lines(&a.analysis.dag, &b.nodes);
        wanted.extend(b.seams.iter().map(|s| a.analysis.dag.line(s.node)));
        let values = read_lines(&a.file.path, &wanted, self.opts.mmap)?;
        self.note_seams(Source::Agent(i), &b.seams);
        self.facts.agents += 1;
        let mut parts = vec![format!(
            "Subagent <code>{}</code>",
            escape_html(&a.file.agent_id)
        )];
        if let Some(label) = self.labels.get(i) {
            parts.extend(label.parts().iter().map(|p| escape_html(p)));
        }
        parts.push(plural(b.nodes.len() as u64, "record"));
        // Folded inside a call; a transcript shown on its own is not folded.
        let fold = depth > 0;
        if fold {
            let _ = write!(
                self.out,
                "<details>\n<summary>{}</summary>\n\n",
                parts.join(" · ")
            );
        } else {
            let _ = write!(self.out, "{}\n\n", parts.join(" · "));
        }
        let saved = self.role.take();
        self.branch(Source::Agent(i), &b.nodes, &values, depth)?;
        self.role = saved;
        if fold {
            self.out.push_str("</details>\n\n");
        }
        Ok(())
    }

    pub(super) fn inline(&mut self, root: NodeId, depth: usize) -> Result<(), ShowError> {
        let (Some(path), Some((a, _))) = (&self.s.files.main, &self.s.main) else {
            return Ok(());
        };
        let nodes = subtree_branch(a, root);
        let wanted = rendered_lines(&a.dag, &nodes);
        let values = read_lines(path, &wanted, self.opts.mmap)?;
        self.facts.agents += 1;
        let _ = write!(
            self.out,
            "<details>\n<summary>Subagent (inline sidechain) · {}</summary>\n\n",
            plural(nodes.len() as u64, "record")
        );
        let saved = self.role.take();
        self.branch(Source::Main, &nodes, &values, depth)?;
        self.role = saved;
        self.out.push_str("</details>\n\n");
        Ok(())
    }

    /// The name messages from a transcript are signed with when their result names no
    /// sender.
    fn sender_name(&self, src: Source) -> String {
        match src {
            Source::Main => MAIN.to_owned(),
            Source::Agent(i) => self.labels.get(i).map_or_else(
                || self.s.agents[i].file.agent_id.clone(),
                |l| l.sender().to_owned(),
            ),
        }
    }

    /// A `SendMessage` call: a line `sender → recipient` with the summary, then the message
    /// quoted; a failed delivery says so with the error.
    pub(super) fn send_message(&mut self, src: Source, call: &Value, results: &Results<'_>) {
        let id = str_at(call, "id").unwrap_or("");
        let input = call.get("input").unwrap_or(&Value::Null);
        let m = SentMessage::from_input(input);
        let result = results.get(id).copied();
        let from = result
            .and_then(|(_, record)| sender_of(record.get("toolUseResult")))
            .unwrap_or_else(|| self.sender_name(src));
        let to = if m.to == "*" {
            "everyone"
        } else {
            m.to.as_str()
        };
        let kind = match (m.kind.as_str(), m.approve) {
            ("message", _) => String::new(),
            ("broadcast", _) => " (broadcast)".to_owned(),
            ("shutdown_response", Some(true)) => " (shutdown approved)".to_owned(),
            ("shutdown_response", Some(false)) => " (shutdown refused)".to_owned(),
            (k, _) => format!(" ({})", k.replace('_', " ")),
        };
        let summary = m
            .summary
            .as_deref()
            .map(|s| format!(" · {}", escape_markdown_html(s)))
            .unwrap_or_default();
        let _ = write!(
            self.out,
            "✉ **{} → {}**{kind}{summary}\n\n",
            escape_markdown_html(&from),
            escape_markdown_html(to)
        );
        if let Some(body) = m.body.as_deref().filter(|b| !b.trim().is_empty()) {
            let (shown, cut) = truncate(body.trim(), self.opts.max_result);
            for line in escape_markdown_html(shown).lines() {
                let _ = writeln!(self.out, "> {line}");
            }
            self.out.push('\n');
            if cut {
                let _ = write!(
                    self.out,
                    "*(message truncated: {} of {} bytes shown)*\n\n",
                    thousands(shown.len() as u64),
                    thousands(body.trim().len() as u64)
                );
            }
        }
        match result {
            None => self.out.push_str("*(no result: delivery unknown)*\n\n"),
            Some((block, _)) if block["is_error"].as_bool() == Some(true) => {
                let text = block
                    .get("content")
                    .map(crate::show::text::result_text)
                    .unwrap_or_default();
                let _ = write!(
                    self.out,
                    "*(not delivered: {})*\n\n",
                    escape_markdown_html(&crate::tools::clip(&text, 200))
                );
            }
            Some(_) => {}
        }
    }

    /// The subagents and inline sidechains hung under the record holding call `id`.
    pub(super) fn hung_agents(
        &mut self,
        src: Source,
        n: NodeId,
        id: &str,
        depth: usize,
    ) -> Result<(), ShowError> {
        if !self.opts.agents {
            return Ok(());
        }
        let hung: Vec<Hung> = self.links.hung_at(src, n).to_vec();
        for h in hung {
            match h {
                Hung::Agent(i) if self.links.agents[i].tool_use_id.as_deref() == Some(id) => {
                    self.agent(i, depth + 1)?;
                }
                Hung::Inline(root) if self.links.inline_tool_use(root) == Some(id) => {
                    self.inline(root, depth + 1)?;
                }
                _ => {}
            }
        }
        Ok(())
    }
}
