//! Applying batches inside a write transaction. A batch is applied only if the source is still
//! where the batch's reader found it (another writer may have indexed it meanwhile), so two
//! concurrent refreshes never index the same bytes twice.

use std::collections::HashMap;
use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};
use skein_layout::Source;
use skein_reports::usage::{GROUP_LONG_THRESHOLD, RequestCopy, SKIPPED_KEPT, Source as Origin};

use crate::error::{Error, Result};
use crate::index::{Batch, FileFacts};
use crate::track::Stored;

/// What the writer expects to find for a source before its next batch: its row id (0: none)
/// and offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Expect {
    id: i64,
    offset: u64,
    ino: u64,
}

/// Applies batches on one connection, inside a transaction the caller opened.
pub(crate) struct Writer<'c> {
    conn: &'c Connection,
    path: &'c Path,
    /// Per source (index in the refresh's list): where it stands after the batches applied in
    /// this run; `None` once a batch was refused (the rest of that source is skipped).
    state: HashMap<usize, Option<Expect>>,
    pub(crate) bytes: u64,
    pub(crate) docs: u64,
}

fn origin_code(o: Origin) -> i64 {
    match o {
        Origin::Main => 0,
        Origin::Subagent => 1,
        Origin::InternalAgent => 2,
        Origin::Progress => 3,
    }
}

pub(crate) fn origin_of(code: i64) -> Origin {
    match code {
        1 => Origin::Subagent,
        2 => Origin::InternalAgent,
        3 => Origin::Progress,
        _ => Origin::Main,
    }
}

/// Deletes a source and everything indexed from it.
pub(crate) fn delete_source(conn: &Connection, id: i64) -> rusqlite::Result<()> {
    conn.execute(
        "DELETE FROM fts WHERE rowid IN (SELECT id FROM docs WHERE source_id = ?1)",
        [id],
    )?;
    for sql in [
        "DELETE FROM docs WHERE source_id = ?1",
        "DELETE FROM requests WHERE source_id = ?1",
        "DELETE FROM usage_groups WHERE source_id = ?1",
        "DELETE FROM usage_skips WHERE source_id = ?1",
        "DELETE FROM tool_calls WHERE source_id = ?1",
        "DELETE FROM sources WHERE id = ?1",
    ] {
        conn.prepare_cached(sql)?.execute([id])?;
    }
    Ok(())
}

/// The usage groups' bucket: 15 minutes of UTC time. Every real zone's offset is a multiple
/// of 15 minutes, so a bucket lies within one local day (the report checks each group anyway).
const BUCKET_MS: i64 = 15 * 60 * 1000;

fn bucket_of(ts_ms: i64) -> i64 {
    ts_ms - ts_ms.rem_euclid(BUCKET_MS)
}

/// Sums again the uncontested copies of source `id` into its usage groups, for the buckets
/// from `from` on. The sums are read with a query and written row by row: a multi-row
/// `INSERT … SELECT` (or `UPDATE … RETURNING`) opens a statement journal, whose savepoint
/// makes FTS5 flush its pending terms, and a cold index then took half its CPU time again.
pub(crate) fn regroup(conn: &Connection, id: i64, from: i64) -> rusqlite::Result<()> {
    conn.prepare_cached("DELETE FROM usage_groups WHERE source_id = ?1 AND bucket >= ?2")?
        .execute(params![id, from])?;
    let mut sums = conn.prepare_cached(&format!(
        "SELECT ts_ms - (((ts_ms % {BUCKET_MS}) + {BUCKET_MS}) % {BUCKET_MS}) AS b, model, \
         origin, input + cache_creation + cache_read > {GROUP_LONG_THRESHOLD} AS long, \
         count(*), sum(input), sum(output), sum(cache_creation), sum(cache_5m), sum(cache_1h), \
         sum(cache_read), min(ts_ms), max(ts_ms) FROM requests \
         WHERE source_id = ?1 AND contested = 0 AND ts_ms >= ?2 GROUP BY b, model, origin, long"
    ))?;
    let mut ins = conn.prepare_cached(
        "INSERT INTO usage_groups (source_id, bucket, model, origin, long, requests, input, \
         output, cache_creation, cache_5m, cache_1h, cache_read, first_ms, last_ms) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
    )?;
    let mut rows = sums.query(params![id, from])?;
    while let Some(r) = rows.next()? {
        let v = |i: usize| r.get_ref(i).map(rusqlite::types::ToSqlOutput::Borrowed);
        ins.execute(params![
            id,
            v(0)?,
            v(1)?,
            v(2)?,
            v(3)?,
            v(4)?,
            v(5)?,
            v(6)?,
            v(7)?,
            v(8)?,
            v(9)?,
            v(10)?,
            v(11)?,
            v(12)?
        ])?;
    }
    Ok(())
}

fn i(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

const FACT_COLUMNS: &str = "first_ts, last_ts, cwd, git_branch, version, models, custom_title, \
                            ai_title, summary, first_prompt, prompts, user_messages, invalid_lines";

fn read_facts(conn: &Connection, id: i64) -> rusqlite::Result<FileFacts> {
    conn.prepare_cached(&format!("SELECT {FACT_COLUMNS} FROM sources WHERE id = ?1"))?
        .query_row([id], |r| {
            let models: Option<String> = r.get(5)?;
            Ok(FileFacts {
                first_ts: r.get(0)?,
                last_ts: r.get(1)?,
                cwd: r.get(2)?,
                git_branch: r.get(3)?,
                version: r.get(4)?,
                models: models
                    .iter()
                    .flat_map(|m| m.split(','))
                    .filter(|m| !m.is_empty())
                    .map(str::to_owned)
                    .collect(),
                custom_title: r.get(6)?,
                ai_title: r.get(7)?,
                summary: r.get(8)?,
                first_prompt: r.get(9)?,
                prompts: r.get::<_, i64>(10)? as u64,
                user_messages: r.get::<_, i64>(11)? as u64,
                invalid_lines: r.get::<_, i64>(12)? as u64,
            })
        })
}

impl<'c> Writer<'c> {
    pub(crate) fn new(conn: &'c Connection, path: &'c Path) -> Self {
        Self {
            conn,
            path,
            state: HashMap::new(),
            bytes: 0,
            docs: 0,
        }
    }

    /// Applies `b` (of `source`, planned from `stored`); false when the source moved on under
    /// another writer and the batch was dropped.
    pub(crate) fn apply(
        &mut self,
        b: &Batch,
        source: &Source,
        stored: Option<&Stored>,
    ) -> Result<bool> {
        self.apply_sql(b, source, stored)
            .map_err(|e| Error::sql(self.path, e))
    }

    fn current(&self, path: &str) -> rusqlite::Result<Option<Expect>> {
        self.conn
            .prepare_cached("SELECT id, offset, ino FROM sources WHERE path = ?1")?
            .query_row([path], |r| {
                Ok(Expect {
                    id: r.get(0)?,
                    offset: r.get::<_, i64>(1)? as u64,
                    ino: r.get::<_, i64>(2)? as u64,
                })
            })
            .optional()
    }

    fn apply_sql(
        &mut self,
        b: &Batch,
        source: &Source,
        stored: Option<&Stored>,
    ) -> rusqlite::Result<bool> {
        let path = source.path.to_string_lossy();
        let now = self.current(&path)?;
        let expected = if b.first {
            stored.map(|s| Expect {
                id: s.id,
                offset: s.offset,
                ino: s.stat.ino,
            })
        } else {
            match self.state.get(&b.source) {
                Some(Some(e)) => Some(*e),
                _ => return Ok(false),
            }
        };
        if now != expected {
            self.state.insert(b.source, None);
            return Ok(false);
        }
        let mut id = now.map(|e| e.id);
        if b.reindex
            && let Some(old) = id.take()
        {
            delete_source(self.conn, old)?;
        }
        let (facts, next_seq) = match id {
            Some(id) => {
                let facts = read_facts(self.conn, id)?;
                let seq: i64 = self
                    .conn
                    .prepare_cached("SELECT next_seq FROM sources WHERE id = ?1")?
                    .query_row([id], |r| r.get(0))?;
                (facts.then(b.facts.clone()), seq)
            }
            None => (b.facts.clone(), 0),
        };
        let id = match id {
            Some(id) => id,
            None => self.insert_source(source, &path)?,
        };
        // An archive file's compressed offset is noted only with its last batch; until then
        // the row claims no inode, so a run that stops in between re-indexes the file.
        let ino = if source.archived.is_some() && !b.last {
            0
        } else {
            b.stat.ino
        };
        self.write_copies(id, next_seq, &b.scan.copies)?;
        self.write_skips(id, b)?;
        self.write_tools(id, b)?;
        self.write_docs(id, b)?;
        let models: Vec<&str> = facts.models.iter().map(String::as_str).collect();
        self.conn
            .prepare_cached(
                "UPDATE sources SET dev = ?2, ino = ?3, size = ?4, mtime_ns = ?5, offset = ?6, \
                 zst_offset = CASE WHEN ?7 > 0 THEN ?7 ELSE zst_offset END, lines = ?8, \
                 head_hash = ?9, tail_hash = ?10, usage_lines = usage_lines + ?11, \
                 usage_invalid = usage_invalid + ?12, usage_no_timestamp = usage_no_timestamp + ?13, \
                 next_seq = ?14, first_ts = ?15, last_ts = ?16, cwd = ?17, git_branch = ?18, \
                 version = ?19, models = ?20, custom_title = ?21, ai_title = ?22, summary = ?23, \
                 first_prompt = ?24, prompts = ?25, user_messages = ?26, invalid_lines = ?27 \
                 WHERE id = ?1",
            )?
            .execute(params![
                id,
                i(b.stat.dev),
                i(ino),
                // A batch that did not reach the source's end leaves the size unknown, so the
                // next refresh looks again.
                if b.complete { i(b.stat.size) } else { -1 },
                b.stat.mtime_ns,
                i(b.end),
                i(b.zst_end),
                i(b.lines_before + b.lines),
                b.hashes.0.cast_signed(),
                b.hashes.1.cast_signed(),
                i(b.scan.usage_lines),
                i(b.scan.invalid_lines),
                i(b.scan.no_timestamp),
                next_seq + i(b.scan.copies.len() as u64),
                facts.first_ts,
                facts.last_ts,
                facts.cwd,
                facts.git_branch,
                facts.version,
                models.join(","),
                facts.custom_title,
                facts.ai_title,
                facts.summary,
                facts.first_prompt,
                i(facts.prompts),
                i(facts.user_messages),
                i(facts.invalid_lines),
            ])?;
        self.state.insert(
            b.source,
            Some(Expect {
                id,
                offset: b.end,
                ino,
            }),
        );
        self.bytes += b.end - b.start;
        Ok(true)
    }

    fn insert_source(&self, source: &Source, path: &str) -> rusqlite::Result<i64> {
        let agent = source.agent();
        let meta = agent.and_then(|a| a.meta.as_ref());
        self.conn
            .prepare_cached(
                "INSERT INTO sources (path, session_id, agent_id, project, archived, internal, \
                 agent_type, spawned_by) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?
            .execute(params![
                path,
                source.session_id,
                agent.map(|a| a.agent_id.as_str()),
                source.project,
                source.archived.is_some(),
                agent.is_some_and(|a| a.internal),
                meta.and_then(|m| m.agent_type.as_deref()),
                meta.and_then(|m| m.tool_use_id.as_deref()),
            ])?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Writes a batch's copies, merging each into the stored group of the same key, then
    /// brings the usage groups of the source (and of any source whose copies became
    /// contested) up to date.
    fn write_copies(&self, id: i64, seq: i64, copies: &[RequestCopy]) -> rusqlite::Result<()> {
        let mut keyed = self.conn.prepare_cached(
            "INSERT INTO requests (source_id, seq, message_id, request_id, sidechain, origin, \
             model, input, output, cache_creation, cache_5m, cache_1h, cache_read, ts_ms, \
             foreign_session, progress_agent) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, \
             ?11, ?12, ?13, ?14, ?15, ?16) \
             ON CONFLICT (source_id, message_id, request_id, sidechain) WHERE message_id IS NOT NULL \
             DO UPDATE SET input = max(input, excluded.input), \
             output = max(output, excluded.output), \
             cache_creation = max(cache_creation, excluded.cache_creation), \
             cache_5m = max(cache_5m, excluded.cache_5m), \
             cache_1h = max(cache_1h, excluded.cache_1h), \
             cache_read = max(cache_read, excluded.cache_read), \
             ts_ms = min(ts_ms, excluded.ts_ms), model = coalesce(model, excluded.model)",
        )?;
        // The earliest timestamp of a row written: a merged row may have moved to an earlier
        // bucket (its timestamp only decreases) or changed in place, so every bucket from
        // there on is summed again. (Not with `RETURNING` on the upsert: that opens a
        // statement journal, whose savepoint makes FTS5 flush its pending terms on every
        // batch, which made a cold index half as slow again.)
        let mut earliest = i64::MAX;
        let mut contested = Vec::new();
        for (n, c) in copies.iter().enumerate() {
            let t = &c.tokens;
            if let Some(mid) = c.message_id.as_deref() {
                let (merged_ts, others) = self.other_copies(id, mid, c)?;
                earliest = earliest.min(merged_ts.unwrap_or(i64::MAX));
                if others > 0 {
                    contested.push(mid);
                }
            }
            earliest = earliest.min(c.timestamp_ms);
            keyed.execute(params![
                id,
                seq + i(n as u64),
                c.message_id.as_deref(),
                c.request_id.as_deref().unwrap_or(""),
                c.sidechain,
                origin_code(c.source),
                c.model.as_deref(),
                i(t.input),
                i(t.output),
                i(t.cache_creation),
                i(t.cache_creation_5m),
                i(t.cache_creation_1h),
                i(t.cache_read),
                c.timestamp_ms,
                c.foreign_session,
                // Other copies carry their file's agent id, known from the source.
                if c.source == Origin::Progress {
                    c.agent_id.as_deref()
                } else {
                    None
                },
            ])?;
        }
        let mut sources = Vec::new();
        for mid in contested {
            self.contest(mid, &mut sources)?;
        }
        if earliest != i64::MAX {
            regroup(self.conn, id, bucket_of(earliest))?;
        }
        sources.sort_unstable();
        sources.dedup();
        for other in sources {
            regroup(self.conn, other, i64::MIN)?;
        }
        Ok(())
    }

    /// Before `c` (with message id `mid`) is written to source `id`: the timestamp of the
    /// stored copy it will merge into, if any, and how many other copies of `mid` exist.
    fn other_copies(
        &self,
        id: i64,
        mid: &str,
        c: &RequestCopy,
    ) -> rusqlite::Result<(Option<i64>, usize)> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT source_id, request_id, sidechain, ts_ms FROM requests WHERE message_id = ?1",
        )?;
        let mut rows = stmt.query([mid])?;
        let (mut merged, mut others) = (None, 0);
        let rid = c.request_id.as_deref().unwrap_or("");
        while let Some(r) = rows.next()? {
            let same = r.get::<_, i64>(0)? == id
                && r.get_ref(1)?.as_str()? == rid
                && r.get::<_, bool>(2)? == c.sidechain;
            if same {
                merged = Some(r.get(3)?);
            } else {
                others += 1;
            }
        }
        Ok((merged, others))
    }

    /// Where the batch's skipped usage lines are, in the file (the first
    /// [`SKIPPED_KEPT`] of the file, as the scanner keeps them).
    fn write_skips(&self, id: i64, b: &Batch) -> rusqlite::Result<()> {
        if b.scan.skipped.is_empty() {
            return Ok(());
        }
        let kept: i64 = self
            .conn
            .prepare_cached("SELECT count(*) FROM usage_skips WHERE source_id = ?1")?
            .query_row([id], |r| r.get(0))?;
        let room = SKIPPED_KEPT.saturating_sub(usize::try_from(kept).unwrap_or(usize::MAX));
        let mut ins = self.conn.prepare_cached(
            "INSERT OR IGNORE INTO usage_skips (source_id, line, offset, invalid) \
             VALUES (?1, ?2, ?3, ?4)",
        )?;
        for s in b.scan.skipped.iter().take(room) {
            ins.execute(params![
                id,
                i(b.lines_before + s.line),
                i(b.start + s.offset),
                s.invalid
            ])?;
        }
        Ok(())
    }

    /// Marks the copies of `mid` (which has more than one) contested and notes the sources
    /// whose groups held one of them.
    fn contest(&self, mid: &str, sources: &mut Vec<i64>) -> rusqlite::Result<()> {
        // Read, then flagged row by row (see `regroup` on multi-row writes and FTS5).
        let rows: Vec<(i64, i64)> = self
            .conn
            .prepare_cached(
                "SELECT source_id, seq FROM requests WHERE message_id = ?1 AND contested = 0",
            )?
            .query_map([mid], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        let mut flag = self.conn.prepare_cached(
            "UPDATE requests SET contested = 1 WHERE source_id = ?1 AND seq = ?2",
        )?;
        for (source, seq) in rows {
            flag.execute([source, seq])?;
            sources.push(source);
        }
        Ok(())
    }

    fn write_tools(&self, id: i64, b: &Batch) -> rusqlite::Result<()> {
        let mut uses = self.conn.prepare_cached(
            "INSERT INTO tool_calls (source_id, tool_use_id, name, line, ts, input_bytes) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (source_id, tool_use_id) DO UPDATE SET \
             name = excluded.name, line = excluded.line, ts = excluded.ts, \
             input_bytes = excluded.input_bytes WHERE line IS NULL",
        )?;
        for u in &b.uses {
            uses.execute(params![
                id,
                u.fact.id,
                u.fact.name,
                i(u.line),
                u.ts,
                i(u.fact.input_bytes)
            ])?;
        }
        let mut results = self.conn.prepare_cached(
            "INSERT INTO tool_calls (source_id, tool_use_id, result_ts, is_error, result_bytes) \
             VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (source_id, tool_use_id) DO UPDATE SET \
             result_ts = CASE WHEN is_error IS NULL THEN excluded.result_ts ELSE result_ts END, \
             result_bytes = CASE WHEN is_error IS NULL THEN excluded.result_bytes \
             ELSE result_bytes END, \
             is_error = CASE WHEN is_error IS NULL THEN excluded.is_error \
             ELSE (is_error OR excluded.is_error) END",
        )?;
        for r in &b.results {
            results.execute(params![
                id,
                r.fact.tool_use_id,
                r.ts,
                r.fact.is_error,
                i(r.fact.bytes)
            ])?;
        }
        Ok(())
    }

    fn write_docs(&mut self, id: i64, b: &Batch) -> rusqlite::Result<()> {
        let mut name = self.conn.prepare_cached(
            "SELECT name FROM tool_calls WHERE source_id = ?1 AND tool_use_id = ?2",
        )?;
        let mut doc = self.conn.prepare_cached(
            "INSERT INTO docs (source_id, offset, len, block, kind, ts_ms, tool) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        let mut fts = self
            .conn
            .prepare_cached("INSERT INTO fts (rowid, body) VALUES (?1, ?2)")?;
        for d in &b.docs {
            let tool = match (&d.doc.tool, &d.doc.tool_use_id) {
                (Some(t), _) => Some(t.clone()),
                (None, Some(use_id)) => name
                    .query_row(params![id, use_id], |r| r.get::<_, Option<String>>(0))
                    .optional()?
                    .flatten(),
                (None, None) => None,
            };
            doc.execute(params![
                id,
                i(d.offset),
                i(d.len),
                d.doc.block,
                d.doc.kind.code(),
                d.ts_ms,
                tool
            ])?;
            let rowid = self.conn.last_insert_rowid();
            fts.execute(params![rowid, d.doc.text])?;
            self.docs += 1;
        }
        Ok(())
    }
}
