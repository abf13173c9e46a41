//! Checkpoints: the single commit point of the archive.
//!
//! One JSON file per archived source (`checkpoints/<kind>/.../<id>.json`), replaced atomically
//! after the new zstd frame is fsynced. It records, for the current archive file and every
//! earlier version, how far the source was consumed and how long the archive file was when that
//! state was committed. Anything in an archive file past `committed_len` is a torn frame from a
//! crash and is truncated before the next append. `.meta.json` files and the index are derived
//! from checkpoints and rewritten whenever they disagree.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{ArchiveError, Result};
use crate::layout::{Kind, read_optional, write_file, write_file_atomic};
use crate::meta::SessionMeta;
use skein_store::{Consumed, Durability, FileId};

/// Format version of checkpoints, meta files and the index.
pub const FORMAT: u32 = 1;

/// How many bytes at the start and before the consumed offset are hashed to detect rewrites.
pub const HASH_WINDOW: u64 = skein_store::append::WINDOW;

/// The source side of a committed state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceState {
    /// Where the source was read from last (lossy UTF-8; informational).
    pub path: String,
    pub dev: u64,
    pub ino: u64,
    /// The source's size when this state was committed.
    pub size: u64,
    /// Source bytes consumed: always just past a `\n`.
    pub offset: u64,
    /// Complete source lines consumed.
    pub lines: u64,
    /// Hash of the first `head_len` bytes (`min(offset, 4 KiB)`).
    pub head_len: u64,
    pub head_hash: String,
    /// Hash of the `tail_len` bytes just before `offset`.
    pub tail_len: u64,
    pub tail_hash: String,
    /// The archive file's checkpoint was rebuilt from its frames and no longer tells how far
    /// the source was consumed: the next ingest starts a new version from offset 0.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unknown: bool,
}

/// A trained dictionary used by a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DictRef {
    /// `dict/v<version>.zdict`.
    pub version: u32,
    /// The zstd dictionary id (also written in every frame header).
    pub id: u32,
}

/// The committed state of one archive file; also the content of its `.meta.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileState {
    pub format: u32,
    /// The archive file, relative to the archive root (`/`-separated).
    pub file: String,
    /// 1 for the first file of a source, 2.. for versions after a rewrite.
    pub version: u32,
    #[serde(flatten)]
    pub kind: Kind,
    /// The Claude projects directory name, fixed when the file was created.
    pub project: Option<String>,
    /// The timestamp the file name was derived from.
    pub first_timestamp: Option<String>,
    /// Archive length after the last committed frame.
    pub committed_len: u64,
    /// Committed zstd frames (1 after a compaction).
    pub frames: u64,
    /// Lines in the archive (after the transform).
    pub lines: u64,
    /// Decompressed size of the archive.
    pub raw_bytes: u64,
    pub dict: Option<DictRef>,
    /// Level of the last compaction, if no frame was appended since.
    pub compacted_level: Option<i32>,
    pub created_unix: i64,
    pub updated_unix: i64,
    /// The newer version that replaced this file after its source was rewritten.
    pub superseded_by: Option<String>,
    pub source: SourceState,
    pub meta: SessionMeta,
}

/// A compaction between writing the recompressed temp file and renaming it over the archive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingCompaction {
    pub file: String,
    pub temp: String,
    pub new_len: u64,
    pub level: i32,
}

/// Everything committed about one source (one archive key).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    pub format: u32,
    /// The source this checkpoint belongs to (as first archived).
    pub key: Kind,
    /// The file new lines are appended to.
    pub current: Option<FileState>,
    /// Earlier versions, oldest first.
    pub previous: Vec<FileState>,
    /// A new archive file being created: if it exists without being `current`, it is uncommitted.
    pub pending_new: Option<String>,
    pub pending_compaction: Option<PendingCompaction>,
    /// Whether the index already lists exactly these files.
    pub indexed: bool,
}

impl Checkpoint {
    /// An empty checkpoint for `key`.
    pub fn new(key: Kind) -> Self {
        Self {
            format: FORMAT,
            key,
            current: None,
            previous: Vec::new(),
            pending_new: None,
            pending_compaction: None,
            indexed: false,
        }
    }

    /// Reads a checkpoint; `None` if the file does not exist.
    pub fn load(path: &Path) -> Result<Option<Self>> {
        let Some(bytes) = read_optional(path)? else {
            return Ok(None);
        };
        Self::parse(path, &bytes).map(Some)
    }

    /// Parses the bytes of the checkpoint file `path`.
    pub(crate) fn parse(path: &Path, bytes: &[u8]) -> Result<Self> {
        let ck: Self = serde_json::from_slice(bytes).map_err(|source| ArchiveError::Json {
            path: path.to_path_buf(),
            source,
        })?;
        if ck.format != FORMAT {
            return Err(ArchiveError::Format {
                path: path.to_path_buf(),
                found: ck.format,
                supported: FORMAT,
            });
        }
        Ok(ck)
    }

    /// Commits the checkpoint: temp file, fsync, rename, directory fsync.
    pub fn save(&self, path: &Path) -> Result<()> {
        write_file_atomic(path, &to_json(self))
    }

    /// Commits like [`Checkpoint::save`] (temp file, fsync, rename) but without the directory
    /// fsync: for replacing an existing checkpoint when losing the rename on power loss is
    /// harmless (see `ingest`).
    pub(crate) fn save_without_dir_sync(&self, path: &Path) -> Result<()> {
        write_file(path, &to_json(self), Durability::NoDirSync)
    }

    /// All files of this key, current first.
    pub fn files(&self) -> impl Iterator<Item = &FileState> {
        self.current.iter().chain(self.previous.iter().rev())
    }

    pub(crate) fn files_mut(&mut self) -> impl Iterator<Item = &mut FileState> {
        self.current
            .iter_mut()
            .chain(self.previous.iter_mut().rev())
    }

    /// The highest version number used so far.
    pub fn max_version(&self) -> u32 {
        self.files().map(|f| f.version).max().unwrap_or(0)
    }
}

/// Pretty JSON with a trailing newline; deterministic for a given value.
pub(crate) fn to_json<T: Serialize>(v: &T) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(v).unwrap_or_else(|e| {
        // Serializing plain structs with string keys cannot fail.
        unreachable!("serializing archive state: {e}")
    });
    out.push(b'\n');
    out
}

/// `xxh3-64:<16 hex digits>`: how a [`skein_store::append::hash`] value is stored.
pub(crate) fn hash_text(hash: u64) -> String {
    format!("xxh3-64:{hash:016x}")
}

/// The value of a stored [`hash_text`] (`None` for anything else).
pub(crate) fn parse_hash(text: &str) -> Option<u64> {
    let hex = text.strip_prefix("xxh3-64:")?;
    (hex.len() == 16).then(|| u64::from_str_radix(hex, 16).ok())?
}

impl SourceState {
    /// The file the source was when this state was committed.
    pub fn file_id(&self) -> FileId {
        FileId {
            dev: self.dev,
            ino: self.ino,
            size: self.size,
        }
    }

    /// What was consumed (`None` when a stored hash is unreadable).
    pub(crate) fn consumed(&self) -> Option<Consumed> {
        Some(Consumed {
            offset: self.offset,
            head_len: self.head_len,
            head_hash: parse_hash(&self.head_hash)?,
            tail_len: self.tail_len,
            tail_hash: parse_hash(&self.tail_hash)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkpoint_round_trips_and_is_deterministic() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("c/k.json");
        assert!(Checkpoint::load(&p).expect("load").is_none());
        let mut ck = Checkpoint::new(Kind::MainSession {
            session_id: "s".into(),
        });
        ck.current = Some(FileState {
            format: FORMAT,
            file: "main-session/2026-01/x.jsonl.zst".into(),
            version: 1,
            kind: Kind::MainSession {
                session_id: "s".into(),
            },
            project: None,
            first_timestamp: None,
            committed_len: 10,
            frames: 1,
            lines: 2,
            raw_bytes: 20,
            dict: Some(DictRef { version: 1, id: 7 }),
            compacted_level: None,
            created_unix: 1,
            updated_unix: 2,
            superseded_by: None,
            source: SourceState::default(),
            meta: SessionMeta::default(),
        });
        ck.save(&p).expect("save");
        let back = Checkpoint::load(&p).expect("load").expect("exists");
        assert_eq!(back, ck);
        assert_eq!(to_json(&back), std::fs::read(&p).expect("read"));
        let h = skein_store::append::hash(b"abc");
        assert_eq!(parse_hash(&hash_text(h)), Some(h));
        assert_eq!(hash_text(0x1f), "xxh3-64:000000000000001f");
        for bad in [
            "",
            "xxh3-64:",
            "xxh3-64:00000000000000zz",
            "fnv:0000000000000001",
        ] {
            assert_eq!(parse_hash(bad), None, "{bad}");
        }
    }
}
