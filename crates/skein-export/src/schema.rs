//! The dataset's tables: one list of columns per table, which drives the Arrow schema of the
//! Parquet files, the row builders and `_schema.json`, so the three cannot disagree.

use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use serde::Serialize;

/// The dataset's schema version, written to `_schema.json`. Bumped when a column is renamed,
/// retyped or removed (adding a column keeps readers working and bumps the minor part).
pub const SCHEMA_VERSION: &str = "1.0";

/// A column's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    Utf8,
    /// A Parquet timestamp: milliseconds since the epoch, adjusted to UTC.
    TimestampMs,
    Int64,
    Float64,
    Bool,
    /// A list of strings.
    Utf8List,
}

impl ColumnType {
    fn arrow(self) -> DataType {
        match self {
            Self::Utf8 => DataType::Utf8,
            Self::TimestampMs => DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
            Self::Int64 => DataType::Int64,
            Self::Float64 => DataType::Float64,
            Self::Bool => DataType::Boolean,
            Self::Utf8List => DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
        }
    }

    /// The name `_schema.json` gives the type (the Parquet logical type).
    fn name(self) -> &'static str {
        match self {
            Self::Utf8 => "string",
            Self::TimestampMs => "timestamp(ms, UTC)",
            Self::Int64 => "int64",
            Self::Float64 => "double",
            Self::Bool => "boolean",
            Self::Utf8List => "list<string>",
        }
    }
}

/// One column.
#[derive(Debug, Clone, Copy)]
pub struct Column {
    pub name: &'static str,
    pub kind: ColumnType,
    pub nullable: bool,
    pub doc: &'static str,
}

const fn col(name: &'static str, kind: ColumnType, nullable: bool, doc: &'static str) -> Column {
    Column {
        name,
        kind,
        nullable,
        doc,
    }
}

use ColumnType::{Bool, Float64, Int64, TimestampMs, Utf8, Utf8List};

/// The four tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Table {
    Sessions,
    Messages,
    ToolCalls,
    Usage,
}

const SESSION_ID: Column = col("session_id", Utf8, false, "the session's id");
const AGENT_ID: Column = col(
    "agent_id",
    Utf8,
    true,
    "the subagent's id; null for the main transcript",
);

const SESSIONS: &[Column] = &[
    SESSION_ID,
    AGENT_ID,
    col(
        "parent_session_id",
        Utf8,
        true,
        "for a subagent: the session that spawned it",
    ),
    col(
        "spawning_tool_use_id",
        Utf8,
        true,
        "for a subagent: the Task/Agent call that spawned it",
    ),
    col(
        "agent_type",
        Utf8,
        true,
        "for a subagent: its type (sidecar, then the spawning call)",
    ),
    col(
        "agent_name",
        Utf8,
        true,
        "for a subagent: the name its spawning call gave it",
    ),
    col(
        "project",
        Utf8,
        false,
        "the Claude projects directory name (absent from the files when partitioned by project)",
    ),
    col("cwd", Utf8, true, "the first working directory recorded"),
    col("git_branch", Utf8, true, "the first git branch recorded"),
    col(
        "version",
        Utf8,
        true,
        "the first Claude Code version recorded",
    ),
    col(
        "title",
        Utf8,
        true,
        "custom title, else AI title, else summary, else first prompt",
    ),
    col(
        "first_timestamp",
        TimestampMs,
        true,
        "earliest record timestamp",
    ),
    col(
        "last_timestamp",
        TimestampMs,
        true,
        "latest record timestamp",
    ),
    col(
        "prompts",
        Int64,
        false,
        "human prompts (not meta, not compact summaries)",
    ),
    col(
        "messages",
        Int64,
        false,
        "API messages (by message id) plus human prompts",
    ),
    col("tool_calls", Int64, false, "distinct tool_use ids"),
    col(
        "models",
        Utf8List,
        false,
        "models in order of first use (<synthetic> excluded)",
    ),
    col(
        "cost_usd",
        Float64,
        false,
        "sum of this transcript's rows in usage/",
    ),
];

const MESSAGES: &[Column] = &[
    SESSION_ID,
    AGENT_ID,
    col(
        "uuid",
        Utf8,
        false,
        "the record's uuid (first occurrence when duplicated)",
    ),
    col("parent_uuid", Utf8, true, "parentUuid"),
    col(
        "type",
        Utf8,
        true,
        "the record type (user, assistant, system, …)",
    ),
    col("role", Utf8, true, "message.role"),
    col("timestamp", TimestampMs, true, "the record's timestamp"),
    col("model", Utf8, true, "message.model"),
    col(
        "on_active_path",
        Bool,
        false,
        "on the history of the active leaf (across compactions)",
    ),
    col("is_sidechain", Bool, false, "isSidechain"),
    col(
        "line",
        Int64,
        false,
        "1-based line number in its transcript",
    ),
    col(
        "text_bytes",
        Int64,
        false,
        "bytes of the text the record carries (whether or not exported)",
    ),
    col(
        "text",
        Utf8,
        true,
        "prompt and reply text (thinking and tool output only when asked); null with --no-text",
    ),
];

const TOOL_CALLS: &[Column] = &[
    SESSION_ID,
    AGENT_ID,
    col("tool_use_id", Utf8, false, "the tool_use block's id"),
    col("name", Utf8, true, "the tool's name"),
    col(
        "timestamp",
        TimestampMs,
        true,
        "the tool_use record's timestamp",
    ),
    col(
        "duration_ms",
        Int64,
        true,
        "result timestamp minus call timestamp",
    ),
    col(
        "is_error",
        Bool,
        true,
        "the result's is_error; null without a result",
    ),
    col(
        "input_bytes",
        Int64,
        false,
        "bytes of the input as compact JSON",
    ),
    col(
        "result_bytes",
        Int64,
        true,
        "bytes of the result (text and media); null without a result",
    ),
    col(
        "input_json",
        Utf8,
        true,
        "the input as compact JSON, cut at --tool-input-bytes on a character boundary",
    ),
];

const USAGE: &[Column] = &[
    SESSION_ID,
    AGENT_ID,
    col("message_id", Utf8, true, "message.id"),
    col("request_id", Utf8, true, "requestId"),
    col(
        "model",
        Utf8,
        true,
        "message.model (-fast appended for fast mode)",
    ),
    col(
        "timestamp",
        TimestampMs,
        false,
        "earliest timestamp of the request's lines",
    ),
    col("input_tokens", Int64, false, "input tokens"),
    col("output_tokens", Int64, false, "output tokens"),
    col(
        "cache_creation_input_tokens",
        Int64,
        false,
        "cache writes (5m + 1h)",
    ),
    col("cache_read_input_tokens", Int64, false, "cache reads"),
    col(
        "cost_usd",
        Float64,
        false,
        "the request's cost from skein's price table (0 when unpriced)",
    ),
];

impl Table {
    pub const ALL: [Self; 4] = [Self::Sessions, Self::Messages, Self::ToolCalls, Self::Usage];

    /// The table's directory name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Sessions => "sessions",
            Self::Messages => "messages",
            Self::ToolCalls => "tool_calls",
            Self::Usage => "usage",
        }
    }

    /// Every column the table defines.
    pub fn columns(self) -> &'static [Column] {
        match self {
            Self::Sessions => SESSIONS,
            Self::Messages => MESSAGES,
            Self::ToolCalls => TOOL_CALLS,
            Self::Usage => USAGE,
        }
    }

    /// The columns written into the files: a column that is also a partition key is left out
    /// (engines take it from the path; Spark refuses a name in both).
    pub fn file_columns(self, by_project: bool) -> impl Iterator<Item = &'static Column> {
        self.columns()
            .iter()
            .filter(move |c| !(by_project && c.name == "project"))
    }

    /// The Arrow schema of the table's files.
    pub fn arrow_schema(self, by_project: bool) -> SchemaRef {
        Arc::new(Schema::new(
            self.file_columns(by_project)
                .map(|c| Field::new(c.name, c.kind.arrow(), c.nullable))
                .collect::<Vec<_>>(),
        ))
    }
}

#[derive(Serialize)]
struct ColumnDoc {
    name: &'static str,
    #[serde(rename = "type")]
    kind: &'static str,
    nullable: bool,
    doc: &'static str,
}

#[derive(Serialize)]
struct TableDoc {
    name: &'static str,
    columns: Vec<ColumnDoc>,
}

#[derive(Serialize)]
struct SchemaDoc<'a> {
    schema_version: &'static str,
    format: &'a str,
    partitioning: Vec<&'static str>,
    partition_default: &'static str,
    tables: Vec<TableDoc>,
}

/// The text of `_schema.json` for a dataset in `format` (`parquet` or `jsonl`).
pub fn schema_json(format: &str, by_project: bool) -> String {
    let mut partitioning = vec!["month"];
    if by_project {
        partitioning.push("project");
    }
    let doc = SchemaDoc {
        schema_version: SCHEMA_VERSION,
        format,
        partitioning,
        partition_default: crate::partition::NULL_PARTITION,
        tables: Table::ALL
            .iter()
            .map(|t| TableDoc {
                name: t.name(),
                columns: t
                    .file_columns(by_project)
                    .map(|c| ColumnDoc {
                        name: c.name,
                        kind: c.kind.name(),
                        nullable: c.nullable,
                        doc: c.doc,
                    })
                    .collect(),
            })
            .collect(),
    };
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}
