//! Helpers shared by the integration tests.
#![allow(dead_code, unreachable_pub)]

use std::io::Write;
use std::path::{Path, PathBuf};

use skein_archive::{
    Archive, ArchiveOptions, FileState, IngestReport, IngestRequest, Kind, Result,
};
use tempfile::TempDir;

pub const T0: &str = "2026-01-05T14:03:22.123Z";

/// One realistic-looking JSONL line.
pub fn line(i: usize, pad: usize) -> String {
    format!(
        "{{\"type\":\"user\",\"uuid\":\"u-{i}\",\"timestamp\":\"2026-01-05T14:{:02}:00Z\",\"message\":{{\"role\":\"user\",\"content\":\"{}\"}}}}\n",
        i % 60,
        "lorem ipsum ".repeat(pad / 12 + 1)
    )
}

pub fn lines(range: std::ops::Range<usize>) -> String {
    range.map(|i| line(i, 40 + (i * 37) % 300)).collect()
}

pub fn main_kind(id: &str) -> Kind {
    Kind::MainSession {
        session_id: id.to_owned(),
    }
}

pub fn sub_kind(parent: &str, id: &str, agent_type: &str) -> Kind {
    Kind::Subagent {
        agent_type: agent_type.to_owned(),
        agent_id: id.to_owned(),
        parent_session: Some(parent.to_owned()),
        tool_use_id: Some(format!("toolu_{id}")),
    }
}

/// A scratch directory, the source path `s.jsonl` in it (not created) and the archive root
/// `arch`, opened with default options.
pub fn scratch() -> (TempDir, PathBuf, PathBuf, Archive) {
    let dir = tempfile::tempdir().expect("tempdir");
    let (src, root) = (dir.path().join("s.jsonl"), dir.path().join("arch"));
    let a = open(&root);
    (dir, src, root, a)
}

pub fn open(dir: &Path) -> Archive {
    Archive::open(dir, ArchiveOptions::default()).expect("open archive")
}

pub fn ingest(a: &Archive, source: &Path, kind: &Kind) -> Result<IngestReport> {
    a.ingest(
        &IngestRequest {
            source,
            kind: kind.clone(),
            first_timestamp: Some(T0),
            meta: None,
        },
        None,
    )
}

pub fn append(path: &Path, text: &str) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .expect("open source");
    f.write_all(text.as_bytes()).expect("append");
}

/// The current file of `kind`'s checkpoint, which must exist.
pub fn current(a: &Archive, kind: &Kind) -> FileState {
    a.checkpoint(kind)
        .expect("read checkpoint")
        .expect("checkpoint exists")
        .current
        .expect("current file")
}

pub fn archive_path(r: &IngestReport) -> PathBuf {
    r.archive_path.clone().expect("archive path")
}

/// Reads every frame of a whole file (strict: a torn frame is an error).
pub fn decode_whole(path: &Path) -> Vec<u8> {
    zstd::decode_all(std::fs::File::open(path).expect("open")).expect("decode")
}

/// Number of zstd frames in a file.
pub fn count_frames(path: &Path) -> usize {
    let data = std::fs::read(path).expect("read");
    let mut rest = data.as_slice();
    let mut n = 0;
    while !rest.is_empty() {
        let len = zstd::zstd_safe::find_frame_compressed_size(rest).expect("frame");
        rest = &rest[len..];
        n += 1;
    }
    n
}
