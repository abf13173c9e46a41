//! Usage by time rather than by session, for the status line: the request copies of a time
//! window, where the latest run of activity began, one session's copies, and a transcript's
//! latest prompt size. Each is one indexed query (`requests_time`, `sources_session`), so a
//! status line costs milliseconds however large the catalog is.

use rusqlite::OptionalExtension;
use skein_reports::usage::RequestCopy;

use crate::Catalog;
use crate::error::{Error, Result};
use crate::usage::{COPY_COLUMNS, copy_of};

/// Rows read at most when looking back for a gap in activity (about a month of heavy use).
const MAX_LOOKBACK_ROWS: usize = 1_000_000;

/// One session's copies in a window, in the scanner's order (main transcript first, then the
/// agent files by path, each file's copies in file order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionCopies {
    pub session_id: String,
    pub project: String,
    pub copies: Vec<RequestCopy>,
}

impl Catalog {
    /// Every copy with a timestamp in `from_ms..=to_ms`, grouped by session (sessions by
    /// project, then id, as discovery orders them). Archived copies shadowed by a live file
    /// are left out.
    pub fn copies_between(&self, from_ms: i64, to_ms: i64) -> Result<Vec<SessionCopies>> {
        let sql = format!(
            "SELECT s.session_id, s.project, {} FROM requests r JOIN sources s ON s.id = r.source_id \
             WHERE r.ts_ms BETWEEN ?1 AND ?2 AND s.shadowed = 0 \
             ORDER BY s.project, s.session_id, s.agent_id IS NOT NULL, s.path, r.seq",
            qualified("r")
        );
        let run = || -> rusqlite::Result<Vec<SessionCopies>> {
            let mut stmt = self.conn.prepare_cached(&sql)?;
            let mut rows = stmt.query([from_ms, to_ms])?;
            let mut out: Vec<SessionCopies> = Vec::new();
            while let Some(r) = rows.next()? {
                let (sid, project): (String, String) = (r.get(0)?, r.get(1)?);
                let copy = copy_of(r, 2)?;
                match out.last_mut() {
                    Some(s) if s.session_id == sid && s.project == project => s.copies.push(copy),
                    _ => out.push(SessionCopies {
                        session_id: sid,
                        project,
                        copies: vec![copy],
                    }),
                }
            }
            Ok(out)
        };
        run().map_err(|e| Error::sql(&self.path, e))
    }

    /// The start of the run of activity `now_ms` is in: the timestamp of the first copy after
    /// the last quiet time longer than `gap_ms`; `None` when the latest copy at or before
    /// `now_ms` is more than `gap_ms` before it (no billing block can be active then). Blocks
    /// restart after such a gap, so the blocks from there on are those of the whole history.
    /// Looks back at most a million copies.
    pub fn activity_start(&self, now_ms: i64, gap_ms: i64) -> Result<Option<i64>> {
        let run = || -> rusqlite::Result<Option<i64>> {
            let mut stmt = self.conn.prepare_cached(
                "SELECT ts_ms FROM requests WHERE ts_ms <= ?1 ORDER BY ts_ms DESC",
            )?;
            let mut rows = stmt.query([now_ms])?;
            let mut start: Option<i64> = None;
            let mut last = now_ms;
            for _ in 0..MAX_LOOKBACK_ROWS {
                let Some(r) = rows.next()? else { break };
                let ts: i64 = r.get(0)?;
                if last - ts > gap_ms {
                    break;
                }
                start = Some(ts);
                last = ts;
            }
            Ok(start)
        };
        run().map_err(|e| Error::sql(&self.path, e))
    }

    /// Every copy of session `session_id` (in `project` when given), in the scanner's order.
    pub fn session_copies(
        &self,
        session_id: &str,
        project: Option<&str>,
    ) -> Result<Vec<RequestCopy>> {
        let sql = format!(
            "SELECT {} FROM requests r JOIN sources s ON s.id = r.source_id \
             WHERE s.session_id = ?1 AND (?2 IS NULL OR s.project = ?2) AND s.shadowed = 0 \
             ORDER BY s.agent_id IS NOT NULL, s.path, r.seq",
            qualified("r")
        );
        let run = || -> rusqlite::Result<Vec<RequestCopy>> {
            let mut stmt = self.conn.prepare_cached(&sql)?;
            let rows = stmt.query_map(rusqlite::params![session_id, project], |r| copy_of(r, 0))?;
            rows.collect()
        };
        run().map_err(|e| Error::sql(&self.path, e))
    }

    /// The prompt size (input + cache writes + cache reads) of the last non-sidechain copy
    /// catalogued from the file at `path` (absolute), in file order, if any.
    pub fn latest_prompt_tokens(&self, path: &str) -> Result<Option<u64>> {
        self.conn
            .query_row(
                "SELECT r.input + r.cache_creation + r.cache_read FROM requests r \
                 JOIN sources s ON s.id = r.source_id \
                 WHERE s.path = ?1 AND r.sidechain = 0 ORDER BY r.seq DESC LIMIT 1",
                [path],
                |r| r.get::<_, i64>(0),
            )
            .optional()
            .map(|v| v.map(|n| n.max(0) as u64))
            .map_err(|e| Error::sql(&self.path, e))
    }
}

/// [`COPY_COLUMNS`] prefixed with a table alias.
fn qualified(alias: &str) -> String {
    COPY_COLUMNS
        .split(',')
        .map(|c| format!("{alias}.{}", c.trim()))
        .collect::<Vec<_>>()
        .join(", ")
}
