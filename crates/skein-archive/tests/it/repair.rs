//! A wrong checkpoint (bit rot, a botched restore of a backup) never costs committed data:
//! recovery (`recover_all`, and the recovery every ingest runs first) proves what it keeps
//! decodes to the recorded counts before it cuts, corrects a wrong committed length from the
//! frames, rebuilds a checkpoint that disagrees with them, and sets aside what it cannot
//! account for. `verify` says which of these it is instead of calling committed frames a torn
//! tail.

use std::fs;
use std::path::{Path, PathBuf};

use crate::common;
use common::{append, current, decode_whole, ingest, lines, main_kind, scratch};
use skein_archive::{Archive, Kind, Problem, VersionReason, read_archived, verify};

/// An archive of `s1` with six frames (about 250 KB of lines), as the issue's report had.
fn six_frames() -> (tempfile::TempDir, PathBuf, PathBuf, Archive, Kind, PathBuf) {
    let (dir, src, root, a) = scratch();
    let kind = main_kind("s1");
    let mut path = PathBuf::new();
    for k in 0..6 {
        append(&src, &lines(k * 250..(k + 1) * 250));
        path = common::archive_path(&ingest(&a, &src, &kind).expect("ingest"));
    }
    (dir, src, root, a, kind, path)
}

/// Rewrites fields of the checkpoint's current file (the meta file keeps the old values).
fn edit_checkpoint(root: &Path, kind: &Kind, edit: impl Fn(&mut serde_json::Value)) {
    let Kind::MainSession { session_id } = kind else {
        unreachable!("main sessions only")
    };
    let p = root.join(format!("checkpoints/main-session/{session_id}.json"));
    let mut ck: serde_json::Value =
        serde_json::from_slice(&fs::read(&p).expect("read checkpoint")).expect("json");
    edit(&mut ck["current"]);
    fs::write(&p, serde_json::to_vec_pretty(&ck).expect("ser")).expect("write checkpoint");
}

fn errors(root: &Path) -> Vec<Problem> {
    verify(root)
        .expect("verify")
        .errors()
        .map(|i| i.problem.clone())
        .collect()
}

#[test]
fn a_wrong_committed_length_is_corrected_never_cut() {
    let (_dir, src, root, a, kind, path) = six_frames();
    let whole = fs::read(&path).expect("archive");
    let good = current(&a, &kind);
    edit_checkpoint(&root, &kind, |c| c["committed_len"] = 1000.into());

    // verify: an error naming the right length, not "a torn frame from a crash".
    let rep = verify(&root).expect("verify");
    assert!(
        rep.issues.iter().any(|i| i.problem
            == Problem::CommittedLengthWrong {
                recorded: 1000,
                found: good.committed_len
            }),
        "{:?}",
        rep.issues
    );
    assert!(
        !rep.issues
            .iter()
            .any(|i| matches!(i.problem, Problem::UncommittedTail(_))),
        "{:?}",
        rep.issues
    );

    // The live transcript is gone (Claude Code's 30-day cleanup): the archive is all there is.
    fs::remove_file(&src).expect("rm source");
    let r = a.recover_all().expect("repair");
    assert_eq!(r.truncated_bytes, 0);
    assert!(r.set_aside.is_empty());
    assert_eq!(r.rebuilt.len(), 1);
    assert!(r.rebuilt[0].source_kept);
    assert_eq!(fs::read(&path).expect("archive"), whole, "not a byte cut");
    assert_eq!(current(&a, &kind), good, "the checkpoint is what it was");
    assert_eq!(
        read_archived(&path).expect("read"),
        lines(0..1500).as_bytes()
    );
    assert!(verify(&root).expect("verify").issues.is_empty());
}

#[test]
fn ingest_of_a_source_with_a_wrong_checkpoint_does_not_cut_either() {
    let (_dir, src, root, a, kind, path) = six_frames();
    let good = current(&a, &kind);
    edit_checkpoint(&root, &kind, |c| c["committed_len"] = 1000.into());
    append(&src, &lines(1500..1510));
    let r = ingest(&a, &src, &kind).expect("ingest");
    assert_eq!(r.recovered_bytes, 0);
    assert_eq!(r.rebuilt.len(), 1);
    assert_eq!(r.new_file, None, "appended to the same file");
    assert_eq!(decode_whole(&path), lines(0..1510).as_bytes());
    assert_eq!(current(&a, &kind).lines, good.lines + 10);
    assert!(verify(&root).expect("verify").issues.is_empty());
}

#[test]
fn a_committed_length_past_the_end_is_corrected_by_repair() {
    let (_dir, _src, root, a, kind, path) = six_frames();
    let good = current(&a, &kind);
    edit_checkpoint(&root, &kind, |c| {
        c["committed_len"] = (good.committed_len + 4096).into();
    });
    assert!(
        errors(&root)
            .iter()
            .any(|p| matches!(p, Problem::Truncated { .. }))
    );
    let r = a.recover_all().expect("repair");
    assert_eq!((r.truncated_bytes, r.rebuilt.len()), (0, 1));
    assert_eq!(current(&a, &kind), good);
    assert_eq!(
        read_archived(&path).expect("read"),
        lines(0..1500).as_bytes()
    );
    assert!(verify(&root).expect("verify").issues.is_empty());
}

#[test]
fn a_checkpoint_that_disagrees_with_the_frames_is_rebuilt_from_them() {
    let (_dir, src, root, a, kind, path) = six_frames();
    let whole = fs::read(&path).expect("archive");
    // Counts and length all wrong, and a torn frame after the last complete one.
    edit_checkpoint(&root, &kind, |c| {
        c["committed_len"] = 1000.into();
        c["lines"] = 7.into();
        c["raw_bytes"] = 12_345.into();
    });
    let torn = zstd::encode_all(lines(9000..9100).as_bytes(), 3).expect("encode");
    let torn = &torn[..torn.len() / 2];
    let mut damaged = whole.clone();
    damaged.extend_from_slice(torn);
    fs::write(&path, &damaged).expect("write");
    assert!(
        errors(&root)
            .iter()
            .any(|p| matches!(p, Problem::FramesDisagree { lines: 1500, .. })),
        "{:?}",
        errors(&root)
    );

    let r = a.recover_all().expect("repair");
    assert_eq!(r.rebuilt.len(), 1);
    assert!(!r.rebuilt[0].source_kept);
    assert_eq!(r.truncated_bytes, torn.len() as u64);
    // What could not be accounted for is set aside, byte for byte, never deleted.
    assert_eq!(r.set_aside.len(), 1);
    assert_eq!(fs::read(&r.set_aside[0]).expect("set aside"), torn);
    assert_eq!(fs::read(&path).expect("archive"), whole);
    let cur = current(&a, &kind);
    assert_eq!((cur.lines, cur.committed_len), (1500, whole.len() as u64));
    assert!(cur.source.unknown);
    let rep = verify(&root).expect("verify");
    assert!(rep.is_ok(), "{:?}", rep.issues);
    assert!(
        rep.issues.iter().all(|i| i.problem == Problem::SetAside),
        "{:?}",
        rep.issues
    );

    // The rebuilt checkpoint no longer knows how far the source was read: the next ingest
    // archives the whole source into a new version and keeps the old file.
    append(&src, &lines(1500..1502));
    let r = ingest(&a, &src, &kind).expect("ingest");
    assert_eq!(r.new_file, Some(VersionReason::CheckpointRebuilt));
    assert_eq!(
        read_archived(&common::archive_path(&r)).expect("v2"),
        lines(0..1502).as_bytes()
    );
    assert_eq!(read_archived(&path).expect("v1"), lines(0..1500).as_bytes());
}

#[test]
fn a_complete_uncommitted_frame_after_a_proven_commit_is_cut_and_archived_again() {
    let (_dir, src, root, a, kind, path) = six_frames();
    let committed = fs::read(&path).expect("archive");
    // A crash after the frame was written, before its checkpoint: the lines are still in the
    // source past the recorded offset.
    append(&src, &lines(1500..1520));
    let frame = zstd::encode_all(lines(1500..1520).as_bytes(), 3).expect("encode");
    let mut longer = committed.clone();
    longer.extend_from_slice(&frame);
    fs::write(&path, &longer).expect("write");
    let rep = verify(&root).expect("verify");
    assert!(rep.is_ok(), "{:?}", rep.issues);
    assert!(
        matches!(rep.issues[0].problem, Problem::UncommittedTail(n) if n == frame.len() as u64)
    );
    let r = ingest(&a, &src, &kind).expect("ingest");
    assert_eq!(r.recovered_bytes, frame.len() as u64);
    assert!(r.set_aside.is_empty() && r.rebuilt.is_empty());
    assert_eq!(decode_whole(&path), lines(0..1520).as_bytes());
    assert!(verify(&root).expect("verify").issues.is_empty());
}
