//! Atomic file replacement: write to a temp file beside the target, fsync it, rename it over
//! the target, then fsync the directory. A crash at any point leaves the old or the new file.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// How much a commit survives. Every level is atomic for readers (they see the old or the new
/// file, never a torn one); they differ in what a power loss can undo.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// fsync the file, rename, fsync the directory: the new file survives a power loss.
    #[default]
    Full,
    /// fsync the file and rename, without the directory fsync: a power loss may bring the old
    /// file back, never a torn or empty one. For state replaced often whose previous version is
    /// still correct (a checkpoint whose data is re-done from the old offset).
    NoDirSync,
    /// Rename only: a power loss may leave the file stale or empty. For derived files that are
    /// rebuilt whenever they disagree with their source.
    RenameOnly,
}

/// A file being written that replaces `target` only when [`AtomicFile::commit`] is called.
/// Dropping it without committing removes the temp file and leaves the target untouched.
#[derive(Debug)]
pub struct AtomicFile {
    target: PathBuf,
    temp: tempfile::NamedTempFile,
}

impl AtomicFile {
    /// Creates a temp file in the target's directory (which must exist), with mode 0600.
    pub fn create(target: impl AsRef<Path>) -> io::Result<Self> {
        let target = target.as_ref().to_path_buf();
        let dir = parent_dir(&target);
        let temp = tempfile::Builder::new()
            .prefix(".skein-tmp-")
            .tempfile_in(dir)?;
        Ok(Self { target, temp })
    }

    /// Sets the permission bits the file will have (Unix only; a no-op elsewhere).
    pub fn set_mode(&self, mode: u32) -> io::Result<()> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            self.temp
                .as_file()
                .set_permissions(fs::Permissions::from_mode(mode))?;
        }
        #[cfg(not(unix))]
        let _ = mode;
        Ok(())
    }

    /// The open temp file.
    pub fn file(&mut self) -> &mut File {
        self.temp.as_file_mut()
    }

    /// Flushes, fsyncs and renames the temp file over the target, then fsyncs the directory.
    pub fn commit(self) -> io::Result<()> {
        self.commit_with(Durability::Full)
    }

    /// Renames the temp file over the target with the fsyncs `durability` asks for.
    pub fn commit_with(mut self, durability: Durability) -> io::Result<()> {
        self.temp.as_file_mut().flush()?;
        if durability != Durability::RenameOnly {
            self.temp.as_file().sync_all()?;
        }
        self.temp.persist(&self.target).map_err(|e| e.error)?;
        if durability == Durability::Full {
            sync_dir(parent_dir(&self.target))?;
        }
        Ok(())
    }
}

impl AtomicFile {
    /// Links the file in at `target` only when nothing is there (never replacing an entry),
    /// with the fsyncs `durability` asks for. `Ok(None)`: committed; `Ok(Some(file))`: `target`
    /// exists, and the file comes back so the caller can try another name.
    pub fn commit_new(mut self, target: &Path, durability: Durability) -> io::Result<Option<Self>> {
        self.temp.as_file_mut().flush()?;
        if durability != Durability::RenameOnly {
            self.temp.as_file().sync_all()?;
        }
        match self.temp.persist_noclobber(target) {
            Ok(_) => {}
            Err(e) if e.error.kind() == io::ErrorKind::AlreadyExists => {
                return Ok(Some(Self {
                    target: self.target,
                    temp: e.file,
                }));
            }
            Err(e) => return Err(e.error),
        }
        if durability == Durability::Full {
            sync_dir(parent_dir(target))?;
        }
        Ok(None)
    }
}

/// Installs a temp file the caller wrote and fsynced under a name of its own (a journal records
/// it, so recovery after a crash can find it) over `target`: rename, then fsync the directory
/// when `durability` is [`Durability::Full`]. For such protocols (archive compaction) only;
/// every other writer uses [`AtomicFile`].
pub fn install(temp: &Path, target: &Path, durability: Durability) -> io::Result<()> {
    fs::rename(temp, target)?;
    if durability == Durability::Full {
        sync_dir(parent_dir(target))?;
    }
    Ok(())
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.temp.as_file_mut().write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.temp.as_file_mut().flush()
    }
}

/// Replaces `target` with `bytes` atomically and durably ([`Durability::Full`]).
pub fn write_atomic(target: impl AsRef<Path>, bytes: &[u8]) -> io::Result<()> {
    write_atomic_with(target, bytes, Durability::Full)
}

/// Replaces `target` with `bytes` atomically, with the fsyncs `durability` asks for.
pub fn write_atomic_with(
    target: impl AsRef<Path>,
    bytes: &[u8],
    durability: Durability,
) -> io::Result<()> {
    let mut file = AtomicFile::create(target)?;
    file.write_all(bytes)?;
    file.commit_with(durability)
}

/// Fsyncs a directory so a rename inside it is durable (a no-op where unsupported).
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

/// Makes everything written so far to the filesystem holding `dir` durable: file data, temp
/// files and renames alike. One call instead of one fsync per file, for protocols that write
/// many files and then need them all on disk before the next step (the archive's bulk commit).
/// On Linux this is `syncfs(2)`, which also flushes other programs' writes to the same
/// filesystem; elsewhere on Unix `sync(2)`.
pub fn sync_filesystem(dir: &Path) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        rustix::fs::syncfs(File::open(dir)?)?;
    }
    #[cfg(all(unix, not(target_os = "linux")))]
    {
        let _ = dir;
        rustix::fs::sync();
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
    }
    Ok(())
}

/// Starts writing `file`'s dirty pages to disk without waiting for them (Linux:
/// `sync_file_range` with `SYNC_FILE_RANGE_WRITE`; nothing elsewhere). A big file written
/// before a sync ([`sync_filesystem`], `fdatasync`) then has most of its bytes on disk when the
/// sync comes, instead of all of them being written while the sync waits. It guarantees
/// nothing: the sync is still what makes the data durable.
pub fn start_writeback(file: &File) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: the descriptor is open for the duration of the call (borrowed from `file`);
        // the call reads no memory of ours. Offset 0 with length 0 means the whole file.
        #[allow(unsafe_code)]
        let r =
            unsafe { libc::sync_file_range(file.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE) };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = file;
    }
    Ok(())
}

/// Makes a file that is still being written durable behind the writer, a piece at a time. Each
/// [`SyncBehind::kick`] starts the kernel writing the file's dirty pages ([`start_writeback`])
/// and, unless the previous one is still running, an `fdatasync` on a helper thread. A sync at
/// the end (the commit's) then finds most of the bytes on the device, its cache flush
/// included, instead of flushing them all while it waits: on a VM disk whose flush cost grows
/// with what was written since the last one, the commit of a 74 MB frame waited 72–122 ms
/// after writeback alone and 24–30 ms with this (docs/performance.md, stop 33).
///
/// Advice only, like [`start_writeback`]: errors are ignored, and the final sync is still what
/// makes the data durable. Dropping it waits for the sync under way.
#[derive(Debug, Default)]
pub struct SyncBehind {
    running: Option<std::thread::JoinHandle<()>>,
}

impl SyncBehind {
    /// Starts writeback of `file` and, if none is running, a background data sync of it.
    pub fn kick(&mut self, file: &File) {
        let _ = start_writeback(file);
        if self.running.as_ref().is_some_and(|h| !h.is_finished()) {
            return;
        }
        self.wait();
        // The helper syncs a second descriptor of the same file, closed when it is done.
        if let Ok(dup) = file.try_clone() {
            self.running = std::thread::Builder::new()
                .name("skein-sync-behind".into())
                .spawn(move || {
                    let _ = dup.sync_data();
                })
                .ok();
        }
    }

    /// Waits for the sync under way, if any.
    pub fn wait(&mut self) {
        if let Some(h) = self.running.take() {
            let _ = h.join();
        }
    }
}

impl Drop for SyncBehind {
    fn drop(&mut self) {
        self.wait();
    }
}

fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writeback_is_started_on_files_and_refused_on_pipes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut f = File::create(dir.path().join("f")).expect("create");
        f.write_all(&vec![7u8; 1 << 16]).expect("write");
        start_writeback(&f).expect("a regular file");
        #[cfg(target_os = "linux")]
        {
            // A pipe has no pages to write: the call really reaches the kernel (ESPIPE).
            let (r, _w) = std::io::pipe().expect("pipe");
            let r = File::from(std::os::fd::OwnedFd::from(r));
            assert!(start_writeback(&r).is_err());
        }
    }

    /// Descriptors of this process open on `path` (other tests run beside this one).
    #[cfg(target_os = "linux")]
    fn open_fds(path: &Path) -> usize {
        std::fs::read_dir("/proc/self/fd")
            .expect("/proc")
            .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
            .filter(|target| target == path)
            .count()
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn sync_behind_runs_one_helper_and_closes_its_descriptor() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().canonicalize().expect("dir").join("f");
        let mut f = File::create(&path).expect("create");
        let open_fds = || open_fds(&path);
        assert_eq!(open_fds(), 1);
        let before = 1;
        let mut behind = SyncBehind::default();
        for _ in 0..4 {
            f.write_all(&vec![7u8; 1 << 16]).expect("write");
            behind.kick(&f);
            // At most one helper, holding one duplicate descriptor while it syncs.
            assert!(open_fds() <= before + 1);
        }
        assert!(behind.running.is_some(), "a helper was started");
        behind.wait();
        assert!(behind.running.is_none());
        assert_eq!(open_fds(), before, "the helper's descriptor is closed");
        // Dropping waits too: nothing is left running when the writer is gone.
        f.write_all(b"more").expect("write");
        behind.kick(&f);
        drop(behind);
        assert_eq!(open_fds(), before);
        assert_eq!(f.metadata().expect("md").len(), 4 * (1 << 16) + 4);
    }

    #[test]
    fn commit_new_never_replaces() {
        let dir = tempfile::tempdir().expect("tempdir");
        let taken = dir.path().join("notes.md");
        fs::write(&taken, b"first").expect("write");
        let mut f = AtomicFile::create(&taken).expect("create");
        f.write_all(b"second").expect("write");
        let back = f
            .commit_new(&taken, Durability::Full)
            .expect("io")
            .expect("taken: the file comes back");
        assert_eq!(fs::read(&taken).expect("read"), b"first");
        let free = dir.path().join("notes-2.md");
        assert!(
            back.commit_new(&free, Durability::Full)
                .expect("io")
                .is_none()
        );
        assert_eq!(fs::read(&free).expect("read"), b"second");
        let names: Vec<_> = fs::read_dir(dir.path()).expect("dir").collect();
        assert_eq!(names.len(), 2, "no temp file left behind");
    }

    #[test]
    fn install_renames_a_named_temp() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (temp, target) = (dir.path().join("a.compact-tmp"), dir.path().join("a"));
        fs::write(&target, b"old").expect("write");
        fs::write(&temp, b"new").expect("write");
        install(&temp, &target, Durability::Full).expect("install");
        assert_eq!(fs::read(&target).expect("read"), b"new");
        assert!(!temp.exists());
        assert!(install(&temp, &target, Durability::Full).is_err());
    }

    #[test]
    fn commit_replaces_and_drop_keeps_old() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("state.json");
        write_atomic(&target, b"old").expect("first write");
        {
            let mut f = AtomicFile::create(&target).expect("create");
            f.write_all(b"half").expect("write");
            // dropped without commit
        }
        assert_eq!(fs::read(&target).expect("read"), b"old");
        write_atomic(&target, b"new").expect("second write");
        assert_eq!(fs::read(&target).expect("read"), b"new");
        let leftovers = fs::read_dir(dir.path())
            .expect("read_dir")
            .filter(|e| {
                e.as_ref()
                    .is_ok_and(|e| e.file_name().to_string_lossy().starts_with(".skein-tmp-"))
            })
            .count();
        assert_eq!(leftovers, 0);
    }

    #[test]
    fn every_durability_replaces_the_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("state.json");
        for (i, d) in [
            Durability::Full,
            Durability::NoDirSync,
            Durability::RenameOnly,
        ]
        .into_iter()
        .enumerate()
        {
            let bytes = format!("v{i}");
            write_atomic_with(&target, bytes.as_bytes(), d).expect("write");
            assert_eq!(fs::read(&target).expect("read"), bytes.as_bytes());
        }
        assert_eq!(fs::read_dir(dir.path()).expect("read_dir").count(), 1);
    }
}
