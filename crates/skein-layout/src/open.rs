//! Opening a source: plain files, standard input, zstd files, and skein archive files (read up
//! to their committed length, with the trained dictionary their frames name).

use std::io;
use std::path::Path;

use skein_store::{Input, InputError, InputMode};

/// Opens `path` for reading its transcript lines (`-` is standard input). `.zst` files are
/// decoded by the archive's reader, which reads plain zstd files as well.
pub fn open(path: &Path, mode: InputMode) -> Result<Input, InputError> {
    skein_store::open_input(path, mode, open_zst)
}

fn open_zst(path: &Path) -> io::Result<Box<dyn io::Read + Send>> {
    skein_archive::open_archived(path).map_err(|e| match e {
        // The caller names the path already.
        skein_archive::ArchiveError::Io { source, .. } => source,
        skein_archive::ArchiveError::Corrupt { path: p, reason } if p == path => {
            io::Error::other(reason)
        }
        other => io::Error::other(other.to_string()),
    })
}
