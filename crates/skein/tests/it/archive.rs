//! `skein archive`, `skein compress`, `skein decompress` and `skein cat` run for real on the
//! hand-made session in `testdata/archive` (a main transcript and one subagent with its
//! sidecar), copied into a temporary Claude config directory. HOME and CLAUDE_CONFIG_DIR point
//! into the temporary directory, so nothing here reads `~/.claude`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::SystemTime;

use serde_json::Value;

use crate::common::copy_dir;

const SID: &str = "11111111-aaaa-4bbb-8ccc-000000000001";
const AID: &str = "a7f3c2e1d9b8";
const MAIN_FILE: &str =
    "main-session/2026-01/2026-01-05_140322_11111111-aaaa-4bbb-8ccc-000000000001.jsonl.zst";
const AGENT_FILE: &str = "subagent/Explore/2026-01/2026-01-05_140341_a7f3c2e1d9b8.jsonl.zst";
const GH_TOKEN: &str = "ghp_R8x2Kq9LmZ4vT7nW3pY6sD1fH5jC0bA2eG8u";
const AWS_KEY: &str = "AKIAQ3EGRVLPXJ5KZ7WN";

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/archive/projects")
}

/// A temporary HOME with `$CLAUDE_CONFIG_DIR/projects` holding the fixture, and an archive
/// directory next to it.
struct Env {
    tmp: tempfile::TempDir,
}

impl Env {
    fn new() -> Self {
        let tmp = tempfile::tempdir().expect("tempdir");
        copy_dir(&fixture(), &tmp.path().join("claude/projects"));
        Self { tmp }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.tmp.path().join(rel)
    }

    fn projects(&self) -> PathBuf {
        self.path("claude/projects")
    }

    fn main_source(&self) -> PathBuf {
        self.projects().join(format!("-home-me-proj/{SID}.jsonl"))
    }

    fn agent_source(&self) -> PathBuf {
        self.projects()
            .join(format!("-home-me-proj/{SID}/subagents/agent-{AID}.jsonl"))
    }

    fn archive_dir(&self) -> PathBuf {
        self.path("archive")
    }

    fn skein(&self, args: &[&str]) -> Output {
        self.skein_stdin(args, None)
    }

    fn skein_stdin(&self, args: &[&str], stdin: Option<&[u8]>) -> Output {
        let mut child = Command::new(env!("CARGO_BIN_EXE_skein"))
            .args(args)
            .current_dir(self.tmp.path())
            .env("HOME", self.tmp.path())
            .env("CLAUDE_CONFIG_DIR", self.path("claude"))
            // The config is `$HOME/.config/skein/config.toml`, never the user's, and the
            // state (the default archive) is under the temp dir too.
            .env_remove("XDG_CONFIG_HOME")
            .env("XDG_STATE_HOME", self.path("state"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run skein");
        let mut input = child.stdin.take().expect("stdin");
        if let Some(bytes) = stdin {
            input.write_all(bytes).expect("write stdin");
        }
        drop(input);
        child.wait_with_output().expect("wait")
    }

    /// `skein archive --to DIR [extra…]` (the default projects directory), expecting success.
    fn archive(&self, extra: &[&str]) -> Vec<Value> {
        let dir = self.archive_dir();
        let mut args = vec!["archive", "--to", dir.to_str().expect("utf8")];
        args.extend_from_slice(extra);
        let out = self.skein(&args);
        assert!(out.status.success(), "archive failed: {}", stderr(&out));
        jsonl(&out)
    }

    fn cat(&self, rel: &str) -> Vec<u8> {
        let p = self.archive_dir().join(rel);
        let out = self.skein(&["cat", p.to_str().expect("utf8")]);
        assert!(out.status.success(), "cat failed: {}", stderr(&out));
        out.stdout
    }

    fn meta(&self, rel: &str) -> Value {
        let p = self
            .archive_dir()
            .join(rel.replace(".jsonl.zst", ".meta.json"));
        serde_json::from_slice(&std::fs::read(p).expect("meta")).expect("meta json")
    }
}

fn jsonl(out: &Output) -> Vec<Value> {
    String::from_utf8(out.stdout.clone())
        .expect("utf8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn by_kind<'a>(rows: &'a [Value], kind: &str) -> &'a Value {
    rows.iter()
        .find(|r| r["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} row in {rows:?}"))
}

/// Every file under `dir` with its bytes and mtime.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (Vec<u8>, SystemTime)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir") {
            let e = e.expect("entry");
            let md = e.metadata().expect("metadata");
            if md.is_dir() {
                stack.push(e.path());
            } else {
                let bytes = std::fs::read(e.path()).expect("read");
                out.insert(e.path(), (bytes, md.modified().expect("mtime")));
            }
        }
    }
    out
}

/// Replaces `path` by a new file (new inode) holding `bytes`.
fn replace_file(path: &Path, bytes: &[u8]) {
    let tmp = path.with_extension("tmp-new");
    std::fs::write(&tmp, bytes).expect("write");
    std::fs::rename(&tmp, path).expect("rename");
}

fn append(path: &Path, bytes: &[u8]) {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .expect("open");
    f.write_all(bytes).expect("append");
}

#[test]
fn layout_meta_and_index() {
    let env = Env::new();
    let rows = env.archive(&[]);
    assert_eq!(rows.len(), 2, "{rows:?}");
    let main = by_kind(&rows, "main-session");
    assert_eq!(main["status"], "created");
    assert_eq!(main["file"], MAIN_FILE);
    assert_eq!(main["version"], 1);
    assert_eq!(main["session_id"], SID);
    assert_eq!(main["source_lines"], 11);
    assert_eq!(main["lines"], 11);
    let agent = by_kind(&rows, "subagent");
    assert_eq!(agent["status"], "created");
    assert_eq!(agent["file"], AGENT_FILE);
    assert_eq!(agent["agent_id"], AID);
    assert_eq!(agent["agent_type"], "Explore");
    assert_eq!(agent["session_id"], SID);

    let dir = env.archive_dir();
    for f in [MAIN_FILE, AGENT_FILE] {
        assert!(dir.join(f).is_file(), "{f}");
        assert!(
            dir.join(f.replace(".jsonl.zst", ".meta.json")).is_file(),
            "{f} meta"
        );
    }
    assert_eq!(
        env.cat(MAIN_FILE),
        std::fs::read(env.main_source()).expect("source")
    );
    assert_eq!(
        env.cat(AGENT_FILE),
        std::fs::read(env.agent_source()).expect("source")
    );

    let m = &env.meta(MAIN_FILE)["meta"];
    assert_eq!(m["session_id"], SID);
    assert_eq!(m["project"], "-home-me-proj");
    assert_eq!(m["cwd"], "/home/me/proj");
    assert_eq!(m["git_branch"], "feature/archive");
    assert_eq!(m["first_timestamp"], "2026-01-05T14:03:22.123Z");
    assert_eq!(m["last_timestamp"], "2026-01-05T14:04:35.000Z");
    assert_eq!(m["duration_ms"], 72_877);
    assert_eq!(m["user_messages"], 1);
    assert_eq!(m["assistant_messages"], 5);
    assert_eq!(m["message_count"], 6);
    assert_eq!(m["tool_calls"], 4);
    assert_eq!(
        m["tool_counts"],
        serde_json::json!({"Edit": 1, "Skill": 1, "Task": 1, "Write": 1})
    );
    assert_eq!(
        m["usage"],
        serde_json::json!({"input_tokens": 50, "output_tokens": 100,
            "cache_creation_input_tokens": 500, "cache_read_input_tokens": 5000})
    );
    assert_eq!(m["models"], serde_json::json!(["claude-opus-4-7"]));
    assert_eq!(
        m["files_modified"],
        serde_json::json!(["/home/me/proj/src/lib.rs", "/home/me/proj/.env"])
    );
    assert_eq!(m["skills_used"], serde_json::json!(["release-notes"]));
    assert_eq!(
        m["subagents"],
        serde_json::json!([{"agent_id": AID, "agent_type": "Explore", "tool_use_id": "toolu_task"}])
    );

    let a = &env.meta(AGENT_FILE)["meta"];
    assert_eq!(a["session_id"], SID);
    assert_eq!(a["parent_session"], SID);
    assert_eq!(a["tool_use_id"], "toolu_task");
    assert_eq!(a["outcome"], "completed");
    assert_eq!(a["models"], serde_json::json!(["claude-haiku-4-5"]));
    assert_eq!(a["tool_counts"], serde_json::json!({"Glob": 1}));
    assert_eq!(a["extra"]["agent_type"], "Explore");
    assert_eq!(a["extra"]["description"], "Look around");

    let index: Value =
        serde_json::from_slice(&std::fs::read(dir.join("archive-index.json")).expect("index"))
            .expect("index json");
    let entries = index["entries"].as_object().expect("entries");
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[MAIN_FILE]["session_id"], SID);
    assert_eq!(entries[AGENT_FILE]["parent_session"], SID);

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).expect("md").permissions().mode() & 0o777;
        assert_eq!(mode(&dir.join(MAIN_FILE)), 0o600);
        assert_eq!(mode(&dir.join("main-session")), 0o700);
    }
}

/// A main transcript of 4 MiB or more is compressed while another thread reads the session for
/// its metadata (which the commit then records): the metadata is the same as when it is read
/// first, for the main transcript and for the subagent whose key and outcome come from it, and
/// again after an append.
#[test]
fn a_big_main_transcript_gets_the_same_metadata() {
    // Lines without timestamp, ids, cwd or branch add nothing to the metadata. Most go before
    // the session's other records, so that those are read after a few MiB.
    let x = "x".repeat(64 << 10);
    let pad = |n: std::ops::Range<usize>| {
        let mut pad = String::new();
        for i in n {
            writeln!(pad, "{{\"type\":\"progress\",\"data\":\"{i}{x}\"}}").expect("write");
        }
        pad
    };
    let more = concat!(
        r#"{"type":"user","uuid":"u9","parentUuid":"a5","timestamp":"2026-01-05T15:00:00.000Z","message":{"role":"user","content":"one more thing"}}"#,
        "\n",
        r#"{"type":"assistant","uuid":"a9","parentUuid":"u9","timestamp":"2026-01-05T15:00:05.000Z","requestId":"r9","message":{"id":"msg_9","role":"assistant","model":"claude-opus-4-7","content":[{"type":"tool_use","id":"t9","name":"Write","input":{"file_path":"/w/nine.rs","content":"fn nine() {}"}}],"usage":{"input_tokens":5,"output_tokens":7}}}"#,
        "\n"
    );
    for extra in [&[][..], &["--redact"][..]] {
        let small = Env::new();
        small.archive(extra);
        let big = Env::new();
        let records = std::fs::read_to_string(big.main_source()).expect("read");
        // The first record stays first: the archive's file name comes from its timestamp.
        let (first, rest) = records.split_at(records.find('\n').expect("a line") + 1);
        let whole = first.to_owned() + &pad(0..70) + rest + &pad(70..80);
        std::fs::write(big.main_source(), whole).expect("write");
        let size = std::fs::metadata(big.main_source()).expect("md").len();
        assert!(size >= 4 << 20, "{size}");
        let rows = big.archive(extra);
        let main = by_kind(&rows, "main-session");
        assert_eq!(
            (&main["status"], &main["source_lines"]),
            (&"created".into(), &91.into())
        );
        assert_eq!(by_kind(&rows, "subagent")["file"], AGENT_FILE);
        // The metadata of `f` in an environment, but for the source size it describes.
        let meta_without_size = |env: &Env, f: &str| {
            let mut m = env.meta(f)["meta"].clone();
            m["extra"]
                .as_object_mut()
                .expect("extra")
                .remove("source_bytes");
            m
        };
        for f in [MAIN_FILE, AGENT_FILE] {
            assert_eq!(
                meta_without_size(&small, f),
                meta_without_size(&big, f),
                "{f} {extra:?}"
            );
        }
        assert_eq!(big.meta(MAIN_FILE)["meta"]["extra"]["source_bytes"], size);
        assert_eq!(big.meta(MAIN_FILE)["meta"]["subagents"][0]["agent_id"], AID);
        assert_eq!(big.meta(AGENT_FILE)["meta"]["outcome"], "completed");
        // An append: a frame of the new lines, the metadata of the whole session.
        for env in [&small, &big] {
            append(&env.main_source(), more.as_bytes());
            env.archive(extra);
        }
        let b = meta_without_size(&big, MAIN_FILE);
        assert_eq!(
            meta_without_size(&small, MAIN_FILE),
            b,
            "after the append {extra:?}"
        );
        assert!(
            b["files_modified"]
                .as_array()
                .expect("files")
                .contains(&"/w/nine.rs".into()),
            "{b}"
        );
        let out = big.skein(&[
            "archive",
            "verify",
            big.archive_dir().to_str().expect("utf8"),
        ]);
        assert!(out.status.success(), "verify: {}", stderr(&out));
    }
}

#[test]
fn second_run_writes_nothing() {
    let env = Env::new();
    env.archive(&[]);
    let before = snapshot(&env.archive_dir());
    std::thread::sleep(std::time::Duration::from_millis(20));
    let rows = env.archive(&[]);
    assert!(rows.iter().all(|r| r["status"] == "unchanged"), "{rows:?}");
    assert_eq!(by_kind(&rows, "main-session")["file"], MAIN_FILE);
    let after = snapshot(&env.archive_dir());
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>()
    );
    for (path, (bytes, mtime)) in &before {
        let (b2, m2) = &after[path];
        assert!(bytes == b2, "{} changed", path.display());
        assert_eq!(mtime, m2, "{} touched", path.display());
    }
    // Explicit paths find the same sources.
    let dir = env.archive_dir();
    let projects = env.projects();
    let out = env.skein(&[
        "archive",
        projects.to_str().expect("utf8"),
        "--to",
        dir.to_str().expect("utf8"),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(jsonl(&out).iter().all(|r| r["status"] == "unchanged"));
    assert_eq!(snapshot(&env.archive_dir()).len(), before.len());
}

#[test]
fn appended_lines_become_a_new_frame() {
    let env = Env::new();
    env.archive(&[]);
    let src = env.main_source();
    let more = format!(
        "{}\n{}\n",
        r#"{"type":"user","uuid":"u9","parentUuid":"a5","timestamp":"2026-01-05T15:00:00.000Z","message":{"role":"user","content":"one more thing"}}"#,
        r#"{"type":"assistant","uuid":"a9","parentUuid":"u9","timestamp":"2026-01-05T15:00:05.000Z","message":{"id":"msg_9","role":"assistant","model":"claude-opus-4-7","content":[{"type":"text","text":"sure"}]}}"#
    );
    append(&src, more.as_bytes());
    // A torn last line (Claude Code still writing it) waits for the next run.
    append(&src, br#"{"type":"user","uuid":"u10""#);
    let rows = env.archive(&[]);
    let main = by_kind(&rows, "main-session");
    assert_eq!(main["status"], "appended");
    assert_eq!(main["source_lines"], 2);
    assert_eq!(main["file"], MAIN_FILE);
    assert!(main["torn_tail_bytes"].as_u64().expect("n") > 0);
    assert_eq!(by_kind(&rows, "subagent")["status"], "unchanged");
    let state = env.meta(MAIN_FILE);
    assert_eq!(state["frames"], 2);
    assert_eq!(state["lines"], 13);
    assert_eq!(state["meta"]["last_timestamp"], "2026-01-05T15:00:05.000Z");
    let source = std::fs::read(&src).expect("source");
    let complete = &source[..=source.iter().rposition(|&b| b == b'\n').expect("nl")];
    assert_eq!(env.cat(MAIN_FILE), complete);

    append(&src, b",\"parentUuid\":\"a9\"}\n");
    let rows = env.archive(&[]);
    assert_eq!(by_kind(&rows, "main-session")["source_lines"], 1);
    assert_eq!(env.cat(MAIN_FILE), std::fs::read(&src).expect("source"));
    assert_eq!(env.meta(MAIN_FILE)["frames"], 3);
}

#[test]
fn rewritten_source_starts_version_2() {
    let env = Env::new();
    env.archive(&[]);
    let src = env.main_source();
    let old = std::fs::read(&src).expect("source");
    let text = String::from_utf8(old.clone()).expect("utf8");
    let edited = text.replacen("Set up the release notes", "Set up the RELEASE notes", 1);
    replace_file(&src, edited.as_bytes());
    let rows = env.archive(&[]);
    let main = by_kind(&rows, "main-session");
    assert_eq!(main["status"], "new-version");
    assert_eq!(main["version"], 2);
    assert_eq!(main["reason"], "inode-changed");
    let v2 = MAIN_FILE.replace(".jsonl.zst", ".v2.jsonl.zst");
    assert_eq!(main["file"], v2.as_str());
    assert_eq!(env.cat(&v2), edited.as_bytes());
    // The first version stays, read-only history.
    assert_eq!(env.cat(MAIN_FILE), old);
    assert_eq!(env.meta(MAIN_FILE)["superseded_by"], v2.as_str());
    let dir = env.archive_dir();
    let out = env.skein(&["archive", "verify", dir.to_str().expect("utf8")]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn verify_passes_then_detects_corruption() {
    let env = Env::new();
    env.archive(&[]);
    let dir = env.archive_dir();
    let d = dir.to_str().expect("utf8");
    let out = env.skein(&["archive", "verify", d]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    let file = dir.join(MAIN_FILE);
    let mut bytes = std::fs::read(&file).expect("read");
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x5a;
    std::fs::write(&file, &bytes).expect("write");
    let out = env.skein(&["archive", "verify", d]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let issues = jsonl(&out);
    assert!(
        issues
            .iter()
            .any(|i| i["severity"] == "error" && i["path"] == MAIN_FILE),
        "{issues:?}"
    );
    assert!(
        issues
            .iter()
            .all(|i| i["code"].is_string() && i["problem"].is_string())
    );

    let out = env.skein(&[
        "archive",
        "verify",
        env.path("nowhere").to_str().expect("utf8"),
    ]);
    assert_eq!(out.status.code(), Some(2));
}

/// Without DIR, the maintenance commands use the archive the hook writes to:
/// `[archive] dir` in the config, else `$XDG_STATE_HOME/skein/archive`.
#[test]
fn maintenance_commands_default_to_the_configured_archive() {
    let env = Env::new();
    let default = env.path("state/skein/archive");
    let out = env.skein(&["archive", "--to", default.to_str().expect("utf8")]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = env.skein(&["archive", "verify"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Damage it: the command without DIR finds the damage in that archive.
    let file = default.join(MAIN_FILE);
    let mut bytes = std::fs::read(&file).expect("read");
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x5a;
    std::fs::write(&file, &bytes).expect("write");
    let out = env.skein(&["archive", "verify"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // The config's archive wins over the default.
    let elsewhere = env.path("elsewhere");
    let config = env.path(".config/skein/config.toml");
    std::fs::create_dir_all(config.parent().expect("parent")).expect("mkdir");
    let toml = format!("[archive]\ndir = {:?}\n", elsewhere.to_str().expect("utf8"));
    std::fs::write(&config, toml).expect("config");
    let out = env.skein(&["archive", "verify"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("no archive at {}", elsewhere.display())),
        "{}",
        stderr(&out)
    );
}

/// A torn frame (bytes past the last commit, as a kill -9 leaves them) is a warning for
/// `verify` and is cut by `repair`, which leaves the committed content alone.
#[test]
fn repair_cuts_a_torn_tail_and_rebuilds_the_index() {
    let env = Env::new();
    env.archive(&[]);
    let dir = env.archive_dir();
    let d = dir.to_str().expect("utf8");
    let file = dir.join(MAIN_FILE);
    let committed = std::fs::read(&file).expect("read");
    let before = env.cat(MAIN_FILE);
    append(&file, b"\x28\xb5\x2f\xfd torn frame");
    let out = env.skein(&["archive", "verify", d]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let issues = jsonl(&out);
    assert!(
        issues
            .iter()
            .any(|i| i["severity"] == "warning" && i["path"] == MAIN_FILE),
        "{issues:?}"
    );

    std::fs::remove_file(dir.join("archive-index.json")).expect("rm index");
    let out = env.skein(&["archive", "repair", d, "--rebuild-index"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = jsonl(&out);
    assert_eq!(report.len(), 1);
    assert_eq!(report[0]["checkpoints"], 2);
    assert_eq!(report[0]["truncated_bytes"], 15);
    assert_eq!(report[0]["index_entries"], 2);
    assert_eq!(std::fs::read(&file).expect("read"), committed);
    assert_eq!(env.cat(MAIN_FILE), before);
    let out = env.skein(&["archive", "verify", d]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn restore_round_trip() {
    let env = Env::new();
    env.archive(&[]);
    let dir = env.archive_dir();
    let target = env.path("restored");
    let (d, t) = (dir.to_str().expect("utf8"), target.to_str().expect("utf8"));
    let out = env.skein(&["archive", "restore", d, "--to", t, "--session", SID]);
    assert!(out.status.success(), "{}", stderr(&out));
    let rows = jsonl(&out);
    assert!(rows.iter().all(|r| r["status"] == "written"), "{rows:?}");
    let main = target.join(format!("-home-me-proj/{SID}.jsonl"));
    let agent = target.join(format!("-home-me-proj/{SID}/subagents/agent-{AID}.jsonl"));
    assert_eq!(
        std::fs::read(&main).expect("main"),
        std::fs::read(env.main_source()).expect("src")
    );
    assert_eq!(
        std::fs::read(&agent).expect("agent"),
        std::fs::read(env.agent_source()).expect("src")
    );
    let side: Value =
        serde_json::from_slice(&std::fs::read(agent.with_extension("meta.json")).expect("sidecar"))
            .expect("json");
    assert_eq!(side["agentType"], "Explore");
    assert_eq!(side["toolUseId"], "toolu_task");

    // Again: identical files are left alone.
    let out = env.skein(&["archive", "restore", d, "--to", t]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(jsonl(&out).iter().all(|r| r["status"] == "unchanged"));

    // A different file is a conflict unless --overwrite.
    std::fs::write(&main, b"{}\n").expect("write");
    let out = env.skein(&["archive", "restore", d, "--to", t, "--no-subagents"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read(&main).expect("main"), b"{}\n");
    let out = env.skein(&["archive", "restore", d, "--to", t, "--overwrite"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read(&main).expect("main"),
        std::fs::read(env.main_source()).expect("src")
    );
}

#[test]
fn compress_decompress_cat_round_trip() {
    let env = Env::new();
    let src = env.main_source();
    let original = std::fs::read(&src).expect("src");
    let plain = env.path("s.jsonl");
    std::fs::write(&plain, &original).expect("write");
    let p = plain.to_str().expect("utf8");

    let out = env.skein(&["compress", p]);
    assert!(out.status.success(), "{}", stderr(&out));
    let zst = env.path("s.jsonl.zst");
    let packed = std::fs::read(&zst).expect("zst");
    assert_eq!(&packed[..4], &[0x28, 0xb5, 0x2f, 0xfd]);
    assert_eq!(zstd::decode_all(&packed[..]).expect("zstd"), original);
    // An existing output is not replaced without --force.
    let out = env.skein(&["compress", p]);
    assert_eq!(out.status.code(), Some(2));
    let out = env.skein(&[
        "compress",
        p,
        "--zstd-level",
        "19",
        "--long",
        "--threads",
        "1",
        "-f",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = env.skein(&["compress", p, "--long=24", "-o", "other.zst"]);
    assert!(out.status.success(), "{}", stderr(&out));

    let back = env.path("back.jsonl");
    let z = zst.to_str().expect("utf8");
    let out = env.skein(&["decompress", z, "-o", back.to_str().expect("utf8")]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read(&back).expect("back"), original);
    std::fs::remove_file(&plain).expect("rm");
    let out = env.skein(&["decompress", z]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read(&plain).expect("plain"), original);
    let out = env.skein(&["decompress", z, "-o", "-"]);
    assert_eq!(out.stdout, original);

    // cat: compressed and plain files in order, and standard input.
    let other = env.path("other.zst");
    let out = env.skein(&["cat", z, p, other.to_str().expect("utf8")]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(out.stdout, [&original[..], &original, &original].concat());
    let out = env.skein_stdin(&["cat", "-"], Some(b"abc\n"));
    assert_eq!(out.stdout, b"abc\n");
    let out = env.skein_stdin(&["compress", "-"], Some(&original));
    assert_eq!(zstd::decode_all(&out.stdout[..]).expect("zstd"), original);
    // A missing file is reported; the others are still written.
    let out = env.skein(&["cat", "missing.jsonl", p]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(out.stdout, original);
}

#[test]
fn redact_on_the_way_in() {
    let env = Env::new();
    let source_before = std::fs::read(env.main_source()).expect("src");
    assert!(String::from_utf8_lossy(&source_before).contains(GH_TOKEN));
    env.archive(&["--redact", "--redact-level", "standard"]);
    let text = String::from_utf8(env.cat(MAIN_FILE)).expect("utf8");
    assert!(!text.contains(GH_TOKEN), "{text}");
    assert!(!text.contains(AWS_KEY), "{text}");
    assert!(text.contains("[REDACTED:github-token]"), "{text}");
    assert_eq!(text.lines().count(), 11);
    // The source is never changed.
    assert_eq!(
        std::fs::read(env.main_source()).expect("src"),
        source_before
    );
    let dir = env.archive_dir();
    let out = env.skein(&["archive", "verify", dir.to_str().expect("utf8")]);
    assert!(out.status.success());
}

#[test]
fn redact_on_the_way_in_uses_the_configs_rules() {
    let env = Env::new();
    let config = env.path(".config/skein");
    std::fs::create_dir_all(&config).expect("mkdir");
    std::fs::write(
        config.join("config.toml"),
        "[redaction]\ndisable = [\"github-token\"]\n",
    )
    .expect("config");
    env.archive(&["--redact", "--redact-level", "standard"]);
    let text = String::from_utf8(env.cat(MAIN_FILE)).expect("utf8");
    assert!(
        text.contains(GH_TOKEN),
        "the config switched the rule off: {text}"
    );
    assert!(!text.contains(AWS_KEY), "{text}");
}

#[test]
fn redact_flags_add_to_the_configs_rules() {
    // `--redact-disable` switches a rule off and `--redact-allow` keeps a match, as they do
    // for `export` and `skein redact` (one merge of flags over `[redaction]`).
    let env = Env::new();
    env.archive(&[
        "--redact",
        "--redact-disable",
        "github-token",
        "--redact-allow",
        &format!("^{AWS_KEY}$"),
    ]);
    let text = String::from_utf8(env.cat(MAIN_FILE)).expect("utf8");
    assert!(text.contains(GH_TOKEN), "the rule is off: {text}");
    assert!(text.contains(AWS_KEY), "the match is allowed: {text}");
    // Without `--redact` the rule flags are refused, not ignored.
    let out = env.skein(&["archive", "--redact-disable", "github-token"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn prune_on_the_way_in_reparents() {
    let env = Env::new();
    env.archive(&["--prune", "safe"]);
    let text = String::from_utf8(env.cat(MAIN_FILE)).expect("utf8");
    assert_eq!(text.lines().count(), 10, "{text}");
    assert!(!text.contains(r#""type":"progress""#));
    let a1: Value = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("json"))
        .find(|v| v["uuid"] == "a1")
        .expect("a1");
    assert_eq!(a1["parentUuid"], "u1");

    // New lines go through the same plan: a new progress record is dropped and its child
    // re-parented.
    let more = concat!(
        r#"{"type":"progress","uuid":"p2","parentUuid":"a5","timestamp":"2026-01-05T15:00:00.000Z","data":{"type":"hook_progress"}}"#,
        "\n",
        r#"{"type":"user","uuid":"u9","parentUuid":"p2","timestamp":"2026-01-05T15:00:01.000Z","message":{"role":"user","content":"more"}}"#,
        "\n"
    );
    append(&env.main_source(), more.as_bytes());
    let rows = env.archive(&["--prune", "safe"]);
    let main = by_kind(&rows, "main-session");
    assert_eq!(main["source_lines"], 2);
    assert_eq!(main["lines"], 1);
    let text = String::from_utf8(env.cat(MAIN_FILE)).expect("utf8");
    let last: Value = serde_json::from_str(text.lines().last().expect("line")).expect("json");
    assert_eq!(last["uuid"], "u9");
    assert_eq!(last["parentUuid"], "a5");
}

#[test]
fn unsafe_session_id_is_refused() {
    let env = Env::new();
    let evil_dir = env.path("evil/-p");
    std::fs::create_dir_all(&evil_dir).expect("mkdir");
    let evil = evil_dir.join("...jsonl");
    std::fs::write(
        &evil,
        br#"{"type":"user","uuid":"u1","timestamp":"2026-01-05T14:03:22.123Z","message":{"role":"user","content":"x"}}
"#,
    )
    .expect("write");
    let dir = env.archive_dir();
    let out = env.skein(&[
        "archive",
        evil.to_str().expect("utf8"),
        "--to",
        dir.to_str().expect("utf8"),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let rows = jsonl(&out);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["status"], "error");
    assert!(
        rows[0]["error"]
            .as_str()
            .expect("error")
            .contains("refusing"),
        "{rows:?}"
    );
    // Nothing was written: no archive file, no checkpoint, nothing next to the archive.
    let files = snapshot(&dir);
    assert!(
        files
            .keys()
            .all(|p| p.starts_with(dir.join("locks")) || p.ends_with("index.lock")),
        "{:?}",
        files.keys()
    );
    let mut top: Vec<String> = std::fs::read_dir(env.tmp.path())
        .expect("ls")
        .map(|e| e.expect("e").file_name().to_string_lossy().into_owned())
        .collect();
    top.sort();
    assert_eq!(top, ["archive", "claude", "evil"]);
    let mut evil_files: Vec<String> = std::fs::read_dir(env.path("evil"))
        .expect("ls")
        .map(|e| e.expect("e").file_name().to_string_lossy().into_owned())
        .collect();
    evil_files.sort();
    assert_eq!(evil_files, ["-p"]);
}

#[test]
fn retention_never_deletes_the_current_version() {
    let env = Env::new();
    env.archive(&[]);
    // Main session: rewritten as a superset (v1 is fully contained in v2, so it may go).
    let main_src = env.main_source();
    let mut grown = std::fs::read(&main_src).expect("src");
    grown.extend_from_slice(
        br#"{"type":"user","uuid":"u9","parentUuid":"a5","timestamp":"2026-01-05T15:00:00.000Z","message":{"role":"user","content":"more"}}
"#,
    );
    replace_file(&main_src, &grown);
    // Subagent: rewritten with different content (v1 is the only copy of its lines).
    let agent_src = env.agent_source();
    let agent_v1 = std::fs::read(&agent_src).expect("src");
    replace_file(
        &agent_src,
        br#"{"type":"user","uuid":"y1","timestamp":"2026-01-05T14:03:41.000Z","message":{"role":"user","content":"other"}}
"#,
    );
    let rows = env.archive(&[]);
    assert!(
        rows.iter().all(|r| r["status"] == "new-version"),
        "{rows:?}"
    );
    std::thread::sleep(std::time::Duration::from_millis(1100));

    let dir = env.archive_dir();
    let d = dir.to_str().expect("utf8");
    let out = env.skein(&["archive", "prune", d, "--keep-days", "0", "--dry-run"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let rows = jsonl(&out);
    assert!(
        rows.iter()
            .any(|r| r["action"] == "would-delete" && r["file"] == MAIN_FILE),
        "{rows:?}"
    );
    assert!(dir.join(MAIN_FILE).exists());

    let out = env.skein(&["archive", "prune", d, "--keep-days", "0"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let rows = jsonl(&out);
    assert!(
        rows.iter()
            .any(|r| r["action"] == "deleted" && r["file"] == MAIN_FILE),
        "{rows:?}"
    );
    assert!(
        rows.iter()
            .any(|r| r["action"] == "kept-only-copy" && r["file"] == AGENT_FILE),
        "{rows:?}"
    );
    assert!(!dir.join(MAIN_FILE).exists());
    // Current versions (however old) and the only copy of the old agent run stay.
    let v2 = |f: &str| f.replace(".jsonl.zst", ".v2.jsonl.zst");
    assert_eq!(env.cat(&v2(MAIN_FILE)), grown);
    assert_eq!(env.cat(AGENT_FILE), agent_v1);
    assert!(dir.join(v2(AGENT_FILE)).exists());
    let out = env.skein(&["archive", "verify", d]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// Writes `n` small subagent transcripts of session `sid` (alike, as real ones are), named
/// `agent-<prefix><i>.jsonl`, each with `lines` records.
fn write_agents(env: &Env, sid: &str, prefix: &str, n: usize, lines: usize) {
    let dir = env
        .projects()
        .join(format!("-home-me-proj/{sid}/subagents"));
    std::fs::create_dir_all(&dir).expect("mkdir");
    for i in 0..n {
        let id = format!("{prefix}{i:04}");
        let mut text = String::new();
        let mut parent = "null".to_owned();
        for j in 0..lines {
            let uuid = format!("\"{id}-{j:03}\"");
            let (kind, body) = if j % 2 == 0 {
                (
                    "user",
                    format!(
                        r#"{{"role":"user","content":"Search the repository for uses of helper_{i}_{j} and report file names."}}"#
                    ),
                )
            } else {
                (
                    "assistant",
                    format!(
                        r#"{{"id":"msg_{id}_{j}","role":"assistant","model":"claude-haiku-4-5","content":[{{"type":"text","text":"Found helper_{i}_{j} in src/lib.rs and src/util/mod.rs; nothing else uses it."}}],"usage":{{"input_tokens":{j},"output_tokens":12}}}}"#
                    ),
                )
            };
            writeln!(
                text,
                r#"{{"parentUuid":{parent},"isSidechain":true,"userType":"external","cwd":"/home/me/proj","sessionId":"{sid}","version":"2.1.3","gitBranch":"main","agentId":"{id}","type":"{kind}","message":{body},"uuid":{uuid},"timestamp":"2026-01-05T14:{:02}:{:02}.000Z"}}"#,
                i % 60,
                j % 60
            )
            .expect("write");
            parent = uuid;
        }
        std::fs::write(dir.join(format!("agent-{id}.jsonl")), text).expect("write agent");
    }
}

/// Files compressed with a trained dictionary, and files with a torn frame after their last
/// commit, are read by every command (`stats` here) through the archive's reader.
#[test]
fn every_command_reads_dictionary_frames_and_committed_lengths() {
    let env = Env::new();
    write_agents(&env, SID, "b", 40, 24);
    env.archive(&[]);
    let dir = env.archive_dir();
    let d = dir.to_str().expect("utf8");
    let out = env.skein(&["archive", "train-dict", d]);
    assert!(out.status.success(), "{}", stderr(&out));
    let r = &jsonl(&out)[0];
    assert!(
        r["installed"]["id"].is_u64(),
        "no dictionary installed: {r}"
    );

    write_agents(&env, SID, "c", 3, 30);
    let rows = env.archive(&[]);
    let new: Vec<&Value> = rows
        .iter()
        .filter(|r| r["agent_id"].as_str().is_some_and(|a| a.starts_with('c')))
        .collect();
    assert_eq!(new.len(), 3, "{rows:?}");
    let file = dir.join(new[0]["file"].as_str().expect("file"));
    assert!(new[0]["dict"].is_u64(), "dictionary not used: {}", new[0]);
    // A torn frame past the commit point, as a crash leaves it.
    append(&file, b"\x28\xb5\x2f\xfd torn");

    let f = file.to_str().expect("utf8");
    let out = env.skein(&["stats", "--format", "jsonl", f]);
    assert!(out.status.success(), "{}", stderr(&out));
    let st = &jsonl(&out)[0];
    assert_eq!(st["lines"], 30, "{st}");
    assert_eq!(st["invalid_lines"], 0, "{st}");
    assert_eq!(st["chain"]["nodes"], 30, "{st}");
    let out = env.skein(&["stats", "--format", "jsonl", d]);
    assert!(out.status.success(), "{}", stderr(&out));
    let all = jsonl(&out);
    assert_eq!(all.len(), 2 + 40 + 3, "{}", all.len());
    assert!(all.iter().all(|s| s["invalid_lines"] == 0));
}

#[test]
fn compact_and_train_dict_report_json() {
    let env = Env::new();
    env.archive(&[]);
    let dir = env.archive_dir();
    let d = dir.to_str().expect("utf8");
    let out = env.skein(&["archive", "compact", d, "--cold-after-days", "0"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let r = &jsonl(&out)[0];
    assert!(r["compacted"].is_u64() && r["bytes_before"].is_u64(), "{r}");
    assert_eq!(
        env.cat(MAIN_FILE),
        std::fs::read(env.main_source()).expect("src")
    );
    let out = env.skein(&["archive", "train-dict", d]);
    assert!(out.status.success(), "{}", stderr(&out));
    let r = &jsonl(&out)[0];
    assert!(r["installed"].is_null());
    assert!(r["skipped"].is_string());
    let out = env.skein(&["archive", "verify", d]);
    assert!(out.status.success());
}

#[test]
fn team_configs_are_archived_next_to_the_sessions() {
    use std::os::unix::fs::PermissionsExt as _;
    let env = Env::new();
    let team_dir = env.path("claude/teams/research");
    std::fs::create_dir_all(&team_dir).expect("mkdir");
    let config = format!(
        "{{\n  \"team_name\": \"research\",\n  \"members\": [\n    {{\"name\": \"alice\", \"agentId\": \"alice@research\", \"agentType\": \"Explore\", \"prompt\": \"use {GH_TOKEN}\"}}\n  ]\n}}\n"
    );
    std::fs::write(team_dir.join("config.json"), &config).expect("write");
    // Not a team: no config.json.
    std::fs::create_dir_all(env.path("claude/teams/empty")).expect("mkdir");
    let stored = env.archive_dir().join("teams/research/config.json");

    let rows = env.archive(&[]);
    let row = by_kind(&rows, "team-config");
    assert_eq!(
        (&row["team"], &row["status"], &row["file"]),
        (
            &Value::from("research"),
            &Value::from("created"),
            &Value::from("teams/research/config.json")
        )
    );
    assert_eq!(
        rows.iter().filter(|r| r["kind"] == "team-config").count(),
        1
    );
    assert_eq!(
        std::fs::read(&stored).expect("stored"),
        config.as_bytes(),
        "kept as is"
    );
    let mode = |p: &Path| std::fs::metadata(p).expect("md").permissions().mode() & 0o777;
    assert_eq!(mode(&stored), 0o600);
    assert_eq!(mode(&env.archive_dir().join("teams/research")), 0o700);
    assert_eq!(mode(&env.archive_dir().join("teams")), 0o700);

    // Again: unchanged, nothing rewritten. Then the team changes: the latest version replaces it.
    let before = std::fs::metadata(&stored)
        .expect("md")
        .modified()
        .expect("mtime");
    let rows = env.archive(&[]);
    assert_eq!(by_kind(&rows, "team-config")["status"], "unchanged");
    assert_eq!(
        std::fs::metadata(&stored)
            .expect("md")
            .modified()
            .expect("mtime"),
        before
    );
    let changed = config.replace("Explore", "general-purpose");
    std::fs::write(team_dir.join("config.json"), &changed).expect("write");
    let projects = env.projects();
    let rows = env.archive(&[projects.to_str().expect("utf8")]);
    assert_eq!(
        by_kind(&rows, "team-config")["status"],
        "updated",
        "found beside projects/"
    );
    assert_eq!(std::fs::read(&stored).expect("stored"), changed.as_bytes());

    // With --redact, the stored config is its JSON with the token replaced.
    let redacted_dir = env.path("redacted");
    let out = env.skein(&[
        "archive",
        "--to",
        redacted_dir.to_str().expect("utf8"),
        "--redact",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(redacted_dir.join("teams/research/config.json"))
        .expect("redacted config");
    assert!(!text.contains(GH_TOKEN), "{text}");
    let v: Value = serde_json::from_str(&text).expect("still JSON");
    assert_eq!(v["members"][0]["agentType"], "general-purpose");
}
