//! The one config file, end to end: `skein config path|show|check` with a temporary
//! `XDG_CONFIG_HOME` (or only `HOME`), an unknown key named with `file:line` by every reader,
//! and the sections reaching their commands: `[reports] timezone` moving `usage daily` day
//! boundaries, `[archive] dir`/`level` for `skein archive`, `[passes.prune]` for `skein prune`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

use crate::common::{jsonl, ok, report_dir, root, skein_env, stderr, stdout};

/// A temporary config home with `skein/config.toml` in it.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new(config: Option<&str>) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::create_dir_all(dir.path().join("xdg/skein")).expect("mkdir");
        let home = Self { dir };
        if let Some(text) = config {
            home.write(text);
        }
        home
    }

    fn file(&self) -> PathBuf {
        self.dir.path().join("xdg/skein/config.toml")
    }

    fn write(&self, text: &str) {
        fs::write(self.file(), text).expect("write config");
    }

    fn run(&self, args: &[&str]) -> Output {
        let xdg = self.dir.path().join("xdg");
        skein_env(args, &root(), &[("XDG_CONFIG_HOME", &xdg)])
    }
}

#[test]
fn path_says_where_the_file_is_and_whether_it_exists() {
    let home = Home::new(None);
    let v = jsonl(ok(&home.run(&["config", "path"])));
    assert_eq!(v[0]["path"], home.file().display().to_string());
    assert_eq!(v[0]["exists"], false);
    home.write("");
    let v = jsonl(ok(&home.run(&["config", "path"])));
    assert_eq!(v[0]["exists"], true);
    let table = ok(&home.run(&["config", "path", "--format", "table"])).clone();
    assert_eq!(
        stdout(&table),
        format!("{} (exists)\n", home.file().display())
    );
    // Without XDG_CONFIG_HOME: under HOME.
    let out = skein_env(&["config", "path"], &root(), &[]);
    let v = jsonl(ok(&out));
    let path = v[0]["path"].as_str().expect("path");
    assert!(path.ends_with("/.config/skein/config.toml"), "{path}");
}

#[test]
fn show_gives_every_value_with_its_origin() {
    let home = Home::new(Some(
        "# mine\n[hook]\nblocking = true\n\n[reports]\ntimezone = \"Asia/Tokyo\"\n[archive]\nlevel = 9\n\
         [pass.archive]\nzstd_level = 4\n",
    ));
    let rows = jsonl(ok(&home.run(&["config", "show"])));
    let get = |key: &str| -> Value {
        rows.iter()
            .find(|r| r["key"] == key)
            .unwrap_or_else(|| panic!("no {key} in {rows:?}"))
            .clone()
    };
    let file = home.file().display().to_string();
    assert_eq!(get("hook.blocking")["value"], true);
    assert_eq!(get("hook.blocking")["origin"], format!("{file}:3"));
    assert_eq!(get("reports.timezone")["value"], "Asia/Tokyo");
    assert_eq!(get("reports.timezone")["origin"], format!("{file}:6"));
    assert_eq!(get("archive.level")["value"], 9);
    assert_eq!(get("hook.redact")["value"], true);
    assert_eq!(get("hook.redact")["origin"], "default");
    // The status line's zone falls back to the reports' one.
    assert_eq!(get("statusline.timezone")["value"], "Asia/Tokyo");
    assert_eq!(get("statusline.timezone")["origin"], format!("{file}:6"));
    assert_eq!(get("pass.archive.zstd_level")["value"], 4);
    assert_eq!(
        get("pass.archive.zstd_level")["origin"],
        format!("{file}:10")
    );
    let archive = get("archive.dir");
    assert!(
        archive["value"]
            .as_str()
            .is_some_and(|d| d.ends_with("skein/archive")),
        "{archive}"
    );
    assert_eq!(get("events.Stop")["value"][0], "snapshot");

    // Unset, a zone is the environment's (the helper sets TZ=UTC).
    home.write("[hook]\nblocking = true\n");
    let rows = jsonl(ok(&home.run(&["config", "show"])));
    let zone = rows
        .iter()
        .find(|r| r["key"] == "reports.timezone")
        .expect("zone");
    assert_eq!(
        (&zone["value"], &zone["origin"]),
        (&json!("UTC"), &json!("env TZ"))
    );
    home.write("[reports]\ntimezone = \"Asia/Tokyo\"\n");
    let table = stdout(ok(&home.run(&["config", "show", "--format", "table"])));
    let line = table
        .lines()
        .find(|l| l.starts_with("reports.timezone"))
        .expect("row");
    assert!(
        line.contains("Asia/Tokyo") && line.ends_with(&format!("{file}:2")),
        "{line}"
    );
}

#[test]
fn check_exits_0_clean_1_with_problems_2_unreadable() {
    let home = Home::new(None);
    let out = home.run(&["config", "check"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("no config file"), "{}", stderr(&out));

    home.write(
        "[reports]\ntimezone = \"UTC\"\nformat = \"json\"\n[passes.prune]\npreset = \"lean\"\n",
    );
    let out = home.run(&["config", "check"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));

    home.write("[events]\nStop = [\"archiv\"]\n[reports]\ntimezone = \"Mars/Olympus\"\n");
    let out = home.run(&["config", "check"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let problems = jsonl(&out);
    let kinds: Vec<(&str, u64)> = problems
        .iter()
        .map(|p| {
            (
                p["kind"].as_str().expect("kind"),
                p["line"].as_u64().expect("line"),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [("unknown-pass", 2), ("bad-value", 4)],
        "{problems:?}"
    );
    assert!(
        problems[0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("did you mean \"archive\"")),
        "{problems:?}"
    );

    // Another file, by path; a project's may not move skein's files.
    let project = home.dir.path().join("proj/.claude");
    fs::create_dir_all(&project).expect("mkdir");
    let file = project.join("skein.toml");
    fs::write(
        &file,
        "[reports]\nformat = \"json\"\n[archive]\ndir = \"/tmp/x\"\n",
    )
    .expect("write");
    let f = file.display().to_string();
    let out = home.run(&["config", "check", &f]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let problems = jsonl(&out);
    assert_eq!(
        (&problems[0]["line"], &problems[0]["path"]),
        (&json!(4), &json!(f))
    );
    let elsewhere = home.dir.path().join("other.toml");
    fs::copy(&file, &elsewhere).expect("copy");
    let out = home.run(&["config", "check", &elsewhere.display().to_string()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "a user file may: {}",
        stdout(&out)
    );

    // A directory where the file should be cannot be read.
    fs::remove_file(home.file()).expect("rm");
    fs::create_dir(home.file()).expect("mkdir");
    let out = home.run(&["config", "check"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn an_unknown_key_is_named_with_file_and_line_by_every_reader() {
    let home = Home::new(Some("[reports]\ntimezone = \"UTC\"\n\ntimezon = \"UTC\"\n"));
    let at = format!("{}:4:", home.file().display());
    let out = home.run(&["config", "check", "--format", "table"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(
        text.starts_with(&at) && text.contains("unknown field `timezon`"),
        "{text}"
    );
    // A command that reads the config stops with the same place.
    let projects = report_dir("zones").join("projects");
    let p = projects.display().to_string();
    let out = home.run(&["usage", "daily", "-q", &p]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains(&at), "{}", stderr(&out));
    // A command with nothing to configure does not read it.
    let out = home.run(&["cat", &testdata_session()]);
    ok(&out);
}

fn testdata_session() -> String {
    root()
        .join("testdata/passes/session.jsonl")
        .display()
        .to_string()
}

/// (date, input tokens) of `usage daily` rows (totals left out).
fn daily(home: &Home, extra: &[&str]) -> Vec<(String, u64)> {
    let p = report_dir("zones").join("projects").display().to_string();
    let mut args = vec!["usage", "daily", "--format", "jsonl", "-q"];
    args.extend_from_slice(extra);
    args.push(&p);
    let rows = jsonl(ok(&home.run(&args)));
    let (_, rows) = rows.split_last().expect("totals");
    rows.iter()
        .map(|r| {
            (
                r["date"].as_str().expect("date").to_owned(),
                r["input_tokens"].as_u64().expect("tokens"),
            )
        })
        .collect()
}

#[test]
fn reports_timezone_moves_usage_day_boundaries() {
    let expect = |pairs: &[(&str, u64)]| -> Vec<(String, u64)> {
        pairs.iter().map(|&(d, n)| (d.to_owned(), n)).collect()
    };
    let utc = expect(&[
        ("2026-03-28", 11),
        ("2026-03-29", 1100),
        ("2026-03-30", 10_000),
        ("2026-03-31", 100_000),
    ]);
    let berlin = expect(&[
        ("2026-03-28", 1),
        ("2026-03-29", 110),
        ("2026-03-30", 11_000),
        ("2026-04-01", 100_000),
    ]);
    let home = Home::new(None);
    assert_eq!(daily(&home, &[]), utc, "TZ=UTC without a config");
    home.write("[reports]\ntimezone = \"Europe/Berlin\"\n");
    assert_eq!(daily(&home, &[]), berlin, "the config wins over TZ");
    assert_eq!(
        daily(&home, &["--timezone", "UTC"]),
        utc,
        "the flag wins over the config"
    );
}

#[test]
fn reports_format_is_the_default_format() {
    let home = Home::new(Some("[reports]\nformat = \"json\"\n"));
    let p = report_dir("zones").join("projects").display().to_string();
    let out = stdout(ok(&home.run(&["usage", "daily", "-q", &p])));
    let v: Value = serde_json::from_str(&out).expect("one JSON document");
    assert!(v.is_array(), "{v}");
    let out = home.run(&["usage", "daily", "-q", "--format", "jsonl", &p]);
    assert!(stdout(ok(&out)).lines().count() > 1);
}

/// The bytes of every archive file under `dir`.
fn archived_bytes(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).expect("read_dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "zst") {
                total += fs::metadata(&p).expect("meta").len();
            }
        }
    }
    total
}

#[test]
fn archive_dir_and_level_come_from_the_config() {
    let projects = root().join("testdata/reports/tools/projects");
    let p = projects.display().to_string();
    let home = Home::new(None);
    let fast = home.dir.path().join("fast");
    let best = home.dir.path().join("best");
    home.write(&format!(
        "[archive]\ndir = \"{}\"\nlevel = -7\n",
        fast.display()
    ));
    ok(&home.run(&["archive", "-q", &p]));
    home.write(&format!(
        "[archive]\ndir = \"{}\"\nlevel = 19\n",
        best.display()
    ));
    ok(&home.run(&["archive", "-q", &p]));
    let (fast_bytes, best_bytes) = (archived_bytes(&fast), archived_bytes(&best));
    assert!(
        best_bytes > 0 && best_bytes < fast_bytes,
        "level 19 ({best_bytes}) vs -7 ({fast_bytes})"
    );
    // The flag wins: level -7 into a third archive despite the config's 19.
    let flagged = home.dir.path().join("flagged");
    let f = flagged.display().to_string();
    ok(&home.run(&["archive", "-q", "--to", &f, "--zstd-level", "-7", &p]));
    assert_eq!(archived_bytes(&flagged), fast_bytes);
    // Without a dir anywhere, the archive is the hook's default one under the state dir.
    home.write("[archive]\nlevel = 3\n");
    let state = home.dir.path().join("state");
    let out = skein_env(
        &["archive", "-q", &p],
        &root(),
        &[
            ("XDG_CONFIG_HOME", &home.dir.path().join("xdg")),
            ("XDG_STATE_HOME", &state),
        ],
    );
    ok(&out);
    assert!(archived_bytes(&state.join("skein/archive")) > 0);
}

#[test]
fn passes_prune_is_the_preset_of_skein_prune() {
    let home = Home::new(Some(
        "[passes.prune]\npreset = \"none\"\nthinking = true\nmax_tool_result_bytes = 1000\n",
    ));
    let input = testdata_session();
    let out = ok(&home.run(&["prune", &input])).clone();
    let report: Value =
        serde_json::from_str(stderr(&out).lines().next().expect("report")).expect("json report");
    let o = &report["options"];
    assert_eq!(o["thinking"], true, "{report}");
    assert_eq!(o["progress"], false, "preset none: {report}");
    assert_eq!(o["max_tool_result_bytes"], 1000);
    // Flags win over the preset.
    let out = ok(&home.run(&["prune", "--keep", "thinking", "--preset", "lean", &input])).clone();
    let report: Value =
        serde_json::from_str(stderr(&out).lines().next().expect("report")).expect("json");
    assert_eq!(report["options"]["thinking"], false, "{report}");
    assert_eq!(report["options"]["progress"], true, "{report}");
}

#[test]
fn hooks_doctor_uses_the_same_checker() {
    let home = Home::new(Some("[reports]\ntimezone = \"Mars/Olympus\"\n"));
    let out = home.run(&["hooks", "doctor", "--format", "json"]);
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    let findings = v["findings"].as_array().expect("findings");
    let bad: Vec<&Value> = findings
        .iter()
        .filter(|f| f["code"] == "bad-config")
        .collect();
    assert_eq!(bad.len(), 1, "{findings:?}");
    let message = bad[0]["message"].as_str().expect("message");
    assert!(
        message.starts_with(&format!("{}:2:", home.file().display()))
            && message.contains("Mars/Olympus"),
        "{message}"
    );
}
