//! The `skein check` report: diagnostics for the files of a session. Every file is read once
//! (files with more invalid lines than the analysis samples are scanned a second time to list
//! them all). Diagnostics are plain rows; the binary prints them and sets the exit status.
//! See `docs/reports/check.md` for the codes.

use std::collections::BTreeMap;
use std::path::Path;

use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;
use serde::de::IgnoredAny;
use skein_analysis::SpawnLinks;
use skein_analysis::collect::MAX_INVALID_SAMPLES;
use skein_analysis::{Analysis, AnalysisOptions, RecordVisitor};
use skein_core::{Envelope, Event, Line, Parser, ReadLines, Reader, ReaderOptions, SliceLines};
use skein_graph::{NodeId, RecordType};
use skein_layout::SessionFiles;
use skein_store::{Input, InputMode};

use crate::session::{AgentRun, LoadError, LoadedSession, read_file};
use crate::tree::{LinkVisitor, Source, link_session};

/// How bad a diagnostic is. Only `error` makes `skein check` exit with status 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Info,
    Warning,
    Error,
}

impl Level {
    /// `error`, `warning` or `info`.
    pub fn name(self) -> &'static str {
        match self {
            Level::Info => "info",
            Level::Warning => "warning",
            Level::Error => "error",
        }
    }
}

/// The diagnostic codes, with their level.
pub mod codes {
    use super::Level;

    /// A file that could not be opened or read.
    pub const UNREADABLE: (&str, Level) = ("unreadable", Level::Error);
    /// A non-blank line that is not one JSON object.
    pub const INVALID_LINE: (&str, Level) = ("invalid_line", Level::Error);
    /// A cycle in the `parentUuid` links.
    pub const CYCLE: (&str, Level) = ("cycle", Level::Error);
    /// The last line has no newline and does not parse.
    pub const TORN_TAIL: (&str, Level) = ("torn_tail", Level::Warning);
    /// A `parentUuid` naming no record of the session.
    pub const DANGLING_PARENT: (&str, Level) = ("dangling_parent", Level::Warning);
    /// A uuid seen on an earlier line of the file.
    pub const DUPLICATE_UUID: (&str, Level) = ("duplicate_uuid", Level::Warning);
    /// A `tool_result` without a `tool_use` of the same id in the file.
    pub const ORPHAN_RESULT: (&str, Level) = ("orphan_result", Level::Warning);
    /// A `tool_use` without a `tool_result` in the file.
    pub const UNPAIRED_USE: (&str, Level) = ("unpaired_use", Level::Warning);
    /// A subagent transcript whose spawning call was not found.
    pub const UNLINKED_SUBAGENT: (&str, Level) = ("unlinked_subagent", Level::Warning);
    /// A `parentUuid` naming a record of another transcript of the session.
    pub const CROSS_FILE_PARENT: (&str, Level) = ("cross_file_parent", Level::Info);
    /// Lines that needed invalid UTF-8 or lone surrogates replaced to parse.
    pub const REPAIRED_LINES: (&str, Level) = ("repaired_lines", Level::Info);
    /// More invalid lines than listed.
    pub const MORE_INVALID: (&str, Level) = ("more_invalid_lines", Level::Error);
}

/// Invalid lines listed per file; the rest are counted in one `more_invalid_lines` row.
pub const MAX_INVALID_LISTED: usize = 1000;

/// One diagnostic.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// The transcript file.
    pub path: String,
    /// 1-based line, `None` for file-level diagnostics.
    pub line: Option<u64>,
    /// Byte offset of the line's first byte.
    pub offset: Option<u64>,
    pub level: Level,
    pub code: &'static str,
    pub message: String,
    pub session_id: String,
    /// `None` in the main transcript.
    pub agent_id: Option<String>,
    /// The record's uuid, when the diagnostic is about one record.
    pub uuid: Option<String>,
}

/// What `skein check` collects while a file is read.
#[derive(Debug, Default)]
pub struct CheckVisitor {
    pub links: LinkVisitor,
    /// (line, offset) of every valid record, in file order.
    offsets: Vec<(u64, u64)>,
    /// Duplicate-uuid records: line, offset, node.
    duplicates: Vec<(u64, u64, NodeId)>,
    /// `system`/`local_command` nodes (their dangling parents are expected).
    local_commands: FxHashSet<NodeId>,
}

impl RecordVisitor<IgnoredAny> for CheckVisitor {
    fn record(&mut self, line: &Line<'_>, env: &Envelope<'_>, node: Option<(NodeId, bool)>) {
        self.links.record(line, env, node);
        self.offsets.push((line.number, line.offset));
        match node {
            Some((id, true))
                if env.kind.get() == Some("system")
                    && env.subtype.get() == Some("local_command") =>
            {
                self.local_commands.insert(id);
            }
            Some((id, false)) => self.duplicates.push((line.number, line.offset, id)),
            Some((_, true)) | None => {}
        }
    }
}

impl CheckVisitor {
    fn offset_of(&self, line: u64) -> Option<u64> {
        self.offsets
            .binary_search_by_key(&line, |&(l, _)| l)
            .ok()
            .map(|i| self.offsets[i].1)
    }
}

struct FileCtx<'a> {
    path: String,
    session_id: &'a str,
    agent_id: Option<&'a str>,
    out: Vec<Diagnostic>,
}

impl FileCtx<'_> {
    fn push(
        &mut self,
        (code, level): (&'static str, Level),
        line: Option<u64>,
        offset: Option<u64>,
        uuid: Option<&str>,
        message: String,
    ) {
        self.out.push(Diagnostic {
            path: self.path.clone(),
            line,
            offset,
            level,
            code,
            message,
            session_id: self.session_id.to_owned(),
            agent_id: self.agent_id.map(str::to_owned),
            uuid: uuid.map(str::to_owned),
        });
    }

    /// Sorted by line (file-level rows first), keeping the order of rows on one line.
    fn finish(mut self) -> Vec<Diagnostic> {
        self.out.sort_by_key(|d| d.line.unwrap_or(0));
        self.out
    }
}

/// Every invalid line of a file (after the analysis found more than it sampled).
fn scan_invalid(path: &Path, mmap: bool) -> std::io::Result<Vec<(u64, u64, String)>> {
    let mode = if mmap {
        InputMode::Mmap
    } else {
        InputMode::Read
    };
    let input = skein_layout::open(path, mode).map_err(|e| e.source)?;
    let mut out = Vec::new();
    let mut collect = |reader: &mut dyn FnMut() -> std::io::Result<Option<(u64, u64, String)>>| {
        while let Some(x) = reader()? {
            out.push(x);
        }
        Ok::<(), std::io::Error>(())
    };
    match input {
        Input::Mapped(map) => {
            let mut r = Reader::new(SliceLines::new(&map), ReaderOptions::default());
            collect(&mut || next_invalid(&mut r))?;
        }
        Input::Stream(s) => {
            let mut r = Reader::new(ReadLines::new(s), ReaderOptions::default());
            collect(&mut || next_invalid(&mut r))?;
        }
    }
    Ok(out)
}

fn next_invalid<S: skein_core::LineSource>(
    r: &mut Reader<S>,
) -> std::io::Result<Option<(u64, u64, String)>> {
    loop {
        match r.next_event()? {
            None => return Ok(None),
            Some(Event::Invalid(_, inv)) => {
                return Ok(Some((inv.line, inv.offset, inv.error.to_string())));
            }
            Some(_) => {}
        }
    }
}

fn invalid_lines(ctx: &mut FileCtx<'_>, a: &Analysis, path: &Path, mmap: bool) {
    let torn = u64::from(a.stats.torn_tail.is_some());
    let total = a.stats.invalid_lines - torn;
    let mut listed: Vec<(u64, u64, String)> = a
        .stats
        .invalid
        .iter()
        .map(|s| (s.line, s.offset, format!("{} ({} bytes)", s.error, s.bytes)))
        .collect();
    if total > MAX_INVALID_SAMPLES as u64
        && let Ok(all) = scan_invalid(path, mmap)
    {
        listed = all;
    }
    let shown = listed.len().min(MAX_INVALID_LISTED);
    for (line, offset, error) in listed.into_iter().take(shown) {
        ctx.push(
            codes::INVALID_LINE,
            Some(line),
            Some(offset),
            None,
            format!("not a JSON object: {error}"),
        );
    }
    if total > shown as u64 {
        ctx.push(
            codes::MORE_INVALID,
            None,
            None,
            None,
            format!("{} more invalid lines not listed", total - shown as u64),
        );
    }
    if let Some(t) = a.stats.torn_tail {
        ctx.push(
            codes::TORN_TAIL,
            Some(t.line),
            Some(t.offset),
            None,
            format!(
                "the last line ({} bytes) has no newline and does not parse: still being written, or cut off",
                t.bytes
            ),
        );
    }
    if a.stats.repaired_lines > 0 {
        ctx.push(
            codes::REPAIRED_LINES,
            None,
            None,
            None,
            format!(
                "{} lines needed invalid UTF-8 or lone surrogate escapes replaced to parse",
                a.stats.repaired_lines
            ),
        );
    }
}

/// Graph and tool diagnostics of one file.
fn file_diagnostics(
    ctx: &mut FileCtx<'_>,
    a: &Analysis,
    v: &CheckVisitor,
    elsewhere: &dyn Fn(&str) -> Option<String>,
) {
    let dag = &a.dag;
    let at = |n: NodeId| {
        let line = dag.line(n);
        (Some(line), v.offset_of(line))
    };
    for cycle in dag.cycles() {
        let first = cycle
            .iter()
            .copied()
            .min_by_key(|&n| dag.line(n))
            .expect("a cycle has nodes");
        let uuids: Vec<&str> = cycle.iter().map(|&n| dag.uuid(n)).collect();
        let (line, offset) = at(first);
        ctx.push(
            codes::CYCLE,
            line,
            offset,
            Some(dag.uuid(first)),
            format!(
                "parentUuid cycle through {} records: {} → {}",
                cycle.len(),
                uuids.join(" → "),
                uuids[0]
            ),
        );
    }
    for n in dag.dangling() {
        if matches!(dag.kind(n), RecordType::Progress | RecordType::Attachment)
            || v.local_commands.contains(&n)
        {
            continue;
        }
        let parent = dag.dangling_parent(n).unwrap_or("?");
        let (line, offset) = at(n);
        match elsewhere(parent) {
            Some(file) => ctx.push(
                codes::CROSS_FILE_PARENT,
                line,
                offset,
                Some(dag.uuid(n)),
                format!("parent {parent} is in {file}"),
            ),
            None => ctx.push(
                codes::DANGLING_PARENT,
                line,
                offset,
                Some(dag.uuid(n)),
                format!("parent {parent} is not in the session"),
            ),
        }
    }
    for &(line, offset, n) in &v.duplicates {
        ctx.push(
            codes::DUPLICATE_UUID,
            Some(line),
            Some(offset),
            Some(dag.uuid(n)),
            format!(
                "uuid {} already on line {} (the first copy is used)",
                dag.uuid(n),
                dag.line(n)
            ),
        );
    }
    for p in a.tools.pairs() {
        match (p.tool_use, p.result) {
            (Some(u), None) => ctx.push(
                codes::UNPAIRED_USE,
                Some(u.line),
                v.offset_of(u.line),
                u.uuid.as_deref(),
                format!(
                    "tool_use {} ({}) has no tool_result",
                    u.id,
                    u.name.as_deref().unwrap_or("no name")
                ),
            ),
            (None, Some(r)) => ctx.push(
                codes::ORPHAN_RESULT,
                Some(r.line),
                v.offset_of(r.line),
                r.uuid.as_deref(),
                format!("tool_result for {} has no tool_use", r.tool_use_id),
            ),
            _ => {}
        }
    }
}

/// One readable transcript of the session being checked.
struct View<'a> {
    src: Source,
    /// 0 for the main transcript, k + 1 for agent file k.
    pos: usize,
    path: &'a Path,
    analysis: &'a Analysis,
    visitor: &'a CheckVisitor,
    agent_id: Option<&'a str>,
}

/// Checks every file of a session. Never fails: unreadable files are diagnostics. Rows come
/// per file (main transcript first, then agents in path order), each file's sorted by line.
pub fn check_session(files: &SessionFiles, parser: &mut Parser, mmap: bool) -> Vec<Diagnostic> {
    let options = AnalysisOptions::default();
    let sid = files.session_id.as_str();
    // Diagnostics per file position: 0 for the main transcript, k + 1 for agent file k.
    let mut groups: BTreeMap<usize, Vec<Diagnostic>> = BTreeMap::new();
    let mut unreadable = |pos: usize, path: &Path, agent_id: Option<&str>, e: &LoadError| {
        let mut ctx = FileCtx {
            path: path.display().to_string(),
            session_id: sid,
            agent_id,
            out: Vec::new(),
        };
        ctx.push(codes::UNREADABLE, None, None, None, e.source.to_string());
        groups.entry(pos).or_default().extend(ctx.out);
    };
    let mut main = None;
    let mut main_links = SpawnLinks::new();
    if let Some(path) = &files.main {
        let mut v = CheckVisitor::default();
        match read_file::<IgnoredAny, _>(path, &options, parser, &mut v, mmap) {
            Ok(a) => {
                main_links = std::mem::take(&mut v.links.spawn_links);
                main = Some((a, v));
            }
            Err(e) => unreadable(0, path, None, &e),
        }
    }
    let mut agents = Vec::new();
    let mut positions = Vec::new();
    for (k, file) in files.agents.iter().enumerate() {
        let mut v = CheckVisitor::default();
        match read_file::<IgnoredAny, _>(&file.path, &options, parser, &mut v, mmap) {
            Ok(analysis) => {
                let meta_id = file.meta.as_ref().and_then(|m| m.tool_use_id.as_deref());
                let spawned_by = main_links.spawner_of(&file.agent_id, meta_id);
                agents.push(AgentRun {
                    file: file.clone(),
                    analysis,
                    visitor: v,
                    spawned_by,
                });
                positions.push(k + 1);
            }
            Err(e) => unreadable(k + 1, &file.path, Some(&file.agent_id), &e),
        }
    }
    let session = LoadedSession {
        files: files.clone(),
        main,
        links: main_links,
        agents,
    };
    let links = link_session(&session, |v| &v.links);

    let mut views: Vec<View<'_>> = Vec::new();
    if let (Some((a, v)), Some(path)) = (&session.main, files.main.as_deref()) {
        views.push(View {
            src: Source::Main,
            pos: 0,
            path,
            analysis: a,
            visitor: v,
            agent_id: None,
        });
    }
    for (i, r) in session.agents.iter().enumerate() {
        views.push(View {
            src: Source::Agent(i),
            pos: positions[i],
            path: &r.file.path,
            analysis: &r.analysis,
            visitor: &r.visitor,
            agent_id: Some(&r.file.agent_id),
        });
    }
    // uuid → file, for parents that live in another transcript of the session.
    let mut owner: FxHashMap<&str, usize> = FxHashMap::default();
    for (k, view) in views.iter().enumerate() {
        for n in view.analysis.dag.nodes() {
            owner.entry(view.analysis.dag.uuid(n)).or_insert(k);
        }
    }
    for (k, view) in views.iter().enumerate() {
        let mut ctx = FileCtx {
            path: view.path.display().to_string(),
            session_id: sid,
            agent_id: view.agent_id,
            out: Vec::new(),
        };
        invalid_lines(&mut ctx, view.analysis, view.path, mmap);
        if let Source::Agent(i) = view.src {
            let run = &session.agents[i];
            let link = &links.agents[i];
            if session.main.is_some() && !run.file.internal && link.at.is_none() {
                let message = match &link.tool_use_id {
                    Some(id) => format!(
                        "agent {}: its spawning call {id} is not in the session",
                        run.file.agent_id
                    ),
                    None => format!(
                        "agent {}: no Task/Agent call names it (no meta toolUseId, no result agentId, no matching prompt)",
                        run.file.agent_id
                    ),
                };
                ctx.push(codes::UNLINKED_SUBAGENT, None, None, None, message);
            }
        }
        let elsewhere = |uuid: &str| -> Option<String> {
            owner
                .get(uuid)
                .copied()
                .filter(|&o| o != k)
                .map(|o| views[o].path.display().to_string())
        };
        file_diagnostics(&mut ctx, view.analysis, view.visitor, &elsewhere);
        groups.entry(view.pos).or_default().extend(ctx.finish());
    }
    groups.into_values().flatten().collect()
}

/// Counts per level.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct LevelCounts {
    pub error: u64,
    pub warning: u64,
    pub info: u64,
}

impl LevelCounts {
    /// Adds one diagnostic.
    pub fn add(&mut self, level: Level) {
        match level {
            Level::Error => self.error += 1,
            Level::Warning => self.warning += 1,
            Level::Info => self.info += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_order_and_names() {
        assert!(Level::Error > Level::Warning && Level::Warning > Level::Info);
        assert_eq!(Level::Warning.name(), "warning");
        assert_eq!(
            serde_json::to_string(&Level::Error).expect("json"),
            "\"error\""
        );
    }
}
