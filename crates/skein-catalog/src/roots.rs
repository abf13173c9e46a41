//! Refreshing everything under some roots (trees, archives, files), cheaply when nothing new
//! appeared: the directories under each root are recorded with their mtimes after a full
//! listing, and a later refresh that finds every directory unchanged knows no file was added,
//! removed or renamed. It then skips the listing (readdir, sidecars, archive checkpoints) and
//! only stats the catalogued files, indexing the live ones that grew. Anything else (a
//! directory changed, a file gone, an archive file changed) takes the full path: list the
//! sources with `skein-layout`, refresh, record the directories again.

use rustc_hash::FxHashSet;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension as _, params};
use skein_layout::Source;
use skein_store::InputError;

use crate::error::{Error, Result};
use crate::refresh::{self, Progress, RefreshOptions, RefreshReport};
use crate::stat_queue::{self, StatQueue};
use crate::track::{self, Plan};

/// A directory whose mtime is this close to the refresh's clock is recorded as unsettled (a
/// change within the same timestamp tick could go unseen); the next refresh lists it again.
const SETTLE_NS: i64 = 2_000_000_000;

/// What [`crate::Catalog::refresh_roots`] did.
#[derive(Debug, Default)]
pub struct RootsReport {
    pub refresh: RefreshReport,
    /// The catalogued sources under the roots, after the refresh.
    pub paths: FxHashSet<String>,
    /// Paths that could not be listed.
    pub errors: Vec<InputError>,
    /// The directories were unchanged: no listing was needed.
    pub fast: bool,
    /// Every source's row as the refresh left them (read once, for the report that follows).
    pub(crate) rows: Option<refresh::Rows>,
    /// The sessions of the sources at `paths`: grouped now by a full refresh, or to be read
    /// from the last listing after a fast one; `None` when they cannot be (archive files).
    pub(crate) listing: Option<Listing>,
    /// The usage groups and contested copies, read with `rows` by a fast refresh that indexed
    /// nothing, when asked ([`crate::Catalog::read_usage_ahead`]).
    pub(crate) ahead: Option<crate::groups::Ahead>,
}

/// Where a report finds the sessions of a refresh's sources.
#[derive(Debug)]
pub(crate) enum Listing {
    /// Grouped by the refresh that listed the roots, or kept with the last listing and read
    /// ahead by a fast refresh.
    Grouped(Vec<skein_layout::SessionFiles>),
    /// Kept with the last listing of these roots (no directory changed since): read only when
    /// a report asks (`skein index` never does).
    Kept(Vec<PathBuf>),
}

impl Listing {
    /// The sessions.
    pub(crate) fn sessions(
        self,
        conn: &Connection,
    ) -> rusqlite::Result<Option<Vec<skein_layout::SessionFiles>>> {
        match self {
            Self::Grouped(s) => Ok(Some(s)),
            Self::Kept(roots) => kept_listing(conn, &roots),
        }
    }
}

/// Every directory under `root` (itself included) with its mtime, taken before it is read:
/// by the stat the fast path compares it with ([`track::stat_path`]), so both read one clock.
fn walk_dirs(root: &Path, out: &mut Vec<(String, i64)>) {
    if root.is_dir() {
        walk_dir(root, out);
    }
}

/// [`walk_dirs`] below a directory.
fn walk_dir(dir: &Path, out: &mut Vec<(String, i64)>) {
    let Some(now) = track::stat_path(dir) else {
        return;
    };
    out.push((dir.to_string_lossy().into_owned(), now.mtime_ns));
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            walk_dir(&e.path(), out);
        }
    }
}

fn key(root: &Path) -> String {
    root.to_string_lossy().into_owned()
}

/// The `listings` key of a set of roots (NUL cannot occur in a path).
fn roots_key(roots: &[PathBuf]) -> String {
    roots.iter().map(|r| key(r)).collect::<Vec<_>>().join("\0")
}

/// The sessions kept for `roots` by the last listing, if it was of these roots.
fn kept_listing(
    conn: &Connection,
    roots: &[PathBuf],
) -> rusqlite::Result<Option<Vec<skein_layout::SessionFiles>>> {
    // Decoded from SQLite's buffer: the blob (~0.9 MB on the bench tree) is not copied first.
    let decoded = conn
        .prepare_cached("SELECT body FROM listings WHERE roots = ?1")?
        .query_row([roots_key(roots)], |r| {
            Ok(crate::groups::decode_listing(r.get_ref(0)?.as_blob()?))
        })
        .optional()?;
    Ok(decoded.flatten())
}

/// The recorded directories of every root, `None` when some root has none recorded.
fn recorded(conn: &Connection, roots: &[PathBuf]) -> rusqlite::Result<Option<Vec<(String, i64)>>> {
    let mut stmt = conn.prepare_cached("SELECT path, mtime_ns FROM dirs WHERE root = ?1")?;
    let mut all = Vec::new();
    for r in roots {
        let rows: Vec<(String, i64)> = stmt
            .query_map([key(r)], |row| Ok((row.get(0)?, row.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        if rows.is_empty() {
            return Ok(None);
        }
        all.extend(rows);
    }
    Ok(Some(all))
}

/// Records the directories under `roots` and, when given, the sessions of their sources
/// (encoded by `groups::encode_listing`). Only the last listing recorded is kept: one whose
/// roots' directories were all recorded with it, so an unchanged directory tree vouches for
/// it (a report still checks it against the files the refresh found).
fn record(
    conn: &Connection,
    roots: &[PathBuf],
    dirs: &[(PathBuf, Vec<(String, i64)>)],
    now_ns: Option<i64>,
    listing: Option<&[u8]>,
) -> rusqlite::Result<()> {
    crate::db::write_transaction(conn, || {
        conn.prepare_cached("DELETE FROM listings")?.execute([])?;
        if let Some(body) = listing {
            conn.prepare_cached("INSERT INTO listings (roots, body) VALUES (?1, ?2)")?
                .execute(params![roots_key(roots), body])?;
        }
        let mut del = conn.prepare_cached("DELETE FROM dirs WHERE root = ?1")?;
        let mut ins = conn.prepare_cached(
            "INSERT OR REPLACE INTO dirs (root, path, mtime_ns) VALUES (?1, ?2, ?3)",
        )?;
        for r in roots {
            del.execute([key(r)])?;
        }
        for (root, list) in dirs {
            // A root that is a file (or missing) is recorded by itself, with no mtime: its
            // own catalogued file is what a refresh checks.
            if list.is_empty() {
                ins.execute(params![key(root), key(root), -1])?;
            }
            for (path, mtime) in list {
                let settled = now_ns.is_some_and(|now| *mtime < now - SETTLE_NS);
                ins.execute(params![key(root), path, if settled { *mtime } else { 0 }])?;
            }
        }
        Ok(())
    })
}

/// What the fast path found: the live sources that grew, how many are unchanged, and every
/// catalogued source under the roots.
struct Quick {
    changed: Vec<Source>,
    unchanged: usize,
    paths: FxHashSet<String>,
    rows: refresh::Rows,
    /// Read in the same snapshot as `rows`, when asked.
    ahead: Option<Ahead>,
}

/// What a usage report reads after the refresh, read ahead by [`quick_check`].
struct Ahead {
    usage: crate::groups::Ahead,
    listing: Option<Vec<skein_layout::SessionFiles>>,
}

/// The fast path: `Some` when no directory changed and every catalogued file under the roots
/// is still there, and live or untouched. Its reads are one snapshot of the catalog (a read
/// transaction), so what it reads ahead agrees with the rows whatever another process commits.
fn quick_check(
    conn: &Connection,
    roots: &[PathBuf],
    threads: usize,
    read_ahead: bool,
) -> rusqlite::Result<Option<Quick>> {
    crate::db::read_snapshot(conn, || quick_check_in(conn, roots, threads, read_ahead))
}

fn quick_check_in(
    conn: &Connection,
    roots: &[PathBuf],
    threads: usize,
    read_ahead: bool,
) -> rusqlite::Result<Option<Quick>> {
    let Some(dirs) = recorded(conn, roots)? else {
        return Ok(None);
    };
    let settled: Vec<&(String, i64)> = dirs.iter().filter(|(_, m)| *m != -1).collect();
    if settled.iter().any(|(_, m)| *m == 0) {
        return Ok(None);
    }
    // Everything is stat'ed on other threads while this one reads (`stat_queue`): the
    // directories at once, then the catalogued files under the roots, whose paths this thread
    // hands on in batches as it reads their rows; then it reads, when asked, what the report
    // reads next (~6.6 ms of a 23 ms `usage daily` on the bench tree, p50 of an instrumented
    // build), and joins the stats.
    // When a directory changed, all of it is dropped and the full path, which lists the tree
    // anyway, reads the rows again.
    let dir_paths: Vec<&str> = settled.iter().map(|(p, _)| p.as_str()).collect();
    let open = track::OpenRoots::open(roots);
    let queue = StatQueue::new(&open, &dir_paths);
    // How many files there may be to stat (the threads are sized before the rows are read).
    let sources = refresh::count_sources(conn)?;
    // What each file handed to the stats was when catalogued, and whether it is one that
    // cannot grow (archived, or a plain `.zst`), in the same order: compared without a lookup.
    let mut known: Vec<(track::Stat, bool)> = Vec::new();
    let (stored, ahead) = std::thread::scope(|scope| {
        // Before any worker starts: whatever happens on this thread, they are let go.
        let closer = queue.closer();
        let workers: Vec<_> = (0..stat_queue::threads(threads, dir_paths.len() + sources))
            .map(|_| scope.spawn(|| queue.work()))
            .collect();
        let mut batch = Vec::with_capacity(stat_queue::BATCH);
        let stored = refresh::load_stored_visiting(conn, sources, |path, row| {
            if roots.iter().any(|root| refresh::is_under(path, root)) {
                let fixed = row.archived || track::is_plain_zst(Path::new(path));
                known.push((row.stat, fixed));
                batch.push(path.to_owned());
                if batch.len() == stat_queue::BATCH {
                    queue.push(std::mem::replace(
                        &mut batch,
                        Vec::with_capacity(stat_queue::BATCH),
                    ));
                }
            }
        });
        queue.push(batch);
        drop(closer);
        let ahead = (read_ahead && stored.is_ok()).then(|| -> rusqlite::Result<Ahead> {
            Ok(Ahead {
                usage: crate::groups::Ahead::read(conn)?,
                listing: kept_listing(conn, roots)?,
            })
        });
        queue.work();
        // A thread that could not finish leaves its batch out: `finish` says so.
        for w in workers {
            let _ = w.join();
        }
        (stored, ahead)
    });
    let stored = stored?;
    let Some((dir_stats, files, file_stats)) = queue.finish() else {
        return Ok(None);
    };
    if dir_stats.len() != settled.len()
        || file_stats.len() != files.len()
        || known.len() != files.len()
    {
        return Ok(None);
    }
    if settled
        .iter()
        .zip(&dir_stats)
        .any(|((_, mtime), s)| s.is_none_or(|s| s.mtime_ns != *mtime))
    {
        return Ok(None);
    }
    let ahead = ahead.transpose()?;
    let mut changed = Vec::new();
    let mut unchanged = 0;
    let mut paths = FxHashSet::with_capacity_and_hasher(files.len(), rustc_hash::FxBuildHasher);
    for ((path, now), (was, fixed)) in files.into_iter().zip(&file_stats).zip(&known) {
        let Some(now) = *now else {
            return Ok(None);
        };
        let same = now.ino == was.ino && now.size == was.size && now.mtime_ns == was.mtime_ns;
        if same {
            unchanged += 1;
        } else if *fixed {
            return Ok(None);
        } else {
            // Only a changed file is looked at as a source (its sidecar, its session). One
            // snapshot: every path read has its row.
            let Some(old) = stored.get(&path) else {
                return Ok(None);
            };
            let p = Path::new(&path);
            let Some(source) = Source::live_with(p, &|_| old.live_session_id()) else {
                return Ok(None);
            };
            match track::plan(&source, &now, Some(old)) {
                Plan::Unchanged => unchanged += 1,
                _ => changed.push(source),
            }
        }
        paths.insert(path);
    }
    Ok(Some(Quick {
        changed,
        unchanged,
        paths,
        rows: stored,
        ahead,
    }))
}

/// Refreshes the catalog for everything under `roots` (absolute paths); with `read_ahead`, a
/// fast refresh that indexes nothing also reads the usage groups and the kept listing.
#[allow(clippy::too_many_arguments)]
pub(crate) fn refresh_roots(
    conn: &Connection,
    db: &Path,
    cap: refresh::Extract<'_>,
    roots: &[PathBuf],
    opts: &RefreshOptions,
    now_ns: Option<i64>,
    read_ahead: bool,
    progress: &mut dyn FnMut(Progress),
) -> Result<RootsReport> {
    let sql = |e| Error::sql(db, e);
    if roots.is_empty() {
        return Ok(RootsReport {
            fast: true,
            ..RootsReport::default()
        });
    }
    if let Some(Quick {
        changed,
        unchanged,
        paths,
        rows,
        ahead,
    }) = quick_check(conn, roots, opts.threads, read_ahead).map_err(sql)?
    {
        // Read for a catalog that stays as it was: anything indexed now changes the groups.
        let ahead = ahead.filter(|_| changed.is_empty());
        // The rows read by the fast path are handed in and come back patched for the files
        // indexed: the table is not read again, however many files grew.
        let (mut report, rows) = refresh::refresh_keeping(
            conn,
            db,
            cap,
            &changed,
            &RefreshOptions {
                scope: Vec::new(),
                ..opts.clone()
            },
            progress,
            Some(rows),
        )?;
        report.sources += unchanged;
        report.unchanged += unchanged;
        // No file came or went: the sessions are the last listing's, unless a file was
        // indexed again from zero (a legacy agent file's session id is read from its lines).
        let (ahead, listing) = match ahead {
            Some(Ahead { usage, listing }) => (Some(usage), listing.map(Listing::Grouped)),
            None => (None, Some(Listing::Kept(roots.to_vec()))),
        };
        let listing = listing.filter(|_| report.reindexed == 0 && report.errors.is_empty());
        return Ok(RootsReport {
            refresh: report,
            paths,
            errors: Vec::new(),
            fast: true,
            rows,
            listing,
            ahead,
        });
    }
    let mut dirs = Vec::with_capacity(roots.len());
    for r in roots {
        let mut list = Vec::new();
        walk_dirs(r, &mut list);
        dirs.push((r.clone(), list));
    }
    // Legacy agent files already catalogued keep the session id read when they were first
    // indexed: the listing does not open hundreds of them again.
    let stored = refresh::load_stored(conn).map_err(sql)?;
    let known = |p: &Path| stored.get(p.to_str()?)?.live_session_id();
    let listing = skein_layout::sources_known(roots, &known);
    let (report, rows) = refresh::refresh_keeping(
        conn,
        db,
        cap,
        &listing.sources,
        &RefreshOptions {
            scope: roots.to_vec(),
            ..opts.clone()
        },
        progress,
        Some(stored),
    )?;
    let paths: FxHashSet<String> = listing
        .sources
        .iter()
        .map(|s| s.path.to_string_lossy().into_owned())
        .collect();
    let skein_layout::Listing { sources, errors } = listing;
    if report.deferred_bytes > 0 {
        // Nothing was indexed, so nothing is recorded (a later fast path trusts a recorded
        // directory to hold no file the catalog lacks). The sessions are the listing's own,
        // grouped as a discovery of the roots groups them: a report that scans instead need
        // not list the tree again.
        let listed = errors.is_empty().then(|| skein_layout::group(sources));
        return Ok(RootsReport {
            refresh: report,
            paths,
            errors,
            fast: false,
            rows,
            listing: listed.map(Listing::Grouped),
            ahead: None,
        });
    }
    let grouped = rows
        .as_ref()
        .and_then(|rows| crate::groups::listed_sessions(rows, &paths));
    if errors.is_empty() && report.errors.is_empty() && report.skipped == 0 {
        let body = grouped.as_deref().and_then(crate::groups::encode_listing);
        record(conn, roots, &dirs, now_ns, body.as_deref()).map_err(sql)?;
    }
    Ok(RootsReport {
        refresh: report,
        paths,
        errors,
        fast: false,
        rows,
        listing: grouped.map(Listing::Grouped),
        ahead: None,
    })
}
