//! Fail-open rules: every internal error → exit 0, nothing on stdout, a log entry; blocking
//! only when asked for, only on Stop/SubagentStop, never with `stop_hook_active`.

use crate::common;

use std::fs;

use common::{EVENTS, Env, PROMPT, SID, append_lines, todo_write, user_line};
use skein_hook::{
    ChangeKind, Config, HookContext, LogLevel, NoopPasses, PassError, PassInput, PassReport,
    PassRunner, RecordingPasses, run,
};

fn assert_failed_open(out: &skein_hook::HookOutcome, what: &str) {
    assert_eq!(out.exit_code, 0, "{what}");
    assert_eq!(out.stdout, None, "{what}");
    assert_eq!(out.stderr, None, "{what}");
    assert!(out.has_errors(), "{what}: no error logged: {:?}", out.log);
}

#[test]
fn garbage_input_is_logged() {
    let env = Env::new();
    for input in [
        &b"not json"[..],
        b"",
        b"[]",
        b"{\"hook_event_name\":\"Stop\"}",
    ] {
        let out = run(input, &env.ctx(), &mut NoopPasses);
        assert_failed_open(&out, &String::from_utf8_lossy(input));
    }
    let log = fs::read_to_string(env.state.join("logs/hook.log")).expect("log file");
    assert_eq!(log.lines().count(), 4);
}

#[test]
fn corrupt_session_map() {
    let env = Env::new();
    append_lines(&env.transcript(), &[user_line("u0", None, PROMPT)]);
    fs::create_dir_all(&env.state).expect("mkdir");
    fs::write(env.state.join("sessions.json"), b"{\"sessions\": {tru").expect("write");
    let mut p = RecordingPasses::default();
    let out = run(env.event("stop").as_bytes(), &env.ctx(), &mut p);
    assert_failed_open(&out, "stop");
    // The passes still ran (archiving does not need a request).
    assert_eq!(p.calls.len(), 3);
    let logged = fs::read_to_string(env.state.join("logs/hook.log")).expect("log");
    assert!(logged.contains("corrupt state file"), "{logged}");
    assert!(
        logged.contains(SID) && logged.contains("\"event\":\"Stop\""),
        "{logged}"
    );

    // The next prompt moves the corrupt map aside and starts over.
    let out = run(
        env.event("user_prompt_submit").as_bytes(),
        &env.ctx(),
        &mut p,
    );
    assert_eq!(out.exit_code, 0);
    assert!(!out.has_errors(), "{:?}", out.log);
    assert!(
        out.log
            .iter()
            .any(|e| e.level == LogLevel::Warn && e.message.contains("moved to"))
    );
    assert_eq!(env.request_dirs().len(), 1);
    let aside = fs::read_dir(&env.state)
        .expect("read_dir")
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.file_name().to_string_lossy().contains(".corrupt-"))
        })
        .count();
    assert_eq!(aside, 1);
}

#[test]
fn corrupt_request_file() {
    let env = Env::new();
    run(
        env.event("user_prompt_submit").as_bytes(),
        &env.ctx(),
        &mut NoopPasses,
    );
    fs::write(env.current_request_dir().join("request.json"), b"\x00\x01").expect("write");
    for ev in ["subagent_stop", "stop", "session_start_compact"] {
        let out = run(env.event(ev).as_bytes(), &env.ctx(), &mut NoopPasses);
        assert_failed_open(&out, ev);
    }
}

#[test]
fn unwritable_state_dir() {
    let env = Env::new();
    append_lines(&env.transcript(), &[user_line("u0", None, PROMPT)]);
    // A regular file where the state directory should be: nothing can be created below it
    // (works even when the tests run as root, unlike permission bits).
    fs::write(&env.state, b"not a directory").expect("write");
    for name in EVENTS.iter().filter(|n| **n != "stop_active") {
        let out = run(env.event(name).as_bytes(), &env.ctx(), &mut NoopPasses);
        assert_failed_open(&out, name);
        assert!(
            out.log
                .iter()
                .any(|e| e.message.contains("log file not written")),
            "{name}"
        );
    }
}

#[test]
fn blocking_only_when_asked_and_never_in_a_loop() {
    let env = Env::new();
    fs::write(&env.state, b"not a directory").expect("write");
    let mut ctx = env.ctx();
    ctx.base_config.blocking = true;
    let out = run(env.event("stop").as_bytes(), &ctx, &mut NoopPasses);
    assert_eq!(out.exit_code, 2);
    assert_eq!(out.stdout, None);
    assert!(
        out.stderr
            .expect("stderr")
            .starts_with("skein hook failed: ")
    );
    let out = run(env.event("subagent_stop").as_bytes(), &ctx, &mut NoopPasses);
    assert_eq!(out.exit_code, 2);
    // stop_hook_active: this turn is already forced by a Stop hook → never block again.
    let out = run(env.event("stop_active").as_bytes(), &ctx, &mut NoopPasses);
    assert_failed_open(&out, "stop_active");
    // Blocking a prompt or a compaction would hurt the user: never.
    for ev in ["user_prompt_submit", "pre_compact", "session_end"] {
        assert_failed_open(&run(env.event(ev).as_bytes(), &ctx, &mut NoopPasses), ev);
    }
}

#[test]
fn failed_pass_is_offered_again_and_others_still_run() {
    let env = Env::new();
    append_lines(&env.transcript(), &[user_line("u0", None, PROMPT)]);
    let mut p = RecordingPasses {
        fail: vec!["snapshot".into()],
        ..RecordingPasses::default()
    };
    let out = run(env.event("stop").as_bytes(), &env.ctx(), &mut p);
    assert_failed_open(&out, "stop");
    assert!(
        out.log
            .iter()
            .any(|e| e.message.contains("simulated failure"))
    );
    p.fail.clear();
    let out = run(env.event("stop").as_bytes(), &env.ctx(), &mut p);
    assert!(!out.has_errors());
    let changes: Vec<_> = p
        .calls
        .iter()
        .map(|c| (c.pass.as_str(), c.change))
        .collect();
    assert_eq!(
        changes,
        [
            ("snapshot", Some(ChangeKind::Rewritten)),
            ("archive", Some(ChangeKind::Rewritten)),
            ("index", Some(ChangeKind::Rewritten)),
            ("snapshot", Some(ChangeKind::Rewritten)),
            ("archive", Some(ChangeKind::Unchanged)),
            ("index", Some(ChangeKind::Unchanged)),
        ]
    );
}

struct Panicky;
impl PassRunner for Panicky {
    fn run_pass(&mut self, _: &PassInput<'_>) -> Result<PassReport, PassError> {
        panic!("pass exploded")
    }
}

#[test]
fn panicking_pass_is_caught() {
    let env = Env::new();
    append_lines(
        &env.transcript(),
        &[todo_write("a0", "u0", &[("x", "pending")])],
    );
    let out = run(env.event("stop").as_bytes(), &env.ctx(), &mut Panicky);
    assert_failed_open(&out, "stop");
    assert!(out.log.iter().any(|e| e.message.contains("pass exploded")));
    let audit = common::read_lines(&env.request_dirs()[0].join("hook-events.jsonl"));
    assert_eq!(audit[0]["outcome"], "error");
}

#[test]
fn bad_config_falls_back_to_defaults_with_a_log_entry() {
    let env = Env::new();
    let cfg = env.dir.path().join("config.toml");
    fs::write(
        &cfg,
        "goal_reminder = true\n[log]\nmax_bytes = 10\nfoo = 1\n",
    )
    .expect("write");
    let mut ctx: HookContext = env.ctx();
    ctx.config_files.explicit = Some(cfg);
    let out = run(env.event("session_end").as_bytes(), &ctx, &mut NoopPasses);
    assert_failed_open(&out, "session_end");
    let msg = &out
        .log
        .iter()
        .find(|e| e.level == LogLevel::Error)
        .expect("error")
        .message;
    assert!(
        msg.contains("config.toml:4:") && msg.contains("foo"),
        "{msg}"
    );
    assert_eq!(
        ctx.base_config,
        Config {
            lock_timeout_ms: 60_000,
            ..Config::default()
        }
    );
}

#[test]
fn busy_transcript_skips_passes_without_error() {
    let env = Env::new();
    append_lines(&env.transcript(), &[user_line("u0", None, PROMPT)]);
    let held = skein_hook::TranscriptCheckpoints::open(
        &env.state,
        &env.transcript(),
        std::time::Duration::from_secs(1),
    )
    .expect("hold the checkpoints");
    let mut ctx = env.ctx();
    ctx.base_config.lock_timeout_ms = 50;
    let mut p = RecordingPasses::default();
    let out = run(env.event("stop").as_bytes(), &ctx, &mut p);
    assert_eq!((out.exit_code, out.stdout.as_deref()), (0, None));
    assert!(!out.has_errors(), "{:?}", out.log);
    assert!(out.log.iter().any(|e| e.message.contains("busy")));
    assert!(p.calls.is_empty());
    drop(held);
    let audit = common::read_lines(&env.request_dirs()[0].join("hook-events.jsonl"));
    assert_eq!(audit[0]["outcome"], "busy");
    let out = run(env.event("stop").as_bytes(), &ctx, &mut p);
    assert!(!out.has_errors());
    assert_eq!(p.calls.len(), 3);
    assert!(
        p.calls
            .iter()
            .all(|c| c.change == Some(ChangeKind::Rewritten))
    );
}
