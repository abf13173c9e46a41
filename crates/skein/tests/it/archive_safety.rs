//! `skein archive` and its maintenance commands on damaged or busy archives: `verify` racing
//! commits never raises a false alarm, `verify` refuses what is not an archive, `repair` corrects
//! a wrong checkpoint without cutting committed frames, and a symlinked transcript is skipped.

use std::path::Path;

use serde_json::Value;

use crate::common::{jsonl, ok, skein, stderr};

fn session_line(sid: &str, i: usize) -> String {
    format!(
        r#"{{"type":"user","uuid":"{sid}-{i}","parentUuid":null,"sessionId":"{sid}","timestamp":"2026-05-01T10:{:02}:00Z","message":{{"role":"user","content":"line {i} {}"}}}}"#,
        i % 60,
        "x".repeat(200)
    ) + "\n"
}

fn sid(k: usize) -> String {
    format!("5e55a0a0-0000-4000-8000-{k:012}")
}

fn append(path: &Path, text: &str) {
    use std::io::Write as _;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .expect("open");
    f.write_all(text.as_bytes()).expect("append");
}

/// `skein archive verify` in a loop while `skein archive` commits 30 rounds of appends, new
/// sessions (new files and index entries) and rewrites (new versions): every verify run
/// exits 0.
#[test]
fn verify_racing_archive_raises_no_false_alarm() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let project = d.join("projects/-home-me-p");
    std::fs::create_dir_all(&project).expect("mkdir");
    for k in 0..4 {
        append(
            &project.join(format!("{}.jsonl", sid(k))),
            &session_line(&sid(k), 0),
        );
    }
    ok(&skein(&["archive", "-q", "projects", "--to", "arch"], d));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (project, d, stop) = (project.clone(), d.to_path_buf(), stop.clone());
        std::thread::spawn(move || {
            let mut round = 1;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) && round <= 30 {
                for k in 0..4 {
                    append(
                        &project.join(format!("{}.jsonl", sid(k))),
                        &session_line(&sid(k), round),
                    );
                }
                if round % 3 == 0 {
                    // A new session: a new archive file and index entry.
                    let k = 100 + round;
                    append(
                        &project.join(format!("{}.jsonl", sid(k))),
                        &session_line(&sid(k), 0),
                    );
                }
                if round % 5 == 0 {
                    // A rewrite: a new version, superseding the old file.
                    let p = project.join(format!("{}.jsonl", sid(0)));
                    let text = std::fs::read_to_string(&p).expect("read");
                    std::fs::write(&p, text.replacen("line 0", "LINE 0", 1)).expect("rewrite");
                }
                let out = skein(&["archive", "-q", "projects", "--to", "arch"], &d);
                assert!(out.status.success(), "{}", stderr(&out));
                round += 1;
            }
            round
        })
    };
    let mut runs = 0;
    let mut failures = Vec::new();
    while !writer.is_finished() {
        let out = skein(&["archive", "verify", "-q", "arch"], d);
        if !out.status.success() {
            failures.push(String::from_utf8_lossy(&out.stdout).into_owned() + &stderr(&out));
        }
        runs += 1;
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let rounds = writer.join().expect("writer");
    crate::common::note(&format!(
        "{runs} verify runs during {rounds} archive rounds"
    ));
    assert!(
        failures.is_empty(),
        "{} of {runs} failed: {failures:#?}",
        failures.len()
    );
    assert!(
        runs >= 20,
        "too little overlap: {runs} runs, {rounds} rounds"
    );
    let out = skein(&["archive", "verify", "arch"], d);
    assert!(
        out.status.success() && out.stdout.is_empty(),
        "{}",
        stderr(&out)
    );
}

#[test]
fn verify_refuses_what_is_not_an_archive() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    std::fs::create_dir_all(d.join("empty")).expect("mkdir");
    std::fs::create_dir_all(d.join("photos")).expect("mkdir");
    std::fs::write(d.join("photos/cat.jpg"), b"\xff\xd8").expect("write");
    for (what, want) in [
        ("empty", "nothing archived"),
        ("photos", "not a skein archive"),
    ] {
        let out = skein(&["archive", "verify", what], d);
        assert_eq!(out.status.code(), Some(2), "{what}");
        assert!(stderr(&out).contains(want), "{what}: {}", stderr(&out));
        assert!(out.stdout.is_empty());
    }
}

/// The committed length in a checkpoint is wrong (bit rot, a restored backup): verify says so,
/// repair corrects it from the frames and cuts nothing, and the archive still reads in full
/// once the live transcript is gone.
#[test]
fn repair_corrects_a_wrong_committed_length_without_cutting() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let project = d.join("projects/-home-me-p");
    std::fs::create_dir_all(&project).expect("mkdir");
    let src = project.join(format!("{}.jsonl", sid(1)));
    let mut all = String::new();
    for round in 0..5 {
        let text: String = (round * 200..(round + 1) * 200)
            .map(|i| session_line(&sid(1), i))
            .collect();
        append(&src, &text);
        all.push_str(&text);
        ok(&skein(&["archive", "-q", "projects", "--to", "arch"], d));
    }
    let ck_path = d.join(format!("arch/checkpoints/main-session/{}.json", sid(1)));
    let mut ck: Value =
        serde_json::from_slice(&std::fs::read(&ck_path).expect("ck")).expect("json");
    let file = d
        .join("arch")
        .join(ck["current"]["file"].as_str().expect("file"));
    let whole = std::fs::read(&file).expect("archive");
    ck["current"]["committed_len"] = 1000.into();
    std::fs::write(&ck_path, serde_json::to_vec_pretty(&ck).expect("ser")).expect("write");

    let out = skein(&["archive", "verify", "arch"], d);
    assert_eq!(out.status.code(), Some(1));
    let codes: Vec<Value> = jsonl(&out).iter().map(|i| i["code"].clone()).collect();
    assert!(
        codes.contains(&"committed-length-wrong".into()),
        "{codes:?}"
    );
    assert!(!codes.contains(&"uncommitted-tail".into()), "{codes:?}");

    std::fs::remove_file(&src).expect("the live transcript is gone");
    let out = skein(&["archive", "repair", "arch"], d);
    ok(&out);
    let r = &jsonl(&out)[0];
    assert_eq!(r["truncated_bytes"], 0);
    assert_eq!(r["rebuilt"][0]["before"]["committed_len"], 1000);
    assert_eq!(r["rebuilt"][0]["after"]["committed_len"], whole.len());
    assert_eq!(r["set_aside"], Value::Array(vec![]));
    assert_eq!(std::fs::read(&file).expect("archive"), whole);
    let out = skein(&["cat", file.to_str().expect("utf8")], d);
    ok(&out);
    assert_eq!(out.stdout, all.as_bytes());
    let out = skein(&["archive", "verify", "arch"], d);
    assert!(
        out.status.success() && out.stdout.is_empty(),
        "{}",
        stderr(&out)
    );
}

#[cfg(unix)]
#[test]
fn a_symlinked_transcript_is_skipped_with_a_warning() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let project = d.join("projects/-home-me-p");
    std::fs::create_dir_all(&project).expect("mkdir");
    std::fs::write(d.join("secret.txt"), "root:x:0:0:root:/root:/bin/bash\n").expect("write");
    let link = project.join(format!("{}.jsonl", sid(7)));
    std::os::unix::fs::symlink(d.join("secret.txt"), &link).expect("symlink");
    append(
        &project.join(format!("{}.jsonl", sid(8))),
        &session_line(&sid(8), 0),
    );
    let out = skein(&["archive", "projects", "--to", "arch"], d);
    ok(&out);
    let rows = jsonl(&out);
    let row = |k: usize| {
        rows.iter()
            .find(|r| r["session_id"] == sid(k).as_str())
            .unwrap_or_else(|| panic!("row for {k}: {rows:?}"))
            .clone()
    };
    assert_eq!(row(7)["status"], "skipped");
    assert_eq!(row(7)["reason"], "symlink");
    assert!(
        row(7)["error"]
            .as_str()
            .is_some_and(|e| e.contains("symbolic link"))
    );
    assert_eq!(row(8)["status"], "created");
    assert!(stderr(&out).contains("warning:") && stderr(&out).contains(&sid(7)));
    assert!(
        !d.join(format!("arch/checkpoints/main-session/{}.json", sid(7)))
            .exists()
    );
    let archived = skein_testkit::files_under(&d.join("arch/main-session"));
    assert_eq!(
        archived
            .iter()
            .filter(|p| p.to_string_lossy().ends_with(".jsonl.zst"))
            .count(),
        1
    );
    // -q: no warning.
    let out = skein(&["archive", "-q", "projects", "--to", "arch"], d);
    ok(&out);
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
}
