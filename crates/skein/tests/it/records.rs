//! `skein records`: every record once, in file order, with exactly the fields named, held
//! against serde_json reading each (repaired) line whole: the stats fixtures, long lines the
//! skim drops most of, and the shared corpus.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::common::{corpus, jsonl_files, note, ok, skein, stderr, stdout, testdata};

/// What the command must print for one file, and the invalid lines' (line, offset): each
/// non-blank line parsed whole by serde_json after the repair; a last line without newline
/// that does not parse is a torn tail (neither printed nor invalid).
fn oracle(path: &Path, fields: &[&str], location: bool) -> (String, Vec<(u64, u64)>) {
    let bytes = std::fs::read(path).expect("read");
    let bom = if bytes.starts_with(b"\xef\xbb\xbf") {
        3
    } else {
        0
    };
    let (mut out, mut invalid) = (String::new(), Vec::new());
    let mut offset = bom as u64;
    let mut rest = &bytes[bom..];
    let mut number = 0;
    while !rest.is_empty() {
        number += 1;
        let (raw, terminated) = match rest.iter().position(|&b| b == b'\n') {
            Some(i) => (&rest[..=i], true),
            None => (rest, false),
        };
        let text = raw.strip_suffix(b"\n").unwrap_or(raw);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        let at = offset;
        offset += raw.len() as u64;
        rest = &rest[raw.len()..];
        if text.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
            continue;
        }
        let repaired = skein_core::repair::repair_line(text);
        match serde_json::from_slice::<Value>(&repaired) {
            Ok(Value::Object(record)) => {
                let mut o = Map::new();
                if location {
                    o.insert("file".into(), path.display().to_string().into());
                    o.insert("line".into(), number.into());
                    o.insert("offset".into(), at.into());
                }
                for f in fields {
                    insert(&mut o, f, pick(&record, f));
                }
                writeln!(out, "{}", Value::Object(o)).expect("write");
            }
            _ if !terminated => {}
            _ => invalid.push((number, at)),
        }
    }
    (out, invalid)
}

/// The value at a dotted path, `null` where a key is missing or a value on the way is not an
/// object.
fn pick(record: &Map<String, Value>, path: &str) -> Value {
    let mut at = Some(record);
    let mut keys = path.split('.').peekable();
    while let Some(key) = keys.next() {
        let value = at.and_then(|o| o.get(key));
        if keys.peek().is_none() {
            return value.cloned().unwrap_or(Value::Null);
        }
        at = value.and_then(Value::as_object);
    }
    Value::Null
}

/// Puts `value` at a dotted path of `out`, objects made on the way in the order first named.
fn insert(out: &mut Map<String, Value>, path: &str, value: Value) {
    match path.split_once('.') {
        None => {
            out.insert(path.into(), value);
        }
        Some((key, rest)) => {
            let below = out.entry(key).or_insert_with(|| Value::Object(Map::new()));
            insert(below.as_object_mut().expect("an object"), rest, value);
        }
    }
}

/// Runs `skein records` on `files` and checks its output against [`oracle`] line by line.
fn check(files: &[PathBuf], fields: &[&str], location: bool) -> usize {
    let list = fields.join(",");
    let mut args = vec!["records", "-q", "--fields", &list];
    if location {
        args.push("--location");
    }
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    args.extend(names.iter().map(String::as_str));
    let out = skein(&args, &crate::common::root());
    let got = stdout(ok(&out));
    let want: String = files
        .iter()
        .map(|f| oracle(f, fields, location).0)
        .collect();
    for (i, (g, w)) in got.lines().zip(want.lines()).enumerate() {
        assert_eq!(g, w, "record {i} of {names:?} --fields {list}");
    }
    assert_eq!(got.lines().count(), want.lines().count(), "{names:?}");
    want.lines().count()
}

fn stats_fixtures() -> Vec<PathBuf> {
    jsonl_files(&testdata("stats"))
}

#[test]
fn every_fixture_record_once_with_the_fields_named() {
    let files = stats_fixtures();
    let n = check(&files, &["type", "uuid", "parentUuid"], false);
    assert!(n > 100, "{n} records");
    check(&files, &["message", "isSidechain", "type"], true);
    check(
        &files,
        &[
            "type",
            "message.model",
            "message.usage.output_tokens",
            "uuid",
        ],
        false,
    );
}

/// Lines of several KiB (so the skim drops from them) with what it must not change: nested
/// keys named like the fields, a field written with an escape, objects and arrays named,
/// escapes and non-ASCII in long values, invalid lines among them.
#[test]
fn long_lines_read_alike_skimmed_or_whole() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = "line of tool output \\\"quoted\\\" \\u00e9 € \\\\ ".repeat(120);
    let mut text = String::new();
    for i in 0..40 {
        let _ = match i % 5 {
            0 => writeln!(
                text,
                r#"{{"type":"user","uuid":"u{i}","parentUuid":null,"message":{{"role":"user","content":[{{"type":"tool_result","content":"{out}"}}]}},"toolUseResult":{{"stdout":"{out}","type":"text"}}}}"#
            ),
            1 => writeln!(
                text,
                r#"{{"typ\u0065":"{out}","uuid":"u{i}","message":{{"type":"{out}","content":"{out}"}}}}"#
            ),
            2 => writeln!(
                text,
                r#"{{"type":"assistant","uuid":"u{i}","parentUuid":"u{}","message":{{"id":"m{i}","content":[{{"type":"text","text":"{out}"}}],"usage":{{"input_tokens":{i}}}}},"isSidechain":false}}"#,
                i - 1
            ),
            3 => writeln!(
                text,
                r#"{{"type":"user","content":"{out}\x","uuid":"bad{i}"}}"#
            ),
            _ => writeln!(
                text,
                r#"{{"parentUuid":"u{i}","type":"progress","data":{{"output":"{out}","type":"bash_progress"}},"uuid":"u{i}","uuid":"last{i}"}}"#
            ),
        };
    }
    let path = dir.path().join("long.jsonl");
    std::fs::write(&path, &text).expect("write");
    let files = vec![path];
    assert_eq!(oracle(&files[0], &["type"], false).1.len(), 8);
    check(&files, &["type", "uuid", "parentUuid"], false);
    check(&files, &["message", "type", "toolUseResult"], true);
    check(&files, &["isSidechain", "data"], false);
    check(
        &files,
        &["message.content", "toolUseResult.stdout", "message.type"],
        false,
    );
}

#[test]
fn invalid_lines_are_named_with_line_and_offset() {
    let file = testdata("stats/invalid_lines.jsonl");
    let (_, invalid) = oracle(&file, &["type"], false);
    assert!(!invalid.is_empty());
    let root = crate::common::root();
    let shown = file.display().to_string();
    let out = skein(&["records", &shown], &root);
    let err = stderr(ok(&out));
    for (line, offset) in &invalid {
        assert!(err.contains(&format!("{shown}:{line}:{offset}: ")), "{err}");
    }
    assert_eq!(err.lines().count(), invalid.len(), "{err}");
    let quiet = skein(&["records", "-q", &shown], &root);
    assert_eq!(stderr(ok(&quiet)), "");
    assert_eq!(stdout(&quiet), stdout(&out));
}

#[test]
fn bad_arguments_and_unreadable_files() {
    let root = crate::common::root();
    let file = testdata("stats/minimal.jsonl").display().to_string();
    for (args, says) in [
        (vec!["-f", "type,type"], "named twice"),
        (vec!["-f", "type,,uuid"], "has an empty key"),
        (vec!["-f", "message.id,message"], "is inside \"message\""),
        (
            vec!["--location", "-f", "line.x"],
            "also written by --location",
        ),
        (
            vec!["--location", "-f", "type,line"],
            "also written by --location",
        ),
    ] {
        let mut all = vec!["records"];
        all.extend(args);
        all.push(&file);
        let out = skein(&all, &root);
        assert_eq!(out.status.code(), Some(2), "{all:?}");
        assert!(stderr(&out).contains(says), "{}", stderr(&out));
        assert_eq!(stdout(&out), "");
    }
    // A file that cannot be read: exit 2, the others still printed.
    let out = skein(
        &["records", "-f", "type", "/nonexistent/x.jsonl", &file],
        &root,
    );
    assert_eq!(out.status.code(), Some(2));
    let (want, _) = oracle(Path::new(&file), &["type"], false);
    assert_eq!(stdout(&out), want);
    assert!(
        stderr(&out).contains("/nonexistent/x.jsonl"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn corpus_every_record_as_serde_json_reads_it() {
    let Some(corpus) = corpus() else { return };
    let files = jsonl_files(&corpus);
    let n = check(&files, &["type", "uuid", "parentUuid", "timestamp"], false);
    let m = check(&files, &["message", "toolUseResult"], true);
    assert_eq!(n, m);
    let paths = [
        "message.model",
        "message.usage",
        "data.message.message.id",
        "type",
    ];
    assert_eq!(check(&files, &paths, false), n);
    note(&format!(
        "records: {n} corpus records in {} files, as serde_json reads them",
        files.len()
    ));
}
