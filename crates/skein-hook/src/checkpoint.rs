//! Per-transcript, per-pass checkpoints so a Stop on a huge transcript only looks at the bytes
//! appended since the last run. A checkpoint remembers the offset reached (always the end of a
//! complete line), the file identity (device, inode, size), and hashes of up to 4 KiB at the
//! start and before the offset; when `skein_store::append` (the probe the archive uses too)
//! says the file no longer continues that, it was rewritten and the pass starts over.
//!
//! Stored as `<state>/checkpoints/<hash of the path>.json`, one object per transcript holding
//! one checkpoint per pass name, guarded by `<same>.lock` for the whole run of the passes (so
//! two hooks never process the same new bytes twice). The state a pass carries (e.g. the
//! archive metadata of a long session, about a megabyte) lives in its own file,
//! `<same>.<hash of the pass name>.state.json`, read only when that pass runs and written only
//! when it changes; it records the checkpoint it describes and is ignored unless that is still
//! the pass's checkpoint (a crash between the two writes costs a re-read, never a wrong state).

use std::collections::BTreeMap;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use skein_store::append::last_line_end;
use skein_store::{Consumed, Durability, FileId, FileLock, write_atomic_with};

use crate::state::{StateError, io_at, read_json};

/// Bytes at each end of the consumed range that are hashed to recognise the same content.
pub const TAIL_BYTES: u64 = skein_store::append::WINDOW;

/// Where a pass left off in a transcript. Checkpoints written before the head hash existed
/// (and with another tail hash) read as rewritten once: the pass redoes the file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    pub offset: u64,
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    #[serde(default)]
    pub head_len: u64,
    #[serde(default)]
    pub head_hash: u64,
    pub tail_len: u64,
    pub tail_hash: u64,
}

impl Checkpoint {
    fn file_id(&self) -> FileId {
        FileId {
            dev: self.dev,
            ino: self.ino,
            size: self.size,
        }
    }

    fn consumed(&self) -> Consumed {
        Consumed {
            offset: self.offset,
            head_len: self.head_len,
            head_hash: self.head_hash,
            tail_len: self.tail_len,
            tail_hash: self.tail_hash,
        }
    }
}

/// What happened to a transcript since its checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// No new complete line.
    Unchanged,
    /// Same file, new complete lines from `from` on.
    Appended { from: u64 },
    /// Different file, truncated, or content before the offset changed (or no checkpoint yet):
    /// process the whole file.
    Rewritten,
}

/// Result of comparing a transcript with its checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probe {
    pub change: ChangeKind,
    /// End of the last complete line: process `[from or 0, end)`.
    pub end: u64,
    /// The checkpoint to store once that range was processed.
    pub next: Checkpoint,
}

impl Probe {
    /// First byte to process (0 when rewritten, `end` when unchanged).
    pub fn start(&self) -> u64 {
        match self.change {
            ChangeKind::Unchanged => self.end,
            ChangeKind::Appended { from } => from,
            ChangeKind::Rewritten => 0,
        }
    }
}

/// Compares `path` with `prev` without reading more than a few KiB (plus the scan back to the
/// last newline).
pub fn probe(path: &Path, prev: Option<&Checkpoint>) -> io::Result<Probe> {
    let file = File::open(path)?;
    let now = FileId::of(&file.metadata()?);
    let continues = match prev {
        Some(p) => p.consumed().check(&file, &p.file_id(), &now)?.is_none(),
        None => false,
    };
    let (change, end) = match prev {
        Some(p) if continues => {
            let end = last_line_end(&file, p.offset, now.size)?;
            let change = if end == p.offset {
                ChangeKind::Unchanged
            } else {
                ChangeKind::Appended { from: p.offset }
            };
            (change, end)
        }
        _ => (ChangeKind::Rewritten, last_line_end(&file, 0, now.size)?),
    };
    let c = Consumed::of(&file, end)?;
    let next = Checkpoint {
        offset: end,
        dev: now.dev,
        ino: now.ino,
        size: now.size,
        head_len: c.head_len,
        head_hash: c.head_hash,
        tail_len: c.tail_len,
        tail_hash: c.tail_hash,
    };
    Ok(Probe { change, end, next })
}

pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct CheckpointFile {
    #[serde(default)]
    path: String,
    #[serde(default)]
    passes: BTreeMap<String, Checkpoint>,
}

/// A pass's state file: the state and the checkpoint it describes.
#[derive(Debug, Serialize, Deserialize)]
struct StateFile {
    checkpoint: Checkpoint,
    state: serde_json::Value,
}

/// The checkpoints of one transcript, locked for as long as this value lives.
#[derive(Debug)]
pub struct TranscriptCheckpoints {
    file: PathBuf,
    data: CheckpointFile,
    dirty: bool,
    /// States set this run, written by [`TranscriptCheckpoints::save`] (`None`: remove).
    new_states: BTreeMap<String, Option<serde_json::Value>>,
    /// Set when the stored file was unreadable and was ignored.
    pub warning: Option<String>,
    _lock: FileLock,
}

impl TranscriptCheckpoints {
    /// Locks and loads the checkpoints of `transcript` under `state_root/checkpoints`.
    /// A corrupt checkpoint file is ignored (every pass starts over) and reported in `warning`.
    pub fn open(
        state_root: &Path,
        transcript: &Path,
        timeout: Duration,
    ) -> Result<Self, StateError> {
        let dir = state_root.join("checkpoints");
        crate::state::create_dir_all(&dir)?;
        let key = format!("{:016x}", fnv1a(transcript.as_os_str().as_encoded_bytes()));
        let lock = FileLock::acquire(dir.join(format!("{key}.lock")), timeout)?;
        let file = dir.join(format!("{key}.json"));
        let (data, warning) = match read_json::<CheckpointFile>(&file) {
            Ok(d) => (d.unwrap_or_default(), None),
            Err(e) => (CheckpointFile::default(), Some(e.to_string())),
        };
        Ok(Self {
            file,
            data,
            dirty: false,
            new_states: BTreeMap::new(),
            warning,
            _lock: lock,
        })
    }

    pub fn get(&self, pass: &str) -> Option<&Checkpoint> {
        self.data.passes.get(pass)
    }

    pub fn set(&mut self, pass: &str, transcript: &Path, cp: Checkpoint) {
        if self.data.passes.get(pass) != Some(&cp) {
            self.data.path = transcript.to_string_lossy().into_owned();
            self.data.passes.insert(pass.to_owned(), cp);
            self.dirty = true;
        }
    }

    fn state_path(&self, pass: &str) -> PathBuf {
        let stem = self.file.with_extension("");
        let name = stem.file_name().map(|n| n.to_string_lossy().into_owned());
        stem.with_file_name(format!(
            "{}.{:016x}.state.json",
            name.unwrap_or_default(),
            fnv1a(pass.as_bytes())
        ))
    }

    /// The state `pass` stored with its current checkpoint (read from its file; `None` when
    /// absent, unreadable, or describing another checkpoint).
    pub fn state(&self, pass: &str) -> Option<serde_json::Value> {
        let cp = self.data.passes.get(pass)?;
        let f: StateFile = read_json(&self.state_path(pass)).ok().flatten()?;
        (f.checkpoint == *cp).then_some(f.state)
    }

    /// Replaces (or with `None` removes) the state of `pass`; call it after the [`set`] of the
    /// checkpoint it belongs to.
    ///
    /// [`set`]: TranscriptCheckpoints::set
    pub fn set_state(&mut self, pass: &str, state: Option<serde_json::Value>) {
        self.new_states.insert(pass.to_owned(), state);
    }

    /// Writes the checkpoints back if any changed: atomically but without fsync
    /// ([`Durability::RenameOnly`]), because Stop runs after every turn. After a crash a
    /// checkpoint can only be stale or unreadable, which makes the passes redo work, never
    /// skip it.
    pub fn save(&mut self) -> Result<(), StateError> {
        // States first: a state whose checkpoint is not saved yet is ignored on reading.
        for (pass, state) in std::mem::take(&mut self.new_states) {
            let path = self.state_path(&pass);
            match (state, self.data.passes.get(&pass)) {
                (Some(state), Some(cp)) => {
                    let f = StateFile {
                        checkpoint: *cp,
                        state,
                    };
                    let bytes = serde_json::to_vec(&f).map_err(|source| StateError::Corrupt {
                        path: path.clone(),
                        source,
                    })?;
                    write_atomic_with(&path, &bytes, Durability::RenameOnly)
                        .map_err(io_at(&path))?;
                }
                _ => match std::fs::remove_file(&path) {
                    Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(io_at(&path)(e)),
                    _ => {}
                },
            }
        }
        if !self.dirty {
            return Ok(());
        }
        let bytes = serde_json::to_vec(&self.data).map_err(|source| StateError::Corrupt {
            path: self.file.clone(),
            source,
        })?;
        write_atomic_with(&self.file, &bytes, Durability::RenameOnly).map_err(io_at(&self.file))?;
        self.dirty = false;
        Ok(())
    }
}
