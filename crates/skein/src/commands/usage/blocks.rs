//! `skein usage blocks`: the 5-hour billing blocks (flags, output). The blocks themselves are
//! `skein_reports::usage::blocks`. See `docs/reports/usage.md#blocks`.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Result, bail};
use clap::Args;
use skein_core::time::{Zone, parse_ms};
use skein_reports::pricing::PricingTable;
use skein_reports::usage::blocks::{DEFAULT_BLOCK_MS, MS_PER_HOUR};
use skein_reports::usage::{
    BlockOptions, BlockRow, BlocksReport, LimitStatus, TokenLimit, UsageBuilder,
};

use skein_reports::statusline::duration;

use super::{FIGURE_HEADERS, models_cell, number_cells, write_report};
use crate::cli::Format;
use crate::output::{Align, warning_line};
use crate::report::ReportArgs;
use crate::table::{Table, thousands};

/// The report's name, as the first path.
pub(crate) const NAME: &str = "blocks";

/// Flags of the blocks report.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct BlockArgs {
    /// blocks: only the active block, with burn rate, projection and time left.
    #[arg(long)]
    pub(crate) active: bool,
    /// blocks: also the gaps between blocks, as rows with `"gap": true`.
    #[arg(long)]
    pub(crate) gaps: bool,
    /// blocks: the block length in hours (default 5).
    #[arg(long, value_name = "HOURS")]
    pub(crate) session_length: Option<f64>,
    /// blocks: the token limit the active block's projection is held to: a number, or `max`
    /// (the largest past block).
    #[arg(long, value_name = "N|max", value_parser = parse_limit)]
    pub(crate) token_limit: Option<TokenLimit>,
    /// blocks: the instant taken as now (ISO-8601, e.g. 2026-05-31T12:00:00Z), for
    /// reproducible output; default: the clock.
    #[arg(long, value_name = "TIME", value_parser = parse_now)]
    pub(crate) now: Option<i64>,
}

fn parse_limit(s: &str) -> Result<TokenLimit, String> {
    if s.eq_ignore_ascii_case("max") {
        return Ok(TokenLimit::Max);
    }
    s.replace(['_', ','], "")
        .parse()
        .map(TokenLimit::Tokens)
        .map_err(|_| format!("{s:?} is neither a number of tokens nor `max`"))
}

/// `--now`: an ISO-8601 instant.
pub(crate) fn parse_now(s: &str) -> Result<i64, String> {
    parse_ms(s).ok_or_else(|| format!("{s:?} is not an ISO-8601 time (2026-05-31T12:00:00Z)"))
}

/// A block length in hours, as milliseconds (positive, at least a millisecond).
pub(crate) fn length_ms(hours: Option<f64>) -> Result<i64> {
    let Some(h) = hours else {
        return Ok(DEFAULT_BLOCK_MS);
    };
    let ms = h * MS_PER_HOUR as f64;
    if !ms.is_finite() || ms < 1.0 || ms > i64::MAX as f64 / 4.0 {
        bail!("--session-length must be a positive number of hours, not {h}");
    }
    Ok(ms as i64)
}

impl BlockArgs {
    /// Refuses these flags on another report.
    pub(crate) fn check_unused(&self, report: &str) -> Result<()> {
        let used = [
            (self.active, "--active"),
            (self.gaps, "--gaps"),
            (self.session_length.is_some(), "--session-length"),
            (self.token_limit.is_some(), "--token-limit"),
            (self.now.is_some(), "--now"),
        ];
        if let Some((_, flag)) = used.iter().find(|(u, _)| *u) {
            bail!("{flag} belongs to the blocks report, not to the {report} report");
        }
        Ok(())
    }
}

/// `blocks` given as the first path: the other paths.
pub(crate) fn named(report: &ReportArgs) -> Option<ReportArgs> {
    let first = report.paths.first()?;
    (first == Path::new(NAME)).then(|| {
        let mut rest = report.clone();
        rest.paths.remove(0);
        rest
    })
}

/// Builds the report from the collected sessions and writes it.
pub(crate) fn finish(
    builder: UsageBuilder,
    args: &BlockArgs,
    report: &ReportArgs,
    pricing: &PricingTable,
) -> Result<BlocksReport> {
    let zone = report.zone()?;
    // One "now" for the blocks and for durations such as `--since 7d`.
    let now_ms = args.now.unwrap_or_else(crate::zone::now_ms);
    let options = BlockOptions {
        length_ms: length_ms(args.session_length)?,
        now_ms,
        range: report.date_range_at(now_ms)?,
        zone: zone.clone(),
        gaps: args.gaps,
        active_only: args.active,
        token_limit: args.token_limit,
    };
    let r = builder.finish_blocks(&options, pricing);
    if !report.quiet
        && let Some(a) = r.active()
        && let Some(l) = &a.token_limit
        && l.status == LimitStatus::Exceeds
    {
        warning_line(&format!(
            "the active block is projected to reach {:.1}% of the {} token limit",
            l.projected_percent,
            thousands(l.limit)
        ));
    }
    write(report.format(), &r, args, &zone)?;
    Ok(r)
}

fn write(format: Format, r: &BlocksReport, args: &BlockArgs, zone: &Zone) -> Result<()> {
    write_report(format, &r.rows, &r.totals, || render_table(r, args, zone))
}

/// `YYYY-MM-DD HH:MM` in `zone` of an ISO timestamp skein wrote.
fn local(ts: &str, zone: &Zone) -> String {
    let Some(ms) = parse_ms(ts) else {
        return ts.to_owned();
    };
    let c = zone.civil_of(ms);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}",
        c.year, c.month, c.day, c.hour, c.minute
    )
}

fn minutes_between(a: &str, b: &str) -> i64 {
    match (parse_ms(a), parse_ms(b)) {
        (Some(a), Some(b)) => (b - a).max(0) / 60_000,
        _ => 0,
    }
}

fn status(row: &BlockRow) -> String {
    if row.gap {
        return format!("gap {}", duration(minutes_between(&row.start, &row.end)));
    }
    if let Some(now) = &row.now {
        return format!("ACTIVE, {} left", duration(now.remaining_minutes));
    }
    row.last_activity
        .as_deref()
        .map(|last| duration(minutes_between(&row.start, last)))
        .unwrap_or_default()
}

fn render_table(r: &BlocksReport, args: &BlockArgs, zone: &Zone) -> String {
    if args.active && r.rows.is_empty() {
        return "no active block\n".into();
    }
    let start = format!("block start ({})", zone.name());
    let mut headers = vec![start.as_str(), "activity", "requests"];
    headers.extend(FIGURE_HEADERS);
    headers.push("models");
    let mut rows: Vec<Vec<String>> = Vec::new();
    for row in &r.rows {
        let mut cells = vec![local(&row.start, zone), status(row)];
        if row.gap {
            cells.extend(std::iter::repeat_n(String::new(), 7));
        } else {
            cells.push(thousands(row.requests));
            let tokens = [
                row.input_tokens,
                row.output_tokens,
                row.cache_creation_input_tokens,
                row.cache_read_input_tokens,
                row.total_tokens,
            ];
            cells.extend(number_cells(tokens, row.cost_usd));
        }
        cells.push(models_cell(&row.models));
        rows.push(cells);
    }
    let t = &r.totals.figures;
    let tokens = [
        t.input_tokens,
        t.output_tokens,
        t.cache_creation_input_tokens,
        t.cache_read_input_tokens,
        t.total_tokens,
    ];
    let mut total = vec!["Total".into(), String::new(), thousands(t.messages)];
    total.extend(number_cells(tokens, t.cost_usd));
    total.push(models_cell(&t.models));
    rows.push(total);
    let mut align = [Align::Right; 10];
    align[0] = Align::Left;
    align[1] = Align::Left;
    align[9] = Align::Left;
    // Narrow terminals lose the models, then the cache columns, then the request count.
    let mut out = Table::new(&headers, &align, rows)
        .with_totals()
        .optional(&[9, 5, 6, 2])
        .cost_column(8)
        .render();
    if let Some(a) = r.active() {
        out.push_str(&active_detail(a, zone));
    }
    out
}

/// The lines under the table about the active block.
fn active_detail(a: &BlockRow, zone: &Zone) -> String {
    let Some(now) = &a.now else {
        return String::new();
    };
    let end = local(&a.end, zone);
    let mut out = format!(
        "\nactive block {} – {}: {} elapsed, {} left\n",
        local(&a.start, zone),
        end.get(11..).unwrap_or(&end),
        duration(now.elapsed_minutes),
        duration(now.remaining_minutes)
    );
    match (&now.burn_rate, &now.projection) {
        (Some(rate), Some(p)) => {
            let _ = write!(
                out,
                "  burn rate  {} tokens/h, ${:.2}/h\n  projected  {} tokens, ${:.2} at the block's end\n",
                thousands(rate.tokens_per_hour.round() as u64),
                rate.cost_per_hour,
                thousands(p.total_tokens),
                p.cost_usd
            );
        }
        _ => out.push_str("  burn rate  not yet known (one request so far)\n"),
    }
    if let Some(l) = &a.token_limit {
        let status = match l.status {
            LimitStatus::Ok => "ok",
            LimitStatus::Warning => "WARNING: above 80%",
            LimitStatus::Exceeds => "EXCEEDS the limit",
        };
        let _ = writeln!(
            out,
            "  limit      {} tokens: {:.1}% used, {:.1}% projected ({status})",
            thousands(l.limit),
            l.used_percent,
            l.projected_percent
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_parse() {
        assert_eq!(parse_limit("max"), Ok(TokenLimit::Max));
        assert_eq!(parse_limit("1_000,000"), Ok(TokenLimit::Tokens(1_000_000)));
        assert!(parse_limit("lots").is_err());
        assert_eq!(length_ms(None).expect("default"), 5 * MS_PER_HOUR);
        assert_eq!(length_ms(Some(0.5)).expect("half"), MS_PER_HOUR / 2);
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(length_ms(Some(bad)).is_err(), "{bad}");
        }
    }
}
