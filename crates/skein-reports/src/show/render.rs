//! Writing the Markdown of `skein show`.

use std::fmt::Write as _;

use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::Value;
use skein_graph::{Dag, NodeId, NodeKind};

use super::text::{
    escape_html, escape_markdown_html, fence_for, is_interrupt, message_text, result_text, tag,
    thousands, truncate,
};
use super::{
    ShowError, ShowOptions, ShowVisitor, branch, find_leaf, inline_branch, read_lines, source,
};
use crate::session::LoadedSession;
use crate::tools::{clip, input_summary};
use crate::tree::{Hung, SessionLinks, Source};

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

    fn user(&mut self, v: &Value, uses: &FxHashSet<&str>, depth: usize) {
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
            if self.facts.first_prompt.is_none() {
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

    fn assistant(
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
        let input = b.get("input");
        let summary = input_summary(name, input);
        let result = results.get(id).copied();
        let is_error = result.is_some_and(|r| flag(r, "is_error"));
        if depth == 0 {
            self.facts.tool_calls += 1;
        }
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
        if self.opts.agents {
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
        }
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
            "Task" | "Agent" if field("prompt").is_some() => {
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

    fn system(&mut self, v: &Value) {
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

    fn attachment(&mut self, v: &Value, depth: usize) {
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
        .filter(|&&n| !matches!(dag.kind(n), NodeKind::Progress | NodeKind::Other))
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

/// A user prompt as Markdown: slash commands and shell escapes written as code, everything
/// else escaped against HTML.
fn user_markdown(text: &str) -> String {
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
