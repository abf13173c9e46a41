//! What every report command shares: where transcripts are found (paths, or the Claude
//! projects directories by default), filters (dates, project, include/exclude globs), the
//! progress bar, parallel per-session jobs with ordered output, and the output formats.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Args;
use globset::{Glob, GlobSet, GlobSetBuilder};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use skein_core::Parser;
use skein_core::time::{DateRange, Zone};
use skein_layout::{Env, SessionFiles, discover};
use skein_store::InputError;

use crate::cli::Format;
use crate::output::{Align, aligned_table, choose_format, error_line, table, warning_line};

/// Arguments shared by the reports.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct ReportArgs {
    /// Transcript files, directories or skein archives (default: `$CLAUDE_CONFIG_DIR/projects`,
    /// else `~/.claude/projects` and `~/.config/claude/projects`).
    pub(crate) paths: Vec<PathBuf>,
    /// Output format (default: table on a terminal, jsonl otherwise).
    #[arg(long, value_enum)]
    pub(crate) format: Option<Format>,
    /// Only records (or sessions) from this day (YYYY-MM-DD or YYYYMMDD, a local day in
    /// --timezone), time (RFC 3339) or duration ago (7d, 12h, 30m, 2w) on.
    #[arg(long)]
    pub(crate) since: Option<String>,
    /// Only records (or sessions) up to this day (inclusive), time or duration ago.
    #[arg(long)]
    pub(crate) until: Option<String>,
    /// The time zone of days, weeks and months (grouping, --since/--until): an IANA name
    /// (Europe/Berlin), UTC, a fixed offset (+09:00, -0500) or `local`. Default: the config's
    /// `[reports] timezone`, else `TZ`, else the system zone, else UTC.
    #[arg(long, value_name = "ZONE", allow_hyphen_values = true)]
    pub(crate) timezone: Option<String>,
    /// Only sessions whose project directory name contains this text (`-home-me-erk`), or
    /// whose working directory is this path or below it (`/home/me/erk`, `.`, `../erk`).
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) project: Option<String>,
    /// Only files whose path matches one of these globs (e.g. `**/-home-me-*/**`).
    #[arg(long = "include", value_name = "GLOB", allow_hyphen_values = true)]
    pub(crate) include: Vec<String>,
    /// Skip files whose path matches one of these globs.
    #[arg(long = "exclude", value_name = "GLOB", allow_hyphen_values = true)]
    pub(crate) exclude: Vec<String>,
    /// No progress bar and no warnings.
    #[arg(long, short = 'q')]
    pub(crate) quiet: bool,
    /// Worker threads (default: all cores).
    #[arg(long, short = 'j')]
    pub(crate) threads: Option<usize>,
    /// Memory-map plain files (archived files only).
    #[arg(long)]
    pub(crate) mmap: bool,
}

/// What a `--project` value matches in project directory names: the text itself, and when it
/// reads as a path (`/…`, `.`, `..`, `./…`, `../…`, `~/…`), the name Claude Code gives the
/// project of that working directory (made absolute against the current directory; `~` is
/// `HOME`).
fn project_filter(value: &str, home: Option<&std::path::Path>) -> Vec<String> {
    let mut names = vec![value.to_owned()];
    let looks_like_path = value.starts_with('/')
        || value.starts_with('~')
        || value == "."
        || value == ".."
        || value.starts_with("./")
        || value.starts_with("../");
    if looks_like_path {
        let path = match value.strip_prefix('~') {
            Some(rest) => home.map_or_else(
                || PathBuf::from(value),
                |h| h.join(rest.trim_start_matches('/')),
            ),
            None => std::path::absolute(value).unwrap_or_else(|_| PathBuf::from(value)),
        };
        // `absolute` keeps `..` (as Claude Code's cwd never has it): resolve it when the
        // directory exists.
        let path = std::fs::canonicalize(&path).unwrap_or(path);
        let cwd = path.to_string_lossy();
        let cwd = cwd.trim_end_matches('/');
        if let Some(name) = skein_layout::claude::project_name_for_cwd(cwd) {
            names = vec![name];
        }
    }
    names
}

/// Warns, once per directory given on the command line, when nothing under it was taken as a
/// transcript (an empty or wrong directory would otherwise print nothing at all).
pub(crate) fn warn_empty_dirs<'a>(
    given: &[PathBuf],
    found: impl Iterator<Item = &'a std::path::Path>,
) {
    let mut empty: Vec<&PathBuf> = given.iter().filter(|p| p.is_dir()).collect();
    for file in found {
        empty.retain(|dir| !file.starts_with(dir));
        if empty.is_empty() {
            return;
        }
    }
    for dir in empty {
        warning_line(&format!("no transcripts under {}", dir.display()));
    }
}

fn globs(patterns: &[String]) -> Result<Option<GlobSet>> {
    if patterns.is_empty() {
        return Ok(None);
    }
    let mut b = GlobSetBuilder::new();
    for p in patterns {
        b.add(Glob::new(p).with_context(|| format!("invalid glob {p:?}"))?);
    }
    Ok(Some(b.build()?))
}

/// `--project`, `--include` and `--exclude`: which sessions and files a report reads.
pub(crate) struct SessionFilter {
    include: Option<GlobSet>,
    exclude: Option<GlobSet>,
    /// The names a session's project must contain one of.
    project: Option<Vec<String>>,
}

impl SessionFilter {
    /// Whether sessions of the project directory named `project` are read.
    pub(crate) fn keeps_project(&self, project: &str) -> bool {
        self.project
            .as_ref()
            .is_none_or(|names| names.iter().any(|n| project.contains(n.as_str())))
    }

    /// Whether the transcript at `path` is read.
    pub(crate) fn keeps_file(&self, path: &std::path::Path) -> bool {
        self.include.as_ref().is_none_or(|g| g.is_match(path))
            && !self.exclude.as_ref().is_some_and(|g| g.is_match(path))
    }
}

impl ReportArgs {
    pub(crate) fn format(&self) -> Format {
        choose_format(self.format)
    }

    /// The zone of `--timezone` (see [`crate::zone::resolve`]).
    pub(crate) fn zone(&self) -> Result<Zone> {
        crate::zone::resolve(self.timezone.as_deref())
    }

    pub(crate) fn date_range(&self) -> Result<DateRange> {
        self.date_range_at(crate::zone::now_ms())
    }

    /// [`ReportArgs::date_range`] with durations counted back from `now` (`usage blocks --now`).
    pub(crate) fn date_range_at(&self, now: i64) -> Result<DateRange> {
        crate::zone::date_range(self.since.as_deref(), self.until.as_deref(), now)
    }

    /// The sessions to report on, after the project and glob filters. Unreadable paths are
    /// reported on stderr; `Ok(false)` in the second field says some were.
    pub(crate) fn sessions(&self, env: &Env) -> Result<(Vec<SessionFiles>, bool)> {
        let (sessions, errors) = self.sessions_and_errors(env)?;
        Ok((sessions, errors.is_empty()))
    }

    /// [`ReportArgs::sessions`], with the paths that could not be read.
    pub(crate) fn sessions_and_errors(
        &self,
        env: &Env,
    ) -> Result<(Vec<SessionFiles>, Vec<InputError>)> {
        let found = discover(&self.roots(env)?);
        for e in &found.errors {
            error_line(&e.to_string());
        }
        Ok((self.filtered(env, found.sessions)?, found.errors))
    }

    /// The paths given, else the Claude projects directories.
    pub(crate) fn roots(&self, env: &Env) -> Result<Vec<PathBuf>> {
        if self.paths.is_empty() {
            let roots = env.projects_roots();
            if roots.is_empty() {
                bail!("no transcripts: give paths, or set CLAUDE_CONFIG_DIR");
            }
            Ok(roots)
        } else {
            Ok(self.paths.clone())
        }
    }

    /// The sessions found under [`ReportArgs::roots`] (by a listing, or from the catalog)
    /// after the project and glob filters, warning about given directories without any.
    pub(crate) fn filtered(
        &self,
        env: &Env,
        found: Vec<SessionFiles>,
    ) -> Result<Vec<SessionFiles>> {
        Ok(self.filtered_by(found, &self.filter(env)?))
    }

    /// [`ReportArgs::filtered`] with filters already built ([`ReportArgs::filter`]).
    pub(crate) fn filtered_by(
        &self,
        found: Vec<SessionFiles>,
        filter: &SessionFilter,
    ) -> Vec<SessionFiles> {
        if !self.quiet {
            warn_empty_dirs(&self.paths, found.iter().flat_map(SessionFiles::files));
        }
        let mut sessions = Vec::new();
        for mut s in found {
            if !filter.keeps_project(&s.project()) {
                continue;
            }
            if s.main.as_deref().is_some_and(|m| !filter.keeps_file(m)) {
                s.main = None;
            }
            s.agents.retain(|a| filter.keeps_file(&a.path));
            if s.main.is_some() || !s.agents.is_empty() {
                sessions.push(s);
            }
        }
        sessions
    }

    /// The project and glob filters of [`ReportArgs::filtered`].
    pub(crate) fn filter(&self, env: &Env) -> Result<SessionFilter> {
        Ok(SessionFilter {
            include: globs(&self.include)?,
            exclude: globs(&self.exclude)?,
            project: self
                .project
                .as_deref()
                .map(|p| project_filter(p, env.home.as_deref())),
        })
    }

    pub(crate) fn progress(&self, len: usize) -> ProgressBar {
        if self.quiet || !std::io::stderr().is_terminal() || len < 2 {
            return ProgressBar::hidden();
        }
        let bar = ProgressBar::new(len as u64);
        bar.set_style(
            ProgressStyle::with_template("{spinner} {pos}/{len} sessions {wide_bar} {eta}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar
    }

    /// Runs `job` on every session on the worker threads (one parser per thread) and hands
    /// each result to `emit` in session order. Failed sessions are reported on stderr and make
    /// the returned flag `false`.
    pub(crate) fn for_each_session<T: Send>(
        &self,
        sessions: &[SessionFiles],
        job: impl Fn(&SessionFiles, &mut Parser) -> Result<T> + Sync,
        mut emit: impl FnMut(&SessionFiles, T) -> Result<()>,
    ) -> Result<bool> {
        let bar = self.progress(sessions.len());
        let threads = skein_core::ordered::threads_or_cores(self.threads.unwrap_or(0));
        // Sessions go to the workers in runs (up to 16 on a big tree, one each on a small one):
        // one message per session woke this thread for every session (futex wake-ups and
        // context switches showed in the profile of a scan of 2,000 sessions). The workers stay
        // within a few runs of the writer (`skein_core::ordered`), so a slow session holds them
        // back instead of letting finished results pile up in memory.
        let run = (sessions.len() / (threads * 64)).clamp(1, 16);
        let runs: Vec<&[SessionFiles]> = sessions.chunks(run).collect();
        let mut next = 0;
        let mut ok = true;
        let outcome = skein_core::ordered::ordered(
            &runs,
            threads,
            Parser::new,
            |parser, chunk| {
                let results: Vec<Result<T>> = chunk.iter().map(|s| job(s, parser)).collect();
                Ok::<_, anyhow::Error>(results)
            },
            |results| {
                bar.inc(results.len() as u64);
                for r in results {
                    let s = &sessions[next];
                    next += 1;
                    match r {
                        Ok(v) => emit(s, v)?,
                        Err(e) => {
                            ok = false;
                            bar.suspend(|| error_line(&crate::output::error_text(&e)));
                        }
                    }
                }
                Ok(())
            },
        );
        bar.finish_and_clear();
        outcome.map(|()| ok)
    }

    /// [`ReportArgs::for_each_session`] for jobs that return rows: `each` gets every row, in
    /// session order.
    pub(crate) fn for_each_row<T: Send>(
        &self,
        sessions: &[SessionFiles],
        job: impl Fn(&SessionFiles, &mut Parser) -> Result<Vec<T>> + Sync,
        mut each: impl FnMut(T) -> Result<()>,
    ) -> Result<bool> {
        self.for_each_session(sessions, job, |_, rows| {
            rows.into_iter().try_for_each(&mut each)
        })
    }

    /// Writes every row of every session as it comes (see [`RowWriter`]); a table gets
    /// `columns` and the cells `cells` makes.
    pub(crate) fn stream_rows<T: Serialize + Send>(
        &self,
        sessions: &[SessionFiles],
        columns: &[(&str, Align)],
        job: impl Fn(&SessionFiles, &mut Parser) -> Result<Vec<T>> + Sync,
        cells: impl Fn(&T) -> Vec<String>,
    ) -> Result<bool> {
        let stdout = std::io::stdout();
        let mut w = RowWriter::new(self.format(), std::io::BufWriter::new(stdout.lock()));
        let ok = self.for_each_row(sessions, job, |row| w.row(&row, &cells))?;
        w.finish(columns)?;
        Ok(ok)
    }
}

/// The exit status of a report: 0, or 2 when a path or a session could not be read.
pub(crate) fn exit_status(ok: bool) -> ExitCode {
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    }
}

/// Rows written as they come: JSONL lines, one JSON array (one row per line), or a table at
/// the end.
pub(crate) struct RowWriter<W: Write> {
    format: Format,
    out: W,
    rows: usize,
    table: Vec<Vec<String>>,
}

impl<W: Write> RowWriter<W> {
    pub(crate) fn new(format: Format, out: W) -> Self {
        Self {
            format,
            out,
            rows: 0,
            table: Vec::new(),
        }
    }

    /// Writes one row; for a table, keeps the cells `cells` makes of it.
    pub(crate) fn row<T: Serialize>(
        &mut self,
        value: &T,
        cells: impl FnOnce(&T) -> Vec<String>,
    ) -> Result<()> {
        match self.format {
            Format::Jsonl => {
                // As an io::Error, so that a closed pipe is recognised as one.
                serde_json::to_writer(&mut self.out, value).map_err(std::io::Error::from)?;
                self.out.write_all(b"\n")?;
            }
            Format::Json => {
                self.out
                    .write_all(if self.rows == 0 { b"[\n" } else { b",\n" })?;
                serde_json::to_writer(&mut self.out, value).map_err(std::io::Error::from)?;
            }
            Format::Table => self.table.push(cells(value)),
        }
        self.rows += 1;
        Ok(())
    }

    /// Closes the JSON array or writes the table under `columns`, and flushes.
    pub(crate) fn finish(mut self, columns: &[(&str, Align)]) -> Result<()> {
        match self.format {
            Format::Json if self.rows == 0 => self.out.write_all(b"[]\n")?,
            Format::Json => self.out.write_all(b"\n]\n")?,
            Format::Table => {
                let (headers, align): (Vec<&str>, Vec<Align>) = columns.iter().copied().unzip();
                self.out
                    .write_all(aligned_table(&headers, &align, &self.table).as_bytes())?;
            }
            Format::Jsonl => {}
        }
        self.out.flush()?;
        Ok(())
    }
}

/// Writes rows in the chosen format: JSONL (one object per line), JSON (one array) or a
/// table built by `row` under `headers`.
pub(crate) fn write_rows<T: Serialize>(
    format: Format,
    rows: &[T],
    headers: &[&str],
    row: impl Fn(&T) -> Vec<String>,
) -> Result<()> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    match format {
        Format::Jsonl => {
            for r in rows {
                serde_json::to_writer(&mut out, r)?;
                out.write_all(b"\n")?;
            }
        }
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, rows)?;
            out.write_all(b"\n")?;
        }
        Format::Table => {
            let body: Vec<Vec<String>> = rows.iter().map(row).collect();
            out.write_all(table(headers, &body).as_bytes())?;
        }
    }
    out.flush()?;
    Ok(())
}
