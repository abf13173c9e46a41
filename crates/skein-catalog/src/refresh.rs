//! Bringing the catalog up to date with a list of sources: stat every file, compare with what
//! was indexed, read only new bytes (on worker threads), apply the batches on one writer, and
//! drop what disappeared. With nothing new, a refresh is a stat per file and one read query.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use rusqlite::{Connection, OptionalExtension};
use rustc_hash::FxHashMap;
use skein_layout::Source;

use crate::error::{Error, Result};
use crate::extract::ExtractOptions;
use crate::index::{Batch, Indexer, Work};
use crate::track::{self, Facts, Plan, Stat, Stored};
use crate::write::{Writer, delete_source};

/// Content bytes applied between commits of a long refresh (other writers get their turn,
/// and a kill loses at most this much work).
const COMMIT_BYTES: u64 = 64 << 20;

/// How to refresh.
#[derive(Debug, Clone)]
pub struct RefreshOptions {
    /// Parsing threads (0: all cores). The database writer is the calling thread.
    pub threads: usize,
    /// At most about this many new bytes per source in this run (the hook's bound; the rest
    /// is caught up by later runs).
    pub limit_per_source: u64,
    /// Catalogued sources under these paths that are not in the list any more (deleted, or
    /// archived versions superseded or shadowed by a live copy) are dropped.
    pub scope: Vec<PathBuf>,
    /// The time now (ns since the epoch), for [`crate::Catalog::refresh_roots`]: directories
    /// modified in the last two seconds are listed again next time. `None`: always.
    pub now_ns: Option<i64>,
    /// Index nothing when more new bytes than this are found (a report that can scan the
    /// transcripts instead: a first `skein usage` over a large history would otherwise index
    /// all of it before answering). Nothing is written then,
    /// [`RefreshReport::deferred_bytes`] says how much was left, and the rows handed to the
    /// report mark the files it left as not read to their end: the usage queries answer the
    /// sessions the catalog covers and leave those to the scan.
    pub defer_above: Option<u64>,
}

impl Default for RefreshOptions {
    fn default() -> Self {
        Self {
            threads: 0,
            limit_per_source: u64::MAX,
            scope: Vec::new(),
            now_ns: None,
            defer_above: None,
        }
    }
}

/// Progress of a refresh, for a progress bar.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Progress {
    /// New bytes to read (stat sizes; compressed sizes for archive files).
    pub bytes_total: u64,
    pub bytes_done: u64,
}

/// What a refresh did.
#[derive(Debug, Default)]
pub struct RefreshReport {
    /// Sources listed.
    pub sources: usize,
    pub unchanged: usize,
    /// Sources read from their last offset.
    pub appended: usize,
    /// Sources read from zero (new or rewritten).
    pub reindexed: usize,
    /// Sources left to another writer that indexed them meanwhile.
    pub skipped: usize,
    /// Sources dropped from the catalog.
    pub removed: usize,
    /// Content bytes indexed.
    pub bytes: u64,
    /// Text blocks added to the full-text index.
    pub docs: u64,
    /// Sources that could not be read (the rest of the refresh went on).
    pub errors: Vec<Error>,
    /// New bytes left unindexed because there were more than
    /// [`RefreshOptions::defer_above`] (0: none): the catalog does not cover the input.
    pub deferred_bytes: u64,
}

const STORED_COLUMNS: &str = "id, path, dev, ino, size, mtime_ns, offset, zst_offset, lines, \
                              head_hash, tail_hash, archived, session_id, agent_id, usage_lines, \
                              usage_invalid, usage_no_timestamp";

/// What the catalog recorded about every source.
pub(crate) fn load_stored(conn: &Connection) -> rusqlite::Result<FxHashMap<String, Stored>> {
    load_stored_visiting(conn, count_sources(conn)?, |_, _| ())
}

/// How many sources the catalog holds.
pub(crate) fn count_sources(conn: &Connection) -> rusqlite::Result<usize> {
    let n: i64 = conn
        .prepare_cached("SELECT count(*) FROM sources")?
        .query_row([], |r| r.get(0))?;
    Ok(usize::try_from(n).unwrap_or(0))
}

/// [`load_stored`] of the `count` sources ([`count_sources`], read by the caller in the same
/// transaction), showing each source's path and row to `visit` as it is read (the fast path
/// hands the paths under its roots to the threads that stat them, without a read of its own,
/// and keeps what it compares their stats with).
pub(crate) fn load_stored_visiting(
    conn: &Connection,
    count: usize,
    mut visit: impl FnMut(&str, &Stored),
) -> rusqlite::Result<FxHashMap<String, Stored>> {
    // Sized first: growing the map rehashed it a dozen times into fresh memory (~180 of the
    // ~4,300 page faults of a `usage daily` from the catalog on the bench tree, measured).
    let mut out = FxHashMap::with_capacity_and_hasher(count, rustc_hash::FxBuildHasher);
    let mut stmt = conn.prepare_cached(&format!("SELECT {STORED_COLUMNS} FROM sources"))?;
    for row in stmt.query_map([], stored_row)? {
        let (k, v) = row?;
        visit(&k, &v);
        out.insert(k, v);
    }
    Ok(out)
}

/// What the catalog recorded about the sources at `paths` (a few: one query each).
pub(crate) fn load_stored_paths(
    conn: &Connection,
    paths: impl Iterator<Item = String>,
) -> rusqlite::Result<FxHashMap<String, Stored>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {STORED_COLUMNS} FROM sources WHERE path = ?1"
    ))?;
    let mut out = FxHashMap::default();
    for p in paths {
        if let Some((k, v)) = stmt.query_row([&p], stored_row).optional()? {
            out.insert(k, v);
        }
    }
    Ok(out)
}

fn stored_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(String, Stored)> {
    let u = |i: usize| r.get::<_, i64>(i).map(|v| v as u64);
    Ok((
        r.get::<_, String>(1)?,
        Stored {
            id: r.get(0)?,
            stat: Stat {
                dev: u(2)?,
                ino: u(3)?,
                size: u(4)?,
                mtime_ns: r.get(5)?,
            },
            offset: u(6)?,
            zst_offset: u(7)?,
            lines: u(8)?,
            head_hash: u(9)?,
            tail_hash: u(10)?,
            archived: r.get::<_, i64>(11)? != 0,
            facts: Facts {
                session_id: r.get(12)?,
                agent_id: r.get(13)?,
                unknown_size: r.get::<_, i64>(4)? < 0,
                usage_lines: u(14)?,
                usage_invalid: u(15)?,
                usage_no_timestamp: u(16)?,
            },
        },
    ))
}

/// Whether `path` is `root` or lies below it (a byte comparison: the paths are the catalog's
/// own, written from the same roots).
pub(crate) fn is_under(path: &str, root: &Path) -> bool {
    let root = root.to_string_lossy();
    let root = root.strip_suffix('/').unwrap_or(&root);
    path.strip_prefix(root)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

fn under(path: &str, scope: &[PathBuf]) -> bool {
    scope.iter().any(|root| is_under(path, root))
}

fn begin(conn: &Connection, path: &Path) -> Result<()> {
    conn.execute_batch("BEGIN IMMEDIATE")
        .map_err(|e| Error::sql(path, e))
}

fn commit(conn: &Connection, path: &Path) -> Result<()> {
    conn.execute_batch("COMMIT")
        .map_err(|e| Error::sql(path, e))
}

/// Marks the archived sources whose transcript is also catalogued live (same project, session
/// and agent): a session present in both is one session, read from the live file.
pub(crate) fn shadow(conn: &Connection) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "UPDATE sources SET shadowed = (archived = 1 AND EXISTS (SELECT 1 FROM sources l \
         WHERE l.archived = 0 AND l.session_id = sources.session_id \
         AND l.project = sources.project AND l.agent_id IS sources.agent_id)) \
         WHERE shadowed != (archived = 1 AND EXISTS (SELECT 1 FROM sources l \
         WHERE l.archived = 0 AND l.session_id = sources.session_id \
         AND l.project = sources.project AND l.agent_id IS sources.agent_id))",
    )?
    .execute([])?;
    Ok(())
}

/// The extraction options, built when the first source is to be read: a refresh with nothing
/// new never compiles the redaction rules (on by default, ~0.5 ms a command).
pub(crate) type Extract<'a> = &'a dyn Fn() -> Result<&'a ExtractOptions>;

/// Every source's row by path, as a refresh leaves them (see [`refresh_keeping`]).
pub(crate) type Rows = FxHashMap<String, Stored>;

/// The rows of a report's files. Sessions listed from the catalog name their files as it
/// stores them (absolute); named under a relative root (`skein usage daily .`) they are made
/// absolute against the working directory, looked up once (`absolute` of each file asked the
/// kernel for it again: thousands of calls). A plain relative name (no `.` or empty
/// component) is joined to it in one reused buffer, as `absolute` would join it.
pub(crate) struct RowLookup<'r> {
    rows: &'r Rows,
    cwd: Option<PathBuf>,
    joined: String,
}

impl<'r> RowLookup<'r> {
    pub(crate) fn new(rows: &'r Rows) -> Self {
        Self {
            rows,
            cwd: None,
            joined: String::new(),
        }
    }

    pub(crate) fn get(&mut self, path: &Path) -> Option<&'r Stored> {
        // The catalog stores absolute names only: a relative one is never looked up as is.
        if path.is_absolute()
            && let Some(row) = path.to_str().and_then(|p| self.rows.get(p))
        {
            return Some(row);
        }
        let cwd = self
            .cwd
            .get_or_insert_with(|| std::path::absolute(".").unwrap_or_else(|_| PathBuf::from(".")));
        if let (Some(rel), Some(base)) = (path.to_str(), cwd.to_str())
            && let Some(abs) = join_plain(base, rel, &mut self.joined)
        {
            return self.rows.get(abs);
        }
        let joined = if path.is_relative() {
            cwd.join(path)
        } else {
            path.to_path_buf()
        };
        // Normalised as `absolute` normalises (`.` components, repeated separators).
        let abs = std::path::absolute(&joined).unwrap_or(joined);
        self.rows.get(abs.to_string_lossy().as_ref())
    }
}

/// `rel` joined to the absolute directory `base` in `buf`, as `std::path::absolute` joins it,
/// when that is all it does: `rel` has no `.` component and no empty one (a repeated or
/// trailing separator); `..` is kept by `absolute` as it is here. `None` otherwise.
fn join_plain<'b>(base: &str, rel: &str, buf: &'b mut String) -> Option<&'b str> {
    let plain = !rel.is_empty()
        && !rel.starts_with('/')
        && rel.split('/').all(|c| !c.is_empty() && c != ".");
    if !plain {
        return None;
    }
    buf.clear();
    buf.push_str(base);
    if !base.ends_with('/') {
        buf.push('/');
    }
    buf.push_str(rel);
    Some(buf.as_str())
}

/// Brings `rows` (read before a refresh) up to date for the sources at `touched` (those the
/// refresh indexed or dropped): one query each, so an append does not read the table again.
fn patch_rows(
    conn: &Connection,
    rows: &mut Rows,
    touched: impl Iterator<Item = String>,
) -> rusqlite::Result<()> {
    let touched: Vec<String> = touched.collect();
    for p in &touched {
        rows.remove(p);
    }
    rows.extend(load_stored_paths(conn, touched.into_iter())?);
    Ok(())
}

/// Refreshes `conn` (the catalog at `db`) for `sources`, also giving every source's row as
/// the refresh leaves them when it had the whole table (`preloaded`: every row, read by the
/// caller just before; else read here for a refresh of many sources or of a scope): what a
/// report asks next.
pub(crate) fn refresh_keeping(
    conn: &Connection,
    db: &Path,
    cap: Extract<'_>,
    sources: &[Source],
    opts: &RefreshOptions,
    progress: &mut dyn FnMut(Progress),
    preloaded: Option<Rows>,
) -> Result<(RefreshReport, Option<Rows>)> {
    if sources.is_empty() && opts.scope.is_empty() {
        return Ok((RefreshReport::default(), preloaded));
    }
    // With a bound, the rows are handed back whole: a deferral marks some of them.
    let whole = preloaded.is_some()
        || opts.defer_above.is_some()
        || !(opts.scope.is_empty() && sources.len() <= 16);
    // A few files (the hook, a status line): look them up; else read every row at once.
    let mut stored = if let Some(rows) = preloaded {
        Ok(rows)
    } else if whole {
        load_stored(conn)
    } else {
        load_stored_paths(
            conn,
            sources
                .iter()
                .map(|s| s.path.to_string_lossy().into_owned()),
        )
    }
    .map_err(|e| Error::sql(db, e))?;
    let mut report = RefreshReport {
        sources: sources.len(),
        ..RefreshReport::default()
    };
    let mut work = Vec::new();
    let mut listed = HashSet::new();
    let mut total = 0;
    for (i, s) in sources.iter().enumerate() {
        let key = s.path.to_string_lossy();
        listed.insert(key.clone().into_owned());
        let Some(now) = track::stat(s) else { continue };
        let old = stored.get(key.as_ref());
        match track::plan(s, &now, old) {
            Plan::Unchanged => report.unchanged += 1,
            plan => {
                let from = match (plan, old) {
                    (Plan::Append, Some(o)) if s.archived.is_some() => o.zst_offset,
                    (Plan::Append, Some(o)) => o.offset,
                    _ => 0,
                };
                total += now.size.saturating_sub(from);
                work.push(Work {
                    source: i,
                    plan,
                    stat: now,
                    stored: old.cloned(),
                });
            }
        }
    }
    let gone: Vec<(i64, String)> = if opts.scope.is_empty() {
        Vec::new()
    } else {
        stored
            .iter()
            .filter(|(p, _)| !listed.contains(p.as_str()) && under(p, &opts.scope))
            .map(|(p, s)| (s.id, p.clone()))
            .collect()
    };
    if work.is_empty() && gone.is_empty() {
        return Ok((report, whole.then_some(stored)));
    }
    if opts.defer_above.is_some_and(|limit| total > limit) {
        report.deferred_bytes = total;
        // What a concurrent writer left half-way looks the same: not read to its end, so not
        // answered from the catalog (a new file has no row at all).
        for w in &work {
            if let Some(row) = stored.get_mut(sources[w.source].path.to_string_lossy().as_ref()) {
                row.facts.unknown_size = true;
            }
        }
        return Ok((report, Some(stored)));
    }
    begin(conn, db)?;
    let result = (|| {
        for (id, _) in &gone {
            delete_source(conn, *id).map_err(|e| Error::sql(db, e))?;
        }
        if !gone.is_empty() {
            crate::report_cache::forget_orphans(conn).map_err(|e| Error::sql(db, e))?;
        }
        report.removed = gone.len();
        work.sort_by_key(|w| std::cmp::Reverse(w.stat.size));
        run(
            conn,
            db,
            cap,
            sources,
            &work,
            opts,
            total,
            progress,
            &mut report,
        )?;
        // Only new or dropped sources can change which archived copies are shadowed.
        if report.reindexed > 0 || report.removed > 0 {
            shadow(conn).map_err(|e| Error::sql(db, e))?;
        }
        Ok(())
    })();
    match result {
        Ok(()) => {
            commit(conn, db)?;
            crate::db::restrict_mode(db);
            if !whole {
                return Ok((report, None));
            }
            let touched = work
                .iter()
                .map(|w| sources[w.source].path.to_string_lossy().into_owned())
                .chain(gone.into_iter().map(|(_, p)| p));
            patch_rows(conn, &mut stored, touched).map_err(|e| Error::sql(db, e))?;
            Ok((report, Some(stored)))
        }
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn run(
    conn: &Connection,
    db: &Path,
    cap: Extract<'_>,
    sources: &[Source],
    work: &[Work],
    opts: &RefreshOptions,
    total: u64,
    progress: &mut dyn FnMut(Progress),
    report: &mut RefreshReport,
) -> Result<()> {
    if work.is_empty() {
        return Ok(());
    }
    let cap = cap()?;
    let mut writer = Writer::new(conn, db);
    let mut since_commit = 0u64;
    let mut seen: HashSet<usize> = HashSet::new();
    let mut refused: HashSet<usize> = HashSet::new();
    let by_source: HashMap<usize, &Work> = work.iter().map(|w| (w.source, w)).collect();
    let mut apply =
        |b: Batch, writer: &mut Writer<'_>, report: &mut RefreshReport| -> Result<bool> {
            if refused.contains(&b.source) {
                return Ok(false);
            }
            let w = by_source[&b.source];
            let len = b.end - b.start;
            let (first, reindex) = (b.first, b.reindex);
            let applied = writer.apply(&b, &sources[w.source], w.stored.as_ref())?;
            if first && seen.insert(w.source) {
                match (applied, reindex) {
                    (false, _) => report.skipped += 1,
                    (true, false) => report.appended += 1,
                    (true, true) => report.reindexed += 1,
                }
            }
            if !applied {
                refused.insert(w.source);
            }
            since_commit += len;
            progress(Progress {
                bytes_total: total,
                bytes_done: writer.bytes,
            });
            if since_commit >= COMMIT_BYTES {
                commit(conn, db)?;
                begin(conn, db)?;
                since_commit = 0;
            }
            Ok(applied)
        };
    let threads = skein_core::ordered::threads_or_cores(opts.threads).min(work.len());
    if threads <= 1 {
        let mut indexer = Indexer::new(cap);
        for w in work {
            let mut failed = None;
            let r = indexer.run(
                w,
                &sources[w.source],
                opts.limit_per_source,
                &mut |b| match apply(b, &mut writer, report) {
                    Ok(go_on) => go_on,
                    Err(e) => {
                        failed = Some(e);
                        false
                    }
                },
            );
            if let Some(e) = failed {
                return Err(e);
            }
            if let Err(e) = r {
                report.errors.push(e);
            }
        }
    } else {
        let next = AtomicUsize::new(0);
        let (tx, rx) = mpsc::sync_channel::<std::result::Result<Batch, Error>>(threads * 2);
        let outcome = std::thread::scope(|scope| {
            for _ in 0..threads {
                let tx = tx.clone();
                let next = &next;
                scope.spawn(move || {
                    let mut indexer = Indexer::new(cap);
                    loop {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        let Some(w) = work.get(k) else { break };
                        let r =
                            indexer.run(w, &sources[w.source], opts.limit_per_source, &mut |b| {
                                tx.send(Ok(b)).is_ok()
                            });
                        if let Err(e) = r
                            && tx.send(Err(e)).is_err()
                        {
                            break;
                        }
                    }
                });
            }
            drop(tx);
            let mut outcome = Ok(());
            for msg in rx {
                match msg {
                    Ok(b) if outcome.is_ok() => {
                        if let Err(e) = apply(b, &mut writer, report) {
                            outcome = Err(e);
                        }
                    }
                    Ok(_) => {}
                    Err(e) => report.errors.push(e),
                }
            }
            outcome
        });
        outcome?;
    }
    report.bytes = writer.bytes;
    report.docs = writer.docs;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file named as the catalog stores it, or relatively (under a root given relatively),
    /// finds the same row; one the catalog does not hold finds none.
    #[test]
    fn a_row_is_found_by_its_stored_or_its_relative_name() {
        let cwd = std::path::absolute(".").expect("cwd");
        let stored = cwd.join("p/s1.jsonl").to_string_lossy().into_owned();
        let rows: Rows = [(
            stored.clone(),
            Stored {
                id: 7,
                ..Stored::default()
            },
        )]
        .into_iter()
        .collect();
        let mut lookup = RowLookup::new(&rows);
        for name in [stored.as_str(), "p/s1.jsonl", "./p/s1.jsonl", "p//s1.jsonl"] {
            assert_eq!(lookup.get(Path::new(name)).map(|r| r.id), Some(7), "{name}");
        }
        assert!(lookup.get(Path::new("p/s2.jsonl")).is_none());
        assert!(lookup.get(Path::new("/elsewhere/p/s1.jsonl")).is_none());
    }

    /// The buffer join gives what `std::path::absolute` gives, for every name it takes, from
    /// the working directory and from `/`.
    #[test]
    fn a_plain_relative_name_joins_as_absolute_joins_it() {
        let cwd = std::path::absolute(".").expect("cwd");
        let names = [
            "p/s1.jsonl",
            "s1.jsonl",
            "../p/s1.jsonl",
            "a/../b/s.jsonl",
            "./p/s.jsonl",
            "p/./s.jsonl",
            "p//s.jsonl",
            "p/",
            "p/.",
            ".",
            "..",
            "",
            "/abs/s.jsonl",
            "p/.hidden.jsonl",
            "p/..s.jsonl",
            "p/s.jsonl/",
        ];
        let mut buf = String::new();
        for base in [cwd.as_path(), Path::new("/")] {
            for name in names {
                if let Some(joined) = join_plain(base.to_str().expect("utf8"), name, &mut buf) {
                    let abs = std::path::absolute(base.join(name)).expect("absolute");
                    assert_eq!(joined, abs.to_string_lossy(), "{name} from {base:?}");
                }
            }
        }
        let plain: Vec<&str> = names
            .into_iter()
            .filter(|n| join_plain("/b", n, &mut buf).is_some())
            .collect();
        assert_eq!(
            plain,
            [
                "p/s1.jsonl",
                "s1.jsonl",
                "../p/s1.jsonl",
                "a/../b/s.jsonl",
                "..",
                "p/.hidden.jsonl",
                "p/..s.jsonl"
            ]
        );
    }
}
