//! `skein records PATH...`: one compact JSON object per record with the fields named (keys or
//! dotted paths, `skein_core::project`), what `jq -c '{type,uuid,parentUuid}'` prints, from
//! every file in input order. See docs/records.md.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Result, anyhow, bail};
use clap::Args as ClapArgs;
use skein_analysis::collect::MAX_INVALID_SAMPLES;
use skein_core::{InvalidLine, LineEvent, Projection, Reader, ReaderOptions};

use crate::cli::InputArgs;
use crate::inputs::{for_each_file, with_lines};
use crate::output::{error_line, error_text, warn_invalid_lines};

#[derive(Debug, ClapArgs)]
pub(crate) struct Args {
    #[command(flatten)]
    pub(crate) input: InputArgs,
    /// Fields to write, comma-separated, in this order: top-level keys, or dotted paths into
    /// nested objects (`message.model`), written nested as the record holds them. One a
    /// record lacks is `null`.
    #[arg(
        long,
        short = 'f',
        value_delimiter = ',',
        default_value = "type,uuid,parentUuid,timestamp"
    )]
    pub(crate) fields: Vec<String>,
    /// Begin each object with where the record is: `file`, `line` (1-based) and `offset`
    /// (of the line's first byte); no field may then be under those keys.
    #[arg(long)]
    pub(crate) location: bool,
    /// Do not warn about invalid lines on stderr.
    #[arg(long, short = 'q')]
    pub(crate) quiet: bool,
}

/// The members `--location` writes first.
const LOCATION: [&str; 3] = ["file", "line", "offset"];

/// One file's projection.
struct Projected {
    out: Vec<u8>,
    invalid: Vec<InvalidLine>,
    invalid_lines: u64,
}

pub(crate) fn run(args: &Args) -> Result<ExitCode> {
    let projection = projection(args)?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut failed = false;
    for_each_file(
        &args.input.paths,
        args.input.threads,
        |path| project_file(path, &projection, args.location, args.input.mmap),
        |path, result| {
            match result {
                Ok(p) => {
                    out.write_all(&p.out)?;
                    if !args.quiet {
                        warn_invalid(path, &p);
                    }
                }
                Err(e) => {
                    failed = true;
                    out.flush()?;
                    error_line(&error_text(&e));
                }
            }
            Ok(())
        },
    )?;
    out.flush()?;
    Ok(if failed {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}

/// The projection asked for, its fields checked (`Projection::new`), none that `--location`
/// writes. The fields live as long as the process (a projection's skim holds them for every
/// line of every file).
fn projection(args: &Args) -> Result<Projection> {
    let mut paths: Vec<&'static str> = Vec::with_capacity(args.fields.len());
    for f in &args.fields {
        let top = f.split('.').next().unwrap_or_default();
        if args.location && LOCATION.contains(&top) {
            bail!("--fields: {f:?} is also written by --location; drop one of them");
        }
        paths.push(Box::leak(f.clone().into_boxed_str()));
    }
    Projection::new(Box::leak(paths.into_boxed_slice())).map_err(|e| anyhow!("--fields: {e}"))
}

fn project_file(
    path: &Path,
    projection: &Projection,
    location: bool,
    mmap: bool,
) -> Result<Projected> {
    // The path as a JSON string, once per file.
    let file = location.then(|| serde_json::to_string(&path.display().to_string()));
    let file = file.transpose()?;
    with_lines(path, mmap, |lines, parser| {
        let mut reader =
            Reader::with_parser(lines, ReaderOptions::default(), std::mem::take(parser));
        let mut p = Projected {
            out: Vec::new(),
            invalid: Vec::new(),
            invalid_lines: 0,
        };
        let mut prefix = Vec::new();
        loop {
            let out = &mut p.out;
            let prefix = &mut prefix;
            let event = reader.next_with(|parser, line| {
                prefix.clear();
                if let Some(file) = &file {
                    // Writing into a Vec cannot fail.
                    let _ = write!(
                        prefix,
                        "\"file\":{file},\"line\":{},\"offset\":{}",
                        line.number, line.offset
                    );
                }
                projection.write(parser, line.text, prefix, out)
            })?;
            match event {
                None => break,
                Some(LineEvent::Invalid(_, invalid)) => {
                    p.invalid_lines += 1;
                    if p.invalid.len() < MAX_INVALID_SAMPLES {
                        p.invalid.push(invalid);
                    }
                }
                // A torn tail is a line still being written, not an error (as in `stats`).
                Some(LineEvent::Record(..) | LineEvent::TornTail(..)) => {}
            }
        }
        *parser = reader.into_parts().1;
        Ok(p)
    })
}

fn warn_invalid(path: &Path, p: &Projected) {
    let named = p.invalid.iter().map(|b| (b.line, b.offset, &b.error));
    warn_invalid_lines(path, named, p.invalid_lines - p.invalid.len() as u64);
}
