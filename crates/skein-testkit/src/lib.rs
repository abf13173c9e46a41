//! Dev-only helpers shared by the tests and benches (a dev-dependency, never a dependency):
//! where the shared corpus of real transcripts is, and its `*.jsonl` files in a fixed order;
//! a small deterministic generator for test data ([`Xorshift`]).
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "test helpers read the shared corpus"
)]

use std::path::{Path, PathBuf};

/// The workspace root (the directory holding the workspace `Cargo.toml`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The shared corpus directory: `SKEIN_CORPUS`, else `shared/corpus` beside the checkout.
///
/// `None` (with a note on stderr) when the default directory is absent, so corpus tests and
/// benches skip. A `SKEIN_CORPUS` that names no directory panics: asking for a corpus that
/// is not there is a mistake, not a reason to skip silently.
#[allow(clippy::print_stderr, reason = "a skipped corpus check is reported")]
pub fn corpus_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("SKEIN_CORPUS") {
        let dir = PathBuf::from(dir);
        assert!(
            dir.is_dir(),
            "SKEIN_CORPUS={} is not a directory",
            dir.display()
        );
        return Some(dir);
    }
    let dir = workspace_root().join("../shared/corpus");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "note: corpus not found at {} (set SKEIN_CORPUS); corpus check skipped",
            dir.display()
        );
        None
    }
}

/// Every `*.jsonl` file below `dir`, sorted by path.
///
/// Panics when `dir` cannot be read or holds no `*.jsonl` file, so a check over the files
/// cannot pass by checking nothing.
pub fn jsonl_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    walk(dir, &mut out, &|p| {
        p.extension().is_some_and(|x| x == "jsonl")
    });
    assert!(!out.is_empty(), "no *.jsonl file under {}", dir.display());
    out.sort();
    out
}

/// Every file below `dir` (directories are descended, not listed), sorted by path; none when
/// `dir` does not exist.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if dir.exists() {
        walk(dir, &mut out, &|_| true);
    }
    out.sort();
    out
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>, keep: &dyn Fn(&Path) -> bool) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let p = entry
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .path();
        if p.is_dir() {
            walk(&p, out, keep);
        } else if keep(&p) {
            out.push(p);
        }
    }
}

/// The corpus and its files, or `None` (with a note) when the corpus is absent.
pub fn corpus_files() -> Option<(PathBuf, Vec<PathBuf>)> {
    let dir = corpus_dir()?;
    let files = jsonl_files(&dir);
    Some((dir, files))
}

/// Copies the directory `from` into `to`, recursively (a fixture tree into a temp dir).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create the copy's directory");
    for e in std::fs::read_dir(from).expect("read the fixture directory") {
        let e = e.expect("directory entry");
        let dst = to.join(e.file_name());
        if e.file_type().expect("file type").is_dir() {
            copy_dir(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), &dst).expect("copy a fixture file");
        }
    }
}

/// Marsaglia's xorshift64 (shifts 13, 7, 17): deterministic pseudo-random test data, the same
/// sequence on every machine. Not for anything that needs good randomness.
#[derive(Debug, Clone)]
pub struct Xorshift(u64);

impl Xorshift {
    /// A generator starting from `seed` (which must not be zero: zero stays zero).
    pub fn new(seed: u64) -> Self {
        assert_ne!(seed, 0, "xorshift from zero yields only zeros");
        Self(seed)
    }

    /// The next number.
    #[allow(
        clippy::should_implement_trait,
        reason = "an endless generator, not an iterator"
    )]
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}
