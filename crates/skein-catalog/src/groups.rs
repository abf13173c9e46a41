//! Usage from the catalog for the reports by period, session and model: only the *contested*
//! copies (those whose message has another copy somewhere in the catalog) one by one, the
//! others pre-summed in the usage groups (see `write.rs`). An uncontested copy is the only
//! copy of its message in any input that holds it, so the deduplication keeps it: only the
//! contested copies need the deduplication, and their order among themselves is their order
//! among all copies, so it keeps the same ones.
//!
//! Also the sessions of a refreshed scope as `skein-layout` groups them, from the catalogued
//! sources instead of a second listing of the tree.

use rustc_hash::{FxHashMap, FxHashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rusqlite::Connection;
use skein_layout::{AgentFile, SessionFiles, Source};
use skein_reports::usage::{RequestCopy, RequestGroup, SessionScan, SkippedLine, Source as Origin};

use crate::error::{Error, Result};
use crate::refresh::Rows;
use crate::track::Stored as Row;
use crate::write::origin_of;

/// One session's usage from [`session_groups`]: the contested copies in `scan` (with the
/// counters and skipped lines of all the session's files), the other requests pre-summed.
#[derive(Debug)]
pub struct SessionUsage {
    pub scan: SessionScan,
    pub groups: Vec<RequestGroup>,
}

/// What [`session_groups`] reads besides the source rows: every usage group and contested
/// copy. A refresh that finds nothing to index can read them ahead, in the read transaction
/// of its source rows and while its other threads stat the files (`roots::quick_check`).
#[derive(Debug, Default)]
pub(crate) struct Ahead {
    groups: FxHashMap<i64, Vec<RequestGroup>>,
    contested: FxHashMap<i64, Vec<RequestCopy>>,
}

impl Ahead {
    pub(crate) fn read(conn: &Connection) -> rusqlite::Result<Self> {
        Ok(Self {
            groups: all_groups(conn)?,
            contested: contested_copies(conn)?,
        })
    }
}

/// The sessions' usage as contested copies and groups, in order; `None` when some file is
/// not catalogued to its current end (the caller then takes every copy, or scans). `ahead`
/// is what the refresh read in the same snapshot as `rows`; `None`: read now.
pub(crate) fn session_groups(
    conn: &Connection,
    db: &Path,
    rows: &Rows,
    sessions: &[SessionFiles],
    ahead: Option<Ahead>,
) -> Result<Option<Vec<SessionUsage>>> {
    let sql = |e| Error::sql(db, e);
    // Each session's catalogued files, in the scanner's order.
    let mut plan: Vec<Vec<(&Row, &Path)>> = Vec::with_capacity(sessions.len());
    let mut used = FxHashSet::default();
    let mut lookup = crate::refresh::RowLookup::new(rows);
    for files in sessions {
        let mut list = Vec::new();
        for path in files.files() {
            let Some(row) = lookup.get(path) else {
                return Ok(None);
            };
            // Not read to its end by the refresh just made (a torn last line, a concurrent
            // writer), or listed twice: the copies path handles those.
            if row.facts.unknown_size
                || (!row.archived && row.stat.size != row.offset)
                || !used.insert(row.id)
            {
                return Ok(None);
            }
            list.push((row, path));
        }
        plan.push(list);
    }
    let Ahead {
        mut groups,
        mut contested,
    } = match ahead {
        Some(a) => a,
        None => Ahead::read(conn).map_err(sql)?,
    };
    let mut skips = conn
        .prepare_cached(
            "SELECT line, offset, invalid FROM usage_skips WHERE source_id = ?1 ORDER BY line",
        )
        .map_err(sql)?;
    let mut out = Vec::with_capacity(plan.len());
    for list in plan {
        let mut scan = SessionScan::default();
        let mut summed = Vec::new();
        for (row, path) in list {
            let mut copies = contested.remove(&row.id).unwrap_or_default();
            for c in &mut copies {
                if c.source != Origin::Progress {
                    c.agent_id = row.facts.agent_id.as_deref().map(Into::into);
                }
            }
            scan.copies.append(&mut copies);
            summed.append(&mut groups.remove(&row.id).unwrap_or_default());
            scan.files += 1;
            scan.usage_lines += row.facts.usage_lines;
            scan.invalid_lines += row.facts.usage_invalid;
            scan.no_timestamp += row.facts.usage_no_timestamp;
            scan.bytes += row.offset;
            if row.facts.usage_invalid + row.facts.usage_no_timestamp > 0 {
                let located = skips
                    .query_map([row.id], |r| {
                        Ok(SkippedLine {
                            path: Some(path.to_path_buf()),
                            line: r.get::<_, i64>(0)? as u64,
                            offset: r.get::<_, i64>(1)? as u64,
                            invalid: r.get(2)?,
                        })
                    })
                    .and_then(Iterator::collect::<rusqlite::Result<Vec<_>>>)
                    .map_err(sql)?;
                scan.skipped.extend(located);
            }
        }
        out.push(SessionUsage {
            scan,
            groups: summed,
        });
    }
    Ok(Some(out))
}

/// Every usage group, by source id.
fn all_groups(conn: &Connection) -> rusqlite::Result<FxHashMap<i64, Vec<RequestGroup>>> {
    let mut stmt = conn.prepare(
        "SELECT source_id, model, origin, long, requests, input, output, cache_creation, \
         cache_5m, cache_1h, cache_read, first_ms, last_ms FROM usage_groups",
    )?;
    let mut out: FxHashMap<i64, Vec<RequestGroup>> = FxHashMap::default();
    // Few distinct models: one allocation each.
    let mut models: FxHashMap<String, Arc<str>> = FxHashMap::default();
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let u = |i: usize| r.get::<_, i64>(i).map(|v| v as u64);
        let model = match r.get_ref(1)?.as_str_or_null()? {
            None => None,
            Some(m) => Some(match models.get(m) {
                Some(a) => Arc::clone(a),
                None => Arc::clone(models.entry(m.to_owned()).or_insert_with(|| m.into())),
            }),
        };
        out.entry(r.get(0)?).or_default().push(RequestGroup {
            model,
            source: origin_of(r.get(2)?),
            long: r.get(3)?,
            requests: u(4)?,
            tokens: crate::usage::tokens_at(r, 5)?,
            first_ms: r.get(11)?,
            last_ms: r.get(12)?,
        });
    }
    Ok(out)
}

/// Every contested copy, by source id, each source's in the scanner's order.
fn contested_copies(conn: &Connection) -> rusqlite::Result<FxHashMap<i64, Vec<RequestCopy>>> {
    crate::usage::copies_by_source(conn, "WHERE contested = 1")
}

/// The sessions of the catalogued sources at `paths` (what a refresh of a scope reports), as
/// `skein-layout`'s discovery groups and orders them; `None` when one of them is an archive
/// file or is not catalogued (the caller lists the tree instead).
pub(crate) fn listed_sessions(rows: &Rows, paths: &FxHashSet<String>) -> Option<Vec<SessionFiles>> {
    let mut sources = Vec::with_capacity(paths.len());
    // The order does not matter: `group` sorts.
    #[allow(
        clippy::iter_over_hash_type,
        reason = "group() orders the sessions and their files"
    )]
    for path in paths {
        let row = rows.get(path)?;
        if row.archived {
            return None;
        }
        sources.push(Source::live_known(Path::new(path), &row.facts.session_id)?);
    }
    Some(skein_layout::group(sources))
}

/// Whether `listing` names exactly the files at `paths` (a kept listing is checked against
/// what the refresh found before it is used: any doubt lists again).
pub(crate) fn covers(listing: &[SessionFiles], paths: &FxHashSet<String>) -> bool {
    let files: usize = listing.iter().map(|s| s.files().count()).sum();
    files == paths.len()
        && listing
            .iter()
            .flat_map(SessionFiles::files)
            .all(|p| p.to_str().is_some_and(|p| paths.contains(p)))
}

/// Format of an encoded listing (the first byte): another value is not read.
const LISTING_FORMAT: u8 = 1;

/// `sessions` (as [`listed_sessions`] made them: live files, no sidecars) in a compact form
/// for the `listings` table; `None` when a path is not UTF-8 (such a listing is not kept).
pub(crate) fn encode_listing(sessions: &[SessionFiles]) -> Option<Vec<u8>> {
    fn put(out: &mut Vec<u8>, s: &str) {
        out.extend_from_slice(&(s.len() as u32).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
    }
    let mut out = vec![LISTING_FORMAT];
    out.extend_from_slice(&(sessions.len() as u32).to_le_bytes());
    for s in sessions {
        put(&mut out, &s.session_id);
        put(&mut out, s.project_dir.to_str()?);
        match &s.main {
            Some(m) => {
                out.push(1);
                put(&mut out, m.to_str()?);
            }
            None => out.push(0),
        }
        out.extend_from_slice(&(s.agents.len() as u32).to_le_bytes());
        for a in &s.agents {
            put(&mut out, &a.agent_id);
            put(&mut out, a.path.to_str()?);
            out.push(u8::from(a.internal) | u8::from(a.legacy) << 1);
        }
    }
    Some(out)
}

/// The sessions [`encode_listing`] wrote; `None` for anything else.
pub(crate) fn decode_listing(bytes: &[u8]) -> Option<Vec<SessionFiles>> {
    struct Reader<'a>(&'a [u8]);
    impl<'a> Reader<'a> {
        fn take(&mut self, n: usize) -> Option<&'a [u8]> {
            let (head, rest) = self.0.split_at_checked(n)?;
            self.0 = rest;
            Some(head)
        }
        fn byte(&mut self) -> Option<u8> {
            self.take(1).map(|b| b[0])
        }
        fn count(&mut self) -> Option<usize> {
            let b = self.take(4)?.try_into().ok()?;
            usize::try_from(u32::from_le_bytes(b)).ok()
        }
        fn text(&mut self) -> Option<&'a str> {
            let n = self.count()?;
            std::str::from_utf8(self.take(n)?).ok()
        }
    }
    let mut r = Reader(bytes);
    if r.byte()? != LISTING_FORMAT {
        return None;
    }
    let n = r.count()?;
    // Each session takes at least 13 bytes: a corrupt count cannot reserve much.
    let mut out = Vec::with_capacity(n.min(bytes.len() / 13));
    for _ in 0..n {
        let session_id = r.text()?.to_owned();
        let project_dir = PathBuf::from(r.text()?);
        let main = match r.byte()? {
            0 => None,
            1 => Some(PathBuf::from(r.text()?)),
            _ => return None,
        };
        let k = r.count()?;
        let mut agents = Vec::with_capacity(k.min(r.0.len() / 9));
        for _ in 0..k {
            let agent_id = r.text()?.to_owned();
            let path = PathBuf::from(r.text()?);
            let flags = r.byte()?;
            agents.push(AgentFile {
                agent_id,
                path,
                meta: None,
                internal: flags & 1 != 0,
                legacy: flags & 2 != 0,
            });
        }
        out.push(SessionFiles {
            session_id,
            project_dir,
            main,
            agents,
        });
    }
    r.0.is_empty().then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(id: &str, agents: usize, main: bool) -> SessionFiles {
        let dir = PathBuf::from("/p/-home-me-x");
        SessionFiles {
            session_id: id.into(),
            main: main.then(|| dir.join(format!("{id}.jsonl"))),
            agents: (0..agents)
                .map(|i| AgentFile {
                    agent_id: format!("a{i}"),
                    path: dir.join(format!("{id}/subagents/agent-a{i}.jsonl")),
                    meta: None,
                    internal: i == 1,
                    legacy: i == 2,
                })
                .collect(),
            project_dir: dir,
        }
    }

    #[test]
    fn a_listing_reads_back_as_written() {
        let sessions = vec![
            session("s1", 3, true),
            session("s2", 0, true),
            session("é", 1, false),
        ];
        let bytes = encode_listing(&sessions).expect("utf-8");
        assert_eq!(decode_listing(&bytes), Some(sessions));
        assert_eq!(
            decode_listing(&encode_listing(&[]).expect("empty")),
            Some(Vec::new())
        );
    }

    #[test]
    fn a_damaged_listing_is_not_read() {
        let bytes = encode_listing(&[session("s1", 2, true)]).expect("utf-8");
        for cut in 0..bytes.len() {
            assert_eq!(decode_listing(&bytes[..cut]), None, "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(decode_listing(&longer), None);
        let mut other = bytes;
        other[0] = LISTING_FORMAT + 1;
        assert_eq!(decode_listing(&other), None);
    }
}
