//! The rows of the four tables, and how a batch of them becomes an Arrow record batch (in the
//! column order of [`crate::schema`]). Rows serialize to JSON for `skein export jsonl`, with
//! timestamps as ISO-8601 UTC strings.

use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Float64Builder, Int64Builder, ListBuilder, StringBuilder,
    TimestampMillisecondBuilder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{ArrowError, SchemaRef};
use serde::{Serialize, Serializer};

use crate::schema::{ColumnType, Table};

/// A count as a Parquet int64 (saturating: no count of a transcript comes near 2^63).
pub(crate) fn int(n: impl TryInto<i64>) -> i64 {
    n.try_into().unwrap_or(i64::MAX)
}

#[allow(
    clippy::ref_option,
    reason = "serde's serialize_with hands the field by reference"
)]
fn ts<S: Serializer>(v: &Option<i64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(ms) => s.serialize_str(&skein_core::time::format_ms(*ms)),
        None => s.serialize_none(),
    }
}

#[allow(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's serialize_with hands the field by reference"
)]
fn ts_req<S: Serializer>(v: &i64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&skein_core::time::format_ms(*v))
}

/// One main transcript or subagent.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SessionRow {
    pub session_id: String,
    pub agent_id: Option<String>,
    pub parent_session_id: Option<String>,
    pub spawning_tool_use_id: Option<String>,
    pub agent_type: Option<String>,
    pub agent_name: Option<String>,
    pub project: String,
    pub cwd: Option<String>,
    pub git_branch: Option<String>,
    pub version: Option<String>,
    pub title: Option<String>,
    #[serde(serialize_with = "ts")]
    pub first_timestamp: Option<i64>,
    #[serde(serialize_with = "ts")]
    pub last_timestamp: Option<i64>,
    pub prompts: i64,
    pub messages: i64,
    pub tool_calls: i64,
    pub models: Vec<String>,
    pub cost_usd: f64,
}

/// One chain record (a record with a uuid), on any branch.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct MessageRow {
    pub session_id: String,
    pub agent_id: Option<String>,
    pub uuid: String,
    pub parent_uuid: Option<String>,
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub role: Option<String>,
    #[serde(serialize_with = "ts")]
    pub timestamp: Option<i64>,
    pub model: Option<String>,
    pub on_active_path: bool,
    pub is_sidechain: bool,
    pub line: i64,
    pub text_bytes: i64,
    pub text: Option<String>,
}

/// One tool call (a `tool_use` block) with its result.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ToolCallRow {
    pub session_id: String,
    pub agent_id: Option<String>,
    pub tool_use_id: String,
    pub name: Option<String>,
    #[serde(serialize_with = "ts")]
    pub timestamp: Option<i64>,
    pub duration_ms: Option<i64>,
    pub is_error: Option<bool>,
    pub input_bytes: i64,
    pub result_bytes: Option<i64>,
    pub input_json: Option<String>,
}

/// One deduplicated API request.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct UsageRow {
    pub session_id: String,
    pub agent_id: Option<String>,
    pub message_id: Option<String>,
    pub request_id: Option<String>,
    pub model: Option<String>,
    #[serde(serialize_with = "ts_req")]
    pub timestamp: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cache_creation_input_tokens: i64,
    pub cache_read_input_tokens: i64,
    pub cost_usd: f64,
}

enum Col {
    Str(StringBuilder),
    Ts(TimestampMillisecondBuilder),
    I64(Int64Builder),
    F64(Float64Builder),
    Bool(BooleanBuilder),
    List(ListBuilder<StringBuilder>),
}

/// Column builders for one batch; rows append their values in column order.
pub struct Builders {
    cols: Vec<Col>,
    next: usize,
    by_project: bool,
}

impl Builders {
    fn new(table: Table, by_project: bool) -> Self {
        let cols = table
            .file_columns(by_project)
            .map(|c| match c.kind {
                ColumnType::Utf8 => Col::Str(StringBuilder::new()),
                ColumnType::TimestampMs => {
                    Col::Ts(TimestampMillisecondBuilder::new().with_timezone("UTC"))
                }
                ColumnType::Int64 => Col::I64(Int64Builder::new()),
                ColumnType::Float64 => Col::F64(Float64Builder::new()),
                ColumnType::Bool => Col::Bool(BooleanBuilder::new()),
                ColumnType::Utf8List => Col::List(ListBuilder::new(StringBuilder::new())),
            })
            .collect();
        Self {
            cols,
            next: 0,
            by_project,
        }
    }

    fn col(&mut self) -> &mut Col {
        let i = self.next;
        self.next += 1;
        &mut self.cols[i]
    }

    fn str(&mut self, v: Option<&str>) -> &mut Self {
        if let Col::Str(b) = self.col() {
            b.append_option(v);
        }
        self
    }

    fn ts(&mut self, v: Option<i64>) -> &mut Self {
        if let Col::Ts(b) = self.col() {
            b.append_option(v);
        }
        self
    }

    fn i64(&mut self, v: Option<i64>) -> &mut Self {
        if let Col::I64(b) = self.col() {
            b.append_option(v);
        }
        self
    }

    fn f64(&mut self, v: f64) -> &mut Self {
        if let Col::F64(b) = self.col() {
            b.append_value(v);
        }
        self
    }

    fn bool(&mut self, v: Option<bool>) -> &mut Self {
        if let Col::Bool(b) = self.col() {
            b.append_option(v);
        }
        self
    }

    fn list(&mut self, v: &[String]) -> &mut Self {
        if let Col::List(b) = self.col() {
            for s in v {
                b.values().append_value(s);
            }
            b.append(true);
        }
        self
    }

    /// The `project` column, left out when it is a partition key.
    fn project(&mut self, v: &str) -> &mut Self {
        if !self.by_project {
            self.str(Some(v));
        }
        self
    }

    fn end_row(&mut self) {
        debug_assert_eq!(
            self.next,
            self.cols.len(),
            "row appended a wrong number of columns"
        );
        self.next = 0;
    }

    fn finish(self, schema: SchemaRef) -> Result<RecordBatch, ArrowError> {
        let arrays: Vec<ArrayRef> = self
            .cols
            .into_iter()
            .map(|c| -> ArrayRef {
                match c {
                    Col::Str(mut b) => Arc::new(b.finish()),
                    Col::Ts(mut b) => Arc::new(b.finish()),
                    Col::I64(mut b) => Arc::new(b.finish()),
                    Col::F64(mut b) => Arc::new(b.finish()),
                    Col::Bool(mut b) => Arc::new(b.finish()),
                    Col::List(mut b) => Arc::new(b.finish()),
                }
            })
            .collect();
        RecordBatch::try_new(schema, arrays)
    }
}

/// A row of one of the tables.
pub trait Row: Serialize {
    const TABLE: Table;
    /// The instant whose UTC month partitions the row.
    fn partition_ms(&self) -> Option<i64>;
    /// Bytes of its long strings (text, tool input), for batches bounded in memory.
    fn text_len(&self) -> usize {
        0
    }
    fn append(&self, b: &mut Builders);
}

/// The record batch of `rows`, in `schema` (the table's [`Table::arrow_schema`]).
pub fn batch<R: Row>(
    rows: &[R],
    schema: SchemaRef,
    by_project: bool,
) -> Result<RecordBatch, ArrowError> {
    let mut b = Builders::new(R::TABLE, by_project);
    for r in rows {
        r.append(&mut b);
        b.end_row();
    }
    b.finish(schema)
}

impl Row for SessionRow {
    const TABLE: Table = Table::Sessions;
    fn partition_ms(&self) -> Option<i64> {
        self.first_timestamp
    }
    fn append(&self, b: &mut Builders) {
        b.str(Some(&self.session_id))
            .str(self.agent_id.as_deref())
            .str(self.parent_session_id.as_deref())
            .str(self.spawning_tool_use_id.as_deref())
            .str(self.agent_type.as_deref())
            .str(self.agent_name.as_deref())
            .project(&self.project)
            .str(self.cwd.as_deref())
            .str(self.git_branch.as_deref())
            .str(self.version.as_deref())
            .str(self.title.as_deref())
            .ts(self.first_timestamp)
            .ts(self.last_timestamp)
            .i64(Some(self.prompts))
            .i64(Some(self.messages))
            .i64(Some(self.tool_calls))
            .list(&self.models)
            .f64(self.cost_usd);
    }
}

impl Row for MessageRow {
    const TABLE: Table = Table::Messages;
    fn partition_ms(&self) -> Option<i64> {
        self.timestamp
    }
    fn text_len(&self) -> usize {
        self.text.as_ref().map_or(0, String::len)
    }
    fn append(&self, b: &mut Builders) {
        b.str(Some(&self.session_id))
            .str(self.agent_id.as_deref())
            .str(Some(&self.uuid))
            .str(self.parent_uuid.as_deref())
            .str(self.kind.as_deref())
            .str(self.role.as_deref())
            .ts(self.timestamp)
            .str(self.model.as_deref())
            .bool(Some(self.on_active_path))
            .bool(Some(self.is_sidechain))
            .i64(Some(self.line))
            .i64(Some(self.text_bytes))
            .str(self.text.as_deref());
    }
}

impl Row for ToolCallRow {
    const TABLE: Table = Table::ToolCalls;
    fn partition_ms(&self) -> Option<i64> {
        self.timestamp
    }
    fn text_len(&self) -> usize {
        self.input_json.as_ref().map_or(0, String::len)
    }
    fn append(&self, b: &mut Builders) {
        b.str(Some(&self.session_id))
            .str(self.agent_id.as_deref())
            .str(Some(&self.tool_use_id))
            .str(self.name.as_deref())
            .ts(self.timestamp)
            .i64(self.duration_ms)
            .bool(self.is_error)
            .i64(Some(self.input_bytes))
            .i64(self.result_bytes)
            .str(self.input_json.as_deref());
    }
}

impl Row for UsageRow {
    const TABLE: Table = Table::Usage;
    fn partition_ms(&self) -> Option<i64> {
        Some(self.timestamp)
    }
    fn append(&self, b: &mut Builders) {
        b.str(Some(&self.session_id))
            .str(self.agent_id.as_deref())
            .str(self.message_id.as_deref())
            .str(self.request_id.as_deref())
            .str(self.model.as_deref())
            .ts(Some(self.timestamp))
            .i64(Some(self.input_tokens))
            .i64(Some(self.output_tokens))
            .i64(Some(self.cache_creation_input_tokens))
            .i64(Some(self.cache_read_input_tokens))
            .f64(self.cost_usd);
    }
}
