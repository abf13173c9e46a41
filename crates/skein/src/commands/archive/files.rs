//! Single files: `skein compress`, `skein decompress` and `skein cat`. Archive files are read
//! through `skein_archive::open_archived`, so trained dictionaries and committed lengths (a torn
//! frame after a crash is never shown) are honoured.

use std::fs::File;
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Args;
use skein_archive::{CodecOptions, CodecReport, compress_file, compress_stream, open_archived};

use crate::output::{ReportFormat, error_line};

/// `skein compress`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  skein compress session.jsonl            # → session.jsonl.zst\n  \
                        skein compress --zstd-level 19 --long big.jsonl -o big.zst\n  \
                        cat s.jsonl | skein compress - > s.jsonl.zst"
)]
pub(crate) struct CompressArgs {
    /// The file to compress (`-`: standard input).
    #[arg(value_name = "FILE")]
    input: PathBuf,
    /// Output file (default: FILE.zst; standard output for `-`). Replaced atomically, mode 0600.
    #[arg(short = 'o', long, value_name = "OUT")]
    output: Option<PathBuf>,
    /// The report on standard error: `summary` (a line for a person; the default on a
    /// terminal) or `jsonl` (`{"input","output","bytes_in","bytes_out"}`, the default otherwise).
    #[arg(long, value_enum)]
    format: Option<ReportFormat>,
    /// zstd level (1..=22, or -7..=-1 for the fast levels).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 3,
        allow_negative_numbers = true
    )]
    zstd_level: i32,
    /// Long-distance matching with this window log (27 when given without a value). Windows
    /// above 27 need `zstd -d --long=N`; skein's decoders need nothing.
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "27", require_equals = true)]
    long: Option<u32>,
    /// Worker threads: 0 = automatic (for inputs of 4 MiB or more), 1 = none, N = N workers.
    #[arg(long, short = 'T', value_name = "N", default_value_t = 0)]
    threads: u32,
    /// Replace an existing output file.
    #[arg(long, short = 'f')]
    force: bool,
}

/// `skein decompress`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  skein decompress session.jsonl.zst      # → session.jsonl\n  \
                        skein decompress DIR/main-session/2026-01/x.jsonl.zst -o - | jq ."
)]
pub(crate) struct DecompressArgs {
    /// The `.zst` file (an archive file or any zstd file; `-`: standard input, no dictionary).
    #[arg(value_name = "FILE.zst")]
    input: PathBuf,
    /// Output file (default: FILE without `.zst`; `-`: standard output). Replaced atomically,
    /// mode 0600.
    #[arg(short = 'o', long, value_name = "OUT")]
    output: Option<PathBuf>,
    /// Replace an existing output file.
    #[arg(long, short = 'f')]
    force: bool,
}

/// `skein cat`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  skein cat DIR/main-session/2026-01/*.jsonl.zst | skein stats -\n  \
                        skein cat a.jsonl b.jsonl.zst > both.jsonl"
)]
pub(crate) struct CatArgs {
    /// Files: zstd files (archive files included) are decoded, anything else is copied as it
    /// is; `-` is standard input.
    #[arg(value_name = "FILE", required = true)]
    files: Vec<PathBuf>,
}

fn is_stdio(p: &Path) -> bool {
    p.as_os_str() == "-"
}

fn refuse_existing(out: &Path, force: bool) -> Result<()> {
    if !force && out.exists() {
        bail!("{} exists (use --force to replace it)", out.display());
    }
    Ok(())
}

fn ratio(r: &CodecReport, compressing: bool) -> String {
    let (raw, packed) = if compressing {
        (r.bytes_in, r.bytes_out)
    } else {
        (r.bytes_out, r.bytes_in)
    };
    let pct = if raw == 0 {
        0.0
    } else {
        packed as f64 * 100.0 / raw as f64
    };
    format!("{raw} ↔ {packed} bytes ({pct:.1} %)")
}

/// `skein compress`.
pub(crate) fn compress(args: &CompressArgs) -> Result<ExitCode> {
    let opts = CodecOptions {
        level: args.zstd_level,
        long: args.long,
        threads: args.threads,
    };
    opts.validate()?;
    let default_out = if is_stdio(&args.input) {
        PathBuf::from("-")
    } else {
        let mut s = args.input.clone().into_os_string();
        s.push(".zst");
        PathBuf::from(s)
    };
    let out = args.output.clone().unwrap_or(default_out);
    let report = if is_stdio(&out) {
        if std::io::stdout().is_terminal() {
            bail!("not writing compressed data to a terminal (use -o FILE)");
        }
        let stdout = std::io::stdout();
        let mut w = std::io::BufWriter::new(stdout.lock());
        let r = if is_stdio(&args.input) {
            compress_stream(std::io::stdin().lock(), &mut w, &opts, None)
        } else {
            let f = File::open(&args.input).with_context(|| args.input.display().to_string())?;
            let len = f.metadata().ok().map(|m| m.len());
            compress_stream(f, &mut w, &opts, len)
        };
        let r = r.context("compressing")?;
        w.flush()?;
        r
    } else {
        skein_store::ensure_not_input(&out, &[&args.input])?;
        refuse_existing(&out, args.force)?;
        if is_stdio(&args.input) {
            bail!("reading standard input: write to standard output (-o -)");
        }
        compress_file(&args.input, &out, &opts)?
    };
    if ReportFormat::human(args.format, std::io::stderr().is_terminal()) {
        if !is_stdio(&out) {
            error_line(&format!(
                "{} → {}: {}",
                args.input.display(),
                out.display(),
                ratio(&report, true)
            ));
        }
    } else {
        let line = serde_json::json!({
            "input": args.input.display().to_string(),
            "output": out.display().to_string(),
            "bytes_in": report.bytes_in,
            "bytes_out": report.bytes_out,
        });
        let mut err = std::io::stderr().lock();
        writeln!(err, "{line}")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `skein decompress`.
pub(crate) fn decompress(args: &DecompressArgs) -> Result<ExitCode> {
    let out = match &args.output {
        Some(o) => o.clone(),
        None if is_stdio(&args.input) => PathBuf::from("-"),
        None => match args.input.to_str().and_then(|s| s.strip_suffix(".zst")) {
            Some(stem) if !stem.is_empty() => PathBuf::from(stem),
            _ => bail!(
                "{} does not end in .zst; name the output with -o",
                args.input.display()
            ),
        },
    };
    if is_stdio(&out) {
        let stdout = std::io::stdout();
        let mut w = std::io::BufWriter::new(stdout.lock());
        if is_stdio(&args.input) {
            skein_archive::decompress_stream(std::io::stdin().lock(), &mut w)
                .context("decompressing standard input")?;
        } else {
            let mut r = open_archived(&args.input)?;
            copy(&mut *r, &mut w, &args.input)?;
        }
        w.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    if is_stdio(&args.input) {
        bail!("reading standard input: write to standard output (-o -)");
    }
    skein_store::ensure_not_input(&out, &[&args.input])?;
    refuse_existing(&out, args.force)?;
    let report = skein_archive::decompress_file(&args.input, &out)?;
    if std::io::stderr().is_terminal() {
        error_line(&format!(
            "{} → {}: {}",
            args.input.display(),
            out.display(),
            ratio(&report, false)
        ));
    }
    Ok(ExitCode::SUCCESS)
}

/// Why a copy stopped: the input failed (the next file may still work) or the output did.
enum CopyError {
    Read(anyhow::Error),
    Write(std::io::Error),
}

fn copy_inner(r: &mut dyn Read, w: &mut dyn Write) -> std::result::Result<(), CopyError> {
    let mut buf = vec![0u8; 1 << 17];
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(CopyError::Read(e.into())),
        };
        w.write_all(&buf[..n]).map_err(CopyError::Write)?;
    }
}

fn copy(r: &mut dyn Read, w: &mut dyn Write, path: &Path) -> Result<()> {
    match copy_inner(r, w) {
        Ok(()) => Ok(()),
        Err(CopyError::Read(e)) => Err(e.context(path.display().to_string())),
        Err(CopyError::Write(e)) => Err(e.into()),
    }
}

/// True when the file starts with a zstd frame (or has a `.zst` name).
fn looks_zstd(path: &Path) -> bool {
    if skein_store::is_zstd(path) {
        return true;
    }
    let mut magic = [0u8; 4];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok_and(|()| u32::from_le_bytes(magic) == 0xFD2F_B528)
}

fn open_for_cat(path: &Path) -> Result<Box<dyn Read>> {
    if is_stdio(path) {
        return Ok(Box::new(std::io::stdin()));
    }
    if path.is_dir() {
        bail!("{} is a directory", path.display());
    }
    if looks_zstd(path) {
        return Ok(open_archived(path)?);
    }
    Ok(Box::new(
        File::open(path).with_context(|| path.display().to_string())?,
    ))
}

/// `skein cat`: every file's content in order; a file that cannot be read is reported and
/// skipped (exit status 2 at the end).
pub(crate) fn cat(args: &CatArgs) -> Result<ExitCode> {
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::with_capacity(1 << 17, stdout.lock());
    let mut ok = true;
    for path in &args.files {
        let mut r = match open_for_cat(path) {
            Ok(r) => r,
            Err(e) => {
                w.flush()?;
                error_line(&crate::output::error_text(&e));
                ok = false;
                continue;
            }
        };
        match copy_inner(&mut r, &mut w) {
            Ok(()) => {}
            Err(CopyError::Write(e)) => return Err(e.into()),
            Err(CopyError::Read(e)) => {
                w.flush()?;
                error_line(&format!("{}: {e:#}", path.display()));
                ok = false;
            }
        }
    }
    w.flush()?;
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}
