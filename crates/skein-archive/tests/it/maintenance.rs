//! verify, retention, compaction, restore, dictionaries, recovery.

use crate::common;

use std::fmt::Write as _;
use std::fs;

use common::*;
use skein_archive::{
    ArchiveError, ArchiveOptions, CompactOptions, DictMode, Problem, RestoreContent, RestoreItem,
    RetentionOptions, SessionMeta, TrainOptions, decompress_file, read_archived, verify,
};

const DAY: i64 = 86_400;

#[test]
fn verify_catches_corruption_and_meta_and_index_disagreement() {
    let (_dir, src, root, a) = scratch();
    append(&src, &lines(0..400));
    let p1 = archive_path(&ingest(&a, &src, &main_kind("s1")).expect("s1"));
    let p2 = archive_path(&ingest(&a, &src, &sub_kind("s1", "a1", "Explore")).expect("a1"));
    let p3 = archive_path(&ingest(&a, &src, &main_kind("s3")).expect("s3"));
    assert!(verify(&root).expect("verify").issues.is_empty());

    // 1. A flipped byte inside a frame.
    let mut bytes = fs::read(&p1).expect("read");
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x55;
    fs::write(&p1, &bytes).expect("corrupt");
    // 2. A meta file claiming other counts.
    let meta2 = p2.with_file_name(
        p2.file_name()
            .expect("name")
            .to_string_lossy()
            .replace(".jsonl.zst", ".meta.json"),
    );
    let text = fs::read_to_string(&meta2).expect("meta");
    fs::write(&meta2, text.replace("\"lines\": 400", "\"lines\": 401")).expect("edit meta");
    // 3. The index forgets a file.
    let idx_path = root.join("archive-index.json");
    let mut idx: serde_json::Value =
        serde_json::from_slice(&fs::read(&idx_path).expect("idx")).expect("json");
    let key = p3
        .strip_prefix(&root)
        .expect("rel")
        .to_string_lossy()
        .into_owned();
    idx["entries"]
        .as_object_mut()
        .expect("entries")
        .remove(&key)
        .expect("entry existed");
    fs::write(&idx_path, serde_json::to_vec(&idx).expect("ser")).expect("write idx");
    // 4. A stray archive file nobody owns.
    fs::copy(&p3, p3.with_file_name("2020-01-01_000000_stray.jsonl.zst")).expect("copy");

    let rep = verify(&root).expect("verify");
    assert!(!rep.is_ok());
    let has = |p: &std::path::Path, f: &dyn Fn(&Problem) -> bool| {
        rep.issues.iter().any(|i| i.path == p && f(&i.problem))
    };
    assert!(
        has(&p1, &|p| matches!(p, Problem::Undecodable(_))),
        "{:?}",
        rep.issues
    );
    assert!(
        has(&meta2, &|p| matches!(p, Problem::MetaMismatch(_))),
        "{:?}",
        rep.issues
    );
    assert!(
        has(&p3, &|p| matches!(p, Problem::NotInIndex)),
        "{:?}",
        rep.issues
    );
    assert!(rep.issues.iter().any(|i| i.problem == Problem::Orphan));

    // Deleting an archive file is reported as missing.
    fs::remove_file(&p3).expect("rm");
    let rep = verify(&root).expect("verify");
    assert!(
        rep.issues
            .iter()
            .any(|i| i.path == p3 && i.problem == Problem::MissingArchive)
    );

    // recover_all repairs what is derived (meta, index). The damaged file's checkpoint is
    // rebuilt from its complete checksummed frames (none survives the flipped byte in its only
    // frame) and its bytes are set aside, never deleted.
    let r = a.recover_all().expect("recover");
    assert_eq!(r.rebuilt.len(), 1, "{r:?}");
    assert_eq!(r.set_aside.len(), 1, "{r:?}");
    assert_eq!(fs::read(&r.set_aside[0]).expect("set aside"), bytes);
    let rep = verify(&root).expect("verify");
    assert!(
        !rep.issues.iter().any(|i| matches!(
            i.problem,
            Problem::MetaMismatch(_) | Problem::NotInIndex | Problem::Undecodable(_)
        )),
        "{:?}",
        rep.issues
    );
    assert!(
        rep.issues
            .iter()
            .any(|i| i.path == r.set_aside[0] && i.problem == Problem::SetAside),
        "{:?}",
        rep.issues
    );
}

#[test]
fn retention_never_deletes_the_only_copy() {
    let (dir, src, root, a) = scratch();
    // s1: v1 = lines 0..10; v2 (new inode) = lines 0..20 ⊇ v1 → v1 is redundant.
    let s1 = main_kind("s1");
    append(&src, &lines(0..10));
    let v1 = archive_path(&ingest(&a, &src, &s1).expect("v1"));
    let tmp = dir.path().join("t.jsonl");
    fs::write(&tmp, lines(0..20)).expect("write");
    fs::rename(&tmp, &src).expect("replace");
    let v2 = archive_path(&ingest(&a, &src, &s1).expect("v2"));
    // s2: v1 = lines 0..10; v2 = lines 100..110 (different) → v1 is the only copy of its lines.
    let src2 = dir.path().join("s2.jsonl");
    let s2 = main_kind("s2");
    append(&src2, &lines(0..10));
    let w1 = archive_path(&ingest(&a, &src2, &s2).expect("w1"));
    fs::write(&tmp, lines(100..110)).expect("write");
    fs::rename(&tmp, &src2).expect("replace");
    let w2 = archive_path(&ingest(&a, &src2, &s2).expect("w2"));

    let now = skein_archive::now_unix();
    // Nothing is old enough yet.
    let opts = RetentionOptions {
        keep_days: 30,
        now_unix: now,
        dry_run: false,
    };
    assert!(
        a.apply_retention(&opts)
            .expect("retention")
            .deleted
            .is_empty()
    );
    // A year later (even the sources are long gone).
    fs::remove_file(&src).expect("rm source");
    fs::remove_file(&src2).expect("rm source");
    let later = RetentionOptions {
        now_unix: now + 365 * DAY,
        ..opts
    };
    let dry = a
        .apply_retention(&RetentionOptions {
            dry_run: true,
            ..later
        })
        .expect("dry");
    assert_eq!(dry.deleted, vec![v1.clone()]);
    assert!(v1.exists());
    let rep = a.apply_retention(&later).expect("retention");
    assert_eq!(rep.deleted, vec![v1.clone()]);
    assert_eq!(rep.kept_only_copy, vec![w1.clone()]);
    assert!(!v1.exists() && v2.exists() && w1.exists() && w2.exists());
    let v = verify(&root).expect("verify");
    assert!(v.issues.is_empty(), "{:?}", v.issues);
    assert_eq!(a.index().expect("index").entries.len(), 3);
    // Current versions are never candidates, however old.
    let rep = a
        .apply_retention(&RetentionOptions {
            keep_days: 0,
            now_unix: now + 10_000 * DAY,
            dry_run: false,
        })
        .expect("retention");
    assert!(rep.deleted.is_empty());
}

#[test]
fn compact_recompresses_cold_files_and_appends_continue() {
    let (_dir, src, root, a) = scratch();
    let kind = main_kind("s1");
    for k in 0..5 {
        append(&src, &lines(k * 100..(k + 1) * 100));
        ingest(&a, &src, &kind).expect("ingest");
    }
    let path = archive_path(&ingest(&a, &src, &kind).expect("noop"));
    assert_eq!(count_frames(&path), 5);
    let before = fs::metadata(&path).expect("md").len();
    // Not cold yet.
    let r = a
        .compact(&CompactOptions::at(skein_archive::now_unix()))
        .expect("compact");
    assert_eq!(r.compacted, 0);
    let opts = CompactOptions::at(skein_archive::now_unix() + 30 * DAY);
    let r = a.compact(&opts).expect("compact");
    assert_eq!(r.compacted, 1, "{r:?}");
    assert_eq!(count_frames(&path), 1);
    assert!(fs::metadata(&path).expect("md").len() < before);
    assert_eq!(decode_whole(&path), lines(0..500).as_bytes());
    assert!(verify(&root).expect("verify").issues.is_empty());
    // Already compacted at this level: skipped.
    assert_eq!(a.compact(&opts).expect("again").compacted, 0);
    append(&src, &lines(500..510));
    ingest(&a, &src, &kind).expect("append after compaction");
    assert_eq!(count_frames(&path), 2);
    assert_eq!(decode_whole(&path), lines(0..510).as_bytes());
    assert!(verify(&root).expect("verify").issues.is_empty());
}

#[test]
fn restore_writes_files_all_or_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("arch");
    let out = dir.path().join("out");
    let main_src = dir.path().join("main.jsonl");
    let agent_src = dir.path().join("agent.jsonl");
    append(&main_src, &lines(0..30));
    append(&agent_src, &lines(30..40));
    let sid = "0b4c6f9e-1d2a-4e5f-8a9b-0c1d2e3f4a5b";
    let a = open(&root);
    let main = ingest(&a, &main_src, &main_kind(sid)).expect("main");
    let agent = ingest(&a, &agent_src, &sub_kind(sid, "a1b2c3d", "Explore")).expect("agent");
    let rel = |r: &skein_archive::IngestReport| {
        let p = r.archive_path.as_ref().expect("archived");
        p.strip_prefix(&root)
            .expect("inside")
            .to_string_lossy()
            .into_owned()
    };
    // The originals are gone (Claude Code's cleanup).
    fs::remove_file(&main_src).expect("rm");
    fs::remove_file(&agent_src).expect("rm");

    let main_out = out.join("p/s.jsonl");
    let agent_out = out.join("p/s/subagents/agent-a1b2c3d.jsonl");
    let side_out = out.join("p/s/subagents/agent-a1b2c3d.meta.json");
    let plan = vec![
        RestoreItem {
            target: main_out.clone(),
            content: RestoreContent::Archived(rel(&main)),
        },
        RestoreItem {
            target: agent_out.clone(),
            content: RestoreContent::Archived(rel(&agent)),
        },
        RestoreItem {
            target: side_out.clone(),
            content: RestoreContent::Bytes {
                bytes: b"{}\n".to_vec(),
                if_missing: true,
            },
        },
    ];
    let rep = a.restore(&plan, false).expect("restore");
    assert_eq!(
        rep.written,
        [main_out.clone(), agent_out.clone(), side_out.clone()]
    );
    assert_eq!(fs::read(&main_out).expect("main"), lines(0..30).as_bytes());
    assert_eq!(
        fs::read(&agent_out).expect("agent"),
        lines(30..40).as_bytes()
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(&main_out).expect("md").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    // Idempotent; an `if_missing` file is kept whatever it holds.
    fs::write(&side_out, "edited\n").expect("edit");
    let again = a.restore(&plan, false).expect("again");
    assert!(again.written.is_empty());
    assert_eq!(again.unchanged.len(), 3);
    assert_eq!(fs::read(&side_out).expect("side"), b"edited\n");
    // A different existing file is a conflict, and nothing at all is written then.
    fs::write(&main_out, "other\n").expect("edit");
    fs::remove_file(&agent_out).expect("rm");
    assert!(matches!(
        a.restore(&plan, false),
        Err(ArchiveError::Conflict { .. })
    ));
    assert!(!agent_out.exists(), "a conflict must write nothing");
    a.restore(&plan, true).expect("overwrite");
    assert_eq!(fs::read(&main_out).expect("main"), lines(0..30).as_bytes());
    assert_eq!(
        fs::read(&agent_out).expect("agent"),
        lines(30..40).as_bytes()
    );
    // A stored relative path that leaves the archive is refused.
    let evil = [RestoreItem {
        target: out.join("x"),
        content: RestoreContent::Archived("../outside.jsonl.zst".into()),
    }];
    assert!(a.restore(&evil, false).is_err());
}

/// A small subagent transcript: shared boilerplate (what a dictionary learns) plus unique bits.
fn agent_text(i: usize) -> String {
    let mut s = String::new();
    for k in 0..12 {
        let _ = writeln!(
            s,
            "{{\"parentUuid\":\"p-{i}-{k}\",\"isSidechain\":true,\"userType\":\"external\",\"cwd\":\"/home/me/proj\",\"sessionId\":\"sess\",\"version\":\"2.1.239\",\"gitBranch\":\"main\",\"agentId\":\"a{i:06}\",\"type\":\"assistant\",\"message\":{{\"model\":\"claude-opus-4\",\"role\":\"assistant\",\"content\":[{{\"type\":\"tool_use\",\"name\":\"Read\",\"input\":{{\"file_path\":\"/home/me/proj/src/mod{}.rs\"}}}}],\"usage\":{{\"input_tokens\":{},\"output_tokens\":{},\"cache_read_input_tokens\":{}}}}},\"uuid\":\"u-{i}-{k}\",\"timestamp\":\"2026-01-05T14:{:02}:00Z\"}}",
            (i * 7 + k) % 13,
            i * 31 + k,
            k * 17,
            i * 1000 + k,
            k
        );
    }
    s
}

#[test]
fn trained_dictionary_is_used_for_small_subagents_and_still_decodes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("arch");
    let a = open(&root);
    let report = a.train_dictionary(&TrainOptions::default()).expect("train");
    assert!(report.installed.is_none() && report.skipped.is_some());
    for i in 0..60 {
        let src = dir.path().join(format!("agent-{i}.jsonl"));
        append(&src, &agent_text(i));
        ingest(&a, &src, &sub_kind("sess", &format!("a{i:06}"), "Explore")).expect("ingest");
    }
    let report = a
        .train_dictionary(&TrainOptions {
            dict_size: 16 << 10,
            ..TrainOptions::default()
        })
        .expect("train");
    let info = report
        .installed
        .clone()
        .expect("a dictionary helps on this data");
    assert!(report.gain > 0.05, "{report:?}");
    assert_eq!(info.version, 1);
    assert!(root.join("dict/v1.zdict").exists());

    let src = dir.path().join("agent-new.jsonl");
    append(&src, &agent_text(1000));
    let kind = sub_kind("sess", "anew", "Explore");
    let r = ingest(&a, &src, &kind).expect("ingest with dict");
    assert_eq!(r.dict.map(|d| d.id), Some(info.id));
    let path = archive_path(&r);
    // Plain zstd cannot read it without the dictionary; skein's readers find it.
    assert!(zstd::decode_all(fs::File::open(&path).expect("open")).is_err());
    assert_eq!(
        read_archived(&path).expect("read"),
        agent_text(1000).as_bytes()
    );
    append(&src, &agent_text(1001));
    ingest(&a, &src, &kind).expect("append with dict");
    let both = format!("{}{}", agent_text(1000), agent_text(1001));
    assert_eq!(read_archived(&path).expect("read"), both.as_bytes());
    let out = dir.path().join("plain.jsonl");
    decompress_file(&path, &out).expect("decompress");
    assert_eq!(fs::read(&out).expect("read"), both.as_bytes());
    let v = verify(&root).expect("verify");
    assert!(v.issues.is_empty(), "{:?}", v.issues);
    // Compaction keeps the dictionary.
    let opts = CompactOptions::at(skein_archive::now_unix() + 30 * DAY);
    assert!(a.compact(&opts).expect("compact").compacted > 0);
    assert_eq!(read_archived(&path).expect("read"), both.as_bytes());
    assert!(verify(&root).expect("verify").issues.is_empty());
    // With dictionaries off, new files are plain zstd.
    let off = skein_archive::Archive::open(
        &root,
        ArchiveOptions {
            dict: DictMode::Off,
            ..ArchiveOptions::default()
        },
    )
    .expect("open");
    let src = dir.path().join("agent-off.jsonl");
    append(&src, &agent_text(2000));
    let r = ingest(&off, &src, &sub_kind("sess", "aoff", "Explore")).expect("ingest");
    assert_eq!(r.dict, None);
    assert_eq!(decode_whole(&archive_path(&r)), agent_text(2000).as_bytes());
}

#[test]
fn index_is_deterministic_and_meta_is_stored() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("arch");
    let src = dir.path().join("s.jsonl");
    append(&src, &lines(0..5));
    let a = open(&root);
    let meta = SessionMeta {
        session_id: Some("s1".into()),
        project: Some("-home-me-proj".into()),
        models: vec!["claude-opus-4".into()],
        ..SessionMeta::default()
    };
    let r = a
        .ingest(
            &skein_archive::IngestRequest {
                source: &src,
                kind: main_kind("s1"),
                first_timestamp: Some(T0),
                meta: Some(meta.clone()),
            },
            None,
        )
        .expect("ingest");
    ingest(&a, &src, &sub_kind("s1", "b2", "Plan")).expect("sub");
    ingest(&a, &src, &sub_kind("s1", "a1", "Explore")).expect("sub");
    let idx = a.index().expect("index");
    let keys: Vec<_> = idx.entries.keys().cloned().collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
    assert_eq!(keys.len(), 3);
    let e = &idx.entries[&keys[0]];
    assert_eq!(e.project.as_deref(), Some("-home-me-proj"));
    let meta_path = root.join(skein_archive::meta_rel_path(&keys[0]));
    let state: skein_archive::FileState =
        serde_json::from_slice(&fs::read(&meta_path).expect("meta")).expect("json");
    assert_eq!(state.meta, meta);
    assert_eq!(Some(root.join(&state.file)), r.archive_path);
    a.rebuild_index().expect("rebuild");
    assert_eq!(a.index().expect("index"), idx);
}
