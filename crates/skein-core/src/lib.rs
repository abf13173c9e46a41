//! Streaming, lossless reading of Claude Code JSONL transcripts.
//!
//! * [`lines`]: split a byte stream or a slice into physical lines (BOM, CRLF, torn tail,
//!   giant lines), keeping every line's exact bytes and position.
//! * [`envelope`]: the borrowed, lenient record envelope: only the fields skein needs,
//!   everything else skipped; any JSON object parses.
//! * [`parse`]: one line → one envelope with simd-json, with repair of invalid UTF-8 and lone
//!   surrogate escapes ([`repair`]) and a serde_json fallback for what simd-json refuses.
//! * [`structural`], [`lazy`]: a line's structural index, and the line read off it (the
//!   envelope's fast path: no tape, no copy of the strings it does not read).
//! * [`page`]: where reads land in memory, so that the kernel copies them page-aligned.
//! * [`skim`]: long string values a reader never looks at, dropped before the parse.
//! * [`source`]: a parsed line read value by value, off the tape or the index alike (the
//!   envelope's reader and the usage scan's are written once over it).
//! * [`reader`]: the two together: classified lines (record, blank, invalid, torn tail).
//! * [`record`]: the record vocabulary: record types, what a human prompt is, the tools
//!   that spawn subagents.
//! * [`intern`]: strings interned to dense numbers in one arena (uuids, tool ids).
//! * [`short_str`]: an owned string kept inline when short (ids and model names).
//! * [`time`]: timestamps, the calendar, day / week / month keys, time zones as values.

pub mod envelope;
pub mod envelope_lazy;
mod envelope_read;
pub mod envelope_tape;
pub mod intern;
pub mod lazy;
pub mod lenient;
pub mod lines;
pub mod map_lines;
pub mod ordered;
pub mod page;
pub mod parse;
pub mod project;
pub mod reader;
pub mod record;
pub mod repair;
pub mod short_str;
pub mod skim;
pub mod source;
pub mod structural;
pub mod tape;
pub mod time;

pub use envelope::{Block, Content, Envelope, Message, ToolUseResult, Usage};
pub use intern::Interner;
pub use lines::{Line, LineSource, ReadLines, SliceLines};
pub use map_lines::MapLines;
pub use page::PageReader;
pub use parse::{ParseError, Parsed, Parser, SimdScratch};
pub use project::Projection;
pub use reader::{Event, InvalidLine, LineEvent, Reader, ReaderOptions, TornTail};
pub use short_str::ShortStr;
pub use skim::Skim;
