//! `skein usage [daily|weekly|monthly|session|model] [PATH...]`: token usage and cost,
//! deduplicated across the whole input. See `docs/reports/usage.md`.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args as ClapArgs;
use serde::de::IgnoredAny;
use skein_analysis::AnalysisOptions;
use skein_catalog::{Catalog, RootsReport};
use skein_layout::SessionFiles;
use skein_reports::agents::agent_groups;
use skein_reports::load_session;
use skein_reports::pricing::PricingTable;
use skein_reports::tree::LinkVisitor;
use skein_reports::usage::{
    Figures, Pricer, RequestGroup, SessionScan, SkippedLine, TotalsRow, UsageBuilder, UsageKind,
    UsageOptions, UsageReport, UsageRow, UsageScanner, groups_fit_with,
};

use super::catalog::CatalogArgs;
use crate::cli::Format;

mod blocks;
mod listed;

use crate::output::{Align, warning_line};
use crate::report::{ReportArgs, RowWriter, exit_status};
use crate::table::{Table, short_model, thousands};
pub(crate) use blocks::parse_now;

/// Token usage and cost. The first path may name the report: `daily` (default), `weekly`
/// (weeks start on Monday), `monthly`, `session`, `model` or `blocks` (5-hour billing
/// blocks); write `./daily` for a directory of that name.
#[derive(Debug, ClapArgs)]
#[command(
    after_help = "Reports: daily (default), weekly, monthly, session, model, blocks, given as the \
                  first argument:\n  skein usage monthly ~/.claude/projects\n  skein usage session \
                  --since 2026-05-01 --format jsonl | jq 'select(.totals|not)'\n  skein usage \
                  blocks --active --token-limit max"
)]
pub(crate) struct Args {
    #[command(flatten)]
    pub(crate) report: ReportArgs,
    /// A JSON price table whose entries extend or override the embedded one (default: the
    /// config's `[reports] pricing`).
    #[arg(long, value_name = "FILE")]
    pub(crate) pricing: Option<PathBuf>,
    /// In the table, add one line per model under each row.
    #[arg(long)]
    pub(crate) breakdown: bool,
    /// Group by agent instead of the report's period: `main`, an agent's name, `(type)` for
    /// unnamed agents, `(internal)` (reads each session twice).
    #[arg(long, value_enum)]
    pub(crate) by: Option<By>,
    #[command(flatten)]
    pub(crate) catalog: CatalogArgs,
    /// Scan the transcripts instead of answering from the catalog.
    #[arg(long)]
    pub(crate) no_catalog: bool,
    /// Name every skipped line in the warnings (by default the first few).
    #[arg(long, short = 'v')]
    pub(crate) verbose: bool,
    #[command(flatten)]
    pub(crate) blocks: blocks::BlockArgs,
}

/// What `--by` groups on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum By {
    /// One row per agent name.
    Agent,
}

thread_local! {
    static SCANNER: RefCell<UsageScanner> = RefCell::new(UsageScanner::new());
}

/// No report name was given (the first path names none).
fn named_default(report: &ReportArgs) -> bool {
    report
        .paths
        .first()
        .and_then(|p| p.to_str())
        .is_none_or(|p| UsageKind::from_name(p).is_none())
}

/// The report kind named by the first path, and the paths that remain.
fn split_kind(report: &ReportArgs) -> (UsageKind, ReportArgs) {
    let mut rest = report.clone();
    if let Some(first) = rest.paths.first().and_then(|p| p.to_str())
        && let Some(kind) = UsageKind::from_name(first)
    {
        rest.paths.remove(0);
        return (kind, rest);
    }
    (UsageKind::Daily, rest)
}

/// The report words `usage` takes as its first path.
const REPORT_WORDS: [&str; 6] = ["daily", "weekly", "monthly", "session", "model", "blocks"];

/// A first path that does not exist and is a typo of a report word (`dialy`) is an error
/// that names the word, not an empty input.
fn check_report_word(report: &ReportArgs) -> Result<()> {
    let Some(first) = report.paths.first() else {
        return Ok(());
    };
    let Some(word) = first.to_str() else {
        return Ok(());
    };
    if REPORT_WORDS.contains(&word) || word.contains('/') || first.exists() {
        return Ok(());
    }
    if let Some(near) = REPORT_WORDS
        .iter()
        .find(|w| strsim::damerau_levenshtein(word, w) <= 2)
    {
        anyhow::bail!("{word}: no such file or directory; did you mean the report `{near}`?");
    }
    Ok(())
}

pub(crate) fn run(args: &Args, env: &skein_layout::Env) -> Result<ExitCode> {
    check_report_word(&args.report)?;
    let in_blocks = blocks::named(&args.report);
    let (named, report) = match &in_blocks {
        Some(rest) => (UsageKind::Daily, rest.clone()),
        None => split_kind(&args.report),
    };
    if in_blocks.is_none() {
        args.blocks.check_unused(named.name())?;
    }
    let kind = match (args.by, named) {
        (Some(By::Agent), _) if in_blocks.is_some() => {
            anyhow::bail!("--by agent replaces the blocks report: give no report name with it")
        }
        (None, k) => k,
        (Some(By::Agent), UsageKind::Daily) if named_default(&args.report) => UsageKind::Agent,
        (Some(By::Agent), k) => anyhow::bail!(
            "--by agent replaces the {} report: give no report name with it",
            k.name()
        ),
    };
    let format = report.format();
    let options = UsageOptions {
        kind,
        range: report.date_range()?,
        zone: report.zone()?,
    };
    let pricing = load_pricing(args.pricing.as_deref())?;
    // From the catalog where it covers the input (not for --by agent, which reads the
    // spawning calls); the other sessions are scanned, in parallel.
    let (catalog, behind) = if args.no_catalog || kind == UsageKind::Agent {
        (None, None)
    } else {
        super::catalog::for_report(&args.catalog, env, &report, in_blocks.is_none())
    };
    // Once the answer is written: an index started before would compete with the scan.
    let catch_up = || {
        if let Some(b) = behind {
            b.catch_up(report.quiet);
        }
    };
    // Without the catalog, the listing and the scan overlap (`listed`); `--by agent` reads
    // each session's spawning calls too, and keeps the listing first.
    let (sessions, found_ok, gathered) = if catalog.is_none() && kind != UsageKind::Agent {
        listed::gather_listed(&report, env, kind)?
    } else {
        let grouping = in_blocks.is_none();
        gather_catalogued(
            &report,
            env,
            catalog.as_ref(),
            kind,
            grouping,
            &pricing,
            &options,
        )?
    };
    let Gathered {
        builder,
        skipped,
        jobs_ok,
    } = gathered;
    if in_blocks.is_some() {
        let result = blocks::finish(builder, &args.blocks, &report, &pricing)?;
        if !report.quiet {
            warn(&result.totals, &skipped, args.verbose);
        }
        catch_up();
        return Ok(exit_status(found_ok && jobs_ok));
    }
    let result = builder.finish(&options, &pricing);
    if !report.quiet {
        warn(&result.totals, &skipped, args.verbose);
    }
    write(format, kind, &result, args.breakdown)?;
    // The command is done: the process's exit returns this memory at once, where freeing
    // each session, row and source one by one took ~1-2 ms on the bench tree.
    std::mem::forget(result);
    std::mem::forget(sessions);
    if let Some((mut c, refreshed)) = catalog {
        c.leak_rows();
        std::mem::forget(refreshed);
        drop(c);
    }
    catch_up();
    Ok(exit_status(found_ok && jobs_ok))
}

/// The sessions and their usage when the catalog may answer (or for `--by agent`, which reads
/// each session's spawning calls): sessions from the catalog's sources, or listed; their usage
/// from the catalog's groups (`grouping`: not for blocks) or copies where it can answer, the
/// rest scanned.
fn gather_catalogued(
    report: &ReportArgs,
    env: &skein_layout::Env,
    catalog: Option<&(Catalog, RootsReport)>,
    kind: UsageKind,
    grouping: bool,
    pricing: &PricingTable,
    options: &UsageOptions,
) -> Result<(Vec<SessionFiles>, bool, Gathered)> {
    // The sessions: from the catalog's sources when its refresh listed the whole input
    // cleanly (the same sessions a listing finds), else listed again.
    let (sessions, found_ok) = match catalog.and_then(|(c, r)| catalog_sessions(c, r, report, env))
    {
        Some(found) => (report.filtered(env, found)?, true),
        None => report.sessions(env)?,
    };
    let teams = if kind == UsageKind::Agent {
        super::tree::team_configs(env, report.quiet)
    } else {
        Vec::new()
    };
    let warn_scan = |e: skein_catalog::Error| {
        if !report.quiet {
            warning_line(&format!("{e}; scanning the transcripts instead"));
        }
    };
    // The reports by period, session and model take most requests pre-summed; the copies
    // path (every copy from the catalog) answers the rest, and whatever the groups cannot.
    let grouped = match catalog {
        Some((c, _)) if grouping => c.usage_groups(&sessions).unwrap_or_else(|e| {
            warn_scan(e);
            None
        }),
        _ => None,
    };
    // Every copy of `of` from the catalog, in order; `None` for a session to scan.
    let every_copy = |of: &[SessionFiles]| -> Vec<Option<(SessionScan, Vec<RequestGroup>)>> {
        if of.is_empty() {
            return Vec::new();
        }
        match catalog {
            Some((c, _)) => SCANNER
                .with(|sc| c.usage_scans(of, &mut sc.borrow_mut()))
                .map_err(warn_scan)
                .ok(),
            None => None,
        }
        .unwrap_or_else(|| vec![None; of.len()])
        .into_iter()
        .map(|a| a.map(|scan| (scan, Vec::new())))
        .collect()
    };
    // Each session's answer from the catalog: its contested copies and groups, else (its
    // groups cannot answer: a bound inside a group's 15 minutes, a moved price band) every
    // copy of that session; `None` for a session to scan. Mixing the two is exact: a grouped
    // session's summed copies have no other copy anywhere in the catalog.
    let answers: Vec<Option<(SessionScan, Vec<RequestGroup>)>> = match grouped {
        Some(grouped) => {
            let mut pricer = Pricer::new(pricing);
            let fit: Vec<bool> = grouped
                .iter()
                .map(|a| groups_fit_with(&mut pricer, &a.groups, options))
                .collect();
            let misfits: Vec<SessionFiles> = sessions
                .iter()
                .zip(&fit)
                .filter(|(_, fits)| !**fits)
                .map(|(s, _)| s.clone())
                .collect();
            let mut copies = every_copy(&misfits).into_iter();
            grouped
                .into_iter()
                .zip(fit)
                .map(|(a, fits)| {
                    if fits {
                        Some((a.scan, a.groups))
                    } else {
                        copies.next().flatten()
                    }
                })
                .collect()
        }
        None => every_copy(&sessions),
    };
    let gathered = gather(report, &sessions, answers, kind, &teams)?;
    Ok((sessions, found_ok, gathered))
}

/// The sessions of a report's input from the catalog's sources, when its refresh listed
/// that input without errors; `None` otherwise. The catalog names files by absolute paths;
/// under a root given relatively they are named from it, as a listing of it names them (in
/// warnings, for the project filter).
fn catalog_sessions(
    catalog: &Catalog,
    refreshed: &RootsReport,
    report: &ReportArgs,
    env: &skein_layout::Env,
) -> Option<Vec<SessionFiles>> {
    let roots = report.roots(env).ok()?;
    // Standard input is read by the listing, never catalogued.
    if !refreshed.errors.is_empty()
        || !refreshed.refresh.errors.is_empty()
        || roots.iter().any(|r| r.as_os_str() == "-")
    {
        return None;
    }
    let sessions = catalog.listed_sessions(&refreshed.paths).ok().flatten()?;
    skein_layout::rebase_sessions(sessions, &skein_app::catalog::given_roots(roots))
}

/// Every session's usage, in session order, in a builder.
struct Gathered {
    builder: UsageBuilder,
    /// The skipped lines of the sessions that were scanned.
    skipped: Vec<SkippedLine>,
    /// Every scan succeeded.
    jobs_ok: bool,
}

/// Adds each session's answer from the catalog (copies, and groups of pre-summed requests)
/// to a builder, scanning the sessions without one (`None`) in parallel.
fn gather(
    report: &ReportArgs,
    sessions: &[SessionFiles],
    mut answers: Vec<Option<(SessionScan, Vec<RequestGroup>)>>,
    kind: UsageKind,
    teams: &[skein_layout::TeamConfig],
) -> Result<Gathered> {
    let mmap = report.mmap;
    let missing: Vec<SessionFiles> = sessions
        .iter()
        .zip(&answers)
        .filter(|(_, c)| c.is_none())
        .map(|(s, _)| s.clone())
        .collect();
    // Every session goes to the builder in discovery order, from the catalog or from its scan
    // as each scan arrives (a session whose scan failed was reported and is left out), so no
    // scan is held longer than it takes to add it.
    let mut skipped = Vec::new();
    let mut builder = UsageBuilder::new();
    let mut next = 0;
    let empty = BTreeMap::new();
    let jobs_ok = missing.is_empty()
        || report.for_each_session(
            &missing,
            |s, parser| {
                let scan = SCANNER
                    .with(|sc| sc.borrow_mut().scan_session(s, mmap))
                    .map_err(anyhow::Error::from)?;
                // Agent names come from the spawning calls: one more pass, only for --by agent.
                let agents = if kind == UsageKind::Agent {
                    let loaded = load_session::<IgnoredAny, LinkVisitor>(
                        s,
                        &AnalysisOptions::default(),
                        parser,
                        mmap,
                    )?;
                    agent_groups(&loaded, |v| v, teams)
                } else {
                    BTreeMap::new()
                };
                Ok((scan, agents))
            },
            |s, (scan, agents)| {
                while let Some(c) = sessions.get(next) {
                    next += 1;
                    if c == s {
                        break;
                    }
                    if let Some((scan, groups)) = answers[next - 1].take() {
                        let answer = (scan, groups, &empty);
                        add_answer(&mut builder, &mut skipped, kind, c, answer);
                    }
                }
                add_answer(
                    &mut builder,
                    &mut skipped,
                    kind,
                    s,
                    (scan, Vec::new(), &agents),
                );
                Ok(())
            },
        )?;
    for (c, answer) in sessions[next..].iter().zip(&mut answers[next..]) {
        if let Some((scan, groups)) = answer.take() {
            add_answer(&mut builder, &mut skipped, kind, c, (scan, groups, &empty));
        }
    }
    Ok(Gathered {
        builder,
        skipped,
        jobs_ok,
    })
}

/// Adds session `s`'s answer to the report: its copies, its pre-summed groups and, for
/// `--by agent`, its agents' names; its skipped lines are kept for the warning.
fn add_answer(
    builder: &mut UsageBuilder,
    skipped: &mut Vec<SkippedLine>,
    kind: UsageKind,
    s: &SessionFiles,
    (mut scan, groups, agents): (SessionScan, Vec<RequestGroup>, &BTreeMap<String, String>),
) {
    skipped.append(&mut scan.skipped);
    if kind == UsageKind::Agent {
        builder.add_with_agents(s, scan, agents);
    } else {
        builder.add_with_groups(s, scan, groups);
    }
}

/// How many skipped lines a warning names without `--verbose`.
const NAMED_SKIPS: usize = 3;

/// `: a.jsonl:12:3456, b.jsonl:7:890 and 5 more (--verbose lists them)`, naming the lines.
fn locations(skipped: &[&SkippedLine], total: u64, verbose: bool) -> String {
    let shown = if verbose { skipped.len() } else { NAMED_SKIPS };
    let named: Vec<String> = skipped
        .iter()
        .take(shown)
        .map(|s| {
            let path = s
                .path
                .as_deref()
                .map_or_else(|| "-".into(), |p| p.display().to_string());
            format!("{path}:{}:{}", s.line, s.offset)
        })
        .collect();
    if named.is_empty() {
        return String::new();
    }
    let more = total.saturating_sub(named.len() as u64);
    let tail = match (more, verbose) {
        (0, _) => String::new(),
        (n, false) => format!(" and {n} more (--verbose lists them)"),
        (n, true) => format!(" and {n} more"),
    };
    format!(": {}{tail}", named.join(", "))
}

fn warn(t: &TotalsRow, skipped: &[SkippedLine], verbose: bool) {
    let (invalid, no_ts): (Vec<&SkippedLine>, Vec<&SkippedLine>) =
        skipped.iter().partition(|s| s.invalid);
    if !t.unpriced_models.is_empty() {
        warning_line(&format!(
            "no price for {}: their cost is counted as 0 (add them with --pricing FILE)",
            t.unpriced_models.join(", ")
        ));
    }
    if t.scan.invalid_lines > 0 {
        warning_line(&format!(
            "{} lines mentioning usage are not JSON objects and were skipped{}",
            t.scan.invalid_lines,
            locations(&invalid, t.scan.invalid_lines, verbose)
        ));
    }
    if t.scan.no_timestamp > 0 {
        warning_line(&format!(
            "{} usage records without a timestamp were not counted{}",
            t.scan.no_timestamp,
            locations(&no_ts, t.scan.no_timestamp, verbose)
        ));
    }
}

fn write(format: Format, kind: UsageKind, r: &UsageReport, breakdown: bool) -> Result<()> {
    write_report(format, &r.rows, &r.totals, || {
        render_table(kind, r, breakdown)
    })
}

/// Writes a usage report: on a terminal the table `table` makes, else the rows, then the
/// totals as the last object.
fn write_report<R: serde::Serialize>(
    format: Format,
    rows: &[R],
    totals: &TotalsRow,
    table: impl FnOnce() -> String,
) -> Result<()> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if format == Format::Table {
        out.write_all(table().as_bytes())?;
        out.flush()?;
        return Ok(());
    }
    let mut w = RowWriter::new(format, out);
    for row in rows {
        w.row(row, |_| Vec::new())?;
    }
    w.row(totals, |_| Vec::new())?;
    w.finish(&[])
}

/// The cells that name a row: the project and the session id for the session report, else
/// one key (a model as tables show it).
fn key_cells(kind: UsageKind, row: &UsageRow) -> Vec<String> {
    let text = |v: &Option<String>| v.clone().unwrap_or_default();
    match kind {
        UsageKind::Daily => vec![text(&row.date)],
        UsageKind::Weekly => vec![text(&row.week)],
        UsageKind::Monthly => vec![text(&row.month)],
        UsageKind::Session => vec![text(&row.project), text(&row.session_id)],
        UsageKind::Model => vec![row.model.as_deref().map(short_model).unwrap_or_default()],
        UsageKind::Agent => vec![text(&row.agent)],
    }
}

/// Models as a table cell: short names, comma-separated.
fn models_cell(models: &[String]) -> String {
    models
        .iter()
        .map(|m| short_model(m))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The titles of the four token counters, their total and the cost.
const FIGURE_HEADERS: [&str; 6] = [
    "input",
    "output",
    "cache write",
    "cache read",
    "total",
    "cost USD",
];

/// The cells under [`FIGURE_HEADERS`]: input, output, cache write, cache read, total; cost.
fn number_cells(tokens: [u64; 5], cost: f64) -> impl Iterator<Item = String> {
    tokens
        .into_iter()
        .map(thousands)
        .chain(std::iter::once(format!("{cost:.2}")))
}

fn figure_cells(mut key: Vec<String>, models: String, f: &Figures) -> Vec<String> {
    let tokens = [
        f.input_tokens,
        f.output_tokens,
        f.cache_creation_input_tokens,
        f.cache_read_input_tokens,
        f.total_tokens,
    ];
    key.extend(number_cells(tokens, f.cost_usd));
    key.push(models);
    key
}

fn render_table(kind: UsageKind, r: &UsageReport, breakdown: bool) -> String {
    let first: &[&str] = match kind {
        UsageKind::Daily => &["date"],
        UsageKind::Weekly => &["week (Mon)"],
        UsageKind::Monthly => &["month"],
        UsageKind::Session => &["project", "session"],
        UsageKind::Model => &["model"],
        UsageKind::Agent => &["agent"],
    };
    let keys = first.len();
    let mut headers = first.to_vec();
    headers.extend(FIGURE_HEADERS);
    headers.push("models");
    // The model report has one model per row already.
    let models = |f: &Figures| {
        if kind == UsageKind::Model {
            String::new()
        } else {
            models_cell(&f.models)
        }
    };
    let blank_keys = |label: String| {
        let mut k = vec![label];
        k.resize(keys, String::new());
        k
    };
    let mut rows: Vec<Vec<String>> = Vec::new();
    for row in &r.rows {
        rows.push(figure_cells(
            key_cells(kind, row),
            models(&row.figures),
            &row.figures,
        ));
        if breakdown && kind != UsageKind::Model {
            for m in &row.figures.breakdown {
                let f = Figures {
                    messages: m.messages,
                    input_tokens: m.input_tokens,
                    output_tokens: m.output_tokens,
                    cache_creation_input_tokens: m.cache_creation_input_tokens,
                    cache_read_input_tokens: m.cache_read_input_tokens,
                    total_tokens: m.total_tokens,
                    cost_usd: m.cost_usd,
                    models: Vec::new(),
                    breakdown: Vec::new(),
                };
                let label = format!("  └ {}", short_model(&m.model));
                rows.push(figure_cells(blank_keys(label), String::new(), &f));
            }
        }
    }
    rows.push(figure_cells(
        blank_keys("Total".into()),
        models(&r.totals.figures),
        &r.totals.figures,
    ));
    // The keys and the models on the left, the figures on the right.
    let mut align = vec![Align::Left; keys];
    align.extend([Align::Right; 6]);
    align.push(Align::Left);
    // What goes first when the terminal is narrow (or with --compact): the models, then the
    // cache columns; the key, input, output, total and cost stay.
    let optional = [keys + 6, keys + 2, keys + 3];
    Table::new(&headers, &align, rows)
        .with_totals()
        .optional(&optional)
        .cost_column(keys + 5)
        .render()
}

/// The embedded price table, extended or overridden by `--pricing FILE`.
pub(crate) fn load_pricing(path: Option<&std::path::Path>) -> Result<PricingTable> {
    let mut pricing = PricingTable::embedded();
    if let Some(path) = path {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
            .context("cannot use --pricing")?;
        let user = PricingTable::from_json(&text, &path.display().to_string())
            .context("cannot use --pricing")?;
        pricing = pricing.overridden_by(user);
    }
    Ok(pricing)
}
