//! The archive as an input like any other: a projects tree archived with `skein archive` reads
//! as the same sessions (ids, projects, subagents linked to their spawning calls), a session
//! both live and archived counts once, and `skein archive restore` brings back every file byte
//! for byte. Run on `testdata/layout` (every place Claude Code keeps a transcript) and on the
//! shared corpus's projects trees.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::common::{copy_dir, corpus, jsonl, note, ok, skein, stdout, testdata};

/// Every file below `dir` (relative path → bytes).
fn tree_bytes(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for e in std::fs::read_dir(dir).expect("read_dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).expect("inside").to_path_buf();
                out.insert(rel, std::fs::read(&p).expect("read"));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// A projects tree in a temporary directory, archived.
struct Archived {
    tmp: tempfile::TempDir,
    /// Archive file (absolute) → the live source it was made from.
    files: BTreeMap<String, String>,
    /// Live main transcripts, by session id.
    mains: BTreeMap<String, String>,
}

impl Archived {
    /// `trees`: directories copied into `projects/` (under the given name, or merged with `""`).
    fn new(trees: &[(PathBuf, &str)]) -> Self {
        let tmp = tempfile::tempdir().expect("tempdir");
        for (from, name) in trees {
            let to = tmp.path().join("projects");
            copy_dir(from, &if name.is_empty() { to } else { to.join(name) });
        }
        let out = ok(&skein(
            &["archive", "-q", "projects", "--to", "arch"],
            tmp.path(),
        ))
        .clone();
        let mut files = BTreeMap::new();
        let mut mains = BTreeMap::new();
        for row in jsonl(&out) {
            assert_eq!(row["status"], "created", "{row}");
            let source = row["source"].as_str().expect("source").to_owned();
            let file = format!("arch/{}", row["file"].as_str().expect("file"));
            if row["kind"] == "main-session" {
                mains.insert(
                    row["session_id"].as_str().expect("sid").to_owned(),
                    source.clone(),
                );
            }
            files.insert(file, source);
        }
        Self { tmp, files, mains }
    }

    fn dir(&self) -> &Path {
        self.tmp.path()
    }

    /// `skein ARGS` on the archive and on the live tree: the same output once archive paths are
    /// replaced by the live paths they came from.
    fn same(&self, live: &[&str], archived: &[&str]) -> String {
        let a = ok(&skein(live, self.dir())).clone();
        let b = ok(&skein(archived, self.dir())).clone();
        let mut got = stdout(&b);
        // Longest first, so no path is replaced inside a longer one.
        let mut pairs: Vec<(&String, &String)> = self.files.iter().collect();
        pairs.sort_by_key(|(f, _)| std::cmp::Reverse(f.len()));
        for (file, source) in pairs {
            got = got.replace(file.as_str(), source);
        }
        assert_eq!(
            stdout(&a),
            got,
            "`skein {}` and `skein {}` differ",
            live.join(" "),
            archived.join(" ")
        );
        got
    }

    fn archive_of(&self, live: &str) -> &str {
        self.files
            .iter()
            .find(|(_, s)| s.as_str() == live)
            .map(|(f, _)| f.as_str())
            .expect("archived")
    }
}

/// The acceptance checks on one archived projects tree.
fn check_archive_reads_like_the_tree(a: &Archived) {
    let j = ["--format", "jsonl"];
    for report in [
        &["usage", "session"][..],
        &["usage", "daily"],
        &["tools"],
        &["tools", "--by", "name"],
        &["skills"],
    ] {
        let live: Vec<&str> = report
            .iter()
            .copied()
            .chain(["projects"])
            .chain(j)
            .collect();
        let arch: Vec<&str> = report.iter().copied().chain(["arch"]).chain(j).collect();
        a.same(&live, &arch);
    }
    // The same session live and archived counts once.
    a.same(
        &["usage", "session", "projects", "--format", "jsonl"],
        &["usage", "session", "projects", "arch", "--format", "jsonl"],
    );
    for (sid, main) in &a.mains {
        let file = a.archive_of(main);
        for view in [
            &["tree", "--format", "jsonl"][..],
            &["tree", "--format", "table"],
            &["show"],
        ] {
            let live: Vec<&str> = view.iter().copied().chain([main.as_str()]).collect();
            let arch: Vec<&str> = view.iter().copied().chain([file]).collect();
            a.same(&live, &arch);
        }
        // A session id looked up in the archive is the same session.
        a.same(
            &["tree", main.as_str(), "--format", "jsonl"],
            &["tree", sid.as_str(), "--in", "arch", "--format", "jsonl"],
        );
    }
    for (file, source) in &a.files {
        a.same(&["stats", source.as_str()], &["stats", file.as_str()]);
    }
}

/// Restore brings back every archived file, byte for byte (legacy sibling agents, Workflow
/// agents and sidecars in their places).
fn check_restore_is_exact(a: &Archived) {
    let rows = jsonl(ok(&skein(
        &["archive", "restore", "arch", "--to", "restored", "-q"],
        a.dir(),
    )));
    assert!(rows.iter().all(|r| r["status"] == "written"), "{rows:?}");
    let mut live = tree_bytes(&a.dir().join("projects"));
    // Workflow journals are bookkeeping, not transcripts: they are not archived.
    live.retain(|p, _| !p.ends_with("journal.jsonl"));
    let restored = tree_bytes(&a.dir().join("restored"));
    assert_eq!(
        live.keys().collect::<Vec<_>>(),
        restored.keys().collect::<Vec<_>>()
    );
    for (p, bytes) in &live {
        assert!(restored[p] == *bytes, "{} differs", p.display());
    }
    // Restoring again changes nothing.
    let again = jsonl(ok(&skein(
        &["archive", "restore", "arch", "--to", "restored", "-q"],
        a.dir(),
    )));
    assert!(
        again.iter().all(|r| r["status"] == "unchanged"),
        "{again:?}"
    );
}

#[test]
fn every_layout_reads_the_same_from_the_archive() {
    let a = Archived::new(&[(testdata("layout/projects"), "")]);
    // Six sessions: S1 (main + subagent + compaction agent + Workflow agent + legacy sibling),
    // S2 (only its legacy agent), the legacy agent without a session, and S3.
    let sessions = jsonl(ok(&skein(
        &["usage", "session", "arch", "--format", "jsonl"],
        a.dir(),
    )));
    let ids: Vec<&str> = sessions
        .iter()
        .filter_map(|r| r["session_id"].as_str())
        .collect();
    assert_eq!(ids.len(), 4, "{ids:?}");
    assert!(ids.contains(&"agent-l3"), "{ids:?}");
    for r in sessions.iter().filter(|r| r["session_id"].is_string()) {
        let p = r["project"].as_str().expect("project");
        assert!(p == "-home-me-app" || p == "-home-me-other", "{r}");
    }
    // The subagents are linked to their spawning calls in the archive too.
    let tree = stdout(ok(&skein(
        &[
            "tree",
            "5e55a001-0000-4000-8000-000000000001",
            "--in",
            "arch",
            "--format",
            "jsonl",
        ],
        a.dir(),
    )));
    for spawn in ["toolu_spawn_a1", "toolu_spawn_l1", "toolu_spawn_w1"] {
        assert!(
            tree.contains(&format!("\"spawned_by\":\"{spawn}\"")),
            "{spawn} not linked"
        );
    }
    check_archive_reads_like_the_tree(&a);
    check_restore_is_exact(&a);
}

#[test]
fn corpus_projects_read_the_same_from_the_archive() {
    let Some(c) = corpus() else { return };
    let trees = [
        (
            c.join("daaain__claude-code-log/test/test_data/real_projects"),
            "",
        ),
        (
            c.join("marot__spotter/test/fixtures/transcripts"),
            "-spotter",
        ),
        (
            c.join("d-kimuson__claude-code-viewer/mock-global-claude-dir/projects"),
            "",
        ),
    ];
    if trees.iter().any(|(p, _)| !p.is_dir()) {
        note("corpus projects trees not found; skipped");
        return;
    }
    let a = Archived::new(&trees);
    assert!(a.files.len() > 90, "{} files archived", a.files.len());
    check_archive_reads_like_the_tree(&a);
    check_restore_is_exact(&a);
}
