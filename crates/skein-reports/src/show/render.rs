//! Writing the Markdown of `skein show`: the document and branches here; subagents, inline
//! sidechains and messages between agents in `agents`; seams, rewound branches and the task
//! list in `history`; user and assistant records (prompts, thinking, tool calls and results)
//! in `messages`; system records and attachments in `system`.

mod agents;
mod history;
mod messages;
mod system;

use std::fmt::Write as _;

use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::Value;
use skein_analysis::TaskTracker;
use skein_graph::{Dag, NodeId, RecordType, Seam};

use super::text::{escape_markdown_html, fence_for, thousands, truncate};
use super::{ShowError, ShowOptions, ShowVisitor, branch, find_leaf, read_lines, source};
use crate::agents::{AgentLabel, agent_labels};
use crate::session::LoadedSession;
use crate::tools::clip;
use crate::tree::{SessionLinks, Source};
use history::task_section;

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
    seams: u64,
    rewound: u64,
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
    labels: Vec<AgentLabel>,
    /// The seams of the branches rendered, by transcript and the record after each.
    seams: FxHashMap<(Source, NodeId), Seam>,
    /// With `--all-branches`: rewound branch roots of the main transcript, by fork point.
    forks: FxHashMap<NodeId, Vec<NodeId>>,
    /// Main-transcript records rendered or being rendered (rewound branches skip them).
    main_nodes: FxHashSet<NodeId>,
    /// Inside a rewound branch (its records do not change the task list).
    in_rewound: usize,
    /// Which main-transcript nodes hold a message below them (computed for `--all-branches`).
    holds: Option<Vec<bool>>,
    tasks: TaskTracker,
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

/// The tool results on a branch, by `tool_use_id`: the block and its record.
type Results<'v> = FxHashMap<&'v str, (&'v Value, &'v Value)>;

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
            labels: agent_labels(s, links, |v| &v.links, &opts.teams),
            seams: FxHashMap::default(),
            forks: FxHashMap::default(),
            main_nodes: FxHashSet::default(),
            in_rewound: 0,
            holds: None,
            tasks: TaskTracker::new(),
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
            let b = branch(a, leaf, self.opts.bridge);
            let mut wanted = rendered_lines(&a.dag, &b.nodes);
            wanted.extend(v.titles.iter().flatten().copied());
            // Seam records are read for the note, whatever their type.
            wanted.extend(b.seams.iter().map(|s| a.dag.line(s.node)));
            let values = read_lines(path, &wanted, self.opts.mmap)?;
            self.title = title(&values, &v.titles);
            self.note_seams(Source::Main, &b.seams);
            self.main_nodes = b.nodes.iter().copied().collect();
            if self.opts.all_branches {
                self.note_forks(&b.nodes);
            }
            self.branch(Source::Main, &b.nodes, &values, 0)?;
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
        if f.seams > 0 {
            let _ = writeln!(
                head,
                "- **History:** bridged across {} where the record chain breaks (each marked below)",
                plural(f.seams, "seam")
            );
        }
        if f.rewound > 0 {
            let _ = writeln!(
                head,
                "- **Rewound branches:** {} (folded where they fork)",
                thousands(f.rewound)
            );
        }
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
        if let Some(list) = self.tasks.current() {
            head.push_str(&task_section(&list));
        }
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
                            results.entry(id).or_insert((b, *v));
                        }
                    }
                    _ => {}
                }
            }
        }
        self.role = None;
        let main = src == Source::Main;
        for &n in nodes {
            let line = dag.line(n);
            if let Some(seam) = self.seams.get(&(src, n)).copied() {
                self.seam_note(&a.dag, &seam, values.get(&line));
            }
            if let Some(v) = values.get(&line) {
                self.note_facts(v, depth);
                if main && depth == 0 && self.in_rewound == 0 {
                    self.tasks.record(v);
                }
                match str_at(v, "type") {
                    Some("user") => self.user(v, &uses, depth),
                    Some("assistant") => self.assistant(src, n, v, &results, depth)?,
                    Some("system") => self.system(v),
                    Some("attachment") => self.attachment(v, depth),
                    _ => {}
                }
            }
            if main && let Some(roots) = self.forks.remove(&n) {
                for r in roots {
                    self.rewound(r, depth)?;
                }
            }
        }
        self.role = None;
        Ok(())
    }
}

pub(super) fn plural(n: u64, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{} {what}s", thousands(n))
    }
}

/// The lines to parse for a branch: every record but `progress` and unknown types, which are
/// never rendered (and `progress` lines can be megabytes).
pub(super) fn rendered_lines(dag: &Dag, nodes: &[NodeId]) -> FxHashSet<u64> {
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
