//! Any bytes as an archive file in an archive on disk, under a checkpoint whose committed length and counts come from
//! the input too (or, half the time, from decoding the committed prefix, so the checkpoint is
//! often right): reading, `verify` and `repair` never panic, and repair never loses a byte:
//! it only ever cuts the file's end, and whatever it cuts from a file whose checkpoint it could
//! not prove is set aside byte for byte.
//!
//! Input: 1 flag byte, 2 bytes of committed length (modulo the file length + 2, so sometimes
//! past the end), 2 bytes of line count, 4 bytes of byte count, then the file.
//!
//! Every run writes and reads a dozen small files (in `/dev/shm` where there is one), so this
//! target runs hundreds, not thousands, of inputs per second; `archive` fuzzes the frame scan
//! underneath in memory.
#![no_main]

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use skein_archive::{
    Archive, ArchiveOptions, Checkpoint, FORMAT, FileState, Kind, Problem, SessionMeta,
    SourceState, open_archived, verify,
};

const FILE: &str = "main-session/2026-01/2026-01-05_140322_fz.jsonl.zst";

/// A scratch directory for this process, in memory where possible (repair fsyncs).
fn scratch() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let base = if Path::new("/dev/shm").is_dir() {
            PathBuf::from("/dev/shm")
        } else {
            std::env::temp_dir()
        };
        let dir = base.join(format!("skein-fuzz-archive-{}", std::process::id()));
        fs::create_dir_all(&dir).expect("scratch dir");
        dir
    })
}

/// Lines and bytes of the first `limit` bytes of `file` decoded, if they decode to at most
/// 16 MiB.
fn decoded_counts(file: &[u8], limit: usize) -> Option<(u64, u64)> {
    let mut dec = zstd::stream::read::Decoder::new(&file[..limit]).ok()?;
    let mut buf = vec![0u8; 1 << 16];
    let (mut lines, mut bytes) = (0u64, 0u64);
    loop {
        match dec.read(&mut buf) {
            Ok(0) => return Some((lines, bytes)),
            Ok(n) => {
                lines += buf[..n].iter().filter(|&&b| b == b'\n').count() as u64;
                bytes += n as u64;
                if bytes > 16 << 20 {
                    return None;
                }
            }
            Err(_) => return None,
        }
    }
}

fn is_content_error(p: &Problem) -> bool {
    matches!(
        p,
        Problem::Truncated { .. }
            | Problem::Undecodable(_)
            | Problem::ContentMismatch { .. }
            | Problem::CommittedLengthWrong { .. }
            | Problem::FramesDisagree { .. }
    )
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 9 {
        return;
    }
    let (head, file) = data.split_at(9);
    // The layout stays between runs (directories, lock files); what a run writes goes.
    let root = scratch().join("arch");
    let path = root.join(FILE);
    let meta = root.join(skein_archive::meta_rel_path(FILE));
    let _ = fs::remove_dir_all(root.join(skein_archive::SET_ASIDE_DIR));
    let _ = fs::remove_file(root.join(skein_archive::INDEX_FILE));
    let _ = fs::remove_file(&meta);
    fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    fs::write(&path, file).expect("write archive file");
    let len = file.len() as u64;
    let committed = u64::from(u16::from_le_bytes([head[1], head[2]])) % (len + 2);
    let fuzzed = (
        u64::from(u16::from_le_bytes([head[3], head[4]])),
        u64::from(u32::from_le_bytes([head[5], head[6], head[7], head[8]])),
    );
    let (lines, raw_bytes) = if head[0] & 1 == 0 && committed <= len {
        decoded_counts(file, committed as usize).unwrap_or(fuzzed)
    } else {
        fuzzed
    };
    let kind = Kind::MainSession {
        session_id: "fz".into(),
    };
    let state = FileState {
        format: FORMAT,
        file: FILE.into(),
        version: 1,
        kind: kind.clone(),
        project: None,
        first_timestamp: None,
        committed_len: committed,
        frames: 1,
        lines,
        raw_bytes,
        dict: None,
        compacted_level: None,
        created_unix: 0,
        updated_unix: 0,
        superseded_by: None,
        source: SourceState::default(),
        meta: SessionMeta::default(),
    };
    let mut ck = Checkpoint::new(kind);
    ck.current = Some(state);
    ck.save(&root.join("checkpoints/main-session/fz.json"))
        .expect("write checkpoint");

    // Reading: only the committed prefix, never a panic (at most 16 MiB read: a tiny input can
    // declare a huge output).
    if let Ok(r) = open_archived(&path) {
        let _ = r.take(16 << 20).read_to_end(&mut Vec::new());
    }
    let before = verify(&root).expect("verify runs");
    let unproven = before
        .errors()
        .any(|i| i.path == path && is_content_error(&i.problem));

    let options = ArchiveOptions {
        lock_timeout: std::time::Duration::from_secs(5),
        clock: || 0,
        ..ArchiveOptions::default()
    };
    let archive = Archive::open(&root, options).expect("open");
    let report = archive.recover_all().expect("repair runs");
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let after = fs::read(&path).expect("archive file kept");
    assert!(file.starts_with(&after), "repair rewrote bytes");
    if after.len() < file.len() && unproven {
        let aside: Vec<u8> = report
            .set_aside
            .iter()
            .flat_map(|p| fs::read(p).expect("set-aside copy"))
            .collect();
        assert_eq!(aside, &file[after.len()..], "cut bytes not set aside");
    }
    let v = verify(&root).expect("verify runs");
    let left: Vec<_> = v
        .errors()
        .filter(|i| i.path == path && is_content_error(&i.problem))
        .collect();
    assert!(left.is_empty(), "after repair: {left:?}");
});
