//! Ingest: incremental frames, idempotence, torn tails, rewrites, recovery, transforms, safety.

use crate::common;

use std::fmt::Write as _;
use std::fs;
use std::time::Duration;

use common::*;
use skein_archive::{
    ArchiveError, IngestRequest, Problem, SessionMeta, VersionReason, read_archived, verify,
};

#[test]
fn two_appends_make_one_file_with_two_frames() {
    let (_dir, src, root, a) = scratch();
    let kind = main_kind("0b4c6f9e-1d2a-4e5f-8a9b-0c1d2e3f4a5b");
    let first = lines(0..50);
    append(&src, &first);
    let r1 = ingest(&a, &src, &kind).expect("first");
    assert_eq!(r1.new_file, Some(VersionReason::First));
    assert_eq!(r1.appended_lines, 50);
    let path = archive_path(&r1);
    assert_eq!(
        path,
        root.join(
            "main-session/2026-01/2026-01-05_140322_0b4c6f9e-1d2a-4e5f-8a9b-0c1d2e3f4a5b.jsonl.zst"
        )
    );
    let second = lines(50..80);
    append(&src, &second);
    let r2 = ingest(&a, &src, &kind).expect("second");
    assert_eq!(r2.new_file, None);
    assert_eq!(r2.appended_lines, 30);
    assert_eq!(r2.appended_source_bytes, second.len() as u64);
    assert_eq!(archive_path(&r2), path);
    assert_eq!(count_frames(&path), 2);
    let all = format!("{first}{second}");
    assert_eq!(decode_whole(&path), all.as_bytes());
    assert_eq!(read_archived(&path).expect("read"), all.as_bytes());
    let cur = current(&a, &kind);
    assert_eq!(
        (cur.frames, cur.lines, cur.source.offset),
        (2, 80, all.len() as u64)
    );
    assert_eq!(cur.committed_len, fs::metadata(&path).expect("md").len());
    let rep = verify(&root).expect("verify");
    assert!(rep.issues.is_empty(), "{:?}", rep.issues);
    assert_eq!((rep.files, rep.lines), (1, 80));
}

#[test]
fn rerun_with_nothing_new_changes_nothing() {
    let (_dir, src, root, a) = scratch();
    let kind = sub_kind("sess-1", "a1b2c3d", "Explore");
    append(&src, &lines(0..20));
    let r = ingest(&a, &src, &kind).expect("first");
    let path = archive_path(&r);
    let watched = [
        path.clone(),
        root.join("archive-index.json"),
        root.join("checkpoints/subagent/sess-1/a1b2c3d.json"),
        path.with_file_name(
            path.file_name()
                .expect("name")
                .to_string_lossy()
                .replace(".jsonl.zst", ".meta.json"),
        ),
    ];
    let snapshot = || {
        watched
            .iter()
            .map(|p| {
                let md = fs::metadata(p).expect("metadata");
                (fs::read(p).expect("read"), md.modified().expect("mtime"))
            })
            .collect::<Vec<_>>()
    };
    let before = snapshot();
    std::thread::sleep(Duration::from_millis(20));
    for _ in 0..3 {
        let again = ingest(&a, &src, &kind).expect("again");
        assert!(!again.changed(), "{again:?}");
        assert_eq!(again.appended_bytes, 0);
    }
    assert_eq!(snapshot(), before);
}

#[test]
fn torn_last_line_waits_for_its_newline() {
    let (dir, src, _root, a) = scratch();
    let kind = main_kind("s1");
    let whole = lines(0..10);
    append(&src, &whole);
    append(&src, "{\"type\":\"assistant\",\"par");
    let r = ingest(&a, &src, &kind).expect("ingest");
    assert_eq!(r.appended_lines, 10);
    assert_eq!(r.torn_tail_bytes, 24);
    assert_eq!(
        read_archived(&archive_path(&r)).expect("read"),
        whole.as_bytes()
    );
    // Only a torn tail: nothing happens.
    assert!(!ingest(&a, &src, &kind).expect("again").changed());
    append(&src, "tial\":1}\n");
    let r = ingest(&a, &src, &kind).expect("complete");
    assert_eq!(r.appended_lines, 1);
    let want = format!("{whole}{{\"type\":\"assistant\",\"partial\":1}}\n");
    assert_eq!(
        read_archived(&archive_path(&r)).expect("read"),
        want.as_bytes()
    );
    // A source without any complete line creates nothing.
    let empty = dir.path().join("e.jsonl");
    append(&empty, "{\"no newline\"");
    let r = ingest(&a, &empty, &main_kind("s2")).expect("empty");
    assert!(r.archive_path.is_none() && !r.changed());
    assert!(a.checkpoint(&main_kind("s2")).expect("ck").is_none());
}

#[test]
fn rewritten_sources_become_new_versions_never_merged() {
    let (dir, src, root, a) = scratch();
    let kind = main_kind("s1");
    let v1 = lines(0..30);
    append(&src, &v1);
    let p1 = archive_path(&ingest(&a, &src, &kind).expect("v1"));

    // Same size, different bytes near the end → tail hash differs.
    let mut bytes = v1.clone().into_bytes();
    let n = bytes.len();
    bytes[n - 10] = b'Z';
    fs::OpenOptions::new()
        .write(true)
        .open(&src)
        .and_then(|mut f| std::io::Write::write_all(&mut f, &bytes))
        .expect("rewrite in place");
    let r = ingest(&a, &src, &kind).expect("v2");
    assert_eq!(r.new_file, Some(VersionReason::TailChanged));
    assert_eq!(r.version, 2);
    let p2 = archive_path(&r);
    assert!(p2.to_string_lossy().ends_with("_s1.v2.jsonl.zst"), "{p2:?}");
    assert_eq!(read_archived(&p1).expect("v1"), v1.as_bytes());
    assert_eq!(read_archived(&p2).expect("v2"), bytes);

    // Shorter → Shrunk.
    fs::write(&src, lines(0..5)).expect("truncate");
    let r = ingest(&a, &src, &kind).expect("v3");
    assert_eq!((r.new_file, r.version), (Some(VersionReason::Shrunk), 3));

    // Replaced by a new file (new inode) with the same content plus more → still a new version.
    let tmp = dir.path().join("new.jsonl");
    fs::write(&tmp, lines(0..8)).expect("write");
    fs::rename(&tmp, &src).expect("rename");
    let r = ingest(&a, &src, &kind).expect("v4");
    assert_eq!(
        (r.new_file, r.version),
        (Some(VersionReason::InodeChanged), 4)
    );

    // First line changed (offset unchanged, size grows) → HeadChanged.
    let mut text = lines(0..8);
    text.replace_range(0..1, " ");
    text.push_str(&lines(8..9));
    fs::write(&src, &text).expect("rewrite head");
    let r = ingest(&a, &src, &kind).expect("v5");
    assert_eq!(
        (r.new_file, r.version),
        (Some(VersionReason::HeadChanged), 5)
    );

    let ck = a.checkpoint(&kind).expect("ck").expect("exists");
    assert_eq!(ck.previous.len(), 4);
    assert!(ck.previous.iter().all(|f| f.superseded_by.is_some()));
    assert_eq!(a.index().expect("index").entries.len(), 5);
    let rep = verify(&root).expect("verify");
    assert!(rep.issues.is_empty(), "{:?}", rep.issues);
}

#[test]
fn torn_frame_from_a_crash_is_truncated_before_appending() {
    let (_dir, src, root, a) = scratch();
    let kind = main_kind("s1");
    append(&src, &lines(0..10));
    let path = archive_path(&ingest(&a, &src, &kind).expect("first"));
    let committed = fs::read(&path).expect("read");
    // Half a frame, as a kill -9 during the write would leave.
    let mut frame = zstd::encode_all(lines(10..20).as_bytes(), 3).expect("encode");
    frame.truncate(frame.len() / 2);
    append(&path, &String::from_utf8_lossy(&frame));
    assert!(zstd::decode_all(fs::File::open(&path).expect("open")).is_err());
    // Readers already see only the committed part.
    assert_eq!(read_archived(&path).expect("read"), lines(0..10).as_bytes());
    let rep = verify(&root).expect("verify");
    assert!(rep.is_ok(), "{:?}", rep.issues);
    assert!(matches!(rep.issues[0].problem, Problem::UncommittedTail(_)));
    append(&src, &lines(10..12));
    let r = ingest(&a, &src, &kind).expect("second");
    assert!(r.recovered_bytes > 0);
    assert!(fs::read(&path).expect("read").starts_with(&committed));
    assert_eq!(decode_whole(&path), lines(0..12).as_bytes());
    assert!(verify(&root).expect("verify").issues.is_empty());
}

#[test]
fn transform_rewrites_lines_and_checkpoint_counts_source_bytes() {
    let (_dir, src, root, a) = scratch();
    let kind = main_kind("s1");
    let text = "{\"k\":\"sk-ant-SECRET\"}\n{\"drop\":1}\n{\"k\":\"plain\"}\n";
    append(&src, text);
    let mut redact = |line: &[u8], out: &mut Vec<u8>| {
        if line.starts_with(b"{\"drop\"") {
            return;
        }
        let s = String::from_utf8_lossy(line).replace("sk-ant-SECRET", "[REDACTED]");
        out.extend_from_slice(s.trim_end().as_bytes()); // newline re-added by the archive
    };
    let req = IngestRequest {
        source: &src,
        kind: kind.clone(),
        first_timestamp: None,
        meta: Some(SessionMeta {
            cwd: Some("/home/me/proj".into()),
            ..SessionMeta::default()
        }),
    };
    let r = a.ingest(&req, Some(&mut redact)).expect("ingest");
    assert_eq!((r.appended_source_lines, r.appended_lines), (3, 2));
    assert_eq!(
        read_archived(&archive_path(&r)).expect("read"),
        b"{\"k\":\"[REDACTED]\"}\n{\"k\":\"plain\"}\n"
    );
    let cur = current(&a, &kind);
    assert_eq!(cur.source.offset, text.len() as u64);
    assert_eq!(cur.meta.cwd.as_deref(), Some("/home/me/proj"));
    // Nothing new: the transform is not consulted and nothing changes.
    let mut never = |_: &[u8], _: &mut Vec<u8>| panic!("no new lines to transform");
    let again = a.ingest(&req, Some(&mut never)).expect("again");
    assert!(!again.changed());
    assert!(verify(&root).expect("verify").issues.is_empty());
}

/// Lines of exact lengths around the pump's read step (a block of `skein_core::lines`): the
/// first two end exactly on a step, the next one byte before one and one byte after the next,
/// then lines of many steps and short ones; each is archived whole, with and without a
/// transform.
#[test]
fn lines_longer_than_many_read_steps_are_archived_whole() {
    let step = skein_core::lines::DEFAULT_BLOCK;
    let sizes = [
        step,
        step,
        step - 1,
        step + 2,
        3 * step + 7,
        11 * step + 5,
        20,
        step / 2,
    ];
    // `{"n":"xxx…"}` and its newline: exactly `len` bytes.
    let exact = |len: usize| format!("{{\"n\":\"{}\"}}\n", "x".repeat(len - 10));
    let text: String = sizes.iter().map(|&n| exact(n)).collect();
    let mut ends = 0;
    for (i, &n) in sizes.iter().enumerate().take(4) {
        ends += n;
        assert_eq!(
            ends % step,
            [0, 0, step - 1, 1][i],
            "line {i} ends where meant"
        );
    }
    let count = sizes.len() as u64;
    for transformed in [false, true] {
        let (_dir, src, root, a) = scratch();
        let kind = main_kind("s1");
        append(&src, &text);
        // The transform upper-cases the line, newline kept.
        let mut upper = |line: &[u8], out: &mut Vec<u8>| {
            out.extend(line.iter().map(u8::to_ascii_uppercase));
        };
        let r = if transformed {
            a.ingest(
                &IngestRequest {
                    source: &src,
                    kind: kind.clone(),
                    first_timestamp: Some(T0),
                    meta: None,
                },
                Some(&mut upper),
            )
        } else {
            ingest(&a, &src, &kind)
        }
        .expect("ingest");
        assert_eq!((r.appended_source_lines, r.appended_lines), (count, count));
        let want = if transformed {
            text.to_ascii_uppercase()
        } else {
            text.clone()
        };
        assert_eq!(
            read_archived(&archive_path(&r)).expect("read"),
            want.as_bytes()
        );
        assert_eq!(current(&a, &kind).source.offset, text.len() as u64);
        assert!(verify(&root).expect("verify").issues.is_empty());
    }
}

/// A frame longer than the pump's writeback step (8 MiB compressed), so that the pump starts a
/// sync behind it (`skein_store::SyncBehind`, whose own test checks the helper), reads back
/// whole and the archive verifies.
#[test]
fn a_frame_of_several_writeback_steps_reads_back_whole() {
    let (_dir, src, root, a) = scratch();
    let kind = main_kind("s1");
    // 16 MB of lines carrying pseudo-random base64 text (6 bits a byte: little to compress).
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut rng = skein_testkit::Xorshift::new(0x9e37_79b9_7f4a_7c15);
    let mut text = String::new();
    for i in 0..4000 {
        let payload: String = (0..4096)
            .map(|_| char::from(alphabet[(rng.next() & 63) as usize]))
            .collect();
        writeln!(
            text,
            "{{\"type\":\"user\",\"uuid\":\"u-{i}\",\"message\":{{\"content\":\"{payload}\"}}}}"
        )
        .expect("a String takes any text");
    }
    append(&src, &text);
    let r = ingest(&a, &src, &kind).expect("ingest");
    let path = archive_path(&r);
    let frame = fs::metadata(&path).expect("md").len();
    assert!(frame > 9 << 20, "a frame of {frame} bytes: under one step");
    assert_eq!(read_archived(&path).expect("read"), text.as_bytes());
    assert!(verify(&root).expect("verify").issues.is_empty());
}

#[test]
fn malicious_ids_are_refused_and_nothing_escapes() {
    let (dir, src, root, a) = scratch();
    append(&src, &lines(0..3));
    for kind in [
        main_kind("../../escape"),
        main_kind("a/b"),
        main_kind(".hidden"),
        sub_kind("../x", "a1", "Explore"),
        sub_kind("s", "../../a1", "Explore"),
    ] {
        let err = ingest(&a, &src, &kind).expect_err("must refuse");
        assert!(matches!(err, ArchiveError::UnsafeId { .. }), "{err}");
    }
    // A hostile agent type is sanitized into one directory below subagent/.
    let r = ingest(&a, &src, &sub_kind("s", "a1", "../../../../tmp/evil")).expect("ok");
    let p = archive_path(&r);
    assert!(p.starts_with(root.join("subagent/evil/2026-01")), "{p:?}");
    let names: Vec<_> = fs::read_dir(dir.path())
        .expect("ls")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[cfg(unix)]
#[test]
fn directories_are_0700_and_files_0600() {
    use std::os::unix::fs::PermissionsExt;
    let (_dir, src, root, a) = scratch();
    append(&src, &lines(0..3));
    ingest(&a, &src, &main_kind("s1")).expect("main");
    ingest(&a, &src, &sub_kind("s1", "a1", "Plan")).expect("sub");
    let mut stack = vec![root.clone()];
    let mut seen = 0;
    while let Some(d) = stack.pop() {
        let mode = fs::metadata(&d).expect("md").permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{d:?}");
        for e in fs::read_dir(&d).expect("ls") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let mode = fs::metadata(&p).expect("md").permissions().mode() & 0o777;
                assert_eq!(mode, 0o600, "{p:?}");
                seen += 1;
            }
        }
    }
    assert!(seen >= 9, "{seen}");
}

#[test]
fn meta_update_without_new_lines_touches_only_state() {
    let (_dir, src, root, a) = scratch();
    let kind = main_kind("s1");
    append(&src, &lines(0..3));
    let path = archive_path(&ingest(&a, &src, &kind).expect("first"));
    let before = fs::read(&path).expect("read");
    let meta = SessionMeta {
        outcome: Some("completed".into()),
        ..SessionMeta::default()
    };
    let req = IngestRequest {
        source: &src,
        kind: kind.clone(),
        first_timestamp: Some(T0),
        meta: Some(meta.clone()),
    };
    assert!(!a.ingest(&req, None).expect("meta").changed());
    assert_eq!(fs::read(&path).expect("read"), before);
    let cur = current(&a, &kind);
    assert_eq!(cur.meta, meta);
    assert!(verify(&root).expect("verify").issues.is_empty());
}

#[test]
fn injected_clock_stamps_the_bookkeeping() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (src, root) = (dir.path().join("s.jsonl"), dir.path().join("arch"));
    let a = skein_archive::Archive::open(
        &root,
        skein_archive::ArchiveOptions {
            clock: || 1_767_621_802,
            ..skein_archive::ArchiveOptions::default()
        },
    )
    .expect("open");
    append(&src, &lines(0..3));
    // No first timestamp: the name comes from the source's mtime, the stamps from the clock.
    let r = a
        .ingest(
            &IngestRequest {
                source: &src,
                kind: main_kind("s1"),
                first_timestamp: None,
                meta: None,
            },
            None,
        )
        .expect("ingest");
    assert!(r.archive_path.is_some());
    let cur = current(&a, &main_kind("s1"));
    assert_eq!(
        (cur.created_unix, cur.updated_unix),
        (1_767_621_802, 1_767_621_802)
    );
    assert_eq!(cur.first_timestamp, None);
}

#[test]
fn metadata_computed_during_the_frame_is_committed_and_its_failure_commits_nothing() {
    let (_dir, src, root, a) = scratch();
    let kind = main_kind("s1");
    append(&src, &lines(0..40));
    let req = IngestRequest {
        source: &src,
        kind: kind.clone(),
        first_timestamp: Some(T0),
        // Not used: the metadata comes from the closure.
        meta: Some(SessionMeta::default()),
    };
    let meta = |outcome: &str| SessionMeta {
        outcome: Some(outcome.into()),
        ..SessionMeta::default()
    };

    // A failing metadata pass fails the ingest and commits nothing: no checkpoint, and the
    // next batch removes the announced file.
    {
        let batch = a.batch().expect("batch");
        let mut fail = || Err("unreadable session".into());
        let e = batch
            .ingest_meta_later(&req, None, &mut fail)
            .expect_err("meta failed");
        assert!(matches!(e, ArchiveError::Meta { .. }), "{e}");
        assert!(e.to_string().contains("unreadable session"), "{e}");
        batch.commit().expect("commit");
    }
    assert!(a.checkpoint(&kind).expect("checkpoint").is_none());

    let mut calls = 0;
    let batch = a.batch().expect("batch");
    // Opening the next batch settled the failed one: its file is gone, no journal is left.
    let left: Vec<_> = skein_testkit::files_under(a.root())
        .into_iter()
        .filter(|p| {
            let p = p.to_string_lossy();
            p.ends_with(".jsonl.zst") || p.contains("/batches/")
        })
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let mut later = || {
        calls += 1;
        Ok(Some(meta("first")))
    };
    let r = batch
        .ingest_meta_later(&req, None, &mut later)
        .expect("ingest");
    batch.commit().expect("commit");
    assert_eq!(calls, 1);
    assert_eq!(r.new_file, Some(VersionReason::First));
    assert_eq!(r.appended_lines, 40);
    assert_eq!(current(&a, &kind).meta, meta("first"));
    let on_disk: serde_json::Value = serde_json::from_slice(
        &fs::read(
            archive_path(&r)
                .with_extension("")
                .with_extension("meta.json"),
        )
        .expect("meta"),
    )
    .expect("json");
    assert_eq!(on_disk["meta"]["outcome"], "first");

    // Nothing new: the metadata is still asked for and stored.
    let batch = a.batch().expect("batch");
    let mut later = || Ok(Some(meta("second")));
    let r = batch
        .ingest_meta_later(&req, None, &mut later)
        .expect("rerun");
    batch.commit().expect("commit");
    assert!(!r.changed());
    assert_eq!(current(&a, &kind).meta, meta("second"));
    let rep = verify(&root).expect("verify");
    assert!(
        rep.issues
            .iter()
            .all(|i| i.severity != skein_archive::Severity::Error),
        "{:?}",
        rep.issues
    );
}
