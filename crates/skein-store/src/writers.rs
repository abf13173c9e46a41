//! Whether any process still holds a file open for writing.
//!
//! After [`crate::replace::rewrite_in_place`] renames the new file over a live transcript, a
//! writer that opened the *old* file just before the rename can still write to it: those bytes
//! would be in neither file. Claude Code opens the transcript by path for each batch of lines
//! and closes it right after, so once no descriptor open for writing on the old inode remains,
//! nothing more can reach it. On Linux that is read from `/proc/<pid>/fd` and
//! `/proc/<pid>/fdinfo` (the processes this user may inspect, which include every process of
//! the same user, Claude Code among them). Elsewhere the answer is "unknown" and the caller
//! falls back to a grace period.

use std::fs;
use std::path::Path;

use crate::identity::key;

/// `O_ACCMODE` bits of the `flags:` line in `/proc/<pid>/fdinfo/<fd>`: 1 = write only, 2 = read
/// and write.
const ACCESS_MODE: u32 = 0o3;

/// `Some(true)` when some process has the file with this (device, inode) open for writing,
/// `Some(false)` when none has, `None` when this system cannot tell.
pub fn open_for_writing(id: (u64, u64)) -> Option<bool> {
    let procs = fs::read_dir("/proc").ok()?;
    // A /proc without our own entry is not a Linux procfs.
    if !Path::new("/proc/self/fd").is_dir() {
        return None;
    }
    for entry in procs.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|s| s.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        if process_writes(pid, id) {
            return Some(true);
        }
    }
    Some(false)
}

/// Whether process `pid` holds `id` open with write access. Processes and descriptors that
/// vanish or cannot be read (another user's) count as not holding it.
fn process_writes(pid: &str, id: (u64, u64)) -> bool {
    let Ok(fds) = fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    for fd in fds.flatten() {
        // `metadata` follows the magic link to the open file, even an unlinked one.
        let Ok(meta) = fs::metadata(fd.path()) else {
            continue;
        };
        if key(&meta) != id {
            continue;
        }
        let info = format!("/proc/{pid}/fdinfo/{}", fd.file_name().to_string_lossy());
        if fs::read_to_string(info).ok().and_then(|t| access_mode(&t)) != Some(0) {
            return true;
        }
    }
    false
}

/// The access mode in an fdinfo text (`flags:\t0100002` → 2); `None` if absent, which the
/// caller treats as "may write".
fn access_mode(fdinfo: &str) -> Option<u32> {
    let flags = fdinfo
        .lines()
        .find_map(|l| l.strip_prefix("flags:"))?
        .trim();
    u32::from_str_radix(flags, 8).ok().map(|f| f & ACCESS_MODE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::{File, OpenOptions};

    #[test]
    fn access_mode_reads_the_octal_flags() {
        assert_eq!(
            access_mode("pos:\t0\nflags:\t0100000\nmnt_id:\t1\n"),
            Some(0)
        );
        assert_eq!(access_mode("pos:\t0\nflags:\t02102001\n"), Some(1));
        assert_eq!(access_mode("flags:\t0100002\n"), Some(2));
        assert_eq!(access_mode("pos:\t0\n"), None);
    }

    #[test]
    fn a_writer_is_seen_and_a_reader_is_not() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("f");
        fs::write(&p, b"x").expect("write");
        let id = key(&fs::metadata(&p).expect("meta"));
        let reader = File::open(&p).expect("open");
        let Some(seen) = open_for_writing(id) else {
            // Not Linux: nothing to check.
            return;
        };
        assert!(!seen, "a read-only descriptor is not a writer");
        let writer = OpenOptions::new().append(true).open(&p).expect("open");
        assert_eq!(open_for_writing(id), Some(true));
        // Still seen once the path names another file (the case rewrite_in_place meets).
        fs::rename(dir.path().join("f"), dir.path().join("g")).expect("rename");
        fs::write(&p, b"new").expect("write");
        assert_eq!(open_for_writing(id), Some(true));
        drop(writer);
        assert_eq!(open_for_writing(id), Some(false));
        drop(reader);
    }
}
