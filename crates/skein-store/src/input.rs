//! Opening transcripts: a plain file (buffered reads, or a memory map for archived immutable
//! files), standard input (`-`), or a `.zst` file decompressed on the fly. Directories expand
//! to the transcript files below them.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// How a plain file is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InputMode {
    /// Buffered `read()` calls: safe for live files that grow or are truncated while read.
    #[default]
    Read,
    /// A memory map: only for archived files nobody writes to any more.
    Mmap,
}

/// An opened transcript.
pub enum Input {
    /// The whole file, memory-mapped.
    Mapped(memmap2::Mmap),
    /// A byte stream (file, stdin or zstd decoder).
    Stream(Box<dyn Read + Send>),
}

impl std::fmt::Debug for Input {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Mapped(m) => write!(f, "Input::Mapped({} bytes)", m.len()),
            Self::Stream(_) => f.write_str("Input::Stream"),
        }
    }
}

/// A path that could not be opened or listed.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {source}")]
pub struct InputError {
    pub path: PathBuf,
    #[source]
    pub source: io::Error,
}

/// Opens a `.zst` file as its decoded bytes.
pub type ZstdOpener = fn(&Path) -> io::Result<Box<dyn Read + Send>>;

/// True for names skein reads as zstd-compressed transcripts.
pub fn is_zstd(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "zst")
}

/// True for names that hold a transcript: `*.jsonl` or `*.jsonl.zst`.
pub fn is_transcript_name(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    name.ends_with(".jsonl") || name.ends_with(".jsonl.zst")
}

/// A plain zstd stream decoder, as a [`ZstdOpener`].
pub fn zstd_stream(path: &Path) -> io::Result<Box<dyn Read + Send>> {
    Ok(Box::new(zstd::stream::read::Decoder::new(File::open(
        path,
    )?)?))
}

/// Opens `path` (`-` is standard input); `mode` picks between buffered reads and a memory map
/// for plain files. `.zst` files are always streamed, through `open_zstd`: the caller says how
/// they decode ([`zstd_stream`], or the archive's reader that `skein_layout::open` passes, which
/// also knows trained dictionaries and committed lengths; this crate cannot depend on the
/// archive, which sits above it).
pub fn open_input(
    path: &Path,
    mode: InputMode,
    open_zstd: ZstdOpener,
) -> Result<Input, InputError> {
    let err = |source| InputError {
        path: path.to_path_buf(),
        source,
    };
    if path.as_os_str() == "-" {
        return Ok(Input::Stream(Box::new(io::stdin())));
    }
    let file = File::open(path).map_err(err)?;
    // A directory opens as a file does here; its first read fails (`EISDIR`, "Is a
    // directory"), and the caller names the path with that error. Only a map checks first:
    // a `statx` per file was 1 % of the CPU of `usage` over the bench tree's 4,300 files.
    if is_zstd(path) {
        drop(file);
        return open_zstd(path).map(Input::Stream).map_err(err);
    }
    match mode {
        InputMode::Read => Ok(Input::Stream(Box::new(file))),
        InputMode::Mmap => {
            if file.metadata().map_err(err)?.is_dir() {
                return Err(err(io::Error::new(
                    io::ErrorKind::IsADirectory,
                    "is a directory",
                )));
            }
            // SAFETY-free: memmap2's map is `unsafe` because another process may change the
            // file; InputMode::Mmap is documented as only for immutable archived files.
            #[allow(unsafe_code)]
            let map = unsafe { memmap2::MmapOptions::new().populate().map(&file) }.map_err(err)?;
            Ok(Input::Mapped(map))
        }
    }
}

/// Expands the given paths in order: a directory becomes every `*.jsonl` / `*.jsonl.zst` file
/// below it (recursively, sorted by path); anything else is kept as given (`-` included), so an
/// unreadable path is reported in its place. Unreadable directories come back as errors.
pub fn expand_paths(paths: &[PathBuf]) -> Vec<Result<PathBuf, InputError>> {
    let mut out = Vec::new();
    expand_paths_with(paths, |entry| out.push(entry));
    out
}

/// Like [`expand_paths`], handing each entry to `found` as soon as the walk reaches it, in the
/// same order: a caller can start on the first files while the walk goes on (listing a tree of
/// 3,300 directories costs ~40 ms). Each directory's errors come after its files.
pub fn expand_paths_with(paths: &[PathBuf], mut found: impl FnMut(Result<PathBuf, InputError>)) {
    for path in paths {
        if path.is_dir() {
            // What cannot be read is reported and skipped; the walk goes on with the rest.
            let mut errors = Vec::new();
            walk(path, &mut found, &mut errors);
            errors.into_iter().map(Err).for_each(&mut found);
        } else {
            found(Ok(path.clone()));
        }
    }
}

/// Walks `dir` depth first. Entries are visited sorted by name, with `/` appended to directory
/// names: that order is exactly the byte order of the full paths (`s.jsonl` before `s/...`,
/// since `.` sorts before `/`), so no sort of the whole list is needed.
fn walk(
    dir: &Path,
    found: &mut impl FnMut(Result<PathBuf, InputError>),
    errors: &mut Vec<InputError>,
) {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(source) => {
            errors.push(InputError {
                path: dir.to_path_buf(),
                source,
            });
            return;
        }
    };
    let mut here: Vec<(std::ffi::OsString, PathBuf, bool)> = Vec::new();
    for entry in entries {
        let entry = match entry {
            Ok(e) => e,
            Err(source) => {
                errors.push(InputError {
                    path: dir.to_path_buf(),
                    source,
                });
                continue;
            }
        };
        let path = entry.path();
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => {
                let mut key = entry.file_name();
                key.push("/");
                here.push((key, path, true));
            }
            Ok(_) if is_transcript_name(&path) => here.push((entry.file_name(), path, false)),
            Ok(_) => {}
            Err(source) => errors.push(InputError { path, source }),
        }
    }
    here.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    for (_, path, is_dir) in here {
        if is_dir {
            walk(&path, found, errors);
        } else {
            found(Ok(path));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn expands_directories_sorted_and_recursively() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::create_dir_all(root.join("s/subagents")).expect("mkdir");
        for name in [
            "b.jsonl",
            "a.jsonl.zst",
            "notes.txt",
            "s/subagents/agent-x.jsonl",
        ] {
            std::fs::write(root.join(name), b"{}\n").expect("write");
        }
        let got: Vec<PathBuf> = expand_paths(&[root.to_path_buf()])
            .into_iter()
            .map(|r| r.expect("ok"))
            .collect();
        assert_eq!(
            got,
            vec![
                root.join("a.jsonl.zst"),
                root.join("b.jsonl"),
                root.join("s/subagents/agent-x.jsonl")
            ]
        );
    }

    #[test]
    fn the_walk_order_is_the_byte_order_of_full_paths() {
        // A session file beside its directory, names that are prefixes of others, and bytes
        // sorting around `.` and `/`.
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        let names = [
            "s.jsonl",
            "s/subagents/agent-a.jsonl",
            "s-x.jsonl",
            "s-x/subagents/agent-b.jsonl",
            "s0.jsonl",
            "s/a.jsonl",
            "s.jsonl.zst",
            "t/u/v.jsonl",
            "t.jsonl",
            "t-/w.jsonl",
            "t0/x.jsonl",
            "a b.jsonl",
            "Z.jsonl",
        ];
        for name in names {
            let p = root.join(name);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(&p, b"{}\n").expect("write");
        }
        let got: Vec<PathBuf> = expand_paths(&[root.to_path_buf()])
            .into_iter()
            .map(|r| r.expect("ok"))
            .collect();
        let mut want: Vec<PathBuf> = names.iter().map(|n| root.join(n)).collect();
        want.sort_by(|a, b| a.as_os_str().cmp(b.as_os_str()));
        assert_eq!(got, want);
    }

    #[test]
    fn zstd_files_decode_transparently() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("x.jsonl.zst");
        let mut enc = zstd::stream::write::Encoder::new(File::create(&p).expect("create"), 3)
            .expect("encoder");
        enc.write_all(b"{\"type\":\"user\"}\n").expect("write");
        enc.finish().expect("finish");
        let Input::Stream(mut r) = open_input(&p, InputMode::Mmap, zstd_stream).expect("open")
        else {
            panic!("zst must stream")
        };
        let mut s = String::new();
        r.read_to_string(&mut s).expect("read");
        assert_eq!(s, "{\"type\":\"user\"}\n");
    }

    #[test]
    fn missing_file_error_names_path() {
        let err = open_input(
            Path::new("/nonexistent/x.jsonl"),
            InputMode::Read,
            zstd_stream,
        )
        .expect_err("err");
        assert!(err.to_string().contains("/nonexistent/x.jsonl"));
    }

    /// A directory given as a transcript is refused: at once for a map, at its first read
    /// for a stream (no `statx` per file for the check), with the kind that says why.
    #[test]
    fn a_directory_is_refused_when_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("d.jsonl");
        std::fs::create_dir(&p).expect("mkdir");
        let err = open_input(&p, InputMode::Mmap, zstd_stream).expect_err("a map of a dir");
        assert_eq!(err.source.kind(), io::ErrorKind::IsADirectory);
        assert!(err.to_string().contains("d.jsonl"), "{err}");
        match open_input(&p, InputMode::Read, zstd_stream) {
            Err(e) => assert_eq!(e.source.kind(), io::ErrorKind::IsADirectory),
            Ok(Input::Stream(mut r)) => {
                let e = r.read(&mut [0; 16]).expect_err("a read of a dir");
                assert_eq!(e.kind(), io::ErrorKind::IsADirectory);
            }
            Ok(Input::Mapped(_)) => panic!("a stream was asked for"),
        }
    }
}
