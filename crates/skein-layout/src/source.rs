//! Sources: one transcript file with the identity of the session it belongs to, wherever its
//! bytes live (a live Claude Code tree or the skein archive).

use std::path::{Path, PathBuf};

use skein_archive::{ArchivedFile, FileState, Kind, UNKNOWN_AGENT_TYPE};

use crate::claude::{
    self, AgentMeta, LiveFile, is_internal_agent, project_name_for_cwd, session_id_inside,
};

/// A session's identity: `(session_id, agent_id?)`, the same for a live file, a legacy sibling
/// file and an archive file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Identity {
    pub session_id: String,
    /// `None` for the main transcript.
    pub agent_id: Option<String>,
}

/// Main transcript or subagent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    Main,
    Subagent(AgentInfo),
}

/// What is known about a subagent transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentInfo {
    pub agent_id: String,
    /// Its `agent-<id>.meta.json` sidecar, if it has one.
    pub meta: Option<AgentMeta>,
    /// An internal helper agent (`acompact-`, `aprompt_suggestion-`, `aside_question-`).
    pub internal: bool,
    /// A pre-2.1.2 sibling `agent-*.jsonl` file (linked by the `sessionId` inside it).
    pub legacy: bool,
}

/// A transcript file and the session it belongs to.
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    /// Where the bytes are: the live file, or the archive file.
    pub path: PathBuf,
    pub session_id: String,
    /// The Claude project directory name (`-home-me-proj`).
    pub project: String,
    /// The directory the session is grouped and sorted by: the live project directory, or
    /// `<archive>/<project>` (which does not exist) for an archived one.
    pub project_dir: PathBuf,
    pub role: Role,
    /// `Some` for an archive file: what the archive records about it (archive key, metadata
    /// with the session's cwd, versions). Boxed: held inline it made every `Source` 1,184
    /// bytes, live ones too, and a listing of 4,300 files a 9.7 MB vector (docs/performance.md,
    /// stop 42).
    pub archived: Option<Box<ArchivedFile>>,
}

impl Source {
    /// `(session_id, agent_id?)`.
    pub fn identity(&self) -> Identity {
        Identity {
            session_id: self.session_id.clone(),
            agent_id: self.agent().map(|a| a.agent_id.clone()),
        }
    }

    /// The subagent facts, `None` for a main transcript.
    pub fn agent(&self) -> Option<&AgentInfo> {
        match &self.role {
            Role::Main => None,
            Role::Subagent(a) => Some(a),
        }
    }

    /// The session's working directory, when the archive recorded it (a live transcript
    /// carries it in its records).
    pub fn cwd(&self) -> Option<&str> {
        self.archived.as_ref()?.state.meta.cwd.as_deref()
    }

    /// The archive key's subagent fields (`agent_type`, `tool_use_id`), for an archived
    /// subagent.
    fn archived_agent(&self) -> Option<(&str, Option<&str>)> {
        match &self.archived.as_ref()?.state.kind {
            Kind::Subagent {
                agent_type,
                tool_use_id,
                ..
            } => Some((agent_type, tool_use_id.as_deref())),
            Kind::MainSession { .. } => None,
        }
    }

    /// The `tool_use` id of the call that spawned this subagent, when known without reading
    /// the parent transcript: what the archive recorded (linked when it was archived), else the
    /// sidecar's `toolUseId`.
    pub fn spawned_by(&self) -> Option<&str> {
        let sidecar = self
            .agent()?
            .meta
            .as_ref()
            .and_then(|m| m.tool_use_id.as_deref());
        self.archived_agent().and_then(|(_, t)| t).or(sidecar)
    }

    /// The subagent's type: the sidecar's `agentType`, else what the archive recorded (never
    /// its `unknown` placeholder).
    pub fn agent_type(&self) -> Option<&str> {
        let sidecar = self
            .agent()?
            .meta
            .as_ref()
            .and_then(|m| m.agent_type.as_deref());
        sidecar.or_else(|| {
            self.archived_agent()
                .map(|(t, _)| t)
                .filter(|t| *t != UNKNOWN_AGENT_TYPE)
        })
    }

    /// A live transcript whose session id is already known (a catalog recorded it): its
    /// identity from its place in the tree, with no I/O; a subagent's sidecar is not read
    /// (`meta` is `None`). `None` for files that are not transcripts.
    pub fn live_known(path: &Path, session_id: &str) -> Option<Self> {
        let live = LiveFile::of(path)?;
        let project_dir = live.project_dir(path).to_path_buf();
        let role = match live {
            LiveFile::Main { .. } => Role::Main,
            LiveFile::Subagent { agent_id, .. } | LiveFile::Legacy { agent_id } => {
                Role::Subagent(AgentInfo {
                    agent_id: agent_id.to_owned(),
                    meta: None,
                    internal: is_internal_agent(agent_id),
                    legacy: matches!(live, LiveFile::Legacy { .. }),
                })
            }
        };
        Some(Self {
            path: path.to_path_buf(),
            session_id: session_id.to_owned(),
            project: name_of(&project_dir),
            project_dir,
            role,
            archived: None,
        })
    }

    /// A live transcript: its identity from its place in the tree (a legacy agent file is read
    /// for the `sessionId` inside). `None` for files that are not transcripts.
    pub fn live(path: &Path) -> Option<Self> {
        Self::live_with(path, &|_| None)
    }

    /// [`Source::live`], taking a legacy agent file's session id from `known` when it has one
    /// (the file is then not opened).
    pub fn live_with(path: &Path, known: &dyn Fn(&Path) -> Option<String>) -> Option<Self> {
        let live = LiveFile::of(path)?;
        let project_dir = live.project_dir(path).to_path_buf();
        let (session_id, role) = match live {
            LiveFile::Main { session_id } => (session_id.to_owned(), Role::Main),
            LiveFile::Subagent {
                agent_id,
                session_dir,
            } => (
                name_of(session_dir),
                Role::Subagent(agent_info(agent_id, path, false)),
            ),
            LiveFile::Legacy { agent_id } => (
                known(path)
                    .or_else(|| session_id_inside(path))
                    .unwrap_or_else(|| format!("agent-{agent_id}")),
                Role::Subagent(agent_info(agent_id, path, true)),
            ),
        };
        Some(Self {
            path: path.to_path_buf(),
            session_id,
            project: name_of(&project_dir),
            project_dir,
            role,
            archived: None,
        })
    }

    /// An archive file: its original identity from what the archive recorded (archive key,
    /// project, origin in the Claude tree, sidecar). For archives written before skein recorded
    /// the origin, the recorded source path stands in for it and a sidecar is rebuilt from the
    /// archive key (agent type and spawning call).
    pub fn archived(file: ArchivedFile) -> Self {
        let state = &file.state;
        let meta = &state.meta;
        let project = state
            .project
            .clone()
            .or_else(|| meta.project.clone())
            .or_else(|| meta.cwd.as_deref().and_then(project_name_for_cwd))
            .unwrap_or_default();
        let origin_path = recorded_origin(state);
        let (session_id, role) = match &state.kind {
            Kind::MainSession { session_id } => (session_id.clone(), Role::Main),
            Kind::Subagent {
                agent_type,
                agent_id,
                parent_session,
                tool_use_id,
            } => {
                let sidecar = match &meta.origin {
                    Some(o) => o
                        .sidecar
                        .as_deref()
                        .and_then(|s| AgentMeta::parse(s.as_bytes())),
                    None => Some(AgentMeta {
                        agent_type: (agent_type != UNKNOWN_AGENT_TYPE).then(|| agent_type.clone()),
                        tool_use_id: tool_use_id.clone(),
                        ..AgentMeta::default()
                    }),
                };
                let legacy = match &origin_path {
                    Some(p) => !p.contains('/'),
                    None => parent_session.is_none(),
                };
                (
                    parent_session
                        .clone()
                        .unwrap_or_else(|| format!("agent-{agent_id}")),
                    Role::Subagent(AgentInfo {
                        agent_id: agent_id.clone(),
                        meta: sidecar,
                        internal: is_internal_agent(agent_id),
                        legacy,
                    }),
                )
            }
        };
        Self {
            path: file.path(),
            session_id,
            project_dir: file.root.join(skein_store::sanitize_file_name(&project)),
            project,
            role,
            archived: Some(Box::new(file)),
        }
    }

    /// Where this transcript belongs inside its Claude project directory (`/`-separated): where
    /// a live file is, the recorded origin of an archive file, else the layout's place for its
    /// identity (archives that recorded neither).
    pub fn path_in_project(&self) -> String {
        let recorded = match &self.archived {
            None => claude::path_in_project(&self.path),
            Some(a) => recorded_origin(&a.state),
        };
        if let Some(p) = recorded {
            return p.strip_suffix(".zst").map_or(p.clone(), str::to_owned);
        }
        match self.agent() {
            None => claude::main_path(&self.session_id),
            Some(a) => claude::agent_path((!a.legacy).then_some(&*self.session_id), &a.agent_id),
        }
    }
}

/// An archive file's place in its project directory: the recorded origin, else (archives
/// written before it was recorded) the place of the source path the checkpoint noted.
fn recorded_origin(state: &FileState) -> Option<String> {
    state
        .meta
        .origin
        .as_ref()
        .map(|o| o.path.clone())
        .or_else(|| claude::path_in_project(Path::new(&state.source.path)))
}

fn name_of(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn agent_info(agent_id: &str, path: &Path, legacy: bool) -> AgentInfo {
    AgentInfo {
        agent_id: agent_id.to_owned(),
        meta: claude::read_sidecar(path).and_then(|b| AgentMeta::parse(&b)),
        internal: is_internal_agent(agent_id),
        legacy,
    }
}
