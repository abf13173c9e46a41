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
    /// Lines longer than this are reported invalid without being parsed (default 2 GiB).
    pub max_line_len: usize,
}

impl Default for ReaderOptions {
    fn default() -> Self {
        Self {
            max_line_len: 2 << 30,
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

/// What one non-blank line turned out to be.
#[derive(Debug)]
#[allow(
    clippy::large_enum_variant,
    reason = "one event lives at a time; boxing would allocate per line"
)]
pub enum Event<'l, 's, I = IgnoredAny> {
    Record(Line<'l>, Parsed<'s, I>),
    Invalid(Line<'l>, InvalidLine),
    TornTail(Line<'l>, TornTail),
}

/// Reads a [`LineSource`] and classifies its lines.
#[derive(Debug)]
pub struct Reader<S> {
    source: S,
    parser: Parser,
    options: ReaderOptions,
}

impl<S: LineSource> Reader<S> {
    /// A reader over `source`.
    pub fn new(source: S, options: ReaderOptions) -> Self {
        Self {
            source,
            parser: Parser::new(),
            options,
        }
    }

    /// A reader that reuses `parser`'s buffers.
    pub fn with_parser(source: S, options: ReaderOptions, parser: Parser) -> Self {
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
    pub fn next_event_as<'r, I: Deserialize<'r> + Default>(
        &'r mut self,
    ) -> io::Result<Option<Event<'r, 'r, I>>> {
        loop {
            if !self.source.advance()? {
                return Ok(None);
            }
            if !self.source.line().is_blank() {
                break;
            }
        }
        {
            let line = self.source.line();
            let result = if line.text.len() > self.options.max_line_len {
                Err(ParseError::Invalid(format!(
                    "line of {} bytes exceeds the limit of {} bytes",
                    line.text.len(),
                    self.options.max_line_len
                )))
            } else {
                self.parser.parse_as::<I>(line.text)
            };
            Ok(Some(match result {
                Ok(parsed) => Event::Record(line, parsed),
                Err(_) if !line.terminated => {
                    let tail = TornTail {
                        line: line.number,
                        offset: line.offset,
                        bytes: line.raw.len() as u64,
                    };
                    Event::TornTail(line, tail)
                }
                Err(error) => {
                    let invalid = InvalidLine {
                        line: line.number,
                        offset: line.offset,
                        bytes: line.raw.len() as u64,
                        error,
                    };
                    Event::Invalid(line, invalid)
                }
            }))
        }
    }
}
