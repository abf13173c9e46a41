//! Who the agents of a session are, and what they said to each other.
//!
//! * [`agent_labels`]: each subagent's name, type, team and worktree, from (strongest first)
//!   the spawning `Task`/`Agent` call's input (`name`, `subagent_type`, `team_name`,
//!   `isolation`), the `.meta.json` sidecar (`agentType`, `worktreePath`), the records'
//!   `teamName`, and the team configs (`<config dir>/teams/<team>/config.json`: a member's
//!   `agentType` by name within the team, or the member whose `agentId` is the agent's).
//! * [`MessageCall`]: a `SendMessage` call (`recipient` or `to`, `type` message / broadcast /
//!   shutdown_request / shutdown_response, `summary`, `message` or `content`) and the sender
//!   its result names (`toolUseResult.routing.sender`).
//! * [`message_edges`]: every message of the session as a from → to edge (`skein tree`).

use serde::Serialize;
use serde_json::Value;
use skein_graph::NodeId;
use skein_layout::TeamConfig;

use crate::session::LoadedSession;
use crate::tree::{LinkVisitor, SessionLinks, SpawnInput, TreeVisitor};

/// The tool agents message each other with.
pub const SEND_MESSAGE: &str = "SendMessage";

/// The label of the main transcript (its sender name when no result names one).
pub const MAIN: &str = "main";

/// What is known about one subagent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct AgentLabel {
    pub agent_id: String,
    pub name: Option<String>,
    pub agent_type: Option<String>,
    pub team: Option<String>,
    /// The worktree path, or `"worktree"` when the call asked for one and no path is known.
    pub worktree: Option<String>,
    pub description: Option<String>,
}

impl AgentLabel {
    /// The key `--by agent` groups on: the name, else `(type)`, else `(subagent)`.
    pub fn group(&self) -> String {
        match (&self.name, &self.agent_type) {
            (Some(n), _) => n.clone(),
            (None, Some(t)) => format!("({t})"),
            (None, None) => "(subagent)".to_owned(),
        }
    }

    /// The labels a heading shows: `name alice`, the type, `team T`, `worktree P`.
    pub fn parts(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(n) = &self.name {
            out.push(format!("name {n}"));
        }
        if let Some(t) = &self.agent_type {
            out.push(t.clone());
        }
        if let Some(t) = &self.team {
            out.push(format!("team {t}"));
        }
        if let Some(w) = &self.worktree {
            out.push(format!("worktree {w}"));
        }
        out
    }

    /// The name a message from this agent is signed with: the name, else the agent id.
    pub fn sender(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.agent_id)
    }
}

/// The spawning call's input of agent `i`, wherever the call is.
fn spawn_input<'a, V>(
    s: &'a LoadedSession<V>,
    links: &SessionLinks,
    links_of: &impl Fn(&V) -> &LinkVisitor,
    i: usize,
) -> Option<&'a SpawnInput> {
    let id = links.agents.get(i)?.tool_use_id.as_deref()?;
    s.main
        .iter()
        .map(|(_, v)| links_of(v))
        .chain(s.agents.iter().map(|a| links_of(&a.visitor)))
        .flat_map(|l| l.spawn_inputs.iter())
        .find(|sp| sp.tool_use_id == id)
}

/// One label per [`LoadedSession::agents`] entry (see the module documentation for the
/// sources).
pub fn agent_labels<V>(
    s: &LoadedSession<V>,
    links: &SessionLinks,
    links_of: impl Fn(&V) -> &LinkVisitor,
    teams: &[TeamConfig],
) -> Vec<AgentLabel> {
    (0..s.agents.len())
        .map(|i| {
            let a = &s.agents[i];
            let meta = a.file.meta.as_ref();
            let spawn = spawn_input(s, links, &links_of, i);
            let from_spawn =
                |f: fn(&SpawnInput) -> &Option<String>| spawn.and_then(|sp| f(sp).clone());
            let name = from_spawn(|sp| &sp.name);
            let team =
                from_spawn(|sp| &sp.team_name).or_else(|| links_of(&a.visitor).team_name.clone());
            let member = teams
                .iter()
                .filter(|t| team.as_deref() == Some(t.team_name.as_str()))
                .find_map(|t| name.as_deref().and_then(|n| t.member(n)))
                .or_else(|| {
                    teams
                        .iter()
                        .flat_map(|t| t.members.iter())
                        .find(|m| m.agent_id.as_deref() == Some(a.file.agent_id.as_str()))
                });
            let agent_type = meta
                .and_then(|m| m.agent_type.clone())
                .or_else(|| from_spawn(|sp| &sp.subagent_type))
                .or_else(|| member.and_then(|m| m.agent_type.clone()));
            let worktree = meta.and_then(|m| m.worktree_path.clone()).or_else(|| {
                (from_spawn(|sp| &sp.isolation).as_deref() == Some("worktree"))
                    .then(|| "worktree".to_owned())
            });
            AgentLabel {
                agent_id: a.file.agent_id.clone(),
                name: name.or_else(|| member.and_then(|m| m.name.clone())),
                agent_type,
                team,
                worktree,
                description: meta
                    .and_then(|m| m.description.clone())
                    .or_else(|| from_spawn(|sp| &sp.description)),
            }
        })
        .collect()
}

/// Agent id → the key `--by agent` groups the agent under ([`AgentLabel::group`]), for
/// every subagent of the session; internal agents are `(internal)`.
pub fn agent_groups<V>(
    s: &LoadedSession<V>,
    links_of: impl Fn(&V) -> &LinkVisitor,
    teams: &[TeamConfig],
) -> std::collections::BTreeMap<String, String> {
    let links = crate::tree::link_session(s, &links_of);
    agent_labels(s, &links, &links_of, teams)
        .into_iter()
        .zip(&s.agents)
        .map(|(l, a)| {
            let key = if a.file.internal {
                "(internal)".to_owned()
            } else {
                l.group()
            };
            (l.agent_id, key)
        })
        .collect()
}

/// What a `SendMessage` input says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SentMessage {
    /// `recipient`, else `to`; `*` for a broadcast without one.
    pub to: String,
    /// `type`: `message` (the default), `broadcast`, `shutdown_request`,
    /// `shutdown_response`, …
    pub kind: String,
    pub summary: Option<String>,
    /// `message`, else `content`.
    pub body: Option<String>,
    /// `approve` of a shutdown response.
    pub approve: Option<bool>,
}

impl SentMessage {
    /// Reads a `SendMessage` input.
    pub fn from_input(input: &Value) -> Self {
        let field = |k: &str| input.get(k).and_then(Value::as_str).map(str::to_owned);
        let kind = field("type").unwrap_or_else(|| "message".to_owned());
        let to = field("recipient")
            .or_else(|| field("to"))
            .unwrap_or_else(|| if kind == "broadcast" { "*" } else { "?" }.to_owned());
        let body = field("message").or_else(|| field("content")).or_else(|| {
            input
                .get("message")
                .filter(|m| m.is_object() || m.is_array())
                .map(Value::to_string)
        });
        Self {
            to,
            kind,
            summary: field("summary"),
            body,
            approve: input.get("approve").and_then(Value::as_bool),
        }
    }
}

/// A `SendMessage` call found while a transcript was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageCall {
    pub tool_use_id: String,
    pub node: NodeId,
    pub line: u64,
    pub uuid: Option<String>,
    pub timestamp: Option<String>,
    pub message: SentMessage,
    /// `toolUseResult.routing.sender` of its result.
    pub sender: Option<String>,
    /// Its result was an error.
    pub failed: bool,
}

impl MessageCall {
    /// The `SendMessage` calls of an assistant record.
    pub(crate) fn all_in(v: &Value, node: NodeId, line: u64) -> Vec<Self> {
        let Some(blocks) = v.pointer("/message/content").and_then(Value::as_array) else {
            return Vec::new();
        };
        let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
        blocks
            .iter()
            .filter(|b| b["type"] == "tool_use" && b["name"] == SEND_MESSAGE)
            .filter_map(|b| {
                Some(Self {
                    tool_use_id: b["id"].as_str()?.to_owned(),
                    node,
                    line,
                    uuid: text("uuid"),
                    timestamp: text("timestamp"),
                    message: SentMessage::from_input(&b["input"]),
                    sender: None,
                    failed: false,
                })
            })
            .collect()
    }

    /// Notes the sender and failure of the calls a user record answers.
    pub(crate) fn note_results(calls: &mut [Self], v: &Value) {
        let Some(blocks) = v.pointer("/message/content").and_then(Value::as_array) else {
            return;
        };
        let results: Vec<&Value> = blocks
            .iter()
            .filter(|b| b["type"] == "tool_result")
            .collect();
        for b in &results {
            let Some(c) = calls
                .iter_mut()
                .find(|c| b["tool_use_id"].as_str() == Some(c.tool_use_id.as_str()))
            else {
                continue;
            };
            c.failed = b["is_error"].as_bool() == Some(true);
            if results.len() == 1 {
                c.sender = sender_of(v.get("toolUseResult"));
            }
        }
    }
}

/// `routing.sender` of a `SendMessage` result's `toolUseResult`.
pub fn sender_of(tool_use_result: Option<&Value>) -> Option<String> {
    tool_use_result?
        .pointer("/routing/sender")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// One message between agents (`skein tree --format jsonl`, after the nodes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MessageEdge {
    /// Always `"message"`: tells edge rows from node rows.
    pub edge: &'static str,
    pub session_id: String,
    /// The transcript holding the `SendMessage` call.
    pub file: String,
    pub line: u64,
    pub uuid: Option<String>,
    pub tool_use_id: String,
    /// The sender: the result's `routing.sender`, else the agent's name (or id), else `main`.
    pub from: String,
    /// The recipient's name (`*` for a broadcast).
    pub to: String,
    /// `message`, `broadcast`, `shutdown_request`, `shutdown_response`, …
    pub kind: String,
    pub summary: Option<String>,
    pub timestamp: Option<String>,
    /// The call's result was an error (not delivered).
    pub failed: bool,
}

/// Every `SendMessage` call of the session: the main transcript's, then each agent's, each in
/// file order.
pub fn message_edges(s: &LoadedSession<TreeVisitor>, labels: &[AgentLabel]) -> Vec<MessageEdge> {
    let main = s
        .main
        .iter()
        .zip(s.files.main.iter())
        .map(|((_, v), path)| (&v.links, path.display().to_string(), MAIN.to_owned()));
    let agents = s.agents.iter().enumerate().map(|(i, a)| {
        let sender = labels
            .get(i)
            .map_or_else(|| a.file.agent_id.clone(), |l| l.sender().to_owned());
        (&a.visitor.links, a.file.path.display().to_string(), sender)
    });
    let mut out = Vec::new();
    for (links, file, sender) in main.chain(agents) {
        for c in &links.messages {
            out.push(MessageEdge {
                edge: "message",
                session_id: s.files.session_id.clone(),
                file: file.clone(),
                line: c.line,
                uuid: c.uuid.clone(),
                tool_use_id: c.tool_use_id.clone(),
                from: c.sender.clone().unwrap_or_else(|| sender.clone()),
                to: c.message.to.clone(),
                kind: c.message.kind.clone(),
                summary: c.message.summary.clone(),
                timestamp: c.timestamp.clone(),
                failed: c.failed,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn send_message_inputs_of_both_spellings() {
        let m = SentMessage::from_input(&json!({"to":"alice","summary":"go","message":"Round 2"}));
        assert_eq!((m.to.as_str(), m.kind.as_str()), ("alice", "message"));
        assert_eq!(m.body.as_deref(), Some("Round 2"));
        let b = SentMessage::from_input(&json!({"type":"broadcast","content":"stop"}));
        assert_eq!((b.to.as_str(), b.body.as_deref()), ("*", Some("stop")));
        let r = SentMessage::from_input(
            &json!({"type":"shutdown_response","recipient":"team-lead","approve":true}),
        );
        assert_eq!((r.to.as_str(), r.approve), ("team-lead", Some(true)));
    }

    #[test]
    fn group_keys() {
        let mut l = AgentLabel {
            agent_id: "a1".into(),
            ..AgentLabel::default()
        };
        assert_eq!(l.group(), "(subagent)");
        assert_eq!(l.sender(), "a1");
        l.agent_type = Some("Explore".into());
        assert_eq!(l.group(), "(Explore)");
        l.name = Some("alice".into());
        assert_eq!((l.group().as_str(), l.sender()), ("alice", "alice"));
        l.team = Some("t".into());
        assert_eq!(l.parts(), ["name alice", "Explore", "team t"]);
    }
}
