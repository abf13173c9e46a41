//! Parallel hooks on one session (Claude Code runs matching hooks in parallel): no audit line
//! and no state update may be lost, from threads and from separate processes.

use crate::common;

use std::fs;
use std::path::Path;
use std::process::Command;

use common::{Env, PROMPT, SID, append_lines, read_lines, user_line};
use skein_hook::{NoopPasses, run};

const WORKERS: usize = 16;

fn subagent_template(env: &Env, agent: &str) -> String {
    let mut ev: serde_json::Value =
        serde_json::from_str(&env.event("subagent_stop")).expect("json");
    ev["agent_id"] = agent.into();
    ev.to_string()
}

/// Checks the state after `opened` prompts followed by `agents` SubagentStops and `stops` Stops.
fn check_state(env: &Env, opened: usize, agents: usize, stops: usize) {
    let map: serde_json::Value =
        serde_json::from_slice(&fs::read(env.state.join("sessions.json")).expect("map"))
            .expect("json");
    assert_eq!(map["sessions"][SID]["opened"], opened);
    let dirs = env.request_dirs();
    assert_eq!(dirs.len(), opened);
    // Ids sort in opening order: the per-session counter increases along the sorted list.
    let counters: Vec<usize> = dirs
        .iter()
        .map(|d| {
            let name = d.file_name().and_then(|n| n.to_str()).expect("name");
            name.rsplit('-')
                .next()
                .and_then(|c| c.parse().ok())
                .expect("counter")
        })
        .collect();
    assert_eq!(counters, (1..=opened).collect::<Vec<_>>());
    let current = env.current_request_dir();
    assert_eq!(&current, dirs.last().expect("last"));
    for d in &dirs[..opened - 1] {
        assert_eq!(
            read_lines(&d.join("hook-events.jsonl")).len(),
            1,
            "{}",
            d.display()
        );
    }
    let audit = read_lines(&current.join("hook-events.jsonl"));
    assert_eq!(audit.len(), 1 + agents + stops);
    let count = |e: &str| audit.iter().filter(|l| l["event"] == e).count();
    assert_eq!((count("SubagentStop"), count("Stop")), (agents, stops));
    assert!(audit.iter().all(|l| l["outcome"] == "ok"), "{audit:?}");
    let req: serde_json::Value =
        serde_json::from_slice(&fs::read(current.join("request.json")).expect("req"))
            .expect("json");
    let recorded = req["agents"].as_array().expect("agents");
    assert_eq!(recorded.len(), agents);
    let mut ids: Vec<&str> = recorded
        .iter()
        .map(|a| a["agent_id"].as_str().expect("id"))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), agents);
    let ctx_md = fs::read_to_string(current.join("context.md")).expect("context.md");
    assert_eq!(ctx_md.matches("\n## Explore `").count(), agents);
    let mut work: Vec<String> = fs::read_dir(current.join("work"))
        .expect("work")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    work.sort();
    let mut expected: Vec<String> = (1..=agents as u32)
        .map(|n| {
            if n == 1 {
                "findings.md".to_owned()
            } else {
                format!("findings-{n}.md")
            }
        })
        .collect();
    expected.sort();
    assert_eq!(work, expected);
}

#[test]
fn sixteen_threads_lose_nothing() {
    let env = Env::new();
    append_lines(&env.transcript(), &[user_line("u0", None, PROMPT)]);
    let per = 4;
    let ctx = env.ctx();
    std::thread::scope(|s| {
        for _ in 0..WORKERS {
            s.spawn(|| {
                for _ in 0..per {
                    let out = run(
                        env.event("user_prompt_submit").as_bytes(),
                        &ctx,
                        &mut NoopPasses,
                    );
                    assert!(!out.has_errors(), "{:?}", out.log);
                }
            });
        }
    });
    let (env, ctx) = (&env, &ctx);
    std::thread::scope(|s| {
        for t in 0..WORKERS {
            s.spawn(move || {
                for i in 0..per {
                    let ev = if t % 2 == 0 {
                        subagent_template(env, &format!("a{t}x{i}"))
                    } else {
                        env.event("stop")
                    };
                    let out = run(ev.as_bytes(), ctx, &mut NoopPasses);
                    assert!(!out.has_errors(), "{:?}", out.log);
                }
            });
        }
    });
    let half = WORKERS / 2 * per;
    check_state(env, WORKERS * per, half, half);
}

fn spawn_workers(
    bin: &Path,
    env: &Env,
    template: &str,
    name: &str,
    count: usize,
    per: usize,
) -> Vec<std::process::Child> {
    let file = env.dir.path().join(format!("{name}.json"));
    fs::write(&file, template).expect("template");
    (0..count)
        .map(|_| {
            Command::new(bin)
                .arg(&env.state)
                .arg(&env.projects)
                .arg(&file)
                .arg(per.to_string())
                .spawn()
                .expect("spawn stress worker")
        })
        .collect()
}

fn wait_all(children: Vec<std::process::Child>) {
    for mut c in children {
        let status = c.wait().expect("wait");
        assert!(status.success(), "worker failed: {status}");
    }
}

#[test]
fn sixteen_processes_lose_nothing() {
    let bin = Path::new(env!("CARGO_BIN_EXE_skein-hook-stress"));
    let env = Env::new();
    append_lines(&env.transcript(), &[user_line("u0", None, PROMPT)]);
    let per = 3;
    wait_all(spawn_workers(
        bin,
        &env,
        &env.event("user_prompt_submit"),
        "ups",
        WORKERS,
        per,
    ));
    // SubagentStops and Stops at the same time, on the same request.
    let mut children = spawn_workers(
        bin,
        &env,
        &subagent_template(&env, "a@N@"),
        "sub",
        WORKERS,
        per,
    );
    children.extend(spawn_workers(
        bin,
        &env,
        &env.event("stop"),
        "stop",
        WORKERS,
        per,
    ));
    wait_all(children);
    check_state(&env, WORKERS * per, WORKERS * per, WORKERS * per);
}
