//! Reading transcripts into [`MetaCollector`]s: each record parsed once and handed to the
//! collector, nothing else. The reports' analysis (`skein_reports::load_session`) also builds
//! the record graph, pairs tool calls with results and counts usage, which the metadata does
//! not need: on a 462 MB session that was half of the pass's time and most of its memory.
//! The collector ignores graph nodes, so it gets the same calls either way.

use std::io;
use std::path::Path;

use serde_json::Value;
use skein_analysis::{RecordVisitor, SpawnLinks};
use skein_core::{Event, LineSource, Parser, ReadLines, Reader, ReaderOptions};
use skein_layout::SessionFiles;
use skein_store::{Input, InputMode};

use crate::error::Error;
use crate::meta::MetaCollector;

/// The collectors of a session's files, in the order of [`SessionFiles`].
#[derive(Debug, Default)]
pub(crate) struct SessionMetas {
    pub(crate) main: Option<MetaCollector>,
    /// One per `SessionFiles::agents` entry.
    pub(crate) agents: Vec<MetaCollector>,
    /// The main transcript's spawning calls (empty without one).
    pub(crate) links: SpawnLinks,
}

/// Feeds every record of `lines` to `c` (invalid lines and a torn tail are skipped, as the
/// analysis skips them), with the reader options the reports use.
pub fn feed_lines<S: LineSource>(
    c: &mut MetaCollector,
    lines: S,
    parser: &mut Parser,
) -> io::Result<()> {
    let mut reader = Reader::with_parser(lines, ReaderOptions::default(), std::mem::take(parser));
    let result = loop {
        match reader.next_event_as::<Value>() {
            Ok(Some(Event::Record(line, parsed))) => c.record(&line, &parsed.envelope, None),
            Ok(Some(_)) => {}
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    *parser = reader.into_parts().1;
    result
}

/// The collector of one whole transcript.
pub(crate) fn read_file(path: &Path, parser: &mut Parser) -> Result<MetaCollector, Error> {
    let err = |error| Error::Io {
        path: path.to_path_buf(),
        error,
    };
    let mut c = MetaCollector::new();
    match skein_layout::open(path, InputMode::Read).map_err(|e| err(e.source))? {
        Input::Mapped(data) => feed_lines(&mut c, skein_core::SliceLines::new(&data), parser),
        Input::Stream(r) => feed_lines(&mut c, ReadLines::new(r), parser),
    }
    .map_err(err)?;
    Ok(c)
}

/// The collectors of every file of a session.
pub(crate) fn read_session(s: &SessionFiles, parser: &mut Parser) -> Result<SessionMetas, Error> {
    let main = s
        .main
        .as_deref()
        .map(|p| read_file(p, parser))
        .transpose()?;
    let agents = s
        .agents
        .iter()
        .map(|a| read_file(&a.path, parser))
        .collect::<Result<_, _>>()?;
    let links = main.as_ref().map(|m| m.links().clone()).unwrap_or_default();
    Ok(SessionMetas {
        main,
        agents,
        links,
    })
}
