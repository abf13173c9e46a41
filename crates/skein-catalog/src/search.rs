//! `skein search`: BM25-ranked hits from the contentless full-text index, filtered by the
//! locations table; the text of each hit is read back from its source by offset (the catalog
//! keeps no copy) to make the snippet and to read the record's uuid and timestamp.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use rusqlite::{Connection, params_from_iter, types::Value};
use serde::Serialize;

use crate::error::{Error, Result};
use crate::extract::{DocKind, ExtractOptions, Extractor};
use crate::query::Query;
use crate::snippet::snippets;

/// What to search for.
#[derive(Debug, Clone, Default)]
pub struct SearchQuery {
    pub query: String,
    /// Only these kinds (empty: all).
    pub kinds: Vec<DocKind>,
    /// Only tool_use / tool_result blocks of this tool.
    pub tool: Option<String>,
    /// Only this session (an id or a prefix of one).
    pub session: Option<String>,
    /// Project directory names containing this text.
    pub project: Option<String>,
    /// Records at or after / before these times (ms since the epoch).
    pub since_ms: Option<i64>,
    pub until_ms: Option<i64>,
    /// Only hits in these source paths (`None`: the whole catalog).
    pub paths: Option<rustc_hash::FxHashSet<String>>,
    pub limit: usize,
}

/// One hit: one block of one record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    pub session_id: String,
    /// `None` for the main transcript.
    pub agent_id: Option<String>,
    pub uuid: Option<String>,
    pub kind: &'static str,
    pub tool: Option<String>,
    pub timestamp: Option<String>,
    pub project: String,
    /// The session's working directory (its main transcript's `cwd`, else this file's): where
    /// `claude --resume <session_id>` must be run, since Claude Code looks a session up in the
    /// project of the current directory.
    pub cwd: Option<String>,
    /// BM25 relevance (higher is better).
    pub score: f64,
    /// The fragment of the block's text where the query matches best, matches marked `«…»`,
    /// whitespace collapsed.
    pub snippet: String,
    /// The record is read from the archive (its live transcript is gone, or was never
    /// catalogued): `skein archive restore` brings it back for `claude --resume`.
    pub archived: bool,
    /// The transcript file (live or archived) holding the record.
    pub path: String,
}

/// Snippets are cut this many hits at a time: a search with a large `--limit` holds at most
/// this many texts (up to the block cap each) at once.
const SNIPPET_BATCH: usize = 256;

struct Found {
    source: i64,
    offset: u64,
    len: u64,
    block: i64,
    kind: DocKind,
    tool: Option<String>,
    score: f64,
}

struct SourceInfo {
    path: String,
    session_id: String,
    agent_id: Option<String>,
    project: String,
    cwd: Option<String>,
    archived: bool,
    committed: u64,
}

fn source_ids(conn: &Connection, q: &SearchQuery) -> rusqlite::Result<Option<Vec<i64>>> {
    if q.project.is_none() && q.session.is_none() && q.paths.is_none() {
        return Ok(None);
    }
    let mut stmt = conn.prepare_cached("SELECT id, path, session_id, project FROM sources")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, String>(3)?,
        ))
    })?;
    let mut ids = Vec::new();
    for row in rows {
        let (id, path, session, project) = row?;
        if q.project
            .as_ref()
            .is_some_and(|p| !project.contains(p.as_str()))
            || q.session
                .as_ref()
                .is_some_and(|s| !session.starts_with(s.as_str()))
            || q.paths.as_ref().is_some_and(|ps| !ps.contains(&path))
        {
            continue;
        }
        ids.push(id);
    }
    Ok(Some(ids))
}

fn find(conn: &Connection, q: &SearchQuery, fts: &str) -> rusqlite::Result<Vec<Found>> {
    let limit = Value::Integer(i64::try_from(q.limit).unwrap_or(i64::MAX));
    let shadowed: Vec<i64> = conn
        .prepare_cached("SELECT id FROM sources WHERE shadowed = 1")?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let filtered = !shadowed.is_empty()
        || !q.kinds.is_empty()
        || q.tool.is_some()
        || q.since_ms.is_some()
        || q.until_ms.is_some()
        || q.project.is_some()
        || q.session.is_some()
        || q.paths.is_some();
    let columns = "d.source_id, d.offset, d.len, d.block, d.kind, d.tool";
    if !filtered {
        // Rank in the full-text index alone, then look up only the hits kept.
        let sql = format!(
            "SELECT {columns}, f.score FROM (SELECT rowid, bm25(fts) AS score FROM fts \
             WHERE fts MATCH ?1 ORDER BY score LIMIT ?2) f JOIN docs d ON d.id = f.rowid \
             ORDER BY f.score"
        );
        return collect(conn, &sql, vec![Value::Text(fts.to_owned()), limit]);
    }
    let mut sql = format!(
        "SELECT {columns}, bm25(fts) AS score FROM fts JOIN docs d ON d.id = fts.rowid \
         WHERE fts MATCH ?1"
    );
    let mut args: Vec<Value> = vec![Value::Text(fts.to_owned())];
    let mut arg = |sql: &mut String, clause: &str, v: Value| {
        args.push(v);
        sql.push_str(&clause.replace('?', &format!("?{}", args.len())));
    };
    if !q.kinds.is_empty() {
        let codes: Vec<String> = q.kinds.iter().map(|k| k.code().to_string()).collect();
        let _ = write!(sql, " AND d.kind IN ({})", codes.join(","));
    }
    if let Some(t) = &q.tool {
        arg(&mut sql, " AND d.tool = ?", Value::Text(t.clone()));
    }
    if let Some(s) = q.since_ms {
        arg(&mut sql, " AND d.ts_ms >= ?", Value::Integer(s));
    }
    if let Some(u) = q.until_ms {
        arg(&mut sql, " AND d.ts_ms < ?", Value::Integer(u));
    }
    if !shadowed.is_empty() {
        let list: Vec<String> = shadowed.iter().map(i64::to_string).collect();
        let _ = write!(sql, " AND d.source_id NOT IN ({})", list.join(","));
    }
    if let Some(ids) = source_ids(conn, q)? {
        let list: Vec<String> = ids.iter().map(i64::to_string).collect();
        let _ = write!(sql, " AND d.source_id IN ({})", list.join(","));
    }
    arg(&mut sql, " ORDER BY score LIMIT ?", limit);
    collect(conn, &sql, args)
}

fn collect(conn: &Connection, sql: &str, args: Vec<Value>) -> rusqlite::Result<Vec<Found>> {
    let mut stmt = conn.prepare(sql)?;
    let rows = stmt.query_map(params_from_iter(args), |r| {
        Ok(Found {
            source: r.get(0)?,
            offset: r.get::<_, i64>(1)? as u64,
            len: r.get::<_, i64>(2)? as u64,
            block: r.get(3)?,
            kind: DocKind::from_code(r.get(4)?).unwrap_or(DocKind::Text),
            tool: r.get(5)?,
            score: -r.get::<_, f64>(6)?,
        })
    })?;
    rows.collect()
}

fn info(conn: &Connection, id: i64) -> rusqlite::Result<SourceInfo> {
    // The session's directory is its main transcript's (a subagent may have run in a
    // worktree of its own), else this file's when the main transcript is not catalogued.
    conn.prepare_cached(
        "SELECT path, session_id, agent_id, project, archived, zst_offset, \
         coalesce((SELECT m.cwd FROM sources m WHERE m.session_id = s.session_id \
           AND m.project = s.project AND m.agent_id IS NULL AND m.cwd IS NOT NULL \
           ORDER BY m.shadowed LIMIT 1), s.cwd) \
         FROM sources s WHERE id = ?1",
    )?
    .query_row([id], |r| {
        Ok(SourceInfo {
            path: r.get(0)?,
            session_id: r.get(1)?,
            agent_id: r.get(2)?,
            project: r.get(3)?,
            archived: r.get(4)?,
            committed: r.get::<_, i64>(5)? as u64,
            cwd: r.get(6)?,
        })
    })
}

/// Reads lines back from their sources; an archive file is decoded once per search, up to
/// the end of the last line a hit needs in it.
#[derive(Default)]
struct Lines {
    decoded: HashMap<String, Vec<u8>>,
    /// Per source id: the end of the furthest line needed.
    need: HashMap<i64, u64>,
}

impl Lines {
    fn read(&mut self, id: i64, s: &SourceInfo, offset: u64, len: u64) -> std::io::Result<Vec<u8>> {
        let path = Path::new(&s.path);
        if s.archived || crate::track::is_plain_zst(path) {
            if !self.decoded.contains_key(&s.path) {
                let r: Box<dyn Read> = if s.archived {
                    skein_archive::open_archived_range(path, 0, s.committed)
                        .map_err(|e| std::io::Error::other(e.to_string()))?
                } else {
                    skein_archive::open_archived(path)
                        .map_err(|e| std::io::Error::other(e.to_string()))?
                };
                let mut buf = Vec::new();
                let end = self.need.get(&id).copied().unwrap_or(0).max(offset + len);
                r.take(end).read_to_end(&mut buf)?;
                self.decoded.insert(s.path.clone(), buf);
            }
            let buf = &self.decoded[&s.path];
            let (a, b) = (offset as usize, (offset + len) as usize);
            return buf
                .get(a..b)
                .map(<[u8]>::to_vec)
                .ok_or_else(|| std::io::Error::other("source shorter than indexed"));
        }
        let mut f = File::open(path)?;
        f.seek(SeekFrom::Start(offset))?;
        let mut buf = Vec::with_capacity(len as usize);
        f.take(len).read_to_end(&mut buf)?;
        Ok(buf)
    }
}

/// Runs a search.
pub(crate) fn search(
    conn: &Connection,
    db: &Path,
    q: &SearchQuery,
    cap: &ExtractOptions,
) -> Result<Vec<Hit>> {
    let query = Query::parse(&q.query)?;
    let found = find(conn, q, &query.fts()).map_err(|e| match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::Unknown) => {
            Error::Query(format!("cannot search for {:?}: {e}", q.query))
        }
        _ => Error::sql(db, e),
    })?;
    let mut infos: HashMap<i64, SourceInfo> = HashMap::new();
    let mut lines = Lines::default();
    for f in &found {
        let end = lines.need.entry(f.source).or_insert(0);
        *end = (*end).max(f.offset + f.len);
    }
    let mut extractor = Extractor::with_options(cap);
    let mut hits = Vec::with_capacity(found.len());
    let mut texts = Vec::with_capacity(found.len().min(SNIPPET_BATCH));
    let mut cut_from = 0;
    for f in found {
        if let std::collections::hash_map::Entry::Vacant(e) = infos.entry(f.source) {
            e.insert(info(conn, f.source).map_err(|e| Error::sql(db, e))?);
        }
        let s = &infos[&f.source];
        // The record as it is now: a source rewritten since the last refresh gives no text.
        let facts = lines
            .read(f.source, s, f.offset, f.len)
            .ok()
            .and_then(|raw| extractor.line(&raw));
        let (uuid, timestamp, text) = match facts {
            Some(mut facts) => {
                let text = facts
                    .docs
                    .iter()
                    .position(|d| d.block == f.block && d.kind == f.kind)
                    .map(|i| std::mem::take(&mut facts.docs[i].text));
                (facts.uuid, facts.timestamp, text)
            }
            None => (None, None, None),
        };
        hits.push(Hit {
            session_id: s.session_id.clone(),
            agent_id: s.agent_id.clone(),
            uuid,
            kind: f.kind.name(),
            tool: f.tool,
            timestamp,
            project: s.project.clone(),
            cwd: s.cwd.clone(),
            score: (f.score * 1e4).round() / 1e4,
            snippet: String::new(),
            archived: s.archived,
            path: s.path.clone(),
        });
        texts.push(text);
        if texts.len() == SNIPPET_BATCH {
            cut_snippets(conn, &query, &mut texts, &mut hits[cut_from..]);
            cut_from = hits.len();
        }
    }
    cut_snippets(conn, &query, &mut texts, &mut hits[cut_from..]);
    Ok(hits)
}

/// Gives `hits` the snippets of `texts` (one each, in order) and empties `texts`.
fn cut_snippets(
    conn: &Connection,
    query: &Query,
    texts: &mut Vec<Option<String>>,
    hits: &mut [Hit],
) {
    for (hit, snippet) in hits.iter_mut().zip(snippets(conn, query, texts)) {
        hit.snippet = snippet;
    }
    texts.clear();
}
