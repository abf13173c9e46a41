//! Lines classified: records (parsed envelopes), invalid lines and a torn tail, with blank
//! lines skipped. This is the loop every skein command runs over a transcript.

use std::io;

use serde::Deserialize;
use serde::de::IgnoredAny;

use crate::lines::{Line, LineSource};
use crate::parse::{ParseError, Parsed, Parser};

/// Reader settings.
#[derive(Debug, Clone, Copy)]
pub struct ReaderOptions {
    /// Lines longer than this are reported invalid without being parsed, and a streaming
    /// source skips them in bounded memory (default [`crate::lines::default_max_line`]:
    /// 256 MiB unless the process set another).
    pub max_line_len: usize,
}

impl Default for ReaderOptions {
    fn default() -> Self {
        Self {
            max_line_len: crate::lines::default_max_line(),
        }
    }
}

/// A non-blank line that is not one JSON object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidLine {
    pub line: u64,
    pub offset: u64,
    pub bytes: u64,
    pub error: ParseError,
}

/// The last line of an input when it has no newline and does not parse: the writer had not
/// finished it. Not an error; a tailer resumes from `offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct TornTail {
    pub line: u64,
    pub offset: u64,
    pub bytes: u64,
}

/// What one non-blank line turned out to be, `T` what a record was read into.
#[derive(Debug)]
#[allow(
    clippy::large_enum_variant,
    reason = "one event lives at a time; boxing would allocate per line"
)]
pub enum LineEvent<'l, T> {
    Record(Line<'l>, T),
    Invalid(Line<'l>, InvalidLine),
    TornTail(Line<'l>, TornTail),
}

/// A line read as an envelope (the reader's usual event).
pub type Event<'l, 's, I = IgnoredAny> = LineEvent<'l, Parsed<'s, I>>;

/// Reads a [`LineSource`] and classifies its lines.
#[derive(Debug)]
pub struct Reader<S> {
    source: S,
    parser: Parser,
    options: ReaderOptions,
}

impl<S: LineSource> Reader<S> {
    /// A reader over `source` (whose maximum line length becomes `options.max_line_len`).
    pub fn new(source: S, options: ReaderOptions) -> Self {
        Self::with_parser(source, options, Parser::new())
    }

    /// A reader that reuses `parser`'s buffers.
    pub fn with_parser(mut source: S, options: ReaderOptions, parser: Parser) -> Self {
        source.set_max_line(options.max_line_len);
        Self {
            source,
            parser,
            options,
        }
    }

    /// The source and the parser, for reuse.
    pub fn into_parts(self) -> (S, Parser) {
        (self.source, self.parser)
    }

    /// The underlying line source.
    pub fn source(&self) -> &S {
        &self.source
    }

    /// The next non-blank line, classified; `None` at the end of input.
    pub fn next_event(&mut self) -> io::Result<Option<Event<'_, '_>>> {
        self.next_event_as::<IgnoredAny>()
    }

    /// Like [`Reader::next_event`], reading tool inputs into `I`.
    pub fn next_event_as<'r, I: Deserialize<'r> + Default + crate::envelope_tape::FromTape<'r>>(
        &'r mut self,
    ) -> io::Result<Option<Event<'r, 'r, I>>> {
        self.next_with(|parser, line| parser.parse_as::<I>(line.text))
    }

    /// The next non-blank line, classified, a record read by `parse` (with this reader's
    /// parser, from the line's text) instead of into an envelope: blank lines skipped, a line
    /// over the maximum length refused without being parsed, a last line without newline that
    /// does not parse a torn tail, as for every reader.
    pub fn next_with<'r, T>(
        &'r mut self,
        parse: impl FnOnce(&'r mut Parser, &Line<'r>) -> Result<T, ParseError>,
    ) -> io::Result<Option<LineEvent<'r, T>>> {
        loop {
            if !self.source.advance()? {
                return Ok(None);
            }
            if !self.source.line().is_blank() {
                break;
            }
        }
        let line = self.source.line();
        let too_long = line.too_long.is_some() || line.text.len() > self.options.max_line_len;
        let result = if too_long {
            Err(ParseError::TooLong {
                bytes: line.len(),
                max: self.options.max_line_len as u64,
            })
        } else {
            parse(&mut self.parser, &line)
        };
        Ok(Some(match result {
            Ok(parsed) => LineEvent::Record(line, parsed),
            Err(_) if !line.terminated && !too_long => {
                let tail = TornTail {
                    line: line.number,
                    offset: line.offset,
                    bytes: line.len(),
                };
                LineEvent::TornTail(line, tail)
            }
            Err(error) => {
                let invalid = InvalidLine {
                    line: line.number,
                    offset: line.offset,
                    bytes: line.len(),
                    error,
                };
                LineEvent::Invalid(line, invalid)
            }
        }))
    }
}
