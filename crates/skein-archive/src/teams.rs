//! Agent-team configs kept next to the sessions: `teams/<team>/config.json`, the latest
//! version only (a config is a few hundred bytes of JSON that Claude Code rewrites as the
//! team changes), replaced atomically when it differs.

use std::path::{Path, PathBuf};

use skein_store::safe_component;

use crate::archive::Archive;
use crate::error::{ArchiveError, IoContext, Result};
use crate::layout::ensure_dir;

/// The directory of team configs under the archive root.
pub const TEAMS_DIR: &str = "teams";

/// What [`Archive::store_team_config`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TeamConfigStatus {
    Created,
    Updated,
    Unchanged,
}

impl Archive {
    /// The archived config of `team`, relative to the root.
    pub fn team_config_path(team: &str) -> Result<PathBuf> {
        safe_component(team).map_err(|source| ArchiveError::UnsafeId {
            what: "team name",
            id: team.to_owned(),
            source,
        })?;
        Ok(Path::new(TEAMS_DIR).join(team).join("config.json"))
    }

    /// Stores `bytes` as the latest config of `team` (a name that must be a safe path
    /// component): nothing is written when the archived copy has the same bytes; otherwise
    /// the file is replaced atomically (temp file, fsync, rename, directory fsync) with mode
    /// 0600, its directories created with mode 0700.
    pub fn store_team_config(&self, team: &str, bytes: &[u8]) -> Result<TeamConfigStatus> {
        let rel = Self::team_config_path(team)?;
        let path = self.root.join(&rel);
        let status = match std::fs::read(&path) {
            Ok(old) if old == bytes => return Ok(TeamConfigStatus::Unchanged),
            Ok(_) => TeamConfigStatus::Updated,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => TeamConfigStatus::Created,
            Err(e) => return Err(e).ctx(&path),
        };
        let dir = path.parent().unwrap_or(&self.root);
        ensure_dir(dir)?;
        let mut file = skein_store::AtomicFile::create(&path).ctx(&path)?;
        file.set_mode(0o600).ctx(&path)?;
        std::io::Write::write_all(&mut file, bytes).ctx(&path)?;
        file.commit().ctx(&path)?;
        Ok(status)
    }
}
