//! The Claude tree and the skein archive, both ways: the archive key and recorded origin of a
//! live source, and where an archived source goes back in a projects tree.

use std::path::{Path, PathBuf};

use skein_archive::{Kind, Origin, RestoreContent, RestoreItem, UNKNOWN_AGENT_TYPE};
use skein_store::safe_component;

use crate::claude::{self, sidecar_path};
use crate::discover::SessionFiles;
use crate::source::Source;

/// The session a subagent of `s` is archived under: its session id, except for legacy agent
/// files that named no session (grouped as `agent-<id>` without a main transcript), which have
/// none.
pub fn parent_session(s: &SessionFiles) -> Option<&str> {
    let orphan = s.main.is_none() && s.session_id.starts_with("agent-");
    (!orphan).then_some(s.session_id.as_str())
}

/// The archive key of a main transcript.
pub fn main_key(session_id: &str) -> Kind {
    Kind::MainSession {
        session_id: session_id.to_owned(),
    }
}

/// The archive key of a subagent transcript; a blank agent type becomes
/// [`UNKNOWN_AGENT_TYPE`].
pub fn agent_key(
    agent_id: &str,
    agent_type: Option<&str>,
    parent_session: Option<&str>,
    tool_use_id: Option<String>,
) -> Kind {
    Kind::Subagent {
        agent_type: agent_type
            .filter(|t| !t.trim().is_empty())
            .unwrap_or(UNKNOWN_AGENT_TYPE)
            .to_owned(),
        agent_id: agent_id.to_owned(),
        parent_session: parent_session.map(str::to_owned),
        tool_use_id,
    }
}

/// Where a live transcript sits in its Claude tree, as the archive records it: its path inside
/// the project directory and, for a subagent, its sidecar as written, passed through
/// `sidecar_text` (which redacts it when the transcript is redacted on the way in).
pub fn origin(live: &Path, sidecar_text: impl Fn(&[u8]) -> Vec<u8>) -> Option<Origin> {
    let path = claude::path_in_project(live)?;
    let sidecar = claude::agent_id_of(live)
        .and_then(|_| claude::read_sidecar(live))
        .map(|bytes| String::from_utf8_lossy(&sidecar_text(&bytes)).into_owned());
    Some(Origin { path, sidecar })
}

/// Why an archived source cannot be put back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {reason}")]
pub struct RestoreError {
    pub path: PathBuf,
    pub reason: String,
}

/// A project directory name must be one plain path component.
fn check_project(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 255
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// The files that put archived `sources` back into the projects directory `projects`: each
/// transcript where it came from (its recorded origin: legacy sibling files beside the
/// sessions, Workflow agents in their run directory), each sidecar as recorded. Archives that
/// did not record sidecars get one rebuilt from the archive key (agent type, spawning call),
/// written only where none exists. `project` overrides the recorded project directory. Live
/// sources are skipped. Every recorded name is checked: nothing can land outside `projects`.
pub fn restore_plan(
    sources: &[Source],
    projects: &Path,
    project: Option<&str>,
) -> Result<Vec<RestoreItem>, RestoreError> {
    let mut plan = Vec::new();
    for s in sources {
        let Some(a) = &s.archived else { continue };
        let err = |reason: String| RestoreError {
            path: s.path.clone(),
            reason,
        };
        let project = project.unwrap_or(&s.project);
        if !check_project(project) {
            return Err(err(if project.is_empty() {
                "no project recorded; pass one".to_owned()
            } else {
                format!("project directory name {project:?} is not a plain name")
            }));
        }
        let rel = s.path_in_project();
        let mut target = projects.join(project);
        for part in rel.split('/') {
            safe_component(part)
                .map_err(|e| err(format!("recorded path {rel:?} is unsafe: {e}")))?;
            target.push(part);
        }
        let sidecar = match (&a.state.meta.origin, &a.state.kind) {
            (Some(o), _) => o.sidecar.clone().map(|t| (t.into_bytes(), false)),
            (
                None,
                Kind::Subagent {
                    agent_type,
                    tool_use_id,
                    ..
                },
            ) if s.agent().is_some_and(|a| !a.legacy) => {
                let tool_use_id = tool_use_id
                    .clone()
                    .or_else(|| a.state.meta.tool_use_id.clone());
                let side = serde_json::json!({ "agentType": agent_type, "toolUseId": tool_use_id });
                let mut bytes = serde_json::to_vec_pretty(&side).unwrap_or_default();
                bytes.push(b'\n');
                Some((bytes, true))
            }
            (None, _) => None,
        };
        if let (Some((bytes, if_missing)), Some(side)) = (sidecar, sidecar_path(&target)) {
            plan.push(RestoreItem {
                target: target.clone(),
                content: RestoreContent::Archived(a.state.file.clone()),
            });
            plan.push(RestoreItem {
                target: side,
                content: RestoreContent::Bytes { bytes, if_missing },
            });
        } else {
            plan.push(RestoreItem {
                target,
                content: RestoreContent::Archived(a.state.file.clone()),
            });
        }
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use skein_archive::{ArchivedFile, FileState, SessionMeta, SourceState};

    fn archived(kind: &Kind, project: Option<&str>, origin: Option<Origin>) -> Source {
        let state = FileState {
            format: skein_archive::FORMAT,
            file: "main-session/2026-01/x.jsonl.zst".into(),
            version: 1,
            kind: kind.clone(),
            project: project.map(str::to_owned),
            first_timestamp: None,
            committed_len: 0,
            frames: 0,
            lines: 0,
            raw_bytes: 0,
            dict: None,
            compacted_level: None,
            created_unix: 0,
            updated_unix: 0,
            superseded_by: None,
            source: SourceState::default(),
            meta: SessionMeta {
                origin,
                ..SessionMeta::default()
            },
        };
        Source::archived(ArchivedFile {
            root: PathBuf::from("/arch"),
            state,
        })
    }

    #[test]
    fn restore_targets_follow_the_recorded_origin() {
        let projects = Path::new("/p");
        let legacy = archived(
            &agent_key("l1", None, Some("s1"), None),
            Some("-home-x"),
            Some(Origin {
                path: "agent-l1.jsonl".into(),
                sidecar: None,
            }),
        );
        let wf = archived(
            &agent_key("w1", None, Some("s1"), None),
            Some("-home-x"),
            Some(Origin {
                path: "s1/subagents/workflows/r1/agent-w1.jsonl".into(),
                sidecar: Some("{\"agentType\":\"x\"}".into()),
            }),
        );
        let plan = restore_plan(&[legacy, wf], projects, None).expect("plan");
        let targets: Vec<&Path> = plan.iter().map(|i| i.target.as_path()).collect();
        assert_eq!(
            targets,
            [
                Path::new("/p/-home-x/agent-l1.jsonl"),
                Path::new("/p/-home-x/s1/subagents/workflows/r1/agent-w1.jsonl"),
                Path::new("/p/-home-x/s1/subagents/workflows/r1/agent-w1.meta.json"),
            ]
        );
        assert_eq!(
            plan[2].content,
            RestoreContent::Bytes {
                bytes: b"{\"agentType\":\"x\"}".to_vec(),
                if_missing: false
            }
        );
    }

    #[test]
    fn old_archives_restore_to_the_derived_place_with_a_rebuilt_sidecar() {
        let agent = archived(
            &agent_key("a1", Some("Explore"), Some("s1"), Some("toolu_1".into())),
            Some("-home-x"),
            None,
        );
        let plan = restore_plan(&[agent], Path::new("/p"), Some("-other")).expect("plan");
        assert_eq!(
            plan[0].target,
            Path::new("/p/-other/s1/subagents/agent-a1.jsonl")
        );
        let RestoreContent::Bytes { bytes, if_missing } = &plan[1].content else {
            panic!("sidecar expected");
        };
        assert!(*if_missing);
        let side: serde_json::Value = serde_json::from_slice(bytes).expect("json");
        assert_eq!(side["agentType"], "Explore");
        assert_eq!(side["toolUseId"], "toolu_1");
    }

    #[test]
    fn nothing_lands_outside_the_projects_directory() {
        let evil_path = archived(
            &main_key("s1"),
            Some("-home-x"),
            Some(Origin {
                path: "../../etc/passwd".into(),
                sidecar: None,
            }),
        );
        assert!(restore_plan(&[evil_path], Path::new("/p"), None).is_err());
        for project in [Some("../etc"), Some(".hidden"), Some("a/b"), None] {
            let s = archived(&main_key("s1"), project, None);
            assert!(
                restore_plan(&[s], Path::new("/p"), None).is_err(),
                "{project:?}"
            );
        }
        let ok = archived(&main_key("s1"), Some("-home-x"), None);
        assert!(restore_plan(std::slice::from_ref(&ok), Path::new("/p"), Some("../x")).is_err());
        let plan = restore_plan(&[ok], Path::new("/p"), None).expect("plan");
        assert_eq!(plan[0].target, Path::new("/p/-home-x/s1.jsonl"));
    }
}
