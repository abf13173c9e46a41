//! `skein usage blocks` end to end on `testdata/reports/blocks` (four 5-hour blocks around a
//! DST change, a resume copy and a sidechain replay; expectations derived by hand in its
//! README), and on the corpus: the blocks add up to the daily report.

use serde_json::Value;

use crate::common::{corpus, jsonl, ok, report_dir, root, skein, stderr, stdout};

const NOW: &str = "2026-03-29T23:00:00Z";

fn projects() -> String {
    report_dir("blocks").join("projects").display().to_string()
}

/// The rows and the totals of `skein usage blocks ARGS` on the fixture.
fn blocks(args: &[&str]) -> (Vec<Value>, Value) {
    let p = projects();
    let mut all = vec!["usage", "blocks", "--format", "jsonl", "-q"];
    all.extend_from_slice(args);
    all.push(&p);
    let mut out = jsonl(ok(&skein(&all, &root())));
    let totals = out.pop().expect("totals row");
    assert_eq!(totals["totals"], true);
    assert_eq!(totals["report"], "blocks");
    (out, totals)
}

/// (start, end, last activity, requests, input) of each row; gaps as ("gap", start, end).
fn shape(rows: &[Value]) -> Vec<String> {
    rows.iter()
        .map(|r| {
            let s = |k: &str| {
                r[k].as_str()
                    .unwrap_or("-")
                    .get(5..16)
                    .unwrap_or("-")
                    .to_owned()
            };
            if r["gap"] == true {
                format!("gap {} {}", s("start"), s("end"))
            } else {
                format!(
                    "{} {} {} {} {}",
                    s("start"),
                    s("end"),
                    s("last_activity"),
                    r["requests"],
                    r["input_tokens"]
                )
            }
        })
        .collect()
}

#[test]
fn blocks_follow_the_rule_and_add_up_to_the_daily_report() {
    let (rows, totals) = blocks(&["--now", NOW, "--gaps"]);
    assert_eq!(
        shape(&rows),
        [
            "03-28T20:00 03-29T01:00 03-29T00:59 3 111",
            "03-29T01:00 03-29T06:00 03-29T05:00 2 11000",
            "gap 03-29T10:00 03-29T11:30",
            "03-29T11:00 03-29T16:00 03-29T16:00 2 1100000",
            "03-29T21:00 03-30T02:00 03-29T22:00 2 110000000",
        ]
    );
    let active: Vec<bool> = rows.iter().map(|r| r["active"] == true).collect();
    assert_eq!(active, [false, false, false, false, true]);
    let cost: Vec<f64> = rows
        .iter()
        .map(|r| r["cost_usd"].as_f64().expect("cost"))
        .collect();
    assert_eq!(cost, [0.000_555, 0.055, 0.0, 5.5, 550.0]);
    assert_eq!(totals["messages"], 9);
    assert_eq!(totals["input_tokens"], 111_111_111);
    assert_eq!(totals["scan"]["duplicate_copies"], 1);
    assert_eq!(totals["scan"]["sidechain_replays"], 1);
    // The same totals as the daily report (same deduplication).
    let p = projects();
    let daily = jsonl(ok(&skein(
        &["usage", "--format", "jsonl", "-q", &p],
        &root(),
    )));
    let d = daily.last().expect("daily totals");
    for k in ["messages", "input_tokens", "total_tokens", "cost_usd"] {
        assert_eq!(totals[k], d[k], "{k}");
    }
    // Without --gaps, no gap rows; every row says whether it is one.
    let (rows, _) = blocks(&["--now", NOW]);
    assert_eq!(rows.len(), 4);
    assert!(rows.iter().all(|r| r["gap"] == false));
}

/// A duration bound counts back from `--now`, as the blocks do, not from the clock.
#[test]
fn a_duration_bound_counts_from_now() {
    let (by_duration, _) = blocks(&["--now", NOW, "--since", "1d"]);
    let (by_instant, _) = blocks(&["--now", NOW, "--since", "2026-03-28T23:00:00Z"]);
    assert!(!by_duration.is_empty(), "blocks in the day before --now");
    assert_eq!(by_duration, by_instant);
}

#[test]
fn the_active_block_has_rate_projection_and_limit() {
    let (rows, totals) = blocks(&["--now", NOW, "--active", "--token-limit", "max"]);
    assert_eq!(rows.len(), 1);
    let a = &rows[0];
    assert_eq!(a["start"], "2026-03-29T21:00:00.000Z");
    assert_eq!(
        (&a["elapsed_minutes"], &a["remaining_minutes"]),
        (&120.into(), &180.into())
    );
    assert_eq!(a["burn_rate"]["tokens_per_hour"], 110_000_000.0);
    assert_eq!(a["burn_rate"]["cost_per_hour"], 550.0);
    assert_eq!(a["projection"]["total_tokens"], 440_000_000);
    assert_eq!(a["projection"]["cost_usd"], 2200.0);
    let l = &a["token_limit"];
    assert_eq!(l["limit"], 1_100_000, "the largest past block, C");
    assert_eq!(
        (&l["used_percent"], &l["projected_percent"]),
        (&10_000.0.into(), &40_000.0.into())
    );
    assert_eq!(l["status"], "exceeds");
    assert_eq!(
        totals["input_tokens"], 110_000_000,
        "totals over the rows shown"
    );

    for (limit, used, projected, status) in [
        ("500000000", 22.0, 88.0, "warning"),
        ("1_000_000_000", 11.0, 44.0, "ok"),
    ] {
        let (rows, _) = blocks(&["--now", NOW, "--active", "--token-limit", limit]);
        let l = &rows[0]["token_limit"];
        assert_eq!(l["used_percent"], used, "{limit}");
        assert_eq!(l["projected_percent"], projected, "{limit}");
        assert_eq!(l["status"], status, "{limit}");
    }
    // The warning on stderr when the projection exceeds the limit (not with -q).
    let p = projects();
    let out = ok(&skein(
        &[
            "usage",
            "blocks",
            "--active",
            "--now",
            NOW,
            "--token-limit",
            "max",
            "--format",
            "jsonl",
            &p,
        ],
        &root(),
    ))
    .clone();
    assert!(stderr(&out).contains("projected to reach 40000.0% of the 1,100,000 token limit"));

    // At D's end nothing is active. At 14:00 C is: "max" is then the largest block ended by
    // 14:00 (B), and --now moves the clock only (C's 16:00 request still counts).
    let (rows, totals) = blocks(&["--now", "2026-03-30T02:00:00Z", "--active"]);
    assert!(rows.is_empty());
    assert_eq!(totals["messages"], 0);
    let (rows, _) = blocks(&[
        "--now",
        "2026-03-29T14:00:00Z",
        "--active",
        "--token-limit",
        "max",
    ]);
    let c = &rows[0];
    assert_eq!(c["start"], "2026-03-29T11:00:00.000Z");
    assert_eq!(c["projection"]["total_tokens"], 1_588_889);
    assert_eq!(c["projection"]["cost_usd"], 7.944_444);
    assert_eq!(c["token_limit"]["limit"], 11_000);
    assert_eq!(c["token_limit"]["status"], "exceeds");
}

#[test]
fn zones_choose_days_not_blocks() {
    let day = [
        "--since",
        "2026-03-29",
        "--until",
        "2026-03-29",
        "--now",
        NOW,
    ];
    let starts = |zone: &str| {
        let mut args = day.to_vec();
        args.extend(["--timezone", zone]);
        blocks(&args)
            .0
            .iter()
            .map(|r| r["start"].as_str().expect("start")[11..16].to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(starts("UTC"), ["01:00", "11:00", "21:00"]);
    assert_eq!(starts("Europe/Berlin"), ["01:00", "11:00", "21:00"]);
    assert_eq!(starts("Asia/Tokyo"), ["20:00", "01:00", "11:00"]);

    // The table shows local starts: 03:00 CEST right after the switch, a half-hour zone keeps
    // UTC hours.
    let p = projects();
    let table = |zone: &str| {
        stdout(ok(&skein(
            &[
                "usage",
                "blocks",
                "--format",
                "table",
                "-q",
                "--now",
                NOW,
                "--timezone",
                zone,
                &p,
            ],
            &root(),
        )))
    };
    let berlin = table("Europe/Berlin");
    for s in [
        "block start (Europe/Berlin)",
        "2026-03-28 21:00",
        "2026-03-29 03:00",
        "2026-03-29 13:00",
        "2026-03-29 23:00",
        "ACTIVE, 3h 00m left",
        "active block 2026-03-29 23:00 – 04:00: 2h 00m elapsed, 3h 00m left",
        "burn rate  110,000,000 tokens/h, $550.00/h",
    ] {
        assert!(berlin.contains(s), "{s:?} in\n{berlin}");
    }
    assert!(table("Asia/Kolkata").contains("2026-03-29 01:30"));
}

#[test]
fn other_lengths_and_refusals() {
    let (rows, _) = blocks(&["--now", NOW, "--session-length", "1", "--gaps"]);
    let (gaps, blocks_): (Vec<&Value>, Vec<&Value>) = rows.iter().partition(|r| r["gap"] == true);
    let starts: Vec<&str> = blocks_
        .iter()
        .map(|r| &r["start"].as_str().expect("start")[11..16])
        .collect();
    assert_eq!(
        starts,
        [
            "20:00", "22:00", "00:00", "01:00", "05:00", "11:00", "16:00", "21:00"
        ]
    );
    assert_eq!(gaps.len(), 6);
    let p = projects();
    for (args, msg) in [
        (
            vec!["usage", "blocks", "--session-length", "0", &p],
            "positive number of hours",
        ),
        (
            vec!["usage", "blocks", "--token-limit", "lots", &p],
            "neither a number",
        ),
        (
            vec!["usage", "blocks", "--now", "tomorrow", &p],
            "not an ISO-8601 time",
        ),
        (
            vec!["usage", "daily", "--active", &p],
            "--active belongs to the blocks report",
        ),
        (
            vec!["usage", "blocks", "--by", "agent", &p],
            "--by agent replaces the blocks report",
        ),
    ] {
        let out = skein(&args, &root());
        assert!(!out.status.success(), "{args:?}");
        assert!(stderr(&out).contains(msg), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn corpus_blocks_add_up_to_the_daily_totals() {
    let Some(dir) = corpus() else { return };
    let d = dir.display().to_string();
    let run = |args: &[&str]| {
        let mut all = vec!["usage"];
        all.extend_from_slice(args);
        all.extend(["--format", "jsonl", "-q", &d]);
        jsonl(ok(&skein(&all, &root())))
    };
    let daily = run(&[]);
    let blocks = run(&["blocks", "--gaps"]);
    let (bt, dt) = (
        blocks.last().expect("totals"),
        daily.last().expect("totals"),
    );
    for k in [
        "messages",
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
        "cost_usd",
    ] {
        assert_eq!(bt[k], dt[k], "{k}");
    }
    // Blocks are in time order, never overlap, and each holds its requests within 5 hours.
    let rows = &blocks[..blocks.len() - 1];
    let ms = |v: &Value| skein_core::time::parse_ms(v.as_str().expect("time")).expect("parse");
    let mut prev_end = i64::MIN;
    for r in rows.iter().filter(|r| r["gap"] == false) {
        let (start, end) = (ms(&r["start"]), ms(&r["end"]));
        assert_eq!(start % 3_600_000, 0, "starts on an hour");
        assert_eq!(end - start, 5 * 3_600_000);
        assert!(start >= prev_end, "no overlap at {}", r["start"]);
        assert!(ms(&r["last_activity"]) <= end);
        prev_end = end;
    }
    let block_sum: u64 = rows
        .iter()
        .map(|r| r["requests"].as_u64().expect("n"))
        .sum();
    assert_eq!(Some(block_sum), dt["messages"].as_u64());
}
