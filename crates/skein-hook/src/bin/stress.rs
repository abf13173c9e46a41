//! Test-only helper: `skein-hook-stress <state> <projects> <event.json> <iterations>` runs the
//! hook runtime `iterations` times on the event (with `@N@` replaced by `<pid>x<i>`), as one
//! more process competing for the same state. Exit 1 if any run logged an error. With `-` as
//! the event file the event is read from stdin (used by `benches/hook_latency.sh` to time the
//! runtime alone: `SKEIN_BENCH_STRESS=1`).
#![allow(clippy::print_stderr)] // a test driver reporting its failures
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "tests, benches and tools read and write files"
)]

use std::process::ExitCode;

use skein_hook::{Config, HookContext, NoopPasses, run};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [state, projects, event, iterations] = args.as_slice() else {
        eprintln!("usage: skein-hook-stress <state> <projects> <event.json> <iterations>");
        return ExitCode::from(64);
    };
    let template = if event == "-" {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s).map(|_| s)
    } else {
        std::fs::read_to_string(event)
    };
    let Ok(template) = template else {
        eprintln!("cannot read {event}");
        return ExitCode::from(66);
    };
    let n: u32 = iterations.parse().unwrap_or(1);
    let mut ctx = HookContext::new(state, projects, std::time::SystemTime::now);
    ctx.base_config = Config {
        lock_timeout_ms: 120_000,
        ..Config::default()
    };
    let pid = std::process::id();
    let mut failed = false;
    for i in 0..n {
        let bytes = template.replace("@N@", &format!("{pid}x{i}"));
        let out = run(bytes.as_bytes(), &ctx, &mut NoopPasses);
        for e in out
            .log
            .iter()
            .filter(|e| e.level == skein_hook::LogLevel::Error)
        {
            eprintln!("{}", e.message);
            failed = true;
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
