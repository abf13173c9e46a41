//! The hook keeps its promises (issue 11), driven like a user would: a private HOME, a real
//! corpus session copied into a fake Claude tree and grown between events, the whole event
//! sequence (SessionStart, UserPromptSubmit, Pre/PostToolUse with Skill and Agent calls,
//! SubagentStart/SubagentStop with `<context>` and `<work>`, PreCompact, SessionStart compact,
//! Stop, SessionEnd) piped into the real binary, with secrets planted in the prompt, a
//! subagent's `<context>`, a `<work>` body and a tool input. Then every file under the state
//! and archive directories is searched for the secrets and has its mode checked, and the
//! archive metadata is compared with what `skein archive` writes for the same transcripts.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

use super::hook::{Env, append, read_json, read_lines};

/// A real session with six subagents (sidecars without `toolUseId`), `Agent` spawns and a
/// `TaskCreate`/`TaskUpdate` task list.
const REAL: &str = "daaain__claude-code-log/test/test_data/real_projects/-experiments-worktrees/ef958aa1-0e93-49f0-bb71-150f63befcd1";
const SESSION: &str = "ef958aa1-0e93-49f0-bb71-150f63befcd1";
/// The agent whose SubagentStop carries `<context>` and `<work>`.
const AGENT: &str = "a52886dc180afb356";
const PROJECT: &str = "-experiments-worktrees";

const PROMPT_TOKEN: &str = "ghp_R8x2Lk9QwZt4Vb7Nc1Md5Pf3Hs6Jg0Ya2Xe8";
const PROMPT_EMAIL: &str = "jane.doe@acme-corp.io";
const CONTEXT_KEY: &str = "AKIAZ7QW3RT5YX2MNB4P";
const WORK_TOKEN: &str = "xoxb-2048163279-4096326558-Tq8Zp3Lk5Mn7Vb2Xc4Rw6Yh9";
const TOOL_KEY: &str =
    "sk-ant-api03-Qm9vYmFyYmF6cXV4cXV1eDEyMzQ1Njc4OTBhYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ei0tLQ-AAAA";
const SECRETS: [&str; 5] = [
    PROMPT_TOKEN,
    PROMPT_EMAIL,
    CONTEXT_KEY,
    WORK_TOKEN,
    TOOL_KEY,
];

struct Session {
    env: Env,
    transcript: PathBuf,
    agents_dir: PathBuf,
    agent_rest: Vec<u8>,
    lines: Vec<String>,
    at: usize,
}

impl Session {
    fn new() -> Option<Self> {
        let corpus = skein_testkit::corpus_dir()?;
        let source = corpus.join(REAL);
        assert!(source.is_dir(), "{} is not in the corpus", source.display());
        // Info level: every pass summary goes to the log too.
        let env = Env::with_config("lock_timeout_ms = 60000\n[log]\nlevel = \"info\"\n");
        let project = env.projects.join(PROJECT);
        let agents_dir = project.join(SESSION).join("subagents");
        fs::create_dir_all(&agents_dir).expect("mkdir");
        // Subagent transcripts and sidecars are in place from the start (Claude Code writes
        // them while the agents run); the main transcript grows between events.
        // AGENT's transcript is half written when it first stops, and resumed later.
        let mut agent_rest = Vec::new();
        for e in fs::read_dir(source.join("subagents")).expect("subagents") {
            let p = e.expect("entry").path();
            let to = agents_dir.join(p.file_name().expect("name"));
            let mut bytes = fs::read(&p).expect("read");
            if to.ends_with(format!("agent-{AGENT}.jsonl")) {
                let half = bytes.len() / 2;
                let cut = half + bytes[half..].iter().position(|b| *b == b'\n').expect("nl") + 1;
                agent_rest = bytes.split_off(cut);
            }
            fs::write(&to, bytes).expect("copy");
        }
        let text = fs::read_to_string(source.with_extension("jsonl")).expect("main transcript");
        Some(Self {
            transcript: project.join(format!("{SESSION}.jsonl")),
            lines: text.lines().map(str::to_owned).collect(),
            env,
            agents_dir,
            agent_rest,
            at: 0,
        })
    }

    /// Appends the real transcript's lines up to `fraction` of it.
    fn grow(&mut self, fraction: f64) {
        let to = ((self.lines.len() as f64 * fraction) as usize).min(self.lines.len());
        let mut text = String::new();
        for l in &self.lines[self.at..to.max(self.at)] {
            text.push_str(l);
            text.push('\n');
        }
        self.at = to.max(self.at);
        let mut f = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.transcript)
            .expect("open");
        std::io::Write::write_all(&mut f, text.as_bytes()).expect("append");
    }

    fn event(&self, name: &str, fields: &Value) -> Value {
        let mut ev = json!({
            "session_id": SESSION,
            "transcript_path": self.transcript,
            "cwd": "/experiments/worktrees",
            "permission_mode": "default",
            "hook_event_name": name,
        });
        for (k, v) in fields.as_object().expect("object") {
            ev[k] = v.clone();
        }
        ev
    }

    fn fire(&self, name: &str, fields: &Value) -> Output {
        let out = self.env.hook(&self.event(name, fields).to_string());
        assert_eq!(
            out.status.code(),
            Some(0),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.stderr.is_empty(), "{name}: {:?}", out.stderr);
        out
    }

    fn agent_transcript(&self, agent: &str) -> PathBuf {
        self.agents_dir.join(format!("agent-{agent}.jsonl"))
    }

    fn agent_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = fs::read_dir(&self.agents_dir)
            .expect("agents")
            .filter_map(|e| {
                let name = e.expect("entry").file_name().to_string_lossy().into_owned();
                name.strip_prefix("agent-")?
                    .strip_suffix(".jsonl")
                    .map(str::to_owned)
            })
            .collect();
        ids.sort();
        ids
    }

    /// The planted lines: the prompt (with a token and an e-mail address), a `Skill` call, a
    /// `Bash` call whose input holds a key, an `Edit` of a file.
    fn planted(step: &str) -> Vec<Value> {
        let base = |kind: &str, uuid: String, ts: &str, message: Value| {
            json!({"type": kind, "uuid": uuid, "parentUuid": null, "isSidechain": false,
                "sessionId": SESSION, "cwd": "/experiments/worktrees", "gitBranch": "main",
                "timestamp": ts, "message": message})
        };
        let call = |id: &str, name: &str, input: Value| {
            json!({"id": format!("msg_{step}_{id}"), "type": "message", "role": "assistant",
                "model": "claude-opus-4-7", "stop_reason": "tool_use",
                "content": [{"type": "tool_use", "id": format!("toolu_{step}_{id}"), "name": name,
                    "input": input}],
                "usage": {"input_tokens": 7, "output_tokens": 11}})
        };
        let result = |id: &str| {
            json!({"role": "user", "content": [{"type": "tool_result",
                "tool_use_id": format!("toolu_{step}_{id}"), "content": "done"}]})
        };
        vec![
            base(
                "user",
                format!("{step}-p"),
                "2026-03-02T09:00:00.000Z",
                json!({"role": "user", "content": prompt()}),
            ),
            base(
                "assistant",
                format!("{step}-s"),
                "2026-03-02T09:00:01.000Z",
                call("s", "Skill", json!({"skill": "pdf"})),
            ),
            base(
                "user",
                format!("{step}-sr"),
                "2026-03-02T09:00:02.000Z",
                result("s"),
            ),
            base(
                "assistant",
                format!("{step}-b"),
                "2026-03-02T09:00:03.000Z",
                call(
                    "b",
                    "Bash",
                    json!({"command": format!("ANTHROPIC_API_KEY={TOOL_KEY} ./run")}),
                ),
            ),
            base(
                "user",
                format!("{step}-br"),
                "2026-03-02T09:00:04.000Z",
                result("b"),
            ),
            base(
                "assistant",
                format!("{step}-t"),
                "2026-03-02T09:00:04.500Z",
                call(
                    "t",
                    "TaskCreate",
                    json!({"subject": format!("Rotate {TOOL_KEY}"), "description": "now"}),
                ),
            ),
            base(
                "assistant",
                format!("{step}-e"),
                "2026-03-02T09:00:05.000Z",
                call(
                    "e",
                    "Edit",
                    json!({"file_path": "/experiments/worktrees/src/main.rs", "old_string": "a", "new_string": "b"}),
                ),
            ),
        ]
    }
}

fn prompt() -> String {
    format!("Deploy with token {PROMPT_TOKEN} and mail {PROMPT_EMAIL} when done.")
}

/// Every entry below `dir` (directories too), depth first.
fn entries(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).expect("read_dir") {
        let p = e.expect("entry").path();
        out.push(p.clone());
        if p.symlink_metadata().expect("stat").is_dir() {
            entries(&p, out);
        }
    }
}

/// A file's bytes as a reader would see them: archive files decoded.
fn content(p: &Path) -> Vec<u8> {
    if p.to_string_lossy().ends_with(".zst") {
        return skein_archive::read_archived(p).expect("decode archive file");
    }
    fs::read(p).expect("read")
}

/// Archive `.meta.json` files below `root`, keyed by the transcript they describe.
fn metas(root: &Path) -> Vec<(String, Value)> {
    let mut all = Vec::new();
    entries(root, &mut all);
    let mut out: Vec<(String, Value)> = all
        .iter()
        .filter(|p| {
            p.to_string_lossy().ends_with(".meta.json") && !p.starts_with(root.join("checkpoints"))
        })
        .map(|p| {
            let v = read_json(p);
            let key = v["meta"]["origin"]["path"]
                .as_str()
                .unwrap_or("?")
                .to_owned();
            (key, v["meta"].clone())
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn a_grown_session_leaves_no_secret_and_the_archive_skein_would_write() {
    let Some(mut s) = Session::new() else { return };
    let agents = s.agent_ids();
    assert_eq!(agents.len(), 6, "{agents:?}");

    s.grow(0.2);
    s.fire(
        "SessionStart",
        &json!({"source": "startup", "model": "claude-opus-4-7"}),
    );
    append(&s.transcript, &Session::planted("one")[..1]);
    s.fire(
        "UserPromptSubmit",
        &json!({"prompt": prompt(), "prompt_id": "p-1"}),
    );
    s.fire(
        "PreToolUse",
        &json!({"tool_name": "Skill", "tool_input": {"skill": "pdf"}, "tool_use_id": "toolu_one_s"}),
    );
    append(&s.transcript, &Session::planted("one")[1..3]);
    s.fire(
        "PostToolUse",
        &json!({"tool_name": "Skill", "tool_input": {"skill": "pdf"}, "tool_use_id": "toolu_one_s",
            "tool_response": {"success": true}}),
    );
    s.fire(
        "PreToolUse",
        &json!({"tool_name": "Bash", "tool_input": {"command": format!("ANTHROPIC_API_KEY={TOOL_KEY} ./run")},
            "tool_use_id": "toolu_one_b"}),
    );
    append(&s.transcript, &Session::planted("one")[3..]);
    s.grow(0.5);
    s.fire(
        "PreToolUse",
        &json!({"tool_name": "Agent", "tool_input": {"subagent_type": "general-purpose", "prompt": "research"}}),
    );
    for a in &agents {
        s.fire(
            "SubagentStart",
            &json!({"agent_id": a, "agent_type": "general-purpose"}),
        );
    }
    s.grow(0.8);
    let message = format!(
        "Research done.\n<context>\nThe staging key is {CONTEXT_KEY}; rotate it.\n</context>\n\
         <work filename=\"notes.md\">\n# Notes\nslack bot token: {WORK_TOKEN}\n</work>"
    );
    for a in &agents {
        let last = if a == AGENT {
            message.as_str()
        } else {
            "Done."
        };
        s.fire(
            "SubagentStop",
            &json!({"agent_id": a, "agent_type": "general-purpose",
                "agent_transcript_path": s.agent_transcript(a), "stop_hook_active": false,
                "last_assistant_message": last}),
        );
    }
    // AGENT resumes and stops again: its copy and its archive catch up.
    {
        let mut f = fs::OpenOptions::new()
            .append(true)
            .open(s.agent_transcript(AGENT))
            .expect("open");
        std::io::Write::write_all(&mut f, &s.agent_rest).expect("append");
    }
    s.fire(
        "SubagentStop",
        &json!({"agent_id": AGENT, "agent_type": "general-purpose",
            "agent_transcript_path": s.agent_transcript(AGENT), "stop_hook_active": false,
            "last_assistant_message": "Done again."}),
    );
    s.fire(
        "PostToolUse",
        &json!({"tool_name": "Agent", "tool_input": {"subagent_type": "general-purpose"},
            "tool_response": {"status": "completed"}}),
    );
    s.fire("Stop", &json!({"stop_hook_active": false}));
    s.fire(
        "PreCompact",
        &json!({"trigger": "auto", "custom_instructions": ""}),
    );
    let compact = s.fire("SessionStart", &json!({"source": "compact"}));
    s.grow(1.0);
    s.fire("Stop", &json!({"stop_hook_active": false}));
    s.fire("SessionEnd", &json!({"reason": "prompt_input_exit"}));

    let errors = s.env.log_errors();
    assert!(errors.is_empty(), "{errors:#?}");

    // The reminder after the compaction: the prompt (redacted) and the open tasks by id.
    let reminder: Value = serde_json::from_slice(&compact.stdout).expect("reminder json");
    let text = reminder["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("additionalContext");
    assert!(
        text.contains("Deploy with token [REDACTED:github-token]"),
        "{text}"
    );
    assert!(text.contains("task #"), "{text}");

    // (1) No secret in clear in any file under the state directory (archive and catalog
    // included), every file 0600 and every directory 0700.
    let state = s.env.state.clone();
    let mut all = vec![state.clone()];
    entries(&state, &mut all);
    let mut bad_modes = Vec::new();
    let mut leaks = Vec::new();
    for p in &all {
        let md = p.symlink_metadata().expect("stat");
        let mode = md.permissions().mode() & 0o777;
        let want = if md.is_dir() { 0o700 } else { 0o600 };
        if mode != want {
            bad_modes.push(format!("{:o} {}", mode, p.display()));
        }
        // The catalog included: its full-text index is filled from redacted lines.
        if md.is_file() {
            // Lower-cased: a search index keeps tokens folded and split at punctuation, so
            // the longest alphanumeric run of each secret is looked for as well.
            let bytes = content(p).to_ascii_lowercase();
            for secret in SECRETS {
                let run = secret
                    .split(|c: char| !c.is_ascii_alphanumeric())
                    .max_by_key(|r| r.len())
                    .expect("run")
                    .to_ascii_lowercase();
                for needle in [secret.to_ascii_lowercase(), run] {
                    if bytes.windows(needle.len()).any(|w| w == needle.as_bytes()) {
                        leaks.push(format!("{needle} in {}", p.display()));
                    }
                }
            }
        }
    }
    assert!(bad_modes.is_empty(), "{bad_modes:#?}");
    // The search covered every kind of file the hook writes.
    let names: Vec<String> = all
        .iter()
        .map(|p| {
            p.strip_prefix(&state)
                .expect("inside")
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    for want in [
        "catalog.db",
        "logs/hook.log",
        "security.jsonl",
        "sessions.json",
        "session-log.md",
        "session-logs/snapshot.jsonl",
        "session-logs/agent-a52886dc180afb356.jsonl",
        "context.md",
        "request.json",
        "hook-events.jsonl",
        "work/notes.md",
        ".jsonl.zst",
        ".meta.json",
        "checkpoints/",
        ".state.json",
        ".archive-ids",
    ] {
        assert!(
            names.iter().any(|n| n.contains(want)),
            "no {want} in {names:#?}"
        );
    }
    assert!(leaks.is_empty(), "{leaks:#?}");

    // The request directory: the prompt first in context.md, then the agent's context; the
    // work file; the prompt in request.json; all redacted.
    let map = read_json(&state.join("sessions.json"));
    let req_id = map["sessions"][SESSION]["request"]
        .as_str()
        .expect("request");
    let req_dir = state.join("requests").join(SESSION).join(req_id);
    let context = fs::read_to_string(req_dir.join("context.md")).expect("context.md");
    assert!(
        context.starts_with(
            "## Prompt\n\nDeploy with token [REDACTED:github-token] and mail [REDACTED:email]"
        ),
        "{context}"
    );
    assert!(
        context.contains("The staging key is [REDACTED:aws-access-key-id]"),
        "{context}"
    );
    let notes = fs::read_to_string(req_dir.join("work/notes.md")).expect("work file");
    assert!(
        notes.contains("slack bot token: [REDACTED:slack-token]"),
        "{notes}"
    );
    let request = read_json(&req_dir.join("request.json"));
    assert!(
        request["prompt"]
            .as_str()
            .expect("prompt")
            .contains("[REDACTED:github-token]"),
        "{request}"
    );
    assert_eq!(
        request["agents"].as_array().expect("agents").len(),
        agents.len() + 1
    );
    assert!(req_dir.join("session-log.md").is_file());
    // session-logs/: the snapshot and a (redacted) copy of each subagent transcript.
    for a in &agents {
        let copy = req_dir.join(format!("session-logs/agent-{a}.jsonl"));
        let want = fs::read(s.agent_transcript(a)).expect("agent transcript");
        let got = fs::read(&copy).expect("agent copy");
        assert_eq!(
            got.len(),
            want.len(),
            "{a}: nothing to redact there, so byte-equal"
        );
        assert_eq!(got, want, "{a}");
    }

    // The audit lines say what each event was about.
    let mut audit = read_lines(
        &state
            .join("requests")
            .join(SESSION)
            .join("hook-events.jsonl"),
    );
    let mut dirs: Vec<PathBuf> = fs::read_dir(state.join("requests").join(SESSION))
        .expect("requests")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for d in &dirs {
        audit.extend(read_lines(&d.join("hook-events.jsonl")));
    }
    let about = |event: &str, key: &str| -> Vec<Value> {
        audit
            .iter()
            .filter(|l| l["event"] == event)
            .map(|l| l[key].clone())
            .collect()
    };
    assert_eq!(
        about("SessionStart", "source"),
        [json!("startup"), json!("compact")]
    );
    assert_eq!(about("PreCompact", "trigger"), [json!("auto")]);
    assert_eq!(about("SessionEnd", "reason"), [json!("prompt_input_exit")]);
    assert_eq!(
        about("UserPromptSubmit", "prompt_chars"),
        [json!(prompt().chars().count())]
    );
    assert_eq!(
        about("PreToolUse", "tool_name"),
        [json!("Skill"), json!("Bash"), json!("Agent")]
    );
    assert!(
        about("SubagentStop", "agent_type")
            .iter()
            .all(|t| t == "general-purpose")
    );
    assert!(audit.iter().all(|l| l["outcome"] == "ok"), "{audit:#?}");

    // (3) security.jsonl: the redacting writes with rule counts, the archive files created.
    let trail = read_lines(&state.join("security.jsonl"));
    let redacted_in = |file: &str, rule: &str| {
        trail.iter().any(|l| {
            l["action"] == "redacted"
                && l["file"].as_str().is_some_and(|f| f.ends_with(file))
                && l["rules"][rule].as_u64() > Some(0)
        })
    };
    assert!(redacted_in("context.md", "github-token"), "{trail:#?}");
    assert!(redacted_in("context.md", "aws-access-key-id"), "{trail:#?}");
    assert!(redacted_in("request.json", "email"), "{trail:#?}");
    assert!(redacted_in("notes.md", "slack-token"), "{trail:#?}");
    let created: Vec<&Value> = trail.iter().filter(|l| l["action"] == "created").collect();
    assert!(created.len() > agents.len(), "{trail:#?}");
    assert!(created.iter().all(|l| l["mode"] == "0600"), "{created:#?}");

    // (2) The archive metadata equals `skein archive --redact`'s for the same transcripts.
    let reference = s.env.state.parent().expect("xdg").join("reference-archive");
    let out = s
        .env
        .cmd()
        .args(["archive", "--redact", "--to"])
        .arg(&reference)
        .arg(s.env.projects.join(PROJECT))
        .output()
        .expect("skein archive");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let hook = metas(&state.join("archive"));
    let want = metas(&reference);
    assert_eq!(hook.len(), 1 + agents.len(), "{hook:#?}");
    let keys = |v: &[(String, Value)]| v.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>();
    assert_eq!(keys(&hook), keys(&want));
    for ((path, got), (_, expected)) in hook.iter().zip(&want) {
        let mut expected = expected.clone();
        // How the session ended is the hook's to know (SessionEnd's reason).
        if path.ends_with(&format!("{SESSION}.jsonl")) {
            assert_eq!(got["outcome"], "prompt_input_exit");
            expected["outcome"] = got["outcome"].clone();
        }
        assert_eq!(got, &expected, "{path}");
    }
    let main = &hook
        .iter()
        .find(|(k, _)| k.ends_with(&format!("{SESSION}.jsonl")))
        .expect("main meta")
        .1;
    assert!(main["message_count"].as_u64() > Some(20), "{main}");
    assert!(main["duration_ms"].as_u64() > Some(0), "{main}");
    assert_eq!(main["skills_used"], json!(["pdf"]));
    assert_eq!(
        main["files_modified"],
        json!(["/experiments/worktrees/src/main.rs"])
    );
    for (path, m) in hook.iter().filter(|(k, _)| k.contains("agent-")) {
        assert!(m["tool_use_id"].is_string(), "{path}: {m}");
        assert_eq!(m["outcome"], "completed", "{path}: {m}");
    }
}

#[test]
fn the_hook_fails_open_on_its_own_arguments() {
    let env = Env::with_config("lock_timeout_ms = 60000\n");
    let stop = env.event("stop");
    for (args, logged) in [
        (&["--bogus"][..], "skein hook arguments ignored"),
        (&["--config"][..], "skein hook arguments ignored"),
        (
            &["--config", "/nonexistent/skein.toml"][..],
            "config ignored",
        ),
    ] {
        let before = env.audit().len();
        let out = env.hook_with(stop.as_bytes(), args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert!(
            out.stdout.is_empty() && out.stderr.is_empty(),
            "{args:?}: {out:?}"
        );
        // Logged, and the hook still did its work (one more audit line).
        let errors = env.log_errors();
        assert!(
            errors
                .iter()
                .any(|e| e["message"].as_str().is_some_and(|m| m.contains(logged))),
            "{args:?}: {errors:#?}"
        );
        assert_eq!(env.audit().len(), before + 1, "{args:?}");
    }
    // Help still works (and is not a hook run).
    let out = env.cmd().args(["hook", "--help"]).output().expect("help");
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("--config"));
}

#[test]
fn the_loop_guard_refuses_a_call_repeated_too_often() {
    let env = Env::with_config(
        "lock_timeout_ms = 60000\n[events]\nPreToolUse = [\"loop-guard\"]\n\
         [pass.loop-guard]\nrepeats = 3\nwindow = 5\n",
    );
    let call = |command: &str| {
        env.hook(&env.event_with(
            "pre_tool_use",
            &json!({"tool_input": {"command": command, "description": "x"}}),
        ))
    };
    for i in 0..2 {
        let out = call("cargo test");
        assert!(
            out.status.success() && out.stdout.is_empty(),
            "call {i}: {out:?}"
        );
    }
    // Another input in between does not reset the count.
    assert!(call("ls").stdout.is_empty());
    let out = call("cargo test");
    assert_eq!(out.status.code(), Some(0));
    let decision: Value = serde_json::from_slice(&out.stdout).expect("decision json");
    let hso = &decision["hookSpecificOutput"];
    assert_eq!(hso["hookEventName"], "PreToolUse");
    assert_eq!(hso["permissionDecision"], "deny");
    assert!(
        hso["permissionDecisionReason"]
            .as_str()
            .is_some_and(|r| r.contains("Bash") && r.contains("3 times")),
        "{decision}"
    );
    // The same input with keys in another order is the same call.
    let reordered = env.hook(&env.event_with(
        "pre_tool_use",
        &json!({"tool_input": {"description": "x", "command": "cargo test"}}),
    ));
    assert!(!reordered.stdout.is_empty());
    // Once the window has moved on, the call goes through again.
    for c in ["a", "b", "c", "d"] {
        assert!(call(c).stdout.is_empty());
    }
    assert!(call("cargo test").stdout.is_empty());
    let blocked = env
        .audit()
        .iter()
        .filter(|l| l["decision"] == "block")
        .count();
    assert_eq!(blocked, 2);

    // A bad option fails open: logged, the call goes through.
    let bad = Env::with_config(
        "[events]\nPreToolUse = [\"loop-guard\"]\n[pass.loop-guard]\nrepeats = 1\n",
    );
    for _ in 0..6 {
        let out = bad.hook(&bad.event("pre_tool_use"));
        assert!(out.status.success() && out.stdout.is_empty(), "{out:?}");
    }
    assert!(!bad.log_errors().is_empty());
}

#[test]
fn install_warns_when_the_command_is_not_this_skein() {
    let env = Env::with_config("");
    let bin = env.state.parent().expect("xdg").join("bin");
    fs::create_dir_all(&bin).expect("mkdir");
    let install = |path: &Path| {
        env.cmd()
            .env("PATH", path)
            .args(["hooks", "install"])
            .output()
            .expect("install")
    };
    let out = install(&bin);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("`skein hook` does not resolve to a program on PATH"),
        "{err}"
    );
    assert!(
        err.contains("--command \"$(command -v skein) hook\""),
        "{err}"
    );
    // Once PATH finds this very binary, there is nothing to say.
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_skein"), bin.join("skein")).expect("link");
    let out = install(&bin);
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_first_stop_mid_session_opens_an_implicit_request_from_the_last_prompt() {
    // skein installed in the middle of a session: no UserPromptSubmit was ever seen.
    let env = Env::with_config("lock_timeout_ms = 60000\n");
    let stop: Value = serde_json::from_str(&env.event("stop")).expect("fixture");
    let transcript = PathBuf::from(stop["transcript_path"].as_str().expect("path"));
    let sid = stop["session_id"].as_str().expect("sid");
    let line = |uuid: &str, parent: Option<&str>, kind: &str, content: Value| {
        json!({"type": kind, "uuid": uuid, "parentUuid": parent, "isSidechain": false,
            "sessionId": sid, "timestamp": "2026-05-01T10:00:00.000Z",
            "message": {"role": kind, "content": content}})
    };
    append(
        &transcript,
        &[
            line("u1", None, "user", json!("First, read the code.")),
            line(
                "a1",
                Some("u1"),
                "assistant",
                json!([{"type": "text", "text": "Read."}]),
            ),
            line(
                "u2",
                Some("a1"),
                "user",
                json!(format!("Now fix the bug; token {PROMPT_TOKEN}")),
            ),
            line(
                "a2",
                Some("u2"),
                "assistant",
                json!([{"type": "text", "text": "Fixed."}]),
            ),
        ],
    );
    let out = env.hook(&stop.to_string());
    assert!(out.status.success() && out.stdout.is_empty(), "{out:?}");
    let map = read_json(&env.state.join("sessions.json"));
    let id = map["sessions"][sid]["request"]
        .as_str()
        .expect("a request was opened");
    let dir = env.state.join("requests").join(sid).join(id);
    let request = read_json(&dir.join("request.json"));
    assert_eq!(request["implicit"], true);
    assert_eq!(request["start_uuid"], "u2");
    assert_eq!(
        request["prompt"],
        "Now fix the bug; token [REDACTED:github-token]"
    );
    let context = fs::read_to_string(dir.join("context.md")).expect("context.md");
    assert!(
        context.starts_with("## Prompt\n\nNow fix the bug; token [REDACTED:github-token]\n"),
        "{context}"
    );
    let log = fs::read_to_string(dir.join("session-log.md")).expect("session log");
    assert!(
        log.contains("Fixed.") && !log.contains("First, read the code."),
        "{log}"
    );
}
