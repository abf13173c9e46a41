//! Writing the Markdown of `skein show`: the document, branches, agents and inline
//! sidechains here; user and assistant records (prompts, thinking, tool calls and results) in
//! `messages`; system records and attachments in `system`.

mod messages;
mod system;

use std::fmt::Write as _;

use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::Value;
use skein_graph::{Dag, NodeId, RecordType};

use super::text::{escape_html, escape_markdown_html, fence_for, thousands, truncate};
use super::{
    ShowError, ShowOptions, ShowVisitor, branch, find_leaf, inline_branch, read_lines, source,
};
use crate::session::LoadedSession;
use crate::tools::clip;
use crate::tree::{SessionLinks, Source};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    User,
    Assistant,
}

#[derive(Debug, Default)]
struct Facts {
    first_prompt: Option<String>,
    cwd: Option<String>,
    git_branch: Option<String>,
    first_ts: Option<String>,
    last_ts: Option<String>,
    models: Vec<String>,
    prompts: u64,
    tool_calls: u64,
    agents: u64,
}

pub(crate) struct Renderer<'a> {
    s: &'a LoadedSession<ShowVisitor>,
    links: &'a SessionLinks,
    opts: &'a ShowOptions,
    out: String,
    role: Option<Role>,
    rendered_agents: FxHashSet<usize>,
    facts: Facts,
    title: Option<String>,
    leaf_note: Option<String>,
}

fn str_at<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str)
}

fn flag(v: &Value, key: &str) -> bool {
    v.get(key).and_then(Value::as_bool).unwrap_or(false)
}

fn heading_level(depth: usize) -> usize {
    match depth {
        0 => 2,
        1 => 4,
        2 => 5,
        _ => 6,
    }
}

/// The tool results on a branch, by `tool_use_id`: the block and the record's `toolUseResult`.
type Results<'v> = FxHashMap<&'v str, &'v Value>;

impl<'a> Renderer<'a> {
    pub(crate) fn new(
        s: &'a LoadedSession<ShowVisitor>,
        links: &'a SessionLinks,
        opts: &'a ShowOptions,
    ) -> Self {
        Self {
            s,
            links,
            opts,
            out: String::new(),
            role: None,
            rendered_agents: FxHashSet::default(),
            facts: Facts::default(),
            title: None,
            leaf_note: None,
        }
    }

    pub(crate) fn session(&mut self) -> Result<(), ShowError> {
        if let (Some(path), Some((a, v))) = (&self.s.files.main, &self.s.main) {
            let leaf = match &self.opts.leaf {
                Some(l) => {
                    let n = find_leaf(a, l)?;
                    self.leaf_note = Some(a.dag.uuid(n).to_owned());
                    Some(n)
                }
                None => None,
            };
            let nodes = branch(a, leaf, self.opts.bridge);
            let mut wanted = rendered_lines(&a.dag, &nodes);
            wanted.extend(v.titles.iter().flatten().copied());
            let values = read_lines(path, &wanted, self.opts.mmap)?;
            self.title = title(&values, &v.titles);
            self.branch(Source::Main, &nodes, &values, 0)?;
        }
        if self.opts.agents {
            let rest: Vec<usize> = (0..self.s.agents.len())
                .filter(|&i| !self.rendered_agents.contains(&i))
                .filter(|&i| !self.s.agents[i].file.internal)
                .filter(|&i| self.s.main.is_none() || self.links.agents[i].at.is_none())
                .collect();
            if !rest.is_empty() {
                // Agent transcripts given on their own are each at the top level.
                let depth = usize::from(self.s.main.is_some());
                if depth > 0 {
                    self.out
                        .push_str("\n---\n\n## Subagents not linked to a call\n\n");
                }
                for i in rest {
                    self.agent(i, depth)?;
                }
            }
        }
        Ok(())
    }

    pub(crate) fn finish(self) -> String {
        let f = &self.facts;
        let mut head = String::new();
        let title = self
            .title
            .clone()
            .or_else(|| f.first_prompt.as_deref().map(|p| clip(p, 80)))
            .unwrap_or_else(|| format!("Session {}", self.s.files.session_id));
        let _ = writeln!(head, "# {}\n", escape_markdown_html(&clip(&title, 200)));
        let _ = writeln!(head, "- **Session:** `{}`", self.s.files.session_id);
        if let Some(cwd) = &f.cwd {
            let _ = writeln!(head, "- **Project:** `{cwd}`");
        }
        if let Some(b) = f.git_branch.as_deref().filter(|b| !b.is_empty()) {
            let _ = writeln!(head, "- **Git branch:** `{b}`");
        }
        match (&f.first_ts, &f.last_ts) {
            (Some(a), Some(b)) if a != b => {
                let _ = writeln!(head, "- **Time:** {a} → {b}");
            }
            (Some(a), _) => {
                let _ = writeln!(head, "- **Time:** {a}");
            }
            _ => {}
        }
        if !f.models.is_empty() {
            let _ = writeln!(head, "- **Models:** {}", f.models.join(", "));
        }
        let _ = writeln!(
            head,
            "- **Shown:** {} · {} · {}",
            plural(f.prompts, "prompt"),
            plural(f.tool_calls, "tool call"),
            plural(f.agents, "subagent")
        );
        if let Some(leaf) = &self.leaf_note {
            let _ = writeln!(head, "- **Branch:** ending at record `{leaf}`");
        } else if !self.opts.bridge {
            head.push_str("- **Branch:** since the last compaction\n");
        }
        head.push_str("\n---\n\n");
        if self.out.trim().is_empty() {
            head.push_str("*(no conversation records)*\n");
        }
        head.push_str(self.out.trim_end());
        head.push('\n');
        head
    }

    fn heading(&mut self, role: Role, depth: usize) {
        if self.role == Some(role) {
            return;
        }
        self.role = Some(role);
        let name = match role {
            Role::User => "User",
            Role::Assistant => "Assistant",
        };
        let _ = write!(self.out, "{} {name}\n\n", "#".repeat(heading_level(depth)));
    }

    fn para(&mut self, text: &str) {
        let t = text.trim_matches('\n');
        if t.trim().is_empty() {
            return;
        }
        self.out.push_str(t);
        self.out.push_str("\n\n");
    }

    fn fenced(&mut self, lang: &str, text: &str, what: &str) {
        let (shown, cut) = truncate(text, self.opts.max_result);
        let fence = fence_for(shown);
        let _ = write!(
            self.out,
            "{fence}{lang}\n{}\n{fence}\n\n",
            shown.trim_end_matches('\n')
        );
        if cut {
            let _ = write!(
                self.out,
                "*({what} truncated: {} of {} bytes shown)*\n\n",
                thousands(shown.len() as u64),
                thousands(text.len() as u64)
            );
        }
    }

    fn note_facts(&mut self, v: &Value, depth: usize) {
        if let Some(m) = v
            .get("message")
            .and_then(|m| str_at(m, "model"))
            .filter(|m| *m != "<synthetic>")
            && !self.facts.models.iter().any(|x| x == m)
        {
            self.facts.models.push(m.to_owned());
        }
        if depth > 0 {
            return;
        }
        if let Some(ts) = str_at(v, "timestamp") {
            if self.facts.first_ts.is_none() {
                self.facts.first_ts = Some(ts.to_owned());
            }
            self.facts.last_ts = Some(ts.to_owned());
        }
        if self.facts.cwd.is_none() {
            self.facts.cwd = str_at(v, "cwd").map(str::to_owned);
        }
        if self.facts.git_branch.is_none() {
            self.facts.git_branch = str_at(v, "gitBranch").map(str::to_owned);
        }
    }

    fn branch(
        &mut self,
        src: Source,
        nodes: &[NodeId],
        values: &FxHashMap<u64, Value>,
        depth: usize,
    ) -> Result<(), ShowError> {
        let Some((_, a)) = source(self.s, src) else {
            return Ok(());
        };
        let dag = &a.dag;
        let records: Vec<(NodeId, &Value)> = nodes
            .iter()
            .filter_map(|&n| values.get(&dag.line(n)).map(|v| (n, v)))
            .collect();
        let mut uses: FxHashSet<&str> = FxHashSet::default();
        let mut results: Results<'_> = FxHashMap::default();
        for (_, v) in &records {
            let Some(blocks) = v.pointer("/message/content").and_then(Value::as_array) else {
                continue;
            };
            for b in blocks {
                match str_at(b, "type") {
                    Some("tool_use" | "server_tool_use")
                        if str_at(v, "type") == Some("assistant") =>
                    {
                        if let Some(id) = str_at(b, "id") {
                            uses.insert(id);
                        }
                    }
                    Some("tool_result") if str_at(v, "type") == Some("user") => {
                        if let Some(id) = str_at(b, "tool_use_id") {
                            results.entry(id).or_insert(b);
                        }
                    }
                    _ => {}
                }
            }
        }
        self.role = None;
        for (n, v) in records {
            self.note_facts(v, depth);
            match str_at(v, "type") {
                Some("user") => self.user(v, &uses, depth),
                Some("assistant") => self.assistant(src, n, v, &results, depth)?,
                Some("system") => self.system(v),
                Some("attachment") => self.attachment(v, depth),
                _ => {}
            }
        }
        self.role = None;
        Ok(())
    }

    fn agent(&mut self, i: usize, depth: usize) -> Result<(), ShowError> {
        if !self.rendered_agents.insert(i) {
            return Ok(());
        }
        let a = &self.s.agents[i];
        let nodes = branch(&a.analysis, None, self.opts.bridge);
        let wanted = rendered_lines(&a.analysis.dag, &nodes);
        let values = read_lines(&a.file.path, &wanted, self.opts.mmap)?;
        self.facts.agents += 1;
        let mut parts = vec![format!(
            "Subagent <code>{}</code>",
            escape_html(&a.file.agent_id)
        )];
        if let Some(t) = a.file.meta.as_ref().and_then(|m| m.agent_type.as_deref()) {
            parts.push(escape_html(t));
        }
        parts.push(plural(nodes.len() as u64, "record"));
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
        self.branch(Source::Agent(i), &nodes, &values, depth)?;
        self.role = saved;
        if fold {
            self.out.push_str("</details>\n\n");
        }
        Ok(())
    }

    fn inline(&mut self, root: NodeId, depth: usize) -> Result<(), ShowError> {
        let (Some(path), Some((a, _))) = (&self.s.files.main, &self.s.main) else {
            return Ok(());
        };
        let nodes = inline_branch(a, root);
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
}

fn plural(n: u64, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{} {what}s", thousands(n))
    }
}

/// The lines to parse for a branch: every record but `progress` and unknown types, which are
/// never rendered (and `progress` lines can be megabytes).
fn rendered_lines(dag: &Dag, nodes: &[NodeId]) -> FxHashSet<u64> {
    nodes
        .iter()
        .filter(|&&n| dag.kind(n).is_chain() && dag.kind(n) != RecordType::Progress)
        .map(|&n| dag.line(n))
        .collect()
}

/// The title: the last `custom-title`, else `ai-title`, else `summary` record.
fn title(values: &FxHashMap<u64, Value>, lines: &[Option<u64>; 3]) -> Option<String> {
    let keys = ["customTitle", "aiTitle", "summary"];
    lines.iter().zip(keys).find_map(|(line, key)| {
        let v = values.get(&(*line)?)?;
        str_at(v, key)
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
    })
}
