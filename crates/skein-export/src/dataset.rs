//! Writing the dataset: one part file per table, partition and shard, each written to a temp
//! file beside its target and renamed into place only when every file of the run is complete
//! (so a failed run leaves the previous files, and a re-run replaces exactly the part files it
//! writes). `_schema.json` is written last.

use std::collections::BTreeMap;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use arrow_schema::SchemaRef;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use skein_store::AtomicFile;

use crate::error::Error;
use crate::partition::{Shard, escape_value, month_of};
use crate::rows::{MessageRow, Row, SessionRow, ToolCallRow, UsageRow, batch};
use crate::schema::{Table, schema_json};

/// The files' format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    #[default]
    Parquet,
    /// One JSON object per line, for tools without Parquet.
    Jsonl,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Self::Parquet => "parquet",
            Self::Jsonl => "jsonl",
        }
    }
}

/// How the dataset is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    pub format: Format,
    /// Partition by `project=` below `month=`.
    pub by_project: bool,
    pub shard: Shard,
    /// Rows per Parquet row group (at most).
    pub row_group_rows: usize,
}

impl Default for Layout {
    fn default() -> Self {
        Self {
            format: Format::Parquet,
            by_project: false,
            shard: Shard::ALL,
            row_group_rows: 128 * 1024,
        }
    }
}

/// Rows buffered before they become one record batch, or fewer when their text reaches
/// [`BATCH_TEXT_BYTES`] (so each open part file holds about a megabyte of rows at most).
const BATCH_ROWS: usize = 8192;
const BATCH_TEXT_BYTES: usize = 1 << 20;
/// A row group in progress is flushed past this many bytes (long texts), whatever its rows.
const ROW_GROUP_BYTES: usize = 64 << 20;
/// The row groups in progress in all open part files together are kept under this many bytes
/// of memory (the largest is flushed early): a dataset with many partitions would otherwise
/// hold up to a row group per part file, so memory would follow the input.
const BUFFERED_BYTES: usize = 48 << 20;

/// The rows waiting in all part files together are kept under about this many bytes (see
/// [`row_bytes`]): past it the fullest buffers become record batches, down to half of it, so
/// memory does not follow the number of partitions (`--partition-by project` opens a part
/// file per project and month, each of which would otherwise hold up to [`BATCH_ROWS`] rows).
const ROWS_BUDGET: usize = 16 << 20;

/// What a buffered row costs: its struct, its long strings and about 128 bytes of ids.
fn row_bytes<R: Row>(row: &R) -> usize {
    std::mem::size_of::<R>() + row.text_len() + 128
}

/// A temp file that becomes its target on commit.
struct Pending(AtomicFile);

impl Write for Pending {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.file().write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.0.file().flush()
    }
}

enum Sink {
    Parquet(Box<ArrowWriter<Pending>>),
    Jsonl(BufWriter<Pending>),
}

struct PartFile<R> {
    path: PathBuf,
    rows: Vec<R>,
    /// [`Row::text_len`] of `rows`.
    text: usize,
    /// [`row_bytes`] of `rows`.
    bytes: usize,
    sink: Sink,
    written: u64,
}

/// What a run wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Written {
    /// Part files, relative to the dataset root, in path order.
    pub files: Vec<PathBuf>,
    /// Rows per table, in [`Table::ALL`] order.
    pub rows: [u64; 4],
}

struct TableFiles<R> {
    files: BTreeMap<String, PartFile<R>>,
    schema: SchemaRef,
    by_project: bool,
}

/// A dataset being written.
pub struct Dataset {
    root: PathBuf,
    layout: Layout,
    props: WriterProperties,
    sessions: TableFiles<SessionRow>,
    messages: TableFiles<MessageRow>,
    tool_calls: TableFiles<ToolCallRow>,
    usage: TableFiles<UsageRow>,
    /// [`row_bytes`] of the rows waiting in all part files.
    buffered: usize,
}

impl std::fmt::Debug for Dataset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dataset")
            .field("root", &self.root)
            .field("layout", &self.layout)
            .finish_non_exhaustive()
    }
}

/// Rows that the dataset can take.
pub trait Push<R> {
    /// Adds `row` of a session of `project`.
    fn push(&mut self, project: &str, row: R) -> Result<(), Error>;
}

macro_rules! push_impl {
    ($row:ty, $field:ident) => {
        impl Push<$row> for Dataset {
            fn push(&mut self, project: &str, row: $row) -> Result<(), Error> {
                let dir = self.partition_dir::<$row>(project, &row);
                let (root, layout, props) = (&self.root, self.layout, &self.props);
                self.buffered += row_bytes(&row);
                let freed = push_row(&mut self.$field, root, layout, props, &dir, row)?;
                self.buffered -= freed;
                if self.buffered > ROWS_BUDGET {
                    self.flush_fullest()?;
                }
                if freed > 0 {
                    self.keep_in_budget()?;
                }
                Ok(())
            }
        }
    };
}
push_impl!(SessionRow, sessions);
push_impl!(MessageRow, messages);
push_impl!(ToolCallRow, tool_calls);
push_impl!(UsageRow, usage);

fn io_err(path: &Path) -> impl Fn(io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn new_files<R>(table: Table, by_project: bool) -> TableFiles<R> {
    TableFiles {
        files: BTreeMap::new(),
        schema: table.arrow_schema(by_project),
        by_project,
    }
}

impl Dataset {
    /// Starts a dataset under `root` (created if missing). Nothing appears under the table
    /// directories until [`Dataset::commit`].
    pub fn create(root: &Path, layout: Layout) -> Result<Self, Error> {
        std::fs::create_dir_all(root).map_err(io_err(root))?;
        let zstd = ZstdLevel::try_new(3).map_err(|e| Error::Parquet(e.to_string()))?;
        let props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(zstd))
            .set_max_row_group_size(layout.row_group_rows.max(1))
            .set_created_by(format!("skein {}", env!("CARGO_PKG_VERSION")))
            .build();
        Ok(Self {
            root: root.to_path_buf(),
            layout,
            props,
            sessions: new_files(Table::Sessions, layout.by_project),
            messages: new_files(Table::Messages, layout.by_project),
            tool_calls: new_files(Table::ToolCalls, layout.by_project),
            usage: new_files(Table::Usage, layout.by_project),
            buffered: 0,
        })
    }

    fn partition_dir<R: Row>(&self, project: &str, row: &R) -> String {
        let mut dir = format!("{}/month={}", R::TABLE.name(), month_of(row.partition_ms()));
        if self.layout.by_project {
            dir.push_str("/project=");
            dir.push_str(&escape_value(project));
        }
        dir
    }

    /// Makes batches of the fullest row buffers until they hold half of [`ROWS_BUDGET`].
    fn flush_fullest(&mut self) -> Result<(), Error> {
        let mut fullest: Vec<(usize, usize, String)> = Vec::new();
        fullest.extend(buffers(0, &self.sessions));
        fullest.extend(buffers(1, &self.messages));
        fullest.extend(buffers(2, &self.tool_calls));
        fullest.extend(buffers(3, &self.usage));
        fullest.sort_by_key(|b| std::cmp::Reverse(b.0));
        let (root, by_project) = (&self.root, self.layout.by_project);
        for (_, table, dir) in fullest {
            if self.buffered <= ROWS_BUDGET / 2 {
                break;
            }
            self.buffered -= match table {
                0 => flush_dir(&mut self.sessions, root, by_project, &dir)?,
                1 => flush_dir(&mut self.messages, root, by_project, &dir)?,
                2 => flush_dir(&mut self.tool_calls, root, by_project, &dir)?,
                _ => flush_dir(&mut self.usage, root, by_project, &dir)?,
            };
        }
        self.keep_in_budget()
    }

    /// Flushes the largest row group in progress while all of them together hold more than
    /// [`BUFFERED_BYTES`].
    fn keep_in_budget(&mut self) -> Result<(), Error> {
        loop {
            let sizes = [
                largest(&self.sessions),
                largest(&self.messages),
                largest(&self.tool_calls),
                largest(&self.usage),
            ];
            let total: usize = sizes.iter().map(|s| s.0).sum();
            if total <= BUFFERED_BYTES {
                return Ok(());
            }
            let (mut best, mut at) = ((0, None), 0);
            for (k, s) in sizes.iter().enumerate() {
                if s.1.is_some() && s.2 > best.0 {
                    (best, at) = ((s.2, s.1.clone()), k);
                }
            }
            let Some(dir) = best.1 else { return Ok(()) };
            let root = &self.root;
            match at {
                0 => flush_row_group(&mut self.sessions, root, &dir)?,
                1 => flush_row_group(&mut self.messages, root, &dir)?,
                2 => flush_row_group(&mut self.tool_calls, root, &dir)?,
                _ => flush_row_group(&mut self.usage, root, &dir)?,
            }
        }
    }

    /// Finishes every part file, renames them into place and writes `_schema.json`. Until
    /// then, nothing under the dataset changed; on error, the temp files are removed.
    pub fn commit(self) -> Result<Written, Error> {
        let mut pending = Vec::new();
        let mut written = Written::default();
        written.rows[0] = close_all(self.sessions, &self.root, &mut pending)?;
        written.rows[1] = close_all(self.messages, &self.root, &mut pending)?;
        written.rows[2] = close_all(self.tool_calls, &self.root, &mut pending)?;
        written.rows[3] = close_all(self.usage, &self.root, &mut pending)?;
        for (rel, file) in pending {
            let target = self.root.join(&rel);
            file.0.commit().map_err(io_err(&target))?;
            written.files.push(rel);
        }
        let schema = self.root.join("_schema.json");
        let text = schema_json(self.layout.format.name(), self.layout.by_project);
        skein_store::write_atomic(&schema, text.as_bytes()).map_err(io_err(&schema))?;
        Ok(written)
    }
}

/// (bytes buffered, `table`, part directory) of each part file of `t` with rows waiting.
fn buffers<R>(table: usize, t: &TableFiles<R>) -> impl Iterator<Item = (usize, usize, String)> {
    t.files
        .iter()
        .filter(|(_, f)| f.bytes > 0)
        .map(move |(dir, f)| (f.bytes, table, dir.clone()))
}

/// Makes a batch of the rows waiting in the part file of `dir`; returns their [`row_bytes`].
fn flush_dir<R: Row>(
    t: &mut TableFiles<R>,
    root: &Path,
    by_project: bool,
    dir: &str,
) -> Result<usize, Error> {
    match t.files.get_mut(dir) {
        Some(f) => flush(f, &t.schema, root, by_project),
        None => Ok(0),
    }
}

/// (memory of all row groups in progress, the part file with the largest, its memory).
fn largest<R>(t: &TableFiles<R>) -> (usize, Option<String>, usize) {
    let mut out = (0, None, 0);
    for (dir, f) in &t.files {
        if let Sink::Parquet(w) = &f.sink {
            let m = w.memory_size();
            out.0 += m;
            if m > out.2 {
                out.1 = Some(dir.clone());
                out.2 = m;
            }
        }
    }
    out
}

/// Ends the row group in progress of the part file of `dir`.
fn flush_row_group<R>(t: &mut TableFiles<R>, root: &Path, dir: &str) -> Result<(), Error> {
    if let Some(f) = t.files.get_mut(dir)
        && let Sink::Parquet(w) = &mut f.sink
    {
        w.flush()
            .map_err(|e| Error::Parquet(format!("{}: {e}", root.join(&f.path).display())))?;
    }
    Ok(())
}

/// Adds `row` to its part file; returns the [`row_bytes`] of the rows it made a batch of (0
/// when none: the row is waiting).
fn push_row<R: Row>(
    t: &mut TableFiles<R>,
    root: &Path,
    layout: Layout,
    props: &WriterProperties,
    dir: &str,
    row: R,
) -> Result<usize, Error> {
    if !t.files.contains_key(dir) {
        let ext = layout.format.name();
        let path = PathBuf::from(dir).join(format!("{}.{ext}", layout.shard.part_name()));
        let abs = root.join(&path);
        let parent = root.join(dir);
        std::fs::create_dir_all(&parent).map_err(io_err(&parent))?;
        let file = Pending(AtomicFile::create(&abs).map_err(io_err(&abs))?);
        let sink = match layout.format {
            Format::Parquet => Sink::Parquet(Box::new(
                ArrowWriter::try_new(file, t.schema.clone(), Some(props.clone()))
                    .map_err(|e| Error::Parquet(format!("{}: {e}", abs.display())))?,
            )),
            Format::Jsonl => Sink::Jsonl(BufWriter::with_capacity(1 << 16, file)),
        };
        t.files.insert(
            dir.to_owned(),
            PartFile {
                path,
                rows: Vec::new(),
                text: 0,
                bytes: 0,
                sink,
                written: 0,
            },
        );
    }
    let Some(f) = t.files.get_mut(dir) else {
        return Ok(0);
    };
    f.text += row.text_len();
    f.bytes += row_bytes(&row);
    f.rows.push(row);
    if f.rows.len() < BATCH_ROWS && f.text < BATCH_TEXT_BYTES {
        return Ok(0);
    }
    flush(f, &t.schema, root, layout.by_project)
}

/// Writes the rows waiting in `f` (a record batch for Parquet); returns their [`row_bytes`].
fn flush<R: Row>(
    f: &mut PartFile<R>,
    schema: &SchemaRef,
    root: &Path,
    by_project: bool,
) -> Result<usize, Error> {
    if f.rows.is_empty() {
        return Ok(0);
    }
    let abs = root.join(&f.path);
    let pq = |e: &dyn std::fmt::Display| Error::Parquet(format!("{}: {e}", abs.display()));
    match &mut f.sink {
        Sink::Parquet(w) => {
            let b = batch(&f.rows, schema.clone(), by_project).map_err(|e| pq(&e))?;
            w.write(&b).map_err(|e| pq(&e))?;
            if w.in_progress_size() > ROW_GROUP_BYTES {
                w.flush().map_err(|e| pq(&e))?;
            }
        }
        Sink::Jsonl(w) => {
            for r in &f.rows {
                serde_json::to_writer(&mut *w, r).map_err(|e| pq(&e))?;
                w.write_all(b"\n").map_err(io_err(&abs))?;
            }
        }
    }
    f.written += f.rows.len() as u64;
    // Not `clear`: a part file that waits long for its next rows should not hold the memory.
    f.rows = Vec::new();
    f.text = 0;
    Ok(std::mem::take(&mut f.bytes))
}

fn close_all<R: Row>(
    t: TableFiles<R>,
    root: &Path,
    out: &mut Vec<(PathBuf, Pending)>,
) -> Result<u64, Error> {
    let mut rows = 0;
    for (_, mut f) in t.files {
        flush(&mut f, &t.schema, root, t.by_project)?;
        rows += f.written;
        let abs = root.join(&f.path);
        let file = match f.sink {
            Sink::Parquet(w) => w
                .into_inner()
                .map_err(|e| Error::Parquet(format!("{}: {e}", abs.display())))?,
            Sink::Jsonl(w) => w.into_inner().map_err(|e| Error::Io {
                path: abs.clone(),
                source: e.into_error(),
            })?,
        };
        out.push((f.path, file));
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows waiting in the part files, counted from the files themselves.
    fn waiting(d: &Dataset) -> usize {
        let sum = |bytes: &mut dyn Iterator<Item = usize>| bytes.sum::<usize>();
        sum(&mut d.sessions.files.values().map(|f| f.bytes))
            + sum(&mut d.messages.files.values().map(|f| f.bytes))
            + sum(&mut d.tool_calls.files.values().map(|f| f.bytes))
            + sum(&mut d.usage.files.values().map(|f| f.bytes))
    }

    #[test]
    fn rows_waiting_stay_within_the_budget_however_many_partitions() {
        let dir = tempfile::tempdir().expect("temp dir");
        let layout = Layout {
            by_project: true,
            ..Layout::default()
        };
        let mut d = Dataset::create(dir.path(), layout).expect("dataset");
        // 400 part files with 50 rows of 2 KB each: no file reaches a batch on its own
        // (BATCH_ROWS, BATCH_TEXT_BYTES), together 48 MB, three times the budget.
        let text = "x".repeat(2000);
        let (projects, rows) = (400, 20_000);
        let mut most = 0;
        for i in 0..rows {
            let row = MessageRow {
                session_id: format!("s{i}"),
                uuid: format!("u{i}"),
                timestamp: Some(1_760_000_000_000),
                text: Some(text.clone()),
                ..MessageRow::default()
            };
            d.push(&format!("p{}", i % projects), row).expect("push");
            assert_eq!(
                d.buffered,
                waiting(&d),
                "the running count is the files' sum"
            );
            most = most.max(d.buffered);
        }
        assert!(
            most <= ROWS_BUDGET,
            "{most} bytes waited, budget {ROWS_BUDGET}"
        );
        assert!(most > ROWS_BUDGET / 2, "the budget was reached: {most}");
        let written = d.commit().expect("commit");
        assert_eq!(written.rows[1], rows as u64);
        assert_eq!(written.files.len(), projects);
    }
}
