//! Shared fixtures: a temp "Claude projects" dir, a temp state root, realistic hook JSON
//! (from `tests/fixtures/events`, with `@PROJECTS@` replaced) and transcript lines.
#![allow(dead_code)]

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::json;
use skein_hook::{Config, HookContext};

pub(crate) const SID: &str = "3f0c5d2e-8a1b-4c7d-9e2f-0a1b2c3d4e5f";
pub(crate) const AGENT: &str = "a4d2c8f1e0b3a297";
pub(crate) const PROMPT: &str =
    "Fix the off-by-one in the line splitter and add a regression test.";

pub(crate) const EVENTS: &[&str] = &[
    "user_prompt_submit",
    "stop",
    "stop_active",
    "subagent_start",
    "subagent_stop",
    "session_start_startup",
    "session_start_compact",
    "pre_compact",
    "post_compact",
    "session_end",
    "stop_failure",
    "unknown_event",
    "pre_tool_use",
    "post_tool_use",
    "notification",
    "setup",
    "cwd_changed",
];

pub(crate) struct Env {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) projects: PathBuf,
    pub(crate) state: PathBuf,
}

impl Env {
    pub(crate) fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let projects = dir.path().join("claude").join("projects");
        fs::create_dir_all(projects.join("-w").join(SID).join("subagents")).expect("mkdir");
        let state = dir.path().join("state");
        Self {
            dir,
            projects,
            state,
        }
    }

    pub(crate) fn transcript(&self) -> PathBuf {
        self.projects.join("-w").join(format!("{SID}.jsonl"))
    }

    pub(crate) fn agent_transcript(&self) -> PathBuf {
        self.projects
            .join("-w")
            .join(SID)
            .join("subagents")
            .join(format!("agent-{AGENT}.jsonl"))
    }

    /// The fixture `name` with `@PROJECTS@` pointing into this environment.
    pub(crate) fn event(&self, name: &str) -> String {
        fixture(name).replace("@PROJECTS@", &self.projects.to_string_lossy())
    }

    pub(crate) fn ctx(&self) -> HookContext {
        let mut ctx = HookContext::new(&self.state, &self.projects, std::time::SystemTime::now);
        ctx.base_config = Config {
            lock_timeout_ms: 60_000,
            ..Config::default()
        };
        ctx
    }

    pub(crate) fn request_dirs(&self) -> Vec<PathBuf> {
        let dir = self.state.join("requests").join(SID);
        let mut out: Vec<PathBuf> = fs::read_dir(&dir)
            .map(|rd| {
                rd.map(|e| e.expect("entry").path())
                    .filter(|p| p.is_dir())
                    .collect()
            })
            .unwrap_or_default();
        out.sort();
        out
    }

    pub(crate) fn current_request_dir(&self) -> PathBuf {
        let map: serde_json::Value = serde_json::from_slice(
            &fs::read(self.state.join("sessions.json")).expect("sessions.json"),
        )
        .expect("json");
        let id = map["sessions"][SID]["request"]
            .as_str()
            .expect("request id");
        self.state.join("requests").join(SID).join(id)
    }
}

pub(crate) fn fixture(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/events")
        .join(format!("{name}.json"));
    fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

pub(crate) fn append_lines(path: &Path, lines: &[String]) {
    let mut f = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .expect("open transcript");
    for l in lines {
        f.write_all(l.as_bytes()).expect("write");
        f.write_all(b"\n").expect("write");
    }
}

pub(crate) fn read_lines(path: &Path) -> Vec<serde_json::Value> {
    fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect()
}

pub(crate) fn user_line(uuid: &str, parent: Option<&str>, text: &str) -> String {
    json!({"type":"user","uuid":uuid,"parentUuid":parent,"isSidechain":false,"sessionId":SID,
        "timestamp":"2026-05-01T10:00:00.000Z",
        "message":{"role":"user","content":text}})
    .to_string()
}

pub(crate) fn assistant_text(uuid: &str, parent: &str, msg_id: &str, text: &str) -> String {
    json!({"type":"assistant","uuid":uuid,"parentUuid":parent,"isSidechain":false,"sessionId":SID,
        "timestamp":"2026-05-01T10:00:02.000Z",
        "message":{"id":msg_id,"type":"message","role":"assistant","model":"claude-opus-4-7",
            "content":[{"type":"text","text":text}],"stop_reason":"end_turn",
            "usage":{"input_tokens":3,"output_tokens":12}}})
    .to_string()
}

pub(crate) fn todo_write(uuid: &str, parent: &str, todos: &[(&str, &str)]) -> String {
    let todos: Vec<_> = todos
        .iter()
        .map(|(c, s)| json!({"content":c,"status":s,"activeForm":c}))
        .collect();
    json!({"type":"assistant","uuid":uuid,"parentUuid":parent,"sessionId":SID,
        "message":{"id":format!("msg_{uuid}"),"role":"assistant","model":"claude-opus-4-7",
            "content":[{"type":"tool_use","id":format!("toolu_{uuid}"),"name":"TodoWrite",
                "input":{"todos":todos}}]}})
    .to_string()
}
