//! `archive-index.json`: one entry per archive file, keyed by its relative path (a `BTreeMap`,
//! so the file is deterministic). Entries hold only facts fixed when the file was created (plus
//! `superseded_by`), so the per-turn append never has to rewrite the index; the growing
//! numbers live in each file's `.meta.json`. Updated under `locks/index.lock` with an atomic
//! replace; it can always be rebuilt from the checkpoints ([`crate::Archive::rebuild_index`]).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::checkpoint::{DictRef, FORMAT, FileState, to_json};
use crate::error::{ArchiveError, Result};
use crate::layout::{
    CHECKPOINT_DIR, INDEX_FILE, Kind, LOCK_DIR, meta_rel_path, read_optional, to_rel,
    write_file_atomic,
};

/// The whole-archive index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Index {
    pub format: u32,
    /// Archive file (relative path) → entry.
    pub entries: BTreeMap<String, IndexEntry>,
}

impl Default for Index {
    fn default() -> Self {
        Self {
            format: FORMAT,
            entries: BTreeMap::new(),
        }
    }
}

/// One archive file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexEntry {
    #[serde(flatten)]
    pub kind: Kind,
    pub version: u32,
    pub project: Option<String>,
    pub first_timestamp: Option<String>,
    pub created_unix: i64,
    pub dict: Option<DictRef>,
    pub superseded_by: Option<String>,
    /// The checkpoint that owns the file (relative path).
    pub checkpoint: String,
    /// The file's `.meta.json` (relative path).
    pub meta: String,
}

impl IndexEntry {
    /// The entry a committed file state should have.
    pub fn of(state: &FileState) -> Self {
        Self {
            kind: state.kind.clone(),
            version: state.version,
            project: state.project.clone(),
            first_timestamp: state.first_timestamp.clone(),
            created_unix: state.created_unix,
            dict: state.dict,
            superseded_by: state.superseded_by.clone(),
            checkpoint: to_rel(&state.kind.key_path(CHECKPOINT_DIR, "json")),
            meta: meta_rel_path(&state.file),
        }
    }
}

/// Reads the index (empty if it does not exist yet).
pub(crate) fn load(root: &Path) -> Result<Index> {
    let path = root.join(INDEX_FILE);
    parse(&path, read_optional(&path)?.as_deref())
}

/// Parses the bytes of the index file `path` (`None`: it does not exist, an empty index).
pub(crate) fn parse(path: &Path, bytes: Option<&[u8]>) -> Result<Index> {
    let Some(bytes) = bytes else {
        return Ok(Index::default());
    };
    let idx: Index = serde_json::from_slice(bytes).map_err(|source| ArchiveError::Json {
        path: path.to_path_buf(),
        source,
    })?;
    if idx.format != FORMAT {
        return Err(ArchiveError::Format {
            path: path.to_path_buf(),
            found: idx.format,
            supported: FORMAT,
        });
    }
    Ok(idx)
}

/// Applies `f` to the index under the index lock and replaces the file atomically if it changed.
pub(crate) fn modify(root: &Path, timeout: Duration, f: impl FnOnce(&mut Index)) -> Result<()> {
    let _lock = crate::layout::lock(&root.join(LOCK_DIR).join("index.lock"), timeout)?;
    let mut idx = load(root)?;
    let before = idx.clone();
    f(&mut idx);
    if idx != before {
        write_file_atomic(&root.join(INDEX_FILE), &to_json(&idx))?;
    }
    Ok(())
}

/// Makes the index list exactly `files` for the checkpoint `checkpoint_rel`.
pub(crate) fn sync_key(idx: &mut Index, checkpoint_rel: &str, files: &[&FileState]) {
    idx.entries
        .retain(|path, e| e.checkpoint != checkpoint_rel || files.iter().any(|f| &f.file == path));
    for f in files {
        idx.entries.insert(f.file.clone(), IndexEntry::of(f));
    }
}
