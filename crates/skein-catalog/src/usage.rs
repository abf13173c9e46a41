//! Usage from the catalog: a session's request copies exactly as `skein usage`'s scanner would
//! produce them from the files (same groups, same order, same counters), so the report built
//! from them is byte for byte the scan path's.
//!
//! [`session_scans`] gives every copy, for any input and report; `groups.rs` gives most of
//! them pre-summed, for the reports by period, session and model.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use rustc_hash::{FxHashMap, FxHashSet};

use rusqlite::Connection;
use skein_core::SliceLines;
use skein_layout::SessionFiles;
use skein_reports::usage::{RequestCopy, SessionScan, Source as Origin, Tokens, UsageScanner};

use crate::error::{Error, Result};
use crate::refresh::Rows;
use crate::write::origin_of;

pub(crate) const COPY_COLUMNS: &str = "message_id, request_id, sidechain, origin, model, input, output, \
                            cache_creation, cache_5m, cache_1h, cache_read, ts_ms, foreign_session, \
                            progress_agent";

/// The six token counters in columns `at..at + 6` (input, output, cache creation, its 5-minute
/// and 1-hour parts, cache read), as `requests` and `usage_groups` store them.
pub(crate) fn tokens_at(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<Tokens> {
    let u = |i: usize| r.get::<_, i64>(at + i).map(|v| v as u64);
    Ok(Tokens {
        input: u(0)?,
        output: u(1)?,
        cache_creation: u(2)?,
        cache_creation_5m: u(3)?,
        cache_creation_1h: u(4)?,
        cache_read: u(5)?,
    })
}

pub(crate) fn copy_of(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<RequestCopy> {
    let rid: String = r.get(at + 1)?;
    Ok(RequestCopy {
        message_id: r.get::<_, Option<String>>(at)?.map(Into::into),
        request_id: (!rid.is_empty()).then(|| rid.into()),
        sidechain: r.get(at + 2)?,
        source: origin_of(r.get(at + 3)?),
        model: r.get::<_, Option<String>>(at + 4)?.map(Into::into),
        tokens: tokens_at(r, at + 5)?,
        timestamp_ms: r.get(at + 11)?,
        foreign_session: r.get(at + 12)?,
        // A progress copy's own agent; the file's agent for the others (set by the caller).
        agent_id: r.get::<_, Option<String>>(at + 13)?.map(Into::into),
    })
}

/// Every catalogued copy, by source id, each source's in the scanner's order (one pass over
/// the table).
fn all_copies(conn: &Connection) -> rusqlite::Result<FxHashMap<i64, Vec<RequestCopy>>> {
    copies_by_source(conn, "")
}

/// The copies of `requests` that pass `filter` (an SQL `WHERE …` clause, or empty), by source
/// id, each source's in the scanner's order.
pub(crate) fn copies_by_source(
    conn: &Connection,
    filter: &str,
) -> rusqlite::Result<FxHashMap<i64, Vec<RequestCopy>>> {
    let mut stmt = conn.prepare(&format!(
        "SELECT source_id, {COPY_COLUMNS} FROM requests {filter} ORDER BY source_id, seq"
    ))?;
    let mut out: FxHashMap<i64, Vec<RequestCopy>> = FxHashMap::default();
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        out.entry(r.get(0)?).or_default().push(copy_of(r, 1)?);
    }
    Ok(out)
}

/// The copies of one catalogued file, in the scanner's order.
pub(crate) fn copies(conn: &Connection, source_id: i64) -> rusqlite::Result<Vec<RequestCopy>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COPY_COLUMNS} FROM requests WHERE source_id = ?1 ORDER BY seq"
    ))?;
    let rows = stmt.query_map([source_id], |r| copy_of(r, 0))?;
    rows.collect()
}

/// Same group: what the scanner's per-file grouping merges.
fn same_group(a: &RequestCopy, b: &RequestCopy) -> bool {
    a.message_id.is_some()
        && a.message_id == b.message_id
        && a.request_id.as_deref().unwrap_or("") == b.request_id.as_deref().unwrap_or("")
        && a.sidechain == b.sidechain
}

/// Adds the copies of a file's later bytes to those of its earlier bytes, as one scan of the
/// whole file would have grouped them.
fn merge(into: &mut Vec<RequestCopy>, later: Vec<RequestCopy>) {
    let first_new = into.len();
    for c in later {
        if let Some(g) = into[..first_new].iter_mut().find(|g| same_group(g, &c)) {
            g.tokens.max_with(&c.tokens);
            g.timestamp_ms = g.timestamp_ms.min(c.timestamp_ms);
            if g.model.is_none() {
                g.model = c.model;
            }
        } else {
            into.push(c);
        }
    }
}

/// The scans of `sessions` from the catalog, in order; `None` for a session with a file that
/// is not catalogued at its current size (the caller scans that one).
pub(crate) fn session_scans(
    conn: &Connection,
    db: &Path,
    rows: &Rows,
    sessions: &[SessionFiles],
    scanner: &mut UsageScanner,
) -> Result<Vec<Option<SessionScan>>> {
    let mut copies = all_copies(conn).map_err(|e| Error::sql(db, e))?;
    let mut out = Vec::with_capacity(sessions.len());
    let mut used = FxHashSet::default();
    let mut lookup = crate::refresh::RowLookup::new(rows);
    for files in sessions {
        out.push(one(&mut lookup, &mut copies, &mut used, files, scanner)?);
    }
    Ok(out)
}

fn one(
    rows: &mut crate::refresh::RowLookup<'_>,
    copies: &mut FxHashMap<i64, Vec<RequestCopy>>,
    used: &mut FxHashSet<i64>,
    files: &SessionFiles,
    scanner: &mut UsageScanner,
) -> Result<Option<SessionScan>> {
    let mut scan = SessionScan::default();
    let origins = files
        .main
        .iter()
        .map(|p| (p, Origin::Main))
        .chain(files.agents.iter().map(|a| {
            (
                &a.path,
                if a.internal {
                    Origin::InternalAgent
                } else {
                    Origin::Subagent
                },
            )
        }));
    for (path, origin) in origins {
        let Some(row) = rows.get(path) else {
            return Ok(None);
        };
        // The caller refreshed the catalog for these files just before: a file read to its
        // end has its size recorded (the committed length, for an archive file); one that a
        // concurrent writer left half-way has none, and is scanned.
        if row.facts.unknown_size {
            return Ok(None);
        }
        // A file with skipped usage lines is scanned, so that the warning can name the lines
        // (the catalog keeps only their counts); such files are rare.
        if row.facts.usage_invalid > 0 || row.facts.usage_no_timestamp > 0 {
            return Ok(None);
        }
        let size = row.stat.size;
        // A file listed twice (never by the layout) would find its copies taken: scan then.
        if !used.insert(row.id) {
            return Ok(None);
        }
        let mut file_copies = copies.remove(&row.id).unwrap_or_default();
        for c in &mut file_copies {
            if c.source != Origin::Progress {
                c.agent_id = row.facts.agent_id.as_deref().map(Into::into);
            }
        }
        scan.files += 1;
        scan.usage_lines += row.facts.usage_lines;
        scan.invalid_lines += row.facts.usage_invalid;
        scan.no_timestamp += row.facts.usage_no_timestamp;
        if !row.archived && size > row.offset {
            // A torn last line is read by the scanner too: scan it the same way.
            let mut tail = Vec::new();
            let mut f = File::open(path).map_err(|e| Error::io(path, e))?;
            f.seek(SeekFrom::Start(row.offset))
                .and_then(|_| f.take(size - row.offset).read_to_end(&mut tail))
                .map_err(|e| Error::io(path, e))?;
            let mut t = SessionScan::default();
            scanner
                .scan_agent_lines(
                    SliceLines::new(&tail),
                    &files.session_id,
                    origin,
                    row.facts.agent_id.as_deref(),
                    &mut t,
                )
                .map_err(|e| Error::io(path, e))?;
            scan.usage_lines += t.usage_lines;
            scan.invalid_lines += t.invalid_lines;
            scan.no_timestamp += t.no_timestamp;
            merge(&mut file_copies, t.copies);
            scan.bytes += size;
        } else {
            scan.bytes += row.offset;
        }
        scan.copies.append(&mut file_copies);
    }
    Ok(Some(scan))
}
