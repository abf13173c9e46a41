//! Subagent linking, shared by `skein tree`, `skein show` and `skein check`: what a transcript
//! tells about spawning calls ([`LinkVisitor`]) and where each subagent hangs
//! ([`link_session`]).

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;
use serde::Serialize;
use serde::de::IgnoredAny;
use serde_json::Value;
use skein_analysis::RecordVisitor;
use skein_analysis::SpawnLinks;
use skein_core::record::is_spawn_tool;
use skein_core::{Content, Envelope, Line, Message};
use skein_graph::NodeId;

use super::Source;
use crate::agents::{MessageCall, SEND_MESSAGE};
use crate::session::LoadedSession;
use crate::show::text::parse_line;

/// A `Task`/`Agent` call's input, as far as linking and display need it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SpawnInput {
    pub tool_use_id: String,
    pub prompt: Option<String>,
    pub subagent_type: Option<String>,
    pub description: Option<String>,
    /// The agent's name (`Agent` input `name`, recent builds).
    pub name: Option<String>,
    /// The team it joins (`team_name`).
    pub team_name: Option<String>,
    /// `isolation` (`"worktree"`).
    pub isolation: Option<String>,
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
    /// `SendMessage` calls in file order, with what their results said.
    pub messages: Vec<MessageCall>,
    /// The first non-empty `teamName` of the transcript's records.
    pub team_name: Option<String>,
}

impl LinkVisitor {
    /// The prompt the transcript starts with (its first parentless sidechain user record).
    pub fn first_prompt(&self) -> Option<&str> {
        self.sidechain_roots.first().and_then(|(_, p)| p.as_deref())
    }
}

fn spawn_inputs(v: &Value, out: &mut Vec<SpawnInput>) {
    let Some(blocks) = v.pointer("/message/content").and_then(Value::as_array) else {
        return;
    };
    for b in blocks {
        let name = b.get("name").and_then(Value::as_str);
        if b.get("type").and_then(Value::as_str) != Some("tool_use")
            || !name.is_some_and(is_spawn_tool)
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
            name: field("name"),
            team_name: field("team_name"),
            isolation: field("isolation"),
        });
    }
}

impl RecordVisitor<IgnoredAny> for LinkVisitor {
    fn record(&mut self, line: &Line<'_>, env: &Envelope<'_>, node: Option<(NodeId, bool)>) {
        self.spawn_links.record(line, env, node);
        if self.team_name.is_none()
            && let Some(t) = env.team_name.get().filter(|t| !t.is_empty())
        {
            self.team_name = Some(t.to_owned());
        }
        let Some((id, true)) = node else { return };
        let Some(message) = env.message.0.as_ref() else {
            return;
        };
        match env.kind.get() {
            Some("assistant") => {
                let (mut spawns, mut sends) = (false, false);
                for b in message.content.blocks() {
                    if !matches!(b.kind(), Some("tool_use" | "server_tool_use")) {
                        continue;
                    }
                    if let Some(tid) = b.id.get() {
                        self.tool_nodes.entry(tid.into()).or_insert(id);
                        spawns |= b.name.get().is_some_and(is_spawn_tool);
                        sends |= b.name.get() == Some(SEND_MESSAGE);
                    }
                }
                if (spawns || sends)
                    && let Some(v) = parse_line(line.text)
                {
                    if spawns {
                        spawn_inputs(&v, &mut self.spawn_inputs);
                    }
                    if sends {
                        self.messages
                            .extend(MessageCall::all_in(&v, id, line.number));
                    }
                }
            }
            Some("user") if !self.messages.is_empty() => {
                let answers = message.content.blocks().iter().any(|b| {
                    b.kind() == Some("tool_result")
                        && b.tool_use_id
                            .get()
                            .is_some_and(|t| self.messages.iter().any(|m| m.tool_use_id == t))
                });
                if answers && let Some(v) = parse_line(line.text) {
                    MessageCall::note_results(&mut self.messages, &v);
                }
                self.sidechain_root(env, message, id);
            }
            Some("user") => self.sidechain_root(env, message, id),
            _ => {}
        }
    }
}

impl LinkVisitor {
    /// Notes a parentless sidechain user record (an agent file's first prompt, an old inline
    /// sidechain).
    fn sidechain_root(&mut self, env: &Envelope<'_>, message: &Message<'_>, id: NodeId) {
        if !env.is_sidechain.0 || env.parent_uuid.get().is_some() {
            return;
        }
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
