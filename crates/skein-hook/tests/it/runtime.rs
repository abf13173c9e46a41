//! The runtime end to end through `run()`: request scoping, passes with checkpoints,
//! extraction, the goal reminder, the audit trail.

use crate::common;

use std::fs;

use common::{AGENT, EVENTS, Env, PROMPT, SID, append_lines, assistant_text, read_lines};
use common::{todo_write, user_line};
use skein_hook::{ChangeKind, HookOutcome, NoopPasses, RecordingPasses, run};

fn run_ok(env: &Env, event: &str, passes: &mut RecordingPasses) -> HookOutcome {
    let out = run(env.event(event).as_bytes(), &env.ctx(), passes);
    assert_eq!(out.exit_code, 0, "{event}: {:?}", out.log);
    assert!(!out.has_errors(), "{event}: {:?}", out.log);
    out
}

fn calls(p: &mut RecordingPasses) -> Vec<(String, Option<ChangeKind>)> {
    p.calls.drain(..).map(|c| (c.pass, c.change)).collect()
}

#[test]
fn request_lifecycle_with_incremental_passes() {
    let env = Env::new();
    let t = env.transcript();
    append_lines(
        &t,
        &[
            user_line("u0", None, "hello"),
            assistant_text("a0", "u0", "m0", "Hi."),
        ],
    );
    let before = fs::metadata(&t).expect("meta").len();
    let mut p = RecordingPasses::default();

    let out = run_ok(&env, "user_prompt_submit", &mut p);
    assert_eq!(out.stdout, None);
    assert!(p.calls.is_empty());
    let req_dir = env.current_request_dir();
    let req: serde_json::Value =
        serde_json::from_slice(&fs::read(req_dir.join("request.json")).expect("read"))
            .expect("json");
    assert_eq!(req["prompt"], PROMPT);
    assert_eq!(req["start_offset"], before);
    assert_eq!(req["session"], SID);

    append_lines(
        &t,
        &[
            user_line("u1", Some("a0"), PROMPT),
            todo_write(
                "a1",
                "u1",
                &[
                    ("Fix splitter", "completed"),
                    ("Add regression test", "in_progress"),
                ],
            ),
            assistant_text("a2", "a1", "m2", "Done."),
        ],
    );
    run_ok(&env, "stop", &mut p);
    let size = fs::metadata(&t).expect("meta").len();
    let first = p.calls.clone();
    assert_eq!(
        calls(&mut p),
        [
            ("snapshot".to_owned(), Some(ChangeKind::Rewritten)),
            ("archive".to_owned(), Some(ChangeKind::Rewritten)),
            ("index".to_owned(), Some(ChangeKind::Rewritten)),
        ]
    );
    assert!(
        first
            .iter()
            .all(|c| c.end == size && c.transcript.as_deref() == Some(t.as_path()))
    );
    assert!(
        first
            .iter()
            .all(|c| c.request.as_deref() == req_dir.file_name().and_then(|n| n.to_str()))
    );
    let req: serde_json::Value =
        serde_json::from_slice(&fs::read(req_dir.join("request.json")).expect("read"))
            .expect("json");
    assert_eq!(req["start_uuid"], "u1");
    assert_eq!(req["todos"][1]["status"], "in_progress");

    append_lines(
        &t,
        &[
            user_line("u2", Some("a2"), "more"),
            assistant_text("a3", "u2", "m3", "Ok."),
        ],
    );
    run_ok(&env, "stop", &mut p);
    let appended = Some(ChangeKind::Appended { from: size });
    assert_eq!(
        calls(&mut p),
        [
            ("snapshot".to_owned(), appended),
            ("archive".to_owned(), appended),
            ("index".to_owned(), appended)
        ]
    );

    // A partial last line is not offered until it is complete.
    fs::OpenOptions::new()
        .append(true)
        .open(&t)
        .and_then(|mut f| std::io::Write::write_all(&mut f, b"{\"type\":\"user\",\"uu"))
        .expect("partial");
    run_ok(&env, "stop", &mut p);
    assert!(
        calls(&mut p)
            .iter()
            .all(|(_, c)| *c == Some(ChangeKind::Unchanged))
    );

    run_ok(&env, "stop_active", &mut p);
    assert!(p.calls.is_empty());

    run_ok(&env, "subagent_stop", &mut p);
    let c = p.calls.drain(..).collect::<Vec<_>>();
    let names: Vec<&str> = c.iter().map(|c| c.pass.as_str()).collect();
    assert_eq!(names, ["archive", "index"]);
    for c in &c {
        assert_eq!(
            c.transcript.as_deref(),
            Some(env.agent_transcript().as_path())
        );
        assert_eq!(c.change, None, "agent transcript does not exist");
    }
    let ctx_md = fs::read_to_string(req_dir.join("context.md")).expect("context.md");
    assert!(ctx_md.contains("## Explore `a4d2c8f1e0b3a297`"), "{ctx_md}");
    assert!(ctx_md.contains("The parser lives in crates/skein-core/src/lines.rs."));
    assert_eq!(
        fs::read_to_string(req_dir.join("work/findings.md")).expect("work"),
        "# Findings\n1. off-by-one\n"
    );

    // Without last_assistant_message the agent transcript's final text is used.
    append_lines(
        &env.agent_transcript(),
        &[
            user_line("s1", None, "look around"),
            assistant_text(
                "s2",
                "s1",
                "ms2",
                "<work filename=\"findings.md\">second</work>",
            ),
        ],
    );
    let mut ev: serde_json::Value =
        serde_json::from_str(&env.event("subagent_stop")).expect("json");
    ev.as_object_mut()
        .expect("obj")
        .remove("last_assistant_message");
    let out = run(ev.to_string().as_bytes(), &env.ctx(), &mut p);
    assert!(!out.has_errors(), "{:?}", out.log);
    assert_eq!(
        fs::read_to_string(req_dir.join("work/findings-2.md")).expect("work"),
        "second"
    );
    let req: serde_json::Value =
        serde_json::from_slice(&fs::read(req_dir.join("request.json")).expect("read"))
            .expect("json");
    assert_eq!(req["agents"].as_array().expect("agents").len(), 2);
    assert_eq!(req["agents"][0]["agent_id"], AGENT);
    assert_eq!(req["agents"][0]["work_files"][0], "findings.md");
    assert_eq!(req["agents"][1]["work_files"][0], "findings-2.md");
    assert_eq!(
        p.calls.drain(..).next().expect("archive").change,
        Some(ChangeKind::Rewritten)
    );

    // Goal reminder after compaction: the prompt and the open todo only.
    let out = run_ok(&env, "session_start_compact", &mut p);
    let json: serde_json::Value = serde_json::from_str(&out.stdout.expect("stdout")).expect("json");
    assert_eq!(json["hookSpecificOutput"]["hookEventName"], "SessionStart");
    let text = json["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("text");
    assert!(text.contains(PROMPT), "{text}");
    assert!(
        text.contains("- [in_progress] Add regression test"),
        "{text}"
    );
    assert!(!text.contains("Fix splitter"), "{text}");
    assert_eq!(run_ok(&env, "session_start_startup", &mut p).stdout, None);

    // The archive checkpoint is per transcript and pass, whatever the event: Stop archived it.
    for ev in ["pre_compact", "session_end"] {
        run_ok(&env, ev, &mut p);
        assert_eq!(
            calls(&mut p),
            [("archive".to_owned(), Some(ChangeKind::Unchanged))],
            "{ev}"
        );
    }

    let audit = read_lines(&req_dir.join("hook-events.jsonl"));
    let events: Vec<&str> = audit
        .iter()
        .map(|l| l["event"].as_str().expect("event"))
        .collect();
    assert_eq!(
        events,
        [
            "UserPromptSubmit",
            "Stop",
            "Stop",
            "Stop",
            "Stop",
            "SubagentStop",
            "SubagentStop",
            "SessionStart",
            "SessionStart",
            "PreCompact",
            "SessionEnd",
        ]
    );
    assert_eq!(audit[4]["outcome"], "skipped");
    assert_eq!(audit[5]["agent"], AGENT);
    assert!(
        audit
            .iter()
            .all(|l| l["session"] == SID && l["ts"].is_string() && l["pid"].is_u64())
    );
    assert!(
        audit
            .iter()
            .enumerate()
            .all(|(i, l)| i == 4 || l["outcome"] == "ok")
    );
}

#[test]
fn every_event_runs_clean_on_a_fresh_state() {
    for name in EVENTS {
        let env = Env::new();
        append_lines(&env.transcript(), &[user_line("u0", None, PROMPT)]);
        let out = run(env.event(name).as_bytes(), &env.ctx(), &mut NoopPasses);
        assert_eq!(out.exit_code, 0, "{name}");
        assert!(!out.has_errors(), "{name}: {:?}", out.log);
        let trail = env.request_dirs().first().map_or_else(
            || {
                env.state
                    .join("requests")
                    .join(SID)
                    .join("hook-events.jsonl")
            },
            |d| d.join("hook-events.jsonl"),
        );
        assert_eq!(read_lines(&trail).len(), 1, "{name}");
    }
}

#[test]
fn transcript_replaced_by_a_new_file_is_rewritten() {
    let env = Env::new();
    let t = env.transcript();
    append_lines(
        &t,
        &[
            user_line("u0", None, "a"),
            assistant_text("a0", "u0", "m0", "b"),
        ],
    );
    let mut p = RecordingPasses::default();
    run_ok(&env, "pre_compact", &mut p);
    run_ok(&env, "pre_compact", &mut p);
    assert_eq!(calls(&mut p)[1].1, Some(ChangeKind::Unchanged));
    let tmp = t.with_extension("new");
    fs::write(&tmp, fs::read(&t).expect("read")).expect("write");
    fs::rename(&tmp, &t).expect("rename");
    run_ok(&env, "pre_compact", &mut p);
    assert_eq!(calls(&mut p)[0].1, Some(ChangeKind::Rewritten));
    // Same inode, content before the offset changed.
    let mut bytes = fs::read(&t).expect("read");
    bytes[2] = b'X';
    fs::write(&t, &bytes).expect("write");
    run_ok(&env, "pre_compact", &mut p);
    assert_eq!(calls(&mut p)[0].1, Some(ChangeKind::Rewritten));
}

/// 2026-08-22T10:15:02.123Z: the clock every time in the run must come from.
fn fixed_clock() -> std::time::SystemTime {
    std::time::UNIX_EPOCH + std::time::Duration::from_millis(1_787_393_702_123)
}

#[test]
fn times_come_from_the_context_clock() {
    let env = Env::new();
    append_lines(&env.transcript(), &[user_line("u0", None, "hello")]);
    let mut ctx = env.ctx();
    ctx.clock = fixed_clock;
    let out = run(
        env.event("user_prompt_submit").as_bytes(),
        &ctx,
        &mut NoopPasses,
    );
    assert!(!out.has_errors(), "{:?}", out.log);
    let req_dir = env.current_request_dir();
    assert_eq!(
        req_dir.file_name().and_then(|n| n.to_str()),
        Some("20260822T101502123Z-000001")
    );
    let req: serde_json::Value =
        serde_json::from_slice(&fs::read(req_dir.join("request.json")).expect("read"))
            .expect("json");
    assert_eq!(req["opened_at"], "2026-08-22T10:15:02.123Z");
    let audit = read_lines(&req_dir.join("hook-events.jsonl"));
    assert_eq!(audit[0]["ts"], "2026-08-22T10:15:02.123Z");
    // A refused event is logged, at the clock's time too.
    let bad = run(b"not json", &ctx, &mut NoopPasses);
    assert!(bad.has_errors());
    assert!(
        bad.log.iter().all(|e| e.ts == "2026-08-22T10:15:02.123Z"),
        "{:?}",
        bad.log
    );
}
