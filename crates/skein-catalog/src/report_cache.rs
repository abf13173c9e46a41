//! Per-session results of the reports that read whole sessions (`skein tools --by name`,
//! `skein skills`), remembered with a fingerprint of the session's files: a report takes the
//! result of every session whose files are unchanged from here and reads only the others.
//! The result is what the report's own code computed from the transcripts, so an answer from
//! here is the scan's answer by construction.
//!
//! Bodies are the caller's bytes (JSON), stored zstd-compressed. What the reports keep holds
//! ids, names, sizes and times, never a tool input or any other text of a transcript (so a
//! redacted catalog holds nothing a redaction would have removed).

use std::collections::HashMap;
use std::hash::Hasher as _;
use std::path::Path;

use rusqlite::{Connection, params};
use skein_layout::SessionFiles;
use twox_hash::XxHash3_64;

use crate::db::write_transaction;

/// (project directory, session id) → (fingerprint, compressed body: [`unpack`] it on a hit).
pub type CachedResults = HashMap<(String, String), (u64, Vec<u8>)>;

/// One session's result to remember.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionResult {
    /// The session's project directory ([`SessionFiles::project_dir`]), whole: a session is
    /// remembered under its directory, not its directory's name, which other sessions of the
    /// same id can share.
    pub dir: String,
    /// The directory's name ([`SessionFiles::project`]).
    pub project: String,
    pub session_id: String,
    /// [`session_fingerprint`] of the files it was computed from.
    pub fingerprint: u64,
    pub body: Vec<u8>,
}

/// The key a session's result is remembered under in [`CachedResults`]: its project directory,
/// whole (not its name, which sessions of the same id in other directories can share), and its
/// id.
pub fn session_key(files: &SessionFiles) -> (String, String) {
    (
        files.project_dir.to_string_lossy().into_owned(),
        files.session_id.clone(),
    )
}

impl SessionResult {
    /// The result `body` of the session `files`, computed from files of `fingerprint`.
    pub fn new(files: &SessionFiles, fingerprint: u64, body: Vec<u8>) -> Self {
        let (dir, session_id) = session_key(files);
        Self {
            dir,
            project: files.project(),
            session_id,
            fingerprint,
            body,
        }
    }
}

/// A fingerprint of `files` as they are now: their paths, sidecar metadata, sizes,
/// modification times and inode numbers. `None` when a file cannot be stat'ed (the report
/// then reads the session, and reports the problem itself).
pub fn session_fingerprint(files: &SessionFiles, report_version: &str) -> Option<u64> {
    let mut h = XxHash3_64::with_seed(0);
    h.write(report_version.as_bytes());
    h.write(serde_json::to_string(files).ok()?.as_bytes());
    for path in files.files() {
        stat_into(&mut h, path)?;
    }
    Some(h.finish())
}

fn stat_into(h: &mut XxHash3_64, path: &Path) -> Option<()> {
    use std::os::unix::fs::MetadataExt as _;
    let m = std::fs::metadata(path).ok()?;
    for v in [m.len(), m.ino(), m.dev()] {
        h.write_u64(v);
    }
    h.write_i64(m.mtime());
    h.write_i64(m.mtime_nsec());
    Some(())
}

/// Every result remembered for `report`, still compressed: only the sessions a report asks
/// for are decompressed ([`unpack`]), not every session ever remembered.
pub(crate) fn load(conn: &Connection, report: &str) -> rusqlite::Result<CachedResults> {
    let mut stmt = conn.prepare_cached(
        "SELECT dir, session_id, fingerprint, body FROM report_cache WHERE report = ?1",
    )?;
    let rows = stmt.query_map([report], |r| {
        let fp: i64 = r.get(2)?;
        Ok(((r.get(0)?, r.get(1)?), (fp.cast_unsigned(), r.get(3)?)))
    })?;
    rows.collect()
}

/// A remembered body, decompressed; `None` when it does not decompress (the session is then
/// read again).
pub fn unpack(packed: &[u8]) -> Option<Vec<u8>> {
    // One decompression context per thread: creating one per body was a seventh of a
    // remembered `tools --by name` on the bench tree (3,480 sessions).
    thread_local! {
        static CONTEXT: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
            const { std::cell::RefCell::new(None) };
    }
    CONTEXT.with(|c| {
        let mut c = c.borrow_mut();
        if c.is_none() {
            *c = zstd::bulk::Decompressor::new().ok();
        }
        c.as_mut()?.decompress(packed, MAX_BODY).ok()
    })
}

/// Bodies larger than this are not remembered (a session with millions of tool calls is
/// read each time rather than held in memory twice).
const MAX_BODY: usize = 256 << 20;

/// Remembers `results` for `report`, replacing what was there for those sessions, in one
/// transaction.
pub(crate) fn store(
    conn: &Connection,
    report: &str,
    results: &[SessionResult],
) -> rusqlite::Result<()> {
    write_transaction(conn, || {
        let mut stmt = conn.prepare_cached(
            "INSERT OR REPLACE INTO report_cache \
             (report, dir, project, session_id, fingerprint, body) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?;
        let failed = |e: std::io::Error| rusqlite::Error::ToSqlConversionFailure(Box::new(e));
        let mut compressor = zstd::bulk::Compressor::new(1).map_err(failed)?;
        for r in results {
            if r.body.len() > MAX_BODY {
                continue;
            }
            let packed = compressor.compress(&r.body).map_err(failed)?;
            let fp = r.fingerprint.cast_signed();
            stmt.execute(params![report, r.dir, r.project, r.session_id, fp, packed])?;
        }
        Ok(())
    })
}

/// Forgets the results of sessions that have no source left in the catalog (their files were
/// deleted, and no archive holds them): what the cache keeps is small, but a deleted session
/// should leave nothing behind. Runs inside the refresh's transaction that removed sources.
pub(crate) fn forget_orphans(conn: &Connection) -> rusqlite::Result<usize> {
    conn.prepare_cached(
        "DELETE FROM report_cache WHERE NOT EXISTS (SELECT 1 FROM sources s \
         WHERE s.session_id = report_cache.session_id AND s.project = report_cache.project)",
    )?
    .execute([])
}
