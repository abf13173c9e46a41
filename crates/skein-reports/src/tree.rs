//! The `skein tree` report: a session's graph, drawn in the terminal or listed node by node.
//! Also home of the subagent linking that `skein show` and `skein check` share
//! ([`LinkVisitor`], [`link_session`]).
//!
//! Drawing rules (documented in `docs/reports/tree.md`):
//! * every transcript's nodes are drawn from its roots in file order; a compaction boundary
//!   whose `logicalParentUuid` names a node of the file is drawn as a child of that node;
//! * along a chain, the child on the active branch (else the last child in file order)
//!   continues at the same indentation; other children, subagents spawned by the node and
//!   inline sidechains linked to it are drawn first as indented side branches;
//! * subagent transcripts hang under the record holding their spawning `tool_use`; agents
//!   that cannot be linked are drawn after the main transcript.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;
use serde::de::IgnoredAny;
use serde_json::Value;
use skein_analysis::{Analysis, RecordVisitor};
use skein_core::{Content, Envelope, Line};
use skein_graph::{Dag, NodeId, Parent};
use skein_sessions::SpawnLinks;

use crate::session::LoadedSession;
use crate::show::text::{PREVIEW_CHARS, Preview, parse_line, preview};

/// Which transcript of a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Source {
    Main,
    /// Index into [`LoadedSession::agents`].
    Agent(usize),
}

/// A `Task`/`Agent` call's input, as far as linking and display need it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SpawnInput {
    pub tool_use_id: String,
    pub prompt: Option<String>,
    pub subagent_type: Option<String>,
    pub description: Option<String>,
}

/// What subagent linking needs from a transcript, collected while it is read.
#[derive(Debug, Default)]
pub struct LinkVisitor {
    /// Spawning calls and the agent ids their results name.
    pub spawn_links: SpawnLinks,
    /// Every `tool_use` id → the node holding it (first record).
    pub tool_nodes: FxHashMap<Box<str>, NodeId>,
    /// `Task`/`Agent` inputs in file order.
    pub spawn_inputs: Vec<SpawnInput>,
    /// Parentless `isSidechain` user records (node and prompt text), in file order: the
    /// start of every agent file, and old inline sidechains in a main file.
    pub sidechain_roots: Vec<(NodeId, Option<String>)>,
}

impl LinkVisitor {
    /// The prompt the transcript starts with (its first parentless sidechain user record).
    pub fn first_prompt(&self) -> Option<&str> {
        self.sidechain_roots.first().and_then(|(_, p)| p.as_deref())
    }
}

fn spawn_inputs(text: &[u8], out: &mut Vec<SpawnInput>) {
    let Some(v) = parse_line(text) else { return };
    let Some(blocks) = v.pointer("/message/content").and_then(Value::as_array) else {
        return;
    };
    for b in blocks {
        let name = b.get("name").and_then(Value::as_str);
        if b.get("type").and_then(Value::as_str) != Some("tool_use")
            || !matches!(name, Some("Task" | "Agent"))
        {
            continue;
        }
        let Some(id) = b.get("id").and_then(Value::as_str) else {
            continue;
        };
        let field = |k: &str| {
            b.get("input")
                .and_then(|i| i.get(k))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        out.push(SpawnInput {
            tool_use_id: id.to_owned(),
            prompt: field("prompt"),
            subagent_type: field("subagent_type"),
            description: field("description"),
        });
    }
}

impl RecordVisitor<IgnoredAny> for LinkVisitor {
    fn record(&mut self, line: &Line<'_>, env: &Envelope<'_>, node: Option<(NodeId, bool)>) {
        self.spawn_links.record(line, env, node);
        let Some((id, true)) = node else { return };
        let Some(message) = env.message.0.as_ref() else {
            return;
        };
        match env.kind.get() {
            Some("assistant") => {
                let mut spawns = false;
                for b in message.content.blocks() {
                    if !matches!(b.kind(), Some("tool_use" | "server_tool_use")) {
                        continue;
                    }
                    if let Some(tid) = b.id.get() {
                        self.tool_nodes.entry(tid.into()).or_insert(id);
                        spawns |= matches!(b.name.get(), Some("Task" | "Agent"));
                    }
                }
                if spawns {
                    spawn_inputs(line.text, &mut self.spawn_inputs);
                }
            }
            Some("user") if env.is_sidechain.0 && env.parent_uuid.get().is_none() => {
                let prompt = match &message.content {
                    Content::Text(t) => t.get().map(str::to_owned),
                    Content::Blocks(b) => b
                        .iter()
                        .find(|b| b.kind() == Some("text"))
                        .and_then(|b| b.text.get())
                        .map(str::to_owned),
                    Content::None => None,
                };
                self.sidechain_roots.push((id, prompt));
            }
            _ => {}
        }
    }
}

/// How an agent was linked to its spawning call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkKey {
    /// The `.meta.json` `toolUseId`, or the main transcript's result naming the agent.
    MetaOrResult,
    /// A result in another agent's transcript naming the agent (nested agents).
    NestedResult,
    /// The agent's first prompt equals a `Task`/`Agent` call's `input.prompt`.
    Prompt,
}

/// Where a subagent transcript hangs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentLink {
    /// The spawning call's `tool_use` id, when any key named one.
    pub tool_use_id: Option<String>,
    /// The record holding that call, when found in the session.
    pub at: Option<(Source, NodeId)>,
    pub key: Option<LinkKey>,
}

/// Something drawn (or rendered) under a record besides its children.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hung {
    /// A subagent transcript ([`LoadedSession::agents`] index).
    Agent(usize),
    /// An inline sidechain of the main transcript, by its root node.
    Inline(NodeId),
}

/// The subagent links of a session.
#[derive(Debug, Default)]
pub struct SessionLinks {
    /// One per [`LoadedSession::agents`] entry.
    pub agents: Vec<AgentLink>,
    /// Inline sidechain roots of the main transcript with the call they were linked to
    /// (`tool_use` id and its record), by prompt.
    pub inline: Vec<(NodeId, Option<(String, NodeId)>)>,
    hung: BTreeMap<(Source, NodeId), Vec<Hung>>,
}

impl SessionLinks {
    /// What hangs under a record, agents first (in agent order), then inline sidechains.
    pub fn hung_at(&self, src: Source, node: NodeId) -> &[Hung] {
        self.hung.get(&(src, node)).map_or(&[], Vec::as_slice)
    }

    /// The `tool_use` id an inline sidechain root was linked to.
    pub fn inline_tool_use(&self, root: NodeId) -> Option<&str> {
        self.inline
            .iter()
            .find(|(r, _)| *r == root)
            .and_then(|(_, l)| l.as_ref())
            .map(|(id, _)| id.as_str())
    }

    /// Whether an inline sidechain root is linked (drawn under its call, not as a root).
    pub fn inline_linked(&self, root: NodeId) -> bool {
        self.inline_tool_use(root).is_some()
    }
}

/// Links every subagent transcript (and every inline sidechain of the main transcript) of a
/// session to the record holding its spawning call. Keys, strongest first: the agent's
/// `.meta.json` `toolUseId` or a main-transcript result naming the agent (as
/// [`crate::load_session`] found them); a result in another agent transcript naming it
/// (nested agents); its first prompt equal to a `Task`/`Agent` call's `input.prompt`.
/// Internal agents (`acompact-`, …) replay the parent context and are never linked.
pub fn link_session<V>(
    s: &LoadedSession<V>,
    links_of: impl Fn(&V) -> &LinkVisitor,
) -> SessionLinks {
    let main = s.main.as_ref().map(|(_, v)| links_of(v));
    let agents: Vec<&LinkVisitor> = s.agents.iter().map(|a| links_of(&a.visitor)).collect();
    let sources = || {
        main.map(|m| (Source::Main, m)).into_iter().chain(
            agents
                .iter()
                .enumerate()
                .map(|(i, l)| (Source::Agent(i), *l)),
        )
    };
    let locate = |id: &str, not: Option<usize>| -> Option<(Source, NodeId)> {
        sources()
            .filter(|(src, _)| Some(*src) != not.map(Source::Agent))
            .find_map(|(src, l)| l.tool_nodes.get(id).map(|&n| (src, n)))
    };
    let by_prompt = |prompt: &str, not: Option<usize>| -> Option<String> {
        sources()
            .filter(|(src, _)| Some(*src) != not.map(Source::Agent))
            .flat_map(|(_, l)| l.spawn_inputs.iter())
            .find(|sp| {
                sp.prompt
                    .as_deref()
                    .is_some_and(|p| p.trim() == prompt.trim())
            })
            .map(|sp| sp.tool_use_id.clone())
    };
    let mut out = SessionLinks::default();
    for (i, a) in s.agents.iter().enumerate() {
        if a.file.internal {
            out.agents.push(AgentLink {
                tool_use_id: None,
                at: None,
                key: None,
            });
            continue;
        }
        let mut candidates: Vec<(String, LinkKey)> = Vec::new();
        if let Some(id) = &a.spawned_by {
            candidates.push((id.clone(), LinkKey::MetaOrResult));
        }
        for (j, l) in agents.iter().enumerate() {
            if j != i
                && let Some(id) = l.spawn_links.spawner_of(&a.file.agent_id, None)
            {
                candidates.push((id, LinkKey::NestedResult));
                break;
            }
        }
        if let Some(id) = agents[i].first_prompt().and_then(|p| by_prompt(p, Some(i))) {
            candidates.push((id, LinkKey::Prompt));
        }
        let found = candidates
            .iter()
            .find_map(|(id, key)| locate(id, Some(i)).map(|at| (id.clone(), at, *key)));
        let link = match found {
            Some((id, at, key)) => AgentLink {
                tool_use_id: Some(id),
                at: Some(at),
                key: Some(key),
            },
            None => AgentLink {
                tool_use_id: candidates.first().map(|(id, _)| id.clone()),
                at: None,
                key: None,
            },
        };
        if let Some(at) = link.at {
            out.hung.entry(at).or_default().push(Hung::Agent(i));
        }
        out.agents.push(link);
    }
    if let Some(m) = main {
        for (root, prompt) in &m.sidechain_roots {
            let linked = prompt
                .as_deref()
                .and_then(|p| by_prompt(p, None))
                .and_then(|id| match m.tool_nodes.get(id.as_str()) {
                    Some(&n) if n != *root => Some((id, n)),
                    _ => None,
                });
            if let Some((_, n)) = &linked {
                out.hung
                    .entry((Source::Main, *n))
                    .or_default()
                    .push(Hung::Inline(*root));
            }
            out.inline.push((*root, linked));
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// The tree

/// What `skein tree` keeps about each node.
#[derive(Debug, Clone, Default)]
pub struct NodeInfo {
    pub kind: Box<str>,
    /// The raw `parentUuid` string.
    pub parent: Option<Box<str>>,
    pub logical_parent: Option<Box<str>>,
    pub subtype: Option<Box<str>>,
    pub preview: Box<str>,
    /// For tool results: the `tool_use_id` of the first `tool_result` block.
    pub result_of: Option<Box<str>>,
    pub timestamp: Option<Box<str>>,
    pub meta: bool,
}

/// The record visitor of `skein tree`: links plus one [`NodeInfo`] per node.
#[derive(Debug, Default)]
pub struct TreeVisitor {
    pub links: LinkVisitor,
    /// Indexed by `NodeId`.
    pub nodes: Vec<NodeInfo>,
}

impl RecordVisitor<IgnoredAny> for TreeVisitor {
    fn record(&mut self, line: &Line<'_>, env: &Envelope<'_>, node: Option<(NodeId, bool)>) {
        self.links.record(line, env, node);
        let Some((id, true)) = node else { return };
        let progress = || {
            (env.kind.get() == Some("progress"))
                .then(|| progress_preview(line.text))
                .flatten()
        };
        let p = progress().unwrap_or_else(|| {
            parse_line(line.text).map_or_else(
                || Preview {
                    text: "(unreadable record)".into(),
                    ..Preview::default()
                },
                |v| preview(&v),
            )
        });
        let boxed = |s: Option<&str>| s.map(Box::<str>::from);
        let info = NodeInfo {
            kind: env.kind.get().unwrap_or("<none>").into(),
            parent: boxed(env.parent_uuid.get()),
            logical_parent: boxed(env.logical_parent_uuid.get()),
            subtype: p.subtype.map(Into::into),
            preview: p.text.into(),
            result_of: p.result_of.map(Into::into),
            timestamp: boxed(env.timestamp.get()),
            meta: env.is_meta.0,
        };
        let i = id.0 as usize;
        if self.nodes.len() <= i {
            self.nodes.resize(i + 1, NodeInfo::default());
        }
        self.nodes[i] = info;
    }
}

/// The fields of a `progress` record a preview shows; everything else (`normalizedMessages`
/// can be megabytes) is skipped without being built.
#[derive(serde::Deserialize)]
struct ProgressRecord<'a> {
    #[serde(borrow)]
    data: Option<ProgressData<'a>>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct ProgressData<'a> {
    #[serde(rename = "type", borrow)]
    kind: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    hook_event: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    hook_name: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    agent_id: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    output: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    prompt: Option<std::borrow::Cow<'a, str>>,
}

/// The preview of a `progress` record, like [`preview`] gives it; `None` when a field has an
/// unexpected shape (the caller falls back to [`preview`]).
fn progress_preview(text: &[u8]) -> Option<Preview> {
    let r: ProgressRecord<'_> = serde_json::from_slice(text).ok()?;
    let Some(d) = r.data else {
        return Some(Preview::default());
    };
    let parts: Vec<&str> = [
        &d.hook_event,
        &d.hook_name,
        &d.agent_id,
        &d.output,
        &d.prompt,
    ]
    .into_iter()
    .filter_map(|f| f.as_deref())
    .take(2)
    .map(|s| match s.char_indices().nth(PREVIEW_CHARS * 4) {
        Some((i, _)) => &s[..i],
        None => s,
    })
    .collect();
    Some(Preview {
        subtype: d.kind.map(std::borrow::Cow::into_owned),
        text: crate::tools::clip(&parts.join(" "), PREVIEW_CHARS),
        result_of: None,
    })
}

/// How the drawing is capped.
#[derive(Debug, Clone, Copy, Default)]
pub struct TreeOptions {
    /// Side branches and subagents nested deeper than this are drawn as one `… N nodes` line.
    pub max_depth: Option<usize>,
    /// Linear runs of more than this many nodes (no forks, subagents, compaction boundaries
    /// or user prompts) are drawn as their first and last node around a `┆ … N nodes` line.
    pub collapse: Option<usize>,
    /// Draw internal agents (`acompact-`, …) in full instead of one line.
    pub internal: bool,
}

/// One node of the node list (`skein tree --format jsonl`), in drawing order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TreeNode {
    pub session_id: String,
    /// The transcript file holding the record.
    pub file: String,
    /// `None` in the main transcript.
    pub agent_id: Option<String>,
    /// The transcript is an internal agent's (`acompact-`, `aprompt_suggestion-`,
    /// `aside_question-`).
    pub internal: bool,
    pub line: u64,
    pub uuid: String,
    /// The record's `parentUuid`.
    pub parent: Option<String>,
    /// `parent` names no record of the file.
    pub dangling: bool,
    /// `logicalParentUuid` (compaction boundaries).
    pub logical_parent: Option<String>,
    #[serde(rename = "type")]
    pub kind: String,
    pub subtype: Option<String>,
    pub timestamp: Option<String>,
    /// On the file's active branch (followed across compaction boundaries).
    pub active: bool,
    pub sidechain: bool,
    pub meta: bool,
    /// Nesting level in the drawing: 0 for the main line, +1 per side branch or subagent.
    pub depth: usize,
    /// Records naming this one as parent.
    pub children: usize,
    /// For a node drawn under a record that is not its parent: that record's uuid (an agent
    /// transcript's roots under the spawning call, a compaction boundary under its logical
    /// parent, an inline sidechain under its call).
    pub attached_to: Option<String>,
    /// In agent transcripts: the spawning call's `tool_use` id, when known.
    pub spawned_by: Option<String>,
    pub preview: String,
}

/// Per transcript: the pieces the traversal needs.
struct FileView<'a> {
    analysis: &'a Analysis,
    info: &'a [NodeInfo],
    active: FxHashSet<NodeId>,
    /// Compaction boundaries drawn under their logical parent: parent → boundaries.
    boundaries: FxHashMap<NodeId, Vec<NodeId>>,
    attached: FxHashSet<NodeId>,
    /// Nodes in each node's drawing subtree (itself included).
    weight: Vec<u32>,
}

impl<'a> FileView<'a> {
    fn new(analysis: &'a Analysis, info: &'a [NodeInfo]) -> Self {
        let dag = &analysis.dag;
        let active = dag
            .active_leaf()
            .map(|l| dag.history_to_root(l).into_iter().collect())
            .unwrap_or_default();
        let mut boundaries: FxHashMap<NodeId, Vec<NodeId>> = FxHashMap::default();
        let mut attached = FxHashSet::default();
        for n in dag.nodes() {
            if dag.is_compact_boundary(n)
                && dag.parent_node(n).is_none()
                && let Some(lp) = dag.logical_parent(n)
                && lp != n
            {
                boundaries.entry(lp).or_default().push(n);
                attached.insert(n);
            }
        }
        let mut view = Self {
            analysis,
            info,
            active,
            boundaries,
            attached,
            weight: Vec::new(),
        };
        view.weight = view.weights();
        view
    }

    /// Subtree sizes, by an iterative post-order walk from every drawing root.
    fn weights(&self) -> Vec<u32> {
        let dag = self.dag();
        let mut weight = vec![1u32; dag.len()];
        let mut state = vec![0u8; dag.len()];
        let mut stack: Vec<(NodeId, bool)> = Vec::new();
        let roots = dag
            .nodes()
            .filter(|&n| dag.parent_node(n).is_none() && !self.attached.contains(&n));
        for root in roots {
            stack.push((root, false));
            while let Some((v, done)) = stack.pop() {
                let i = v.0 as usize;
                if done {
                    let sum: u32 = self
                        .kids(v)
                        .iter()
                        .filter(|k| state[k.0 as usize] == 2)
                        .map(|k| weight[k.0 as usize])
                        .fold(0u32, u32::saturating_add);
                    weight[i] = sum.saturating_add(1);
                    state[i] = 2;
                    continue;
                }
                if state[i] != 0 {
                    continue;
                }
                state[i] = 1;
                stack.push((v, true));
                for k in self.kids(v) {
                    if state[k.0 as usize] == 0 {
                        stack.push((k, false));
                    }
                }
            }
        }
        weight
    }

    fn dag(&self) -> &Dag {
        &self.analysis.dag
    }

    /// Children for drawing: graph children plus attached compaction boundaries, by line.
    fn kids(&self, n: NodeId) -> Vec<NodeId> {
        let mut out: Vec<NodeId> = self
            .dag()
            .children(n)
            .iter()
            .copied()
            .filter(|&c| c != n)
            .collect();
        if let Some(b) = self.boundaries.get(&n) {
            out.extend(b.iter().copied());
            out.sort_by_key(|&c| self.dag().line(c));
        }
        out
    }

    fn info(&self, n: NodeId) -> Option<&NodeInfo> {
        self.info.get(n.0 as usize)
    }

    fn is_prompt(&self, n: NodeId) -> bool {
        self.info(n)
            .is_some_and(|i| &*i.kind == "user" && i.subtype.as_deref() == Some("prompt"))
    }
}

/// One line of the drawing (or one node of the list).
#[derive(Debug, Clone)]
enum What {
    Node { src: Source, node: NodeId },
    Agent(usize, bool),
    More(u64),
    Run(u64),
    Title(String),
}

#[derive(Debug, Clone)]
struct Entry {
    prefix: String,
    depth: usize,
    what: What,
}

/// A side branch of a node: a subagent, or a chain starting at a node.
#[derive(Debug, Clone, Copy)]
enum Side {
    Agent(usize),
    Chain(Source, NodeId),
}

enum Task {
    Chain {
        src: Source,
        node: NodeId,
        first: String,
        rest: String,
        depth: usize,
    },
    Agent {
        i: usize,
        first: String,
        rest: String,
        depth: usize,
    },
    /// A line emitted as is (a `… N nodes` cap).
    Line(Entry),
}

struct Walker<'a, V> {
    s: &'a LoadedSession<V>,
    links: &'a SessionLinks,
    files: FxHashMap<Source, FileView<'a>>,
    options: TreeOptions,
    visited: FxHashSet<(Source, NodeId)>,
    drawn_agents: FxHashSet<usize>,
    expanded: Vec<Source>,
    out: Vec<Entry>,
}

impl<'a, V> Walker<'a, V> {
    fn file(&self, src: Source) -> Option<&FileView<'a>> {
        self.files.get(&src)
    }

    /// Nodes below a side item (for `… N nodes`), subagents included; marks them drawn.
    fn take_subtree(&mut self, src: Source, node: NodeId) -> u64 {
        let mut stack = vec![(src, node)];
        let mut n = 0;
        while let Some((s, c)) = stack.pop() {
            if !self.visited.insert((s, c)) {
                continue;
            }
            n += 1;
            let Some(f) = self.file(s) else { continue };
            stack.extend(f.kids(c).into_iter().map(|k| (s, k)));
            for h in self.links.hung_at(s, c) {
                match *h {
                    Hung::Agent(i) => n += self.take_agent(i),
                    Hung::Inline(r) => stack.push((Source::Main, r)),
                }
            }
        }
        n
    }

    fn take_agent(&mut self, i: usize) -> u64 {
        if !self.drawn_agents.insert(i) {
            return 0;
        }
        let src = Source::Agent(i);
        let mut n = 0;
        for r in self.roots(src) {
            n += self.take_subtree(src, r);
        }
        // records only reachable through a parent cycle
        for c in self.s.agents[i].analysis.dag.nodes() {
            n += u64::from(self.visited.insert((src, c)));
        }
        n
    }

    fn roots(&self, src: Source) -> Vec<NodeId> {
        let Some(f) = self.file(src) else {
            return Vec::new();
        };
        let dag = f.dag();
        dag.nodes()
            .filter(|&n| !matches!(dag.parent(n), Parent::Node(_)))
            .filter(|n| !f.attached.contains(n))
            .filter(|&n| !(src == Source::Main && self.links.inline_linked(n)))
            .collect()
    }

    fn run(&mut self, stack: &mut Vec<Task>) {
        while let Some(task) = stack.pop() {
            match task {
                Task::Line(e) => self.out.push(e),
                Task::Agent {
                    i,
                    first,
                    rest,
                    depth,
                } => {
                    if !self.drawn_agents.insert(i) {
                        continue;
                    }
                    let internal = self.s.agents[i].file.internal;
                    let expand = !internal || self.options.internal;
                    self.out.push(Entry {
                        prefix: first,
                        depth,
                        what: What::Agent(i, expand),
                    });
                    if !expand {
                        continue;
                    }
                    let src = Source::Agent(i);
                    self.expanded.push(src);
                    for r in self.roots(src).into_iter().rev() {
                        stack.push(Task::Chain {
                            src,
                            node: r,
                            first: rest.clone(),
                            rest: rest.clone(),
                            depth,
                        });
                    }
                }
                Task::Chain {
                    src,
                    node,
                    first,
                    rest,
                    depth,
                } => self.chain(stack, src, node, first, &rest, depth),
            }
        }
    }

    fn chain(
        &mut self,
        stack: &mut Vec<Task>,
        src: Source,
        node: NodeId,
        first: String,
        rest: &str,
        depth: usize,
    ) {
        let mut cur = node;
        let mut prefix = first;
        let mut run_start = 0usize;
        let mut run_len = 0usize;
        loop {
            if !self.visited.insert((src, cur)) {
                break;
            }
            let Some(f) = self.file(src) else { break };
            let kids: Vec<NodeId> = f
                .kids(cur)
                .into_iter()
                .filter(|k| !self.visited.contains(&(src, *k)))
                .collect();
            let hung = self.links.hung_at(src, cur);
            // The active child continues the line; else the heaviest (the last among equals),
            // so that side branches stay short and indentation shallow.
            let cont = kids
                .iter()
                .copied()
                .find(|k| f.active.contains(k))
                .or_else(|| {
                    kids.iter()
                        .copied()
                        .rev()
                        .max_by_key(|k| f.weight[k.0 as usize])
                });
            let plain = hung.is_empty()
                && kids.len() == 1
                && !f.dag().is_compact_boundary(cur)
                && !f.is_prompt(cur)
                && matches!(f.dag().parent(cur), Parent::Node(_));
            let mut sides: Vec<Side> = hung
                .iter()
                .map(|h| match *h {
                    Hung::Agent(i) => Side::Agent(i),
                    Hung::Inline(r) => Side::Chain(Source::Main, r),
                })
                .collect();
            sides.extend(
                kids.iter()
                    .copied()
                    .filter(|&k| Some(k) != cont)
                    .map(|k| Side::Chain(src, k)),
            );
            if plain {
                if run_len == 0 {
                    run_start = self.out.len();
                }
                run_len += 1;
            } else {
                self.close_run(run_start, run_len, depth, rest);
                run_len = 0;
            }
            self.out.push(Entry {
                prefix: std::mem::replace(&mut prefix, rest.to_owned()),
                depth,
                what: What::Node { src, node: cur },
            });
            if sides.is_empty() {
                match cont {
                    Some(c) => {
                        cur = c;
                        continue;
                    }
                    None => break,
                }
            }
            if let Some(c) = cont {
                stack.push(Task::Chain {
                    src,
                    node: c,
                    first: rest.to_owned(),
                    rest: rest.to_owned(),
                    depth,
                });
            }
            let n = sides.len();
            let too_deep = self.options.max_depth.is_some_and(|m| depth + 1 > m);
            let mut tasks = Vec::with_capacity(n);
            for (k, side) in sides.into_iter().enumerate() {
                let last = cont.is_none() && k + 1 == n;
                let first = format!("{rest}{}", if last { "└─ " } else { "├─ " });
                let next = format!("{rest}{}", if last { "   " } else { "│  " });
                let task = match side {
                    Side::Agent(i) if too_deep => {
                        let count = self.take_agent(i);
                        if count == 0 {
                            continue;
                        }
                        Task::Line(Entry {
                            prefix: first,
                            depth: depth + 1,
                            what: What::More(count),
                        })
                    }
                    Side::Agent(i) => Task::Agent {
                        i,
                        first,
                        rest: next,
                        depth: depth + 1,
                    },
                    Side::Chain(s, node) if too_deep => Task::Line(Entry {
                        prefix: first,
                        depth: depth + 1,
                        what: What::More(self.take_subtree(s, node)),
                    }),
                    Side::Chain(s, node) => Task::Chain {
                        src: s,
                        node,
                        first,
                        rest: next,
                        depth: depth + 1,
                    },
                };
                tasks.push(task);
            }
            stack.extend(tasks.into_iter().rev());
            return;
        }
        self.close_run(run_start, run_len, depth, rest);
    }

    /// Replaces the middle of a long linear run by one `┆ … N nodes` line.
    fn close_run(&mut self, start: usize, len: usize, depth: usize, rest: &str) {
        let Some(max) = self.options.collapse else {
            return;
        };
        if len <= max.max(2) {
            return;
        }
        let hidden = len - 2;
        self.out.splice(
            start + 1..start + 1 + hidden,
            std::iter::once(Entry {
                prefix: rest.to_owned(),
                depth,
                what: What::Run(hidden as u64),
            }),
        );
    }

    /// Whether agent `i`'s attachment chain reaches the main transcript.
    fn reaches_main(&self, i: usize) -> bool {
        let mut cur = i;
        for _ in 0..=self.s.agents.len() {
            match self.links.agents[cur].at {
                Some((Source::Main, _)) => return true,
                Some((Source::Agent(j), _)) => cur = j,
                None => return false,
            }
        }
        false
    }
}

/// The traversal: every entry in drawing order.
fn walk(s: &LoadedSession<TreeVisitor>, links: &SessionLinks, options: TreeOptions) -> Vec<Entry> {
    let mut files = FxHashMap::default();
    if let Some((a, v)) = &s.main {
        files.insert(Source::Main, FileView::new(a, &v.nodes));
    }
    for (i, a) in s.agents.iter().enumerate() {
        files.insert(
            Source::Agent(i),
            FileView::new(&a.analysis, &a.visitor.nodes),
        );
    }
    let mut w = Walker {
        s,
        links,
        files,
        options,
        visited: FxHashSet::default(),
        drawn_agents: FxHashSet::default(),
        expanded: Vec::new(),
        out: Vec::new(),
    };
    let mut stack = Vec::new();
    if s.main.is_some() {
        w.expanded.push(Source::Main);
        for r in w.roots(Source::Main).into_iter().rev() {
            stack.push(Task::Chain {
                src: Source::Main,
                node: r,
                first: String::new(),
                rest: String::new(),
                depth: 0,
            });
        }
        w.run(&mut stack);
    }
    let mut titled = false;
    for pass in 0..2 {
        for i in 0..s.agents.len() {
            if w.drawn_agents.contains(&i) || (pass == 0 && w.reaches_main(i)) {
                continue;
            }
            if s.main.is_some() && !titled {
                w.out.push(Entry {
                    prefix: String::new(),
                    depth: 0,
                    what: What::Title("subagents not hung under a call".into()),
                });
                titled = true;
            }
            stack.push(Task::Agent {
                i,
                first: String::new(),
                rest: String::new(),
                depth: 0,
            });
            w.run(&mut stack);
        }
    }
    // Records only reachable through a parent cycle.
    let mut k = 0;
    while k < w.expanded.len() {
        let src = w.expanded[k];
        k += 1;
        let Some(f) = w.file(src) else { continue };
        let left: Vec<NodeId> = f
            .dag()
            .nodes()
            .filter(|&n| !w.visited.contains(&(src, n)))
            .collect();
        let mut titled = false;
        for n in left {
            if w.visited.contains(&(src, n)) {
                continue;
            }
            if !titled {
                w.out.push(Entry {
                    prefix: String::new(),
                    depth: 0,
                    what: What::Title("records in a parent cycle".into()),
                });
                titled = true;
            }
            stack.push(Task::Chain {
                src,
                node: n,
                first: String::new(),
                rest: String::new(),
                depth: 0,
            });
            w.run(&mut stack);
        }
    }
    w.out
}

fn nodes(n: u64) -> String {
    if n == 1 {
        "1 node".to_owned()
    } else {
        format!("{n} nodes")
    }
}

fn short(id: &str) -> &str {
    match id.char_indices().nth(8) {
        Some((i, _)) => &id[..i],
        None => id,
    }
}

struct Ctx<'a> {
    s: &'a LoadedSession<TreeVisitor>,
    links: &'a SessionLinks,
}

impl Ctx<'_> {
    fn analysis(&self, src: Source) -> Option<&Analysis> {
        match src {
            Source::Main => self.s.main.as_ref().map(|(a, _)| a),
            Source::Agent(i) => self.s.agents.get(i).map(|a| &a.analysis),
        }
    }

    fn infos(&self, src: Source) -> &[NodeInfo] {
        match src {
            Source::Main => self
                .s
                .main
                .as_ref()
                .map_or(&[], |(_, v)| v.nodes.as_slice()),
            Source::Agent(i) => self
                .s
                .agents
                .get(i)
                .map_or(&[], |a| a.visitor.nodes.as_slice()),
        }
    }

    fn file_name(&self, src: Source) -> String {
        match src {
            Source::Main => self
                .s
                .files
                .main
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            Source::Agent(i) => self.s.agents[i].file.path.display().to_string(),
        }
    }

    /// The uuid of the record a node is drawn under when that is not its parent.
    fn attached_to(&self, src: Source, n: NodeId) -> Option<String> {
        let a = self.analysis(src)?;
        let dag = &a.dag;
        if dag.parent_node(n).is_some() {
            return None;
        }
        if dag.is_compact_boundary(n)
            && let Some(lp) = dag.logical_parent(n)
        {
            return Some(dag.uuid(lp).to_owned());
        }
        let at = match src {
            Source::Main => self
                .links
                .inline
                .iter()
                .find(|(r, _)| *r == n)
                .and_then(|(_, l)| l.as_ref())
                .map(|(_, call)| (Source::Main, *call)),
            Source::Agent(i) => self.links.agents[i].at,
        }?;
        let host = self.analysis(at.0)?;
        Some(host.dag.uuid(at.1).to_owned())
    }

    fn node(&self, src: Source, n: NodeId, depth: usize, active: bool) -> TreeNode {
        let a = self.analysis(src).expect("drawn sources are loaded");
        let dag = &a.dag;
        let info = self
            .infos(src)
            .get(n.0 as usize)
            .cloned()
            .unwrap_or_default();
        let (agent_id, internal, spawned_by) = match src {
            Source::Main => (None, false, None),
            Source::Agent(i) => (
                Some(self.s.agents[i].file.agent_id.clone()),
                self.s.agents[i].file.internal,
                self.links.agents[i].tool_use_id.clone(),
            ),
        };
        let mut preview = info.preview.to_string();
        if let Some(id) = &info.result_of
            && let Some(name) = a.tools.use_for(id).and_then(|u| u.name.as_deref())
        {
            preview = format!("{name} → {preview}");
        }
        TreeNode {
            session_id: self.s.files.session_id.clone(),
            file: self.file_name(src),
            agent_id,
            internal,
            line: dag.line(n),
            uuid: dag.uuid(n).to_owned(),
            parent: info.parent.map(Into::into),
            dangling: dag.parent(n) == Parent::Dangling,
            logical_parent: info.logical_parent.map(Into::into),
            kind: info.kind.to_string(),
            subtype: info.subtype.map(Into::into),
            timestamp: info.timestamp.map(Into::into),
            active,
            sidechain: dag.is_sidechain(n),
            meta: info.meta,
            depth,
            children: dag.children(n).len(),
            attached_to: self.attached_to(src, n),
            spawned_by,
            preview,
        }
    }
}

/// The active branch of every transcript of the session (followed across compaction
/// boundaries).
fn active_sets(ctx: &Ctx<'_>) -> FxHashMap<Source, FxHashSet<NodeId>> {
    let mut out = FxHashMap::default();
    let sources = ctx
        .s
        .main
        .iter()
        .map(|_| Source::Main)
        .chain((0..ctx.s.agents.len()).map(Source::Agent));
    for src in sources {
        if let Some(a) = ctx.analysis(src) {
            let set = a
                .dag
                .active_leaf()
                .map(|l| a.dag.history_to_root(l).into_iter().collect())
                .unwrap_or_default();
            out.insert(src, set);
        }
    }
    out
}

/// The node list of `skein tree --format jsonl`: every node of every transcript of the
/// session, in drawing order (no caps apply; internal agents included).
pub fn tree_nodes(s: &LoadedSession<TreeVisitor>, links: &SessionLinks) -> Vec<TreeNode> {
    let ctx = Ctx { s, links };
    let active = active_sets(&ctx);
    let options = TreeOptions {
        internal: true,
        ..TreeOptions::default()
    };
    walk(s, links, options)
        .into_iter()
        .filter_map(|e| match e.what {
            What::Node { src, node } => {
                let on = active.get(&src).is_some_and(|a| a.contains(&node));
                Some(ctx.node(src, node, e.depth, on))
            }
            _ => None,
        })
        .collect()
}

impl Ctx<'_> {
    /// The input of the call that spawned agent `i`, when it was read.
    fn spawn_input(&self, i: usize) -> Option<&SpawnInput> {
        let id = self.links.agents[i].tool_use_id.as_deref()?;
        self.s
            .main
            .iter()
            .map(|(_, v)| v)
            .chain(self.s.agents.iter().map(|a| &a.visitor))
            .flat_map(|v| v.links.spawn_inputs.iter())
            .find(|sp| sp.tool_use_id == id)
    }
}

fn agent_header(ctx: &Ctx<'_>, i: usize, expanded: bool) -> String {
    let a = &ctx.s.agents[i];
    let link = &ctx.links.agents[i];
    let spawn = ctx.spawn_input(i);
    let meta = a.file.meta.as_ref();
    let mut parts = vec![format!("agent {}", a.file.agent_id)];
    if let Some(t) = meta
        .and_then(|m| m.agent_type.as_deref())
        .or_else(|| spawn.and_then(|sp| sp.subagent_type.as_deref()))
    {
        parts.push(t.to_owned());
    }
    if let Some(d) = meta
        .and_then(|m| m.description.as_deref())
        .or_else(|| spawn.and_then(|sp| sp.description.as_deref()))
    {
        parts.push(format!("\"{}\"", crate::tools::clip(d, 60)));
    }
    parts.push(nodes(a.analysis.dag.len() as u64));
    if a.file.internal {
        parts.push("internal: replays the parent context".into());
        if !expanded {
            parts.push("--internal to draw".into());
        }
    } else if link.at.is_none() {
        match &link.tool_use_id {
            Some(id) => parts.push(format!("unlinked: call {id} not found")),
            None => parts.push("unlinked".into()),
        }
    }
    if a.file.legacy {
        parts.push("legacy file".into());
    }
    let marker = if a.file.internal { '◇' } else { '◆' };
    format!("{marker} {}", parts.join(" · "))
}

fn node_line(row: &TreeNode, a: &Analysis, n: NodeId) -> String {
    let dag = &a.dag;
    let mut line = String::new();
    line.push(if row.active { '*' } else { '·' });
    line.push(' ');
    line.push_str(short(&row.uuid));
    line.push_str("  ");
    line.push_str(&row.kind);
    if let Some(sub) = &row.subtype {
        line.push('/');
        line.push_str(sub);
    }
    let mut notes: Vec<String> = Vec::new();
    if row.dangling {
        notes.push(format!(
            "parent {} missing",
            short(row.parent.as_deref().unwrap_or("?"))
        ));
    }
    if let Some(lp) = &row.logical_parent {
        let found = dag.logical_parent(n).is_some();
        notes.push(if found {
            format!("continues {}", short(lp))
        } else {
            format!("continues {} (not in file)", short(lp))
        });
    }
    if row.sidechain && row.agent_id.is_none() {
        notes.push("sidechain".into());
    }
    if row.meta && row.subtype.as_deref() != Some("meta") {
        notes.push("meta".into());
    }
    if !notes.is_empty() {
        let _ = write!(line, "  [{}]", notes.join(", "));
    }
    if !row.preview.is_empty() {
        line.push_str("  ");
        line.push_str(&row.preview);
    }
    line
}

/// The drawing of `skein tree` (the table format): a header, then one line per node.
pub fn draw_tree(
    s: &LoadedSession<TreeVisitor>,
    links: &SessionLinks,
    options: TreeOptions,
) -> String {
    let ctx = Ctx { s, links };
    let active = active_sets(&ctx);
    let mut out = String::new();
    let _ = writeln!(out, "session {}", s.files.session_id);
    match &s.files.main {
        Some(p) => {
            let _ = writeln!(out, "{}", p.display());
        }
        None => out.push_str("(no main transcript)\n"),
    }
    if let Some((a, _)) = &s.main {
        let sum = a.dag.summary();
        let leaf = a
            .dag
            .active_leaf()
            .map_or_else(|| "-".to_owned(), |l| short(a.dag.uuid(l)).to_owned());
        let _ = writeln!(
            out,
            "nodes {} · branch points {} · compactions {} · subagents {} · active leaf {leaf}",
            sum.nodes,
            sum.branch_points,
            sum.compactions,
            s.agents.len()
        );
    }
    out.push('\n');
    for e in walk(s, links, options) {
        out.push_str(&e.prefix);
        match e.what {
            What::Node { src, node } => {
                let on = active.get(&src).is_some_and(|a| a.contains(&node));
                let row = ctx.node(src, node, e.depth, on);
                let a = ctx.analysis(src).expect("drawn sources are loaded");
                out.push_str(&node_line(&row, a, node));
            }
            What::Agent(i, expanded) => out.push_str(&agent_header(&ctx, i, expanded)),
            What::More(n) => {
                let _ = write!(out, "… {} (--max-depth)", nodes(n));
            }
            What::Run(n) => {
                let _ = write!(out, "┆ … {}", nodes(n));
            }
            What::Title(t) => {
                let _ = write!(out, "── {t} ──");
            }
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_previews_agree_with_the_generic_path() {
        let lines = [
            r#"{"type":"progress","uuid":"p","data":{"type":"hook_progress","hookEvent":"PreToolUse","hookName":"PreToolUse:Bash","command":"x"}}"#,
            r#"{"type":"progress","uuid":"p","data":{"type":"agent_progress","agentId":"a1","prompt":"Find   the\nconfig","normalizedMessages":[{"a":[1,2,{"b":"c"}]}]}}"#,
            r#"{"type":"progress","uuid":"p","data":{"type":"bash_progress","output":"line\n","elapsedTimeSeconds":3}}"#,
            r#"{"type":"progress","uuid":"p"}"#,
        ];
        for l in lines {
            let fast = progress_preview(l.as_bytes()).expect("fast path");
            let slow = preview(&parse_line(l.as_bytes()).expect("json"));
            assert_eq!(fast, slow, "{l}");
        }
        // a non-string field falls back to the generic path
        assert!(
            progress_preview(br#"{"type":"progress","data":{"type":"x","output":7}}"#).is_none()
        );
    }

    #[test]
    fn short_ids_and_counts() {
        assert_eq!(short("0123456789abcdef"), "01234567");
        assert_eq!(short("u1"), "u1");
        assert_eq!(nodes(1), "1 node");
        assert_eq!(nodes(3), "3 nodes");
    }
}
