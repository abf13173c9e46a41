//! The archive's metadata of a transcript ([`SessionMeta`]), collected by an incremental
//! visitor: [`MetaCollector`] is fed records one by one and keeps only what the metadata needs,
//! in a serializable state, so a caller that reads only new bytes (the hook) can keep the same
//! metadata up to date by saving the collector between runs. `skein archive` and the hook's
//! `archive` pass share it: one code path.
//!
//! The state stays small however long the session: ids are kept as 64-bit hashes
//! ([`crate::packed`]), tool results only for the calls that spawn subagents (their outcome)
//! and for results seen before their call.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use skein_analysis::{RecordVisitor, SpawnLinks};
use skein_archive::{SessionMeta, TokenUsage};
use skein_core::record::is_spawn_tool;
use skein_core::{Content, Envelope, Line, Usage};
use skein_graph::NodeId;
use skein_reports::skills::skill_name;
use skein_reports::tools::normalized_input;

use crate::identity::clean;
use crate::meta_read::feed_lines;
use crate::packed::{self, Keyed, hash};

/// `extra` key: the source size the metadata was computed from. A later run that finds the
/// source at that size with nothing new to archive skips reading it again.
pub const SOURCE_BYTES: &str = "source_bytes";

/// The long values the collector never reads, dropped before each line is parsed
/// ([`skein_core::skim`]): the collector looks at none of the [`skein_core::skim::BULKY`]
/// keys' values, except whether a prompt's `content` is blank, which the skim keeps. A value
/// the collector starts reading must come off that list, or the collector must stop skimming: the
/// tests `the_skim_changes_no_metadata*` compare the metadata with and without the skim, on
/// the corpus and on broken lines.
pub const SKIM: skein_core::Skim = skein_core::Skim {
    keys: skein_core::skim::BULKY,
    all_but: false,
    min_len: 256,
};

/// Tools whose `file_path` (or `notebook_path`) input names a file they modify.
const MODIFYING_TOOLS: [&str; 4] = ["Edit", "Write", "MultiEdit", "NotebookEdit"];

/// One usage group's counters (input, output, cache creation, cache read): Claude Code writes
/// one line per content block, each with a copy of the message's usage; per group each counter
/// is the maximum over its lines (as `skein_analysis::UsageAccumulator` counts them).
type Counters = [u64; 4];

fn counters_of(u: &Usage) -> Counters {
    [
        u.input_tokens.0,
        u.output_tokens.0,
        u.cache_creation_input_tokens.0,
        u.cache_read_input_tokens.0,
    ]
}

fn max_with(a: &mut Counters, b: Counters) {
    for (x, y) in a.iter_mut().zip(b) {
        *x = (*x).max(y);
    }
}

fn add(a: &mut Counters, b: Counters) {
    for (x, y) in a.iter_mut().zip(b) {
        *x += y;
    }
}

/// Everything the metadata of one transcript needs, fed record by record. `Serialize` +
/// `Deserialize`: the state can be saved and fed more records later, with the same result as
/// one pass over the whole transcript.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct MetaCollector {
    session_id: Option<String>,
    cwd: Option<String>,
    git_branch: Option<String>,
    first_timestamp: Option<String>,
    last_timestamp: Option<String>,
    models: Vec<String>,
    prompts: u64,
    #[serde(with = "packed::set")]
    message_ids: Keyed<()>,
    anonymous_messages: u64,
    /// Usage groups by hash of `message.id` + `\0` + `requestId`.
    #[serde(with = "packed::counters")]
    usage_groups: Keyed<Counters>,
    /// Usage of lines without a `message.id` (each its own group).
    usage_loose: Counters,
    /// Hashes of the `tool_use` ids counted (later copies are not counted again).
    #[serde(with = "packed::set")]
    tool_ids: Keyed<()>,
    tool_counts: BTreeMap<String, u64>,
    tool_calls: u64,
    skills: Vec<String>,
    files: Vec<String>,
    /// `tool_result` ids with whether any copy was an error: for spawning calls (how the
    /// subagent ended), and for results read before their call.
    results: BTreeMap<String, bool>,
    /// The spawning calls and the agent ids their results name.
    links: SpawnLinks,
    /// How many message and tool ids and usage groups [`MetaCollector::log_ids`] wrote.
    #[serde(skip)]
    logged: [usize; 3],
}

/// Records of the id log ([`MetaCollector::log_ids`]): a tag byte, then little-endian u64s.
const LOG_MESSAGE: u8 = 1;
const LOG_TOOL: u8 = 2;
/// A new usage group: its key and four counters.
const LOG_GROUP_NEW: u8 = 3;
/// New counters of the usage group at a position: the position and four counters.
const LOG_GROUP_SET: u8 = 4;

/// Pushes `v` unless present (first-appearance order).
fn push_unique(list: &mut Vec<String>, v: String) {
    if !list.contains(&v) {
        list.push(v);
    }
}

impl MetaCollector {
    /// A collector that has seen nothing.
    pub fn new() -> Self {
        Self::default()
    }

    fn tool_use(&mut self, id: &str, name: Option<&str>, input: Option<&Value>) {
        if !self.tool_ids.insert(hash(id.as_bytes())) {
            return;
        }
        let name = name.unwrap_or("<unknown>");
        if !is_spawn_tool(name) {
            // Only a spawn's result is asked for: a result read early is dropped now.
            self.results.remove(id);
        }
        // (Most calls are of a tool already counted: no key allocated for those.)
        match self.tool_counts.get_mut(name) {
            Some(n) => *n += 1,
            None => {
                self.tool_counts.insert(name.to_owned(), 1);
            }
        }
        self.tool_calls += 1;
        let Some(input) = input else { return };
        let input = normalized_input(input);
        if name == "Skill"
            && let Some(s) = skill_name(&input)
        {
            push_unique(&mut self.skills, s);
        }
        if MODIFYING_TOOLS.contains(&name) {
            let path = ["file_path", "notebook_path"]
                .iter()
                .find_map(|k| input.get(*k).and_then(Value::as_str));
            if let Some(p) = path.filter(|p| !p.is_empty()) {
                push_unique(&mut self.files, p.to_owned());
            }
        }
    }

    fn assistant(&mut self, env: &Envelope<'_, Value>) {
        let Some(message) = env.message.0.as_ref() else {
            return;
        };
        let model = message.model.get();
        if model != Some("<synthetic>") {
            if let Some(m) = model
                && !self.models.iter().any(|x| x == m)
            {
                self.models.push(m.to_owned());
            }
            match message.id.get() {
                Some(id) => {
                    self.message_ids.insert(hash(id.as_bytes()));
                }
                None => self.anonymous_messages += 1,
            }
            if let Some(u) = message.usage.0.as_ref() {
                let c = counters_of(u);
                match message.id.get() {
                    Some(mid) => {
                        let rid = env.request_id.get().unwrap_or("");
                        max_with(
                            self.usage_groups.entry_logged(
                                packed::hash_parts(&[mid, "\0", rid]),
                                Default::default,
                            ),
                            c,
                        );
                    }
                    None => add(&mut self.usage_loose, c),
                }
            }
        }
        for b in message.content.blocks() {
            if let (Some("tool_use"), Some(id)) = (b.kind(), b.id.get()) {
                self.tool_use(id, b.name.get(), b.input.as_ref());
            }
        }
    }

    fn user(&mut self, env: &Envelope<'_, Value>) {
        let Some(message) = env.message.0.as_ref() else {
            return;
        };
        if !env.is_meta.0 && !env.is_compact_summary.0 {
            let prompt = match &message.content {
                Content::Text(t) => t.get().is_some_and(|t| !t.trim().is_empty()),
                Content::Blocks(b) => b
                    .iter()
                    .any(|b| matches!(b.kind(), Some("text" | "image" | "document"))),
                Content::None => false,
            };
            self.prompts += u64::from(prompt);
        }
        for b in message.content.blocks() {
            if let (Some("tool_result"), Some(id)) = (b.kind(), b.tool_use_id.get())
                && (self.links.spawn(id).is_some() || !self.tool_ids.contains(hash(id.as_bytes())))
            {
                *self.results.entry(id.to_owned()).or_default() |= b.is_error.0;
            }
        }
    }

    /// Appends to `out` what the id sets gained since the last `log_ids` or `replay_ids`: new
    /// message and tool ids, new usage groups, and usage groups whose counters changed. The
    /// hook keeps these records in an append-only file, so a long session's ids (about a
    /// megabyte for 100 MB of transcript) are not rewritten after every turn; replayed with
    /// [`MetaCollector::replay_ids`] they rebuild the sets without hashing anything.
    pub fn log_ids(&mut self, out: &mut Vec<u8>) {
        let put = |out: &mut Vec<u8>, tag: u8, words: &[u64]| {
            out.push(tag);
            for w in words {
                out.extend_from_slice(&w.to_le_bytes());
            }
        };
        for (k, ()) in self.message_ids.items_from(self.logged[0]) {
            put(out, LOG_MESSAGE, &[*k]);
        }
        for (k, ()) in self.tool_ids.items_from(self.logged[1]) {
            put(out, LOG_TOOL, &[*k]);
        }
        let old_groups = self.logged[2];
        for at in self.usage_groups.take_changed() {
            if at >= old_groups {
                continue;
            }
            if let Some((_, c)) = self.usage_groups.item(at) {
                put(out, LOG_GROUP_SET, &[at as u64, c[0], c[1], c[2], c[3]]);
            }
        }
        for (k, c) in self.usage_groups.items_from(old_groups) {
            put(out, LOG_GROUP_NEW, &[*k, c[0], c[1], c[2], c[3]]);
        }
        self.logged = [
            self.message_ids.len(),
            self.tool_ids.len(),
            self.usage_groups.len(),
        ];
    }

    /// Replays records [`MetaCollector::log_ids`] wrote into empty id sets; false (and the
    /// sets in an unknown state) when the bytes are not such records.
    pub fn replay_ids(&mut self, mut bytes: &[u8]) -> bool {
        let word = |b: &mut &[u8]| -> Option<u64> {
            let (w, rest) = b.split_first_chunk::<8>()?;
            *b = rest;
            Some(u64::from_le_bytes(*w))
        };
        while let Some((&tag, rest)) = bytes.split_first() {
            bytes = rest;
            let ok = match tag {
                LOG_MESSAGE => word(&mut bytes).map(|k| self.message_ids.push_new(k, ())),
                LOG_TOOL => word(&mut bytes).map(|k| self.tool_ids.push_new(k, ())),
                LOG_GROUP_NEW | LOG_GROUP_SET => {
                    let head = word(&mut bytes);
                    let mut c = [0u64; 4];
                    let mut full = true;
                    for x in &mut c {
                        match word(&mut bytes) {
                            Some(v) => *x = v,
                            None => full = false,
                        }
                    }
                    match (head, full, tag) {
                        (Some(k), true, LOG_GROUP_NEW) => {
                            self.usage_groups.push_new(k, c);
                            Some(())
                        }
                        (Some(at), true, _) => usize::try_from(at)
                            .ok()
                            .filter(|at| self.usage_groups.set_at(*at, c))
                            .map(drop),
                        _ => None,
                    }
                }
                _ => None,
            };
            if ok.is_none() {
                return false;
            }
        }
        self.logged = [
            self.message_ids.len(),
            self.tool_ids.len(),
            self.usage_groups.len(),
        ];
        true
    }

    /// Empties the id sets (kept in the id log instead), e.g. before the rest is serialized.
    pub fn clear_ids(&mut self) {
        self.message_ids = Keyed::default();
        self.tool_ids = Keyed::default();
        self.usage_groups = Keyed::default();
    }

    /// The spawning calls seen and the agents they name.
    pub fn links(&self) -> &SpawnLinks {
        &self.links
    }

    /// Rewrites every free text the collector keeps (working directory, branch, skills, file
    /// paths, the spawning calls' descriptions), e.g. to redact it before the state is stored.
    pub fn map_text(&mut self, f: &mut dyn FnMut(&str) -> String) {
        for v in [&mut self.cwd, &mut self.git_branch].into_iter().flatten() {
            *v = f(v);
        }
        for list in [&mut self.skills, &mut self.files] {
            for v in list.iter_mut() {
                *v = f(v);
            }
        }
        self.links.map_text(f);
    }

    /// The first `sessionId` seen in the records.
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// How a `tool_use` ended, from its `tool_result`: `completed` or `error`; `None` while no
    /// result exists.
    pub fn outcome_of(&self, tool_use_id: &str) -> Option<String> {
        let is_error = *self.results.get(tool_use_id)?;
        Some(if is_error { "error" } else { "completed" }.to_owned())
    }

    /// The metadata every transcript has: timestamps, counts, tools, usage, models, files,
    /// skills, cwd and git branch. Identity fields (session, project, subagents, origin) are the
    /// caller's.
    pub fn meta(&self) -> SessionMeta {
        let mut m = SessionMeta {
            cwd: self.cwd.clone(),
            git_branch: self.git_branch.clone(),
            first_timestamp: self.first_timestamp.clone(),
            last_timestamp: self.last_timestamp.clone(),
            models: self.models.clone(),
            user_messages: self.prompts,
            assistant_messages: self.message_ids.len() as u64 + self.anonymous_messages,
            tool_calls: self.tool_calls,
            tool_counts: self.tool_counts.clone(),
            files_modified: self.files.clone(),
            skills_used: self.skills.clone(),
            ..SessionMeta::default()
        };
        m.message_count = m.user_messages + m.assistant_messages;
        let ms = |t: &Option<String>| t.as_deref().and_then(skein_core::time::parse_ms);
        if let (Some(a), Some(b)) = (ms(&m.first_timestamp), ms(&m.last_timestamp)) {
            m.duration_ms = u64::try_from(b - a).ok();
        }
        let mut total = self.usage_loose;
        for c in self.usage_groups.values() {
            add(&mut total, *c);
        }
        let [input, output, cache_creation, cache_read] = total;
        m.usage = TokenUsage {
            input_tokens: input,
            output_tokens: output,
            cache_creation_input_tokens: cache_creation,
            cache_read_input_tokens: cache_read,
        };
        m
    }
}

impl RecordVisitor<Value> for MetaCollector {
    fn record(&mut self, line: &Line<'_>, env: &Envelope<'_, Value>, node: Option<(NodeId, bool)>) {
        // Before the blocks: a spawn's result needs its call known.
        self.links.record(line, env, node);
        if self.session_id.is_none() {
            self.session_id = env.session_id.get().map(str::to_owned);
        }
        if self.cwd.is_none() {
            self.cwd = clean(env.cwd.get());
        }
        // Most records repeat the branch: only a different one is cleaned (a cleaned value is
        // its own cleaning, so skipping an equal one changes nothing).
        if let Some(raw) = env.git_branch.get()
            && self.git_branch.as_deref() != Some(raw)
            && let Some(b) = clean(Some(raw))
        {
            self.git_branch = Some(b);
        }
        if let Some(ts) = env.timestamp.get() {
            // Nearly every record moves the last timestamp: its string is rewritten in place.
            let set = |kept: &mut Option<String>| match kept {
                Some(k) => ts.clone_into(k),
                None => *kept = Some(ts.to_owned()),
            };
            if self.first_timestamp.as_deref().is_none_or(|f| ts < f) {
                set(&mut self.first_timestamp);
            }
            if self.last_timestamp.as_deref().is_none_or(|l| ts > l) {
                set(&mut self.last_timestamp);
            }
        }
        match env.kind.get() {
            Some("assistant") => self.assistant(env),
            Some("user") => self.user(env),
            _ => {}
        }
    }
}

/// Ranges up to this size are read into memory at once by [`feed_range`].
const SMALL_RANGE: u64 = 1 << 20;

/// Feeds the lines of `path` in `[from, to)` to `c` through the same reader `skein archive`
/// reads whole files with ([`crate::meta_read`]; `from` and `to` are line starts/ends, as the
/// hook's checkpoints keep them): the hook's incremental update.
pub fn feed_range(
    c: &mut MetaCollector,
    path: &std::path::Path,
    from: u64,
    to: u64,
    parser: &mut skein_core::Parser,
) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    if from >= to {
        return Ok(());
    }
    let mut file = std::fs::File::open(path)?;
    file.seek(SeekFrom::Start(from))?;
    let mut range = file.take(to - from);
    // A turn's bytes are read at once: the streaming reader's block buffer would cost more
    // to set up than the lines cost to read.
    if to - from <= SMALL_RANGE {
        let mut bytes = Vec::with_capacity(usize::try_from(to - from).unwrap_or(0));
        range.read_to_end(&mut bytes)?;
        return feed_lines(c, skein_core::SliceLines::new(&bytes), parser);
    }
    feed_lines(c, skein_core::ReadLines::new(range), parser)
}

/// Carries over what an earlier run (or the hook) stored and this one cannot know: the
/// outcome (the hook records how the session ended) and extra keys; then records the source
/// size this metadata describes.
pub fn finish(mut m: SessionMeta, stored: Option<&SessionMeta>, source_bytes: u64) -> SessionMeta {
    if let Some(old) = stored {
        if m.outcome.is_none() {
            m.outcome.clone_from(&old.outcome);
        }
        for (k, v) in &old.extra {
            m.extra.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    m.extra.insert(SOURCE_BYTES.into(), source_bytes.into());
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use skein_core::{Parser, SliceLines};

    fn feed(c: &mut MetaCollector, text: &str) {
        let lines = SliceLines::new(text.as_bytes());
        crate::meta_read::feed_lines_with(c, lines, &mut Parser::new(), None).expect("read");
    }

    const LINES: &str = concat!(
        r#"{"type":"user","sessionId":"s1","cwd":"/w","timestamp":"2026-05-01T10:00:05.000Z","message":{"role":"user","content":"Fix it."}}"#,
        "\n",
        r#"{"type":"assistant","timestamp":"2026-05-01T10:00:01.000Z","gitBranch":"main","requestId":"r1","message":{"id":"m1","model":"claude-opus-4","content":[{"type":"tool_use","id":"t1","name":"Edit","input":{"file_path":"/w/a.rs"}}],"usage":{"input_tokens":3,"output_tokens":1}}}"#,
        "\n",
        r#"{"type":"assistant","timestamp":"2026-05-01T10:00:02.000Z","requestId":"r1","message":{"id":"m1","model":"claude-opus-4","content":[{"type":"tool_use","id":"t1","name":"Edit","input":{"file_path":"/w/b.rs"}},{"type":"tool_use","id":"t2","name":"Skill","input":{"skill":"/pdf"}}],"usage":{"input_tokens":3,"output_tokens":90}}}"#,
        "\n",
        r#"{"type":"user","timestamp":"2026-05-01T10:00:09.500Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","is_error":true},{"type":"tool_result","tool_use_id":"t2"}]}}"#,
        "\n",
        r#"{"type":"assistant","timestamp":"2026-05-01T10:00:03.000Z","message":{"model":"<synthetic>","content":[],"usage":{"input_tokens":100}}}"#,
        "\n",
        r#"{"type":"assistant","message":{"model":"claude-haiku-4","content":[],"usage":{"input_tokens":2,"output_tokens":2}}}"#,
        "\n",
    );

    #[test]
    fn collects_what_the_archive_records() {
        let mut c = MetaCollector::new();
        feed(&mut c, LINES);
        let m = c.meta();
        assert_eq!(c.session_id(), Some("s1"));
        assert_eq!(m.cwd.as_deref(), Some("/w"));
        assert_eq!(m.git_branch.as_deref(), Some("main"));
        // Min and max, not first and last.
        assert_eq!(
            (m.first_timestamp.as_deref(), m.last_timestamp.as_deref()),
            (
                Some("2026-05-01T10:00:01.000Z"),
                Some("2026-05-01T10:00:09.500Z")
            )
        );
        assert_eq!(m.duration_ms, Some(8500));
        assert_eq!(
            (m.user_messages, m.assistant_messages, m.message_count),
            (1, 2, 3)
        );
        assert_eq!(m.models, ["claude-opus-4", "claude-haiku-4"]);
        // Group m1 takes the maximum of its lines; the line without an id is its own group;
        // `<synthetic>` is not counted.
        assert_eq!((m.usage.input_tokens, m.usage.output_tokens), (5, 92));
        // t1 counted once, with the first copy's input.
        assert_eq!(m.tool_calls, 2);
        assert_eq!(m.tool_counts.get("Edit"), Some(&1));
        assert_eq!(m.files_modified, ["/w/a.rs"]);
        assert_eq!(m.skills_used, ["pdf"]);
        // Only spawning calls' results are kept (how a subagent ended).
        assert_eq!(c.outcome_of("t1"), None);
        assert_eq!(c.outcome_of("t9"), None);
    }

    #[test]
    fn a_spawn_outcome_is_kept_even_when_its_result_comes_first() {
        let task = |id: &str| {
            format!(
                r#"{{"type":"assistant","message":{{"id":"m{id}","content":[{{"type":"tool_use","id":"{id}","name":"Task","input":{{"subagent_type":"x","description":"d"}}}}]}}}}"#
            )
        };
        let result = |id: &str, err: bool| {
            format!(
                r#"{{"type":"user","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{id}","is_error":{err}}}]}}}}"#
            )
        };
        let text = [
            task("k1"),
            result("k1", false),
            result("k2", true),
            task("k2"),
        ]
        .join("\n");
        let mut c = MetaCollector::new();
        feed(&mut c, &text);
        assert_eq!(c.outcome_of("k1").as_deref(), Some("completed"));
        assert_eq!(c.outcome_of("k2").as_deref(), Some("error"));
        assert_eq!(c.links().spawns().count(), 2);
    }

    #[test]
    fn the_id_log_rebuilds_the_sets() {
        let mut whole = MetaCollector::new();
        feed(&mut whole, LINES);
        let mut log = Vec::new();
        let mut state: Option<String> = None;
        let mut c = MetaCollector::new();
        for (i, line) in LINES.split_inclusive('\n').enumerate() {
            if let Some(saved) = state.take() {
                c = serde_json::from_str(saved.as_str()).expect("state");
                assert!(c.replay_ids(&log), "replay after line {i}");
            }
            feed(&mut c, line);
            c.log_ids(&mut log);
            c.clear_ids();
            state = Some(serde_json::to_string(&c).expect("serialize"));
        }
        let mut last: MetaCollector = serde_json::from_str(&state.expect("state")).expect("state");
        assert!(last.replay_ids(&log));
        assert_eq!(last.meta(), whole.meta());
        assert!(!MetaCollector::new().replay_ids(&[LOG_GROUP_SET, 1, 2]));
        assert!(!MetaCollector::new().replay_ids(&[9]));
    }

    #[test]
    fn saved_state_continues_like_one_pass() {
        let mut whole = MetaCollector::new();
        feed(&mut whole, LINES);
        let cut = LINES
            .match_indices('\n')
            .nth(2)
            .map(|(i, _)| i + 1)
            .expect("3 lines");
        let mut first = MetaCollector::new();
        feed(&mut first, &LINES[..cut]);
        let saved = serde_json::to_string(&first).expect("serialize");
        let mut resumed: MetaCollector = serde_json::from_str(&saved).expect("deserialize");
        feed(&mut resumed, &LINES[cut..]);
        assert_eq!(resumed, whole);
        assert_eq!(resumed.meta(), whole.meta());
    }
}
