//! Reading archive files back: only the committed frames (a torn frame left by a crash is never
//! returned), with the trained dictionary the frames name.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::checkpoint::{Checkpoint, FileState};
use crate::codec::decoder;
use crate::error::{ArchiveError, IoContext, Result};
use crate::layout::{ARCHIVE_SUFFIX, CHECKPOINT_DIR, INDEX_FILE, META_SUFFIX, read_optional};

/// An archive file with what its archive records about it.
#[derive(Debug, Clone, PartialEq)]
pub struct ArchivedFile {
    /// The archive directory.
    pub root: PathBuf,
    /// The committed state of the file (from its checkpoint when readable, else its
    /// `.meta.json`): the archive key, project, metadata, committed length, versions.
    pub state: FileState,
}

impl ArchivedFile {
    /// The archive file's path.
    pub fn path(&self) -> PathBuf {
        self.root.join(&self.state.file)
    }
}

/// What the archive holding `path` records about it: its `.meta.json`, overridden by its
/// checkpoint (the meta file may lag after a crash). `None` for a file that is not part of a
/// skein archive, or whose archive no longer describes it.
pub fn describe(path: &Path) -> Option<ArchivedFile> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let stem = name
        .as_deref()
        .and_then(|n| n.strip_suffix(ARCHIVE_SUFFIX))?;
    let meta_path = path.with_file_name(format!("{stem}{META_SUFFIX}"));
    let bytes = read_optional(&meta_path).ok()??;
    let state = serde_json::from_slice::<FileState>(&bytes).ok()?;
    let depth = state.file.split('/').count();
    let root = path.ancestors().nth(depth)?;
    if root.join(&state.file) != path {
        return None;
    }
    let ck_path = root.join(state.kind.key_path(CHECKPOINT_DIR, "json"));
    let state = match Checkpoint::load(&ck_path) {
        Ok(Some(ck)) => ck
            .files()
            .find(|f| f.file == state.file)
            .cloned()
            .unwrap_or(state),
        _ => state,
    };
    Some(ArchivedFile {
        root: root.to_path_buf(),
        state,
    })
}

/// Whether `dir` is the root of a skein archive (it has a checkpoint directory or an index).
pub fn is_archive_root(dir: &Path) -> bool {
    dir.join(CHECKPOINT_DIR).is_dir() || dir.join(INDEX_FILE).is_file()
}

/// The current file of every source in the archive at `root`, read from the checkpoints (the
/// archive's commit points), in checkpoint order (main sessions by id, then subagents by
/// parent session and id). Superseded versions are history and not listed. A checkpoint that
/// cannot be read is an error: a listing that silently missed a source would lose it.
pub fn current_files(root: &Path) -> Result<Vec<ArchivedFile>> {
    let mut out = Vec::new();
    for (_, ck) in crate::verify::load_all_checkpoints(root)? {
        if let Some(state) = ck?.current {
            state.kind.validate()?;
            out.push(ArchivedFile {
                root: root.to_path_buf(),
                state,
            });
        }
    }
    Ok(out)
}

/// The dictionary id named by the first frame of `file`, if any.
pub(crate) fn frame_dict_id(file: &File, path: &Path) -> Result<Option<u32>> {
    let mut head = [0u8; 18];
    let mut n = 0;
    let mut f = file;
    while n < head.len() {
        match f.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e).ctx(path),
        }
    }
    Ok(zstd::zstd_safe::get_dict_id_from_frame(&head[..n]).map(std::num::NonZeroU32::get))
}

/// Opens an archive file (or any `.zst` file) for reading its decompressed lines.
///
/// For a file inside a skein archive only the committed length is read, so a torn frame left
/// by a crash is never seen; frames compressed with a trained dictionary are decoded with the
/// dictionary of that id from the archive's `dict/` directory (searched upwards from the file
/// when there is no meta file).
pub fn open_archived(path: &Path) -> Result<Box<dyn Read + Send>> {
    let located = describe(path);
    let mut file = File::open(path).ctx(path)?;
    let dict = match frame_dict_id(&file, path)? {
        None => None,
        Some(id) => Some(find_dictionary(
            path,
            located.as_ref().map(|l| l.root.as_path()),
            id,
        )?),
    };
    io::Seek::seek(&mut file, io::SeekFrom::Start(0)).ctx(path)?;
    let limit = located.map_or(u64::MAX, |l| l.state.committed_len);
    let dec = decoder(file.take(limit), dict.as_deref()).ctx(path)?;
    Ok(Box::new(dec))
}

/// Opens the frames of an archive file from byte `start` (a frame boundary: 0 or a committed
/// length noted earlier) up to byte `end` (the committed length), for readers that index an
/// archive file incrementally: only the frames appended since `start` are decoded. The
/// dictionary is the one the frame at `start` names (every frame of a file uses the same).
pub fn open_archived_range(path: &Path, start: u64, end: u64) -> Result<Box<dyn Read + Send>> {
    let mut file = File::open(path).ctx(path)?;
    io::Seek::seek(&mut file, io::SeekFrom::Start(start)).ctx(path)?;
    let dict = match frame_dict_id(&file, path)? {
        None => None,
        Some(id) => {
            let root = describe(path).map(|l| l.root);
            Some(find_dictionary(path, root.as_deref(), id)?)
        }
    };
    io::Seek::seek(&mut file, io::SeekFrom::Start(start)).ctx(path)?;
    let dec = decoder(file.take(end.saturating_sub(start)), dict.as_deref()).ctx(path)?;
    Ok(Box::new(dec))
}

/// Reads a whole archive file into memory (see [`open_archived`]).
pub fn read_archived(path: &Path) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    open_archived(path)?.read_to_end(&mut out).ctx(path)?;
    Ok(out)
}

fn find_dictionary(path: &Path, root: Option<&Path>, id: u32) -> Result<Vec<u8>> {
    let candidates: Vec<&Path> = match root {
        Some(r) => vec![r],
        None => path.ancestors().skip(1).take(5).collect(),
    };
    for dir in candidates {
        if let Some(d) = crate::dict::find_by_id(dir, id)? {
            return Ok(d);
        }
    }
    Err(ArchiveError::Dict(format!(
        "{}: frames need dictionary id {id}, not found in the archive's dict/ directory",
        path.display()
    )))
}

/// Decodes `limit` bytes of `path` with `dict`, counting lines and bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct DecodeStats {
    pub(crate) lines: u64,
    pub(crate) raw_bytes: u64,
    /// The content is empty or ends with `\n`.
    pub(crate) ends_with_newline: bool,
}

pub(crate) fn decode_stats(
    path: &Path,
    limit: u64,
    dict: Option<&[u8]>,
    mut each: impl FnMut(&[u8]),
) -> std::result::Result<DecodeStats, String> {
    let file = File::open(path).map_err(|e| e.to_string())?;
    let mut dec = decoder(file.take(limit), dict).map_err(|e| e.to_string())?;
    let mut buf = vec![0u8; 1 << 20];
    let mut st = DecodeStats {
        ends_with_newline: true,
        ..DecodeStats::default()
    };
    loop {
        let n = match dec.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("decode error after {} bytes: {e}", st.raw_bytes)),
        };
        let chunk = &buf[..n];
        st.lines += memchr::memchr_iter(b'\n', chunk).count() as u64;
        st.raw_bytes += n as u64;
        st.ends_with_newline = chunk.last() == Some(&b'\n');
        each(chunk);
    }
    Ok(st)
}
