//! Merging: the copies of every session deduplicated into requests, then grouped into rows.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;
use serde::Serialize;
use skein_layout::SessionFiles;

use super::groups::{Pricer, RequestGroup};
use super::rows::{Acc, RowKey, SourceTokens, TotalsRow, UsageReport, UsageRow};
use super::scan::SessionScan;
use super::store::{Added, CopyStore, RequestRef};
use crate::pricing::PricingTable;
use skein_core::time::{DateRange, Day, Zone, format_ms};

/// The report's grouping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UsageKind {
    #[default]
    Daily,
    Weekly,
    Monthly,
    Session,
    Model,
    /// Per agent (`--by agent`).
    Agent,
}

impl UsageKind {
    /// The report's name (`daily`, `weekly`, …).
    pub fn name(self) -> &'static str {
        match self {
            Self::Daily => "daily",
            Self::Weekly => "weekly",
            Self::Monthly => "monthly",
            Self::Session => "session",
            Self::Model => "model",
            Self::Agent => "agent",
        }
    }

    /// The kind named `s`.
    pub fn from_name(s: &str) -> Option<Self> {
        Some(match s {
            "daily" => Self::Daily,
            "weekly" => Self::Weekly,
            "monthly" => Self::Monthly,
            "session" => Self::Session,
            "model" => Self::Model,
            _ => return None,
        })
    }
}

/// Options of the report.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UsageOptions {
    pub kind: UsageKind,
    /// Local days (in `zone`) to keep.
    pub range: DateRange,
    /// The zone whose local days, weeks and months the rows are.
    pub zone: Zone,
}

/// The agent key of the main transcript's requests.
const AGENT_MAIN: &str = crate::agents::MAIN;

/// Model name used when `message.model` is missing.
pub const NO_MODEL: &str = "<unknown>";

/// The rows of a report being built: accumulators, found by their final key (in order) or,
/// on the hot path, by the day or the name they were last found for (building the key
/// string of every request cost more than the rest of the report).
#[derive(Default)]
struct Rows {
    accs: Vec<Acc>,
    index: BTreeMap<RowKey, usize>,
    days: FxHashMap<Day, usize>,
    names: FxHashMap<Box<str>, usize>,
}

impl Rows {
    fn slot(&mut self, key: RowKey) -> usize {
        let accs = &mut self.accs;
        *self.index.entry(key).or_insert_with(|| {
            accs.push(Acc::default());
            accs.len() - 1
        })
    }

    fn by_day(&mut self, day: Day, key: impl FnOnce(Day) -> String) -> usize {
        if let Some(&i) = self.days.get(&day) {
            return i;
        }
        let i = self.slot(RowKey::Text(key(day)));
        self.days.insert(day, i);
        i
    }

    fn by_name(&mut self, name: &str) -> usize {
        if let Some(&i) = self.names.get(name) {
            return i;
        }
        let i = self.slot(RowKey::Text(name.to_owned()));
        self.names.insert(name.into(), i);
        i
    }
}

/// The requests a deduplication kept, by session ([`UsageBuilder::into_kept`]).
pub struct KeptRequests {
    store: CopyStore,
    /// Positions in the store's kept order, by session.
    order: Vec<u32>,
}

impl std::fmt::Debug for KeptRequests {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeptRequests")
            .field("len", &self.order.len())
            .finish_non_exhaustive()
    }
}

impl KeptRequests {
    /// (index of the session in the order sessions were added, request), by session.
    pub fn iter(&self) -> impl Iterator<Item = (usize, RequestRef<'_>)> {
        self.order.iter().map(|&at| {
            let (session, copy) = self.store.at(at);
            (session as usize, copy)
        })
    }

    /// How many.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// None kept.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }
}

/// Collects session scans (in session order) and builds the report.
#[derive(Default)]
pub struct UsageBuilder {
    sessions: Vec<(String, String)>,
    store: CopyStore,
    groups: Vec<(u32, RequestGroup)>,
    pub(super) stats: ScanStats,
}

impl std::fmt::Debug for UsageBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UsageBuilder")
            .field("sessions", &self.sessions.len())
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

/// What was read and how much deduplication removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ScanStats {
    pub sessions: u64,
    pub files: u64,
    pub bytes: u64,
    /// Lines containing `"usage"`.
    pub usage_lines: u64,
    /// Usage lines that are not JSON objects.
    pub invalid_lines: u64,
    /// Usage lines without a parseable timestamp (not counted).
    pub no_timestamp: u64,
    /// Per-file groups read.
    pub copies: u64,
    /// Copies that were another copy of a request already seen (resume copies, replays).
    pub duplicate_copies: u64,
    /// Requests known only from sidechain copies that replay a parent message under another
    /// `requestId`.
    pub sidechain_replays: u64,
    /// Requests counted (before the date filter).
    pub requests: u64,
}

impl UsageBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the scan of the next session (sessions must come in a fixed order for the result
    /// to be deterministic).
    pub fn add(&mut self, session: &SessionFiles, scan: SessionScan) {
        self.add_session(&session.session_id, &session.project(), scan);
    }

    /// Like [`UsageBuilder::add`], with each agent transcript's copies attributed to the
    /// agent's key in `agents` (agent id → key, e.g. its name); copies of agents not in
    /// `agents` are attributed to `(internal)` when read from an internal agent's transcript,
    /// else to `(subagent)`.
    pub fn add_with_agents(
        &mut self,
        session: &SessionFiles,
        mut scan: SessionScan,
        agents: &BTreeMap<String, String>,
    ) {
        for c in &mut scan.copies {
            if let Some(id) = c.agent_id.take() {
                let key = agents.get(&*id).map_or_else(
                    || {
                        if c.source == super::Source::InternalAgent {
                            "(internal)"
                        } else {
                            "(subagent)"
                        }
                    },
                    String::as_str,
                );
                c.agent_id = Some(key.into());
            }
        }
        self.add(session, scan);
    }

    /// Like [`UsageBuilder::add`], naming the session by id and project.
    pub fn add_session(&mut self, session_id: &str, project: &str, scan: SessionScan) {
        self.add_session_with_groups(session_id, project, scan, Vec::new());
    }

    /// Like [`UsageBuilder::add`], with some of the session's requests given pre-summed in
    /// `groups` (requests no other copy competes with, see [`RequestGroup`]) and the others
    /// as copies in `scan`.
    pub fn add_with_groups(
        &mut self,
        session: &SessionFiles,
        scan: SessionScan,
        groups: Vec<RequestGroup>,
    ) {
        self.add_session_with_groups(&session.session_id, &session.project(), scan, groups);
    }

    fn add_session_with_groups(
        &mut self,
        session_id: &str,
        project: &str,
        scan: SessionScan,
        groups: Vec<RequestGroup>,
    ) {
        let s = self.sessions.len() as u32;
        self.sessions
            .push((session_id.to_owned(), project.to_owned()));
        self.stats.sessions += 1;
        self.stats.files += scan.files;
        self.stats.bytes += scan.bytes;
        self.stats.usage_lines += scan.usage_lines;
        self.stats.invalid_lines += scan.invalid_lines;
        self.stats.no_timestamp += scan.no_timestamp;
        self.stats.copies += scan.copies.len() as u64;
        for g in groups {
            self.stats.copies += g.requests;
            self.groups.push((s, g));
        }
        for copy in scan.copies {
            if self.store.add(s, copy) == Added::Duplicate {
                self.stats.duplicate_copies += 1;
            }
        }
    }

    /// The sessions added so far, (session id, project), leaving none.
    pub(super) fn sessions_taken(&mut self) -> Vec<(String, String)> {
        std::mem::take(&mut self.sessions)
    }

    /// The copies added.
    pub(super) fn store(&self) -> &CopyStore {
        &self.store
    }

    /// Applies the sidechain-replay rule; the requests kept are then `self.store.kept()` and
    /// the groups.
    pub(super) fn settle(&mut self) {
        self.stats.sidechain_replays += self.store.apply_replay_rule();
        self.stats.requests =
            self.store.kept_count() + self.groups.iter().map(|(_, g)| g.requests).sum::<u64>();
    }

    /// The requests kept by the deduplication (see the module documentation) grouped by
    /// session (in the order sessions were added; each session's in deduplication order),
    /// and what the scan counted: the rows behind the report, for callers that export them
    /// one by one.
    pub fn into_kept(mut self) -> (KeptRequests, ScanStats) {
        self.settle();
        let mut order: Vec<(u32, u32)> = self.store.kept_positions().collect();
        order.sort_by_key(|&(session, _)| session);
        let order = order.into_iter().map(|(_, at)| at).collect();
        let kept = KeptRequests {
            store: self.store,
            order,
        };
        (kept, self.stats)
    }

    /// Builds the report.
    pub fn finish(mut self, options: &UsageOptions, pricing: &PricingTable) -> UsageReport {
        self.settle();
        let groups = std::mem::take(&mut self.groups);
        let mut pricer = Pricer::new(pricing);
        let mut rows = Rows::default();
        let mut totals = Acc::default();
        let mut sources = SourceTokens::default();
        // Each request, then each group: a group is its requests summed (same session, day,
        // model, band, origin), and costs are priced from the sums at the end, so both give
        // the same figures.
        // `long: None`: a single request, whose band is looked up (only when it is in range,
        // so that a model is called unpriced only when it is counted).
        let window = options.range.in_zone(&options.zone);
        let mut add = |session: u32,
                       model: &str,
                       agent: Option<&str>,
                       g: &RequestGroup,
                       long: Option<bool>,
                       rows: &mut Rows| {
            if !window.contains(g.first_ms) {
                return;
            }
            let long = long.unwrap_or_else(|| pricer.is_long(model, &g.tokens));
            let slot = match options.kind {
                UsageKind::Daily | UsageKind::Weekly | UsageKind::Monthly => {
                    let day = options.zone.day_of(g.first_ms);
                    rows.by_day(day, |d| match options.kind {
                        UsageKind::Weekly => d.week_key(),
                        UsageKind::Monthly => d.month_key(),
                        _ => d.key(),
                    })
                }
                UsageKind::Session => rows.slot(RowKey::Session(session)),
                UsageKind::Model => rows.by_name(model),
                UsageKind::Agent => rows.by_name(agent.unwrap_or(AGENT_MAIN)),
            };
            let span = (g.first_ms, g.last_ms);
            rows.accs[slot].add_tokens(model, long, &g.tokens, g.requests, span);
            totals.add_tokens(model, long, &g.tokens, g.requests, span);
            sources.add(g.source, g.tokens.total());
        };
        for (session, copy) in self.store.kept() {
            let model = copy.model.unwrap_or(NO_MODEL);
            let one = RequestGroup {
                model: None,
                source: copy.source,
                long: false,
                requests: 1,
                tokens: copy.tokens,
                first_ms: copy.timestamp_ms,
                last_ms: copy.timestamp_ms,
            };
            add(session, model, copy.agent_id, &one, None, &mut rows);
        }
        for (session, g) in &groups {
            let model = g.model.as_deref().unwrap_or(NO_MODEL);
            add(*session, model, None, g, Some(g.long), &mut rows);
        }
        let total_figures = totals.priced_figures(&mut pricer);
        let Rows { accs, index, .. } = rows;
        let mut accs: Vec<Option<Acc>> = accs.into_iter().map(Some).collect();
        let mut out: Vec<UsageRow> = index
            .into_iter()
            .filter_map(|(key, i)| Some((key, accs[i].take()?)))
            .map(|(key, mut acc)| {
                let figures = acc.priced_figures(&mut pricer);
                let mut row = UsageRow {
                    date: None,
                    week: None,
                    month: None,
                    session_id: None,
                    project: None,
                    model: None,
                    agent: None,
                    first_timestamp: acc.first_ms.map(format_ms),
                    last_timestamp: acc.last_ms.map(format_ms),
                    figures,
                    totals: false,
                };
                match (options.kind, key) {
                    (UsageKind::Daily, RowKey::Text(k)) => row.date = Some(k),
                    (UsageKind::Weekly, RowKey::Text(k)) => row.week = Some(k),
                    (UsageKind::Monthly, RowKey::Text(k)) => row.month = Some(k),
                    (UsageKind::Model, RowKey::Text(k)) => row.model = Some(k),
                    (UsageKind::Agent, RowKey::Text(k)) => row.agent = Some(k),
                    (_, RowKey::Session(s)) => {
                        let (id, project) = &self.sessions[s as usize];
                        row.session_id = Some(id.clone());
                        row.project = Some(project.clone());
                    }
                    (_, RowKey::Text(_)) => {}
                }
                row
            })
            .collect();
        if options.kind == UsageKind::Session {
            out.sort_by(|a, b| {
                (&a.first_timestamp, &a.project, &a.session_id).cmp(&(
                    &b.first_timestamp,
                    &b.project,
                    &b.session_id,
                ))
            });
        }
        let total_row = TotalsRow {
            report: options.kind.name(),
            first_timestamp: totals.first_ms.map(format_ms),
            last_timestamp: totals.last_ms.map(format_ms),
            figures: total_figures,
            unpriced_models: pricer.unpriced.into_iter().collect(),
            sources,
            scan: self.stats,
            totals: true,
        };
        UsageReport {
            rows: out,
            totals: total_row,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::usage::{Source, Tokens};

    use crate::usage::RequestCopy;

    fn copy(mid: Option<&str>, rid: &str, side: bool, output: u64) -> RequestCopy {
        RequestCopy {
            message_id: mid.map(Into::into),
            request_id: Some(rid.into()),
            model: Some("claude-opus-4-7".into()),
            tokens: Tokens {
                input: 1,
                output,
                ..Tokens::default()
            },
            timestamp_ms: 0,
            sidechain: side,
            foreign_session: false,
            agent_id: None,
            source: if side {
                Source::InternalAgent
            } else {
                Source::Main
            },
        }
    }

    fn session(id: &str) -> SessionFiles {
        SessionFiles {
            session_id: id.into(),
            ..SessionFiles::default()
        }
    }

    #[test]
    fn dedup_prefers_main_copies_and_drops_sidechain_replays() {
        let mut b = UsageBuilder::new();
        b.add(
            &session("s1"),
            SessionScan {
                copies: vec![
                    copy(Some("m1"), "r1", false, 5),
                    copy(Some("m1"), "r1x", true, 50),
                    copy(Some("m2"), "r2", true, 7),
                    copy(Some("m2"), "r2x", true, 9),
                    copy(Some("m3"), "r3", false, 3),
                    copy(Some("m3"), "r3b", false, 4),
                    copy(None, "", false, 2),
                    copy(None, "", false, 2),
                ],
                ..SessionScan::default()
            },
        );
        b.add(
            &session("s2"),
            SessionScan {
                copies: vec![copy(Some("m1"), "r1", true, 80)],
                ..SessionScan::default()
            },
        );
        let r = b.finish(
            &UsageOptions {
                kind: UsageKind::Model,
                ..UsageOptions::default()
            },
            &PricingTable::embedded(),
        );
        // m1/r1 (main, 5), m2 collapsed (9), m3/r3 (3), m3/r3b (4), two loose (2 + 2).
        assert_eq!(r.totals.figures.messages, 6);
        assert_eq!(r.totals.figures.output_tokens, 5 + 9 + 3 + 4 + 2 + 2);
        assert_eq!(r.totals.scan.duplicate_copies, 1);
        assert_eq!(r.totals.scan.sidechain_replays, 2);
        assert_eq!(r.rows.len(), 1);
    }
}
