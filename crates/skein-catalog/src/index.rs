//! Reading a source's new bytes (complete lines only) and turning them into [`Batch`]es of
//! rows for the writer: per-file facts, usage request copies (by the same scanner `skein usage`
//! uses), tool calls and searchable text locations. Runs on worker threads; touches no
//! database.

use std::collections::{BTreeSet, HashMap};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};

use skein_core::SliceLines;
use skein_core::time::parse_ms as parse_timestamp_ms;
use skein_layout::Source;
use skein_reports::usage::{SessionScan, Source as Origin, UsageScanner};

use crate::error::{Error, Result};
use crate::extract::{Doc, ExtractOptions, Extractor, LineFacts, ResultFact, UseFact};
use crate::track::{self, Plan, Stat, Stored};

/// Content bytes handed to the writer at once (cut at a line end).
pub(crate) const CHUNK: usize = 8 << 20;

/// Longest first prompt kept as a title.
const TITLE_CHARS: usize = 200;

/// Facts of a file, merged chunk by chunk.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct FileFacts {
    pub(crate) first_ts: Option<String>,
    pub(crate) last_ts: Option<String>,
    pub(crate) cwd: Option<String>,
    pub(crate) git_branch: Option<String>,
    pub(crate) version: Option<String>,
    pub(crate) models: BTreeSet<String>,
    pub(crate) custom_title: Option<String>,
    pub(crate) ai_title: Option<String>,
    pub(crate) summary: Option<String>,
    pub(crate) first_prompt: Option<String>,
    pub(crate) prompts: u64,
    pub(crate) user_messages: u64,
    pub(crate) invalid_lines: u64,
}

impl FileFacts {
    /// `self` followed by `later` (the facts of the bytes after).
    pub(crate) fn then(mut self, later: Self) -> Self {
        if let Some(t) = later.first_ts
            && self.first_ts.as_ref().is_none_or(|f| t < *f)
        {
            self.first_ts = Some(t);
        }
        if let Some(t) = later.last_ts
            && self.last_ts.as_ref().is_none_or(|l| t > *l)
        {
            self.last_ts = Some(t);
        }
        self.cwd = self.cwd.or(later.cwd);
        self.git_branch = later.git_branch.or(self.git_branch);
        self.version = later.version.or(self.version);
        self.models.extend(later.models);
        self.custom_title = later.custom_title.or(self.custom_title);
        self.ai_title = later.ai_title.or(self.ai_title);
        self.summary = later.summary.or(self.summary);
        self.first_prompt = self.first_prompt.or(later.first_prompt);
        self.prompts += later.prompts;
        self.user_messages += later.user_messages;
        self.invalid_lines += later.invalid_lines;
        self
    }

    fn add_line(&mut self, f: &mut LineFacts) {
        if let Some(ts) = f.timestamp.take() {
            if self.first_ts.as_ref().is_none_or(|t| ts < *t) {
                self.first_ts = Some(ts.clone());
            }
            if self.last_ts.as_ref().is_none_or(|t| ts > *t) {
                self.last_ts = Some(ts);
            }
        }
        if self.cwd.is_none() {
            self.cwd = f.cwd.take();
        }
        if let Some(b) = f.git_branch.take() {
            self.git_branch = Some(b);
        }
        if let Some(v) = f.version.take() {
            self.version = Some(v);
        }
        if let Some(m) = f.model.take()
            && !self.models.contains(&m)
        {
            self.models.insert(m);
        }
        if let Some(t) = f.custom_title.take() {
            self.custom_title = Some(t);
        }
        if let Some(t) = f.ai_title.take() {
            self.ai_title = Some(t);
        }
        if let Some(t) = f.summary.take() {
            self.summary = Some(t);
        }
        if let Some(p) = f.prompt.take() {
            let p = p.trim();
            let injected = p.starts_with('<') || p.starts_with("Caveat:");
            if !injected {
                self.prompts += 1;
                if self.first_prompt.is_none() {
                    let one_line = p.split_whitespace().collect::<Vec<_>>().join(" ");
                    self.first_prompt = Some(one_line.chars().take(TITLE_CHARS).collect());
                }
            }
        }
        self.user_messages += u64::from(f.user_message);
    }
}

/// A searchable block and where its line is.
#[derive(Debug, Clone)]
pub(crate) struct DocRow {
    pub(crate) offset: u64,
    pub(crate) len: u64,
    pub(crate) ts_ms: Option<i64>,
    pub(crate) doc: Doc,
}

/// A tool_use with its line.
#[derive(Debug, Clone)]
pub(crate) struct UseRow {
    pub(crate) fact: UseFact,
    pub(crate) line: u64,
    pub(crate) ts: Option<String>,
}

/// A tool_result with its time.
#[derive(Debug, Clone)]
pub(crate) struct ResultRow {
    pub(crate) fact: ResultFact,
    pub(crate) ts: Option<String>,
}

/// The rows of one chunk of one source.
#[derive(Debug, Default)]
pub(crate) struct Batch {
    /// Index of the source in the refresh's list.
    pub(crate) source: usize,
    /// First batch of the source in this run; `reindex` says whether it starts from zero.
    pub(crate) first: bool,
    pub(crate) reindex: bool,
    /// Last batch of the source in this run.
    pub(crate) last: bool,
    /// The source was read to its end (not stopped by the run's limit): `stat` is its state.
    pub(crate) complete: bool,
    /// Content offsets before and after the chunk.
    pub(crate) start: u64,
    pub(crate) end: u64,
    /// Compressed offset after the chunk (archive files; else 0).
    pub(crate) zst_end: u64,
    pub(crate) lines_before: u64,
    pub(crate) lines: u64,
    pub(crate) stat: Stat,
    pub(crate) hashes: (u64, u64),
    pub(crate) facts: FileFacts,
    pub(crate) scan: SessionScan,
    pub(crate) docs: Vec<DocRow>,
    pub(crate) uses: Vec<UseRow>,
    pub(crate) results: Vec<ResultRow>,
}

/// One source to index.
#[derive(Debug, Clone)]
pub(crate) struct Work {
    pub(crate) source: usize,
    pub(crate) plan: Plan,
    pub(crate) stat: Stat,
    pub(crate) stored: Option<Stored>,
}

/// Per-thread parsing state.
#[derive(Debug)]
pub(crate) struct Indexer {
    extractor: Extractor,
    scanner: UsageScanner,
}

/// The usage scanner's notion of where a file's copies come from.
pub(crate) fn origin(source: &Source) -> Origin {
    match source.agent() {
        None => Origin::Main,
        Some(a) if a.internal => Origin::InternalAgent,
        Some(_) => Origin::Subagent,
    }
}

/// Reads up to `size` bytes ending at a line end (more when the first line is longer: up to
/// its end); leftover bytes of the last read stay in `carry`. Returns the chunk, empty at the
/// end of the input. A last line without a line end stays in `carry` (torn: Claude Code is
/// still writing it) unless it is a whole JSON object: then it is the file's last record,
/// written without a final newline, and the scanners count it, so the catalog does too.
fn next_chunk(
    r: &mut impl Read,
    carry: &mut Vec<u8>,
    eof: &mut bool,
    size: usize,
) -> io::Result<Vec<u8>> {
    let mut buf = std::mem::take(carry);
    if !*eof && buf.len() < size {
        let want = size - buf.len();
        let n = r.by_ref().take(want as u64).read_to_end(&mut buf)?;
        *eof = n < want;
    }
    if let Some(i) = memchr::memrchr(b'\n', &buf) {
        *carry = buf.split_off(i + 1);
        if *eof && is_whole_record(carry) {
            buf.append(carry);
        }
        return Ok(buf);
    }
    // No line end in the first `size` bytes: read on to the end of this line, in growing
    // steps (linear in the line's length).
    loop {
        if *eof {
            if is_whole_record(&buf) {
                return Ok(buf);
            }
            *carry = buf;
            return Ok(Vec::new());
        }
        let old = buf.len();
        let step = size.max(4096).max(old);
        let n = r.by_ref().take(step as u64).read_to_end(&mut buf)?;
        *eof = n < step;
        if let Some(i) = memchr::memchr(b'\n', &buf[old..]) {
            *carry = buf.split_off(old + i + 1);
            return Ok(buf);
        }
    }
}

/// A line without its line end that is a whole JSON object (not a torn one).
fn is_whole_record(line: &[u8]) -> bool {
    let t = line.trim_ascii();
    t.starts_with(b"{")
        && t.ends_with(b"}")
        && serde_json::from_slice::<serde::de::IgnoredAny>(t).is_ok()
}

/// Bytes to skip at `offset` before new lines begin. The catalog may have indexed a last
/// record written without a line end (see [`next_chunk`]); bytes appended since then start
/// with that line end, which ends the old line rather than making a new one. `None` when
/// the old line went on instead: it was not whole after all, and the file is read again.
fn line_end_after(file: &File, offset: u64) -> io::Result<Option<u64>> {
    use std::os::unix::fs::FileExt;
    if offset == 0 {
        return Ok(Some(0));
    }
    let mut before = [0u8; 1];
    file.read_exact_at(&mut before, offset - 1)?;
    if before[0] == b'\n' {
        return Ok(Some(0));
    }
    let mut next = [0u8; 2];
    let n = file.read_at(&mut next, offset)?;
    Ok(match &next[..n] {
        [b'\n', ..] => Some(1),
        [b'\r', b'\n'] => Some(2),
        _ => None,
    })
}

impl Indexer {
    pub(crate) fn new(options: &ExtractOptions) -> Self {
        Self {
            extractor: Extractor::with_options(options),
            scanner: UsageScanner::new(),
        }
    }

    /// Indexes the new bytes of `source` (at most about `limit` bytes), handing each chunk's
    /// batch to `sink`; stops early when `sink` returns false.
    pub(crate) fn run(
        &mut self,
        work: &Work,
        source: &Source,
        limit: u64,
        sink: &mut dyn FnMut(Batch) -> bool,
    ) -> Result<()> {
        let path = &source.path;
        // An archive file is read to its committed end in one run: its compressed offset can
        // only be noted at a frame boundary.
        let limit = if source.archived.is_some() {
            u64::MAX
        } else {
            limit
        };
        let io_err = |e| Error::io(path, e);
        let mut plan = work.plan;
        let stored = work.stored.clone().unwrap_or_default();
        let mut file = None;
        let mut skip = 0;
        let reader: Box<dyn Read> = if let Some(a) = &source.archived {
            let (zst_from, _) = match plan {
                Plan::Append => (stored.zst_offset, stored.offset),
                _ => (0, 0),
            };
            skein_archive::open_archived_range(
                path,
                zst_from,
                a.state.committed_len.min(work.stat.size),
            )
            .map_err(|e| Error::io(path, io::Error::other(e.to_string())))?
        } else if track::is_plain_zst(path) {
            plan = Plan::Reindex;
            skein_layout::open(path, skein_store::InputMode::Read)
                .map_err(|e| Error::io(path, e.source))
                .map(|i| match i {
                    skein_store::Input::Stream(r) => r,
                    skein_store::Input::Mapped(m) => Box::new(io::Cursor::new(m.to_vec())),
                })?
        } else {
            let mut f = File::open(path).map_err(io_err)?;
            if plan == Plan::Append && !track::same_prefix(&f, &stored) {
                plan = Plan::Reindex;
            }
            if plan == Plan::Append {
                match line_end_after(&f, stored.offset).map_err(io_err)? {
                    Some(n) => skip = n,
                    None => plan = Plan::Reindex,
                }
            }
            let from = if plan == Plan::Append {
                stored.offset + skip
            } else {
                0
            };
            f.seek(SeekFrom::Start(from)).map_err(io_err)?;
            let g = f.try_clone().map_err(io_err)?;
            file = Some(f);
            Box::new(g.take(work.stat.size - from))
        };
        let reindex = plan != Plan::Append;
        let (mut at, mut lines) = if reindex {
            (0, 0)
        } else {
            (stored.offset + skip, stored.lines)
        };
        let mut r = reader;
        let mut carry = Vec::new();
        let mut eof = false;
        let mut first = true;
        let mut done = 0u64;
        loop {
            let size = usize::try_from(limit.saturating_sub(done))
                .unwrap_or(CHUNK)
                .clamp(1, CHUNK);
            let chunk = next_chunk(&mut r, &mut carry, &mut eof, size).map_err(io_err)?;
            let stop = chunk.is_empty() || done + chunk.len() as u64 >= limit;
            let mut batch = self.chunk(&chunk, at, lines, source);
            batch.source = work.source;
            batch.first = first;
            batch.reindex = reindex && first;
            batch.stat = work.stat;
            at = batch.end;
            lines += batch.lines;
            done += chunk.len() as u64;
            // Complete lines left: read but not handed over yet (a limited run's last read).
            let more = !eof || memchr::memchr(b'\n', &carry).is_some();
            let last = stop || !more;
            if last {
                batch.last = true;
                batch.complete = !more;
                batch.zst_end = if source.archived.is_some() {
                    work.stat.size
                } else {
                    0
                };
            }
            if let Some(f) = file.as_ref() {
                batch.hashes = track::hashes(f, at).map_err(io_err)?;
            }
            let go_on = sink(batch);
            first = false;
            if last || !go_on {
                return Ok(());
            }
        }
    }

    /// The rows of one chunk of complete lines starting at content offset `base`.
    fn chunk(&mut self, chunk: &[u8], base: u64, lines_before: u64, source: &Source) -> Batch {
        let mut b = Batch {
            start: base,
            end: base + chunk.len() as u64,
            lines_before,
            ..Batch::default()
        };
        let _ = self.scanner.scan_agent_lines(
            SliceLines::new(chunk),
            &source.session_id,
            origin(source),
            source.agent().map(|a| a.agent_id.as_str()),
            &mut b.scan,
        );
        let mut names: HashMap<String, Option<String>> = HashMap::new();
        let mut pos = 0usize;
        if base == 0 && chunk.starts_with(b"\xEF\xBB\xBF") {
            pos = 3;
        }
        while pos < chunk.len() {
            let end = memchr::memchr(b'\n', &chunk[pos..]).map_or(chunk.len(), |i| pos + i + 1);
            let raw = &chunk[pos..end];
            b.lines += 1;
            let offset = base + pos as u64;
            pos = end;
            let text = raw.strip_suffix(b"\n").unwrap_or(raw);
            let text = text.strip_suffix(b"\r").unwrap_or(text);
            if text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let Some(mut f) = self.extractor.line(text) else {
                b.facts.invalid_lines += 1;
                continue;
            };
            let ts_ms = f.timestamp.as_deref().and_then(parse_timestamp_ms);
            let line = lines_before + b.lines;
            for u in f.uses.drain(..) {
                names.entry(u.id.clone()).or_insert_with(|| u.name.clone());
                b.uses.push(UseRow {
                    fact: u,
                    line,
                    ts: f.timestamp.clone(),
                });
            }
            for r in f.results.drain(..) {
                b.results.push(ResultRow {
                    fact: r,
                    ts: f.timestamp.clone(),
                });
            }
            for mut doc in f.docs.drain(..) {
                if doc.tool.is_none()
                    && let Some(id) = &doc.tool_use_id
                {
                    doc.tool = names.get(id).cloned().flatten();
                }
                b.docs.push(DocRow {
                    offset,
                    len: text.len() as u64,
                    ts_ms,
                    doc,
                });
            }
            b.facts.add_line(&mut f);
        }
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Chunks of any size put back together give the input, each ends at a line end (the
    /// last may be a whole record without one), and no line is cut or repeated.
    #[test]
    fn chunks_at_tiny_sizes_are_the_input_cut_at_line_ends() {
        let mut input = Vec::new();
        for i in 0..200 {
            let pad = "x".repeat(i * 7 % 53);
            input.extend_from_slice(format!("{{\"n\":{i},\"p\":\"{pad}\"}}\n").as_bytes());
        }
        input.extend_from_slice(b"{\"last\":true}");
        for size in [1, 2, 3, 7, 16, 64, 100, 1000, 1 << 20] {
            let mut r = std::io::Cursor::new(input.clone());
            let (mut carry, mut eof) = (Vec::new(), false);
            let mut out = Vec::new();
            loop {
                let chunk = next_chunk(&mut r, &mut carry, &mut eof, size).expect("read");
                if chunk.is_empty() {
                    break;
                }
                let whole_last = chunk.ends_with(b"}") && out.len() + chunk.len() == input.len();
                assert!(chunk.ends_with(b"\n") || whole_last, "size {size}");
                out.extend_from_slice(&chunk);
            }
            assert_eq!(out, input, "size {size}");
        }
    }
}
