//! Checkpoint change detection, tag extraction with hostile file names, bounded transcript reads.

use crate::common;

use std::fmt::Write as _;
use std::fs;
use std::io::Write;
use std::time::Duration;

use common::{append_lines, assistant_text, todo_write, user_line};
use skein_analysis::TaskTracker;
use skein_hook::checkpoint::{ChangeKind, TranscriptCheckpoints, probe};
use skein_hook::extract::{extract_tags, numbered, write_work_files};
use skein_hook::transcript::{feed_tasks, find_prompt_uuid, last_assistant_text};

#[test]
fn checkpoint_change_detection() {
    let dir = tempfile::tempdir().expect("tempdir");
    let t = dir.path().join("s.jsonl");
    fs::write(&t, "{\"a\":1}\n{\"b\":2}\n").expect("write");
    let first = probe(&t, None).expect("probe");
    assert_eq!(first.change, ChangeKind::Rewritten);
    assert_eq!((first.start(), first.end), (0, 16));

    let same = probe(&t, Some(&first.next)).expect("probe");
    assert_eq!(same.change, ChangeKind::Unchanged);
    assert_eq!(same.next, first.next);

    // A partial line is not consumed; once completed it is.
    fs::OpenOptions::new()
        .append(true)
        .open(&t)
        .expect("open")
        .write_all(b"{\"c\":")
        .expect("w");
    let partial = probe(&t, Some(&first.next)).expect("probe");
    assert_eq!((partial.change, partial.end), (ChangeKind::Unchanged, 16));
    fs::OpenOptions::new()
        .append(true)
        .open(&t)
        .expect("open")
        .write_all(b"3}\n{\"d\"")
        .expect("w");
    let appended = probe(&t, Some(&partial.next)).expect("probe");
    assert_eq!(appended.change, ChangeKind::Appended { from: 16 });
    assert_eq!(appended.end, 24);

    // Truncated below the offset.
    fs::write(&t, "{\"a\":1}\n").expect("write");
    assert_eq!(
        probe(&t, Some(&appended.next)).expect("probe").change,
        ChangeKind::Rewritten
    );
    // Same length, different bytes before the offset.
    fs::write(&t, "{\"a\":1}\n{\"B\":2}\n{\"c\":3}\n").expect("write");
    let base = probe(&t, None).expect("probe");
    fs::write(&t, "{\"a\":1}\n{\"X\":2}\n{\"c\":3}\n{\"d\":4}\n").expect("write");
    assert_eq!(
        probe(&t, Some(&base.next)).expect("probe").change,
        ChangeKind::Rewritten
    );
    // Replaced by another file (new inode) with identical content.
    let base = probe(&t, None).expect("probe");
    let tmp = dir.path().join("tmp");
    fs::copy(&t, &tmp).expect("copy");
    fs::rename(&tmp, &t).expect("rename");
    assert_eq!(
        probe(&t, Some(&base.next)).expect("probe").change,
        ChangeKind::Rewritten
    );
    // A checkpoint with nonsense numbers is treated as rewritten, not a panic.
    let mut bogus = base.next;
    bogus.tail_len = u64::MAX;
    assert_eq!(
        probe(&t, Some(&bogus)).expect("probe").change,
        ChangeKind::Rewritten
    );
    bogus = base.next;
    bogus.offset = 1 << 40;
    assert_eq!(
        probe(&t, Some(&bogus)).expect("probe").change,
        ChangeKind::Rewritten
    );
}

#[test]
fn checkpoint_store_round_trip_and_corruption() {
    let dir = tempfile::tempdir().expect("tempdir");
    let state = dir.path().join("state");
    let t = dir.path().join("s.jsonl");
    fs::write(&t, "{}\n").expect("write");
    let p = probe(&t, None).expect("probe");
    {
        let mut cps =
            TranscriptCheckpoints::open(&state, &t, Duration::from_secs(1)).expect("open");
        assert!(cps.get("archive").is_none());
        cps.set("archive", &t, p.next);
        cps.save().expect("save");
    }
    let cps = TranscriptCheckpoints::open(&state, &t, Duration::from_secs(1)).expect("open");
    assert_eq!(cps.get("archive"), Some(&p.next));
    // Locked while held.
    assert!(TranscriptCheckpoints::open(&state, &t, Duration::from_millis(20)).is_err());
    drop(cps);
    for entry in fs::read_dir(state.join("checkpoints")).expect("dir") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "json") {
            fs::write(&path, "garbage").expect("corrupt");
        }
    }
    let cps = TranscriptCheckpoints::open(&state, &t, Duration::from_secs(1)).expect("open");
    assert!(cps.warning.is_some());
    assert!(cps.get("archive").is_none());
}

#[test]
fn tags_are_extracted() {
    let text = "intro <contextual>no</contextual>\n<context>\n  first\n</context> mid \
        <context>second</context><context>   </context>\
        <work filename=\"a.md\">\nbody A\n</work>\
        <work filename='b c.txt' kind=\"x\">B</work>\
        <work filename=plain.rs>fn main() {}</work>\
        <work>anonymous</work><work filename=\"x.md\"/>\
        <work filename=\"&quot;q&quot;.md\">Q</work><work filename=\"unclosed.md\">never";
    let ex = extract_tags(text);
    assert_eq!(ex.contexts, ["first", "second"]);
    let names: Vec<&str> = ex.works.iter().map(|w| w.file_name.as_str()).collect();
    assert_eq!(names, ["a.md", "b_c.txt", "plain.rs", "unnamed", "_q_.md"]);
    assert_eq!(ex.works[0].content, "body A\n");
    assert_eq!(ex.works[2].content, "fn main() {}");
    assert_eq!(ex.works[4].raw_name.as_deref(), Some("\"q\".md"));
}

#[test]
fn hostile_work_file_names_stay_in_work_dir() {
    let dir = tempfile::tempdir().expect("tempdir");
    let work = dir.path().join("req").join("work");
    fs::create_dir_all(work.parent().expect("parent")).expect("mkdir");
    let outside = dir.path().join("outside.txt");
    fs::write(&outside, "precious").expect("write");
    let long = "x".repeat(400);
    let hostile = [
        "../../outside.txt",
        "/etc/passwd",
        "..",
        ".",
        ".bashrc",
        "a/../../b",
        "..\\..\\win.ini",
        "nul\0byte.md",
        "",
        "notes.md",
        "notes.md",
        "notes.md",
        &long,
        "con:stream",
        "ä.md",
    ];
    let mut text = String::new();
    for n in hostile {
        write!(text, "<work filename=\"{n}\">payload {n}</work>").expect("fmt");
    }
    let ex = extract_tags(&text);
    // A planted symlink where a file would go must not be followed or replaced.
    fs::create_dir_all(&work).expect("mkdir");
    std::os::unix::fs::symlink(&outside, work.join("passwd")).expect("symlink");
    let names = write_work_files(&work, &ex.works).expect("write");
    assert_eq!(fs::read_to_string(&outside).expect("read"), "precious");
    assert!(
        fs::symlink_metadata(work.join("passwd"))
            .expect("meta")
            .file_type()
            .is_symlink()
    );
    assert_eq!(names.len(), hostile.len());
    assert!(names.contains(&"passwd-2".to_owned()), "{names:?}");
    assert!(names.contains(&"notes-3.md".to_owned()), "{names:?}");
    for n in &names {
        assert!(
            !n.starts_with('.') && !n.contains('/') && !n.contains('\\') && !n.contains('\0'),
            "{n:?}"
        );
        assert!(n.len() <= 128, "{n}");
        assert!(work.join(n).is_file());
    }
    let entries = fs::read_dir(&work).expect("dir").count();
    assert_eq!(
        entries,
        hostile.len() + 1,
        "only the files and the planted link"
    );
    assert_eq!(
        fs::read_dir(dir.path()).expect("dir").count(),
        2,
        "nothing written outside"
    );

    // work/ itself replaced by a symlink: refused.
    let evil = dir.path().join("evil");
    fs::create_dir_all(&evil).expect("mkdir");
    let work2 = dir.path().join("req").join("work2");
    std::os::unix::fs::symlink(&evil, &work2).expect("symlink");
    assert!(write_work_files(&work2, &ex.works).is_err());
    assert_eq!(fs::read_dir(&evil).expect("dir").count(), 0);

    assert_eq!(numbered("a.tar.gz", 2), "a.tar-2.gz");
    assert_eq!(numbered("Makefile", 3), "Makefile-3");
    assert_eq!(numbered(&"y".repeat(128), 12).len(), 128);
}

#[test]
fn final_text_todos_and_prompt_uuid() {
    let dir = tempfile::tempdir().expect("tempdir");
    let t = dir.path().join("agent.jsonl");
    let split_a = serde_json::json!({"type":"assistant","uuid":"x1","parentUuid":"u1",
        "message":{"id":"m9","role":"assistant","content":[{"type":"thinking","thinking":"hm"}]}});
    let split_b = serde_json::json!({"type":"assistant","uuid":"x2","parentUuid":"x1",
        "message":{"id":"m9","role":"assistant","content":[{"type":"text","text":"part one"}]}});
    let split_c = serde_json::json!({"type":"assistant","uuid":"x3","parentUuid":"x2",
        "message":{"id":"m9","role":"assistant","content":[{"type":"text","text":"part two"}]}});
    let synthetic = serde_json::json!({"type":"assistant","uuid":"x4","parentUuid":"x3",
        "message":{"id":"m10","model":"<synthetic>","content":[{"type":"text","text":"No response requested."}]}});
    append_lines(
        &t,
        &[
            user_line("u1", None, "task"),
            // Nearer than u2 but not a human prompt: a sidechain replay and injected context.
            serde_json::json!({"type":"user","uuid":"s1","isSidechain":true,
                "message":{"role":"user","content":"The real prompt, with details"}})
            .to_string(),
            serde_json::json!({"type":"user","uuid":"s2","isMeta":true,
                "message":{"role":"user","content":"The real prompt, with details"}})
            .to_string(),
            assistant_text("a1", "u1", "m1", "older answer"),
            todo_write("a2", "a1", &[("one", "pending")]),
            user_line("u2", Some("a2"), "The real prompt, with details"),
            todo_write("a3", "u2", &[("one", "completed"), ("two", "pending")]),
            split_a.to_string(),
            split_b.to_string(),
            split_c.to_string(),
            synthetic.to_string(),
            "{\"type\":\"system\",\"subtype\":\"turn_duration\"}".to_owned(),
            "not json at all".to_owned(),
        ],
    );
    fs::OpenOptions::new()
        .append(true)
        .open(&t)
        .expect("open")
        .write_all(b"{\"type\":\"assis")
        .expect("w");
    assert_eq!(
        last_assistant_text(&t).expect("read").as_deref(),
        Some("part one\npart two")
    );
    let size = fs::metadata(&t).expect("meta").len();
    let mut tracker = TaskTracker::new();
    feed_tasks(&t, 0, size, &mut tracker).expect("todos");
    let todos = tracker.current().expect("some").items;
    assert_eq!(todos.len(), 2);
    assert_eq!(todos[1].subject, "two");
    let starts = |want: &'static str| move |text: &str, _: Option<&str>| text.starts_with(want);
    assert_eq!(
        find_prompt_uuid(&t, 100, 0, size, &starts("The real prompt"))
            .expect("scan")
            .as_deref(),
        Some("u2")
    );
    assert_eq!(
        find_prompt_uuid(&t, 0, 0, size, &starts("never said")).expect("scan"),
        None
    );
    // Bytes before `start` were searched already.
    assert_eq!(
        find_prompt_uuid(&t, 100, size - 10, size, &starts("The real prompt")).expect("scan"),
        None
    );
    let empty = dir.path().join("empty.jsonl");
    fs::write(&empty, "").expect("write");
    assert_eq!(last_assistant_text(&empty).expect("read"), None);
}
