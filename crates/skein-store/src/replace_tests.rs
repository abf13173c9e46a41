use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::*;

#[allow(clippy::unnecessary_wraps, reason = "the shape rewrite_in_place takes")]
fn upper(input: &[u8]) -> Result<Option<Vec<u8>>, String> {
    let out = input.to_ascii_uppercase();
    Ok((out != input).then_some(out))
}

fn append(path: &Path, bytes: &[u8]) {
    let mut f = OpenOptions::new().append(true).open(path).expect("open");
    f.write_all(bytes).expect("append");
}

#[test]
fn output_that_is_the_input_is_refused_by_identity() {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = dir.path().join("t.jsonl");
    fs::write(&input, b"{}\n").expect("write");
    #[cfg(unix)]
    {
        let link = dir.path().join("link.jsonl");
        std::os::unix::fs::symlink(&input, &link).expect("symlink");
        let hard = dir.path().join("hard.jsonl");
        fs::hard_link(&input, &hard).expect("link");
        for out in [&link, &hard] {
            let err = ensure_not_input(out, &[&input]).expect_err("same file");
            assert!(matches!(err, ReplaceError::OutputIsInput { .. }), "{err}");
        }
    }
    ensure_not_input(&input, &[&input]).expect_err("same path");
    ensure_not_input(&dir.path().join("new.jsonl"), &[&input]).expect("a new file");
    ensure_not_input(Path::new("-"), &[Path::new("-")]).expect("stdout is not stdin");
}

#[test]
fn output_targets() {
    assert_eq!(
        OutputTarget::of(Path::new("-")).expect("-"),
        OutputTarget::Stdout
    );
    assert_eq!(
        OutputTarget::of(Path::new("/dev/stdout")).expect("stdout"),
        OutputTarget::Stdout
    );
    assert_eq!(
        OutputTarget::of(Path::new("/dev/stderr")).expect("stderr"),
        OutputTarget::Stderr
    );
    assert_eq!(
        OutputTarget::of(Path::new("/dev/null")).expect("null"),
        OutputTarget::Direct(PathBuf::from("/dev/null"))
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let new = dir.path().join("new.md");
    assert_eq!(
        OutputTarget::of(&new).expect("new"),
        OutputTarget::Replace {
            path: new.clone(),
            mode: None
        }
    );
    write_target(&OutputTarget::of(&new).expect("new"), b"x").expect("write");
    assert_eq!(fs::read(&new).expect("read"), b"x");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            fs::metadata(&new).expect("stat").permissions().mode() & 0o777,
            0o600
        );
        fs::set_permissions(&new, fs::Permissions::from_mode(0o640)).expect("chmod");
        let link = dir.path().join("link.md");
        std::os::unix::fs::symlink(&new, &link).expect("symlink");
        let t = OutputTarget::of(&link).expect("link");
        assert_eq!(
            t,
            OutputTarget::Replace {
                path: fs::canonicalize(&new).expect("canonical"),
                mode: Some(0o640)
            }
        );
        write_target(&t, b"y").expect("write");
        assert!(fs::symlink_metadata(&link).expect("lstat").is_symlink());
        assert_eq!(fs::read(&new).expect("read"), b"y");
        assert_eq!(
            fs::metadata(&new).expect("stat").permissions().mode() & 0o777,
            0o640
        );
    }
}

#[test]
fn unchanged_content_is_not_written() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("t.jsonl");
    fs::write(&p, b"ABC\n").expect("write");
    let before = fs::metadata(&p).expect("stat").modified().expect("mtime");
    let r = rewrite_in_place(&p, &InPlaceOptions::default(), upper).expect("rewrite");
    assert!(!r.replaced);
    assert_eq!(
        fs::metadata(&p).expect("stat").modified().expect("mtime"),
        before
    );
}

#[test]
fn lines_appended_while_processing_are_carried_over() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("t.jsonl");
    fs::write(&p, b"a\nb\n").expect("write");
    let mut calls = 0;
    let r = rewrite_in_place(&p, &InPlaceOptions::default(), |input| {
        calls += 1;
        append(&p, b"late line\n");
        upper(input)
    })
    .expect("rewrite");
    assert_eq!(calls, 1);
    assert!(r.replaced);
    assert_eq!(r.carried_bytes, 10);
    assert_eq!(fs::read(&p).expect("read"), b"A\nB\nlate line\n");
}

#[test]
fn a_line_completed_while_processing_is_processed_again() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("t.jsonl");
    fs::write(&p, b"a\nhal").expect("write");
    let mut calls = 0;
    let r = rewrite_in_place(&p, &InPlaceOptions::default(), |input| {
        calls += 1;
        if calls == 1 {
            append(&p, b"f line\n");
        }
        upper(input)
    })
    .expect("rewrite");
    assert_eq!((calls, r.attempts, r.carried_bytes), (2, 2, 0));
    assert_eq!(fs::read(&p).expect("read"), b"A\nHALF LINE\n");
}

#[test]
fn a_rewritten_file_is_processed_again_and_a_restless_one_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("t.jsonl");
    fs::write(&p, b"one\ntwo\n").expect("write");
    // Replaced by another file (new inode), then truncated: each time processed again.
    let mut calls = 0;
    let r = rewrite_in_place(&p, &InPlaceOptions::default(), |input| {
        calls += 1;
        match calls {
            1 => fs::write(dir.path().join("other"), b"three\n")
                .and_then(|()| fs::rename(dir.path().join("other"), &p))
                .expect("replace"),
            2 => fs::write(&p, b"x\n").expect("truncate in place"),
            _ => {}
        }
        upper(input)
    })
    .expect("rewrite");
    assert_eq!(r.attempts, 3);
    assert_eq!(fs::read(&p).expect("read"), b"X\n");
    // Edited inside what was read (same length): processed again; forever: refused.
    let err = rewrite_in_place(
        &p,
        &InPlaceOptions {
            tries: 3,
            ..InPlaceOptions::default()
        },
        |input| {
            let flipped: Vec<u8> = input.iter().map(|b| b ^ 0x20).collect();
            fs::write(&p, &flipped).expect("edit");
            Ok::<_, String>(Some(b"mine\n".to_vec()))
        },
    )
    .expect_err("never stable");
    assert!(
        matches!(
            err,
            InPlaceError::Replace(ReplaceError::Unstable { tries: 3, .. })
        ),
        "{err:?}"
    );
    assert_ne!(fs::read(&p).expect("read"), b"mine\n");
}

#[test]
fn backup_is_the_old_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("t.jsonl");
    let bak = dir.path().join("t.jsonl.bak");
    fs::write(&p, b"a\n").expect("write");
    fs::write(&bak, b"an older backup\n").expect("write");
    let opts = InPlaceOptions {
        backup: Some(bak.clone()),
        ..InPlaceOptions::default()
    };
    let r = rewrite_in_place(&p, &opts, |input| {
        append(&p, b"b\n");
        upper(input)
    })
    .expect("rewrite");
    assert!(r.replaced);
    assert_eq!(fs::read(&p).expect("read"), b"A\nb\n");
    assert_eq!(fs::read(&bak).expect("read"), b"a\nb\n");
}

/// An appender writing whole lines by path at random moments while the file is rewritten over
/// and over: every line it wrote is in the file at the end.
#[test]
fn racing_appender_loses_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("live.jsonl");
    fs::write(&p, b"seed\n").expect("write");
    let stop = Arc::new(AtomicBool::new(false));
    let appender = {
        let (p, stop) = (p.clone(), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut n = 0u32;
            while !stop.load(Ordering::Relaxed) && n < 400 {
                append(&p, format!("line {n}\n").as_bytes());
                n += 1;
                std::thread::sleep(std::time::Duration::from_micros(50 + u64::from(n % 7) * 40));
            }
            n
        })
    };
    let mut rewrites = 0;
    while !appender.is_finished() && rewrites < 300 {
        // Lower-case letters become upper case; appended lines arrive lower case.
        let r = rewrite_in_place(&p, &InPlaceOptions::default(), upper);
        if r.is_ok() {
            rewrites += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    let written = appender.join().expect("appender");
    let text = String::from_utf8(fs::read(&p).expect("read")).expect("utf8");
    let text = text.to_ascii_lowercase();
    for n in 0..written {
        assert!(
            text.lines().any(|l| l == format!("line {n}")),
            "line {n} of {written} lost after {rewrites} rewrites"
        );
    }
    assert!(text.starts_with("seed\n"));
}
