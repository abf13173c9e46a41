//! Two keys whose archive files get the same name: subagents of different sessions with the
//! same agent id, type and start second (the subagent file name leaves out the parent session).
//! Both are archived, under different names, and no recovery removes the other key's file.

use crate::common;

use std::fs;

use common::*;
use skein_archive::{IngestRequest, verify};

/// Many pairs of colliding keys ingested from two threads into one batch: every ingest
/// succeeds, each key gets its own file, and the archive verifies. (Before names were
/// withdrawn on `EEXIST`, a pair racing between choosing the name and creating the file failed
/// with "File exists".)
#[test]
fn racing_keys_with_one_name_each_get_a_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("arch");
    let a = open(&root);
    let src = dir.path().join("agent.jsonl");
    append(&src, &lines(0..20));
    let pairs = 40;
    let batch = a.batch().expect("batch");
    std::thread::scope(|scope| {
        for session in ["sess-1", "sess-2"] {
            let (batch, src) = (&batch, &src);
            scope.spawn(move || {
                for i in 0..pairs {
                    let kind = sub_kind(session, &format!("a{i:06}"), "Explore");
                    let req = IngestRequest {
                        source: src,
                        kind,
                        first_timestamp: Some(T0),
                        meta: None,
                    };
                    batch.ingest(&req, None).expect("ingest");
                }
            });
        }
    });
    batch.commit().expect("commit");
    let files: Vec<_> = skein_testkit::files_under(&root.join("subagent"))
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(".jsonl.zst"))
        .collect();
    assert_eq!(files.len(), 2 * pairs, "{files:#?}");
    let rep = verify(&root).expect("verify");
    assert!(rep.issues.is_empty(), "{:?}", rep.issues);
}

/// A dead batch's journal that announced a name another key created and committed: with the
/// withdrawal written since, and also without it (a journal written before names were
/// withdrawn), recovering it leaves the other key's file alone.
#[test]
fn a_name_another_key_committed_is_not_removed_by_recovery() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("arch");
    let src = dir.path().join("agent.jsonl");
    append(&src, &lines(0..20));
    let a = open(&root);
    let owner = ingest(&a, &src, &sub_kind("sess-2", "a1b2c3d", "Explore")).expect("owner");
    let path = archive_path(&owner);
    let rel = path
        .strip_prefix(&root)
        .expect("inside")
        .to_string_lossy()
        .into_owned();
    let other = sub_kind("sess-1", "a1b2c3d", "Explore");
    let key = serde_json::to_value(&other).expect("key");
    let announced = serde_json::json!({"key": key, "file": rel});
    let withdrawn = serde_json::json!({"key": key, "file": rel, "withdrawn": true});
    let before = fs::read(&path).expect("read");
    for journal in [
        format!("{announced}\n{withdrawn}\n"),
        format!("{announced}\n"),
    ] {
        fs::create_dir_all(root.join("batches")).expect("mkdir");
        fs::write(root.join("batches/batch-dead.jsonl"), &journal).expect("journal");
        let rep = a.recover_all().expect("recover");
        assert!(!root.join("batches/batch-dead.jsonl").exists(), "{rep:?}");
        assert_eq!(fs::read(&path).expect("still there"), before, "{journal}");
        let rep = verify(&root).expect("verify");
        assert!(rep.issues.is_empty(), "{:?}", rep.issues);
    }
}
