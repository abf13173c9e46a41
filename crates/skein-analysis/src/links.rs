//! Which `Task`/`Agent` call spawned which subagent, found while the parent transcript is read.
//! Link keys, strongest first: the agent's `.meta.json` `toolUseId`; the parent's
//! `toolUseResult.agentId`; the `agentId: <id>` line at the end of the result text.

use std::collections::BTreeMap;

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use skein_core::record::is_spawn_tool;
use skein_core::{Block, Envelope, Line};
use skein_graph::NodeId;

use crate::RecordVisitor;

/// A spawning call.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Spawn {
    pub tool_use_id: String,
    /// `Task` or `Agent`.
    pub tool: String,
    pub subagent_type: Option<String>,
    pub description: Option<String>,
    pub timestamp: Option<String>,
    /// The agent id the result named, if any.
    pub agent_id: Option<String>,
}

/// Collects spawning calls and the agent ids their results name. Serializable, so a caller
/// reading a transcript in pieces (the hook) can carry it from one piece to the next.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SpawnLinks {
    spawns: BTreeMap<String, Spawn>,
    order: Vec<String>,
    /// agent id → tool_use id, from results.
    by_agent: BTreeMap<String, String>,
}

impl SpawnLinks {
    /// An empty collector.
    pub fn new() -> Self {
        Self::default()
    }

    /// Rewrites every free text kept (the calls' descriptions), e.g. to redact it.
    pub fn map_text(&mut self, f: &mut dyn FnMut(&str) -> String) {
        for s in self.spawns.values_mut() {
            if let Some(d) = &s.description {
                s.description = Some(f(d));
            }
        }
    }

    /// The spawning calls in file order.
    pub fn spawns(&self) -> impl Iterator<Item = &Spawn> {
        self.order.iter().filter_map(|id| self.spawns.get(id))
    }

    /// The spawning call for a tool_use id.
    pub fn spawn(&self, tool_use_id: &str) -> Option<&Spawn> {
        self.spawns.get(tool_use_id)
    }

    /// The tool_use id that spawned `agent_id`, from the meta file's `toolUseId` if given,
    /// else from the results.
    pub fn spawner_of(&self, agent_id: &str, meta_tool_use_id: Option<&str>) -> Option<String> {
        meta_tool_use_id
            .map(str::to_owned)
            .or_else(|| self.by_agent.get(agent_id).cloned())
    }

    fn note_agent(&mut self, tool_use_id: &str, agent_id: &str) {
        self.by_agent
            .entry(agent_id.to_owned())
            .or_insert_with(|| tool_use_id.to_owned());
        if let Some(s) = self.spawns.get_mut(tool_use_id) {
            s.agent_id.get_or_insert_with(|| agent_id.to_owned());
        }
    }
}

/// The id after the last `agentId: ` in `text`.
fn agent_id_in_text(text: &str) -> Option<&str> {
    let at = text.rfind("agentId: ")? + "agentId: ".len();
    let id: &str = &text[at..];
    let end = id
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .unwrap_or(id.len());
    (end > 0).then(|| &id[..end])
}

fn result_texts(v: &serde_json::Value, out: &mut Vec<(String, String)>) {
    let Some(blocks) = v["message"]["content"].as_array() else {
        return;
    };
    for b in blocks {
        if b["type"] != "tool_result" {
            continue;
        }
        let Some(id) = b["tool_use_id"].as_str() else {
            continue;
        };
        let text = match &b["content"] {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Array(parts) => parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            _ => continue,
        };
        out.push((id.to_owned(), text));
    }
}

impl SpawnLinks {
    fn visit<I>(
        &mut self,
        line: &Line<'_>,
        env: &Envelope<'_, I>,
        input: impl Fn(&Block<'_, I>) -> Option<(Option<String>, Option<String>)>,
    ) {
        let Some(message) = env.message.0.as_ref() else {
            return;
        };
        match env.kind.get() {
            Some("assistant") => {
                for b in message.content.blocks() {
                    let (Some("tool_use"), Some(id), Some(name)) =
                        (b.kind(), b.id.get(), b.name.get())
                    else {
                        continue;
                    };
                    if !is_spawn_tool(name) || self.spawns.contains_key(id) {
                        continue;
                    }
                    let (subagent_type, description) = input(b).unwrap_or_default();
                    self.order.push(id.to_owned());
                    self.spawns.insert(
                        id.to_owned(),
                        Spawn {
                            tool_use_id: id.to_owned(),
                            tool: name.to_owned(),
                            subagent_type,
                            description,
                            timestamp: env.timestamp.get().map(str::to_owned),
                            agent_id: self.by_agent_rev(id),
                        },
                    );
                }
            }
            Some("user") => {
                // The first two results' ids (no list per line: most user lines have one).
                let mut results = message
                    .content
                    .blocks()
                    .iter()
                    .filter(|b| b.kind() == Some("tool_result"))
                    .filter_map(|b| b.tool_use_id.get());
                let Some(first) = results.next() else {
                    return;
                };
                let only = results.next().is_none().then_some(first);
                if let (Some(agent), Some(only)) = (
                    env.tool_use_result
                        .0
                        .as_ref()
                        .and_then(|t| t.agent_id.get()),
                    only,
                ) {
                    self.note_agent(only, agent);
                }
                if memchr::memmem::find(line.text, b"agentId: ").is_some() {
                    let Ok(v) = serde_json::from_slice::<serde_json::Value>(line.text) else {
                        return;
                    };
                    let mut texts = Vec::new();
                    result_texts(&v, &mut texts);
                    for (id, text) in texts {
                        if let Some(agent) = agent_id_in_text(&text) {
                            self.note_agent(&id, agent);
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// An agent id already noted for a tool_use id (a result written before its use).
    fn by_agent_rev(&self, tool_use_id: &str) -> Option<String> {
        self.by_agent
            .iter()
            .find(|(_, t)| t.as_str() == tool_use_id)
            .map(|(a, _)| a.clone())
    }
}

impl RecordVisitor<IgnoredAny> for SpawnLinks {
    // (The links in a result's text are read off the line itself, `visit`.)
    const TEXTS: bool = false;

    fn record(&mut self, line: &Line<'_>, env: &Envelope<'_>, _: Option<(NodeId, bool)>) {
        self.visit(line, env, |_| None);
    }
}

impl RecordVisitor<serde_json::Value> for SpawnLinks {
    const TEXTS: bool = false;

    fn record(
        &mut self,
        line: &Line<'_>,
        env: &Envelope<'_, serde_json::Value>,
        _: Option<(NodeId, bool)>,
    ) {
        self.visit(line, env, |b| {
            let input = b.input.as_ref()?;
            Some((
                input["subagent_type"].as_str().map(str::to_owned),
                input["description"].as_str().map(str::to_owned),
            ))
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_id_from_result_text() {
        assert_eq!(
            agent_id_in_text("done\nagentId: a1b2c3 (use SendMessage with to: 'a1b2c3')"),
            Some("a1b2c3")
        );
        assert_eq!(agent_id_in_text("agentId: "), None);
        assert_eq!(agent_id_in_text("nothing"), None);
    }
}
