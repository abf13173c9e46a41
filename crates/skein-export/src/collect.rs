//! One session's rows: every file read once by the analysis pass (graph, tool pairing), with
//! the archive's metadata collector (`skein_app::MetaCollector`) and the catalog's line
//! extractor (text, version, titles) as record visitors.

use serde_json::Value;
use skein_analysis::{Analysis, AnalysisOptions, RecordVisitor};
use skein_app::MetaCollector;
use skein_catalog::extract::{DocKind, Extractor};
use skein_core::time::parse_ms;
use skein_core::{Envelope, Line, Parser};
use skein_graph::NodeId;
use skein_layout::SessionFiles;

use crate::rows::int;
use skein_reports::{LineMap, LoadedSession};

use crate::ExportOptions;

use crate::rows::{MessageRow, SessionRow, ToolCallRow};

/// What text the `messages/` and `tool_calls/` tables carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextOptions {
    /// Prompt and reply text in `messages.text` (off: the column is null, `text_bytes` stays).
    pub text: bool,
    /// Thinking blocks in `messages.text`.
    pub thinking: bool,
    /// Tool results in `messages.text`, each cut at this many bytes (0: none).
    pub tool_output_bytes: usize,
    /// `tool_calls.input_json` cut at this many bytes.
    pub tool_input_bytes: usize,
}

impl Default for TextOptions {
    fn default() -> Self {
        Self {
            text: true,
            thinking: false,
            tool_output_bytes: 0,
            tool_input_bytes: 4096,
        }
    }
}

/// A chain record seen by the visitor, before the graph of its file is complete.
struct Draft {
    node: NodeId,
    row: MessageRow,
}

/// Facts of one file that no other collector keeps.
pub(crate) struct RowVisitor {
    extractor: Extractor,
    options: TextOptions,
    drafts: Vec<Draft>,
    version: Option<String>,
    custom_title: Option<String>,
    ai_title: Option<String>,
    summary: Option<String>,
    first_prompt: Option<String>,
}

impl RowVisitor {
    fn new(options: TextOptions) -> Self {
        Self {
            extractor: Extractor::new(options.tool_output_bytes),
            options,
            drafts: Vec::new(),
            version: None,
            custom_title: None,
            ai_title: None,
            summary: None,
            first_prompt: None,
        }
    }

    /// The title `skein sessions` shows: custom title, AI title, summary, first prompt.
    fn title(&self) -> Option<String> {
        self.custom_title
            .clone()
            .or_else(|| self.ai_title.clone())
            .or_else(|| self.summary.clone())
            .or_else(|| self.first_prompt.clone())
    }
}

impl RecordVisitor<Value> for RowVisitor {
    fn record(&mut self, line: &Line<'_>, env: &Envelope<'_, Value>, node: Option<(NodeId, bool)>) {
        let facts = self.extractor.line(line.text).unwrap_or_default();
        if self.version.is_none() {
            self.version = facts.version;
        }
        // Later titles replace earlier ones (a session renamed twice shows the last name).
        if facts.custom_title.is_some() {
            self.custom_title = facts.custom_title;
        }
        if facts.ai_title.is_some() {
            self.ai_title = facts.ai_title;
        }
        if facts.summary.is_some() {
            self.summary = facts.summary;
        }
        if self.first_prompt.is_none() {
            self.first_prompt.clone_from(&facts.prompt);
        }
        let Some((node, true)) = node else { return };
        let mut text = String::new();
        for d in &facts.docs {
            let keep = match d.kind {
                DocKind::Prompt | DocKind::Text => true,
                DocKind::Thinking => self.options.thinking,
                DocKind::ToolResult => self.options.tool_output_bytes > 0,
                DocKind::ToolUse => false,
            };
            if keep && !d.text.is_empty() {
                if !text.is_empty() {
                    text.push_str("\n\n");
                }
                text.push_str(&d.text);
            }
        }
        let message = env.message.0.as_ref();
        self.drafts.push(Draft {
            node,
            row: MessageRow {
                uuid: env.uuid.get().unwrap_or_default().to_owned(),
                parent_uuid: env.parent_uuid.get().map(str::to_owned),
                kind: env.kind.get().map(str::to_owned),
                role: message.and_then(|m| m.role.get()).map(str::to_owned),
                timestamp: env.timestamp.get().and_then(parse_ms),
                model: message.and_then(|m| m.model.get()).map(str::to_owned),
                is_sidechain: env.is_sidechain.0,
                line: int(line.number),
                text_bytes: int(text.len()),
                text: (self.options.text && !text.is_empty()).then_some(text),
                ..MessageRow::default()
            },
        });
    }
}

pub(crate) type FileVisitor = (MetaCollector, RowVisitor);

/// Reads every file of `files` (each line redacted first when `options` say so).
pub(crate) fn load(
    files: &SessionFiles,
    options: &ExportOptions<'_>,
    parser: &mut Parser,
) -> Result<LoadedSession<FileVisitor>, skein_reports::session::LoadError> {
    let redact = options
        .redactor
        .map(|r| move |text: &[u8], out: &mut Vec<u8>| r.redact_line(text, out).changed);
    let map: Option<LineMap<'_>> = redact.as_ref().map(|f| f as LineMap<'_>);
    let text = options.text;
    skein_reports::load_session_mapped::<Value, FileVisitor>(
        files,
        &AnalysisOptions::default(),
        parser,
        options.mmap,
        || (MetaCollector::new(), RowVisitor::new(text)),
        map,
    )
}

/// The rows of one transcript (the main one, or a subagent's).
pub(crate) struct FileRows {
    /// Bytes of the transcript read.
    pub bytes: u64,
    pub session: SessionRow,
    pub messages: Vec<MessageRow>,
    pub tool_calls: Vec<ToolCallRow>,
}

/// Cuts `s` at `max` bytes on a character boundary, giving back the memory cut off (a row
/// waits in a batch: a 1 MB `Write` input cut to 4 KiB must not hold its megabyte there).
fn cut(mut s: String, max: usize) -> String {
    if s.len() > max {
        let mut end = max;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
        s.shrink_to_fit();
    }
    s
}

/// The rows of one file; `session` carries the identity fields, the rest is filled here.
pub(crate) fn file_rows(
    mut session: SessionRow,
    analysis: &Analysis,
    visitor: FileVisitor,
    options: TextOptions,
) -> FileRows {
    let (collector, rows) = visitor;
    let meta = collector.meta();
    let dag = &analysis.dag;
    let mut active = vec![false; dag.len()];
    if let Some(leaf) = dag.active_leaf() {
        for n in dag.history(leaf).path {
            active[n.0 as usize] = true;
        }
    }
    session.cwd = meta.cwd;
    session.git_branch = meta.git_branch;
    session.version.clone_from(&rows.version);
    session.title = rows.title();
    session.first_timestamp = meta.first_timestamp.as_deref().and_then(parse_ms);
    session.last_timestamp = meta.last_timestamp.as_deref().and_then(parse_ms);
    session.prompts = int(meta.user_messages);
    session.messages = int(meta.message_count);
    session.tool_calls = int(meta.tool_calls);
    session.models = meta.models;
    let messages = rows
        .drafts
        .into_iter()
        .map(|d| MessageRow {
            session_id: session.session_id.clone(),
            agent_id: session.agent_id.clone(),
            on_active_path: active.get(d.node.0 as usize).copied().unwrap_or(false),
            ..d.row
        })
        .collect();
    let tool_calls = analysis
        .tools
        .pairs()
        .into_iter()
        .filter_map(|p| {
            let u = p.tool_use?;
            let input = u.input.as_ref().map(Value::to_string);
            Some(ToolCallRow {
                session_id: session.session_id.clone(),
                agent_id: session.agent_id.clone(),
                tool_use_id: u.id.clone(),
                name: u.name.clone(),
                timestamp: u.timestamp.as_deref().and_then(parse_ms),
                duration_ms: p.duration_ms(),
                is_error: p.result.map(|r| r.is_error),
                input_bytes: int(input.as_ref().map_or(0, String::len)),
                result_bytes: p.result.map(|r| int(r.bytes + r.media_bytes)),
                input_json: input.map(|s| cut(s, options.tool_input_bytes)),
            })
        })
        .collect();
    FileRows {
        bytes: analysis.stats.bytes,
        session,
        messages,
        tool_calls,
    }
}
