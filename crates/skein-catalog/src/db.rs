//! The database file: schema, versions and migrations, and opening it so that a corrupt or
//! newer-schema catalog is rebuilt (it is derived data), never fatal.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension as _};

use crate::error::{Error, Result};

/// The schema version this build writes (`PRAGMA user_version`).
pub const SCHEMA_VERSION: i64 = 6;

/// The full-text index's tokenizer (`fts` in [`SCHEMA_V1`]); search snippets tokenize a hit's
/// text with it again, so they mark exactly what the index matched.
pub(crate) const TOKENIZER: &str = "unicode61 remove_diacritics 2";

/// Migrations: entry `i` brings a catalog from version `i` to `i + 1`.
const MIGRATIONS: [&str; 6] = [
    SCHEMA_V1,
    SCHEMA_V2,
    SCHEMA_V3,
    SCHEMA_REPORT_CACHE,
    SCHEMA_LISTINGS,
    SCHEMA_REPORT_CACHE_BY_DIR,
];

/// The remembered report results keyed by the session's project directory (its whole path),
/// not by its name: two sessions with one id in two directories of one name (two roots, or a
/// tree that names sessions `full-00.jsonl` in many directories) took each other's entry, so
/// each run missed, read both sessions again and rewrote them. What was remembered is
/// dropped (it is derived, and computed again on the next report); `project` stays for
/// forgetting the results of sessions whose sources are all gone.
const SCHEMA_REPORT_CACHE_BY_DIR: &str = r"
DROP TABLE report_cache;
CREATE TABLE report_cache (
    report TEXT NOT NULL,
    dir TEXT NOT NULL,
    project TEXT NOT NULL,
    session_id TEXT NOT NULL,
    fingerprint INTEGER NOT NULL,
    body BLOB NOT NULL,
    PRIMARY KEY (report, dir, session_id)
) WITHOUT ROWID;
";

/// The sessions of a set of roots as `skein-layout` groups their sources (`groups.rs`),
/// recorded with the roots' directories by a refresh that listed them (`roots.rs`): while no
/// directory changes, the next report takes its sessions from here instead of grouping
/// thousands of paths again. A catalog migrated to this version has none until its next
/// listing, which any changed directory (or `skein index`'s first run) causes.
const SCHEMA_LISTINGS: &str = r"
CREATE TABLE listings (
    roots TEXT PRIMARY KEY,
    body BLOB NOT NULL
) WITHOUT ROWID;
";

/// Catalogs older than this are rebuilt rather than migrated: what version 3 adds (which
/// copies compete, the usage groups) is only computed as sources are indexed.
const OLDEST_MIGRATED: i64 = 3;

/// Usage answered without reading every request copy (see `usage.rs`): `contested` marks the
/// copies whose message has another copy anywhere in the catalog (only those need the
/// cross-file deduplication at query time; a flag is never cleared, which is safe), and
/// `usage_groups` sums each source's other copies by 15-minute UTC bucket, model, origin and
/// long-context band (prompt > 200,000 tokens), kept up to date as copies are written;
/// `usage_skips` locates the usage lines the scanner skipped (the first 1,000 of a file), so
/// that a report's warning can name them without reading the file.
const SCHEMA_V3: &str = r"
ALTER TABLE requests ADD COLUMN contested INTEGER NOT NULL DEFAULT 0;
CREATE INDEX requests_message ON requests(message_id) WHERE message_id IS NOT NULL;
CREATE INDEX requests_contested ON requests(source_id, seq) WHERE contested = 1;
CREATE TABLE usage_groups (
    source_id INTEGER NOT NULL,
    bucket INTEGER NOT NULL,
    model TEXT,
    origin INTEGER NOT NULL,
    long INTEGER NOT NULL,
    requests INTEGER NOT NULL,
    input INTEGER NOT NULL,
    output INTEGER NOT NULL,
    cache_creation INTEGER NOT NULL,
    cache_5m INTEGER NOT NULL,
    cache_1h INTEGER NOT NULL,
    cache_read INTEGER NOT NULL,
    first_ms INTEGER NOT NULL,
    last_ms INTEGER NOT NULL
);
CREATE INDEX usage_groups_source ON usage_groups(source_id, bucket);
CREATE TABLE usage_skips (
    source_id INTEGER NOT NULL,
    line INTEGER NOT NULL,
    offset INTEGER NOT NULL,
    invalid INTEGER NOT NULL,
    PRIMARY KEY (source_id, line)
) WITHOUT ROWID;
";

/// Per-session results of the reports that read whole sessions (`report_cache.rs`), each with
/// the fingerprint of the session's files it was computed from.
const SCHEMA_REPORT_CACHE: &str = r"
CREATE TABLE report_cache (
    report TEXT NOT NULL,
    project TEXT NOT NULL,
    session_id TEXT NOT NULL,
    fingerprint INTEGER NOT NULL,
    body BLOB NOT NULL,
    PRIMARY KEY (report, project, session_id)
) WITHOUT ROWID;
";

/// Settings of the catalog as a whole: `redacted` is `1` while everything in it was redacted
/// before indexing (a catalog of version 1 was not).
const SCHEMA_V2: &str = r"
CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO settings VALUES ('redacted', '0');
";

/// Whether everything in the catalog was redacted before it was indexed.
pub(crate) fn is_redacted(conn: &Connection) -> rusqlite::Result<bool> {
    let v: Option<String> = conn
        .query_row(
            "SELECT value FROM settings WHERE key = 'redacted'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    Ok(v.as_deref() == Some("1"))
}

/// Records whether what is indexed from now on is redacted.
pub(crate) fn set_redacted(conn: &Connection, on: bool) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT OR REPLACE INTO settings VALUES ('redacted', ?1)",
        [if on { "1" } else { "0" }],
    )
    .map(drop)
}

/// Whether any source has been indexed.
pub(crate) fn has_content(conn: &Connection) -> rusqlite::Result<bool> {
    conn.query_row("SELECT EXISTS (SELECT 1 FROM sources)", [], |r| r.get(0))
}

const SCHEMA_V1: &str = r"
CREATE TABLE sources (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    session_id TEXT NOT NULL,
    agent_id TEXT,
    project TEXT NOT NULL,
    archived INTEGER NOT NULL DEFAULT 0,
    internal INTEGER NOT NULL DEFAULT 0,
    agent_type TEXT,
    spawned_by TEXT,
    dev INTEGER NOT NULL DEFAULT 0,
    ino INTEGER NOT NULL DEFAULT 0,
    size INTEGER NOT NULL DEFAULT 0,
    mtime_ns INTEGER NOT NULL DEFAULT 0,
    offset INTEGER NOT NULL DEFAULT 0,
    zst_offset INTEGER NOT NULL DEFAULT 0,
    lines INTEGER NOT NULL DEFAULT 0,
    head_hash INTEGER NOT NULL DEFAULT 0,
    tail_hash INTEGER NOT NULL DEFAULT 0,
    usage_lines INTEGER NOT NULL DEFAULT 0,
    usage_invalid INTEGER NOT NULL DEFAULT 0,
    usage_no_timestamp INTEGER NOT NULL DEFAULT 0,
    next_seq INTEGER NOT NULL DEFAULT 0,
    first_ts TEXT,
    last_ts TEXT,
    cwd TEXT,
    git_branch TEXT,
    version TEXT,
    models TEXT,
    custom_title TEXT,
    ai_title TEXT,
    summary TEXT,
    first_prompt TEXT,
    prompts INTEGER NOT NULL DEFAULT 0,
    user_messages INTEGER NOT NULL DEFAULT 0,
    invalid_lines INTEGER NOT NULL DEFAULT 0,
    shadowed INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX sources_session ON sources(session_id, project);

CREATE TABLE requests (
    source_id INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    message_id TEXT,
    request_id TEXT NOT NULL,
    sidechain INTEGER NOT NULL,
    origin INTEGER NOT NULL,
    model TEXT,
    input INTEGER NOT NULL,
    output INTEGER NOT NULL,
    cache_creation INTEGER NOT NULL,
    cache_5m INTEGER NOT NULL,
    cache_1h INTEGER NOT NULL,
    cache_read INTEGER NOT NULL,
    ts_ms INTEGER NOT NULL,
    foreign_session INTEGER NOT NULL,
    progress_agent TEXT,
    PRIMARY KEY (source_id, seq)
) WITHOUT ROWID;
CREATE UNIQUE INDEX requests_key ON requests(source_id, message_id, request_id, sidechain)
    WHERE message_id IS NOT NULL;
CREATE INDEX requests_time ON requests(ts_ms);

CREATE TABLE tool_calls (
    source_id INTEGER NOT NULL,
    tool_use_id TEXT NOT NULL,
    name TEXT,
    line INTEGER,
    ts TEXT,
    input_bytes INTEGER,
    result_ts TEXT,
    is_error INTEGER,
    result_bytes INTEGER,
    PRIMARY KEY (source_id, tool_use_id)
) WITHOUT ROWID;

CREATE TABLE docs (
    id INTEGER PRIMARY KEY,
    source_id INTEGER NOT NULL,
    offset INTEGER NOT NULL,
    len INTEGER NOT NULL,
    block INTEGER NOT NULL,
    kind INTEGER NOT NULL,
    ts_ms INTEGER,
    tool TEXT
);
CREATE INDEX docs_source ON docs(source_id);

CREATE TABLE dirs (
    root TEXT NOT NULL,
    path TEXT NOT NULL,
    mtime_ns INTEGER NOT NULL,
    PRIMARY KEY (root, path)
) WITHOUT ROWID;

CREATE VIRTUAL TABLE fts USING fts5(
    body,
    content = '',
    contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 2'
);
-- Pending terms are flushed to a new segment every 32 MiB instead of every 1 MiB: fewer,
-- larger segments, much less merging while a tree is indexed.
INSERT INTO fts (fts, rank) VALUES ('hashsize', 33554432);
";

/// How the catalog was opened.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Opened {
    /// An existing catalog of this version (or migrated to it).
    #[default]
    Existing,
    /// A new, empty catalog.
    Created,
    /// The file was unusable and was replaced by an empty catalog; the reason.
    Rebuilt(String),
}

/// Opens (creating or rebuilding as needed) the catalog at `path`.
pub(crate) fn open(path: &Path, busy: Duration) -> Result<(Connection, Opened)> {
    let existed = path.exists();
    match try_open(path, busy) {
        Ok(conn) => Ok((
            conn,
            if existed {
                Opened::Existing
            } else {
                Opened::Created
            },
        )),
        Err(Unusable::Fatal(e)) => Err(e),
        Err(Unusable::Rebuild(reason)) => {
            remove_files(path)?;
            let conn = try_open(path, busy).map_err(|e| match e {
                Unusable::Fatal(e) => e,
                Unusable::Rebuild(r) => Error::Corrupt {
                    path: path.to_path_buf(),
                    reason: r,
                },
            })?;
            Ok((conn, Opened::Rebuilt(reason)))
        }
    }
}

/// Runs `setup`, again while it answers "busy", for up to about `busy`.
///
/// SQLite's busy handler does not cover switching a new database to WAL: while several
/// connections create the same catalog at once (two hooks on a first run), the switch answers
/// "locked" at once instead of waiting. Such an opener waits in short sleeps (counted, not
/// timed: the library reads no clock) and tries again; every later step waits in the busy
/// handler itself.
fn setup_waiting(conn: &Connection, setup: &str, busy: Duration) -> rusqlite::Result<()> {
    const STEP: Duration = Duration::from_millis(5);
    let tries = busy.as_millis() / STEP.as_millis();
    let mut tried = 0;
    loop {
        match conn.execute_batch(setup) {
            Err(e)
                if tried < tries
                    && matches!(
                        e.sqlite_error_code(),
                        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
                    ) =>
            {
                tried += 1;
                std::thread::sleep(STEP);
            }
            other => return other,
        }
    }
}

enum Unusable {
    /// Delete the files and start again.
    Rebuild(String),
    /// Cannot be helped by rebuilding (permissions, locked, disk).
    Fatal(Error),
}

fn classify(path: &Path, e: rusqlite::Error) -> Unusable {
    match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => {
            Unusable::Rebuild(e.to_string())
        }
        _ => Unusable::Fatal(Error::sql(path, e)),
    }
}

fn try_open(path: &Path, busy: Duration) -> std::result::Result<Connection, Unusable> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        create_private_dir(dir).map_err(|e| Unusable::Fatal(Error::io(dir, e)))?;
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(|e| classify(path, e))?;
    restrict_mode(path);
    conn.busy_timeout(busy).map_err(|e| classify(path, e))?;
    // Derived data: no fsync at all (a process killed at any point loses nothing the OS has;
    // after a power loss a damaged catalog is rebuilt). The fsyncs of checkpoints cost the
    // hook and every short command tens of milliseconds on a busy disk. Pages are read through
    // a memory map of up to 256 MiB (the catalog of 1 GB of transcripts is ~90 MB): a short
    // command then takes them from the page cache without copying each into a fresh buffer
    // (`usage daily` from the catalog: ~750 fewer page faults, 0.7-1.5 ms of ~30).
    let setup = "PRAGMA journal_mode = WAL; PRAGMA synchronous = OFF; \
                 PRAGMA foreign_keys = OFF; PRAGMA temp_store = MEMORY; \
                 PRAGMA cache_size = -32768; PRAGMA mmap_size = 268435456;";
    setup_waiting(&conn, setup, busy).map_err(|e| classify(path, e))?;
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(|e| classify(path, e))?;
    if version > SCHEMA_VERSION {
        return Err(Unusable::Rebuild(format!(
            "schema version {version} is newer than this skein's {SCHEMA_VERSION}"
        )));
    }
    if version > 0 && version < OLDEST_MIGRATED {
        return Err(Unusable::Rebuild(format!(
            "schema version {version} is older than this skein's {SCHEMA_VERSION}"
        )));
    }
    if version < SCHEMA_VERSION {
        migrate(&conn).map_err(|e| classify(path, e))?;
    } else {
        // A cheap probe: the tables this version needs are there and readable (one page: a
        // count of the whole table would read all of it on every open).
        conn.query_row(
            "SELECT count(*) FROM (SELECT 1 FROM sources LIMIT 1)",
            [],
            |_| Ok(()),
        )
        .map_err(|e| match e.sqlite_error_code() {
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => {
                Unusable::Fatal(Error::sql(path, e))
            }
            _ => Unusable::Rebuild(e.to_string()),
        })?;
    }
    Ok(conn)
}

/// Applies the migrations from `from` to [`SCHEMA_VERSION`] in one write transaction (a
/// concurrent opener waits on the busy timeout and then sees the new version).
fn migrate(conn: &Connection) -> rusqlite::Result<()> {
    write_transaction(conn, || {
        // Read again under the write lock: another process may have migrated meanwhile.
        let current: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        for (v, sql) in MIGRATIONS
            .iter()
            .enumerate()
            .skip(usize::try_from(current).unwrap_or(usize::MAX))
        {
            conn.execute_batch(sql)?;
            conn.execute_batch(&format!("PRAGMA user_version = {}", v + 1))?;
        }
        Ok(())
    })
}

/// Runs `f` in a `BEGIN IMMEDIATE` transaction: committed when it succeeds, rolled back
/// otherwise.
pub(crate) fn write_transaction<T>(
    conn: &Connection,
    f: impl FnOnce() -> rusqlite::Result<T>,
) -> rusqlite::Result<T> {
    conn.execute_batch("BEGIN IMMEDIATE")?;
    match f() {
        Ok(v) => conn.execute_batch("COMMIT").map(|()| v),
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

/// Runs `f` in one read transaction: all its queries see one snapshot of the catalog, whatever
/// other connections commit meanwhile (in WAL mode a reader does not block writers). `f` must
/// not write.
pub(crate) fn read_snapshot<T>(
    conn: &Connection,
    f: impl FnOnce() -> rusqlite::Result<T>,
) -> rusqlite::Result<T> {
    conn.execute_batch("BEGIN DEFERRED")?;
    let out = f();
    // Nothing was written: ending the transaction either way loses nothing.
    let end = conn.execute_batch("COMMIT");
    let v = out?;
    end.map(|()| v)
}

/// The database file and its WAL and shared-memory files.
pub(crate) fn files(path: &Path) -> [PathBuf; 3] {
    let with = |suffix: &str| {
        let mut s = path.as_os_str().to_owned();
        s.push(suffix);
        PathBuf::from(s)
    };
    [path.to_path_buf(), with("-wal"), with("-shm")]
}

/// Deletes the catalog's files (a rebuild starts from nothing).
pub(crate) fn remove_files(path: &Path) -> Result<()> {
    for f in files(path) {
        match std::fs::remove_file(&f) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(&f, e)),
        }
    }
    Ok(())
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    b.create(dir)
}

/// Everything skein writes under its state directory is 0600.
pub(crate) fn restrict_mode(path: &Path) {
    #[cfg(unix)]
    for f in files(path) {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(m) = std::fs::metadata(&f)
            && m.permissions().mode() & 0o077 != 0
        {
            let _ = std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A catalog of version 5 opens migrated, its data kept, its remembered report results
    /// dropped (they were keyed by directory name) and the new key in place.
    #[test]
    fn a_version_5_catalog_is_migrated_and_forgets_its_report_results() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("c.db");
        {
            let conn = Connection::open(&path).expect("create");
            for sql in &MIGRATIONS[..5] {
                conn.execute_batch(sql).expect("migrate");
            }
            conn.execute_batch(
                "PRAGMA user_version = 5; UPDATE settings SET value = 'kept' WHERE key = 'redacted';
                 INSERT INTO report_cache VALUES ('tools', '-p', 's', 1, x'00');",
            )
            .expect("v5 rows");
        }
        let (conn, opened) = open(&path, Duration::from_secs(5)).expect("open");
        assert_eq!(opened, Opened::Existing);
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .expect("version");
        assert_eq!(version, SCHEMA_VERSION);
        let kept: String = conn
            .query_row(
                "SELECT value FROM settings WHERE key = 'redacted'",
                [],
                |r| r.get(0),
            )
            .expect("settings");
        assert_eq!(kept, "kept");
        let cached: i64 = conn
            .query_row(
                "SELECT count(*) FROM report_cache WHERE dir IS NOT NULL",
                [],
                |r| r.get(0),
            )
            .expect("report_cache has dir");
        assert_eq!(cached, 0);
    }

    #[test]
    fn the_index_is_created_with_the_snippets_tokenizer() {
        assert!(SCHEMA_V1.contains(&format!("tokenize = '{TOKENIZER}'")));
    }

    /// Every query inside `read_snapshot` sees the catalog as it was at the first one, though
    /// another connection commits in between: what a fast refresh reads ahead agrees with the
    /// source rows it read first.
    #[test]
    fn a_read_snapshot_does_not_see_later_commits() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("c.db");
        let (reader, _) = open(&path, Duration::from_secs(5)).expect("open");
        let (writer, _) = open(&path, Duration::from_secs(5)).expect("open");
        writer
            .execute_batch("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1);")
            .expect("create");
        let count = |c: &Connection| -> i64 {
            c.query_row("SELECT count(*) FROM t", [], |r| r.get(0))
                .expect("count")
        };
        let (first, second) = read_snapshot(&reader, || {
            let first = count(&reader);
            writer
                .execute("INSERT INTO t VALUES (2)", [])
                .expect("insert");
            Ok((first, count(&reader)))
        })
        .expect("snapshot");
        assert_eq!((first, second), (1, 1));
        assert_eq!(count(&reader), 2, "the next read sees the commit");
    }
}
