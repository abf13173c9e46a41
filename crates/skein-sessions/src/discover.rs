//! Grouping transcript files into sessions.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use skein_store::input::{InputError, is_transcript_name};

/// The `agent-<id>.meta.json` sidecar of a subagent file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct AgentMeta {
    pub agent_type: Option<String>,
    pub description: Option<String>,
    /// The `tool_use` id of the spawning call.
    pub tool_use_id: Option<String>,
    pub parent_agent_id: Option<String>,
    pub spawn_depth: Option<u64>,
    /// The agent's git worktree (spawned with `isolation: "worktree"`).
    pub worktree_path: Option<String>,
}

/// One subagent transcript.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AgentFile {
    pub agent_id: String,
    pub path: PathBuf,
    pub meta: Option<AgentMeta>,
    /// Internal helper agents (`acompact-`, `aprompt_suggestion-`, `aside_question-`) replay
    /// the parent's context; their tokens are not counted again.
    pub internal: bool,
    /// A pre-2.1.2 sibling `agent-*.jsonl` file (linked by the `sessionId` inside it).
    pub legacy: bool,
}

/// The files of one session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SessionFiles {
    pub session_id: String,
    /// The directory holding the session (the project directory under `projects/`).
    pub project_dir: PathBuf,
    /// The main transcript, if present (subagent files can outlive it).
    pub main: Option<PathBuf>,
    pub agents: Vec<AgentFile>,
}

impl SessionFiles {
    /// The project's name: the project directory's last component.
    pub fn project(&self) -> String {
        self.project_dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// Every transcript of the session, main first.
    pub fn files(&self) -> impl Iterator<Item = &Path> {
        self.main
            .iter()
            .map(PathBuf::as_path)
            .chain(self.agents.iter().map(|a| a.path.as_path()))
    }
}

/// The result of [`discover`].
#[derive(Debug, Default)]
pub struct Discovery {
    /// Sessions sorted by project directory, then session id.
    pub sessions: Vec<SessionFiles>,
    /// Paths that could not be read.
    pub errors: Vec<InputError>,
}

/// True for the ids of internal helper agents.
pub fn is_internal_agent(agent_id: &str) -> bool {
    ["acompact-", "aprompt_suggestion-", "aside_question-"]
        .iter()
        .any(|p| agent_id.starts_with(p))
}

fn strip_transcript_ext(name: &str) -> Option<&str> {
    name.strip_suffix(".jsonl.zst")
        .or_else(|| name.strip_suffix(".jsonl"))
}

fn agent_id_of(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    strip_transcript_ext(name)?
        .strip_prefix("agent-")
        .map(str::to_owned)
}

fn read_meta(agent_path: &Path) -> Option<AgentMeta> {
    let name = agent_path.file_name()?.to_str()?;
    let stem = strip_transcript_ext(name)?;
    let meta = agent_path.with_file_name(format!("{stem}.meta.json"));
    let text = std::fs::read(meta).ok()?;
    serde_json::from_slice(&text).ok()
}

/// The `sessionId` of the first record that has one (for legacy agent files).
fn session_id_inside(path: &Path) -> Option<String> {
    use skein_core::{Event, ReadLines, Reader, ReaderOptions};
    let input = skein_store::open_input(path, skein_store::InputMode::Read).ok()?;
    let skein_store::Input::Stream(r) = input else {
        return None;
    };
    let mut reader = Reader::new(
        ReadLines::with_block_size(r, 64 << 10),
        ReaderOptions::default(),
    );
    for _ in 0..64 {
        if let Event::Record(_, p) = reader.next_event().ok()??
            && let Some(s) = p.envelope.session_id.get()
        {
            return Some(s.to_owned());
        }
    }
    None
}

/// The session directory a file under `<session>/subagents/…` belongs to.
fn subagent_session_dir(path: &Path) -> Option<&Path> {
    let mut cur = path.parent();
    while let Some(dir) = cur {
        if dir.file_name().is_some_and(|n| n == "subagents") {
            return dir.parent();
        }
        cur = dir.parent();
    }
    None
}

#[derive(Default)]
struct Builder {
    sessions: BTreeMap<(PathBuf, String), SessionFiles>,
    legacy: Vec<(PathBuf, AgentFile)>,
}

impl Builder {
    fn entry(&mut self, project_dir: &Path, session_id: &str) -> &mut SessionFiles {
        self.sessions
            .entry((project_dir.to_path_buf(), session_id.to_owned()))
            .or_insert_with(|| SessionFiles {
                session_id: session_id.to_owned(),
                project_dir: project_dir.to_path_buf(),
                ..SessionFiles::default()
            })
    }

    fn add_file(&mut self, path: &Path) {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name == "journal.jsonl" && path.components().any(|c| c.as_os_str() == "workflows") {
            return;
        }
        if let Some(agent_id) = agent_id_of(path) {
            let agent = AgentFile {
                internal: is_internal_agent(&agent_id),
                agent_id,
                path: path.to_path_buf(),
                meta: read_meta(path),
                legacy: false,
            };
            if let Some(session_dir) = subagent_session_dir(path) {
                let sid = session_dir
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let project = session_dir.parent().unwrap_or(Path::new("")).to_path_buf();
                self.entry(&project, &sid).agents.push(agent);
            } else {
                let project = path.parent().unwrap_or(Path::new("")).to_path_buf();
                self.legacy.push((
                    project,
                    AgentFile {
                        legacy: true,
                        ..agent
                    },
                ));
            }
            return;
        }
        let Some(stem) = strip_transcript_ext(&name) else {
            return;
        };
        let project = path.parent().unwrap_or(Path::new("")).to_path_buf();
        let entry = self.entry(&project, stem);
        // A plain and a compressed copy of one session: keep the plain file.
        if entry
            .main
            .as_ref()
            .is_none_or(|m| m.extension().is_some_and(|e| e == "zst"))
        {
            entry.main = Some(path.to_path_buf());
        }
    }

    fn finish(mut self) -> Vec<SessionFiles> {
        for (project, agent) in std::mem::take(&mut self.legacy) {
            let sid = session_id_inside(&agent.path)
                .unwrap_or_else(|| format!("agent-{}", agent.agent_id));
            self.entry(&project, &sid).agents.push(agent);
        }
        let mut out: Vec<SessionFiles> = self.sessions.into_values().collect();
        for s in &mut out {
            s.agents.sort_by(|a, b| a.path.cmp(&b.path));
            s.agents.dedup_by(|a, b| a.path == b.path);
        }
        out
    }
}

/// Groups the transcript files at `paths` (files or directories, searched recursively) into
/// sessions.
pub fn discover(paths: &[PathBuf]) -> Discovery {
    let mut b = Builder::default();
    let mut errors = Vec::new();
    for entry in skein_store::expand_paths(paths) {
        match entry {
            Ok(p) if p.as_os_str() == "-" => b.add_file(&p),
            Ok(p) if is_transcript_name(&p) || p.is_file() => b.add_file(&p),
            Ok(p) => errors.push(InputError {
                path: p,
                source: std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "no such file or directory",
                ),
            }),
            Err(e) => errors.push(e),
        }
    }
    Discovery {
        sessions: b.finish(),
        errors,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(p: &Path, body: &str) {
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, body).expect("write");
    }

    #[test]
    fn groups_new_legacy_and_internal_agents() {
        let d = tempfile::tempdir().expect("tempdir");
        let proj = d.path().join("-home-x");
        touch(
            &proj.join("s1.jsonl"),
            "{\"type\":\"user\",\"sessionId\":\"s1\"}\n",
        );
        touch(&proj.join("s1/subagents/agent-a1.jsonl"), "{}\n");
        touch(
            &proj.join("s1/subagents/agent-a1.meta.json"),
            r#"{"agentType":"Explore","toolUseId":"toolu_9"}"#,
        );
        touch(&proj.join("s1/subagents/agent-acompact-12ab.jsonl"), "{}\n");
        touch(
            &proj.join("s1/subagents/workflows/r1/agent-w1.jsonl"),
            "{}\n",
        );
        touch(
            &proj.join("s1/subagents/workflows/r1/journal.jsonl"),
            "{}\n",
        );
        touch(&proj.join("s2.jsonl"), "{}\n");
        touch(
            &proj.join("agent-old1.jsonl"),
            "{\"type\":\"user\",\"sessionId\":\"s2\",\"isSidechain\":true}\n",
        );
        let found = discover(&[d.path().to_path_buf()]);
        assert!(found.errors.is_empty());
        let ids: Vec<&str> = found
            .sessions
            .iter()
            .map(|s| s.session_id.as_str())
            .collect();
        assert_eq!(ids, ["s1", "s2"]);
        let s1 = &found.sessions[0];
        assert_eq!(s1.project(), "-home-x");
        let agents: Vec<(&str, bool)> = s1
            .agents
            .iter()
            .map(|a| (a.agent_id.as_str(), a.internal))
            .collect();
        assert_eq!(
            agents,
            [("a1", false), ("acompact-12ab", true), ("w1", false)]
        );
        assert_eq!(
            s1.agents[0]
                .meta
                .as_ref()
                .and_then(|m| m.tool_use_id.as_deref()),
            Some("toolu_9")
        );
        let s2 = &found.sessions[1];
        assert_eq!(s2.agents.len(), 1);
        assert!(s2.agents[0].legacy);
    }
}
