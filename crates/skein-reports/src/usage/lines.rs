//! The lines of a file that mention `"usage"`: a line source's lines each searched, or a
//! stream searched once over its bytes ([`ReadLines::advance_to`], what `skein usage` reads a
//! file from disk with); and the numbers of a stream's skipped lines, found again from their
//! offsets (the one search counts no lines).

use std::io;

use memchr::memmem;
use skein_core::{Line, LineSource, ReadLines};
use skein_store::{Input, InputMode};

use super::scan::SkippedLine;

/// The lines of a file that mention [`super::USAGE_MARK`], one after the other.
pub(super) trait UsageLines {
    fn next_usage(&mut self, finder: &memmem::Finder<'_>) -> io::Result<bool>;
    fn line(&self) -> Line<'_>;
    fn consumed(&self) -> u64;
}

/// Any line source, each of its lines searched for the mark (the lines keep their numbers).
pub(super) struct EveryLine<S>(pub(super) S);

impl<S: LineSource> UsageLines for EveryLine<S> {
    fn next_usage(&mut self, finder: &memmem::Finder<'_>) -> io::Result<bool> {
        while self.0.advance()? {
            if finder.find(self.0.line().text).is_some() {
                return Ok(true);
            }
        }
        Ok(false)
    }
    fn line(&self) -> Line<'_> {
        self.0.line()
    }
    fn consumed(&self) -> u64 {
        self.0.consumed()
    }
}

/// A stream: one search for the mark over its bytes ([`ReadLines::advance_to`]); the lines
/// are not numbered ([`number_skipped`] numbers the few a warning names).
impl<R: std::io::Read> UsageLines for &mut ReadLines<R> {
    fn next_usage(&mut self, finder: &memmem::Finder<'_>) -> io::Result<bool> {
        self.advance_to(finder)
    }
    fn line(&self) -> Line<'_> {
        LineSource::line(*self)
    }
    fn consumed(&self) -> u64 {
        LineSource::consumed(*self)
    }
}

/// Gives the skipped lines of a file read with [`ReadLines::advance_to`] (which counts no
/// lines) their numbers, from their offsets: the file is read again, up to the last of
/// them (read with `read_buf`). Skipped lines are rare (20 in the bench tree's 4,300 files), so this costs
/// nothing in the common case. A line no longer at its offset (the file was rewritten
/// since) keeps the number 0.
pub(super) fn number_skipped(
    path: &std::path::Path,
    skipped: &mut [SkippedLine],
    read_buf: &mut Vec<u8>,
) -> io::Result<()> {
    let Some(last) = skipped.last().map(|s| s.offset) else {
        return Ok(());
    };
    let Input::Stream(r) = skein_layout::open(path, InputMode::Read).map_err(|e| e.source)? else {
        return Ok(());
    };
    let buf = std::mem::take(read_buf);
    let mut lines = ReadLines::with_buffer(r, skein_core::lines::DEFAULT_BLOCK, buf);
    let mut next = skipped.iter_mut().peekable();
    let result = loop {
        match lines.advance() {
            Ok(true) => {}
            Ok(false) => break Ok(()),
            Err(e) => break Err(e),
        }
        let l = lines.line();
        while let Some(s) = next.next_if(|s| s.offset <= l.offset) {
            if s.offset == l.offset {
                s.line = l.number;
            }
        }
        if l.offset >= last {
            break Ok(());
        }
    };
    *read_buf = lines.into_buffer();
    result
}
