//! Usage from the catalog: a session's request copies exactly as `skein usage`'s scanner would
//! produce them from the files (same groups, same order, same counters), so the report built
//! from them is byte for byte the scan path's.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use rusqlite::{Connection, OptionalExtension};
use skein_core::SliceLines;
use skein_layout::SessionFiles;
use skein_reports::usage::{RequestCopy, SessionScan, Source as Origin, Tokens, UsageScanner};

use crate::error::{Error, Result};
use crate::write::origin_of;

struct Row {
    id: i64,
    size: u64,
    offset: u64,
    archived: bool,
    usage_lines: u64,
    usage_invalid: u64,
    usage_no_timestamp: u64,
}

fn source_row(conn: &Connection, path: &str) -> rusqlite::Result<Option<Row>> {
    conn.prepare_cached(
        "SELECT id, size, offset, archived, usage_lines, usage_invalid, usage_no_timestamp \
         FROM sources WHERE path = ?1",
    )?
    .query_row([path], |r| {
        let u = |i: usize| r.get::<_, i64>(i).map(|v| v.max(0) as u64);
        Ok(Row {
            id: r.get(0)?,
            size: u(1)?,
            offset: u(2)?,
            archived: r.get(3)?,
            usage_lines: u(4)?,
            usage_invalid: u(5)?,
            usage_no_timestamp: u(6)?,
        })
    })
    .optional()
}

/// The copies of one catalogued file, in the scanner's order.
pub(crate) fn copies(conn: &Connection, source_id: i64) -> rusqlite::Result<Vec<RequestCopy>> {
    let mut stmt = conn.prepare_cached(
        "SELECT message_id, request_id, sidechain, origin, model, input, output, cache_creation, \
         cache_5m, cache_1h, cache_read, ts_ms, foreign_session FROM requests \
         WHERE source_id = ?1 ORDER BY seq",
    )?;
    let rows = stmt.query_map([source_id], |r| {
        let u = |i: usize| r.get::<_, i64>(i).map(|v| v as u64);
        let rid: String = r.get(1)?;
        Ok(RequestCopy {
            message_id: r.get::<_, Option<String>>(0)?.map(Into::into),
            request_id: (!rid.is_empty()).then(|| rid.into()),
            sidechain: r.get(2)?,
            source: origin_of(r.get(3)?),
            model: r.get::<_, Option<String>>(4)?.map(Into::into),
            tokens: Tokens {
                input: u(5)?,
                output: u(6)?,
                cache_creation: u(7)?,
                cache_creation_5m: u(8)?,
                cache_creation_1h: u(9)?,
                cache_read: u(10)?,
            },
            timestamp_ms: r.get(11)?,
            foreign_session: r.get(12)?,
        })
    })?;
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
            let (t, o) = (&mut g.tokens, &c.tokens);
            t.input = t.input.max(o.input);
            t.output = t.output.max(o.output);
            t.cache_creation = t.cache_creation.max(o.cache_creation);
            t.cache_creation_5m = t.cache_creation_5m.max(o.cache_creation_5m);
            t.cache_creation_1h = t.cache_creation_1h.max(o.cache_creation_1h);
            t.cache_read = t.cache_read.max(o.cache_read);
            g.timestamp_ms = g.timestamp_ms.min(c.timestamp_ms);
            if g.model.is_none() {
                g.model = c.model;
            }
        } else {
            into.push(c);
        }
    }
}

/// The scan of `files` from the catalog, `None` when some file is not catalogued at its
/// current size (then the caller scans).
pub(crate) fn session_scan(
    conn: &Connection,
    db: &Path,
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
        let abs = std::path::absolute(path).unwrap_or_else(|_| path.clone());
        let Some(row) =
            source_row(conn, &abs.to_string_lossy()).map_err(|e| Error::sql(db, e))?
        else {
            return Ok(None);
        };
        let Ok(meta) = std::fs::metadata(path) else {
            return Ok(None);
        };
        let size = meta.len();
        if row.archived {
            // The stored size is the committed length indexed; the file may be longer by an
            // uncommitted frame, never read.
            if size < row.size {
                return Ok(None);
            }
        } else if size != row.size {
            return Ok(None);
        }
        let mut copies = copies(conn, row.id).map_err(|e| Error::sql(db, e))?;
        scan.files += 1;
        scan.usage_lines += row.usage_lines;
        scan.invalid_lines += row.usage_invalid;
        scan.no_timestamp += row.usage_no_timestamp;
        if !row.archived && size > row.offset {
            // A torn last line is read by the scanner too: scan it the same way.
            let mut tail = Vec::new();
            let mut f = File::open(path).map_err(|e| Error::io(path, e))?;
            f.seek(SeekFrom::Start(row.offset))
                .and_then(|_| f.take(size - row.offset).read_to_end(&mut tail))
                .map_err(|e| Error::io(path, e))?;
            let mut t = SessionScan::default();
            scanner
                .scan_lines(SliceLines::new(&tail), &files.session_id, origin, &mut t)
                .map_err(|e| Error::io(path, e))?;
            scan.usage_lines += t.usage_lines;
            scan.invalid_lines += t.invalid_lines;
            scan.no_timestamp += t.no_timestamp;
            merge(&mut copies, t.copies);
            scan.bytes += size;
        } else {
            scan.bytes += row.offset;
        }
        scan.copies.append(&mut copies);
    }
    Ok(Some(scan))
}
