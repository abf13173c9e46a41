//! Where things live inside an archive directory, and the permission policy (directories 0700,
//! files 0600).
//!
//! ```text
//! DIR/main-session/YYYY-MM/<date>_<time>_<session-id>[.vN].jsonl.zst   (+ .meta.json)
//! DIR/subagent/<agent-type>/YYYY-MM/<date>_<time>_<agent-id>[.vN].jsonl.zst (+ .meta.json)
//! DIR/checkpoints/main-session/<session-id>.json
//! DIR/checkpoints/subagent/<parent-session|no-parent>/<agent-id>.json
//! DIR/locks/...            lock files mirroring checkpoints/, plus index.lock
//! DIR/dict/vN.zdict        trained dictionaries (+ vN.json)
//! DIR/set-aside/...       bytes recovery cut from archive files, kept for inspection
//! DIR/archive-index.json
//! ```

use skein_store::Durability;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use skein_store::{safe_component, sanitize_file_name};

use crate::error::{ArchiveError, IoContext, Result};
use skein_core::time::Civil;

/// Directory for main session archives.
pub const MAIN_DIR: &str = "main-session";
/// Directory for subagent archives.
pub const SUBAGENT_DIR: &str = "subagent";
/// Directory for checkpoints.
pub const CHECKPOINT_DIR: &str = "checkpoints";
/// Directory for lock files.
pub const LOCK_DIR: &str = "locks";
/// Directory for trained dictionaries.
pub const DICT_DIR: &str = "dict";
/// Directory for bytes recovery removed from archive files without being able to account for
/// them (never deleted by skein).
pub const SET_ASIDE_DIR: &str = "set-aside";
/// The whole-archive index.
pub const INDEX_FILE: &str = "archive-index.json";
/// Archive file suffix.
pub const ARCHIVE_SUFFIX: &str = ".jsonl.zst";
/// Meta file suffix (replaces [`ARCHIVE_SUFFIX`]).
pub const META_SUFFIX: &str = ".meta.json";
/// Parent component used for subagents whose parent session is unknown.
pub const NO_PARENT: &str = "no-parent";
/// Agent type used when none is known.
pub const UNKNOWN_AGENT_TYPE: &str = "unknown";

/// What is being archived. Ids end up in file names and are validated with
/// [`skein_store::safe_component`]; the agent type is sanitized into a directory name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Kind {
    /// `projects/<project>/<session-id>.jsonl`.
    MainSession { session_id: String },
    /// `projects/<project>/<session-id>/subagents/agent-<agent-id>.jsonl` (or the legacy flat file).
    Subagent {
        agent_type: String,
        agent_id: String,
        /// The session that spawned the agent (part of the archive key: agent ids are short).
        parent_session: Option<String>,
        /// The `tool_use` id of the Agent/Task call that spawned it.
        tool_use_id: Option<String>,
    },
}

impl Kind {
    /// The id in the file name: the session id or the agent id.
    pub fn id(&self) -> &str {
        match self {
            Self::MainSession { session_id } => session_id,
            Self::Subagent { agent_id, .. } => agent_id,
        }
    }

    /// `main-session` or `subagent`.
    pub fn dir_name(&self) -> &'static str {
        match self {
            Self::MainSession { .. } => MAIN_DIR,
            Self::Subagent { .. } => SUBAGENT_DIR,
        }
    }

    /// The session this file belongs to: its own id, or the parent session of a subagent.
    pub fn session(&self) -> Option<&str> {
        match self {
            Self::MainSession { session_id } => Some(session_id),
            Self::Subagent { parent_session, .. } => parent_session.as_deref(),
        }
    }

    /// Validates every id that reaches a path (the agent type is sanitized, not validated).
    pub(crate) fn validate(&self) -> Result<()> {
        check("session id", self.session().unwrap_or(NO_PARENT))?;
        check("id", self.id())?;
        Ok(())
    }

    /// The checkpoint path relative to the archive root (the archive key).
    pub(crate) fn key_path(&self, top: &str, ext: &str) -> PathBuf {
        let mut p = PathBuf::from(top).join(self.dir_name());
        if let Self::Subagent { parent_session, .. } = self {
            p.push(parent_session.as_deref().unwrap_or(NO_PARENT));
        }
        p.join(format!("{}.{ext}", self.id()))
    }

    /// The directory below the root that holds this kind's month directories.
    pub(crate) fn type_dir(&self) -> PathBuf {
        match self {
            Self::MainSession { .. } => PathBuf::from(MAIN_DIR),
            Self::Subagent { agent_type, .. } => {
                let t = if agent_type.trim().is_empty() {
                    UNKNOWN_AGENT_TYPE.to_owned()
                } else {
                    sanitize_file_name(agent_type)
                };
                PathBuf::from(SUBAGENT_DIR).join(t)
            }
        }
    }
}

fn check(what: &'static str, id: &str) -> Result<()> {
    safe_component(id)
        .map(|_| ())
        .map_err(|source| ArchiveError::UnsafeId {
            what,
            id: id.to_owned(),
            source,
        })
}

/// The archive file path (relative, `/`-separated) for `kind`, version `version`, starting at
/// `start` (UTC).
pub(crate) fn archive_rel_path(kind: &Kind, start: Civil, version: u32) -> String {
    let dir = kind.type_dir().join(start.date().month_key());
    let suffix = if version <= 1 {
        String::new()
    } else {
        format!(".v{version}")
    };
    let name = format!(
        "{}_{:02}{:02}{:02}_{}{suffix}{ARCHIVE_SUFFIX}",
        start.date().key(),
        start.hour,
        start.minute,
        start.second,
        kind.id()
    );
    to_rel(&dir.join(name))
}

/// `a/b/x.jsonl.zst` → `a/b/x.meta.json`.
pub fn meta_rel_path(archive_rel: &str) -> String {
    let stem = archive_rel
        .strip_suffix(ARCHIVE_SUFFIX)
        .unwrap_or(archive_rel);
    format!("{stem}{META_SUFFIX}")
}

/// A relative path with `/` separators, as stored in JSON state.
pub(crate) fn to_rel(p: &Path) -> String {
    p.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// Resolves a stored relative path, refusing anything that could leave the root.
pub(crate) fn resolve(root: &Path, rel: &str) -> Result<PathBuf> {
    let mut out = root.to_path_buf();
    for part in rel.split('/') {
        if safe_component(part).is_err() {
            return Err(crate::error::corrupt(
                root,
                format!("stored path {rel:?} is not a plain relative path"),
            ));
        }
        out.push(part);
    }
    Ok(out)
}

/// Creates `dir` and any missing parents with mode 0700, fsyncing each new entry's parent.
pub(crate) fn ensure_dir(dir: &Path) -> Result<()> {
    ensure_dir_with(dir, true)
}

/// [`ensure_dir`], with the parent fsyncs only if `durable`: for directories whose entries
/// need not survive a power loss (lock files) or that a later filesystem sync covers (a
/// batch commit).
pub(crate) fn ensure_dir_with(dir: &Path, durable: bool) -> Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        ensure_dir_with(parent, durable)?;
    }
    let mut b = fs::DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    match b.create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists && dir.is_dir() => return Ok(()),
        Err(e) => return Err(e).ctx(dir),
    }
    if durable && let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        skein_store::atomic::sync_dir(parent).ctx(parent)?;
    }
    Ok(())
}

/// Creates a new file (never an existing one) with mode 0600, open for reading and writing.
pub(crate) fn create_new_file(path: &Path) -> io::Result<File> {
    let mut o = OpenOptions::new();
    o.read(true).write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    o.open(path)
}

/// Takes an exclusive lock file (created with mode 0600 in a 0700 directory). Lock files hold
/// nothing: their directories are not fsynced.
pub(crate) fn lock(path: &Path, timeout: std::time::Duration) -> Result<skein_store::FileLock> {
    if let Some(dir) = path.parent() {
        ensure_dir_with(dir, false)?;
    }
    Ok(skein_store::FileLock::acquire(path, timeout)?)
}

/// Atomically and durably replaces `path` with `bytes` (mode 0600), creating the parent
/// directory if needed.
pub(crate) fn write_file_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Some(parent) = path.parent() {
        ensure_dir(parent)?;
    }
    write_file(path, bytes, Durability::Full)
}

/// Replaces `path` with `bytes` (mode 0600) in an existing directory, with the fsyncs
/// `durability` asks for.
pub(crate) fn write_file(path: &Path, bytes: &[u8], durability: Durability) -> Result<()> {
    use std::io::Write;
    // The temp file is created with mode 0600 (see `AtomicFile::create`).
    let mut f = skein_store::AtomicFile::create(path).ctx(path)?;
    f.write_all(bytes).ctx(path)?;
    f.commit_with(durability).ctx(path)
}

/// A committed JSON state file (`*.json`, not an atomic-write temp file).
pub(crate) fn is_json_state(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "json")
        && !p
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with(".skein-tmp-"))
}

/// Replaces `path` with `bytes` by rename (mode 0600) WITHOUT fsync: for derived files
/// (`.meta.json`) that are rewritten from the checkpoint whenever they disagree with it. Readers
/// see the old or the new file; after a power loss the file may be stale or empty, which
/// `verify` reports and the next ingest or `recover_all` repairs.
pub(crate) fn write_file_lazy(path: &Path, bytes: &[u8]) -> Result<()> {
    ensure_dir(path.parent().unwrap_or(Path::new(".")))?;
    write_file(path, bytes, Durability::RenameOnly)
}

/// Reads a file, mapping "not found" to `None`.
pub(crate) fn read_optional(path: &Path) -> Result<Option<Vec<u8>>> {
    match fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).ctx(path),
    }
}

/// Removes a file, ignoring "not found"; fsyncs its directory.
pub(crate) fn remove_file_durable(path: &Path) -> Result<bool> {
    match fs::remove_file(path) {
        Ok(()) => {
            if let Some(parent) = path.parent() {
                skein_store::atomic::sync_dir(parent).ctx(parent)?;
            }
            Ok(true)
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e).ctx(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn civil(ts: &str) -> Civil {
        Civil::from_ms(skein_core::time::parse_ms(ts).expect("ts"))
    }

    #[test]
    fn names_follow_the_layout() {
        let main = Kind::MainSession {
            session_id: "0b4c6f9e-1d2a".into(),
        };
        let t = civil("2026-01-05T14:03:22.123Z");
        assert_eq!(
            archive_rel_path(&main, t, 1),
            "main-session/2026-01/2026-01-05_140322_0b4c6f9e-1d2a.jsonl.zst"
        );
        assert_eq!(
            archive_rel_path(&main, t, 2),
            "main-session/2026-01/2026-01-05_140322_0b4c6f9e-1d2a.v2.jsonl.zst"
        );
        let sub = Kind::Subagent {
            agent_type: "plugin:code/Review".into(),
            agent_id: "a1b2c3d".into(),
            parent_session: Some("s1".into()),
            tool_use_id: None,
        };
        assert_eq!(
            archive_rel_path(&sub, t, 1),
            "subagent/Review/2026-01/2026-01-05_140322_a1b2c3d.jsonl.zst"
        );
        assert_eq!(
            meta_rel_path("subagent/x/2026-01/a.v2.jsonl.zst"),
            "subagent/x/2026-01/a.v2.meta.json"
        );
        assert_eq!(
            to_rel(&sub.key_path(CHECKPOINT_DIR, "json")),
            "checkpoints/subagent/s1/a1b2c3d.json"
        );
    }

    #[test]
    fn malicious_ids_are_refused() {
        for bad in ["../../etc/passwd", "a/b", ".hidden", "", "x\0y"] {
            let main = Kind::MainSession {
                session_id: bad.into(),
            };
            assert!(main.validate().is_err(), "{bad:?}");
            let sub = Kind::Subagent {
                agent_type: "Explore".into(),
                agent_id: bad.into(),
                parent_session: None,
                tool_use_id: None,
            };
            assert!(sub.validate().is_err(), "{bad:?}");
            let parent = Kind::Subagent {
                agent_type: "Explore".into(),
                agent_id: "a1".into(),
                parent_session: Some(bad.into()),
                tool_use_id: None,
            };
            assert!(parent.validate().is_err(), "{bad:?}");
        }
        let evil_type = Kind::Subagent {
            agent_type: "../../../tmp".into(),
            agent_id: "a1".into(),
            parent_session: None,
            tool_use_id: None,
        };
        assert_eq!(evil_type.type_dir(), PathBuf::from("subagent/tmp"));
        assert!(resolve(Path::new("/r"), "a/../../b").is_err());
        assert!(resolve(Path::new("/r"), "/etc/passwd").is_err());
    }
}
