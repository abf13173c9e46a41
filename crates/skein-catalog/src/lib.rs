//! The catalog: an incremental index of every session, live and archived, in one SQLite file
//! (WAL, FTS5). It is derived data: rebuilt from the transcripts and the archive at any time,
//! and a corrupt or newer-schema file is replaced, never fatal.
//!
//! * [`db`](mod@db): schema, versions, migrations, opening (and rebuilding).
//! * [`track`]: what was indexed of each source file (identity, size, offset, hashes) and
//!   what a refresh must do with it now.
//! * [`extract`]: what one line holds for the catalog (text blocks, facts, tool calls).
//! * [`index`]: reading a source's new complete lines into batches (worker threads).
//! * [`write`]: applying batches on the one writer; [`refresh`](mod@refresh) orchestrates.
//! * Queries: [`sessions`](mod@sessions), [`search`](mod@search) (with [`query`] syntax and
//!   snippets read back from the sources), usage copies for `skein usage` ([`usage`]), and
//!   usage by time for the status line ([`window`]).
//! * [`report_cache`]: per-session results of `tools --by name` and `skills`, kept with a
//!   fingerprint of the session's files.
//!
//! The library reads no environment and no clock and prints nothing; the caller gives the
//! database path, the sources (from `skein-layout`) and the options.

#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "the catalog owns its I/O: the database file, and reading the sources it indexes; it \
              reads no environment and no clock (the caller passes both)"
)]

pub mod db;
pub mod error;
pub mod extract;
mod groups;
mod index;
pub mod query;
pub mod refresh;
pub mod report_cache;
mod roots;
pub mod search;
pub mod sessions;
mod snippet;
mod stat_queue;
mod track;
mod usage;
mod window;
mod write;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::Connection;
use skein_layout::{Env, SessionFiles, Source};
use skein_reports::pricing::PricingTable;
use skein_reports::usage::{SessionScan, UsageScanner};

pub use db::{Opened, SCHEMA_VERSION};
pub use error::{Error, Result};
pub use extract::DocKind;
pub use groups::SessionUsage;
pub use refresh::{Progress, RefreshOptions, RefreshReport};
pub use roots::RootsReport;
pub use search::{Hit, SearchQuery};
pub use sessions::{SessionQuery, SessionRow};
pub use window::SessionCopies;

/// Default cap on the text indexed per tool result or tool input block.
pub const DEFAULT_RESULT_CAP: usize = 16 * 1024;

/// The catalog file's name in skein's state directory.
pub const FILE_NAME: &str = "catalog.db";

/// `<state>/catalog.db` (`$XDG_STATE_HOME/skein/catalog.db`, else
/// `~/.local/state/skein/catalog.db`).
pub fn default_path(env: &Env) -> Option<PathBuf> {
    env.state_root().map(|d| d.join(FILE_NAME))
}

/// The lock file that one background indexer of the catalog at `db` holds (`skein index
/// --if-idle`): beside it, in the same private directory.
pub fn index_lock_path(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(".index-lock");
    PathBuf::from(name)
}

/// How to open the catalog.
#[derive(Debug, Clone)]
pub struct CatalogOptions {
    /// Bytes of text indexed per tool result or tool input block.
    pub result_cap: usize,
    /// How long a writer waits for another one (SQLite's busy timeout).
    pub busy_timeout: Duration,
    /// Redact every line with these rules before indexing it (and before showing a search
    /// snippet). A catalog that holds content indexed without redaction is rebuilt when it is
    /// opened with redaction on, so no earlier secret stays in it.
    pub redact: Option<skein_redact::RedactOptions>,
}

impl Default for CatalogOptions {
    fn default() -> Self {
        Self {
            result_cap: DEFAULT_RESULT_CAP,
            busy_timeout: Duration::from_secs(5),
            redact: None,
        }
    }
}

/// Sizes and counts, for `skein index`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct CatalogStats {
    pub sources: u64,
    pub sessions: u64,
    /// Content bytes indexed.
    pub indexed_bytes: u64,
    pub requests: u64,
    pub tool_calls: u64,
    pub docs: u64,
    /// The database file with its WAL.
    pub file_bytes: u64,
}

/// An open catalog.
#[derive(Debug)]
pub struct Catalog {
    conn: Connection,
    path: PathBuf,
    options: CatalogOptions,
    opened: Opened,
    /// Built on first use: a status line that finds nothing new never compiles the rules.
    extract: std::sync::OnceLock<extract::ExtractOptions>,
    /// The sources' usage facts, read once after a refresh for the listing and the usage of
    /// one command (a refresh clears them).
    rows: std::cell::OnceCell<refresh::Rows>,
    /// The sessions the last refresh of roots kept or grouped, for [`Catalog::listed_sessions`].
    listing: std::cell::RefCell<Option<roots::Listing>>,
    /// Set by [`Catalog::read_usage_ahead`].
    read_ahead: bool,
    /// The usage groups the last refresh of roots read ahead, for [`Catalog::usage_groups`].
    ahead: std::cell::RefCell<Option<groups::Ahead>>,
}

impl Catalog {
    /// Opens the catalog at `path`, creating it, migrating it, or rebuilding it when it is
    /// corrupt or of a newer schema (see [`Catalog::opened`]).
    pub fn open(path: &Path, options: CatalogOptions) -> Result<Self> {
        let (mut conn, mut opened) = db::open(path, options.busy_timeout)?;
        let sql = |e| Error::sql(path, e);
        let want = options.redact.is_some();
        if want && !db::is_redacted(&conn).map_err(sql)? {
            if db::has_content(&conn).map_err(sql)? {
                drop(conn);
                db::remove_files(path)?;
                conn = db::open(path, options.busy_timeout)?.0;
                opened = Opened::Rebuilt("it held text indexed without redaction".into());
            }
            db::set_redacted(&conn, true).map_err(sql)?;
        } else if !want && db::is_redacted(&conn).map_err(sql)? {
            db::set_redacted(&conn, false).map_err(sql)?;
        }
        Ok(Self {
            conn,
            path: path.to_path_buf(),
            options,
            opened,
            extract: std::sync::OnceLock::new(),
            rows: std::cell::OnceCell::new(),
            listing: std::cell::RefCell::new(None),
            read_ahead: false,
            ahead: std::cell::RefCell::new(None),
        })
    }

    /// The extraction options, compiling the redaction rules on first use.
    fn extract(&self) -> Result<&extract::ExtractOptions> {
        if let Some(x) = self.extract.get() {
            return Ok(x);
        }
        let redactor = match &self.options.redact {
            Some(r) => Some(std::sync::Arc::new(
                skein_redact::Redactor::new(r).map_err(|e| Error::Redact(e.to_string()))?,
            )),
            None => None,
        };
        Ok(self.extract.get_or_init(|| extract::ExtractOptions {
            cap: self.options.result_cap,
            redactor,
        }))
    }

    /// Deletes the catalog at `path` and opens a new, empty one (`skein index --rebuild`).
    pub fn recreate(path: &Path, options: CatalogOptions) -> Result<Self> {
        db::remove_files(path)?;
        let mut c = Self::open(path, options)?;
        c.opened = Opened::Created;
        Ok(c)
    }

    /// How the file was found.
    pub fn opened(&self) -> &Opened {
        &self.opened
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Brings the catalog up to date for `sources` (see [`RefreshOptions`]); `progress` is
    /// called as bytes are indexed. With nothing new it costs a stat per source and one query.
    pub fn refresh(
        &mut self,
        sources: &[Source],
        options: &RefreshOptions,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<RefreshReport> {
        self.forget_handed();
        let (report, rows) = refresh::refresh_keeping(
            &self.conn,
            &self.path,
            &|| self.extract(),
            sources,
            options,
            progress,
            None,
        )?;
        // Rows handed back (a refresh of many files, or one that deferred) are what the
        // usage queries that follow use.
        if let Some(rows) = rows {
            self.rows = std::cell::OnceCell::from(rows);
        }
        Ok(report)
    }

    /// Drops what the last refresh handed on for a report (rows, sessions, usage read ahead).
    fn forget_handed(&mut self) {
        self.rows = std::cell::OnceCell::new();
        self.listing.replace(None);
        self.ahead.replace(None);
    }

    /// Brings the catalog up to date for everything under `roots` (trees, archives, files;
    /// absolute paths): sources listed by `skein-layout`, new bytes indexed, sources that left
    /// the roots dropped. When no directory under the roots changed since the last such
    /// refresh, the listing is skipped and only the catalogued files are stat'ed.
    pub fn refresh_roots(
        &mut self,
        roots: &[PathBuf],
        options: &RefreshOptions,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<RootsReport> {
        self.forget_handed();
        let mut report = roots::refresh_roots(
            &self.conn,
            &self.path,
            &|| self.extract(),
            roots,
            options,
            options.now_ns,
            self.read_ahead,
            progress,
        )?;
        self.ahead.replace(report.ahead.take());
        // The refresh read every source's row: the report that follows uses them.
        if let Some(rows) = report.rows.take() {
            self.rows = std::cell::OnceCell::from(rows);
        }
        self.listing.replace(report.listing.take());
        Ok(report)
    }

    /// Refreshes one file on the calling thread, at most `limit` new bytes (the hook's and a
    /// status line's entry point).
    pub fn refresh_file(&mut self, source: &Source, limit: u64) -> Result<RefreshReport> {
        self.refresh(
            std::slice::from_ref(source),
            &RefreshOptions {
                threads: 1,
                limit_per_source: limit,
                ..RefreshOptions::default()
            },
            &mut |_| {},
        )
    }

    /// Main sessions, newest first.
    pub fn sessions(&self, q: &SessionQuery, pricing: &PricingTable) -> Result<Vec<SessionRow>> {
        sessions::sessions(&self.conn, &self.path, q, pricing)
    }

    /// Full-text search.
    pub fn search(&self, q: &SearchQuery) -> Result<Vec<Hit>> {
        search::search(&self.conn, &self.path, q, self.extract()?)
    }

    /// The usage scans of sessions' files from the catalog, in order, exactly as `skein
    /// usage`'s scanner reads them; `None` for a session with a file not catalogued to its
    /// end. Call it right after a refresh of these files: the sizes are the refresh's.
    pub fn usage_scans(
        &self,
        sessions: &[SessionFiles],
        scanner: &mut UsageScanner,
    ) -> Result<Vec<Option<SessionScan>>> {
        usage::session_scans(
            &self.conn,
            &self.path,
            self.source_rows()?,
            sessions,
            scanner,
        )
    }

    /// The usage of `sessions` with most requests pre-summed (for the reports by period,
    /// session and model; see [`SessionUsage`]), in order; `None` when some file is not
    /// catalogued to its end. Call it right after a refresh of these files.
    pub fn usage_groups(&self, sessions: &[SessionFiles]) -> Result<Option<Vec<SessionUsage>>> {
        let ahead = self.ahead.take();
        groups::session_groups(&self.conn, &self.path, self.source_rows()?, sessions, ahead)
    }

    /// Has every later [`Catalog::refresh_roots`] that finds nothing to index also read what
    /// [`Catalog::usage_groups`] and [`Catalog::listed_sessions`] read, on the calling thread
    /// while its other threads stat the files, in the snapshot of the source rows it hands on. For a
    /// `usage` report that follows; other commands would read it for nothing.
    pub fn read_usage_ahead(&mut self) {
        self.read_ahead = true;
    }

    /// The sessions of the sources a refresh found under its roots
    /// ([`RootsReport::paths`]), grouped and ordered as `skein-layout`'s discovery does,
    /// without listing the tree again; `None` when that cannot be done from the catalog (an
    /// archive file among them). After a refresh that found no directory changed, these are
    /// the sessions kept with the last listing of the same roots, when they name exactly
    /// `paths`; after one that listed the roots and deferred, the listing's own sessions;
    /// else they are grouped from the catalogued sources.
    pub fn listed_sessions(
        &self,
        paths: &rustc_hash::FxHashSet<String>,
    ) -> Result<Option<Vec<SessionFiles>>> {
        if let Some(listing) = self.listing.take()
            && let Some(kept) = listing
                .sessions(&self.conn)
                .map_err(|e| Error::sql(&self.path, e))?
            && groups::covers(&kept, paths)
        {
            return Ok(Some(kept));
        }
        Ok(groups::listed_sessions(self.source_rows()?, paths))
    }

    /// The sources' rows: those the last refresh of roots read, else read on first use.
    fn source_rows(&self) -> Result<&refresh::Rows> {
        if let Some(rows) = self.rows.get() {
            return Ok(rows);
        }
        let rows = refresh::load_stored(&self.conn).map_err(|e| Error::sql(&self.path, e))?;
        Ok(self.rows.get_or_init(|| rows))
    }

    /// Lets go of the source rows read for the last refresh without freeing them, for a short
    /// command about to exit: freeing thousands of small strings one by one costs more than
    /// the process's exit, which returns the memory at once. A later report reads them again.
    pub fn leak_rows(&mut self) {
        if let Some(rows) = self.rows.take() {
            std::mem::forget(rows);
        }
    }

    /// The per-session results remembered for `report` (see [`report_cache`]).
    pub fn cached_results(&self, report: &str) -> Result<report_cache::CachedResults> {
        report_cache::load(&self.conn, report).map_err(|e| Error::sql(&self.path, e))
    }

    /// Remembers per-session results of `report`.
    pub fn store_results(
        &self,
        report: &str,
        results: &[report_cache::SessionResult],
    ) -> Result<()> {
        report_cache::store(&self.conn, report, results).map_err(|e| Error::sql(&self.path, e))
    }

    /// Counts and sizes.
    pub fn stats(&self) -> Result<CatalogStats> {
        let q = |sql: &str| -> Result<u64> {
            self.conn
                .query_row(sql, [], |r| r.get::<_, i64>(0))
                .map(|v| v.max(0) as u64)
                .map_err(|e| Error::sql(&self.path, e))
        };
        let file_bytes = db::files(&self.path)[..2]
            .iter()
            .filter_map(|f| std::fs::metadata(f).ok())
            .map(|m| m.len())
            .sum();
        Ok(CatalogStats {
            sources: q("SELECT count(*) FROM sources")?,
            sessions: q("SELECT count(*) FROM (SELECT DISTINCT project, session_id FROM sources)")?,
            indexed_bytes: q("SELECT coalesce(sum(offset), 0) FROM sources")?,
            requests: q("SELECT count(*) FROM requests")?,
            tool_calls: q("SELECT count(*) FROM tool_calls")?,
            docs: q("SELECT count(*) FROM docs")?,
            file_bytes,
        })
    }

    /// `PRAGMA integrity_check`: `Ok(())` or the problems found.
    pub fn integrity_check(&self) -> Result<std::result::Result<(), String>> {
        let mut stmt = self
            .conn
            .prepare("PRAGMA integrity_check")
            .map_err(|e| Error::sql(&self.path, e))?;
        let rows: Vec<String> = stmt
            .query_map([], |r| r.get(0))
            .and_then(Iterator::collect)
            .map_err(|e| Error::sql(&self.path, e))?;
        Ok(if rows == ["ok"] {
            Ok(())
        } else {
            Err(rows.join("; "))
        })
    }

    /// Copies the WAL into the database file (after a large index), keeping readers working.
    pub fn checkpoint(&self) -> Result<()> {
        self.conn
            .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
            .map_err(|e| Error::sql(&self.path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The redaction rules (on by default) are compiled only when a refresh has something to
    /// read: an unchanged tree costs its stats, not the rules.
    #[test]
    fn a_refresh_with_nothing_new_builds_no_extraction() {
        let dir = tempfile::tempdir().expect("tmp");
        let project = dir.path().join("projects/-home-me-x");
        std::fs::create_dir_all(&project).expect("mkdir");
        std::fs::write(
            project.join("s1.jsonl"),
            "{\"type\":\"user\",\"sessionId\":\"s1\",\"message\":{\"content\":\"hi\"}}\n",
        )
        .expect("write");
        let options = CatalogOptions {
            redact: Some(skein_redact::RedactOptions::default()),
            ..CatalogOptions::default()
        };
        let db = dir.path().join("c.db");
        let roots = [dir.path().join("projects")];
        let refresh = |c: &mut Catalog| {
            c.refresh_roots(&roots, &RefreshOptions::default(), &mut |_| {})
                .expect("refresh")
        };
        let mut c = Catalog::open(&db, options.clone()).expect("open");
        assert_eq!(refresh(&mut c).refresh.reindexed, 1);
        assert!(
            c.extract.get().is_some(),
            "a new file is read with the rules"
        );
        let mut c = Catalog::open(&db, options).expect("reopen");
        assert_eq!(refresh(&mut c).refresh.unchanged, 1);
        assert!(c.extract.get().is_none());
    }
}
