//! `skein skills`: Skill tool invocations per skill. See `docs/reports/skills.md`.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args as ClapArgs;
use serde::de::IgnoredAny;
use skein_analysis::AnalysisOptions;
use skein_core::time::{Zone, parse_ms};
use skein_reports::load_session;
use skein_reports::skills::{SkillRow, SkillTotals, SkillVisitor, in_range, skill_calls};

use super::catalog::{CatalogArgs, Remembered};
use crate::output::percent;
use crate::report::{ReportArgs, exit_status, write_rows};

#[derive(Debug, ClapArgs)]
pub(crate) struct Args {
    #[command(flatten)]
    pub(crate) report: ReportArgs,
    /// Also count slash commands, named with a leading `/`: `SlashCommand` tool calls and
    /// commands the user typed (`<command-name>`; built-ins such as `/clear` included).
    #[arg(long)]
    pub(crate) slash_commands: bool,
    #[command(flatten)]
    pub(crate) catalog: CatalogArgs,
    /// Read every session instead of taking the unchanged ones' invocations from the catalog.
    #[arg(long)]
    pub(crate) no_catalog: bool,
}

fn cells(r: &SkillRow, zone: &Zone) -> Vec<String> {
    // The local day, as the `days` count and the JSON `daily` keys use.
    let day = |ts: &Option<String>| {
        ts.as_deref()
            .and_then(parse_ms)
            .map_or_else(|| "-".into(), |ms| zone.day_of(ms).key())
    };
    vec![
        r.skill.clone(),
        crate::table::thousands(r.count),
        crate::table::thousands(r.sessions),
        day(&r.first_use),
        day(&r.last_use),
        crate::table::thousands(r.errors),
        percent(r.success_rate),
        r.daily.len().to_string(),
    ]
}

pub(crate) fn run(args: &Args, env: &skein_layout::Env) -> Result<ExitCode> {
    let format = args.report.format();
    let zone = args.report.zone()?;
    let window = args.report.date_range()?.in_zone(&zone);
    let (sessions, found_ok) = args.report.sessions(env)?;
    let options = AnalysisOptions::default();
    let mut totals = SkillTotals::in_zone(zone.clone());
    // Each session's invocations from the catalog when its files are unchanged since they
    // were remembered (with and without slash commands apart).
    let name = if args.slash_commands {
        "skills+slash"
    } else {
        "skills"
    };
    let quiet = args.report.quiet;
    let (catalog, memo) = Remembered::open(&args.catalog, env, name, !args.no_catalog, quiet);
    let jobs_ok = args.report.for_each_row(
        &sessions,
        |s, parser| {
            let mut calls = memo.get_or(s, || {
                let mmap = args.report.mmap;
                let loaded = load_session::<IgnoredAny, SkillVisitor>(s, &options, parser, mmap)?;
                Ok(skill_calls(&loaded, args.slash_commands))
            })?;
            calls.retain(|c| in_range(&window, c));
            Ok(calls)
        },
        |c| {
            totals.add(&c);
            Ok(())
        },
    )?;
    memo.save(catalog.as_ref(), quiet);
    write_rows(
        format,
        &totals.finish(),
        &[
            "skill", "count", "sessions", "first", "last", "errors", "success", "days",
        ],
        |r| cells(r, &zone),
    )?;
    Ok(exit_status(found_ok && jobs_ok))
}
