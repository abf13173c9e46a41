//! Usage from the catalog for the reports by period, session and model: only the *contested*
//! copies (those whose message has another copy somewhere in the catalog) one by one, the
//! others pre-summed in the usage groups (see `write.rs`). An uncontested copy is the only
//! copy of its message in any input that holds it, so the deduplication keeps it: only the
//! contested copies need the deduplication, and their order among themselves is their order
//! among all copies, so it keeps the same ones.
//!
//! Also the sessions of a refreshed scope as `skein-layout` groups them, from the catalogued
//! sources instead of a second listing of the tree.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use rusqlite::Connection;
use skein_layout::{SessionFiles, Source};
use skein_reports::usage::{RequestCopy, RequestGroup, SessionScan, Source as Origin, Tokens};

use crate::error::{Error, Result};
use crate::usage::{COPY_COLUMNS, Row, copy_of, source_rows};
use crate::write::origin_of;

/// How [`session_groups`] answers for one session.
#[derive(Debug)]
pub enum SessionUsage {
    /// The contested copies in `scan` (its counters are those of all the files), the other
    /// requests pre-summed.
    Grouped(SessionScan, Vec<RequestGroup>),
    /// A file of the session has skipped usage lines: scan it, so that the warning can name
    /// them (the catalog keeps only their counts). Its copies are the catalogued ones, so the
    /// contested flags of the other sessions stay true.
    Scan,
}

/// The sessions' usage as contested copies and groups, in order; `None` when some file is
/// not catalogued to its current end (the caller then takes every copy, or scans).
pub(crate) fn session_groups(
    conn: &Connection,
    db: &Path,
    sessions: &[SessionFiles],
) -> Result<Option<Vec<SessionUsage>>> {
    let sql = |e| Error::sql(db, e);
    let rows = source_rows(conn).map_err(sql)?;
    // Each session's catalogued files, in the scanner's order, or why it cannot be answered.
    let mut plan: Vec<Option<Vec<(&Row, Origin)>>> = Vec::with_capacity(sessions.len());
    let mut used = HashSet::new();
    for files in sessions {
        let mut list = Vec::new();
        let mut scan = false;
        for (path, origin) in file_origins(files) {
            let abs = std::path::absolute(path).unwrap_or_else(|_| path.clone());
            let Some(row) = rows.get(abs.to_string_lossy().as_ref()) else {
                return Ok(None);
            };
            // Not read to its end by the refresh just made (a torn last line, a concurrent
            // writer), or listed twice: the copies path handles those.
            if row.unknown_size || (!row.archived && row.size != row.offset) || !used.insert(row.id)
            {
                return Ok(None);
            }
            scan |= row.usage_invalid > 0 || row.usage_no_timestamp > 0;
            list.push((row, origin));
        }
        plan.push((!scan).then_some(list));
    }
    let mut groups = all_groups(conn).map_err(sql)?;
    let mut contested = contested_copies(conn).map_err(sql)?;
    let mut out = Vec::with_capacity(plan.len());
    for list in plan {
        let Some(list) = list else {
            out.push(SessionUsage::Scan);
            continue;
        };
        let mut scan = SessionScan::default();
        let mut summed = Vec::new();
        for (row, _) in list {
            let mut copies = contested.remove(&row.id).unwrap_or_default();
            for c in &mut copies {
                if c.source != Origin::Progress {
                    c.agent_id = row.agent_id.as_deref().map(Into::into);
                }
            }
            scan.copies.append(&mut copies);
            summed.append(&mut groups.remove(&row.id).unwrap_or_default());
            scan.files += 1;
            scan.usage_lines += row.usage_lines;
            scan.bytes += row.offset;
        }
        out.push(SessionUsage::Grouped(scan, summed));
    }
    Ok(Some(out))
}

/// The files of a session, main transcript first, with the origin of their copies.
fn file_origins(files: &SessionFiles) -> impl Iterator<Item = (&std::path::PathBuf, Origin)> {
    files
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
        }))
}

/// Every usage group, by source id.
fn all_groups(conn: &Connection) -> rusqlite::Result<HashMap<i64, Vec<RequestGroup>>> {
    let mut stmt = conn.prepare(
        "SELECT source_id, model, origin, long, requests, input, output, cache_creation, \
         cache_5m, cache_1h, cache_read, first_ms, last_ms FROM usage_groups",
    )?;
    let mut out: HashMap<i64, Vec<RequestGroup>> = HashMap::new();
    // Few distinct models: one allocation each.
    let mut models: HashMap<String, Box<str>> = HashMap::new();
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let u = |i: usize| r.get::<_, i64>(i).map(|v| v as u64);
        let model = match r.get_ref(1)?.as_str_or_null()? {
            None => None,
            Some(m) => Some(match models.get(m) {
                Some(b) => b.clone(),
                None => models.entry(m.to_owned()).or_insert_with(|| m.into()).clone(),
            }),
        };
        out.entry(r.get(0)?).or_default().push(RequestGroup {
            model,
            source: origin_of(r.get(2)?),
            long: r.get(3)?,
            requests: u(4)?,
            tokens: Tokens {
                input: u(5)?,
                output: u(6)?,
                cache_creation: u(7)?,
                cache_creation_5m: u(8)?,
                cache_creation_1h: u(9)?,
                cache_read: u(10)?,
            },
            first_ms: r.get(11)?,
            last_ms: r.get(12)?,
        });
    }
    Ok(out)
}

/// Every contested copy, by source id, each source's in the scanner's order.
fn contested_copies(conn: &Connection) -> rusqlite::Result<HashMap<i64, Vec<RequestCopy>>> {
    let mut stmt = conn.prepare(&format!(
        "SELECT source_id, {COPY_COLUMNS} FROM requests WHERE contested = 1 \
         ORDER BY source_id, seq"
    ))?;
    let mut out: HashMap<i64, Vec<RequestCopy>> = HashMap::new();
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        out.entry(r.get(0)?).or_default().push(copy_of(r, 1)?);
    }
    Ok(out)
}

/// The sessions of the catalogued sources at `paths` (what a refresh of a scope reports), as
/// `skein-layout`'s discovery groups and orders them; `None` when one of them is an archive
/// file or is not catalogued (the caller lists the tree instead).
pub(crate) fn listed_sessions(
    conn: &Connection,
    paths: &HashSet<String>,
) -> rusqlite::Result<Option<Vec<SessionFiles>>> {
    let mut stmt = conn.prepare("SELECT path, session_id, archived FROM sources")?;
    let mut rows = stmt.query([])?;
    let mut sources = Vec::with_capacity(paths.len());
    while let Some(r) = rows.next()? {
        let path = r.get_ref(0)?.as_str()?;
        if !paths.contains(path) {
            continue;
        }
        if r.get::<_, bool>(2)? {
            return Ok(None);
        }
        let Some(s) = Source::live_known(Path::new(path), r.get_ref(1)?.as_str()?) else {
            return Ok(None);
        };
        sources.push(s);
    }
    if sources.len() != paths.len() {
        return Ok(None);
    }
    Ok(Some(skein_layout::group(sources)))
}
