//! Time zones end to end: `skein usage` on `testdata/reports/zones` (requests around a DST
//! change; expectations derived by hand in its README) with `--timezone` and with `TZ`.

use std::path::Path;

use serde_json::Value;

use crate::common::{jsonl, ok, report_dir, root, skein, skein_env, stderr};

fn projects() -> String {
    report_dir("zones").join("projects").display().to_string()
}

/// (key, input tokens) of every row but the totals, run with `args` and the environment `env`.
fn rows(args: &[&str], env: &[(&str, &Path)]) -> Vec<(String, u64)> {
    let p = projects();
    let mut all = vec!["usage", "--format", "jsonl", "-q"];
    all.extend_from_slice(args);
    all.push(&p);
    let out = jsonl(ok(&skein_env(&all, &root(), env)));
    let (totals, rows) = out.split_last().expect("totals row");
    assert_eq!(
        totals["input_tokens"], 111_111,
        "totals do not depend on the zone"
    );
    rows.iter()
        .map(|r| {
            let key = ["date", "week", "month"]
                .iter()
                .find_map(|k| r[k].as_str())
                .expect("a time key");
            (key.to_owned(), r["input_tokens"].as_u64().expect("input"))
        })
        .collect()
}

fn expect(pairs: &[(&str, u64)]) -> Vec<(String, u64)> {
    pairs.iter().map(|&(k, v)| (k.to_owned(), v)).collect()
}

#[test]
fn daily_keys_are_local_days_across_a_dst_change() {
    let utc = expect(&[
        ("2026-03-28", 11),
        ("2026-03-29", 1100),
        ("2026-03-30", 10_000),
        ("2026-03-31", 100_000),
    ]);
    assert_eq!(rows(&["--timezone", "UTC"], &[]), utc);
    // The helper runs with TZ=UTC: the default follows it.
    assert_eq!(rows(&[], &[]), utc);
    let berlin = expect(&[
        ("2026-03-28", 1),
        ("2026-03-29", 110),
        ("2026-03-30", 11_000),
        ("2026-04-01", 100_000),
    ]);
    assert_eq!(rows(&["--timezone", "Europe/Berlin"], &[]), berlin);
    assert_eq!(rows(&[], &[("TZ", Path::new("Europe/Berlin"))]), berlin);
    // --timezone wins over TZ.
    assert_eq!(
        rows(
            &["--timezone", "UTC"],
            &[("TZ", Path::new("Europe/Berlin"))]
        ),
        utc
    );
    // A fixed +01:00 ignores summer time: request 4 stays on March 29th.
    assert_eq!(
        rows(&["--timezone", "+01:00"], &[]),
        expect(&[
            ("2026-03-28", 1),
            ("2026-03-29", 1110),
            ("2026-03-30", 10_000),
            ("2026-03-31", 100_000),
        ])
    );
    let new_york = expect(&[
        ("2026-03-28", 11),
        ("2026-03-29", 11_100),
        ("2026-03-31", 100_000),
    ]);
    assert_eq!(rows(&["--timezone", "America/New_York"], &[]), new_york);
    // A leading '-' is a value, not a flag; -04:00 is New York's summer offset.
    assert_eq!(rows(&["--timezone", "-0400"], &[]), new_york);
}

#[test]
fn weeks_months_and_ranges_follow_the_zone() {
    let berlin = ["--timezone", "Europe/Berlin"];
    assert_eq!(
        rows(&["weekly", "--timezone", "UTC"], &[]),
        expect(&[("2026-03-23", 1111), ("2026-03-30", 110_000)])
    );
    assert_eq!(
        rows(&[&["weekly"][..], &berlin].concat(), &[]),
        expect(&[("2026-03-23", 111), ("2026-03-30", 111_000)])
    );
    assert_eq!(
        rows(&["monthly", "--timezone", "UTC"], &[]),
        expect(&[("2026-03", 111_111)])
    );
    assert_eq!(
        rows(&[&["monthly"][..], &berlin].concat(), &[]),
        expect(&[("2026-03", 11_111), ("2026-04", 100_000)])
    );
    // --since/--until are local days too.
    let p = projects();
    let day = |zone: &str| -> Vec<Value> {
        let args = [
            "usage",
            "--format",
            "jsonl",
            "-q",
            "--since",
            "2026-03-29",
            "--until",
            "20260329",
            "--timezone",
            zone,
            &p,
        ];
        jsonl(ok(&skein(&args, &root())))
    };
    assert_eq!(
        day("Europe/Berlin").last().expect("totals")["input_tokens"],
        110
    );
    assert_eq!(day("UTC").last().expect("totals")["input_tokens"], 1100);
}

#[test]
fn bad_zones_are_refused_clearly() {
    let p = projects();
    for bad in ["Mars/Olympus", "+25:00", "UTC+1"] {
        let out = skein(&["usage", "--timezone", bad, &p], &root());
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = stderr(&out);
        assert!(
            err.contains("invalid time zone") && err.contains("Europe/Berlin"),
            "{err}"
        );
    }
    // An unusable TZ falls back to UTC with a warning.
    let out = skein_env(
        &["usage", "--format", "jsonl", &p],
        &root(),
        &[("TZ", Path::new("Mars/Olympus"))],
    );
    let rows = jsonl(ok(&out));
    assert_eq!(rows[0]["date"], "2026-03-28");
    assert_eq!(rows[0]["input_tokens"], 11);
    assert!(stderr(&out).contains("cannot use TZ"), "{}", stderr(&out));
}
