//! `skein sessions`: one row per main session, newest first, from the per-file facts.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use rusqlite::Connection;
use serde::Serialize;
use skein_core::time::parse_ms;
use skein_reports::pricing::PricingTable;
use skein_reports::usage::{SessionScan, UsageBuilder, UsageKind, UsageOptions};

use crate::error::{Error, Result};
use crate::usage::copies;

/// Which sessions to list.
#[derive(Debug, Clone, Default)]
pub struct SessionQuery {
    /// Project directory names containing this text.
    pub project: Option<String>,
    /// Sessions active at or after `since_ms` and before `until_ms` (ms since the epoch; the
    /// caller turns days of its zone into these bounds).
    pub since_ms: Option<i64>,
    pub until_ms: Option<i64>,
    /// Only sessions with a file among these paths (`None`: every catalogued session).
    pub paths: Option<rustc_hash::FxHashSet<String>>,
    pub limit: Option<usize>,
}

/// One session.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionRow {
    pub session_id: String,
    pub project: String,
    pub cwd: Option<String>,
    /// `custom-title`, else `ai-title`, else the legacy `summary`, else the first prompt.
    pub title: Option<String>,
    pub first_timestamp: Option<String>,
    pub last_timestamp: Option<String>,
    /// Prompts the user typed in the main transcript.
    pub prompts: u64,
    /// User messages and assistant messages (one per API response), subagents included.
    pub messages: u64,
    /// Distinct tool calls, subagents included.
    pub tool_calls: u64,
    /// Subagent transcripts (internal helper agents not counted).
    pub subagents: u64,
    pub models: Vec<String>,
    /// The session's requests, deduplicated as `skein usage session` does within the session.
    pub cost_usd: f64,
    pub git_branch: Option<String>,
    /// The main transcript is read from the archive.
    pub archived: bool,
    /// The main transcript.
    pub path: String,
}

#[derive(Debug, Default)]
struct File {
    id: i64,
    path: String,
    agent: bool,
    internal: bool,
    archived: bool,
    first_ts: Option<String>,
    last_ts: Option<String>,
    cwd: Option<String>,
    git_branch: Option<String>,
    models: Option<String>,
    custom_title: Option<String>,
    ai_title: Option<String>,
    summary: Option<String>,
    first_prompt: Option<String>,
    prompts: u64,
    user_messages: u64,
    assistant_messages: u64,
    tool_calls: u64,
}

fn files(conn: &Connection) -> rusqlite::Result<BTreeMap<(String, String), Vec<File>>> {
    let mut stmt = conn.prepare_cached(
        "SELECT s.id, s.path, s.session_id, s.project, s.agent_id IS NOT NULL, s.internal, \
         s.archived, s.first_ts, s.last_ts, s.cwd, s.git_branch, s.models, s.custom_title, \
         s.ai_title, s.summary, s.first_prompt, s.prompts, s.user_messages, \
         (SELECT count(*) FROM requests r WHERE r.source_id = s.id AND r.origin != 3), \
         (SELECT count(*) FROM tool_calls t WHERE t.source_id = s.id AND t.line IS NOT NULL) \
         FROM sources s WHERE s.shadowed = 0 ORDER BY s.id",
    )?;
    let mut out: BTreeMap<(String, String), Vec<File>> = BTreeMap::new();
    let rows = stmt.query_map([], |r| {
        let u = |i: usize| r.get::<_, i64>(i).map(|v| v.max(0) as u64);
        Ok((
            (r.get::<_, String>(3)?, r.get::<_, String>(2)?),
            File {
                id: r.get(0)?,
                path: r.get(1)?,
                agent: r.get(4)?,
                internal: r.get(5)?,
                archived: r.get(6)?,
                first_ts: r.get(7)?,
                last_ts: r.get(8)?,
                cwd: r.get(9)?,
                git_branch: r.get(10)?,
                models: r.get(11)?,
                custom_title: r.get(12)?,
                ai_title: r.get(13)?,
                summary: r.get(14)?,
                first_prompt: r.get(15)?,
                prompts: u(16)?,
                user_messages: u(17)?,
                assistant_messages: u(18)?,
                tool_calls: u(19)?,
            },
        ))
    })?;
    for row in rows {
        let (key, file) = row?;
        out.entry(key).or_default().push(file);
    }
    Ok(out)
}

fn ms(ts: Option<&str>) -> Option<i64> {
    ts.and_then(parse_ms)
}

/// The sessions matching `q`, newest last activity first.
pub(crate) fn sessions(
    conn: &Connection,
    db: &Path,
    q: &SessionQuery,
    pricing: &PricingTable,
) -> Result<Vec<SessionRow>> {
    let sql = |e| Error::sql(db, e);
    let mut out = Vec::new();
    let mut ids: Vec<Vec<i64>> = Vec::new();
    for ((project, session_id), group) in files(conn).map_err(sql)? {
        if q.project
            .as_ref()
            .is_some_and(|p| !project.contains(p.as_str()))
        {
            continue;
        }
        if let Some(paths) = &q.paths
            && !group.iter().any(|f| paths.contains(&f.path))
        {
            continue;
        }
        let Some(main) = group.iter().find(|f| !f.agent) else {
            continue;
        };
        let first = group.iter().filter_map(|f| f.first_ts.clone()).min();
        let last = group.iter().filter_map(|f| f.last_ts.clone()).max();
        if q.since_ms
            .is_some_and(|s| ms(last.as_deref()).is_none_or(|t| t < s))
            || q.until_ms
                .is_some_and(|u| ms(first.as_deref()).is_none_or(|t| t >= u))
        {
            continue;
        }
        let models: BTreeSet<String> = group
            .iter()
            .filter_map(|f| f.models.as_deref())
            .flat_map(|m| m.split(','))
            .filter(|m| !m.is_empty())
            .map(str::to_owned)
            .collect();
        let title = main
            .custom_title
            .clone()
            .or_else(|| main.ai_title.clone())
            .or_else(|| main.summary.clone())
            .or_else(|| main.first_prompt.clone());
        ids.push(
            std::iter::once(main.id)
                .chain(group.iter().filter(|f| f.agent).map(|f| f.id))
                .collect(),
        );
        out.push(SessionRow {
            session_id,
            project,
            cwd: main.cwd.clone(),
            title,
            first_timestamp: first,
            last_timestamp: last,
            prompts: main.prompts,
            messages: group
                .iter()
                .map(|f| f.user_messages + f.assistant_messages)
                .sum(),
            tool_calls: group.iter().map(|f| f.tool_calls).sum(),
            subagents: group.iter().filter(|f| f.agent && !f.internal).count() as u64,
            models: models.into_iter().collect(),
            cost_usd: 0.0,
            git_branch: main.git_branch.clone(),
            archived: main.archived,
            path: main.path.clone(),
        });
    }
    let mut order: Vec<usize> = (0..out.len()).collect();
    order.sort_by(|&a, &b| {
        let (x, y) = (&out[a], &out[b]);
        (&y.last_timestamp, &y.session_id).cmp(&(&x.last_timestamp, &x.session_id))
    });
    order.truncate(q.limit.unwrap_or(usize::MAX));
    let mut rows = Vec::with_capacity(order.len());
    for k in order {
        let mut row = out[k].clone();
        row.cost_usd = cost(conn, &ids[k], &row, pricing).map_err(sql)?;
        rows.push(row);
    }
    Ok(rows)
}

/// The session's cost: its files' request copies deduplicated as `skein usage` does.
fn cost(
    conn: &Connection,
    ids: &[i64],
    row: &SessionRow,
    pricing: &PricingTable,
) -> rusqlite::Result<f64> {
    let mut scan = SessionScan::default();
    for id in ids {
        scan.copies.append(&mut copies(conn, *id)?);
    }
    let mut b = UsageBuilder::new();
    b.add_session(&row.session_id, &row.project, scan);
    let report = b.finish(
        &UsageOptions {
            kind: UsageKind::Session,
            ..UsageOptions::default()
        },
        pricing,
    );
    Ok(report.totals.figures.cost_usd)
}
