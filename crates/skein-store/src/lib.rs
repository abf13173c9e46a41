//! I/O policy for skein: where bytes come from and how they land on disk.
//!
//! * [`input`]: open a transcript from a file, stdin or a `.jsonl.zst` archive, and expand
//!   directories into the transcript files they hold.
//! * [`append`]: files that only grow: file identity (device, inode, size), the end of the
//!   last complete line, and whether a file still continues what an earlier read consumed.
//! * [`atomic`]: replace a file atomically (temp file in the same directory, fsync, rename).
//! * [`replace`]: where an output path really goes, refusing to write over an input, and
//!   rewriting a file in place without losing what another process appends meanwhile.
//! * [`identity`]: whether two paths name the same file (device and inode of
//!   [`append::FileId`]), through any symlink, hard link or spelling.
//! * [`writers`]: whether any process still holds a file open for writing (Linux `/proc`).
//! * [`lock`]: an exclusive lock file with a timeout, for state shared between processes.
//! * [`names`]: validate ids and file names taken from input so no path escapes its directory.
//! * [`private`]: files (0600) and directories (0700) only their owner can read.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "skein-store owns file I/O: inputs, atomic writes, locks"
)]

pub mod append;
pub mod atomic;
pub mod identity;
pub mod input;
pub mod lock;
pub mod names;
pub mod private;
pub mod replace;
pub mod writers;

pub use append::{Break, Consumed, FileId, FileRange};
pub use atomic::{
    AtomicFile, Durability, SyncBehind, install, start_writeback, sync_filesystem, write_atomic,
    write_atomic_with,
};
pub use identity::same_file;
pub use input::{
    Input, InputError, InputMode, ZstdOpener, expand_paths, expand_paths_with, is_transcript_name,
    is_zstd, open_input, zstd_stream,
};
pub use lock::{FileLock, LockError};
pub use names::{NameError, safe_component, sanitize_file_name};
pub use replace::{
    InPlaceError, InPlaceOptions, InPlaceReport, OutputTarget, ReplaceError, TargetWriter,
    ensure_not_input, rewrite_in_place, rewrite_in_place_streaming, write_target,
};
