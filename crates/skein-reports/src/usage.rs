//! The `skein usage` report: token usage and cost, deduplicated across the whole input, per
//! day, ISO week, month, session or model.
//!
//! # What is counted
//!
//! Only lines that contain `"usage"` are parsed (a byte search skips the rest). A line counts
//! when it is an `assistant` record with an object `message.usage`, or a `progress` record
//! whose `data.message` is such an assistant record (the `agent_progress` copies of subagent
//! messages that Claude Code 2.1.x wrote into the parent transcript). Lines whose model is
//! `<synthetic>` and lines without a parseable `timestamp` are skipped.
//!
//! Cache creation tokens are `cache_creation.ephemeral_5m_input_tokens +
//! ephemeral_1h_input_tokens` when that breakdown is present, else
//! `cache_creation_input_tokens` (all priced as 5-minute writes).
//!
//! # Deduplication
//!
//! 1. In each file, lines are grouped by (`message.id`, `requestId` or empty, sidechain); a
//!    line without `message.id` is its own group. Each counter of a group is the maximum over
//!    its lines (streaming placeholders carry partial `output_tokens`). Such a per-file group
//!    is a *copy*.
//! 2. Across the whole input, copies with the same (`message.id`, `requestId`) are one
//!    request: the copy kept is the non-sidechain one, then the one with the largest token
//!    total, then the one whose record `sessionId` is its session's id, then the first seen
//!    (sessions in discovery order, main transcript before agent files).
//! 3. A *sidechain* copy is one from an agent file (internal agents included), from a
//!    `progress` record, or with `isSidechain: true`. Sidechain copies replay parent messages
//!    under a new `requestId`, so for each `message.id`: when some request has a
//!    non-sidechain copy, requests known only from sidechain copies are dropped; when all are
//!    sidechain-only, they collapse into one (chosen as in 2).
//!
//! Each request kept is attributed to the session, day and model of its kept copy; its cost
//! comes from [`crate::pricing`].

use std::collections::{BTreeMap, BTreeSet};
use std::io;

use memchr::memmem;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use skein_core::lenient::{Count, Flag, Obj, Str};
use skein_core::{LineSource, ReadLines, SliceLines};
use skein_sessions::SessionFiles;
use skein_store::{Input, InputMode, open_input};

use crate::dates::{DateRange, Day};
use crate::pricing::PricingTable;
use crate::session::LoadError;

/// Token counts of one request or a sum of requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
    /// All cache writes (`cache_creation_5m + cache_creation_1h`).
    pub cache_creation: u64,
    pub cache_creation_5m: u64,
    pub cache_creation_1h: u64,
    pub cache_read: u64,
}

impl Tokens {
    /// input + output + cache creation + cache read.
    pub fn total(&self) -> u64 {
        self.input + self.output + self.cache_creation + self.cache_read
    }

    fn max_with(&mut self, o: &Self) {
        self.input = self.input.max(o.input);
        self.output = self.output.max(o.output);
        self.cache_creation_5m = self.cache_creation_5m.max(o.cache_creation_5m);
        self.cache_creation_1h = self.cache_creation_1h.max(o.cache_creation_1h);
        self.cache_creation = self.cache_creation.max(o.cache_creation);
        self.cache_read = self.cache_read.max(o.cache_read);
    }

    fn add(&mut self, o: &Self) {
        self.input += o.input;
        self.output += o.output;
        self.cache_creation += o.cache_creation;
        self.cache_creation_5m += o.cache_creation_5m;
        self.cache_creation_1h += o.cache_creation_1h;
        self.cache_read += o.cache_read;
    }
}

// ---------------------------------------------------------------------------------------
// Time

/// Milliseconds since 1970-01-01T00:00:00Z of an ISO-8601 timestamp
/// (`YYYY-MM-DD[THH:MM[:SS[.fff…]]][Z|±HH:MM|±HHMM]`, `T` or a space; no zone = UTC).
pub fn parse_timestamp_ms(ts: &str) -> Option<i64> {
    let b = ts.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = b.get(r)?;
        if s.is_empty() || !s.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(s).ok()?.parse().ok()
    };
    let day = Day::parse(ts.get(..10)?).ok()?;
    let mut ms = day.days_since_epoch() * 86_400_000;
    let mut i = 10;
    if matches!(b.get(i), Some(b'T' | b't' | b' ')) {
        let h = num(i + 1..i + 3)?;
        if b.get(i + 3) != Some(&b':') {
            return None;
        }
        let m = num(i + 4..i + 6)?;
        i += 6;
        let mut s = 0;
        if b.get(i) == Some(&b':') {
            s = num(i + 1..i + 3)?;
            i += 3;
        }
        let mut frac_ms = 0;
        if matches!(b.get(i), Some(b'.' | b',')) {
            let start = i + 1;
            let mut end = start;
            while b.get(end).is_some_and(u8::is_ascii_digit) {
                end += 1;
            }
            if end == start {
                return None;
            }
            let digits = &ts[start..end.min(start + 3)];
            frac_ms = digits.parse::<i64>().ok()? * 10_i64.pow(3 - digits.len() as u32);
            i = end;
        }
        if h > 23 || m > 59 || s > 60 {
            return None;
        }
        ms += ((h * 60 + m) * 60 + s) * 1000 + frac_ms;
    }
    match b.get(i) {
        None => Some(ms),
        Some(b'Z' | b'z') if i + 1 == b.len() => Some(ms),
        Some(b'+' | b'-') => {
            let off = UtcOffset::parse(&ts[i..]).ok()?;
            Some(ms - i64::from(off.minutes) * 60_000)
        }
        _ => None,
    }
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` for milliseconds since the epoch.
pub fn format_timestamp_ms(ms: i64) -> String {
    let day = Day::from_days(ms.div_euclid(86_400_000));
    let rest = ms.rem_euclid(86_400_000);
    format!(
        "{}T{:02}:{:02}:{:02}.{:03}Z",
        day.key(),
        rest / 3_600_000,
        rest / 60_000 % 60,
        rest / 1000 % 60,
        rest % 1000
    )
}

/// A fixed offset from UTC for day boundaries (`--timezone`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UtcOffset {
    /// Minutes east of UTC.
    pub minutes: i32,
}

/// Why a time zone was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid time zone {0:?}: expected UTC or a fixed offset such as +09:00, -0500, +05:30 \
     (IANA names are not supported)"
)]
pub struct OffsetError(pub String);

impl UtcOffset {
    /// UTC.
    pub const UTC: Self = Self { minutes: 0 };

    /// Parses `UTC`, `Z`, `GMT`, `±HH`, `±HHMM` or `±HH:MM` (optionally after `UTC`/`GMT`).
    pub fn parse(s: &str) -> Result<Self, OffsetError> {
        let err = || OffsetError(s.to_owned());
        let t = s.trim();
        let upper = t.to_ascii_uppercase();
        let rest = upper
            .strip_prefix("UTC")
            .or_else(|| upper.strip_prefix("GMT"))
            .unwrap_or(&upper);
        if rest.is_empty() || rest == "Z" {
            return Ok(Self::UTC);
        }
        let (sign, digits) = match rest.as_bytes()[0] {
            b'+' => (1, &rest[1..]),
            b'-' => (-1, &rest[1..]),
            _ => return Err(err()),
        };
        let digits: String = match digits.len() {
            2 | 4 => digits.to_owned(),
            5 if digits.as_bytes()[2] == b':' => digits.replace(':', ""),
            _ => return Err(err()),
        };
        if !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(err());
        }
        let h: i32 = digits[..2].parse().map_err(|_| err())?;
        let m: i32 = if digits.len() == 4 {
            digits[2..].parse().map_err(|_| err())?
        } else {
            0
        };
        if h > 14 || m > 59 {
            return Err(err());
        }
        Ok(Self {
            minutes: sign * (h * 60 + m),
        })
    }

    /// The local day of a UTC instant.
    pub fn day_of(self, ms: i64) -> Day {
        Day::from_days((ms + i64::from(self.minutes) * 60_000).div_euclid(86_400_000))
    }
}

// ---------------------------------------------------------------------------------------
// Scanning

/// Where a copy was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Source {
    /// The session's main transcript.
    Main,
    /// A subagent transcript.
    Subagent,
    /// An internal agent's transcript (`acompact-`, `aprompt_suggestion-`, `aside_question-`).
    InternalAgent,
    /// An `agent_progress` record in a transcript.
    Progress,
}

/// One request as seen in one file: the lines of one (`message.id`, `requestId`, sidechain)
/// group, counters maximised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestCopy {
    pub message_id: Option<Box<str>>,
    pub request_id: Option<Box<str>>,
    /// `message.model`, with `-fast` appended for fast-mode requests.
    pub model: Option<Box<str>>,
    pub tokens: Tokens,
    /// The earliest timestamp of the group's lines.
    pub timestamp_ms: i64,
    pub sidechain: bool,
    /// The records' `sessionId` differs from the session's id (a resume copy).
    pub foreign_session: bool,
    pub source: Source,
}

/// What a session scan found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionScan {
    /// Copies in file order (main transcript first), each file's in order of first line.
    pub copies: Vec<RequestCopy>,
    pub files: u64,
    pub bytes: u64,
    /// Lines containing `"usage"` (the only lines parsed).
    pub usage_lines: u64,
    /// Of those, lines that are not JSON objects even after repair.
    pub invalid_lines: u64,
    /// Usage lines skipped for a missing or unparseable timestamp.
    pub no_timestamp: u64,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawLine<'a> {
    #[serde(rename = "type", borrow)]
    kind: Str<'a>,
    #[serde(borrow)]
    timestamp: Str<'a>,
    #[serde(rename = "sessionId", borrow)]
    session_id: Str<'a>,
    #[serde(rename = "requestId", borrow)]
    request_id: Str<'a>,
    #[serde(rename = "isSidechain")]
    is_sidechain: Flag,
    #[serde(borrow)]
    message: Obj<RawMessage<'a>>,
    #[serde(borrow)]
    data: Obj<RawData<'a>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawData<'a> {
    #[serde(borrow)]
    message: Obj<RawNested<'a>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawNested<'a> {
    #[serde(rename = "type", borrow)]
    kind: Str<'a>,
    #[serde(borrow)]
    timestamp: Str<'a>,
    #[serde(rename = "requestId", borrow)]
    request_id: Str<'a>,
    #[serde(borrow)]
    message: Obj<RawMessage<'a>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawMessage<'a> {
    #[serde(borrow)]
    id: Str<'a>,
    #[serde(borrow)]
    model: Str<'a>,
    #[serde(borrow)]
    usage: Obj<RawUsage<'a>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawUsage<'a> {
    input_tokens: Count,
    output_tokens: Count,
    cache_creation_input_tokens: Count,
    cache_read_input_tokens: Count,
    cache_creation: Obj<RawCacheCreation>,
    #[serde(borrow)]
    speed: Str<'a>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawCacheCreation {
    ephemeral_5m_input_tokens: Option<Count>,
    ephemeral_1h_input_tokens: Option<Count>,
}

impl RawUsage<'_> {
    fn tokens(&self) -> Tokens {
        let (m5, h1) = match &self.cache_creation.0 {
            Some(c)
                if c.ephemeral_5m_input_tokens.is_some()
                    || c.ephemeral_1h_input_tokens.is_some() =>
            {
                (
                    c.ephemeral_5m_input_tokens.map_or(0, |n| n.0),
                    c.ephemeral_1h_input_tokens.map_or(0, |n| n.0),
                )
            }
            _ => (self.cache_creation_input_tokens.0, 0),
        };
        Tokens {
            input: self.input_tokens.0,
            output: self.output_tokens.0,
            cache_creation: m5 + h1,
            cache_creation_5m: m5,
            cache_creation_1h: h1,
            cache_read: self.cache_read_input_tokens.0,
        }
    }
}

/// Per-file grouping.
struct FileGroups<'c> {
    session_id: &'c str,
    source: Source,
    index: FxHashMap<Box<str>, usize>,
    key: String,
    first: usize,
}

impl FileGroups<'_> {
    fn add(&mut self, raw: RawLine<'_>, scan: &mut SessionScan) {
        let top_sidechain = raw.is_sidechain.0;
        let (timestamp, request_id, message, sidechain) = match raw.kind.get() {
            Some("assistant") => (
                raw.timestamp,
                raw.request_id,
                raw.message,
                top_sidechain || self.source != Source::Main,
            ),
            Some("progress") => {
                let Some(nested) = raw.data.0.and_then(|d| d.message.0) else {
                    return;
                };
                if nested.kind.get() != Some("assistant") {
                    return;
                }
                (nested.timestamp, nested.request_id, nested.message, true)
            }
            _ => return,
        };
        let Some(message) = message.0 else { return };
        let Some(usage) = message.usage.0.as_ref() else {
            return;
        };
        let model = message.model.get();
        if model == Some("<synthetic>") {
            return;
        }
        let Some(ts) = timestamp.get().and_then(parse_timestamp_ms) else {
            scan.no_timestamp += 1;
            return;
        };
        let tokens = usage.tokens();
        let source = if raw.kind.get() == Some("progress") {
            Source::Progress
        } else {
            self.source
        };
        let copy = || RequestCopy {
            message_id: message.id.get().map(Into::into),
            request_id: request_id.get().map(Into::into),
            model: model.map(|m| {
                if usage.speed.get() == Some("fast") {
                    format!("{m}-fast").into()
                } else {
                    m.into()
                }
            }),
            tokens,
            timestamp_ms: ts,
            sidechain,
            foreign_session: raw.session_id.get().is_some_and(|s| s != self.session_id),
            source,
        };
        let Some(mid) = message.id.get() else {
            scan.copies.push(copy());
            return;
        };
        self.key.clear();
        self.key.push_str(mid);
        self.key.push('\0');
        self.key.push_str(request_id.get().unwrap_or(""));
        self.key.push(if sidechain { '\u{1}' } else { '\0' });
        if let Some(&i) = self.index.get(self.key.as_str()) {
            let c = &mut scan.copies[self.first + i];
            c.tokens.max_with(&tokens);
            c.timestamp_ms = c.timestamp_ms.min(ts);
            if c.model.is_none() {
                c.model = copy().model;
            }
            return;
        }
        let i = scan.copies.len() - self.first;
        self.index.insert(self.key.as_str().into(), i);
        scan.copies.push(copy());
    }
}

/// Reusable per-thread state for scanning transcripts (parse buffers, the read buffer).
pub struct UsageScanner {
    finder: memmem::Finder<'static>,
    line: Vec<u8>,
    buffers: simd_json::Buffers,
    read_buf: Vec<u8>,
}

impl std::fmt::Debug for UsageScanner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UsageScanner").finish_non_exhaustive()
    }
}

impl Default for UsageScanner {
    fn default() -> Self {
        Self::new()
    }
}

impl UsageScanner {
    /// A scanner with empty buffers.
    pub fn new() -> Self {
        Self {
            finder: memmem::Finder::new(b"\"usage\"").into_owned(),
            line: Vec::new(),
            buffers: simd_json::Buffers::default(),
            read_buf: Vec::new(),
        }
    }

    /// Reads every file of a session (main transcript, then agent files).
    pub fn scan_session(
        &mut self,
        files: &SessionFiles,
        mmap: bool,
    ) -> Result<SessionScan, LoadError> {
        let mut scan = SessionScan::default();
        if let Some(main) = &files.main {
            self.scan_path(main, &files.session_id, Source::Main, mmap, &mut scan)?;
        }
        for a in &files.agents {
            let source = if a.internal {
                Source::InternalAgent
            } else {
                Source::Subagent
            };
            self.scan_path(&a.path, &files.session_id, source, mmap, &mut scan)?;
        }
        Ok(scan)
    }

    fn scan_path(
        &mut self,
        path: &std::path::Path,
        session_id: &str,
        source: Source,
        mmap: bool,
        scan: &mut SessionScan,
    ) -> Result<(), LoadError> {
        let err = |source| LoadError {
            path: path.to_path_buf(),
            source,
        };
        let mode = if mmap {
            InputMode::Mmap
        } else {
            InputMode::Read
        };
        scan.files += 1;
        match open_input(path, mode).map_err(|e| err(e.source))? {
            Input::Mapped(map) => self
                .scan_lines(SliceLines::new(&map), session_id, source, scan)
                .map_err(err),
            Input::Stream(r) => {
                let buf = std::mem::take(&mut self.read_buf);
                let mut lines = ReadLines::with_buffer(r, skein_core::lines::DEFAULT_BLOCK, buf);
                let result = self.scan_lines(&mut lines, session_id, source, scan);
                self.read_buf = lines.into_buffer();
                result.map_err(err)
            }
        }
    }

    /// Scans the lines of one file into `scan`.
    pub fn scan_lines<S: LineSource>(
        &mut self,
        mut lines: S,
        session_id: &str,
        source: Source,
        scan: &mut SessionScan,
    ) -> io::Result<()> {
        let mut groups = FileGroups {
            session_id,
            source,
            index: FxHashMap::default(),
            key: String::new(),
            first: scan.copies.len(),
        };
        let Self {
            finder,
            line,
            buffers,
            ..
        } = self;
        while lines.advance()? {
            let text = lines.line().text;
            if finder.find(text).is_none() {
                continue;
            }
            scan.usage_lines += 1;
            line.clear();
            line.extend_from_slice(text);
            if let Ok(raw) = simd_json::serde::from_slice_with_buffers::<RawLine<'_>>(line, buffers)
            {
                groups.add(raw, scan);
                continue;
            }
            // What simd-json refuses: repair (invalid UTF-8, lone surrogates) and let
            // serde_json decide (it also takes duplicate keys, the last one winning).
            let repaired = skein_core::repair::repair_line(text);
            match serde_json::from_slice::<serde_json::Value>(&repaired) {
                Ok(v) if v.is_object() => match RawLine::deserialize(&v) {
                    Ok(raw) => groups.add(raw, scan),
                    Err(_) => scan.invalid_lines += 1,
                },
                _ => scan.invalid_lines += 1,
            }
        }
        scan.bytes += lines.consumed();
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// Merging and reporting

/// The report's grouping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UsageKind {
    #[default]
    Daily,
    Weekly,
    Monthly,
    Session,
    Model,
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
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UsageOptions {
    pub kind: UsageKind,
    /// Days (after applying `offset`) to keep.
    pub range: DateRange,
    /// Day boundaries.
    pub offset: UtcOffset,
}

/// Model name used when `message.model` is missing.
pub const NO_MODEL: &str = "<unknown>";

struct Slot {
    session: u32,
    copy: RequestCopy,
}

const NONE: u32 = u32::MAX;

/// Is `a` preferred over `b` (both copies of one request)?
fn better(a: &RequestCopy, b: &RequestCopy) -> bool {
    if a.sidechain != b.sidechain {
        return !a.sidechain;
    }
    let (ta, tb) = (a.tokens.total(), b.tokens.total());
    if ta != tb {
        return ta > tb;
    }
    !a.foreign_session && b.foreign_session
}

/// Collects session scans (in session order) and builds the report.
#[derive(Default)]
pub struct UsageBuilder {
    sessions: Vec<(String, String)>,
    slots: Vec<Slot>,
    index: FxHashMap<Box<str>, u32>,
    loose: Vec<(u32, RequestCopy)>,
    key: String,
    stats: ScanStats,
}

impl std::fmt::Debug for UsageBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UsageBuilder")
            .field("sessions", &self.sessions.len())
            .field("slots", &self.slots.len())
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

    /// Like [`UsageBuilder::add`], naming the session by id and project.
    pub fn add_session(&mut self, session_id: &str, project: &str, scan: SessionScan) {
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
        for copy in scan.copies {
            let Some(mid) = copy.message_id.as_deref() else {
                self.loose.push((s, copy));
                continue;
            };
            self.key.clear();
            self.key.push_str(mid);
            self.key.push('\0');
            self.key.push_str(copy.request_id.as_deref().unwrap_or(""));
            if let Some(&i) = self.index.get(self.key.as_str()) {
                self.stats.duplicate_copies += 1;
                let slot = &mut self.slots[i as usize];
                if better(&copy, &slot.copy) {
                    slot.copy = copy;
                    slot.session = s;
                }
                continue;
            }
            let i = self.slots.len() as u32;
            self.index.insert(self.key.as_str().into(), i);
            self.slots.push(Slot { session: s, copy });
        }
    }

    /// Applies the sidechain-replay rule and returns the requests kept, as (session, copy).
    fn requests(&mut self) -> Vec<(u32, RequestCopy)> {
        // Chain the slots of each message id: `heads` holds the latest slot of each id and
        // `next` links each slot to the previous one with the same id.
        let mut heads: FxHashMap<&str, u32> = FxHashMap::default();
        let mut next = vec![NONE; self.slots.len()];
        for (i, slot) in self.slots.iter().enumerate() {
            let mid = slot.copy.message_id.as_deref().unwrap_or("");
            if let Some(head) = heads.insert(mid, i as u32) {
                next[i] = head;
            }
        }
        let mut dropped = vec![false; self.slots.len()];
        for (i, slot) in self.slots.iter().enumerate() {
            let mid = slot.copy.message_id.as_deref().unwrap_or("");
            if next[i] == NONE || heads.get(mid) != Some(&(i as u32)) {
                continue;
            }
            let mut members = Vec::new();
            let mut cur = i as u32;
            while cur != NONE {
                members.push(cur as usize);
                cur = next[cur as usize];
            }
            members.reverse();
            let copy = |m: usize| &self.slots[m].copy;
            if members.iter().any(|&m| !copy(m).sidechain) {
                for &m in &members {
                    dropped[m] = copy(m).sidechain;
                }
            } else {
                let mut best = members[0];
                for &m in &members[1..] {
                    if better(copy(m), copy(best)) {
                        best = m;
                    }
                }
                for &m in &members {
                    dropped[m] = m != best;
                }
            }
        }
        drop(heads);
        let slots = std::mem::take(&mut self.slots);
        self.index = FxHashMap::default();
        let mut out = Vec::with_capacity(slots.len() + self.loose.len());
        for (slot, dropped) in slots.into_iter().zip(dropped) {
            if dropped {
                self.stats.sidechain_replays += 1;
            } else {
                out.push((slot.session, slot.copy));
            }
        }
        out.append(&mut self.loose);
        self.stats.requests = out.len() as u64;
        out
    }

    /// Builds the report.
    pub fn finish(mut self, options: &UsageOptions, pricing: &PricingTable) -> UsageReport {
        let requests = self.requests();
        let mut prices: FxHashMap<Box<str>, Option<(usize, bool)>> = FxHashMap::default();
        let mut unpriced = BTreeSet::new();
        let mut rows: BTreeMap<RowKey, Acc> = BTreeMap::new();
        let mut totals = Acc::default();
        let mut sources: BTreeMap<Source, u64> = BTreeMap::new();
        for (session, copy) in &requests {
            let day = options.offset.day_of(copy.timestamp_ms);
            if options.range.since.is_some_and(|s| day < s)
                || options.range.until.is_some_and(|u| day > u)
            {
                continue;
            }
            let model = copy.model.as_deref().unwrap_or(NO_MODEL);
            let price = *prices.entry(model.into()).or_insert_with(|| {
                pricing.lookup(model).map(|(m, fast)| {
                    let i = pricing
                        .models
                        .iter()
                        .position(|x| std::ptr::eq(x, m))
                        .unwrap_or(0);
                    (i, fast)
                })
            });
            let cost = if let Some((i, fast)) = price {
                pricing.models[i].cost(&copy.tokens, fast)
            } else {
                unpriced.insert(model.to_owned());
                0.0
            };
            let key = match options.kind {
                UsageKind::Daily => RowKey::Text(day.key()),
                UsageKind::Weekly => RowKey::Text(day.week_key()),
                UsageKind::Monthly => RowKey::Text(day.month_key()),
                UsageKind::Session => RowKey::Session(*session),
                UsageKind::Model => RowKey::Text(model.to_owned()),
            };
            rows.entry(key)
                .or_default()
                .add(model, &copy.tokens, cost, copy.timestamp_ms);
            totals.add(model, &copy.tokens, cost, copy.timestamp_ms);
            *sources.entry(copy.source).or_default() += copy.tokens.total();
        }
        let mut out: Vec<UsageRow> = rows
            .into_iter()
            .map(|(key, acc)| {
                let mut row = UsageRow {
                    date: None,
                    week: None,
                    month: None,
                    session_id: None,
                    project: None,
                    model: None,
                    first_timestamp: acc.first_ms.map(format_timestamp_ms),
                    last_timestamp: acc.last_ms.map(format_timestamp_ms),
                    figures: acc.figures(),
                    totals: false,
                };
                match (options.kind, key) {
                    (UsageKind::Daily, RowKey::Text(k)) => row.date = Some(k),
                    (UsageKind::Weekly, RowKey::Text(k)) => row.week = Some(k),
                    (UsageKind::Monthly, RowKey::Text(k)) => row.month = Some(k),
                    (UsageKind::Model, RowKey::Text(k)) => row.model = Some(k),
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
            first_timestamp: totals.first_ms.map(format_timestamp_ms),
            last_timestamp: totals.last_ms.map(format_timestamp_ms),
            figures: totals.figures(),
            unpriced_models: unpriced.into_iter().collect(),
            sources: SourceTokens {
                main: sources.get(&Source::Main).copied().unwrap_or(0),
                subagents: sources.get(&Source::Subagent).copied().unwrap_or(0),
                internal_agents: sources.get(&Source::InternalAgent).copied().unwrap_or(0),
                progress: sources.get(&Source::Progress).copied().unwrap_or(0),
            },
            scan: self.stats,
            totals: true,
        };
        UsageReport {
            rows: out,
            totals: total_row,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum RowKey {
    Text(String),
    Session(u32),
}

#[derive(Default)]
struct Acc {
    messages: u64,
    tokens: Tokens,
    cost: f64,
    first_ms: Option<i64>,
    last_ms: Option<i64>,
    models: BTreeMap<String, (u64, Tokens, f64)>,
}

impl Acc {
    fn add(&mut self, model: &str, t: &Tokens, cost: f64, ts: i64) {
        self.messages += 1;
        self.tokens.add(t);
        self.cost += cost;
        self.first_ms = Some(self.first_ms.map_or(ts, |f| f.min(ts)));
        self.last_ms = Some(self.last_ms.map_or(ts, |l| l.max(ts)));
        let m = match self.models.get_mut(model) {
            Some(m) => m,
            None => self.models.entry(model.to_owned()).or_default(),
        };
        m.0 += 1;
        m.1.add(t);
        m.2 += cost;
    }

    fn figures(&self) -> Figures {
        Figures {
            messages: self.messages,
            input_tokens: self.tokens.input,
            output_tokens: self.tokens.output,
            cache_creation_input_tokens: self.tokens.cache_creation,
            cache_read_input_tokens: self.tokens.cache_read,
            total_tokens: self.tokens.total(),
            cost_usd: round_usd(self.cost),
            models: self.models.keys().cloned().collect(),
            breakdown: self
                .models
                .iter()
                .map(|(model, (messages, t, cost))| ModelUsage {
                    model: model.clone(),
                    messages: *messages,
                    input_tokens: t.input,
                    output_tokens: t.output,
                    cache_creation_input_tokens: t.cache_creation,
                    cache_read_input_tokens: t.cache_read,
                    total_tokens: t.total(),
                    cost_usd: round_usd(*cost),
                })
                .collect(),
        }
    }
}

/// Dollars rounded to micro-dollars (sums of floating-point costs print cleanly).
pub fn round_usd(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// One model's share of a row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelUsage {
    pub model: String,
    pub messages: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_creation_input_tokens: u64,
    pub cache_read_input_tokens: u64,
    pub total_tokens: u64,
    pub cost_usd: f64,
}

/// The figures every row has.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figures {
    /// Requests (deduplicated API messages).
    pub messages: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_creation_input_tokens: u64,
    pub cache_read_input_tokens: u64,
    pub total_tokens: u64,
    pub cost_usd: f64,
    /// Models used, sorted.
    pub models: Vec<String>,
    /// Per-model figures, sorted by model.
    pub breakdown: Vec<ModelUsage>,
}

/// One row: a day, week, month, session or model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UsageRow {
    /// `daily`: `YYYY-MM-DD`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// `weekly`: the Monday starting the week, `YYYY-MM-DD`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub week: Option<String>,
    /// `monthly`: `YYYY-MM`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub month: Option<String>,
    /// `session`: the session id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// `session`: the project directory's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// `model`: the model (with `-fast` for fast mode).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    pub first_timestamp: Option<String>,
    pub last_timestamp: Option<String>,
    #[serde(flatten)]
    pub figures: Figures,
    /// Always `false` (the totals line has `true`).
    pub totals: bool,
}

/// Tokens (after deduplication) by where the kept copy was read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SourceTokens {
    pub main: u64,
    pub subagents: u64,
    pub internal_agents: u64,
    pub progress: u64,
}

/// The last line: figures over all rows, plus what was read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TotalsRow {
    /// The report kind (`daily`, …).
    pub report: &'static str,
    pub first_timestamp: Option<String>,
    pub last_timestamp: Option<String>,
    #[serde(flatten)]
    pub figures: Figures,
    /// Models without a price (their cost is counted as 0).
    pub unpriced_models: Vec<String>,
    pub sources: SourceTokens,
    pub scan: ScanStats,
    /// Always `true`.
    pub totals: bool,
}

/// The report: rows in order, then the totals.
#[derive(Debug, Clone, PartialEq)]
pub struct UsageReport {
    pub rows: Vec<UsageRow>,
    pub totals: TotalsRow,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_parse_and_format() {
        let ms = parse_timestamp_ms("2026-05-01T10:00:02.123Z").expect("ts");
        assert_eq!(format_timestamp_ms(ms), "2026-05-01T10:00:02.123Z");
        assert_eq!(
            parse_timestamp_ms("2026-05-01T12:00:02.123456+02:00"),
            Some(ms)
        );
        assert_eq!(parse_timestamp_ms("2026-05-01T10:00:02.1Z"), Some(ms - 23));
        assert_eq!(
            parse_timestamp_ms("2026-05-01"),
            parse_timestamp_ms("2026-05-01T00:00:00Z")
        );
        for bad in [
            "",
            "x",
            "2026-05-01T1",
            "2026-05-01T10:00:02Zx",
            "2026-13-01T00:00Z",
        ] {
            assert_eq!(parse_timestamp_ms(bad), None, "{bad}");
        }
        assert_eq!(format_timestamp_ms(-1), "1969-12-31T23:59:59.999Z");
    }

    #[test]
    fn offsets() {
        assert_eq!(UtcOffset::parse("UTC"), Ok(UtcOffset::UTC));
        assert_eq!(UtcOffset::parse("+09:00").map(|o| o.minutes), Ok(540));
        assert_eq!(UtcOffset::parse("-0530").map(|o| o.minutes), Ok(-330));
        assert_eq!(UtcOffset::parse("UTC+1").ok(), None);
        assert_eq!(UtcOffset::parse("GMT-05").map(|o| o.minutes), Ok(-300));
        assert!(UtcOffset::parse("Europe/Paris").is_err());
        let ms = parse_timestamp_ms("2026-05-31T23:30:00Z").expect("ts");
        assert_eq!(UtcOffset::UTC.day_of(ms).key(), "2026-05-31");
        let east = UtcOffset::parse("+01:00").expect("tz");
        assert_eq!(east.day_of(ms).key(), "2026-06-01");
    }

    #[test]
    fn scan_reads_odd_lines_leniently() {
        let text = concat!(
            // Ordinary, then the same request again with a bigger output (streaming).
            r#"{"type":"assistant","timestamp":"2026-01-01T00:00:00Z","requestId":"r","message":{"id":"m","model":"claude-opus-4-7","usage":{"input_tokens":1,"output_tokens":2}}}"#,
            "\n",
            r#"{"type":"assistant","timestamp":"2026-01-01T00:00:01Z","requestId":"r","message":{"id":"m","model":"claude-opus-4-7","usage":{"input_tokens":1,"output_tokens":9,"speed":"fast"}}}"#,
            "\n",
            // Duplicate keys (serde_json fallback, last wins) and a lone surrogate (repaired).
            r#"{"type":"user","type":"assistant","timestamp":"2026-01-01T00:00:02Z","message":{"id":"m2","content":[{"type":"text","text":"\ud83d"}],"usage":{"input_tokens":3,"output_tokens":4.7,"cache_read_input_tokens":null,"cache_creation_input_tokens":5,"cache_creation":{"ephemeral_1h_input_tokens":6}}}}"#,
            "\n",
            // Not JSON, but mentions usage.
            "{\"usage\": oops\n",
            // No usage mention: never parsed.
            "not json at all\n",
            // Usage that is not an object, and a non-assistant record with usage.
            r#"{"type":"assistant","timestamp":"2026-01-01T00:00:03Z","message":{"id":"m3","usage":7}}"#,
            "\n",
            r#"{"type":"system","timestamp":"2026-01-01T00:00:03Z","message":{"id":"m4","usage":{"input_tokens":100}}}"#,
        );
        let mut scan = SessionScan::default();
        UsageScanner::new()
            .scan_lines(
                SliceLines::new(text.as_bytes()),
                "s",
                Source::Main,
                &mut scan,
            )
            .expect("in memory");
        assert_eq!(scan.usage_lines, 6);
        assert_eq!(scan.invalid_lines, 1);
        assert_eq!(scan.copies.len(), 2);
        let a = &scan.copies[0];
        assert_eq!((a.tokens.input, a.tokens.output), (1, 9));
        assert_eq!(
            a.model.as_deref(),
            Some("claude-opus-4-7"),
            "first line's model"
        );
        assert_eq!(
            a.timestamp_ms,
            parse_timestamp_ms("2026-01-01T00:00:00Z").expect("ts")
        );
        let b = &scan.copies[1];
        assert_eq!(b.message_id.as_deref(), Some("m2"));
        assert_eq!(b.model, None);
        assert_eq!(
            (b.tokens.input, b.tokens.output, b.tokens.cache_read),
            (3, 4, 0)
        );
        // The breakdown wins over cache_creation_input_tokens when present.
        assert_eq!(
            (
                b.tokens.cache_creation,
                b.tokens.cache_creation_5m,
                b.tokens.cache_creation_1h
            ),
            (6, 0, 6)
        );
    }

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
