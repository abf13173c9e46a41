//! Paths from the command line made absolute for the hook commands' messages and settings.

use std::path::{Path, PathBuf};

/// `path` made absolute against the current directory (for messages and settings paths).
pub(crate) fn absolute_from_cwd(path: &Path) -> PathBuf {
    if path.is_absolute() {
        return path.to_path_buf();
    }
    std::env::current_dir().map_or_else(|_| path.to_path_buf(), |cwd| cwd.join(path))
}
