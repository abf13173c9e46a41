//! `skein prune`, `skein snapshot` and `skein redact` run for real in temp directories, on the
//! fixtures of `testdata/passes`: outputs, reports, `--then` chains, the config pipeline,
//! in-place replacement, compressed and piped input, and snapshot session directories with
//! their subagents.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::common;
use common::{skein, skein_stdin};

const SESSION: &str = "5e55a0a0-0000-4000-8000-000000000001";

fn testdata(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/passes")
        .join(rel)
}

fn ok(out: &Output) {
    assert!(
        out.status.success(),
        "exit {:?}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// One JSON object per line.
fn json_lines(bytes: &[u8]) -> Vec<Value> {
    String::from_utf8(bytes.to_vec())
        .expect("utf8")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn copy_fixture(dir: &Path, rel: &str) -> PathBuf {
    let to = dir.join(Path::new(rel).file_name().expect("name"));
    std::fs::copy(testdata(rel), &to).expect("copy fixture");
    to
}

fn uuids(bytes: &[u8]) -> Vec<String> {
    json_lines(bytes)
        .iter()
        .filter_map(|v| v["uuid"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn prune_writes_stdout_and_reports_on_stderr() {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = copy_fixture(dir.path(), "session.jsonl");
    let out = skein(&["prune", "--preset", "lean", "session.jsonl"], dir.path());
    ok(&out);
    let lines = json_lines(&out.stdout);
    assert!(lines.iter().all(|v| v["type"] != "progress"));
    let original = std::fs::read(&input).expect("read");
    assert!(out.stdout.len() * 2 < original.len());
    let reports = json_lines(&out.stderr);
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0]["pass"], "prune");
    assert_eq!(reports[0]["file"], "session.jsonl");
    assert_eq!(reports[0]["rules"]["progress"]["records"], 2);
    assert_eq!(reports[0]["options"]["tool_use_result"], "drop");
    assert_eq!(
        reports[0]["output"]["bytes"].as_u64(),
        Some(out.stdout.len() as u64)
    );
    // The input file is untouched.
    assert_eq!(std::fs::read(&input).expect("read"), original);
}

#[test]
fn rule_flags_override_the_preset() {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_fixture(dir.path(), "session.jsonl");
    let out = skein(
        &[
            "prune",
            "--preset",
            "none",
            "--drop",
            "thinking,images",
            "--max-tool-result-bytes",
            "1000",
            "--tool-use-result",
            "slim",
            "session.jsonl",
        ],
        dir.path(),
    );
    ok(&out);
    let r = &json_lines(&out.stderr)[0];
    assert_eq!(r["options"]["thinking"], true);
    assert_eq!(r["options"]["images"], true);
    assert_eq!(r["options"]["progress"], false);
    assert_eq!(r["options"]["max_tool_result_bytes"], 1000);
    assert_eq!(r["options"]["tool_use_result"], "slim");
    let text = String::from_utf8(out.stdout).expect("utf8");
    assert!(text.contains("\"type\":\"progress\""), "progress kept");
    let out = skein(
        &[
            "prune",
            "--preset",
            "lean",
            "--keep",
            "off-branch,thinking",
            "session.jsonl",
        ],
        dir.path(),
    );
    ok(&out);
    let r = &json_lines(&out.stderr)[0];
    assert_eq!(r["options"]["off_branch"], false);
    assert_eq!(r["options"]["thinking"], false);
    assert_eq!(r["options"]["images"], true);
}

#[test]
fn output_file_and_report_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_fixture(dir.path(), "branches.jsonl");
    let out = skein(
        &[
            "prune",
            "--drop",
            "off-branch",
            "branches.jsonl",
            "-o",
            "pruned.jsonl",
            "--report",
            "report.jsonl",
        ],
        dir.path(),
    );
    ok(&out);
    assert!(out.stdout.is_empty() && out.stderr.is_empty());
    let pruned = std::fs::read(dir.path().join("pruned.jsonl")).expect("output");
    let kept = uuids(&pruned);
    assert!(!kept.contains(&"u2".to_owned()) && kept.contains(&"u3".to_owned()));
    let reports = json_lines(&std::fs::read(dir.path().join("report.jsonl")).expect("report"));
    assert_eq!(reports[0]["rules"]["off_branch"]["records"], 4);
    assert_eq!(reports[0]["kept_for_tool_pairs"], 1);
}

#[test]
fn in_place_with_backup_keeps_mode_and_skips_identical_output() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = copy_fixture(dir.path(), "session.jsonl");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    }
    let original = std::fs::read(&file).expect("read");
    let out = skein(
        &["prune", "--in-place", "--backup", "session.jsonl"],
        dir.path(),
    );
    ok(&out);
    assert!(out.stdout.is_empty());
    let now = std::fs::read(&file).expect("read");
    assert!(now.len() < original.len());
    assert_eq!(
        std::fs::read(dir.path().join("session.jsonl.bak")).expect("backup"),
        original
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    // A second run changes nothing, so nothing is written.
    let before = std::fs::metadata(&file)
        .expect("meta")
        .modified()
        .expect("mtime");
    std::thread::sleep(std::time::Duration::from_millis(20));
    ok(&skein(
        &["prune", "--in-place", "session.jsonl"],
        dir.path(),
    ));
    let after = std::fs::metadata(&file)
        .expect("meta")
        .modified()
        .expect("mtime");
    assert_eq!(before, after);
    assert_eq!(std::fs::read(&file).expect("read"), now);
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .expect("ls")
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".skein-tmp-"))
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn stdin_and_zstd_inputs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = std::fs::read(testdata("session.jsonl")).expect("fixture");
    let piped = skein_stdin(&["prune", "--preset", "lean"], dir.path(), &data);
    ok(&piped);
    let piped2 = skein_stdin(&["prune", "--preset", "lean", "-"], dir.path(), &data);
    ok(&piped2);
    assert_eq!(piped.stdout, piped2.stdout);
    let zst = dir.path().join("session.jsonl.zst");
    std::fs::write(&zst, zstd::encode_all(&data[..], 3).expect("compress")).expect("write");
    let out = skein(
        &["prune", "--preset", "lean", "session.jsonl.zst"],
        dir.path(),
    );
    ok(&out);
    assert_eq!(out.stdout, piped.stdout);
    let refused = skein(&["prune", "--in-place", "session.jsonl.zst"], dir.path());
    assert_eq!(refused.status.code(), Some(2));
    let refused = skein_stdin(&["prune", "--in-place"], dir.path(), &data);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--in-place needs a file"));
}

#[test]
fn then_chains_passes_in_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut data = std::fs::read(testdata("session.jsonl")).expect("fixture");
    data.extend_from_slice(
        br#"{"type":"user","uuid":"u9","parentUuid":"a5","message":{"role":"user","content":"deploy with AKIAIOSFODNN7EXAMPLQ please"}}
"#,
    );
    std::fs::write(dir.path().join("s.jsonl"), &data).expect("write");
    let out = skein(
        &[
            "prune", "--preset", "lean", "s.jsonl", "--then", "redact", "--level", "standard",
            "--then", "snapshot",
        ],
        dir.path(),
    );
    ok(&out);
    let reports = json_lines(&out.stderr);
    let passes: Vec<&str> = reports
        .iter()
        .map(|r| r["pass"].as_str().expect("pass"))
        .collect();
    assert_eq!(passes, ["prune", "redact", "snapshot"]);
    assert_eq!(reports[1]["options"]["level"], "standard");
    let text = String::from_utf8(out.stdout.clone()).expect("utf8");
    assert!(!text.contains("AKIAIOSFODNN7EXAMPLQ"), "{text}");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("AKIAIOSFODNN7EXAMPLQ"));
    assert_eq!(uuids(&out.stdout), ["u9"]);
    let bad = skein(&["prune", "s.jsonl", "--then", "compress"], dir.path());
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--then"));
}

#[test]
fn config_supplies_options_and_pipeline() {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_fixture(dir.path(), "session.jsonl");
    std::fs::write(
        dir.path().join("skein.toml"),
        "pipeline = [\"prune\", \"redact\"]\n[prune]\npreset = \"lean\"\nimages = false\n[redact]\nlevel = \"standard\"\n",
    )
    .expect("config");
    let out = skein(
        &["prune", "--config", "skein.toml", "session.jsonl"],
        dir.path(),
    );
    ok(&out);
    let reports = json_lines(&out.stderr);
    assert_eq!(reports.len(), 2);
    assert_eq!(reports[0]["options"]["images"], false);
    assert_eq!(reports[0]["options"]["thinking"], true);
    assert_eq!(reports[1]["pass"], "redact");
    // Flags win over the file; --then replaces the pipeline.
    let out = skein(
        &[
            "prune",
            "--config",
            "skein.toml",
            "--drop",
            "images",
            "session.jsonl",
            "--then",
            "snapshot",
        ],
        dir.path(),
    );
    ok(&out);
    let reports = json_lines(&out.stderr);
    assert_eq!(reports[0]["options"]["images"], true);
    assert_eq!(reports[1]["pass"], "snapshot");
    // A pipeline that does not start with the command's pass is an error.
    let out = skein(
        &["redact", "--config", "skein.toml", "session.jsonl"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("pipeline starts with prune"));
    std::fs::write(dir.path().join("bad.toml"), "[prune]\nthinkng = true\n").expect("config");
    let out = skein(
        &["prune", "--config", "bad.toml", "session.jsonl"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("thinkng"));
}

#[test]
fn snapshot_out_dir_holds_the_request_and_its_subagents() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = testdata(&format!("projects/-w/{SESSION}.jsonl"));
    let src_arg = src.to_str().expect("utf8 path");
    let out = skein(
        &[
            "snapshot",
            src_arg,
            "--out-dir",
            "snap",
            "--report",
            "r.jsonl",
        ],
        dir.path(),
    );
    ok(&out);
    let snap = dir.path().join("snap");
    let main = std::fs::read(snap.join(format!("{SESSION}.jsonl"))).expect("main");
    assert_eq!(uuids(&main), ["u2", "p2", "a3", "r3", "a4", "t4"]);
    let sub = snap.join(SESSION).join("subagents");
    let mut names: Vec<String> = std::fs::read_dir(&sub)
        .expect("subagents dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "agent-a1b2c3.jsonl",
            "agent-a1b2c3.meta.json",
            "agent-d4e5f6.jsonl",
            "agent-d4e5f6.meta.json"
        ],
        "the spawned agent and the one it spawned, not the earlier request's"
    );
    let original_agent = std::fs::read(testdata(&format!(
        "projects/-w/{SESSION}/subagents/agent-a1b2c3.jsonl"
    )))
    .expect("agent");
    assert_eq!(
        std::fs::read(sub.join("agent-a1b2c3.jsonl")).expect("copied"),
        original_agent,
        "no other pass: copied byte for byte"
    );
    let reports = json_lines(&std::fs::read(dir.path().join("r.jsonl")).expect("report"));
    assert_eq!(reports[0]["pass"], "snapshot");
    assert_eq!(reports[0]["written"].as_array().expect("written").len(), 5);
    // The snapshot directory is a session skein reads like any other.
    let stats = skein(&["stats", "--format", "jsonl", "snap"], dir.path());
    ok(&stats);
    let rows = json_lines(&stats.stdout);
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|r| r["invalid_lines"] == 0));
    assert_eq!(rows[0]["chain"]["roots"], 1);
    assert_eq!(rows[0]["chain"]["dangling"], 0);
    assert_eq!(rows[0]["tools"]["paired"], 1);
}

#[test]
fn snapshot_then_prune_applies_to_subagents_too() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = testdata(&format!("projects/-w/{SESSION}.jsonl"));
    let out = skein(
        &[
            "snapshot",
            "--since",
            "2026-05-01T10:00:05Z",
            src.to_str().expect("utf8"),
            "--out-dir",
            "snap",
            "--then",
            "prune",
            "--preset",
            "lean",
        ],
        dir.path(),
    );
    ok(&out);
    let reports = json_lines(&out.stderr);
    let files: Vec<(&str, &str)> = reports
        .iter()
        .map(|r| {
            (
                r["pass"].as_str().expect("pass"),
                r["file"].as_str().expect("file"),
            )
        })
        .collect();
    assert_eq!(files.len(), 4, "{files:?}");
    assert_eq!(files[0].0, "snapshot");
    assert_eq!(files[1].0, "prune");
    assert!(files[2].1.ends_with("agent-a1b2c3.jsonl"));
    assert!(files[3].1.ends_with("agent-d4e5f6.jsonl"));
}

#[test]
fn snapshot_errors_exit_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_fixture(dir.path(), "session.jsonl");
    let out = skein(
        &["snapshot", "--from", "no-such-uuid", "session.jsonl"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not on the active branch"));
    let out = skein(
        &["snapshot", "--since", "tomorrow", "session.jsonl"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    let out = skein(
        &[
            "snapshot",
            "--from",
            "u1",
            "--since",
            "2026-05-01T00:00:00Z",
            "session.jsonl",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn redact_replaces_secrets_and_keeps_other_lines() {
    let dir = tempfile::tempdir().expect("tempdir");
    let clean = std::fs::read(testdata("session.jsonl")).expect("fixture");
    let mut data = clean.clone();
    data.extend_from_slice(
        br#"{"type":"user","uuid":"u9","parentUuid":"a5","message":{"role":"user","content":"export GITHUB_TOKEN=ghp_R8x2Lk9QwZt4Vb7Nc1Md5Pf3Hs6Jg0Ya2Xe8"}}
"#,
    );
    let out = skein_stdin(&["redact"], dir.path(), &data);
    ok(&out);
    assert!(
        out.stdout.starts_with(&clean),
        "lines without secrets are byte-equal"
    );
    let last = json_lines(&out.stdout).pop().expect("line");
    assert_eq!(
        last["message"]["content"],
        "export GITHUB_TOKEN=[REDACTED:github-token]"
    );
    let r = &json_lines(&out.stderr)[0];
    assert_eq!(r["pass"], "redact");
    assert_eq!(r["findings"], 1);
    assert_eq!(r["by_rule"]["github-token"], 1);
    assert_eq!(r["locations"][0]["uuid"], "u9");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("ghp_R8x2"));
    let off = skein_stdin(&["redact", "--disable", "github-token"], dir.path(), &data);
    ok(&off);
    let bad = skein_stdin(&["redact", "--disable", "no-such-rule"], dir.path(), &data);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn output_through_symlinks_and_special_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_fixture(dir.path(), "session.jsonl");
    // A symlink: the file it points at is replaced, the link stays.
    #[cfg(unix)]
    {
        std::fs::write(dir.path().join("real.jsonl"), b"old\n").expect("write");
        std::os::unix::fs::symlink("real.jsonl", dir.path().join("link.jsonl")).expect("symlink");
        ok(&skein(
            &["prune", "session.jsonl", "-o", "link.jsonl"],
            dir.path(),
        ));
        let meta = std::fs::symlink_metadata(dir.path().join("link.jsonl")).expect("meta");
        assert!(meta.file_type().is_symlink());
        let real = std::fs::read(dir.path().join("real.jsonl")).expect("read");
        assert!(real.starts_with(b"{\"type\":\"permission-mode\""));
    }
    // Not a regular file (here the stdout pipe): written to, never replaced.
    let out = skein(&["prune", "session.jsonl", "-o", "/dev/stdout"], dir.path());
    ok(&out);
    assert!(out.stdout.starts_with(b"{\"type\":\"permission-mode\""));
}
