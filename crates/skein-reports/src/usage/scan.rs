//! Scanning: one session's files read line by line; lines mentioning `"usage"` parsed into
//! per-file request copies.

use std::io;

use memchr::memmem;
use skein_core::ShortStr;
use skein_core::intern::Interner;
use skein_core::{LineSource, Parser, ReadLines, SliceLines};
use skein_layout::SessionFiles;
use skein_store::{Input, InputMode};

use super::Tokens;
use super::lines::{EveryLine, UsageLines, number_skipped};
use super::raw::{RawLine, SKIM};
use crate::session::LoadError;
use skein_core::time::parse_ms;

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
    /// The ids and the model are held inline ([`ShortStr`]): a report makes one copy per
    /// request on a worker and frees it on the main thread.
    pub message_id: Option<ShortStr>,
    pub request_id: Option<ShortStr>,
    /// `message.model`, with `-fast` appended for fast-mode requests.
    pub model: Option<ShortStr>,
    pub tokens: Tokens,
    /// The earliest timestamp of the group's lines.
    pub timestamp_ms: i64,
    pub sidechain: bool,
    /// The records' `sessionId` differs from the session's id (a resume copy).
    pub foreign_session: bool,
    pub source: Source,
    /// The agent transcript it was read from (`None` in the main transcript; for a
    /// `progress` copy, `data.agentId`).
    pub agent_id: Option<ShortStr>,
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
    /// Where the skipped lines are (the first [`SKIPPED_KEPT`] of each file), so that a
    /// warning can name them.
    pub skipped: Vec<SkippedLine>,
}

/// What a line must contain to be parsed: every line with usage mentions it, and the scan
/// parses no other (most lines of a transcript are not parsed at all).
pub const USAGE_MARK: &[u8] = b"\"usage\"";

/// How many skipped lines a file keeps the location of (the counts above count them all).
pub const SKIPPED_KEPT: usize = 1000;

impl SessionScan {
    /// Adds the scan of the session's next file: a session's scan is its files' scans in
    /// order ([`ScanJob::of_session`]), each file's groups its own.
    pub fn append(&mut self, next: SessionScan) {
        // Most sessions are one file: their copies are moved, not copied into a new vector.
        if self.copies.is_empty() {
            self.copies = next.copies;
        } else {
            self.copies.extend(next.copies);
        }
        self.files += next.files;
        self.bytes += next.bytes;
        self.usage_lines += next.usage_lines;
        self.invalid_lines += next.invalid_lines;
        self.no_timestamp += next.no_timestamp;
        self.skipped.extend(next.skipped);
    }
}

/// One transcript to scan, with what its scan needs of the session it belongs to. A file the
/// listing shows ([`ScanJob::of_source`]) and the same file in its grouped session
/// ([`ScanJob::of_session`]) make equal jobs, so a scan started before the listing ended
/// answers for the session. Paths compare by their bytes (cheaper than `Path`'s component
/// walk, which showed in the profile): two spellings of one file are two jobs, scanned twice.
#[derive(Debug, Clone)]
pub struct ScanJob {
    pub path: std::path::PathBuf,
    /// The session's id (records with another `sessionId` are resume copies).
    pub session_id: String,
    pub source: Source,
    /// The agent's id, for an agent transcript.
    pub agent_id: Option<String>,
}

impl PartialEq for ScanJob {
    fn eq(&self, other: &Self) -> bool {
        self.path.as_os_str() == other.path.as_os_str()
            && self.session_id == other.session_id
            && self.source == other.source
            && self.agent_id == other.agent_id
    }
}

impl Eq for ScanJob {}

impl std::hash::Hash for ScanJob {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.path.as_os_str().hash(state);
        self.session_id.hash(state);
        self.source.hash(state);
        self.agent_id.hash(state);
    }
}

impl ScanJob {
    /// A session's files in the order they are scanned: the main transcript, then its agents.
    pub fn of_session(files: &SessionFiles) -> Vec<ScanJob> {
        let main = files.main.iter().map(|m| ScanJob {
            path: m.clone(),
            session_id: files.session_id.clone(),
            source: Source::Main,
            agent_id: None,
        });
        let agents = files.agents.iter().map(|a| ScanJob {
            path: a.path.clone(),
            session_id: files.session_id.clone(),
            source: agent_source(a.internal),
            agent_id: Some(a.agent_id.clone()),
        });
        main.chain(agents).collect()
    }

    /// The job for one source of a listing (`skein_layout::discover_with`).
    pub fn of_source(s: &skein_layout::Source) -> ScanJob {
        let (source, agent_id) = match &s.role {
            skein_layout::Role::Main => (Source::Main, None),
            skein_layout::Role::Subagent(a) => (agent_source(a.internal), Some(a.agent_id.clone())),
        };
        ScanJob {
            path: s.path.clone(),
            session_id: s.session_id.clone(),
            source,
            agent_id,
        }
    }
}

fn agent_source(internal: bool) -> Source {
    if internal {
        Source::InternalAgent
    } else {
        Source::Subagent
    }
}

/// A usage line that was not counted, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedLine {
    /// The file (`None` when the lines were not read from a named file).
    pub path: Option<std::path::PathBuf>,
    /// 1-based line number (0 when a file read in one search, read again to number its
    /// skipped lines, no longer had the line at its offset or could not be read: it changed
    /// or went away meanwhile).
    pub line: u64,
    /// Byte offset of the line's first byte.
    pub offset: u64,
    /// `true`: not a JSON object; `false`: no parseable timestamp.
    pub invalid: bool,
}

/// Per-file grouping.
struct FileGroups<'c> {
    session_id: &'c str,
    source: Source,
    agent_id: Option<&'c str>,
    /// The file's group keys (cleared for each file; an arena, not a string per key).
    keys: &'c mut Interner,
    /// Each key's copy in `copies`, by the key's number.
    at: &'c mut Vec<usize>,
    /// The file's copies, in order of first line: moved into the session's scan at the end
    /// of the file in one allocation of the right size (grown copy by copy in the scan, the
    /// vector's reallocations were 1.6 % of the report's CPU on the bench tree).
    copies: &'c mut Vec<RequestCopy>,
    key: String,
}

impl FileGroups<'_> {
    fn add(&mut self, raw: RawLine<'_>, scan: &mut SessionScan) {
        let top_sidechain = raw.is_sidechain.0;
        let (timestamp, request_id, message, sidechain, source, agent) = match raw.kind.get() {
            Some("assistant") => (
                raw.timestamp,
                raw.request_id,
                raw.message,
                top_sidechain || self.source != Source::Main,
                self.source,
                self.agent_id.map(Into::into),
            ),
            Some("progress") => {
                let Some(data) = raw.data.0 else { return };
                let agent = data.agent_id.get().map(Into::into);
                let Some(nested) = data.message.0 else {
                    return;
                };
                if nested.kind.get() != Some("assistant") {
                    return;
                }
                (
                    nested.timestamp,
                    nested.request_id,
                    nested.message,
                    true,
                    Source::Progress,
                    agent,
                )
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
        let Some(ts) = timestamp.get().and_then(parse_ms) else {
            scan.no_timestamp += 1;
            return;
        };
        let tokens = usage.tokens();
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
            agent_id: agent.clone(),
        };
        let Some(mid) = message.id.get() else {
            self.copies.push(copy());
            return;
        };
        self.key.clear();
        self.key.push_str(mid);
        self.key.push('\0');
        self.key.push_str(request_id.get().unwrap_or(""));
        self.key.push(if sidechain { '\u{1}' } else { '\0' });
        let (n, new) = self.keys.insert(&self.key);
        if !new {
            let c = &mut self.copies[self.at[n as usize]];
            c.tokens.max_with(&tokens);
            c.timestamp_ms = c.timestamp_ms.min(ts);
            if c.model.is_none() {
                c.model = copy().model;
            }
            return;
        }
        self.at.push(self.copies.len());
        self.copies.push(copy());
    }
}

/// Reusable per-thread state for scanning transcripts (parse buffers, the read buffer).
pub struct UsageScanner {
    finder: memmem::Finder<'static>,
    parser: Parser,
    /// Usage lines read through [`skein_core::source`] ([`super::raw`]: off their index, or
    /// their skimmed tape); false: every one parsed whole by serde ([`UsageScanner::whole`]).
    read: bool,
    read_buf: Vec<u8>,
    /// A file's group keys and their copies ([`FileGroups`]), reused from file to file.
    keys: Interner,
    at: Vec<usize>,
    copies: Vec<RequestCopy>,
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
    /// A scanner with empty buffers. It reads a usage line off its structural index where
    /// the index vouches for it, else off its skimmed tape (`Parser::parse_read`).
    pub fn new() -> Self {
        Self {
            finder: memmem::Finder::new(USAGE_MARK).into_owned(),
            parser: Parser::new(),
            read: true,
            read_buf: Vec::new(),
            keys: Interner::new(),
            at: Vec::new(),
            copies: Vec::new(),
        }
    }

    /// A scanner that parses every usage line whole with serde: what the index and the
    /// skimmed tape are tested and measured against.
    #[must_use]
    pub fn whole() -> Self {
        Self {
            read: false,
            ..Self::new()
        }
    }

    /// A scanner that reads usage lines off their skimmed tape only, never off their index
    /// (`Parser::set_index`): the same scan, what the index is tested and measured against
    /// (`benches/benches/usage.rs`).
    #[must_use]
    pub fn tape_only() -> Self {
        let mut scanner = Self::new();
        scanner.parser.set_index(false);
        scanner
    }

    /// Reads every file of a session (main transcript, then agent files).
    pub fn scan_session(
        &mut self,
        files: &SessionFiles,
        mmap: bool,
    ) -> Result<SessionScan, LoadError> {
        let mut scan = SessionScan::default();
        for job in ScanJob::of_session(files) {
            self.scan_job_into(&job, mmap, &mut scan)?;
        }
        Ok(scan)
    }

    /// Reads one file of a session ([`ScanJob`]): a session's scan is its files' scans,
    /// appended in [`ScanJob::of_session`] order ([`SessionScan::append`]).
    pub fn scan_file(&mut self, job: &ScanJob, mmap: bool) -> Result<SessionScan, LoadError> {
        let mut scan = SessionScan::default();
        self.scan_job_into(job, mmap, &mut scan)?;
        Ok(scan)
    }

    fn scan_job_into(
        &mut self,
        job: &ScanJob,
        mmap: bool,
        scan: &mut SessionScan,
    ) -> Result<(), LoadError> {
        let agent = job.agent_id.as_deref();
        self.scan_path(&job.path, &job.session_id, job.source, agent, mmap, scan)
    }

    fn scan_path(
        &mut self,
        path: &std::path::Path,
        session_id: &str,
        source: Source,
        agent_id: Option<&str>,
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
        let first_skipped = scan.skipped.len();
        let result = match skein_layout::open(path, mode).map_err(|e| err(e.source))? {
            Input::Mapped(map) => self
                .scan_agent_lines(SliceLines::new(&map), session_id, source, agent_id, scan)
                .map_err(err),
            Input::Stream(r) => {
                let buf = std::mem::take(&mut self.read_buf);
                let mut lines = ReadLines::with_buffer(r, skein_core::lines::DEFAULT_BLOCK, buf);
                let result = self.scan_usage_lines(&mut lines, session_id, source, agent_id, scan);
                self.read_buf = lines.into_buffer();
                if result.is_ok() {
                    let skipped = &mut scan.skipped[first_skipped..];
                    number_skipped(path, skipped, &mut self.read_buf);
                }
                result.map_err(err)
            }
        };
        for s in &mut scan.skipped[first_skipped..] {
            s.path = Some(path.to_path_buf());
        }
        result
    }

    /// Scans the lines of one file into `scan`.
    pub fn scan_lines<S: LineSource>(
        &mut self,
        lines: S,
        session_id: &str,
        source: Source,
        scan: &mut SessionScan,
    ) -> io::Result<()> {
        self.scan_agent_lines(lines, session_id, source, None, scan)
    }

    /// Like [`UsageScanner::scan_lines`], for the transcript of agent `agent_id`.
    pub fn scan_agent_lines<S: LineSource>(
        &mut self,
        lines: S,
        session_id: &str,
        source: Source,
        agent_id: Option<&str>,
        scan: &mut SessionScan,
    ) -> io::Result<()> {
        self.scan_usage_lines(EveryLine(lines), session_id, source, agent_id, scan)
    }

    fn scan_usage_lines<U: UsageLines>(
        &mut self,
        mut lines: U,
        session_id: &str,
        source: Source,
        agent_id: Option<&str>,
        scan: &mut SessionScan,
    ) -> io::Result<()> {
        let Self {
            finder,
            parser,
            read,
            keys,
            at,
            copies,
            ..
        } = self;
        keys.clear();
        at.clear();
        copies.clear();
        let mut groups = FileGroups {
            session_id,
            source,
            agent_id,
            keys,
            at,
            copies,
            key: String::new(),
        };
        let kept = scan.skipped.len();
        while lines.next_usage(finder)? {
            let l = lines.line();
            let (text, number, offset) = (l.text, l.number, l.offset);
            scan.usage_lines += 1;
            let (invalid, no_ts) = (scan.invalid_lines, scan.no_timestamp);
            // The fields read off the line's index, or its skimmed tape; where simd-json refuses
            // the line or serde would (a key read written twice), it is repaired and judged as
            // every line is (`Parser::parse_read`).
            let parsed = if *read {
                parser.parse_read::<RawLine<'_>>(text, Some(SKIM))
            } else {
                parser.parse_into::<RawLine<'_>>(text, None)
            };
            match parsed {
                Ok((raw, _)) => groups.add(raw, scan),
                Err(_) => scan.invalid_lines += 1,
            }
            let skipped = scan.invalid_lines > invalid || scan.no_timestamp > no_ts;
            if skipped && scan.skipped.len() - kept < SKIPPED_KEPT {
                scan.skipped.push(SkippedLine {
                    path: None,
                    line: number,
                    offset,
                    invalid: scan.invalid_lines > invalid,
                });
            }
        }
        scan.bytes += lines.consumed();
        scan.copies.reserve_exact(groups.copies.len());
        scan.copies.append(groups.copies);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `text` scanned line by line as session `s`'s main transcript.
    fn scanned(scanner: &mut UsageScanner, text: &str) -> SessionScan {
        let mut scan = SessionScan::default();
        scanner
            .scan_lines(
                SliceLines::new(text.as_bytes()),
                "s",
                Source::Main,
                &mut scan,
            )
            .expect("in memory");
        scan
    }

    /// A usage line of request `n` at minute `n`, in session `session`.
    fn usage_line(session: &str, n: u32) -> String {
        format!(
            r#"{{"type":"assistant","sessionId":"{session}","timestamp":"2026-01-01T00:{n:02}:00Z","requestId":"r{n}","message":{{"id":"m{n}","model":"claude-opus-4-7","usage":{{"input_tokens":{n},"output_tokens":1}}}}}}"#
        ) + "\n"
    }

    /// A session's scan is its files' scans appended in `ScanJob::of_session` order, and the
    /// job of every source a listing shows is one of its session's jobs: what lets `skein
    /// usage` scan files before the listing ends.
    #[test]
    #[allow(
        clippy::disallowed_methods,
        reason = "the test writes the transcript tree it scans"
    )]
    fn a_session_scan_is_its_file_scans_and_listed_sources_are_its_jobs() {
        let d = tempfile::tempdir().expect("tempdir");
        let proj = d.path().join("-home-x");
        let write = |rel: &str, body: String| {
            let p = proj.join(rel);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(p, body).expect("write");
        };
        // Main: two requests, a line that is not JSON and one without a timestamp.
        write(
            "s1.jsonl",
            usage_line("s1", 1)
                + &usage_line("s1", 2)
                + "{\"usage\": oops\n"
                + r#"{"type":"assistant","message":{"id":"m9","usage":{"input_tokens":1}}}"#
                + "\n",
        );
        write("s1/subagents/agent-a1.jsonl", usage_line("s1", 3));
        write("s1/subagents/agent-acompact-9f.jsonl", usage_line("s1", 4));
        // A legacy sibling agent (its session from the record inside) and a resume copy.
        write(
            "agent-old1.jsonl",
            usage_line("s1", 5) + &usage_line("s0", 6),
        );
        write("s2.jsonl", usage_line("s2", 7));
        let roots = [d.path().to_path_buf()];
        let mut shown = Vec::new();
        let found = skein_layout::discover_with(&roots, &mut |s| shown.push(ScanJob::of_source(s)));
        assert_eq!(found.sessions.len(), 2);
        let jobs: Vec<ScanJob> = found
            .sessions
            .iter()
            .flat_map(ScanJob::of_session)
            .collect();
        assert_eq!(jobs.len(), 5);
        for job in &shown {
            assert!(jobs.contains(job), "{job:?} is no session's job");
        }
        assert_eq!(shown.len(), jobs.len());
        let mut scanner = UsageScanner::new();
        for s in &found.sessions {
            let whole = scanner.scan_session(s, false).expect("scan");
            let mut appended = SessionScan::default();
            for job in ScanJob::of_session(s) {
                appended.append(scanner.scan_file(&job, false).expect("scan"));
            }
            assert_eq!(appended, whole);
        }
        let s1 = scanner
            .scan_session(&found.sessions[0], false)
            .expect("scan");
        assert_eq!((s1.files, s1.invalid_lines, s1.no_timestamp), (4, 1, 1));
        let sources: Vec<Source> = s1.copies.iter().map(|c| c.source).collect();
        assert_eq!(
            sources,
            [
                Source::Main,
                Source::Main,
                // Agents in their place in the project: the legacy sibling file first.
                Source::Subagent,
                Source::Subagent,
                Source::Subagent,
                Source::InternalAgent
            ]
        );
        assert!(
            s1.copies[3].foreign_session,
            "the s0 record in s1's legacy agent"
        );
        assert!(s1.skipped.iter().all(|k| k.path.is_some()));
    }

    /// A file read from disk (its usage lines found by one search over its bytes, no line
    /// counted) gives the scan the same copies and counts as its lines read one by one, and
    /// its skipped lines the same numbers, found again from their offsets.
    #[test]
    #[allow(
        clippy::disallowed_methods,
        reason = "the test writes the transcript it scans"
    )]
    fn a_file_read_from_disk_numbers_its_skipped_lines_as_a_line_reader_does() {
        let no_ts = r#"{"type":"assistant","message":{"id":"m9","usage":{"input_tokens":1}}}"#;
        let text = [
            "\u{feff}",
            &usage_line("s", 1),
            "not json, no mark\r\n",
            "{\"usage\": oops\r\n",
            "\n",
            &usage_line("s", 2),
            no_ts,
            "\n",
            &"x".repeat(300_000),
            "\n{\"usage\": torn",
        ]
        .concat();
        let d = tempfile::tempdir().expect("tempdir");
        let path = d.path().join("s.jsonl");
        std::fs::write(&path, &text).expect("write");
        let mut scanner = UsageScanner::new();
        let job = ScanJob {
            path: path.clone(),
            session_id: "s".into(),
            source: Source::Main,
            agent_id: None,
        };
        let from_disk = scanner.scan_file(&job, false).expect("scan");
        let by_line = scanned(&mut scanner, &text);
        let located = |scan: &SessionScan| -> Vec<(u64, u64, bool)> {
            scan.skipped
                .iter()
                .map(|k| (k.line, k.offset, k.invalid))
                .collect()
        };
        assert_eq!(located(&from_disk), located(&by_line));
        assert_eq!(
            located(&from_disk).iter().map(|l| l.0).collect::<Vec<_>>(),
            [3, 6, 8]
        );
        assert_eq!(from_disk.copies, by_line.copies);
        assert_eq!(
            (
                from_disk.usage_lines,
                from_disk.invalid_lines,
                from_disk.no_timestamp
            ),
            (5, 2, 1)
        );
        assert_eq!(from_disk.bytes, text.len() as u64);
        assert!(
            from_disk
                .skipped
                .iter()
                .all(|k| k.path.as_deref() == Some(path.as_path()))
        );
    }

    /// Appending a file's scan to an empty session scan takes its copies as they are (most
    /// sessions are one file: no copy of the vector on the report's main thread), and a later
    /// file's copies follow them.
    #[test]
    fn the_first_file_scan_appended_is_moved_and_the_next_follow() {
        let mut scanner = UsageScanner::new();
        let mut scan_of = |text: String| scanned(&mut scanner, &text);
        let first = scan_of(usage_line("s", 1) + &usage_line("s", 2));
        let next = scan_of(usage_line("s", 3));
        let (first_ptr, next_len) = (first.copies.as_ptr(), next.copies.len());
        let mut session = SessionScan::default();
        session.append(first);
        assert_eq!(session.copies.as_ptr(), first_ptr, "moved, not copied");
        session.append(next);
        let ids: Vec<Option<&str>> = session
            .copies
            .iter()
            .map(|c| c.request_id.as_deref())
            .collect();
        assert_eq!(ids, [Some("r1"), Some("r2"), Some("r3")]);
        assert_eq!((session.usage_lines, next_len), (3, 1));
    }

    /// A file's lines of one request make one copy, found by its key even when copies without
    /// `message.id` (each its own) come between; the next file scanned by the same scanner
    /// starts its groups afresh.
    #[test]
    fn groups_are_per_file_and_skip_copies_without_an_id() {
        let line = |id: Option<&str>, rid: &str, output: u32| {
            let id = id.map_or(String::new(), |id| format!(r#""id":"{id}","#));
            format!(
                r#"{{"type":"assistant","timestamp":"2026-01-01T00:00:0{output}Z","requestId":"{rid}","message":{{{id}"model":"m","usage":{{"input_tokens":1,"output_tokens":{output}}}}}}}"#
            ) + "\n"
        };
        let first = [
            line(None, "r0", 1),
            line(Some("a"), "ra", 2),
            line(None, "r1", 3),
            line(Some("b"), "rb", 4),
            line(Some("a"), "ra", 5),
            line(Some("b"), "rb", 6),
        ]
        .concat();
        let mut scanner = UsageScanner::new();
        let mut scan = SessionScan::default();
        let mut read = |text: &str, scan: &mut SessionScan| {
            scanner
                .scan_lines(SliceLines::new(text.as_bytes()), "s", Source::Main, scan)
                .expect("in memory");
        };
        read(&first, &mut scan);
        let outputs = |scan: &SessionScan| -> Vec<(Option<String>, u64)> {
            scan.copies
                .iter()
                .map(|c| (c.message_id.as_deref().map(Into::into), c.tokens.output))
                .collect()
        };
        let id = |s: &str| Some(s.to_owned());
        assert_eq!(
            outputs(&scan),
            [(None, 1), (id("a"), 5), (None, 3), (id("b"), 6)]
        );
        // The same request in the next file is that file's own copy.
        read(&line(Some("a"), "ra", 7), &mut scan);
        assert_eq!(
            outputs(&scan),
            [
                (None, 1),
                (id("a"), 5),
                (None, 3),
                (id("b"), 6),
                (id("a"), 7)
            ]
        );
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
        let scan = scanned(&mut UsageScanner::new(), text);
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
            parse_ms("2026-01-01T00:00:00Z").expect("ts")
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
}
