//! The replace-file policy of every command that writes a file a transcript may be: where an
//! output path really goes ([`OutputTarget`]), refusing an output that is one of the command's
//! inputs ([`ensure_not_input`]), and rewriting a file that another process may be appending to
//! without losing an appended line ([`rewrite_in_place`]).
//!
//! Claude Code appends to a live transcript (opening it by path, one write per batch of lines)
//! while skein may be rewriting it. [`rewrite_in_place`] reads the file through one open
//! descriptor, lets the caller compute the new content, writes it to a temp file beside the
//! target and then, right before the rename and again right after it, compares the old file
//! with what was read: bytes appended in the meantime are carried over verbatim into the new
//! file; a file that was truncated, replaced or changed inside what was read, or that grew
//! while its last line was incomplete, is processed again from the start (a few tries, then a
//! clear error). See `docs/passes.md` ("Rewriting a live file").

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::append::read_exact_at;
use crate::atomic::{AtomicFile, Durability, sync_dir};
use crate::identity::{key, key_of, same_file};

/// How many times [`rewrite_in_place`] processes a file that keeps changing before it gives up.
pub const DEFAULT_TRIES: u32 = 5;

/// How many times appended bytes are carried over before the file is processed again.
const MAX_CARRY_ROUNDS: u32 = 100;

/// After the rename, how long to wait for writers that still hold the old file open, how often
/// to look, and the grace period where open writers cannot be seen.
const LATE_WRITER_WAIT: std::time::Duration = std::time::Duration::from_secs(2);
const LATE_POLL: std::time::Duration = std::time::Duration::from_millis(1);
const LATE_GRACE: std::time::Duration = std::time::Duration::from_millis(50);

/// Bytes compared at the start of the file and just before the processed length to notice a
/// rewrite that kept the inode and did not shrink the file.
const WINDOW: usize = 4096;

/// Why an output could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ReplaceError {
    #[error("{output} is the input {input}: refusing to write over it")]
    OutputIsInput { output: PathBuf, input: PathBuf },
    #[error(
        "{path} kept changing while it was rewritten ({tries} tries: truncated, replaced or edited by another program); not replaced"
    )]
    Unstable { path: PathBuf, tries: u32 },
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> ReplaceError + '_ {
    move |source| ReplaceError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Refuses `output` when it names the same file as one of `inputs` (by identity: symlinks,
/// hard links and other spellings included). `-` (standard input or output) is never a file.
pub fn ensure_not_input<P: AsRef<Path>>(output: &Path, inputs: &[P]) -> Result<(), ReplaceError> {
    if output.as_os_str() == "-" {
        return Ok(());
    }
    for input in inputs {
        let input = input.as_ref();
        if input.as_os_str() == "-" {
            continue;
        }
        if same_file(output, input).map_err(io_err(output))? {
            return Err(ReplaceError::OutputIsInput {
                output: output.to_path_buf(),
                input: input.to_path_buf(),
            });
        }
    }
    Ok(())
}

/// Where writing to a path really goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputTarget {
    /// `-`, `/dev/stdout`, `/dev/fd/1`, `/proc/self/fd/1`: the process's own standard output
    /// (written through its descriptor, so whatever it points to is neither truncated nor
    /// written over from offset 0).
    Stdout,
    /// `/dev/stderr`, `/dev/fd/2`, `/proc/self/fd/2`.
    Stderr,
    /// Something that is not a regular file (a device, a FIFO) or another process-relative
    /// descriptor path: opened and written as it is, never truncated or replaced.
    Direct(PathBuf),
    /// A regular file (the target of a symlink) or a new one: replaced atomically, keeping the
    /// existing file's permission bits (new files get 0600: transcripts are private).
    Replace { path: PathBuf, mode: Option<u32> },
}

impl OutputTarget {
    /// Classifies `path`.
    pub fn of(path: &Path) -> Result<Self, ReplaceError> {
        let text = path.as_os_str();
        if text == "-" || text == "/dev/stdout" || text == "/dev/fd/1" || text == "/proc/self/fd/1"
        {
            return Ok(Self::Stdout);
        }
        if text == "/dev/stderr" || text == "/dev/fd/2" || text == "/proc/self/fd/2" {
            return Ok(Self::Stderr);
        }
        if path.starts_with("/dev/fd") || path.starts_with("/proc") {
            return Ok(Self::Direct(path.to_path_buf()));
        }
        match fs::metadata(path) {
            Ok(m) if !m.is_file() => Ok(Self::Direct(path.to_path_buf())),
            Ok(m) => Ok(Self::Replace {
                path: fs::canonicalize(path).map_err(io_err(path))?,
                mode: mode_of(&m),
            }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Self::Replace {
                path: path.to_path_buf(),
                mode: None,
            }),
            Err(e) => Err(io_err(path)(e)),
        }
    }
}

/// Writes `bytes` to a [`OutputTarget::Direct`] or [`OutputTarget::Replace`] target (the
/// caller writes the standard streams itself, through its own handles).
pub fn write_target(target: &OutputTarget, bytes: &[u8]) -> Result<(), ReplaceError> {
    let mut w = TargetWriter::open(target)?;
    w.write_all(bytes).map_err(io_err(&w.path))?;
    w.commit()
}

/// A [`OutputTarget::Direct`] or [`OutputTarget::Replace`] target written in pieces (through a
/// buffer): a replaced file changes only at [`TargetWriter::commit`]; dropped without it, the
/// temp file goes away and the target is untouched.
#[derive(Debug)]
pub struct TargetWriter {
    path: PathBuf,
    out: io::BufWriter<File>,
    atomic: Option<AtomicFile>,
}

impl TargetWriter {
    /// Opens `target` (not a standard stream).
    pub fn open(target: &OutputTarget) -> Result<Self, ReplaceError> {
        match target {
            OutputTarget::Stdout | OutputTarget::Stderr => {
                unreachable!("the caller writes the standard streams itself")
            }
            OutputTarget::Direct(path) => {
                let f = OpenOptions::new()
                    .append(true)
                    .open(path)
                    .map_err(io_err(path))?;
                Ok(Self {
                    path: path.clone(),
                    out: io::BufWriter::with_capacity(256 << 10, f),
                    atomic: None,
                })
            }
            OutputTarget::Replace { path, mode } => {
                let mut atomic = AtomicFile::create(path).map_err(io_err(path))?;
                atomic
                    .set_mode(mode.unwrap_or(0o600))
                    .map_err(io_err(path))?;
                let f = atomic.file().try_clone().map_err(io_err(path))?;
                Ok(Self {
                    path: path.clone(),
                    out: io::BufWriter::with_capacity(256 << 10, f),
                    atomic: Some(atomic),
                })
            }
        }
    }

    /// Flushes and, for a replaced file, renames it over the target (with the fsyncs of
    /// [`AtomicFile::commit`]).
    pub fn commit(mut self) -> Result<(), ReplaceError> {
        self.out.flush().map_err(io_err(&self.path))?;
        if let Some(atomic) = self.atomic {
            atomic.commit().map_err(io_err(&self.path))?;
        }
        Ok(())
    }
}

impl Write for TargetWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.out.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// Options of [`rewrite_in_place`].
#[derive(Debug, Clone, Default)]
pub struct InPlaceOptions {
    /// Keep the original file under this name (replaced atomically if it exists).
    pub backup: Option<PathBuf>,
    /// How many times to process a file that keeps changing (0: [`DEFAULT_TRIES`]).
    pub tries: u32,
}

/// What [`rewrite_in_place`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InPlaceReport {
    /// The file was replaced (false when the new content equalled the old).
    pub replaced: bool,
    /// Times the content was processed (more than 1 when the file changed under us).
    pub attempts: u32,
    /// Bytes appended by another process while the file was processed, copied verbatim to the
    /// end of the new file before the rename.
    pub carried_bytes: u64,
    /// Bytes appended to the old file in the instant between the last check and the rename,
    /// appended to the new file right after it.
    pub late_bytes: u64,
}

/// Why [`rewrite_in_place`] failed: the caller's processing, or the replacement.
#[derive(Debug)]
pub enum InPlaceError<E> {
    Process(E),
    Replace(ReplaceError),
}

impl<E> From<ReplaceError> for InPlaceError<E> {
    fn from(e: ReplaceError) -> Self {
        Self::Replace(e)
    }
}

/// Rewrites `path` (the file a symlink points to) with `process(old content)`, atomically and
/// without losing bytes another process appends meanwhile (module docs). `process` returns
/// `None` when the content would not change: nothing is written then. It may be called more
/// than once when the file changes under us; only the last call's output is written.
///
/// The old content is held in memory; [`rewrite_in_place_streaming`] reads it from the file
/// instead.
pub fn rewrite_in_place<E>(
    path: &Path,
    options: &InPlaceOptions,
    mut process: impl FnMut(&[u8]) -> Result<Option<Vec<u8>>, E>,
) -> Result<InPlaceReport, InPlaceError<E>> {
    let mut failed = None;
    let result = rewrite_in_place_streaming(path, options, |file, len, out| {
        let input = match crate::append::read_at(file, 0, len) {
            Ok(bytes) => bytes,
            Err(e) => {
                failed = Some(e);
                return Ok(false);
            }
        };
        match process(&input)? {
            None => Ok(false),
            Some(output) => {
                if let Err(e) = out.write_all(&output) {
                    failed = Some(e);
                    return Ok(false);
                }
                Ok(true)
            }
        }
    });
    match failed {
        Some(e) => Err(io_err(path)(e).into()),
        None => result,
    }
}

/// Like [`rewrite_in_place`], without holding the content in memory: `process(file, len,
/// out)` reads the old content as bytes `0..len` of `file` (with positional reads, e.g.
/// [`crate::FileRange`], as many times as it needs), writes the new content to `out` (a temp
/// file beside the target, buffered) and returns whether it differs from the old: when it
/// does not, nothing is replaced.
pub fn rewrite_in_place_streaming<E>(
    path: &Path,
    options: &InPlaceOptions,
    mut process: impl FnMut(&File, u64, &mut dyn Write) -> Result<bool, E>,
) -> Result<InPlaceReport, InPlaceError<E>> {
    let target = fs::canonicalize(path).map_err(io_err(path))?;
    let tries = if options.tries == 0 {
        DEFAULT_TRIES
    } else {
        options.tries
    };
    for attempt in 1..=tries {
        let file = File::open(&target).map_err(io_err(&target))?;
        let meta = file.metadata().map_err(io_err(&target))?;
        if !meta.is_file() {
            return Err(io_err(&target)(io::Error::other("not a regular file")).into());
        }
        let id = key(&meta);
        let len = meta.len();
        let old = OldFile::new(&file, &target, id, len)?;
        let mut temp = AtomicFile::create(&target).map_err(io_err(&target))?;
        temp.set_mode(mode_of(&meta).unwrap_or(0o600))
            .map_err(io_err(&target))?;
        let changed = {
            let mut out = io::BufWriter::with_capacity(256 << 10, temp.file());
            let changed = process(&file, len, &mut out).map_err(InPlaceError::Process)?;
            out.flush().map_err(io_err(&target))?;
            changed
        };
        if !changed {
            return Ok(InPlaceReport {
                attempts: attempt,
                ..InPlaceReport::default()
            });
        }
        if let Some(bak) = &options.backup
            && !old.backup(bak)?
        {
            continue;
        }
        // Carry over what was appended and fsync, then look again until a check finds nothing
        // new: the rename follows that check immediately.
        temp.file().sync_all().map_err(io_err(&target))?;
        let mut have = len;
        let mut rounds = 0;
        let stable = loop {
            match old.settle(have, &mut temp)? {
                None => break false,
                Some(now) if now == have => break true,
                // A writer that never pauses: process again from the start (bounded by tries).
                Some(_) if rounds == MAX_CARRY_ROUNDS => break false,
                Some(now) => {
                    have = now;
                    rounds += 1;
                    temp.file().sync_all().map_err(io_err(&target))?;
                }
            }
        };
        if !stable {
            continue;
        }
        temp.commit_with(Durability::RenameOnly)
            .map_err(io_err(&target))?;
        // Appends that land in the old file after the last check: from a writer that opened it
        // before the rename. Copied over until no writer holds the old file open.
        let late = old.drain_late(have)?;
        sync_dir(parent_dir(&target)).map_err(io_err(&target))?;
        return Ok(InPlaceReport {
            replaced: true,
            attempts: attempt,
            carried_bytes: have - len,
            late_bytes: late,
        });
    }
    Err(ReplaceError::Unstable {
        path: path.to_path_buf(),
        tries,
    }
    .into())
}

/// The file being replaced, open since it was read: its first and last bytes as they were,
/// to notice a rewrite that kept the inode and did not shrink the file.
struct OldFile<'a> {
    file: &'a File,
    path: &'a Path,
    id: (u64, u64),
    len: u64,
    head: Vec<u8>,
    tail: Vec<u8>,
}

impl<'a> OldFile<'a> {
    fn new(file: &'a File, path: &'a Path, id: (u64, u64), len: u64) -> Result<Self, ReplaceError> {
        let window = len.min(WINDOW as u64);
        let mut old = Self {
            file,
            path,
            id,
            len,
            head: Vec::new(),
            tail: Vec::new(),
        };
        old.head = old.read_range(0, window)?;
        old.tail = old.read_range(len - window, len)?;
        Ok(old)
    }

    /// Checks the path still names this file and the bytes read are unchanged, then copies what
    /// was appended past `have` into `temp`. Returns the new length copied up to, or `None`
    /// when the file must be processed again.
    fn settle(&self, have: u64, temp: &mut AtomicFile) -> Result<Option<u64>, ReplaceError> {
        let err = io_err(self.path);
        if key_of(self.path).map_err(err)? != Some(self.id) {
            return Ok(None);
        }
        let size = self.file.metadata().map_err(io_err(self.path))?.len();
        if size < have || !self.unchanged()? {
            return Ok(None);
        }
        if size == have {
            return Ok(Some(have));
        }
        if self.tail.last().is_some_and(|&b| b != b'\n') {
            // The appended bytes finish a line that was processed incomplete.
            return Ok(None);
        }
        let added = self.read_range(have, size)?;
        temp.write_all(&added).map_err(io_err(self.path))?;
        Ok(Some(size))
    }

    /// The first bytes and the bytes just before the processed length are still what was read.
    fn unchanged(&self) -> Result<bool, ReplaceError> {
        let len = self.len;
        Ok(self.read_range(0, self.head.len() as u64)? == self.head
            && self.read_range(len - self.tail.len() as u64, len)? == self.tail)
    }

    /// Bytes `from..to` of the old file (positional reads: the descriptor's offset is unused).
    fn read_range(&self, from: u64, to: u64) -> Result<Vec<u8>, ReplaceError> {
        let mut buf = vec![0; (to - from) as usize];
        read_exact_at(self.file, &mut buf, from).map_err(io_err(self.path))?;
        Ok(buf)
    }

    /// After the rename: copies to the new file whatever reaches the old one past `have`, until
    /// no process holds the old file open for writing (or, where that cannot be known, for a
    /// grace period with nothing new), then once more. Returns the bytes copied.
    fn drain_late(&self, have: u64) -> Result<u64, ReplaceError> {
        let start = std::time::Instant::now();
        let mut copied = have;
        loop {
            copied += self.late_bytes(copied)?;
            let writers = crate::writers::open_for_writing(self.id);
            if writers == Some(false) || start.elapsed() >= LATE_WRITER_WAIT {
                break;
            }
            if writers.is_none() {
                std::thread::sleep(LATE_GRACE);
                break;
            }
            std::thread::sleep(LATE_POLL);
        }
        // A writer that closed after its last write: its bytes are in the file now.
        copied += self.late_bytes(copied)?;
        Ok(copied - have)
    }

    /// Appends to the new file whatever reached the old one past `have`.
    fn late_bytes(&self, have: u64) -> Result<u64, ReplaceError> {
        let size = self.file.metadata().map_err(io_err(self.path))?.len();
        if size <= have {
            return Ok(0);
        }
        let added = self.read_range(have, size)?;
        let mut new = OpenOptions::new()
            .append(true)
            .open(self.path)
            .map_err(io_err(self.path))?;
        new.write_all(&added).map_err(io_err(self.path))?;
        new.sync_all().map_err(io_err(self.path))?;
        Ok(size - have)
    }

    /// Keeps the old file as `bak`: a hard link to it (so the backup holds everything ever
    /// written to it), or where links are not supported a copy of what it holds now. `false`
    /// when the path no longer names the file read (process again).
    fn backup(&self, bak: &Path) -> Result<bool, ReplaceError> {
        let temp = parent_dir(bak).join(format!(
            ".skein-tmp-bak-{}-{}",
            std::process::id(),
            bak.file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default()
        ));
        let _ = fs::remove_file(&temp);
        if fs::hard_link(self.path, &temp).is_ok() {
            if key_of(&temp).map_err(io_err(&temp))? != Some(self.id) {
                let _ = fs::remove_file(&temp);
                return Ok(false);
            }
            fs::rename(&temp, bak).map_err(io_err(bak))?;
            sync_dir(parent_dir(bak)).map_err(io_err(bak))?;
            return Ok(true);
        }
        let size = self.file.metadata().map_err(io_err(self.path))?.len();
        let content = self.read_range(0, size)?;
        let mode = mode_of(&self.file.metadata().map_err(io_err(self.path))?);
        write_target(
            &OutputTarget::Replace {
                path: bak.to_path_buf(),
                mode,
            },
            &content,
        )?;
        Ok(true)
    }
}

/// The permission bits of `m` (Unix only).
#[cfg(unix)]
#[allow(clippy::unnecessary_wraps)]
pub fn mode_of(m: &fs::Metadata) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    Some(m.permissions().mode() & 0o7777)
}

/// The permission bits of `m` (unknown on this system).
#[cfg(not(unix))]
pub fn mode_of(_: &fs::Metadata) -> Option<u32> {
    None
}

fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

#[cfg(test)]
#[path = "replace_tests.rs"]
mod tests;
