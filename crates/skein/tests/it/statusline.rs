//! `skein statusline` through the command line: realistic Claude Code input against a catalog
//! of `testdata/reports/blocks` (figures derived by hand in its README), a request appended
//! since the last index counted at once, garbage input, colours, the config's format,
//! concurrent instances, and `statusline install`.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common::{ok, report_dir, skein_env, stderr, stdout};
use skein_testkit::copy_dir;

const MAIN: &str = "b10c0001-0000-4000-8000-000000000001";
const NOW: &str = "2026-03-29T23:00:00Z";

/// A private HOME with the blocks fixture as its Claude projects tree, indexed into
/// `HOME/catalog.db`.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn indexed() -> Self {
        let dir = tempfile::tempdir().expect("tmp");
        copy_dir(
            &report_dir("blocks").join("projects"),
            &dir.path().join(".claude/projects"),
        );
        let h = Self { dir };
        let db = h.db();
        let projects = h.projects();
        ok(&skein_env(
            &["index", "-q", "--catalog", &db, &projects],
            h.dir.path(),
            &[("HOME", h.dir.path())],
        ));
        h
    }

    fn projects(&self) -> String {
        self.dir
            .path()
            .join(".claude/projects")
            .display()
            .to_string()
    }

    fn db(&self) -> String {
        self.dir.path().join("catalog.db").display().to_string()
    }

    fn transcript(&self) -> PathBuf {
        self.dir
            .path()
            .join(format!(".claude/projects/-home-me-blocks/{MAIN}.jsonl"))
    }

    /// `skein statusline --catalog DB --now NOW ARGS` with `input` on stdin and `env`.
    fn line(&self, args: &[&str], input: &[u8], env: &[(&str, &str)]) -> Output {
        let db = self.db();
        let mut all = vec!["statusline", "--catalog", &db, "--now", NOW];
        all.extend_from_slice(args);
        statusline(&all, self.dir.path(), input, env)
    }

    /// Claude Code's input for the fixture session.
    fn input(&self, extra: &str) -> Vec<u8> {
        format!(
            r#"{{"hook_event_name":"Status","session_id":"{MAIN}","transcript_path":"{}","cwd":"/home/me/blocks","model":{{"id":"claude-opus-4-7","display_name":"Opus 4.7"}},"workspace":{{"current_dir":"/home/me/blocks","project_dir":"/home/me/blocks"}},"version":"2.1.100","output_style":{{"name":"default"}}{extra}}}"#,
            self.transcript().display()
        )
        .into_bytes()
    }
}

/// `skein ARGS` in `cwd` with a private HOME (kept alive by the guard), `TZ=UTC`, no
/// `NO_COLOR`, output piped and stdin to be written.
fn skein_command(args: &[&str], cwd: &Path) -> (Command, tempfile::TempDir) {
    let home = tempfile::tempdir().expect("tempdir");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_skein"));
    cmd.args(args)
        .current_dir(cwd)
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_STATE_HOME")
        .env_remove("NO_COLOR")
        .env("HOME", home.path())
        .env("TZ", "UTC")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    (cmd, home)
}

/// Runs skein with `input` on stdin, `NO_COLOR` unset unless given.
fn statusline(args: &[&str], cwd: &Path, input: &[u8], env: &[(&str, &str)]) -> Output {
    let (mut cmd, _home) = skein_command(args, cwd);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn");
    let _ = child.stdin.take().expect("stdin").write_all(input);
    child.wait_with_output().expect("wait")
}

/// The one line printed (exit status 0 asserted).
fn the_line(out: &Output) -> String {
    let out = ok(out);
    let text = stdout(out);
    assert_eq!(text.lines().count(), 1, "one line: {text:?}");
    text.trim_end_matches('\n').to_owned()
}

const PLAIN: &[(&str, &str)] = &[("NO_COLOR", "1")];

#[test]
fn realistic_input_gives_the_hand_derived_line() {
    let h = Home::indexed();
    let cost = r#","cost":{"total_cost_usd":1.5,"total_duration_ms":45000},"context_window":{"context_window_size":200000,"used_percentage":45.2,"current_usage":{"input_tokens":100,"cache_creation_input_tokens":400,"cache_read_input_tokens":89500}}"#;
    let input = h.input(cost);
    // Berlin: today (03-30 local) holds request 9 only; block D is active.
    let berlin = [("NO_COLOR", "1"), ("TZ", "Europe/Berlin")];
    assert_eq!(
        the_line(&h.line(&[], &input, &berlin)),
        "Opus 4.7 · $1.50 session · $500.00 today · $550.00 block, 3h 00m left, $550.00/h · ctx 90k (45%)"
    );
    // UTC: today (03-29) holds requests 4-9; --timezone wins over TZ.
    assert_eq!(
        the_line(&h.line(&["--timezone", "UTC"], &input, &berlin)),
        "Opus 4.7 · $1.50 session · $555.56 today · $550.00 block, 3h 00m left, $550.00/h · ctx 90k (45%)"
    );
    // Without Claude Code's cost and context, skein's: the session's nine requests, and the
    // latest request's prompt (100,000,000 tokens of a 200,000 window).
    assert_eq!(
        the_line(&h.line(&["--format", "{session} {context}"], &h.input(""), PLAIN)),
        "$555.56 100.0M (50000%)"
    );
    // Colour unless NO_COLOR.
    let colored = the_line(&h.line(&[], &input, &[]));
    assert!(colored.contains("\x1b[36mOpus 4.7\x1b[0m"), "{colored:?}");
    assert!(colored.contains("\x1b[32m90k (45%)\x1b[0m"), "{colored:?}");
    // Two hours later no block is active (a group of the format drops out); no request today.
    let db = h.db();
    let late = statusline(
        &[
            "statusline",
            "--catalog",
            &db,
            "--now",
            "2026-03-30T03:30:00Z",
        ],
        h.dir.path(),
        &input,
        PLAIN,
    );
    assert_eq!(
        the_line(&late),
        "Opus 4.7 · $1.50 session · $0.00 today · ctx 90k (45%)"
    );
}

#[test]
fn a_request_appended_a_moment_ago_is_counted() {
    let h = Home::indexed();
    let input = h.input("");
    let fmt = ["--format", "{today} {block} {session}"];
    assert_eq!(
        the_line(&h.line(&fmt, &input, PLAIN)),
        "$555.56 $550.00 $555.56"
    );
    // Request 10: 2,000,000 input tokens of Opus 4.7 ($10) at 22:30Z, not indexed by anyone.
    let line = format!(
        "{}\n",
        r#"{"parentUuid":"a9","isSidechain":false,"userType":"external","cwd":"/home/me/blocks","sessionId":"b10c0001-0000-4000-8000-000000000001","version":"2.1.100","type":"assistant","requestId":"req_10","message":{"id":"msg_10","type":"message","role":"assistant","model":"claude-opus-4-7","content":[{"type":"text","text":"answer 10"}],"usage":{"input_tokens":2000000,"output_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}},"uuid":"a10","timestamp":"2026-03-29T22:30:00.000Z"}"#
    );
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(h.transcript())
        .expect("open");
    f.write_all(line.as_bytes()).expect("append");
    drop(f);
    assert_eq!(
        the_line(&h.line(&fmt, &input, PLAIN)),
        "$565.56 $560.00 $565.56"
    );
    // A subagent file of the session, new since the index, is read too ($1: 200,000 tokens).
    let agent = h
        .transcript()
        .with_file_name(MAIN)
        .join("subagents/agent-a77.jsonl");
    std::fs::create_dir_all(agent.parent().expect("dir")).expect("mkdir");
    std::fs::write(
        &agent,
        line.replace("msg_10", "msg_11")
            .replace("req_10", "req_11")
            .replace("2000000", "200000")
            .replace("\"isSidechain\":false", "\"isSidechain\":true"),
    )
    .expect("agent");
    assert_eq!(
        the_line(&h.line(&fmt, &input, PLAIN)),
        "$566.56 $561.00 $566.56"
    );

    // Any number of concurrent instances: all succeed with the same figures.
    let children: Vec<_> = (0..8)
        .map(|_| {
            let db = h.db();
            let args = [
                "statusline",
                "--catalog",
                &db,
                "--now",
                NOW,
                "--format",
                "{today}",
            ];
            let (mut cmd, home) = skein_command(&args, h.dir.path());
            cmd.env("NO_COLOR", "1");
            let mut child = cmd.spawn().expect("spawn");
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(&input)
                .expect("write");
            (child, home)
        })
        .collect();
    for (child, _home) in children {
        let out = child.wait_with_output().expect("wait");
        assert_eq!(the_line(&out), "$566.56", "{}", stderr(&out));
    }
}

#[test]
fn garbage_input_or_a_broken_catalog_gives_the_minimal_line() {
    let dir = tempfile::tempdir().expect("tmp");
    let cwd = dir.path().join("my-app");
    std::fs::create_dir(&cwd).expect("mkdir");
    for input in [
        &b"not json"[..],
        b"",
        b"[1,2]",
        b"{\"model\":",
        b"\xff\xfe\x00",
    ] {
        let out = statusline(&["statusline"], &cwd, input, PLAIN);
        assert_eq!(the_line(&out), "Claude Code · my-app", "{input:?}");
        assert!(stderr(&out).contains("statusline:"), "{}", stderr(&out));
    }
    // A catalog that cannot be opened (a directory): model and directory, exit 0.
    let input = br#"{"model":{"display_name":"Opus 4.7"},"workspace":{"current_dir":"/w/app"},"transcript_path":"/nonexistent/x.jsonl"}"#;
    let bad = dir.path().display().to_string();
    let out = statusline(&["statusline", "--catalog", &bad], &cwd, input, PLAIN);
    assert_eq!(the_line(&out), "Opus 4.7 · app");
    // A bad format string: the minimal line, and the reason on stderr.
    let db = dir.path().join("c.db").display().to_string();
    let out = statusline(
        &["statusline", "--catalog", &db, "--format", "{nope}"],
        &cwd,
        input,
        PLAIN,
    );
    assert_eq!(the_line(&out), "Opus 4.7 · app");
    assert!(
        stderr(&out).contains("unknown field {nope}"),
        "{}",
        stderr(&out)
    );
    // An empty catalog and a missing transcript are no errors: nothing spent yet.
    let out = statusline(&["statusline", "--catalog", &db], &cwd, input, PLAIN);
    assert_eq!(the_line(&out), "Opus 4.7 · - session · $0.00 today");
}

#[test]
fn the_config_chooses_the_format() {
    let h = Home::indexed();
    let config = h.dir.path().join("xdg");
    std::fs::create_dir_all(config.join("skein")).expect("mkdir");
    std::fs::write(
        config.join("skein/config.toml"),
        "blocking = false\n[statusline]\nformat = \"{dir}: {today} [{left} left]\"\ntimezone = \"Europe/Berlin\"\n",
    )
    .expect("write");
    let xdg = config.display().to_string();
    let env = [("NO_COLOR", "1"), ("XDG_CONFIG_HOME", xdg.as_str())];
    assert_eq!(
        the_line(&h.line(&[], &h.input(""), &env)),
        "blocks: $500.00 3h 00m left"
    );
    // --format wins over the config.
    assert_eq!(
        the_line(&h.line(&["--format", "{model}"], &h.input(""), &env)),
        "Opus 4.7"
    );
}

#[test]
fn install_sets_claude_codes_status_line_once() {
    let dir = tempfile::tempdir().expect("tmp");
    let settings = dir.path().join("settings.json");
    std::fs::write(&settings, "{\"model\": \"opus\"}\n").expect("write");
    let s = settings.display().to_string();
    let out = ok(&skein_env(
        &["statusline", "install", "--settings", &s],
        dir.path(),
        &[],
    ))
    .clone();
    assert!(
        stdout(&out).contains("status line set in"),
        "{}",
        stdout(&out)
    );
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&settings).expect("read")).expect("json");
    assert_eq!(v["statusLine"]["command"], "skein statusline");
    assert_eq!(v["model"], "opus");
    let again = ok(&skein_env(
        &["statusline", "install", "--settings", &s],
        dir.path(),
        &[],
    ))
    .clone();
    assert!(
        stdout(&again).contains("nothing to do"),
        "{}",
        stdout(&again)
    );
    let out = ok(&skein_env(
        &["statusline", "uninstall", "--settings", &s],
        dir.path(),
        &[],
    ))
    .clone();
    assert!(stdout(&out).contains("removed"), "{}", stdout(&out));
}
