//! Hook input parsing (every event, realistic JSON from format.md §15) and validation of ids
//! and paths against hostile input.

use crate::common;

use std::fs;
use std::path::PathBuf;

use common::{AGENT, EVENTS, Env, SID};
use skein_hook::{EventError, EventKind, HookEvent, NoopPasses, run};

#[test]
fn every_fixture_parses_with_its_fields() {
    let env = Env::new();
    for name in EVENTS {
        let e =
            HookEvent::parse(env.event(name).as_bytes()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(e.session_id.as_deref(), Some(SID), "{name}");
        assert_eq!(e.cwd.as_deref(), Some("/w"), "{name}");
        assert!(e.transcript_path.is_some(), "{name}");
        e.validate(std::slice::from_ref(&env.projects))
            .unwrap_or_else(|err| panic!("{name}: {err}"));
    }
    let parse = |n: &str| HookEvent::parse(env.event(n).as_bytes()).expect("parse");

    let stop = parse("stop");
    assert_eq!(stop.kind(), EventKind::Stop);
    assert!(!stop.stop_hook_active);
    assert_eq!(
        stop.last_assistant_message.as_deref(),
        Some("Done. Tests pass.")
    );
    assert_eq!(stop.extra["effort"]["level"], "high");
    assert!(stop.extra.contains_key("background_tasks"));
    assert!(parse("stop_active").stop_hook_active);

    let sub = parse("subagent_stop");
    assert_eq!(sub.kind(), EventKind::SubagentStop);
    assert_eq!(sub.agent_id.as_deref(), Some(AGENT));
    assert_eq!(sub.agent_type.as_deref(), Some("Explore"));
    let v = sub
        .validate(std::slice::from_ref(&env.projects))
        .expect("valid");
    assert_eq!(v.agent_transcript, Some(env.agent_transcript()));
    assert_eq!(v.transcript, Some(env.transcript()));

    let start = parse("session_start_compact");
    assert!(start.is_compact_start());
    assert_eq!(start.extra["model"], "claude-opus-4-7");
    assert!(!parse("session_start_startup").is_compact_start());
    assert_eq!(
        parse("session_end").reason.as_deref(),
        Some("prompt_input_exit")
    );
    assert_eq!(parse("pre_compact").trigger.as_deref(), Some("auto"));
    assert_eq!(
        parse("pre_compact").custom_instructions.as_deref(),
        Some("")
    );
    assert_eq!(parse("post_compact").kind(), EventKind::PostCompact);
    assert_eq!(
        parse("user_prompt_submit").prompt.as_deref(),
        Some(common::PROMPT)
    );
    assert_eq!(parse("subagent_start").kind(), EventKind::SubagentStart);
    assert_eq!(parse("stop_failure").extra["error"], "rate_limit");
    let unknown = parse("unknown_event");
    assert_eq!(unknown.kind(), EventKind::Other("FileChanged".into()));
    assert_eq!(unknown.kind().name(), "FileChanged");
    assert_eq!(unknown.extra["brand_new_field"]["x"][2], 3);
    // Events skein has no default work for arrive as `Other` with every field kept.
    let pre = parse("pre_tool_use");
    assert_eq!(pre.kind(), EventKind::Other("PreToolUse".into()));
    assert_eq!(pre.tool_name.as_deref(), Some("Bash"));
    assert_eq!(
        pre.extra["tool_input"]["command"],
        "cargo test -p skein-core"
    );
    let post = parse("post_tool_use");
    assert_eq!(post.kind().name(), "PostToolUse");
    assert_eq!(post.extra["tool_response"]["success"], true);
    let note = parse("notification");
    assert_eq!(note.kind().name(), "Notification");
    assert_eq!(note.extra["notification_type"], "permission_prompt");
    assert_eq!(parse("setup").kind().name(), "Setup");
    assert_eq!(parse("setup").trigger.as_deref(), Some("init"));
    assert_eq!(parse("cwd_changed").kind().name(), "CwdChanged");
}

#[test]
fn tolerant_parsing() {
    // BOM, whitespace, wrong-typed known field kept in extra, string boolean.
    let raw = "\u{feff}  {\"session_id\":42,\"hook_event_name\":\"Stop\",\"stop_hook_active\":\"true\"}\n";
    let e = HookEvent::parse(raw.as_bytes()).expect("parse");
    assert_eq!(e.session_id, None);
    assert_eq!(e.extra["session_id"], 42);
    assert!(e.stop_hook_active);
    assert!(matches!(e.validate(&[]), Err(EventError::MissingSession)));
    assert!(matches!(
        HookEvent::parse(b"[1,2]"),
        Err(EventError::NotObject)
    ));
    assert!(matches!(
        HookEvent::parse(b"{\"a\":"),
        Err(EventError::Json(_))
    ));
    assert!(matches!(HookEvent::parse(b""), Err(EventError::Json(_))));
}

fn event_with(env: &Env, session: &str, agent: Option<&str>, path: &str) -> HookEvent {
    HookEvent {
        hook_event_name: "SubagentStop".into(),
        session_id: Some(session.into()),
        agent_id: agent.map(Into::into),
        transcript_path: Some(env.transcript().to_string_lossy().into_owned()),
        agent_transcript_path: Some(path.into()),
        ..HookEvent::default()
    }
}

#[test]
fn malicious_ids_are_refused() {
    let env = Env::new();
    let ok_path = env.agent_transcript().to_string_lossy().into_owned();
    let dirs = [env.projects.clone()];
    for bad in [
        "../../x", "..", "a/b", "/etc", ".hidden", "x\0y", "", "sess ion", "é",
    ] {
        let e = event_with(&env, bad, Some(AGENT), &ok_path);
        assert!(
            matches!(
                e.validate(&dirs),
                Err(EventError::BadId {
                    field: "session_id",
                    ..
                })
            ),
            "{bad:?}"
        );
        let e = event_with(&env, SID, Some(bad), &ok_path);
        assert!(
            matches!(
                e.validate(&dirs),
                Err(EventError::BadId {
                    field: "agent_id",
                    ..
                })
            ),
            "{bad:?}"
        );
    }
}

#[test]
fn malicious_paths_are_refused() {
    let env = Env::new();
    let dirs = [env.projects.clone()];
    let outside = env.dir.path().join("outside");
    fs::create_dir_all(&outside).expect("mkdir");
    fs::write(outside.join("secret.jsonl"), "{}\n").expect("write");
    // A symlinked file and a symlinked directory inside the projects dir, pointing outside.
    std::os::unix::fs::symlink(
        outside.join("secret.jsonl"),
        env.projects.join("-w/link.jsonl"),
    )
    .expect("symlink");
    std::os::unix::fs::symlink(&outside, env.projects.join("evil")).expect("symlink");
    let p = env.projects.to_string_lossy().into_owned();
    let bad = [
        format!("{p}/../../outside/secret.jsonl"),
        format!("{p}/-w/../../outside/secret.jsonl"),
        outside.join("secret.jsonl").to_string_lossy().into_owned(),
        "/etc/passwd".to_owned(),
        "relative/path.jsonl".to_owned(),
        format!("{p}/-w/x\0.jsonl"),
        format!("{p}/-w/link.jsonl"),
        format!("{p}/evil/secret.jsonl"),
        format!("{p}/evil/not-yet-created.jsonl"),
        p.clone(),
        format!("{p}/.."),
        "/../../../etc/passwd".to_owned(),
    ];
    for path in &bad {
        let e = event_with(&env, SID, Some(AGENT), path);
        assert!(
            matches!(
                e.validate(&dirs),
                Err(EventError::BadPath {
                    field: "agent_transcript_path",
                    ..
                })
            ),
            "{path:?} accepted"
        );
    }
    // Inside and harmless: accepted, even when it does not exist yet or uses `.`/`..` inside.
    for good in [
        format!("{p}/-w/{SID}/subagents/agent-{AGENT}.jsonl"),
        format!("{p}/-w/./new-session.jsonl"),
        format!("{p}/-w/sub/../{SID}.jsonl"),
        format!("{p}/not-yet/dir/file.jsonl"),
    ] {
        let e = event_with(&env, SID, Some(AGENT), &good);
        let v = e
            .validate(&dirs)
            .unwrap_or_else(|err| panic!("{good:?}: {err}"));
        let got = v.agent_transcript.expect("path");
        assert!(got.starts_with(&env.projects) && !got.to_string_lossy().contains(".."));
    }
}

#[test]
fn refused_events_fail_open_and_touch_nothing_outside_the_state() {
    let env = Env::new();
    let outside: PathBuf = env.dir.path().join("victim");
    for (session, path) in [
        (
            "../../victim",
            env.transcript().to_string_lossy().into_owned(),
        ),
        (SID, "/etc/passwd".to_owned()),
        (
            SID,
            format!("{}/../../victim/x.jsonl", env.projects.display()),
        ),
    ] {
        let ev = serde_json::json!({
            "session_id": session, "transcript_path": path, "cwd": "/w",
            "hook_event_name": "Stop", "stop_hook_active": false,
        });
        let out = run(ev.to_string().as_bytes(), &env.ctx(), &mut NoopPasses);
        assert_eq!(out.exit_code, 0);
        assert_eq!(out.stdout, None);
        assert!(
            out.log.iter().any(|e| e.message.contains("refused")),
            "{:?}",
            out.log
        );
        assert!(!outside.exists());
    }
    // The refused events with a plain session id are audited as refused.
    let audit = common::read_lines(
        &env.state
            .join("requests")
            .join(SID)
            .join("hook-events.jsonl"),
    );
    assert_eq!(audit.len(), 2);
    assert!(audit.iter().all(|l| l["outcome"] == "refused"));
    let log = fs::read_to_string(env.state.join("logs/hook.log")).expect("log");
    assert_eq!(log.lines().count(), 3);
}
