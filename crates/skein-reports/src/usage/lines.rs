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
/// lines) their numbers, from their offsets: the file is read again with `read_buf`, up to
/// the last of them. Skipped lines are rare (20 in the bench tree's 4,300 files), so this
/// costs nothing in the common case. A line no longer at its offset, or in a file that can no
/// longer be read (it changed or went away since the scan), keeps the number 0: the scan's
/// counts stand either way.
pub(super) fn number_skipped(
    path: &std::path::Path,
    skipped: &mut [SkippedLine],
    read_buf: &mut Vec<u8>,
) {
    let Some(last) = skipped.last().map(|s| s.offset) else {
        return;
    };
    let Ok(Input::Stream(r)) = skein_layout::open(path, InputMode::Read) else {
        return;
    };
    let buf = std::mem::take(read_buf);
    let mut lines = ReadLines::with_buffer(r, skein_core::lines::DEFAULT_BLOCK, buf);
    let mut next = skipped.iter_mut().peekable();
    while let Ok(true) = lines.advance() {
        let l = lines.line();
        while let Some(s) = next.next_if(|s| s.offset <= l.offset) {
            if s.offset == l.offset {
                s.line = l.number;
            }
        }
        if l.offset >= last {
            break;
        }
    }
    *read_buf = lines.into_buffer();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(offset: u64) -> SkippedLine {
        SkippedLine {
            path: None,
            line: 0,
            offset,
            invalid: true,
        }
    }

    /// A line found at its offset gets its number; an offset that starts no line (the file
    /// changed since the scan), or a file that went away, leaves 0, and nothing fails.
    #[test]
    #[allow(
        clippy::disallowed_methods,
        reason = "the test writes the file it numbers"
    )]
    fn skipped_lines_are_numbered_from_their_offsets_or_left_at_zero() {
        let d = tempfile::tempdir().expect("tempdir");
        let path = d.path().join("t.jsonl");
        std::fs::write(&path, "a\r\nbb\n\nccc").expect("write");
        let mut buf = Vec::new();
        let mut skipped = [at(3), at(4), at(7), at(8)];
        number_skipped(&path, &mut skipped, &mut buf);
        let numbers: Vec<u64> = skipped.iter().map(|s| s.line).collect();
        assert_eq!(numbers, [2, 0, 4, 0]);
        let mut gone = [at(0)];
        number_skipped(&d.path().join("gone.jsonl"), &mut gone, &mut buf);
        assert_eq!(gone[0].line, 0);
    }
}
