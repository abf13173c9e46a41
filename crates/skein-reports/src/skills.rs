//! The `skein skills` report: Skill tool invocations per skill (count, sessions, first and last
//! use, errors, success rate, daily counts).
//!
//! An invocation is a `tool_use` named `Skill` (a distinct id per file, as in `skein tools`);
//! the skill is its input's `skill` (Claude Code's only shape in practice), else `command`,
//! else `name`. Optionally (`slash`), slash commands count too, under their name with a
//! leading `/`: the model's `SlashCommand` tool calls (Claude Code 2.0.x) and the commands the
//! user typed (`<command-name>/x</command-name>` user records; these have no result).

use std::collections::{BTreeMap, BTreeSet, HashSet};

use serde::Serialize;
use serde_json::Value;
use skein_analysis::{RecordVisitor, ToolInput};
use skein_core::{Content, Envelope, Line};
use skein_graph::NodeId;

use crate::session::LoadedSession;
use crate::tools::{normalized_input, round4, session_files};
use skein_core::time::{MsRange, Zone, parse_ms};

/// Skill name used when a `Skill` call's input names none.
pub const UNKNOWN_SKILL: &str = "<unknown>";

/// How an invocation was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkillSource {
    /// A `Skill` tool call.
    Skill,
    /// A `SlashCommand` tool call.
    SlashCommand,
    /// A slash command the user typed (`<command-name>`).
    Typed,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Invocation {
    skill: String,
    source: SkillSource,
    /// The `tool_use` id (tool calls only).
    id: Option<String>,
    line: u64,
    timestamp: Option<String>,
}

/// Finds skill invocations while a transcript is read (one per file).
#[derive(Debug, Default)]
pub struct SkillVisitor {
    found: Vec<Invocation>,
    seen: HashSet<String>,
}

/// The skill a `Skill` input names.
pub fn skill_name(input: &Value) -> Option<String> {
    let v = normalized_input(input);
    let pick = |k: &str| {
        v.get(k)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
    };
    if let Some(s) = pick("skill") {
        return Some(s.trim_start_matches('/').to_owned());
    }
    if let Some(c) = pick("command") {
        let first = c.split_whitespace().next().unwrap_or(c);
        return Some(first.trim_start_matches('/').to_owned());
    }
    pick("name").map(|s| s.trim_start_matches('/').to_owned())
}

/// `/name` of a `SlashCommand` input's `command` (its first word).
fn slash_name(input: &Value) -> Option<String> {
    let v = normalized_input(input);
    let c = v.get("command")?.as_str()?.split_whitespace().next()?;
    let name = c.trim_start_matches('/');
    (!name.is_empty()).then(|| format!("/{name}"))
}

/// The `/name` of a typed slash command: a user text that starts with a `<command-…>` tag
/// and holds `<command-name>name</command-name>`.
pub fn typed_command(text: &str) -> Option<String> {
    let t = text.trim_start();
    if !t.starts_with("<command-") {
        return None;
    }
    let at = t.find("<command-name>")? + "<command-name>".len();
    let end = t[at..].find("</command-name>")?;
    let name = t[at..at + end].trim().trim_start_matches('/');
    (!name.is_empty() && !name.contains(char::is_whitespace)).then(|| format!("/{name}"))
}

/// The `input` of each `tool_use` in a raw record line, by id.
fn inputs_in_line(text: &[u8]) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    let Some(v) = crate::show::text::parse_line(text) else {
        return out;
    };
    if let Some(blocks) = v.pointer("/message/content").and_then(Value::as_array) {
        for b in blocks {
            if let (Some(id), Some(input)) = (b.get("id").and_then(Value::as_str), b.get("input")) {
                out.entry(id.to_owned()).or_insert_with(|| input.clone());
            }
        }
    }
    out
}

impl<I: ToolInput> RecordVisitor<I> for SkillVisitor {
    fn record(&mut self, line: &Line<'_>, env: &Envelope<'_, I>, _: Option<(NodeId, bool)>) {
        let Some(message) = env.message.0.as_ref() else {
            return;
        };
        let timestamp = || env.timestamp.get().map(str::to_owned);
        match env.kind.get() {
            Some("assistant") => {
                let mut raw: Option<BTreeMap<String, Value>> = None;
                for b in message.content.blocks() {
                    let (Some("tool_use"), Some(id), Some(name @ ("Skill" | "SlashCommand"))) =
                        (b.kind(), b.id.get(), b.name.get())
                    else {
                        continue;
                    };
                    if self.seen.contains(id) {
                        continue;
                    }
                    let input = b.input.as_ref().and_then(ToolInput::to_value).or_else(|| {
                        raw.get_or_insert_with(|| inputs_in_line(line.text))
                            .get(id)
                            .cloned()
                    });
                    let (skill, source) = if name == "Skill" {
                        (input.as_ref().and_then(skill_name), SkillSource::Skill)
                    } else {
                        (
                            input.as_ref().and_then(slash_name),
                            SkillSource::SlashCommand,
                        )
                    };
                    self.seen.insert(id.to_owned());
                    self.found.push(Invocation {
                        skill: skill.unwrap_or_else(|| UNKNOWN_SKILL.to_owned()),
                        source,
                        id: Some(id.to_owned()),
                        line: line.number,
                        timestamp: timestamp(),
                    });
                }
            }
            Some("user") if !env.is_meta.0 && !env.is_compact_summary.0 => {
                let text = match &message.content {
                    Content::Text(t) => t.get(),
                    Content::Blocks(b) => b
                        .iter()
                        .find(|b| b.kind() == Some("text"))
                        .and_then(|b| b.text.get()),
                    Content::None => None,
                };
                if let Some(name) = text.and_then(typed_command) {
                    self.found.push(Invocation {
                        skill: name,
                        source: SkillSource::Typed,
                        id: None,
                        line: line.number,
                        timestamp: timestamp(),
                    });
                }
            }
            _ => {}
        }
    }
}

/// One skill invocation.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct SkillCall {
    pub skill: String,
    pub source: SkillSource,
    pub session_id: String,
    pub project: String,
    pub agent_id: Option<String>,
    pub file: String,
    pub line: u64,
    /// The `tool_use` id (`None` for typed commands).
    pub id: Option<String>,
    pub timestamp: Option<String>,
    /// Whether the result was an error; `None` without a result.
    pub is_error: Option<bool>,
}

/// The session's skill invocations: main transcript first, then each agent file, each in file
/// order. Slash commands only when `slash` is set.
pub fn skill_calls(s: &LoadedSession<SkillVisitor>, slash: bool) -> Vec<SkillCall> {
    let project = s.files.project();
    let visitors = s
        .main
        .iter()
        .map(|(_, v)| v)
        .chain(s.agents.iter().map(|a| &a.visitor));
    let mut out = Vec::new();
    for (f, v) in session_files(s).into_iter().zip(visitors) {
        let file = f.file.display().to_string();
        for inv in &v.found {
            if !slash && inv.source != SkillSource::Skill {
                continue;
            }
            let result = inv.id.as_deref().and_then(|id| f.tools.result_for(id));
            out.push(SkillCall {
                skill: inv.skill.clone(),
                source: inv.source,
                session_id: s.files.session_id.clone(),
                project: project.clone(),
                agent_id: f.agent_id.map(str::to_owned),
                file: file.clone(),
                line: inv.line,
                id: inv.id.clone(),
                timestamp: inv.timestamp.clone(),
                is_error: result.map(|r| r.is_error),
            });
        }
    }
    out
}

/// Totals for one skill.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SkillRow {
    pub skill: String,
    /// Invocations.
    pub count: u64,
    /// Distinct session ids.
    pub sessions: u64,
    /// Earliest and latest invocation timestamp (as written, compared as text).
    pub first_use: Option<String>,
    pub last_use: Option<String>,
    /// Invocations whose result was an error.
    pub errors: u64,
    /// Invocations without a result.
    pub unpaired: u64,
    /// `(count - unpaired - errors) / (count - unpaired)`, rounded to 4 decimals; `None` when
    /// no invocation has a result.
    pub success_rate: Option<f64>,
    /// Invocations per UTC day (`YYYY-MM-DD`) of the timestamp; untimed ones are not listed.
    pub daily: BTreeMap<String, u64>,
}

#[derive(Debug, Default)]
struct Acc {
    count: u64,
    errors: u64,
    unpaired: u64,
    sessions: BTreeSet<String>,
    first: Option<String>,
    last: Option<String>,
    daily: BTreeMap<String, u64>,
}

/// Accumulates invocations into [`SkillRow`]s.
#[derive(Debug, Default)]
pub struct SkillTotals {
    by: BTreeMap<String, Acc>,
    /// The zone of the `daily` keys.
    zone: Zone,
}

impl SkillTotals {
    /// No invocations yet; daily counts by UTC day.
    pub fn new() -> Self {
        Self::default()
    }

    /// No invocations yet; daily counts by local day in `zone`.
    pub fn in_zone(zone: Zone) -> Self {
        Self {
            by: BTreeMap::new(),
            zone,
        }
    }

    /// Counts one invocation.
    pub fn add(&mut self, call: &SkillCall) {
        let a = self.by.entry(call.skill.clone()).or_default();
        a.count += 1;
        a.errors += u64::from(call.is_error == Some(true));
        a.unpaired += u64::from(call.is_error.is_none());
        a.sessions.insert(call.session_id.clone());
        if let Some(ts) = call.timestamp.as_deref() {
            if a.first.as_deref().is_none_or(|f| ts < f) {
                a.first = Some(ts.to_owned());
            }
            if a.last.as_deref().is_none_or(|l| ts > l) {
                a.last = Some(ts.to_owned());
            }
            if let Some(day) = parse_ms(ts).map(|ms| self.zone.day_of(ms)) {
                *a.daily.entry(day.key()).or_insert(0) += 1;
            }
        }
    }

    /// One row per skill, sorted by skill name.
    pub fn finish(self) -> Vec<SkillRow> {
        self.by
            .into_iter()
            .map(|(skill, a)| {
                let results = a.count - a.unpaired;
                SkillRow {
                    skill,
                    count: a.count,
                    sessions: a.sessions.len() as u64,
                    first_use: a.first,
                    last_use: a.last,
                    errors: a.errors,
                    unpaired: a.unpaired,
                    success_rate: (results > 0)
                        .then(|| round4((results - a.errors) as f64 / results as f64)),
                    daily: a.daily,
                }
            })
            .collect()
    }
}

/// True when the invocation's timestamp lies in `window` (a range resolved in the report's
/// zone, [`skein_core::time::DateRange::in_zone`]).
pub fn in_range(window: &MsRange, call: &SkillCall) -> bool {
    window.contains_timestamp(call.timestamp.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn skill_names_from_inputs() {
        assert_eq!(skill_name(&json!({"skill": "pdf"})).as_deref(), Some("pdf"));
        assert_eq!(
            skill_name(&json!({"skill": "erk:plan", "args": "1"})).as_deref(),
            Some("erk:plan")
        );
        assert_eq!(
            skill_name(&json!({"command": "/pdf a b"})).as_deref(),
            Some("pdf")
        );
        assert_eq!(skill_name(&json!({"name": "x"})).as_deref(), Some("x"));
        assert_eq!(skill_name(&json!({"skill": "  "})), None);
        assert_eq!(
            skill_name(&json!("{\"skill\":\"enc\"}")).as_deref(),
            Some("enc")
        );
        assert_eq!(skill_name(&json!({})), None);
        assert_eq!(
            slash_name(&json!({"command": "/erk:replan 1 2"})).as_deref(),
            Some("/erk:replan")
        );
    }

    #[test]
    fn typed_commands() {
        assert_eq!(
            typed_command("<command-message>x is running…</command-message>\n<command-name>/x:y</command-name>\n<command-args>a</command-args>").as_deref(),
            Some("/x:y")
        );
        assert_eq!(
            typed_command(
                "<command-name>clear</command-name>\n<command-message>clear</command-message>"
            )
            .as_deref(),
            Some("/clear")
        );
        assert_eq!(
            typed_command("please run <command-name>/x</command-name>"),
            None
        );
        assert_eq!(typed_command("<command-name></command-name>"), None);
    }

    #[test]
    fn totals() {
        let call = |skill: &str, s: &str, ts: Option<&str>, e: Option<bool>| SkillCall {
            skill: skill.into(),
            source: SkillSource::Skill,
            session_id: s.into(),
            project: "p".into(),
            agent_id: None,
            file: "f".into(),
            line: 1,
            id: Some("t".into()),
            timestamp: ts.map(str::to_owned),
            is_error: e,
        };
        let mut t = SkillTotals::new();
        t.add(&call("b", "s1", Some("2026-05-02T10:00:00Z"), Some(false)));
        t.add(&call("b", "s1", Some("2026-05-01T10:00:00Z"), Some(true)));
        t.add(&call("b", "s2", Some("2026-05-02T11:00:00Z"), None));
        t.add(&call("a", "s2", None, Some(false)));
        let rows = t.finish();
        assert_eq!(rows[0].skill, "a");
        assert_eq!(rows[0].first_use, None);
        assert!(rows[0].daily.is_empty());
        assert_eq!(rows[0].success_rate, Some(1.0));
        let b = &rows[1];
        assert_eq!((b.count, b.sessions, b.errors, b.unpaired), (3, 2, 1, 1));
        assert_eq!(b.first_use.as_deref(), Some("2026-05-01T10:00:00Z"));
        assert_eq!(b.last_use.as_deref(), Some("2026-05-02T11:00:00Z"));
        assert_eq!(b.success_rate, Some(0.5));
        assert_eq!(
            b.daily,
            BTreeMap::from([("2026-05-01".into(), 1), ("2026-05-02".into(), 2)])
        );

        // Daily keys are local days (at +14:00, 10:00Z on May 1st is May 2nd), and an offset in
        // the timestamp is honoured (23:30-01:00 on May 1st is 00:30Z on May 2nd). The range
        // filter reads the same local days.
        let zone = Zone::parse_fixed("+14:00").expect("zone");
        let mut t = SkillTotals::in_zone(zone.clone());
        t.add(&call("b", "s1", Some("2026-05-01T10:00:00Z"), None));
        assert_eq!(
            t.finish()[0].daily,
            BTreeMap::from([("2026-05-02".into(), 1)])
        );
        let mut t = SkillTotals::new();
        t.add(&call("b", "s1", Some("2026-05-01T23:30:00-01:00"), None));
        assert_eq!(
            t.finish()[0].daily,
            BTreeMap::from([("2026-05-02".into(), 1)])
        );
        let may2 = skein_core::time::DateRange {
            since: skein_core::time::Day::parse("2026-05-02")
                .ok()
                .map(Into::into),
            until: skein_core::time::Day::parse("2026-05-02")
                .ok()
                .map(Into::into),
        };
        let c = call("b", "s1", Some("2026-05-01T10:00:00Z"), None);
        assert!(in_range(&may2.in_zone(&zone), &c));
        assert!(!in_range(&may2.in_zone(&Zone::utc()), &c));
    }
}
