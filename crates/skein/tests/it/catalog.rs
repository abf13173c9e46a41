//! The catalog through the command line: `skein index`, `sessions`, `search`, usage from the
//! catalog, an archived-then-deleted session, concurrent writers and `kill -9`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;
use skein_catalog::{Catalog, CatalogOptions, CatalogStats};

use crate::common::{jsonl, ok, skein_env, stderr, stdout, testdata};

const A: &str = "11111111-1111-4111-8111-111111111111";

/// A private HOME with `.claude/projects` holding the catalog fixture history; the state
/// (catalog, archive) under `HOME/.local/state/skein`.
struct Home {
    dir: tempfile::TempDir,
}

use skein_testkit::copy_dir;

impl Home {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tmp");
        copy_dir(
            &testdata("catalog/projects"),
            &dir.path().join(".claude/projects"),
        );
        Self { dir }
    }

    fn projects(&self) -> PathBuf {
        self.dir.path().join(".claude/projects")
    }

    fn state(&self) -> PathBuf {
        self.dir.path().join(".local/state/skein")
    }

    fn run(&self, args: &[&str]) -> std::process::Output {
        skein_env(args, self.dir.path(), &[("HOME", self.dir.path())])
    }

    fn rows(&self, args: &[&str]) -> Vec<Value> {
        jsonl(ok(&self.run(args)))
    }
}

fn stats(db: &Path) -> CatalogStats {
    let c = Catalog::open(db, CatalogOptions::default()).expect("open");
    assert_eq!(c.integrity_check().expect("check"), Ok(()));
    c.stats().expect("stats")
}

#[test]
fn index_sessions_and_search_with_the_default_catalog() {
    let h = Home::new();
    let out = ok(&h.run(&["index"])).clone();
    assert!(
        stderr(&out).contains("3 indexed from the start"),
        "{}",
        stderr(&out)
    );
    assert!(h.state().join("catalog.db").is_file());
    let hits = h.rows(&["search", "pangolin", "--format", "jsonl"]);
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0]["session_id"], A);
    assert_eq!(hits[0]["agent_id"], "a1b2c3");
    assert_eq!(hits[0]["kind"], "prompt");
    assert_eq!(hits[0]["snippet"], "Search for the «pangolin» config");
    let bash = h.rows(&["search", "quokka", "--tool", "Bash", "--kind", "tool_use"]);
    assert_eq!(bash.len(), 1);
    assert!(h.rows(&["search", "quokka", "--kind", "prompt"]).is_empty());
    let sessions = h.rows(&["sessions"]);
    let ids: Vec<&str> = sessions
        .iter()
        .filter_map(|r| r["session_id"].as_str())
        .collect();
    assert_eq!(ids, ["22222222-2222-4222-8222-222222222222", A]);
    let keys: Vec<&String> = sessions[0].as_object().expect("object").keys().collect();
    assert_eq!(
        keys,
        [
            "session_id",
            "project",
            "cwd",
            "title",
            "first_timestamp",
            "last_timestamp",
            "prompts",
            "messages",
            "tool_calls",
            "subagents",
            "models",
            "cost_usd",
            "git_branch",
            "archived",
            "path"
        ]
    );
    // Claude Code resumes a session only from its directory: the hints change to it first
    // (the binary runs in a temp dir).
    let table = stdout(ok(&h.run(&["sessions", "--format", "table"])));
    assert!(
        table.contains("resume one: cd /home/me/widgets && claude --resume 22222222-"),
        "{table}"
    );
    let grouped = stdout(ok(&h.run(&["search", "zeppelin", "--format", "table"])));
    assert!(
        grouped.contains(&format!("cd /home/me/widgets && claude --resume {A}")),
        "{grouped}"
    );
    assert_eq!(hits[0]["cwd"], "/home/me/widgets");
    // A bad query is a clear error.
    let bad = h.run(&["search", "\"open"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("unclosed quote"), "{}", stderr(&bad));
}

#[test]
fn usage_from_the_catalog_is_byte_for_byte_the_scan() {
    let h = Home::new();
    copy_dir(&testdata("reports/usage/projects"), &h.projects());
    for kind in ["daily", "weekly", "monthly", "session", "model"] {
        for format in ["jsonl", "table"] {
            let cat = ok(&h.run(&["usage", kind, "--format", format]))
                .stdout
                .clone();
            let scan = ok(&h.run(&["usage", kind, "--format", format, "--no-catalog"]))
                .stdout
                .clone();
            assert_eq!(
                String::from_utf8_lossy(&cat),
                String::from_utf8_lossy(&scan)
            );
        }
    }
    assert!(
        h.state().join("catalog.db").is_file(),
        "usage keeps the catalog current"
    );
    // Zones, ranges and prices the usage groups answer (whole 15-minute buckets), and ones they
    // cannot (a zone 7 minutes off UTC, an instant inside a bucket, a long-context band moved by
    // --pricing), which take every copy instead: the same bytes either way.
    let pricing = h.dir.path().join("prices.json");
    std::fs::write(
        &pricing,
        r#"{"models":[{"name":"opus","match":["claude-opus-4-7"],"input":5,"output":25,"cache_write_5m":6.25,"cache_write_1h":10,"cache_read":0.5,"long_context":{"threshold":1000,"input":10,"output":37.5,"cache_write_5m":12.5,"cache_write_1h":20,"cache_read":1}}]}"#,
    )
    .expect("write prices");
    let pricing = pricing.to_str().expect("utf8");
    for extra in [
        &["daily", "--timezone", "+05:30", "--breakdown"][..],
        &["weekly", "--timezone", "-03:30", "--since", "2026-06-01"],
        &["monthly", "--timezone", "+00:07"],
        &["daily", "--since", "2026-06-01T00:07:00Z"],
        &["model", "--pricing", pricing],
        &["session", "--until", "2026-06-07"],
        // Blocks take every copy from the catalog (each request's time): the scan's blocks,
        // active block, gaps and projection.
        &["blocks", "--now", "2026-06-07T12:30:00Z"],
        &["blocks", "--now", "2026-06-08T10:30:00Z", "--active"],
        &[
            "blocks",
            "--now",
            "2026-06-08T10:30:00Z",
            "--gaps",
            "--timezone",
            "+05:30",
        ],
    ] {
        for format in ["jsonl", "table"] {
            let mut args = vec!["usage"];
            args.extend_from_slice(extra);
            args.extend(["--format", format]);
            let cat = ok(&h.run(&args)).stdout.clone();
            args.push("--no-catalog");
            let scan = ok(&h.run(&args)).stdout.clone();
            assert_eq!(
                String::from_utf8_lossy(&cat),
                String::from_utf8_lossy(&scan),
                "{extra:?}"
            );
        }
    }
}

/// `usage --no-catalog` scans each file while the tree is still being listed, and reports what
/// the catalog reports: with a legacy sibling agent (its session read from the record inside),
/// a plain zstd copy beside its transcript (the plain file is the one counted), and then a
/// transcript that cannot be read (named on stderr, its session left out, exit status 2; the
/// catalog's refresh fails on it too, so that side lists the tree and scans what it lacks).
#[test]
fn usage_while_listing_reports_what_the_catalog_reports() {
    let h = Home::new();
    copy_dir(&testdata("reports/usage/projects"), &h.projects());
    let beta = h.projects().join("-home-me-beta");
    std::fs::write(
        beta.join("agent-legacy7.jsonl"),
        concat!(
            r#"{"type":"assistant","isSidechain":true,"sessionId":"sess-b1","uuid":"l1","timestamp":"2026-06-07T12:30:00.000Z","requestId":"req_l1","message":{"id":"msg_l1","model":"claude-opus-4-7","content":[],"usage":{"input_tokens":7,"output_tokens":70}}}"#,
            "\n"
        ),
    )
    .expect("legacy agent");
    let b2 = std::fs::read(beta.join("sess-b2.jsonl")).expect("read");
    let doubled = [b2.as_slice(), b2.as_slice()].concat();
    std::fs::write(
        beta.join("sess-b2.jsonl.zst"),
        zstd::encode_all(doubled.as_slice(), 3).expect("zstd"),
    )
    .expect("zstd copy");
    let compare = |extra: &[&str], status: i32| {
        for kind in ["daily", "session"] {
            let mut args = vec!["usage", kind, "--format", "jsonl"];
            args.extend_from_slice(extra);
            let cat = h.run(&args);
            args.push("--no-catalog");
            let scan = h.run(&args);
            args.extend(["-j", "1"]);
            let one = h.run(&args);
            for out in [&cat, &scan, &one] {
                assert_eq!(out.status.code(), Some(status), "{}", stderr(out));
            }
            assert_eq!(stdout(&cat), stdout(&scan), "{kind} {extra:?}");
            assert_eq!(stdout(&one), stdout(&scan), "{kind} {extra:?}");
            assert_eq!(stderr(&one), stderr(&scan), "{kind} {extra:?}");
        }
    };
    compare(&[], 0);
    compare(&["--project", "beta"], 0);
    let session = stdout(ok(&h.run(&[
        "usage",
        "session",
        "--format",
        "jsonl",
        "--no-catalog",
    ])));
    assert!(session.contains("\"session_id\":\"sess-b1\""), "{session}");
    std::os::unix::fs::symlink("/nonexistent/gone.jsonl", beta.join("sess-gone.jsonl"))
        .expect("symlink");
    compare(&[], 2);
    let scan = h.run(&["usage", "session", "--format", "jsonl", "--no-catalog"]);
    assert!(
        stderr(&scan).contains("sess-gone.jsonl"),
        "{}",
        stderr(&scan)
    );
    assert_eq!(stdout(&scan), session, "the other sessions as before");
}

/// A root given relatively (`skein usage daily .`): the sessions come from the catalog, named
/// from the root as a listing of it names them, so warnings and output are the scan's.
#[test]
fn usage_under_a_relative_root_names_files_as_the_listing_does() {
    let h = Home::new();
    let widgets = h.projects().join("-home-me-widgets");
    // Usage lines that cannot be counted (not JSON; no timestamp): warnings name their files.
    let mut main = std::fs::OpenOptions::new()
        .append(true)
        .open(widgets.join(format!("{A}.jsonl")))
        .expect("open");
    std::io::Write::write_all(
        &mut main,
        b"{\"type\":\"assistant\",\"message\":{\"usage\": oops\n\
          {\"type\":\"assistant\",\"message\":{\"id\":\"m9\",\"usage\":{\"input_tokens\":1}}}\n",
    )
    .expect("append");
    drop(main);
    // An absolute root named with a `.`: the listing keeps it in the names it gives.
    let dotted = format!("{}/./.claude/projects", h.dir.path().display());
    let roots = [
        ".claude/projects",
        ".claude/projects/",
        "./.claude//projects",
        ".claude/projects/-home-me-widgets",
        "../",
        &dotted,
    ];
    for root in roots {
        // The projects directory, given as `../` from inside one of its projects.
        let (cwd, root) = match root {
            "../" => (h.dir.path().join(".claude/projects/-home-me-other"), "../"),
            r => (h.dir.path().to_path_buf(), r),
        };
        let run = |args: &[&str]| skein_env(args, &cwd, &[("HOME", h.dir.path())]);
        for args in [
            &["usage", "daily", "--format", "jsonl"][..],
            &["usage", "session", "--format", "jsonl", "--verbose"],
            // Every copy from the catalog (blocks take no pre-summed groups).
            &[
                "usage",
                "blocks",
                "--format",
                "jsonl",
                "--now",
                "2026-06-01T00:00:00Z",
            ],
            &[
                "usage",
                "daily",
                "--project",
                "widgets",
                "--format",
                "table",
            ],
        ] {
            // Twice: the first refresh lists the tree, the second takes the kept listing.
            for _ in 0..2 {
                let mut with_root = args.to_vec();
                with_root.push(root);
                let cat = run(&with_root);
                with_root.push("--no-catalog");
                let scan = run(&with_root);
                assert_eq!(stdout(&cat), stdout(&scan), "{root} {args:?}");
                assert_eq!(stderr(&cat), stderr(&scan), "{root} {args:?}");
                assert!(
                    stderr(&cat).contains(&format!("{A}.jsonl:")),
                    "{root} {args:?}: {}",
                    stderr(&cat)
                );
            }
        }
    }
    assert!(h.state().join("catalog.db").is_file());
}

/// Polls until `done` holds (a background process's work), at most 60 s.
fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !done() {
        assert!(start.elapsed() < Duration::from_secs(60), "never: {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The `--if-idle` lock of the default catalog is free: no background `skein index` runs.
fn index_idle(h: &Home) -> bool {
    let lock = skein_catalog::index_lock_path(&h.state().join("catalog.db"));
    skein_store::FileLock::acquire(&lock, Duration::ZERO).is_ok()
}

/// A catalog further behind than `[catalog] inline_max_bytes`: `usage` scans (same output),
/// says so, and indexes in the background (`[catalog] background`), so the next run answers
/// from the catalog; without the background index nothing is written.
#[test]
fn usage_far_ahead_of_the_catalog_scans_and_indexes_in_the_background() {
    for background in [true, false] {
        let h = Home::new();
        let config = h.dir.path().join(".config/skein/config.toml");
        std::fs::create_dir_all(config.parent().expect("dir")).expect("mkdir");
        std::fs::write(
            &config,
            format!("[catalog]\ninline_max_bytes = 100\nbackground = {background}\n"),
        )
        .expect("config");
        let scan = ok(&h.run(&["usage", "daily", "--format", "jsonl", "--no-catalog"]))
            .stdout
            .clone();
        let first = ok(&h.run(&["usage", "daily", "--format", "jsonl"])).clone();
        assert_eq!(stdout(&first), String::from_utf8_lossy(&scan));
        let said = stderr(&first);
        assert!(
            said.contains("not in the catalog yet: scanned them"),
            "{said}"
        );
        let db = h.state().join("catalog.db");
        if background {
            assert!(said.contains("indexing them in the background"), "{said}");
            // Until it has caught up, each run scans (and starts one that exits at once);
            // then the catalog covers the input: no note, the same bytes.
            eventually("the background index", || {
                let again = ok(&h.run(&["usage", "daily", "--format", "jsonl"])).clone();
                assert_eq!(stdout(&again), String::from_utf8_lossy(&scan));
                stderr(&again).is_empty()
            });
            eventually("no background index left", || index_idle(&h));
            assert_eq!(stats(&db).sources, 3);
        } else {
            assert!(
                said.contains("`skein index` catches the catalog up"),
                "{said}"
            );
            assert!(!skein_catalog::index_lock_path(&db).exists());
            assert_eq!(stats(&db).sources, 0, "nothing indexed");
            // Under the bound, the catalog is brought up to date before the answer.
            std::fs::write(&config, "[catalog]\nbackground = false\n").expect("config");
            let r = ok(&h.run(&["usage", "daily", "--format", "jsonl"])).clone();
            assert_eq!(stdout(&r), String::from_utf8_lossy(&scan));
            assert_eq!(stderr(&r), "");
            assert_eq!(stats(&db).sources, 3);
        }
    }
}

/// `skein index --if-idle` exits at once while another one holds its lock, and indexes when
/// none does.
#[test]
fn index_if_idle_leaves_the_work_to_the_one_running() {
    let h = Home::new();
    let db = h.state().join("catalog.db");
    std::fs::create_dir_all(h.state()).expect("mkdir");
    // The lock file docs/catalog.md names.
    let held =
        skein_store::FileLock::acquire(h.state().join("catalog.db.index-lock"), Duration::ZERO)
            .expect("lock");
    ok(&h.run(&["index", "-q", "--if-idle"]));
    assert!(!db.exists(), "nothing done while another holds the lock");
    drop(held);
    ok(&h.run(&["index", "-q", "--if-idle"]));
    assert_eq!(stats(&db).sources, 3);
}

#[test]
fn an_archived_then_deleted_session_keeps_its_identity() {
    let h = Home::new();
    ok(&h.run(&["index", "-q"]));
    let archive = h.state().join("archive");
    ok(&h.run(&["archive", "-q", "--to", archive.to_str().expect("utf8")]));
    std::fs::remove_dir_all(h.projects()).expect("rm");
    std::fs::create_dir_all(h.projects()).expect("mkdir");
    // The default scope is the projects roots and the default archive.
    let hits = h.rows(&["search", "axolotl"]);
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0]["session_id"], A);
    assert_eq!(hits[0]["agent_id"], "a1b2c3");
    assert_eq!(
        hits[0]["snippet"],
        "Found the «axolotl» setting in config.toml"
    );
    assert!(
        hits[0]["path"]
            .as_str()
            .expect("path")
            .ends_with(".jsonl.zst")
    );
    let flamingo = h.rows(&["search", "flamingo"]);
    assert_eq!(flamingo.len(), 1);
    assert_eq!(flamingo[0]["uuid"], "a-u1");
    let sessions = h.rows(&["sessions", "--project", "widgets"]);
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0]["session_id"], A);
    assert_eq!(sessions[0]["archived"], true);
    assert_eq!(sessions[0]["subagents"], 1);
    assert_eq!(sessions[0]["title"], "Fix the authentication bug");
    assert_eq!(hits[0]["archived"], true);
    // The resume hint restores the session first; run as printed, it brings the transcripts
    // back where `claude --resume` finds them.
    let table = stdout(ok(&h.run(&[
        "sessions",
        "--project",
        "widgets",
        "--format",
        "table",
    ])));
    let hint = table
        .lines()
        .find_map(|l| l.strip_prefix("resume one: "))
        .expect("hint");
    let steps: Vec<&str> = hint.split(" && ").collect();
    assert_eq!(
        steps[1..],
        ["cd /home/me/widgets", &format!("claude --resume {A}")],
        "{hint}"
    );
    let restore: Vec<&str> = steps[0].split(' ').collect();
    assert_eq!(
        restore[..4],
        ["skein", "archive", "restore", "--session"],
        "{hint}"
    );
    let grouped = stdout(ok(&h.run(&["search", "axolotl", "--format", "table"])));
    assert!(grouped.contains(steps[0]), "{grouped}");
    ok(&h.run(&restore[1..]));
    let main = h.projects().join(format!("-home-me-widgets/{A}.jsonl"));
    assert!(main.is_file(), "{hint}");
    let agent = h
        .projects()
        .join(format!("-home-me-widgets/{A}/subagents/agent-a1b2c3.jsonl"));
    assert!(agent.is_file(), "{hint}");
}

/// A tree of `files` transcripts of about `lines` lines each, with unique words.
fn synthetic_tree(root: &Path, files: usize, lines: usize) {
    for f in 0..files {
        let dir = root.join(format!("-home-me-p{}", f % 3));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let sid = format!("00000000-0000-4000-8000-{f:012}");
        let mut text = String::new();
        for l in 0..lines {
            let ts = format!(
                "2026-04-{:02}T10:{:02}:{:02}.000Z",
                1 + f % 28,
                l / 60 % 60,
                l % 60
            );
            if l % 2 == 0 {
                let _ = write!(
                    text,
                    r#"{{"type":"user","uuid":"u{f}-{l}","timestamp":"{ts}","sessionId":"{sid}","message":{{"role":"user","content":"prompt number {l} of file {f} word{f}x{l} {pad}"}}}}"#,
                    pad = "lorem ipsum dolor sit amet ".repeat(8)
                );
            } else {
                let _ = write!(
                    text,
                    r#"{{"type":"assistant","uuid":"a{f}-{l}","timestamp":"{ts}","sessionId":"{sid}","requestId":"r{f}-{l}","message":{{"id":"m{f}-{l}","model":"claude-sonnet-4-5","content":[{{"type":"text","text":"reply {l} {pad}"}},{{"type":"tool_use","id":"t{f}-{l}","name":"Bash","input":{{"command":"echo {l}"}}}}],"usage":{{"input_tokens":{l},"output_tokens":7}}}}}}"#,
                    pad = "consectetur adipiscing elit ".repeat(8)
                );
            }
            text.push('\n');
        }
        std::fs::write(dir.join(format!("{sid}.jsonl")), text).expect("write");
    }
}

fn index_cmd(root: &Path, db: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_skein"));
    crate::common::hermetic(&mut cmd, root)
        .args(["index", "-q", "--catalog"])
        .arg(db)
        .arg(root)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    cmd
}

/// Deterministic pseudo-random numbers (xorshift), so a failure can be replayed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

#[test]
fn kill_9_at_any_point_leaves_a_usable_catalog() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path().join("projects");
    synthetic_tree(&root, 24, 1500);
    let reference = dir.path().join("reference.db");
    let out = index_cmd(&root, &reference).output().expect("index");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let want = stats(&reference);
    let db = dir.path().join("killed.db");
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut max_ms = 40;
    let mut finished = 0;
    for trial in 0..25 {
        // Every 5th trial appends to a file first, so kills also land in appends.
        if trial % 5 == 4 {
            let f = root.join("-home-me-p0/00000000-0000-4000-8000-000000000000.jsonl");
            let line = format!(
                "{{\"type\":\"user\",\"timestamp\":\"2026-04-01T11:00:00.000Z\",\"message\":{{\"content\":\"late{trial}\"}}}}\n"
            );
            let mut text = std::fs::read(&f).expect("read");
            text.extend_from_slice(line.as_bytes());
            std::fs::write(&f, text).expect("append");
        }
        let mut child = index_cmd(&root, &db).spawn().expect("spawn");
        std::thread::sleep(Duration::from_millis(rng.below(max_ms)));
        if child.try_wait().expect("wait").is_some() {
            finished += 1;
            max_ms = (max_ms / 2).max(5);
        } else {
            child.kill().expect("kill -9");
            child.wait().expect("reap");
            max_ms = (max_ms + 20).min(400);
        }
        // Whatever the point, the catalog opens and is consistent.
        stats(&db);
    }
    assert!(finished < 25, "no run was killed");
    // The next run completes, with the totals of an index that was never killed (plus the
    // appended lines, indexed into the reference too).
    let out = index_cmd(&root, &db).output().expect("index");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = index_cmd(&root, &reference).output().expect("index");
    assert!(out.status.success());
    let (got, want2) = (stats(&db), stats(&reference));
    assert!(want2.docs > want.docs);
    assert_eq!(
        (
            got.sources,
            got.docs,
            got.requests,
            got.tool_calls,
            got.indexed_bytes
        ),
        (
            want2.sources,
            want2.docs,
            want2.requests,
            want2.tool_calls,
            want2.indexed_bytes
        )
    );
}

#[test]
fn concurrent_index_processes_agree() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path().join("projects");
    synthetic_tree(&root, 12, 600);
    let reference = dir.path().join("reference.db");
    assert!(
        index_cmd(&root, &reference)
            .status()
            .expect("index")
            .success()
    );
    let db = dir.path().join("shared.db");
    let children: Vec<_> = (0..4)
        .map(|_| index_cmd(&root, &db).spawn().expect("spawn"))
        .collect();
    for c in children {
        let out = c.wait_with_output().expect("wait");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let (got, want) = (stats(&db), stats(&reference));
    assert_eq!(
        (got.sources, got.docs, got.requests, got.indexed_bytes),
        (want.sources, want.docs, want.requests, want.indexed_bytes)
    );
}
