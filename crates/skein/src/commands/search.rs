//! `skein search QUERY [PATHS]`: BM25-ranked full-text search over prompts, replies,
//! thinking, tool inputs and tool results, from the catalog (brought up to date first). See
//! `docs/catalog.md`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Args as ClapArgs;
use skein_catalog::{DocKind, Hit, SearchQuery};
use skein_layout::Env;

use super::catalog::QueryArgs;
use crate::cli::Format;
use crate::output::{Align, choose_format};
use crate::report::{RowWriter, exit_status};

#[derive(Debug, ClapArgs)]
#[command(
    after_help = "Query syntax: words are ANDed, \"quoted phrases\" match as phrases, \
                        word* is a prefix.\n  skein search 'auth bug' --kind prompt\n  \
                        skein search '\"connection refused\"' --tool Bash --format jsonl | jq .session_id"
)]
pub(crate) struct Args {
    /// What to search for.
    pub(crate) query: String,
    /// Transcript files, directories or archives (default: the whole catalog, after
    /// refreshing the Claude projects directories and the default archive).
    pub(crate) paths: Vec<PathBuf>,
    #[command(flatten)]
    pub(crate) filters: QueryArgs,
    /// Only this kind of text (repeatable): prompt, text, thinking, tool_use, tool_result.
    #[arg(long, value_name = "KIND")]
    pub(crate) kind: Vec<String>,
    /// Only tool inputs and results of this tool (e.g. Bash).
    #[arg(long, value_name = "NAME")]
    pub(crate) tool: Option<String>,
    /// Only this session (an id or its first characters).
    #[arg(long, value_name = "ID")]
    pub(crate) session: Option<String>,
    /// At most this many hits.
    #[arg(long, short = 'n', default_value_t = 20)]
    pub(crate) limit: usize,
}

const COLUMNS: [(&str, Align); 6] = [
    ("session", Align::Left),
    ("agent", Align::Left),
    ("kind", Align::Left),
    ("time", Align::Left),
    ("score", Align::Right),
    ("snippet", Align::Left),
];

fn cells(h: &Hit) -> Vec<String> {
    vec![
        h.session_id.clone(),
        h.agent_id.clone().unwrap_or_else(|| "main".into()),
        h.tool
            .as_ref()
            .map_or_else(|| h.kind.to_owned(), |t| format!("{} {t}", h.kind)),
        h.timestamp.clone().unwrap_or_default(),
        format!("{:.2}", h.score),
        h.snippet.clone(),
    ]
}

/// Hits grouped by session (in order of each session's best hit), snippets highlighted.
fn render(hits: &[Hit], color: bool, env: &Env) -> String {
    let mut groups: BTreeMap<usize, (&Hit, Vec<&Hit>)> = BTreeMap::new();
    let mut first: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for (i, h) in hits.iter().enumerate() {
        let k = *first.entry((&h.project, &h.session_id)).or_insert(i);
        groups.entry(k).or_insert((h, Vec::new())).1.push(h);
    }
    let (b, i, r) = if color {
        ("\x1b[1m", "\x1b[1;33m", "\x1b[0m")
    } else {
        ("", "", "")
    };
    let mut out = String::new();
    for (head, group) in groups.values() {
        let _ = writeln!(
            out,
            "{b}{}{r}  {}  {}",
            head.session_id,
            head.project,
            crate::output::resume_command(
                &head.session_id,
                head.cwd.as_deref(),
                head.archived.then(|| std::path::Path::new(&head.path)),
                env
            )
        );
        for h in group {
            let what = h
                .tool
                .as_ref()
                .map_or_else(|| h.kind.to_owned(), |t| format!("{} ({t})", h.kind));
            let who = h
                .agent_id
                .as_deref()
                .map(|a| format!(" agent {a}"))
                .unwrap_or_default();
            let when: String = h
                .timestamp
                .as_deref()
                .unwrap_or("")
                .chars()
                .take(19)
                .collect();
            let snippet = h.snippet.replace('«', i).replace('»', r);
            let _ = writeln!(out, "  {when} {what}{who}\n    {snippet}");
        }
        out.push('\n');
    }
    out
}

pub(crate) fn run(args: &Args, env: &Env) -> Result<ExitCode> {
    let mut kinds = Vec::new();
    for k in &args.kind {
        match DocKind::from_name(k) {
            Some(kind) => kinds.push(kind),
            None => bail!("unknown --kind {k:?} (prompt, text, thinking, tool_use, tool_result)"),
        }
    }
    let q = &args.filters;
    let (since_ms, until_ms) = q.bounds()?;
    let (catalog, scope, report) = q.refreshed(env, &args.paths)?;
    let hits = catalog.search(&SearchQuery {
        query: args.query.clone(),
        kinds,
        tool: args.tool.clone(),
        session: args.session.clone(),
        project: q.project.clone(),
        since_ms,
        until_ms,
        paths: scope.explicit.then(|| report.paths.clone()),
        limit: args.limit,
    })?;
    let format = choose_format(q.format);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if format == Format::Table {
        out.write_all(render(&hits, crate::term::get().color_out, env).as_bytes())?;
    } else {
        let mut w = RowWriter::new(format, &mut out);
        for h in &hits {
            w.row(h, cells)?;
        }
        w.finish(&COLUMNS)?;
    }
    out.flush()?;
    Ok(exit_status(
        report.errors.is_empty() && report.refresh.errors.is_empty(),
    ))
}
