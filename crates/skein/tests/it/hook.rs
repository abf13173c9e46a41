//! `skein hook` and `skein hooks …` run for real: real hook JSON (the fixtures of
//! `crates/skein-hook/tests/fixtures/events`) piped into the binary, with `HOME`,
//! `CLAUDE_CONFIG_DIR`, `XDG_STATE_HOME` and `XDG_CONFIG_HOME` pointing into a temp dir.

use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

const SID: &str = "3f0c5d2e-8a1b-4c7d-9e2f-0a1b2c3d4e5f";
const AGENT: &str = "a4d2c8f1e0b3a297";
const PROMPT: &str = "Fix the off-by-one in the line splitter and add a regression test.";
const SECRET: &str = "ghp_R8x2Lk9QwZt4Vb7Nc1Md5Pf3Hs6Jg0Ya2Xe8";

/// A fake home with Claude's projects dir, skein's state and config dirs.
pub(crate) struct Env {
    dir: tempfile::TempDir,
    home: PathBuf,
    claude: PathBuf,
    pub(crate) projects: PathBuf,
    pub(crate) state: PathBuf,
    config_home: PathBuf,
    /// The hook's working directory (the "project").
    work: PathBuf,
}

impl Env {
    fn new() -> Self {
        Self::with_config("lock_timeout_ms = 60000\n")
    }

    /// `config` becomes the user config file (`$XDG_CONFIG_HOME/skein/config.toml`).
    pub(crate) fn with_config(config: &str) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = dir.path().join("home");
        let claude = home.join(".claude");
        let projects = claude.join("projects");
        let config_home = dir.path().join("xdg-config");
        let work = dir.path().join("work");
        fs::create_dir_all(projects.join("-w").join(SID).join("subagents")).expect("mkdir");
        fs::create_dir_all(config_home.join("skein")).expect("mkdir");
        fs::create_dir_all(&work).expect("mkdir");
        fs::write(config_home.join("skein/config.toml"), config).expect("config");
        Self {
            state: dir.path().join("xdg-state").join("skein"),
            dir,
            home,
            claude,
            projects,
            config_home,
            work,
        }
    }

    fn transcript(&self) -> PathBuf {
        self.projects.join("-w").join(format!("{SID}.jsonl"))
    }

    fn agent_transcript(&self, agent: &str) -> PathBuf {
        self.projects
            .join("-w")
            .join(SID)
            .join("subagents")
            .join(format!("agent-{agent}.jsonl"))
    }

    fn archive(&self) -> PathBuf {
        self.state.join("archive")
    }

    pub(crate) fn cmd(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_skein"));
        c.current_dir(&self.work)
            .env("HOME", &self.home)
            .env("CLAUDE_CONFIG_DIR", &self.claude)
            .env("XDG_STATE_HOME", self.dir.path().join("xdg-state"))
            .env("XDG_CONFIG_HOME", &self.config_home)
            .env_remove("CLAUDE_PROJECT_DIR");
        c
    }

    /// Runs `skein hook [extra…]` with `input` on stdin.
    pub(crate) fn hook_with(&self, input: &[u8], extra: &[&str]) -> Output {
        let mut child = self
            .cmd()
            .arg("hook")
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn skein hook");
        let mut stdin = child.stdin.take().expect("stdin");
        // The hook may exit before reading everything (e.g. on a huge input): ignore EPIPE.
        let _ = stdin.write_all(input);
        drop(stdin);
        child.wait_with_output().expect("wait")
    }

    pub(crate) fn hook(&self, input: &str) -> Output {
        self.hook_with(input.as_bytes(), &[])
    }

    /// The fixture `name` with `@PROJECTS@` pointing into this environment.
    pub(crate) fn event(&self, name: &str) -> String {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../skein-hook/tests/fixtures/events")
            .join(format!("{name}.json"));
        fs::read_to_string(&p)
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
            .replace("@PROJECTS@", &self.projects.to_string_lossy())
    }

    /// A fixture with some fields replaced.
    pub(crate) fn event_with(&self, name: &str, fields: &Value) -> String {
        let mut ev: Value = serde_json::from_str(&self.event(name)).expect("fixture json");
        for (k, v) in fields.as_object().expect("object") {
            ev[k] = v.clone();
        }
        ev.to_string()
    }

    fn request_dirs(&self) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = fs::read_dir(self.state.join("requests").join(SID))
            .map(|rd| {
                rd.map(|e| e.expect("entry").path())
                    .filter(|p| p.is_dir())
                    .collect()
            })
            .unwrap_or_default();
        out.sort();
        out
    }

    fn current_request_dir(&self) -> PathBuf {
        let map = read_json(&self.state.join("sessions.json"));
        let id = map["sessions"][SID]["request"].as_str().expect("request");
        self.state.join("requests").join(SID).join(id)
    }

    /// Every audit line of the session, in file order per directory.
    pub(crate) fn audit(&self) -> Vec<Value> {
        let root = self.state.join("requests").join(SID);
        let mut lines = read_lines(&root.join("hook-events.jsonl"));
        for d in self.request_dirs() {
            lines.extend(read_lines(&d.join("hook-events.jsonl")));
        }
        lines
    }

    pub(crate) fn log(&self) -> Vec<Value> {
        read_lines(&self.state.join("logs/hook.log"))
    }

    pub(crate) fn log_errors(&self) -> Vec<Value> {
        self.log()
            .into_iter()
            .filter(|l| l["level"] == "error")
            .collect()
    }

    /// Archive files (`.jsonl.zst`) below `archive/<sub>`.
    fn archived(&self, sub: &str) -> Vec<PathBuf> {
        let mut out = Vec::new();
        walk(&self.archive().join(sub), &mut out);
        out.retain(|p| p.to_string_lossy().ends_with(".jsonl.zst"));
        out.sort();
        out
    }
}

pub(crate) fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = fs::read_dir(dir) else { return };
    for e in rd {
        let p = e.expect("entry").path();
        if p.is_dir() {
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}

pub(crate) fn read_json(path: &Path) -> Value {
    let bytes = fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&bytes).expect("json")
}

pub(crate) fn read_lines(path: &Path) -> Vec<Value> {
    fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect()
}

pub(crate) fn append(path: &Path, lines: &[Value]) {
    let mut f = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .expect("open transcript");
    for l in lines {
        writeln!(f, "{l}").expect("write");
    }
}

fn user(uuid: &str, parent: Option<&str>, text: &str) -> Value {
    json!({"type":"user","uuid":uuid,"parentUuid":parent,"isSidechain":false,"sessionId":SID,
        "timestamp":"2026-05-01T10:00:00.000Z","message":{"role":"user","content":text}})
}

fn assistant(uuid: &str, parent: &str, text: &str) -> Value {
    json!({"type":"assistant","uuid":uuid,"parentUuid":parent,"isSidechain":false,
        "sessionId":SID,"timestamp":"2026-05-01T10:00:02.000Z",
        "message":{"id":format!("msg_{uuid}"),"type":"message","role":"assistant",
            "model":"claude-opus-4-7","content":[{"type":"text","text":text}],
            "stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":12}}})
}

fn tool_call(uuid: &str, parent: &str, command: &str) -> Value {
    json!({"type":"assistant","uuid":uuid,"parentUuid":parent,"isSidechain":false,
        "sessionId":SID,"timestamp":"2026-05-01T10:00:01.000Z",
        "message":{"id":format!("msg_{uuid}"),"type":"message","role":"assistant",
            "model":"claude-opus-4-7","content":[{"type":"tool_use","id":format!("toolu_{uuid}"),
            "name":"Bash","input":{"command":command}}],"stop_reason":"tool_use",
            "usage":{"input_tokens":3,"output_tokens":12}}})
}

fn tool_result(uuid: &str, parent: &str, call: &str, text: &str) -> Value {
    json!({"type":"user","uuid":uuid,"parentUuid":parent,"isSidechain":false,"sessionId":SID,
        "timestamp":"2026-05-01T10:00:01.500Z","message":{"role":"user","content":[
            {"type":"tool_result","tool_use_id":format!("toolu_{call}"),"content":text}]}})
}

fn assert_silent_ok(out: &Output, what: &str) {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{what}: stderr {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stdout.is_empty(),
        "{what}: stdout {:?}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        out.stderr.is_empty(),
        "{what}: stderr {:?}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The transcript's complete lines as the archive should hold them (secret redacted).
fn redacted(path: &Path) -> String {
    fs::read_to_string(path)
        .expect("transcript")
        .replace(SECRET, "[REDACTED:github-token]")
}

pub(crate) fn decoded(path: &Path) -> String {
    String::from_utf8(skein_archive::read_archived(path).expect("read archive")).expect("utf8")
}

/// The `.meta.json` next to an archive file.
fn meta_of(archive_file: &Path) -> Value {
    let s = archive_file.to_string_lossy();
    read_json(Path::new(&s.replace(".jsonl.zst", ".meta.json")))
}

#[test]
fn every_event_runs_from_real_hook_json() {
    let env = Env::new();
    let t = env.transcript();
    // An earlier turn, then the prompt of the request (written after UserPromptSubmit fired).
    append(
        &t,
        &[
            user("u0", None, "Earlier question."),
            assistant("a0", "u0", "Earlier answer."),
        ],
    );
    // (event, expected audit outcome) of every run, in order.
    let mut seq: Vec<(String, String)> = Vec::new();
    let mut run = |name: &str, env: &Env| -> Output {
        let input = env.event(name);
        let ev: Value = serde_json::from_str(&input).expect("fixture");
        let outcome = if name == "stop_active" {
            "skipped"
        } else {
            "ok"
        };
        seq.push((
            ev["hook_event_name"].as_str().expect("name").to_owned(),
            outcome.to_owned(),
        ));
        env.hook(&input)
    };

    assert_silent_ok(&run("user_prompt_submit", &env), "UserPromptSubmit");
    append(
        &t,
        &[
            user("u1", Some("a0"), PROMPT),
            tool_call("c1", "u1", &format!("export GITHUB_TOKEN={SECRET}")),
            tool_result("r1", "c1", "c1", "ok"),
            assistant("a1", "r1", "Done. Tests pass."),
        ],
    );
    assert_silent_ok(&run("stop", &env), "Stop");

    // Main transcript archived (redacted), request snapshot written.
    let main = env.archived("main-session");
    assert_eq!(main.len(), 1, "{main:?}");
    assert!(
        main[0]
            .to_string_lossy()
            .ends_with(&format!("2026-05-01_100000_{SID}.jsonl.zst")),
        "{main:?}"
    );
    assert_eq!(decoded(&main[0]), redacted(&t));
    assert!(!decoded(&main[0]).contains(SECRET));
    let req = env.current_request_dir();
    let snap = fs::read_to_string(req.join("session-logs/snapshot.jsonl")).expect("snapshot.jsonl");
    let snap_lines: Vec<Value> = snap
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(snap_lines.len(), 4, "{snap}");
    assert_eq!(snap_lines[0]["uuid"], "u1");
    assert_eq!(snap_lines[0]["parentUuid"], Value::Null);
    assert!(!snap.contains(SECRET));
    let md = fs::read_to_string(req.join("session-log.md")).expect("session-log.md");
    assert!(md.contains(PROMPT), "{md}");
    assert!(md.contains("Done. Tests pass."), "{md}");
    // The request's facts, then the transcript as `skein show` renders it (redacted).
    assert!(md.starts_with("# Request "), "{md}");
    assert!(
        md.contains("<summary><b>Bash</b> export GITHUB_TOKEN=[REDACTED"),
        "{md}"
    );
    assert!(!md.contains(SECRET));
    let request = read_json(&req.join("request.json"));
    assert_eq!(request["start_uuid"], "u1");

    // The subagent: its transcript, plus Claude Code's sidecar naming the spawning tool_use.
    let at = env.agent_transcript(AGENT);
    append(
        &at,
        &[
            user("s1", None, "Look for the off-by-one."),
            assistant("s2", "s1", "Found 3 issues."),
        ],
    );
    fs::write(
        at.with_extension("meta.json"),
        r#"{"agentType":"Explore","description":"find bug","toolUseId":"toolu_spawn1"}"#,
    )
    .expect("sidecar");
    assert_silent_ok(&run("subagent_start", &env), "SubagentStart");
    assert_silent_ok(&run("subagent_stop", &env), "SubagentStop");
    let sub = env.archived("subagent");
    assert_eq!(sub.len(), 1, "{sub:?}");
    assert!(
        sub[0].starts_with(env.archive().join("subagent/Explore")),
        "{sub:?}"
    );
    assert_eq!(decoded(&sub[0]), fs::read_to_string(&at).expect("agent"));
    let meta = meta_of(&sub[0]);
    assert_eq!(meta["parent_session"], SID);
    assert_eq!(meta["tool_use_id"], "toolu_spawn1");
    assert_eq!(meta["agent_type"], "Explore");
    assert_eq!(meta["meta"]["parent_session"], SID);
    // Where it came from, so that restore and the reports read it as the file it was.
    assert_eq!(
        meta["meta"]["origin"]["path"],
        format!("{SID}/subagents/agent-{AGENT}.jsonl")
    );
    assert_eq!(
        meta["meta"]["origin"]["sidecar"],
        r#"{"agentType":"Explore","description":"find bug","toolUseId":"toolu_spawn1"}"#
    );
    let main = env.archived("main-session");
    assert_eq!(
        meta_of(&main[0])["meta"]["origin"]["path"],
        format!("{SID}.jsonl")
    );
    // The hook's archive reads as the session it holds: its id, project and subagent.
    let archived_tree = env
        .cmd()
        .args(["tree", "--format", "jsonl"])
        .arg(&main[0])
        .output()
        .expect("tree");
    let nodes = String::from_utf8_lossy(&archived_tree.stdout);
    assert!(
        nodes.contains(&format!("\"agent_id\":\"{AGENT}\"")),
        "{nodes}"
    );
    // The runtime's own bookkeeping: the agent is linked to the request.
    let request = read_json(&req.join("request.json"));
    assert_eq!(request["agents"][0]["agent_id"], AGENT);
    assert!(req.join("work/findings.md").is_file());

    // Events skein does no work for by default (format.md §14-15 and the hook reference):
    // audited, silent, exit 0; tool events must never print (stdout would be a decision).
    for (name, what) in [
        ("pre_tool_use", "PreToolUse"),
        ("post_tool_use", "PostToolUse"),
        ("notification", "Notification"),
        ("setup", "Setup"),
        ("cwd_changed", "CwdChanged"),
    ] {
        assert_silent_ok(&run(name, &env), what);
    }
    assert_silent_ok(&run("session_start_startup", &env), "SessionStart");
    // After a compaction the goal reminder is the one thing on stdout.
    let out = run("session_start_compact", &env);
    assert_eq!(out.status.code(), Some(0));
    let reminder: Value = serde_json::from_slice(&out.stdout).expect("reminder json");
    assert_eq!(
        reminder["hookSpecificOutput"]["hookEventName"],
        "SessionStart"
    );
    assert!(
        reminder["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .expect("context")
            .contains(PROMPT)
    );

    append(&t, &[user("u2", Some("a1"), "Now also check the docs.")]);
    assert_silent_ok(&run("pre_compact", &env), "PreCompact");
    assert_eq!(decoded(&main[0]), redacted(&t), "PreCompact archives");
    assert_silent_ok(&run("post_compact", &env), "PostCompact");
    assert_silent_ok(&run("stop_active", &env), "Stop (stop_hook_active)");
    assert_silent_ok(&run("stop_failure", &env), "StopFailure");
    assert_silent_ok(&run("unknown_event", &env), "unknown event");
    append(&t, &[assistant("a2", "u2", "Docs checked.")]);
    assert_silent_ok(&run("session_end", &env), "SessionEnd");
    assert_eq!(decoded(&main[0]), redacted(&t), "SessionEnd archives");
    assert_eq!(meta_of(&main[0])["meta"]["outcome"], "prompt_input_exit");
    assert_eq!(env.archived("main-session").len(), 1);

    // One audit line per event, in order, with the expected outcome.
    let audit = env.audit();
    let got: Vec<(String, String)> = audit
        .iter()
        .map(|l| {
            (
                l["event"].as_str().expect("event").to_owned(),
                l["outcome"].as_str().expect("outcome").to_owned(),
            )
        })
        .collect();
    assert_eq!(got, seq);
    assert!(audit.iter().all(|l| l["session"] == SID));
    assert_eq!(env.log_errors(), Vec::<Value>::new());
}

#[test]
fn incremental_stops_append_one_frame_each() {
    let env = Env::new();
    let t = env.transcript();
    assert_silent_ok(&env.hook(&env.event("user_prompt_submit")), "prompt");
    append(
        &t,
        &[user("u1", None, PROMPT), assistant("a1", "u1", "First.")],
    );
    assert_silent_ok(&env.hook(&env.event("stop")), "stop 1");
    append(
        &t,
        &[
            tool_call("c2", "a1", "cargo test"),
            tool_result("r2", "c2", "c2", "test result: ok"),
            assistant("a2", "r2", "Second."),
        ],
    );
    // A torn last line (Claude Code still writing) is left for the next run.
    fs::OpenOptions::new()
        .append(true)
        .open(&t)
        .expect("open")
        .write_all(br#"{"type":"user","uuid":"u3","#)
        .expect("write");
    assert_silent_ok(&env.hook(&env.event("stop")), "stop 2");
    let main = env.archived("main-session");
    assert_eq!(main.len(), 1);
    let complete = {
        let s = fs::read_to_string(&t).expect("read");
        s[..=s.rfind('\n').expect("newline")].to_owned()
    };
    assert_eq!(decoded(&main[0]), complete);
    assert_eq!(meta_of(&main[0])["frames"], 2);
    // Nothing new: the archive is not touched.
    let before = fs::metadata(&main[0]).expect("meta").len();
    assert_silent_ok(&env.hook(&env.event("stop")), "stop 3");
    assert_eq!(fs::metadata(&main[0]).expect("meta").len(), before);
    assert_eq!(meta_of(&main[0])["frames"], 2);
    // The snapshot followed the request.
    let snap = fs::read_to_string(
        env.current_request_dir()
            .join("session-logs/snapshot.jsonl"),
    )
    .expect("snap");
    assert_eq!(snap.lines().count(), 5, "{snap}");
    assert_eq!(env.log_errors(), Vec::<Value>::new());
}

/// Later Stops of one request read from where the last snapshot started (the pass state);
/// after appends, a second prompt and a rewind to before it, the request snapshot is still what
/// `skein snapshot` cuts from the request's part of the transcript (everything after the
/// earlier request's two lines).
#[test]
fn stops_of_one_request_snapshot_as_a_full_cut_does() {
    let env = Env::new();
    let t = env.transcript();
    let snapshot = || {
        fs::read_to_string(
            env.current_request_dir()
                .join("session-logs/snapshot.jsonl"),
        )
        .expect("snapshot")
    };
    let full_cut = || {
        let text = fs::read_to_string(&t).expect("read");
        let region: String = text.split_inclusive('\n').skip(2).collect();
        let part = env.work.join("request.jsonl");
        fs::write(&part, region).expect("write");
        let out = env
            .cmd()
            .args(["snapshot", "--report", "/dev/null"])
            .arg(&part)
            .output()
            .expect("skein snapshot");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf-8")
    };
    // An earlier request, then this one's prompt after a line that is not the request's: the
    // second Stop reads from the prompt's line, not from where the request opened.
    append(
        &t,
        &[
            user("u0", None, "earlier prompt"),
            assistant("a0", "u0", "Zero."),
        ],
    );
    assert_silent_ok(&env.hook(&env.event("stop")), "stop 0");
    assert_silent_ok(&env.hook(&env.event("user_prompt_submit")), "prompt");
    append(
        &t,
        &[
            json!({"type":"permission-mode","permissionMode":"default","sessionId":SID}),
            user("u1", Some("a0"), "first prompt"),
            assistant("a1", "u1", "One."),
        ],
    );
    assert_silent_ok(&env.hook(&env.event("stop")), "stop 1");
    assert_eq!(snapshot(), full_cut());
    assert!(!snapshot().contains("permission-mode") && !snapshot().contains("earlier prompt"));
    append(
        &t,
        &[
            assistant("a2", "a1", "Two."),
            assistant("a3", "a2", "Three."),
        ],
    );
    assert_silent_ok(&env.hook(&env.event("stop")), "stop 2");
    assert_eq!(snapshot(), full_cut());
    // A second prompt in the same request (no UserPromptSubmit in between).
    append(
        &t,
        &[
            user("u2", Some("a3"), "second prompt"),
            assistant("a4", "u2", "Four."),
        ],
    );
    assert_silent_ok(&env.hook(&env.event("stop")), "stop 3");
    assert_eq!(snapshot(), full_cut());
    assert!(snapshot().contains("second prompt") && !snapshot().contains("first prompt"));
    // A rewind to before the second prompt (the last snapshot's start): the branch now runs
    // through `a2`, before where that snapshot started, so the whole request is read again.
    append(
        &t,
        &[
            user("u3", Some("a2"), "third prompt"),
            assistant("a5", "u3", "Five."),
        ],
    );
    assert_silent_ok(&env.hook(&env.event("stop")), "stop 4");
    assert_eq!(snapshot(), full_cut());
    assert!(snapshot().contains("third prompt") && !snapshot().contains("second prompt"));
    assert_eq!(env.log_errors(), Vec::<Value>::new());
}

#[test]
fn the_index_pass_makes_each_stop_searchable() {
    let env = Env::new();
    let t = env.transcript();
    let search = |word: &str| -> Vec<Value> {
        // The default catalog, read without refreshing anything (no live file is given).
        let out = env
            .cmd()
            .env("CLAUDE_CONFIG_DIR", env.dir.path().join("nowhere"))
            .args(["search", word, "--format", "jsonl", "-q"])
            .output()
            .expect("search");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).expect("json"))
            .collect()
    };
    append(
        &t,
        &[
            user("u1", None, "the ocelot prompt"),
            assistant("a1", "u1", "First."),
        ],
    );
    assert_silent_ok(&env.hook(&env.event("stop")), "stop 1");
    let hits = search("ocelot");
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0]["session_id"], SID);
    append(&t, &[assistant("a2", "a1", "a gazelle reply")]);
    assert!(search("gazelle").is_empty());
    assert_silent_ok(&env.hook(&env.event("stop")), "stop 2");
    assert_eq!(search("gazelle").len(), 1);
    assert_eq!(search("ocelot").len(), 1, "indexed once");
    assert_eq!(env.log_errors(), Vec::<Value>::new());
}

#[test]
fn redaction_and_compression_follow_the_config() {
    let env = Env::with_config(
        "lock_timeout_ms = 60000\nredact = false\n[events]\nStop = [\"archive\"]\n\
         [pass.archive]\nzstd_level = 19\n",
    );
    let t = env.transcript();
    append(&t, &[user("u1", None, &format!("my token is {SECRET}"))]);
    assert_silent_ok(&env.hook(&env.event("stop")), "stop");
    let main = env.archived("main-session");
    assert_eq!(decoded(&main[0]), fs::read_to_string(&t).expect("read"));
    // No snapshot pass configured for Stop.
    assert!(
        !env.current_request_dir()
            .join("session-logs/snapshot.jsonl")
            .exists()
    );

    // A bad pass option is an error of that pass only: logged, exit 0, audited as error.
    fs::write(
        env.config_home.join("skein/config.toml"),
        "[pass.archive]\nno_such_option = 1\n",
    )
    .expect("config");
    append(&t, &[assistant("a1", "u1", "ok")]);
    assert_silent_ok(&env.hook(&env.event("stop")), "stop with bad option");
    let errors = env.log_errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0]["message"]
            .as_str()
            .expect("message")
            .contains("no_such_option"),
        "{errors:?}"
    );
    let audit = env.audit();
    assert_eq!(audit.last().expect("audit")["outcome"], "error");
}

#[test]
fn any_event_can_be_given_passes() {
    // Events without default work (tool events, notifications) run what the config lists.
    let env = Env::with_config(
        "lock_timeout_ms = 60000\n[events]\nPostToolUse = [\"archive\"]\nStop = []\n",
    );
    let t = env.transcript();
    append(&t, &[user("u1", None, &format!("my token is {SECRET}"))]);
    assert_silent_ok(&env.hook(&env.event("stop")), "Stop, disabled");
    assert!(env.archived("main-session").is_empty());
    assert_silent_ok(&env.hook(&env.event("pre_tool_use")), "PreToolUse");
    assert!(env.archived("main-session").is_empty());
    assert_silent_ok(&env.hook(&env.event("post_tool_use")), "PostToolUse");
    let main = env.archived("main-session");
    assert_eq!(main.len(), 1, "{main:?}");
    assert_eq!(decoded(&main[0]), redacted(&t));
    let events: Vec<Value> = env.audit().iter().map(|l| l["event"].clone()).collect();
    assert_eq!(
        events,
        [json!("Stop"), json!("PreToolUse"), json!("PostToolUse")]
    );
    assert_eq!(env.log_errors(), Vec::<Value>::new());
}

#[test]
fn garbage_input_fails_open() {
    let env = Env::new();
    let inputs: [&[u8]; 5] = [
        b"",
        b"not json",
        b"[1,2,3]",
        b"{\"hook_event_name\":\"Stop\"}",
        b"{\"session_id\":",
    ];
    for input in inputs {
        let out = env.hook_with(input, &[]);
        assert_silent_ok(&out, &String::from_utf8_lossy(input));
    }
    assert_eq!(env.log_errors().len(), inputs.len(), "{:?}", env.log());
    // A missing --config file is an error too (the hook then runs with the defaults).
    let out = env.hook_with(
        env.event("session_end").as_bytes(),
        &["--config", "/nonexistent.toml"],
    );
    assert_silent_ok(&out, "missing --config");
    let last = env.log_errors().pop().expect("error");
    assert!(
        last["message"]
            .as_str()
            .expect("message")
            .contains("nonexistent.toml"),
        "{last}"
    );
}

#[test]
fn malicious_ids_and_paths_are_refused() {
    let env = Env::new();
    let outside = env.dir.path().join("outside");
    fs::create_dir_all(&outside).expect("mkdir");
    let secret_file = outside.join("secret.jsonl");
    fs::write(&secret_file, "{\"type\":\"user\",\"uuid\":\"x\"}\n").expect("write");
    // A symlink inside the projects dir that leads out of it.
    let link = env.projects.join("-w").join("evil.jsonl");
    std::os::unix::fs::symlink(&secret_file, &link).expect("symlink");
    let projects = env.projects.to_string_lossy().into_owned();
    let cases: Vec<(&str, &str, Value, bool)> = vec![
        (
            "session traversal",
            "stop",
            json!({"session_id": "../../../../tmp/pwned"}),
            false,
        ),
        (
            "session with slash",
            "stop",
            json!({"session_id": "a/b"}),
            false,
        ),
        (
            "hidden session",
            "user_prompt_submit",
            json!({"session_id": ".hidden"}),
            false,
        ),
        (
            "overlong session",
            "stop",
            json!({"session_id": "a".repeat(300)}),
            false,
        ),
        (
            "session with NUL",
            "stop",
            json!({"session_id": "abc\u{0}def"}),
            false,
        ),
        (
            "agent traversal",
            "subagent_stop",
            json!({"agent_id": "../../x"}),
            true,
        ),
        (
            "transcript outside",
            "stop",
            json!({"transcript_path": "/etc/passwd"}),
            true,
        ),
        (
            "transcript dot-dot",
            "session_end",
            json!({"transcript_path": format!("{projects}/-w/../../../../outside/secret.jsonl")}),
            true,
        ),
        (
            "relative transcript",
            "pre_compact",
            json!({"transcript_path": "x.jsonl"}),
            true,
        ),
        (
            "NUL in transcript",
            "stop",
            json!({"transcript_path": format!("{projects}/-w/a\u{0}.jsonl")}),
            true,
        ),
        (
            "symlink out",
            "stop",
            json!({"transcript_path": link.to_string_lossy()}),
            true,
        ),
        (
            "agent transcript outside",
            "subagent_stop",
            json!({"agent_transcript_path": secret_file.to_string_lossy()}),
            true,
        ),
    ];
    for (i, (what, fixture, fields, _)) in cases.iter().enumerate() {
        let out = env.hook(&env.event_with(fixture, fields));
        assert_silent_ok(&out, what);
        let errors = env.log_errors();
        assert_eq!(errors.len(), i + 1, "{what}: one log line each: {errors:?}");
        let msg = errors[i]["message"].as_str().expect("message");
        assert!(msg.contains("refused"), "{what}: {msg}");
        let audit = env.audit();
        let refused = audit.iter().filter(|l| l["outcome"] == "refused").count();
        let expected = cases[..=i].iter().filter(|c| c.3).count();
        assert_eq!(refused, expected, "{what}: {audit:?}");
    }
    // Nothing was archived, no request was opened, nothing left the state dir.
    assert!(env.archived("").is_empty());
    assert!(!env.dir.path().join("tmp").exists());
    assert!(!Path::new("/tmp/pwned").exists());
    let mut files = Vec::new();
    walk(env.dir.path(), &mut files);
    for f in files {
        assert!(
            f.starts_with(&env.state)
                || f.starts_with(&env.home)
                || f.starts_with(&env.config_home)
                || f.starts_with(&outside),
            "unexpected file {}",
            f.display()
        );
    }
    assert_eq!(
        fs::read_to_string(&secret_file).expect("read"),
        "{\"type\":\"user\",\"uuid\":\"x\"}\n"
    );
}

#[test]
fn blocking_only_when_asked_and_never_in_a_loop() {
    let env = Env::new();
    let cfg = env.dir.path().join("blocking.toml");
    fs::write(
        &cfg,
        "blocking = true\n[events]\nStop = [\"no-such-pass\"]\n\
         UserPromptSubmit = [\"open-request\", \"no-such-pass\"]\n",
    )
    .expect("config");
    let cfg = cfg.to_string_lossy().into_owned();
    append(&env.transcript(), &[user("u1", None, PROMPT)]);
    let out = env.hook_with(env.event("stop").as_bytes(), &["--config", &cfg]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("unknown pass \"no-such-pass\""), "{stderr}");
    // stop_hook_active: never block (Claude would loop).
    let out = env.hook_with(env.event("stop_active").as_bytes(), &["--config", &cfg]);
    assert_silent_ok(&out, "stop_hook_active");
    // UserPromptSubmit never blocks (it would erase the prompt).
    let out = env.hook_with(
        env.event("user_prompt_submit").as_bytes(),
        &["--config", &cfg],
    );
    assert_silent_ok(&out, "UserPromptSubmit");
    // Without blocking = true, the same error exits 0.
    fs::write(
        env.config_home.join("skein/config.toml"),
        "[events]\nStop = [\"no-such-pass\"]\n",
    )
    .expect("config");
    assert_silent_ok(&env.hook(&env.event("stop")), "non-blocking");
    assert_eq!(env.log_errors().len(), 3);
}

/// Claude Code runs matching hooks in parallel: 16 `skein hook` processes at once on one
/// session lose no audit line and no state update, and the archive holds every line once.
#[test]
fn sixteen_concurrent_hook_processes_lose_nothing() {
    const WORKERS: usize = 16;
    const ROUNDS: usize = 2;
    let env = Env::new();
    let t = env.transcript();
    append(
        &t,
        &[user("u0", None, "Earlier."), assistant("a0", "u0", "Yes.")],
    );

    let run_all = |events: Vec<String>| {
        let children: Vec<_> = events
            .iter()
            .map(|ev| {
                let mut child = env
                    .cmd()
                    .arg("hook")
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .expect("spawn");
                let mut stdin = child.stdin.take().expect("stdin");
                stdin.write_all(ev.as_bytes()).expect("write event");
                drop(stdin);
                child
            })
            .collect();
        for c in children {
            let out = c.wait_with_output().expect("wait");
            assert_silent_ok(&out, "concurrent hook");
        }
    };

    // 16 prompts at once: 16 requests, numbered 1..=16 in opening order.
    run_all(vec![env.event("user_prompt_submit"); WORKERS]);
    append(&t, &[user("u1", Some("a0"), PROMPT)]);
    let mut parent = "u1".to_owned();
    let mut agents = Vec::new();
    for round in 0..ROUNDS {
        // Half SubagentStops (each its own agent transcript), half Stops on the main
        // transcript, all at once, while the main transcript keeps growing between rounds.
        let mut events = Vec::new();
        for w in 0..WORKERS {
            if w % 2 == 0 {
                let agent = format!("a{round}x{w:02}");
                let at = env.agent_transcript(&agent);
                append(
                    &at,
                    &[
                        user("s1", None, &format!("task {agent}")),
                        assistant("s2", "s1", &format!("done {agent}")),
                    ],
                );
                events.push(env.event_with(
                    "subagent_stop",
                    &json!({"agent_id": agent, "agent_transcript_path": at.to_string_lossy()}),
                ));
                agents.push(agent);
            } else {
                events.push(env.event("stop"));
            }
        }
        let a = format!("ra{round}");
        append(&t, &[assistant(&a, &parent, &format!("Round {round}."))]);
        parent = a;
        run_all(events);
    }

    let map = read_json(&env.state.join("sessions.json"));
    assert_eq!(map["sessions"][SID]["opened"], WORKERS);
    let dirs = env.request_dirs();
    assert_eq!(dirs.len(), WORKERS);
    let counters: Vec<usize> = dirs
        .iter()
        .map(|d| {
            let name = d.file_name().and_then(|n| n.to_str()).expect("name");
            name.rsplit('-')
                .next()
                .and_then(|c| c.parse().ok())
                .expect("n")
        })
        .collect();
    assert_eq!(counters, (1..=WORKERS).collect::<Vec<_>>());
    let current = env.current_request_dir();
    assert_eq!(&current, dirs.last().expect("last"));

    // Audit: one line per process; all ok.
    let audit = env.audit();
    let stops = WORKERS / 2 * ROUNDS;
    assert_eq!(audit.len(), WORKERS + agents.len() + stops);
    let count = |e: &str| audit.iter().filter(|l| l["event"] == e).count();
    assert_eq!(count("UserPromptSubmit"), WORKERS);
    assert_eq!(count("SubagentStop"), agents.len());
    assert_eq!(count("Stop"), stops);
    let current_audit = read_lines(&current.join("hook-events.jsonl"));
    assert_eq!(current_audit.len(), 1 + agents.len() + stops);
    let not_ok: Vec<&Value> = audit.iter().filter(|l| l["outcome"] != "ok").collect();
    assert!(not_ok.is_empty(), "{not_ok:?}");

    // State: every agent recorded once in the request.
    let req = read_json(&current.join("request.json"));
    let mut recorded: Vec<String> = req["agents"]
        .as_array()
        .expect("agents")
        .iter()
        .map(|a| a["agent_id"].as_str().expect("id").to_owned())
        .collect();
    recorded.sort();
    let mut want = agents.clone();
    want.sort();
    assert_eq!(recorded, want);

    // Archive: the main transcript exactly once, every agent transcript under its type.
    let main = env.archived("main-session");
    assert_eq!(main.len(), 1, "{main:?}");
    assert_eq!(decoded(&main[0]), redacted(&t));
    let sub = env.archived("subagent/Explore");
    assert_eq!(sub.len(), agents.len());
    for agent in &agents {
        let file = sub
            .iter()
            .find(|p| {
                p.to_string_lossy()
                    .ends_with(&format!("_{agent}.jsonl.zst"))
            })
            .unwrap_or_else(|| panic!("{agent} not archived"));
        assert_eq!(
            decoded(file),
            fs::read_to_string(env.agent_transcript(agent)).expect("agent")
        );
    }
    assert!(
        skein_archive::verify(&env.archive())
            .expect("verify")
            .is_ok()
    );
    assert_eq!(env.log_errors(), Vec::<Value>::new());
}

// ---- skein hooks install / uninstall / doctor -------------------------------------------

const FOREIGN: &str = r#"{
  "model": "opus",
  "hooks": {
    "Stop": [ { "hooks": [ { "type": "command", "command": "other-tool stop", "timeout": 5 } ] } ],
    "PreToolUse": [ { "matcher": "Bash", "hooks": [ { "type": "command", "command": "guard" } ] } ]
  },
  "permissions": { "allow": ["Bash(ls:*)"] }
}
"#;

fn hooks(env: &Env, args: &[&str]) -> Output {
    env.cmd().arg("hooks").args(args).output().expect("run")
}

fn ok_text(out: &Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).expect("utf8")
}

fn skein_handlers(settings: &Value) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    for (event, groups) in settings["hooks"].as_object().expect("hooks") {
        for g in groups.as_array().expect("groups") {
            for h in g["hooks"].as_array().expect("handlers") {
                if h["command"] == "skein hook" {
                    out.push((event.clone(), g["matcher"].as_str().map(str::to_owned)));
                }
            }
        }
    }
    out.sort();
    out
}

#[test]
fn install_is_idempotent_and_uninstall_exact() {
    let env = Env::new();
    let file = env.work.join("settings.json");
    fs::write(&file, FOREIGN).expect("write");
    let f = file.to_string_lossy().into_owned();

    // Dry run: prints the would-be file, writes nothing.
    let text = ok_text(&hooks(&env, &["install", "--settings", &f, "--dry-run"]));
    assert!(text.contains("would add skein hooks"), "{text}");
    assert!(text.contains("\"skein hook\""), "{text}");
    assert_eq!(fs::read_to_string(&file).expect("read"), FOREIGN);
    assert!(!env.work.join("settings.json.skein-backup").exists());

    let text = ok_text(&hooks(&env, &["install", "--settings", &f]));
    assert!(text.contains("added skein hooks"), "{text}");
    assert_eq!(
        fs::read_to_string(env.work.join("settings.json.skein-backup")).expect("backup"),
        FOREIGN
    );
    let installed = read_json(&file);
    let handlers = skein_handlers(&installed);
    let want: Vec<(String, Option<String>)> = [
        ("PreCompact", None),
        ("SessionEnd", None),
        ("SessionStart", Some("compact")),
        ("Stop", None),
        ("SubagentStop", None),
        ("UserPromptSubmit", None),
    ]
    .iter()
    .map(|(e, m)| ((*e).to_owned(), m.map(str::to_owned)))
    .collect();
    assert_eq!(handlers, want);
    // Foreign hooks and keys untouched, and first in their lists.
    let original: Value = serde_json::from_str(FOREIGN).expect("json");
    assert_eq!(installed["hooks"]["Stop"][0], original["hooks"]["Stop"][0]);
    assert_eq!(
        installed["hooks"]["PreToolUse"],
        original["hooks"]["PreToolUse"]
    );
    assert_eq!(installed["permissions"], original["permissions"]);
    assert_eq!(installed["model"], "opus");
    let keys: Vec<&String> = installed.as_object().expect("obj").keys().collect();
    assert_eq!(keys, ["model", "hooks", "permissions"]);

    // Again: nothing to do, file byte-identical.
    let bytes = fs::read(&file).expect("read");
    let text = ok_text(&hooks(&env, &["install", "--settings", &f]));
    assert!(text.contains("nothing to do"), "{text}");
    assert_eq!(fs::read(&file).expect("read"), bytes);

    // JSON summary of a dry-run uninstall.
    let out = ok_text(&hooks(
        &env,
        &[
            "uninstall",
            "--settings",
            &f,
            "--dry-run",
            "--format",
            "json",
        ],
    ));
    let v: Value = serde_json::from_str(&out).expect("json summary");
    assert_eq!(v["action"], "uninstall");
    assert_eq!(v["changed"], true);
    assert_eq!(v["written"], false);
    assert_eq!(v["events"].as_array().expect("events").len(), 6);
    assert_eq!(fs::read(&file).expect("read"), bytes);

    // Uninstall removes exactly what install added.
    let text = ok_text(&hooks(&env, &["uninstall", "--settings", &f]));
    assert!(text.contains("removed skein hooks"), "{text}");
    assert_eq!(read_json(&file), original);
    let text = ok_text(&hooks(&env, &["uninstall", "--settings", &f]));
    assert!(text.contains("nothing to do"), "{text}");

    // A handler with another command string is not skein's.
    let text = ok_text(&hooks(
        &env,
        &["install", "--settings", &f, "--command", "/opt/skein hook"],
    ));
    assert!(text.contains("added"), "{text}");
    let text = ok_text(&hooks(&env, &["uninstall", "--settings", &f]));
    assert!(text.contains("nothing to do"), "{text}");
    let text = ok_text(&hooks(
        &env,
        &[
            "uninstall",
            "--settings",
            &f,
            "--command",
            "/opt/skein hook",
        ],
    ));
    assert!(text.contains("removed"), "{text}");
    assert_eq!(read_json(&file), original);
}

#[test]
fn install_targets_user_and_project_settings() {
    let env = Env::new();
    // --user (the default) writes $CLAUDE_CONFIG_DIR/settings.json.
    let out = ok_text(&hooks(&env, &["install", "--format", "json"]));
    let v: Value = serde_json::from_str(&out).expect("json");
    let user = env.claude.join("settings.json");
    assert_eq!(v["path"], user.to_string_lossy().as_ref());
    assert_eq!(v["written"], true);
    assert_eq!(v["backup"], Value::Null);
    assert_eq!(skein_handlers(&read_json(&user)).len(), 6);
    ok_text(&hooks(&env, &["uninstall", "--user"]));
    assert_eq!(read_json(&user), json!({}));

    // --project writes the personal project file in the current directory.
    ok_text(&hooks(&env, &["install", "--project"]));
    let local = env.work.join(".claude/settings.local.json");
    assert_eq!(skein_handlers(&read_json(&local)).len(), 6);
    assert!(!env.work.join(".claude/settings.json").exists());

    // Targets are exclusive.
    let out = hooks(&env, &["install", "--user", "--project"]);
    assert_eq!(out.status.code(), Some(2));

    // A settings file that is not JSON is reported, not overwritten.
    fs::write(&local, "{ not json").expect("write");
    let out = hooks(&env, &["uninstall", "--project"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not valid JSON"));
    assert_eq!(fs::read_to_string(&local).expect("read"), "{ not json");
}

#[test]
fn doctor_checks_the_setup() {
    let env = Env::new();
    let bin = env.dir.path().join("bin");
    fs::create_dir_all(&bin).expect("mkdir");
    let doctor = |path: &Path| -> (Option<i32>, Value) {
        let out = env
            .cmd()
            .args(["hooks", "doctor", "--format", "json"])
            .env("PATH", path)
            .output()
            .expect("run");
        let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!("{e}: {}", String::from_utf8_lossy(&out.stdout));
        });
        (out.status.code(), v)
    };
    let codes = |v: &Value| -> Vec<String> {
        v["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .map(|f| f["code"].as_str().expect("code").to_owned())
            .collect()
    };
    // Nothing installed, no binary on PATH.
    let (code, v) = doctor(&bin);
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(v["ok"], false);
    let c = codes(&v);
    assert!(c.contains(&"binary-not-found".to_owned()), "{c:?}");
    assert_eq!(
        c.iter().filter(|c| *c == "missing-event").count(),
        6,
        "{c:?}"
    );

    // Installed, binary on PATH, but a bad config and hooks disabled in the project.
    ok_text(&hooks(&env, &["install"]));
    let shim = bin.join("skein");
    fs::write(&shim, "#!/bin/sh\n").expect("shim");
    fs::set_permissions(&shim, fs::Permissions::from_mode(0o755)).expect("chmod");
    fs::create_dir_all(env.work.join(".claude")).expect("mkdir");
    fs::write(
        env.work.join(".claude/settings.json"),
        r#"{"disableAllHooks": true}"#,
    )
    .expect("write");
    fs::write(env.config_home.join("skein/config.toml"), "bogus_key = 1\n").expect("write");
    let (code, v) = doctor(&bin);
    assert_eq!(code, Some(1), "{v}");
    let c = codes(&v);
    assert!(!c.contains(&"binary-not-found".to_owned()), "{c:?}");
    assert!(!c.contains(&"missing-event".to_owned()), "{c:?}");
    assert!(c.contains(&"hooks-disabled".to_owned()), "{c:?}");
    assert!(c.contains(&"bad-config".to_owned()), "{c:?}");

    // All good.
    fs::write(env.work.join(".claude/settings.json"), "{}").expect("write");
    fs::write(env.config_home.join("skein/config.toml"), "").expect("write");
    let (code, v) = doctor(&bin);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["ok"], true);
    let out = env
        .cmd()
        .args(["hooks", "doctor"])
        .env("PATH", &bin)
        .output()
        .expect("run");
    let text = ok_text(&out);
    assert!(text.contains("ok: no problems found"), "{text}");
    assert!(
        text.contains(&env.state.to_string_lossy().into_owned()),
        "{text}"
    );
}
