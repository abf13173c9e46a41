//! Finding sources under paths (live trees, archives, single files) and grouping them into
//! sessions: a main transcript plus its subagent transcripts.

use std::collections::BTreeSet;

use rustc_hash::FxHashMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use skein_store::{InputError, expand_paths_with, is_transcript_name, is_zstd};

use crate::claude::{AgentMeta, legacy_agent_files, transcript_stem};
use crate::source::{Identity, Role, Source};

/// One subagent transcript of a session.
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
    /// The directory holding the session: the project directory under `projects/`, or
    /// `<archive>/<project>` for a session read from the archive.
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

/// Sources found under some paths.
#[derive(Debug, Default)]
pub struct Listing {
    /// Live sources in path order, then archived ones in archive order. An archived source
    /// whose identity (project, session, agent) is also found live is left out: the live file
    /// is the same transcript, counted once.
    pub sources: Vec<Source>,
    /// Paths that could not be read.
    pub errors: Vec<InputError>,
}

/// The result of [`discover`].
#[derive(Debug, Default)]
pub struct Discovery {
    /// Sessions sorted by project directory, then session id.
    pub sessions: Vec<SessionFiles>,
    /// Paths that could not be read.
    pub errors: Vec<InputError>,
}

fn not_found(path: PathBuf) -> InputError {
    InputError {
        path,
        source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file or directory"),
    }
}

/// Every source under `paths`: transcripts of Claude projects trees, directories searched
/// recursively, skein archives (the current version of every archived source, with its
/// original identity) and single archive files (superseded versions only when named).
pub fn sources(paths: &[PathBuf]) -> Listing {
    sources_known(paths, &|_| None)
}

/// [`sources`], with the session ids a caller already knows (the catalog, for the files it
/// holds): a legacy sibling `agent-*.jsonl` file that `known` names is not opened to read the
/// `sessionId` inside it (a tree of old sessions has hundreds).
pub fn sources_known(paths: &[PathBuf], known: &dyn Fn(&Path) -> Option<String>) -> Listing {
    sources_found(paths, known, &mut |_| {})
}

/// [`sources_known`], showing each live source to `found` as soon as the walk reaches it (in
/// walk order), so that a caller can start reading it while the listing goes on. What the
/// listing returns is decided at its end: an archived copy of a live file is left out, and
/// sessions are grouped only then ([`group`]).
fn sources_found(
    paths: &[PathBuf],
    known: &dyn Fn(&Path) -> Option<String>,
    found: &mut dyn FnMut(&Source),
) -> Listing {
    let mut live = Vec::new();
    let mut archived = Vec::new();
    let mut errors = Vec::new();
    for path in paths {
        if path.is_dir() && skein_archive::is_archive_root(path) {
            match skein_archive::current_files(path) {
                Ok(files) => archived.extend(files.into_iter().map(Source::archived)),
                Err(e) => errors.push(InputError {
                    path: path.clone(),
                    source: std::io::Error::other(e.to_string()),
                }),
            }
            continue;
        }
        let named = !path.is_dir();
        // Each entry as the walk reaches it, so that `found` sees the first files at once.
        expand_paths_with(std::slice::from_ref(path), |entry| {
            let described = match &entry {
                Ok(p) if is_zstd(p) => skein_archive::describe(p),
                _ => None,
            };
            if let Some(f) = described {
                if named || f.state.superseded_by.is_none() {
                    archived.push(Source::archived(f));
                }
                return;
            }
            match entry {
                Ok(p) if p.as_os_str() == "-" => {}
                Ok(p) if is_transcript_name(&p) || p.is_file() => {
                    if let Some(s) = Source::live_with(&p, known) {
                        found(&s);
                        live.push(s);
                    }
                }
                Ok(p) => errors.push(not_found(p)),
                Err(e) => errors.push(e),
            }
        });
    }
    if !archived.is_empty() {
        let key = |s: &Source| (s.project.clone(), s.identity());
        let live_ids: BTreeSet<(String, Identity)> = live.iter().map(key).collect();
        let mut seen = BTreeSet::new();
        archived.retain(|s| !live_ids.contains(&key(s)) && seen.insert(key(s)));
        live.extend(archived);
    }
    Listing {
        sources: live,
        errors,
    }
}

/// Groups the sources under `paths` (see [`sources`]) into sessions. An archived file whose
/// session is also found live joins that live session.
pub fn discover(paths: &[PathBuf]) -> Discovery {
    discover_with(paths, &mut |_| {})
}

/// [`discover`], showing each live source to `found` as the walk reaches it: a caller can
/// start reading files before the listing ends (`skein usage` scans them while the tree is
/// still being listed). The sessions returned are exactly [`discover`]'s; a source shown may
/// still be left out of them (a plain copy wins over a compressed one).
pub fn discover_with(paths: &[PathBuf], found: &mut dyn FnMut(&Source)) -> Discovery {
    let listing = sources_found(paths, &|_| None, found);
    Discovery {
        sessions: group(listing.sources),
        errors: listing.errors,
    }
}

/// The sessions of one project directory while grouping, by session id: the files, and each
/// agent's place in the project directory.
type Sessions = FxHashMap<String, (SessionFiles, Vec<PathBuf>)>;

/// Groups sources into sessions, keyed by project directory and session id, in the order of
/// that key. Hash maps while grouping (a key is copied only for a new session) and sorts at
/// the end: the catalog groups thousands of sources this way on every `skein usage`.
pub fn group(sources: Vec<Source>) -> Vec<SessionFiles> {
    // Where a live session of (project, session) is: archived files of it join it there.
    let mut live_dirs: FxHashMap<(String, String), PathBuf> = FxHashMap::default();
    if sources.iter().any(|s| s.archived.is_some()) {
        for s in sources.iter().filter(|s| s.archived.is_none()) {
            live_dirs
                .entry((s.project.clone(), s.session_id.clone()))
                .or_insert_with(|| s.project_dir.clone());
        }
    }
    // Per project directory, per session id: the files, and each agent's place in the
    // project directory (agents are ordered by it, so a session lists them in the same order
    // whether its files are live or archived).
    let mut dirs: FxHashMap<PathBuf, Sessions> = FxHashMap::default();
    for s in sources {
        let place = s.agent().map(|_| PathBuf::from(s.path_in_project()));
        let dir = match &s.archived {
            Some(_) => live_dirs
                .get(&(s.project.clone(), s.session_id.clone()))
                .cloned()
                .unwrap_or(s.project_dir),
            None => s.project_dir,
        };
        if !dirs.contains_key(&dir) {
            dirs.insert(dir.clone(), Sessions::default());
        }
        let by_id = dirs.get_mut(&dir).expect("inserted above");
        if !by_id.contains_key(&s.session_id) {
            let files = SessionFiles {
                session_id: s.session_id.clone(),
                project_dir: dir,
                ..SessionFiles::default()
            };
            by_id.insert(s.session_id.clone(), (files, Vec::new()));
        }
        let (entry, places) = by_id.get_mut(&s.session_id).expect("inserted above");
        match s.role {
            // A plain and a compressed copy of one session: keep the plain file.
            Role::Main => {
                if entry
                    .main
                    .as_ref()
                    .is_none_or(|m| m.extension().is_some_and(|e| e == "zst"))
                {
                    entry.main = Some(s.path);
                }
            }
            Role::Subagent(a) => {
                entry.agents.push(AgentFile {
                    agent_id: a.agent_id,
                    path: s.path,
                    meta: a.meta,
                    internal: a.internal,
                    legacy: a.legacy,
                });
                places.push(place.unwrap_or_default());
            }
        }
    }
    let mut dirs: Vec<(PathBuf, Sessions)> = dirs.into_iter().collect();
    dirs.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let mut out = Vec::new();
    for (_, by_id) in dirs {
        let mut by_id: Vec<(String, (SessionFiles, Vec<PathBuf>))> = by_id.into_iter().collect();
        by_id.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        for (_, (mut s, places)) in by_id {
            if s.agents.len() > 1 {
                let mut agents: Vec<(PathBuf, AgentFile)> =
                    places.into_iter().zip(s.agents).collect();
                agents.sort_by(|a, b| (&a.0, &a.1.path).cmp(&(&b.0, &b.1.path)));
                s.agents = agents.into_iter().map(|(_, a)| a).collect();
                s.agents.dedup_by(|a, b| a.path == b.path);
            }
            out.push(s);
        }
    }
    out
}

/// The session a transcript file belongs to: for a live main transcript, the file with its
/// `<stem>/subagents/` directory and the legacy sibling `agent-*.jsonl` files of its session;
/// for an archived main transcript, the file with its archive's current subagents of the
/// session; for an agent transcript, the file alone. `None` when the file is no transcript.
pub fn session_of(path: &Path) -> Option<SessionFiles> {
    let mut found: Vec<Source> = Vec::new();
    if is_zstd(path)
        && let Some(file) = skein_archive::describe(path)
    {
        let me = Source::archived(file);
        if me.agent().is_none()
            && let Some(root) = me.archived.as_ref().map(|a| a.root.clone())
        {
            let sid = me.session_id.clone();
            let agents = skein_archive::current_files(&root).unwrap_or_default();
            found.extend(
                agents
                    .into_iter()
                    .map(Source::archived)
                    .filter(|s| s.session_id == sid && s.agent().is_some()),
            );
        }
        found.insert(0, me);
    } else {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut roots = vec![path.to_path_buf()];
        if !name.starts_with(crate::claude::AGENT_PREFIX)
            && let Some(stem) = transcript_stem(&name)
        {
            let companion = path.with_file_name(stem);
            if companion.is_dir() {
                roots.push(companion);
            }
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                roots.extend(legacy_agent_files(dir).into_iter().filter(|p| p.is_file()));
            }
        }
        found = sources(&roots).sources;
    }
    let mut sessions = group(found);
    let pick = sessions
        .iter()
        .position(|s| s.main.as_deref() == Some(path) || s.agents.iter().any(|a| a.path == path))?;
    Some(sessions.swap_remove(pick))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Identity;
    use skein_archive::{Archive, ArchiveOptions, IngestRequest, SessionMeta};

    fn touch(p: &Path, body: &str) {
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, body).expect("write");
    }

    /// A projects tree with a session in every layout; returns its project directory.
    fn tree(root: &Path) -> PathBuf {
        let proj = root.join("-home-x");
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
        proj
    }

    /// A legacy agent file whose session the caller knows is not read for it; the others are.
    #[test]
    fn known_legacy_files_are_not_opened() {
        let d = tempfile::tempdir().expect("tempdir");
        let proj = tree(d.path());
        let legacy = proj.join("agent-old1.jsonl");
        let known = |p: &Path| (p == legacy).then(|| "from-the-catalog".to_owned());
        let session_of = |l: &Listing, p: &Path| {
            l.sources
                .iter()
                .find(|s| s.path == p)
                .map(|s| s.session_id.clone())
        };
        let roots = [d.path().to_path_buf()];
        let listed = sources_known(&roots, &known);
        assert_eq!(
            session_of(&listed, &legacy).as_deref(),
            Some("from-the-catalog")
        );
        assert_eq!(session_of(&sources(&roots), &legacy).as_deref(), Some("s2"));
        // Only legacy files take a known id: the others' come from their place in the tree.
        let main = proj.join("s1.jsonl");
        let all = |_: &Path| Some("x".to_owned());
        assert_eq!(
            session_of(&sources_known(&roots, &all), &main).as_deref(),
            Some("s1")
        );
    }

    #[test]
    fn groups_new_legacy_and_internal_agents() {
        let d = tempfile::tempdir().expect("tempdir");
        tree(d.path());
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
        let missing = discover(&[d.path().join("nope")]);
        assert_eq!(missing.errors.len(), 1);
    }

    /// `discover_with` shows each live source once, in the listing's order, and returns
    /// `discover`'s sessions; archived sources (an archive root given beside the tree) are
    /// not shown, and their live copies win.
    #[test]
    fn discover_with_shows_the_live_sources_as_found() {
        let d = tempfile::tempdir().expect("tempdir");
        let proj = tree(d.path());
        archive(&proj, &d.path().join("arch"));
        let roots = [proj.clone(), d.path().join("arch")];
        let mut shown: Vec<Source> = Vec::new();
        let found = discover_with(&roots, &mut |s| shown.push(s.clone()));
        let listed: Vec<Source> = sources(&roots)
            .sources
            .into_iter()
            .filter(|s| s.archived.is_none())
            .collect();
        // s1, its three agents, s2 and its legacy agent (a journal is no transcript).
        assert_eq!(shown.len(), 6, "{shown:?}");
        assert_eq!(shown, listed);
        assert_eq!(found.sessions, discover(&roots).sessions);
        assert!(found.errors.is_empty(), "{:?}", found.errors);
        assert!(
            found
                .sessions
                .iter()
                .flat_map(SessionFiles::files)
                .all(|f| f.starts_with(&proj))
        );
    }

    /// Archives every source of the tree the way `skein archive` keys them.
    fn archive(proj: &Path, root: &Path) {
        let a = Archive::open(root, ArchiveOptions::default()).expect("open");
        for s in discover(&[proj.to_path_buf()]).sessions {
            let parent = crate::archive::parent_session(&s).map(str::to_owned);
            let mut sources: Vec<(PathBuf, skein_archive::Kind)> = Vec::new();
            if let Some(m) = &s.main {
                sources.push((m.clone(), crate::archive::main_key(&s.session_id)));
            }
            for ag in &s.agents {
                let t = ag.meta.as_ref().and_then(|m| m.agent_type.as_deref());
                let kind = crate::archive::agent_key(&ag.agent_id, t, parent.as_deref(), None);
                sources.push((ag.path.clone(), kind));
            }
            for (path, kind) in sources {
                let meta = SessionMeta {
                    project: Some(s.project()),
                    origin: crate::archive::origin(&path, <[u8]>::to_vec),
                    ..SessionMeta::default()
                };
                a.ingest(
                    &IngestRequest {
                        source: &path,
                        kind,
                        first_timestamp: None,
                        meta: Some(meta),
                    },
                    None,
                )
                .expect("ingest");
            }
        }
    }

    /// Session id, project, has a main transcript, agents (id, internal, legacy).
    type Shape = (String, String, bool, Vec<(String, bool, bool)>);

    #[test]
    fn an_archive_lists_the_sessions_of_its_tree() {
        let d = tempfile::tempdir().expect("tempdir");
        let proj = tree(d.path());
        let root = d.path().join("arch");
        archive(&proj, &root);
        let live = discover(std::slice::from_ref(&proj)).sessions;
        let archived = discover(std::slice::from_ref(&root));
        assert!(archived.errors.is_empty(), "{:?}", archived.errors);
        let shape = |s: &[SessionFiles]| -> Vec<Shape> {
            s.iter()
                .map(|s| {
                    (
                        s.session_id.clone(),
                        s.project(),
                        s.main.is_some(),
                        s.agents
                            .iter()
                            .map(|a| (a.agent_id.clone(), a.internal, a.legacy))
                            .collect(),
                    )
                })
                .collect()
        };
        assert_eq!(shape(&archived.sessions), shape(&live));
        assert_eq!(archived.sessions[0].agents[0].meta, live[0].agents[0].meta);
        let listed = sources(std::slice::from_ref(&root)).sources;
        let a1 = listed
            .iter()
            .find(|s| s.agent().is_some_and(|a| a.agent_id == "a1"))
            .expect("a1");
        assert_eq!(
            a1.identity(),
            Identity {
                session_id: "s1".into(),
                agent_id: Some("a1".into())
            }
        );
        assert_eq!(
            (a1.agent_type(), a1.spawned_by(), a1.project.as_str()),
            (Some("Explore"), Some("toolu_9"), "-home-x")
        );
        assert_eq!(a1.path_in_project(), "s1/subagents/agent-a1.jsonl");
        assert!(archived.sessions[0].project_dir.starts_with(&root));
        // One archive file: the session it belongs to, with its subagents from the archive.
        let main = archived.sessions[0].main.clone().expect("main");
        let one = session_of(&main).expect("session");
        assert_eq!(shape(&[one]), shape(&live[..1]));
        // Live and archived together: each source once, the live one kept.
        let both = sources(&[proj.clone(), root.clone()]);
        let n_live = sources(&[proj]).sources.len();
        assert_eq!(both.sources.len(), n_live);
        assert!(both.sources.iter().all(|s| s.archived.is_none()));
        let grouped = group(both.sources);
        assert_eq!(shape(&grouped), shape(&live));
    }
}
