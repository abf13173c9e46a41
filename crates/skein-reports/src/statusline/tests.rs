use skein_core::time::{Zone, parse_ms};

use super::*;
use crate::usage::blocks::{DEFAULT_BLOCK_MS, PricedRequest};
use crate::usage::{Source, Tokens};

fn ms(s: &str) -> i64 {
    parse_ms(s).expect("time")
}

fn req(session: u32, at: &str, input: u64, cost: f64) -> PricedRequest {
    PricedRequest {
        session,
        timestamp_ms: ms(at),
        model: "claude-opus-4-7".into(),
        tokens: Tokens {
            input,
            ..Tokens::default()
        },
        cost,
        source: Source::Main,
    }
}

fn berlin() -> Zone {
    Zone::from_jiff(
        "Europe/Berlin",
        jiff::tz::TimeZone::posix("CET-1CEST,M3.5.0,M10.5.0/3").expect("rule"),
    )
}

fn priced() -> PricedRequests {
    // Around Berlin's switch to summer time (2026-03-29T01:00Z).
    PricedRequests {
        requests: vec![
            req(0, "2026-03-29T21:00:00Z", 10, 1.0),
            req(1, "2026-03-29T22:00:00Z", 20, 2.0),
            req(0, "2026-03-29T22:30:00Z", 30, 4.0),
        ],
        unpriced: Vec::new(),
        sessions: vec![("a".into(), "p".into()), ("b".into(), "p".into())],
    }
}

#[test]
fn today_is_the_local_day_and_the_block_is_the_active_one() {
    let p = priced();
    let now = ms("2026-03-29T23:00:00Z");
    // UTC: all three on 03-29. Berlin: 03-30 starts at 22:00Z (00:00 CEST).
    let (today, block) = usage_figures(&p, now, &Zone::utc(), DEFAULT_BLOCK_MS);
    assert!((today - 7.0).abs() < 1e-9, "{today}");
    let (today, _) = usage_figures(&p, now, &berlin(), DEFAULT_BLOCK_MS);
    assert!((today - 6.0).abs() < 1e-9, "{today}");
    let b = block.expect("a block 21:00-02:00 is active at 23:00");
    assert_eq!((b.cost, b.tokens), (7.0, 60));
    assert_eq!(b.now.remaining_minutes, 180);
    // $7 over 1.5 h.
    let rate = b.now.burn_rate.expect("three requests");
    assert!((rate.cost_per_hour - 7.0 / 1.5).abs() < 1e-9);
    // Five hours after the last request nothing is active.
    let late = ms("2026-03-30T03:30:00Z");
    assert_eq!(
        usage_figures(&p, late, &Zone::utc(), DEFAULT_BLOCK_MS).1,
        None
    );
    assert!((session_cost(&p, "a") - 5.0).abs() < 1e-9);
    assert!(session_cost(&p, "c").abs() < 1e-9);
}

#[test]
fn the_line_in_the_default_format() {
    let p = priced();
    let now = ms("2026-03-29T23:00:00Z");
    let (today, block) = usage_figures(&p, now, &Zone::utc(), DEFAULT_BLOCK_MS);
    let input = StatusInput::parse(
        br#"{"model":{"display_name":"Opus 4.7"},"workspace":{"current_dir":"/home/me/app/"},"cost":{"total_cost_usd":7.6349},"context_window":{"context_window_size":200000,"current_usage":{"input_tokens":5,"cache_read_input_tokens":89995}}}"#,
    )
    .expect("input");
    let figures = StatusFigures {
        today_cost: Some(today),
        session_cost: Some(5.0),
        block,
        context_tokens: None,
    };
    let t = Template::parse(DEFAULT_FORMAT).expect("default format");
    assert_eq!(
        render(&t, &input, &figures, false),
        "Opus 4.7 · $7.63 session · $7.00 today · $7.00 block, 3h 00m left, $4.67/h · ctx 90k (45%)"
    );
    let colored = render(&t, &input, &figures, true);
    assert!(colored.contains("\x1b[36mOpus 4.7\x1b[0m"), "{colored:?}");
    assert!(colored.contains("\x1b[32m90k (45%)\x1b[0m"), "{colored:?}");

    // Nothing known but the model and the directory: the groups drop out.
    let bare = StatusInput::parse(br#"{"model":{"id":"claude-opus-4-7[1m]"},"cwd":"/w/x"}"#)
        .expect("input");
    assert_eq!(
        render(&t, &bare, &StatusFigures::default(), false),
        "claude-opus-4-7[1m] · - session · - today"
    );
    // A [1m] model has a million-token window; skein's own figure when Claude Code has none.
    let with_tokens = StatusFigures {
        context_tokens: Some(250_000),
        ..StatusFigures::default()
    };
    let ctx = Template::parse("{context}").expect("valid");
    assert_eq!(render(&ctx, &bare, &with_tokens, false), "250k (25%)");
    let minimal = Template::parse(MINIMAL_FORMAT).expect("minimal");
    assert_eq!(
        render(&minimal, &bare, &StatusFigures::default(), false),
        "claude-opus-4-7[1m] · x"
    );
}

#[test]
fn number_formats() {
    assert_eq!(dollars(0.004), "$0.00");
    assert_eq!(dollars(7.625), "$7.63");
    assert_eq!(dollars(1_234_567.891), "$1,234,567.89");
    assert_eq!(duration(125), "2h 05m");
    assert_eq!(duration(7), "7m");
    assert_eq!(tokens(999), "999");
    assert_eq!(tokens(12_345), "12k");
    assert_eq!(tokens(1_500_000), "1.5M");
}
