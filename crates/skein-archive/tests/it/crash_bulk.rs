//! Crash safety of bulk runs: a child archives a directory of growing transcripts through one
//! `Batch` (three threads, a commit every few sources) and is killed with SIGKILL at random
//! moments. Between trials the sources grow and some are replaced by a copy (new inode: a new
//! version file). After every kill:
//!
//! * `verify` reports no errors (an uncommitted file of the killed batch is an orphan warning);
//! * every committed archive decodes to a complete-line prefix of its source, never shorter
//!   than before the kill;
//! * every other trial the parent runs a batch itself, after which every source is archived
//!   exactly once: its current file decodes to the whole source, verify is spotless, and the
//!   archive holds no file that no checkpoint commits (the killed batch's journal was settled).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use skein_archive::{
    ARCHIVE_SUFFIX, Archive, BATCH_DIR, IngestRequest, Kind, MAIN_DIR, SUBAGENT_DIR, read_archived,
    verify,
};

use crate::common::{line, open};

const TRIALS: u64 = 60;
const SOURCES: usize = 36;

/// The key the crash-test binary gives the `i`-th source (see its `bulk_kind`).
fn kind(i: usize) -> Kind {
    let stem = format!("s{i:02}");
    if i.is_multiple_of(2) {
        Kind::MainSession { session_id: stem }
    } else {
        Kind::Subagent {
            agent_type: "general-purpose".into(),
            agent_id: stem,
            parent_session: Some("bulk-session".into()),
            tool_use_id: None,
        }
    }
}

fn source(dir: &Path, i: usize) -> PathBuf {
    dir.join(format!("s{i:02}.jsonl"))
}

/// Archive files on disk (not temp files).
fn archive_files(root: &Path) -> BTreeSet<String> {
    [MAIN_DIR, SUBAGENT_DIR]
        .iter()
        .flat_map(|top| skein_testkit::files_under(&root.join(top)))
        .filter(|p| p.to_string_lossy().ends_with(ARCHIVE_SUFFIX))
        .map(|p| {
            let rel = p.strip_prefix(root).expect("below root");
            rel.to_string_lossy().replace('\\', "/")
        })
        .collect()
}

/// Archives every source in one batch (as the child does, in this process), then checks that
/// each is archived exactly once and whole.
fn finish_and_check(a: &Archive, root: &Path, src: &Path, trial: u64) {
    let batch = a.batch().expect("batch");
    for i in 0..SOURCES {
        let path = source(src, i);
        let req = IngestRequest {
            source: &path,
            kind: kind(i),
            first_timestamp: Some("2026-01-05T14:03:22Z"),
            meta: None,
        };
        batch.ingest(&req, None).expect("recovering ingest");
    }
    batch.commit().expect("commit");
    drop(batch);
    let mut referenced = BTreeSet::new();
    for i in 0..SOURCES {
        let ck = a.checkpoint(&kind(i)).expect("ck").expect("archived");
        referenced.extend(ck.files().map(|f| f.file.clone()));
        let cur = ck.current.expect("current");
        let whole = std::fs::read(source(src, i)).expect("source");
        assert_eq!(
            read_archived(&root.join(&cur.file)).expect("decodes"),
            whole,
            "trial {trial}: source {i} after a batch"
        );
    }
    assert_eq!(
        archive_files(root),
        referenced,
        "trial {trial}: files no checkpoint commits"
    );
    let rep = verify(root).expect("verify");
    assert!(rep.issues.is_empty(), "trial {trial}: {:?}", rep.issues);
    let journals = std::fs::read_dir(root.join(BATCH_DIR)).map_or(0, Iterator::count);
    assert_eq!(journals, 0, "trial {trial}: journals left");
}

#[test]
#[allow(clippy::print_stderr)]
fn kill_9_during_bulk_runs_leaves_old_or_new_state_per_source() {
    let bin = env!("CARGO_BIN_EXE_skein-archive-crashtest");
    let dir = tempfile::tempdir().expect("tempdir");
    let (root, src) = (dir.path().join("archive"), dir.path().join("src"));
    std::fs::create_dir_all(&src).expect("mkdir");
    let started = Instant::now();
    let mut rng: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut archived = [0usize; SOURCES];
    let mut lines_written = [0usize; SOURCES];
    let (mut max_delay, mut exited, mut partial) = (60_000u64, 0u64, 0u64);
    for trial in 0..TRIALS {
        // Grow a random half of the sources; now and then replace one by a copy.
        for (i, written) in lines_written.iter_mut().enumerate() {
            if trial > 0 && next().is_multiple_of(2) {
                continue;
            }
            let add = (next() % 40 + 1) as usize;
            let text: String = (*written..*written + add)
                .map(|n| line(n, 100 + (n * 131) % 2000))
                .collect();
            *written += add;
            let path = source(&src, i);
            let mut old = std::fs::read(&path).unwrap_or_default();
            old.extend_from_slice(text.as_bytes());
            if next().is_multiple_of(15) {
                let copy = path.with_extension("copy");
                std::fs::write(&copy, &old).expect("copy");
                std::fs::rename(&copy, &path).expect("replace");
            } else {
                std::fs::write(&path, &old).expect("append");
            }
        }
        let mut child = Command::new(bin)
            .arg("--bulk")
            .arg(&root)
            .arg(&src)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn child");
        let delay = next() % max_delay;
        std::thread::sleep(Duration::from_micros(delay));
        let _ = child.kill();
        let out = child.wait_with_output().expect("wait child");
        if out.status.code().is_some() {
            exited += 1;
            assert!(
                out.status.success(),
                "trial {trial}: child failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            max_delay = (max_delay * 3 / 4).max(2_000);
        } else {
            max_delay = (max_delay * 11 / 10).min(2_000_000);
        }

        let a = open(&root);
        let mut committed = 0;
        for (i, before) in archived.iter_mut().enumerate() {
            let Some(ck) = a.checkpoint(&kind(i)).expect("checkpoint readable") else {
                continue;
            };
            let Some(cur) = ck.current else { continue };
            let content = read_archived(&root.join(&cur.file)).expect("committed frames decode");
            let whole = std::fs::read(source(&src, i)).expect("source");
            assert!(
                whole.starts_with(&content) && (content.is_empty() || content.ends_with(b"\n")),
                "trial {trial}: source {i}: archive is not a line prefix of the source"
            );
            assert!(
                content.len() >= *before,
                "trial {trial}: source {i}: archive shrank"
            );
            committed += usize::from(content.len() == whole.len());
            *before = content.len();
        }
        partial += u64::from(committed > 0 && committed < SOURCES);
        let rep = verify(&root).expect("verify runs");
        assert!(
            rep.is_ok(),
            "trial {trial}: {:?}",
            rep.errors().collect::<Vec<_>>()
        );
        if trial % 2 == 1 {
            finish_and_check(&a, &root, &src, trial);
            for (i, before) in archived.iter_mut().enumerate() {
                *before = std::fs::metadata(source(&src, i)).map_or(0, |m| m.len() as usize);
            }
        }
    }
    finish_and_check(&open(&root), &root, &src, TRIALS);
    eprintln!(
        "bulk crash test: {TRIALS} kills in {:?}; children that finished {exited}, kills that \
         left some sources committed and others not {partial}",
        started.elapsed()
    );
    assert!(exited < TRIALS / 2, "most children must be killed mid-run");
    assert!(partial > 0, "some kills must land between commits");
}
