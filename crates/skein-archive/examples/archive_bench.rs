//! Measurement driver for `benches/compare_compression.sh`.
//!
//! ```text
//! archive_bench gen OUT MB                       write a synthetic transcript of about MB MB
//! archive_bench archive SRC DIR [--no-redact] [--level N] [--threads N]
//!                                                archive SRC into a fresh DIR, print figures
//! archive_bench append SRC DIR KB ROUNDS         append KB of lines to SRC and archive, ROUNDS
//!                                                times; print the median step time
//! archive_bench dict DIR FILE...                 archive FILEs as subagents (no dictionary),
//!                                                train one, print the held-out measurement
//! ```
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "tests, benches and tools read and write files"
)]

#[path = "common/synth.rs"]
mod synth;

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use skein_archive::{Archive, ArchiveOptions, CodecOptions, IngestRequest, Kind};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn out(s: &str) -> Res<()> {
    writeln!(std::io::stdout(), "{s}")?;
    Ok(())
}

fn kind() -> Kind {
    Kind::MainSession {
        session_id: "0b4c6f9e-1d2a-4e5f-8a9b-0c1d2e3f4a5b".into(),
    }
}

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
    };
    match args.first().map(String::as_str) {
        Some("gen") => {
            let mb: usize = args.get(2).ok_or("MB")?.parse()?;
            std::fs::write(args.get(1).ok_or("OUT")?, synth::transcript(42, mb << 20))?;
        }
        Some("archive") => {
            let src = PathBuf::from(args.get(1).ok_or("SRC")?);
            let dir = PathBuf::from(args.get(2).ok_or("DIR")?);
            let opts = ArchiveOptions {
                codec: CodecOptions {
                    level: flag("--level").map_or(Ok(3), |v| v.parse())?,
                    threads: flag("--threads").map_or(Ok(0), |v| v.parse())?,
                    long: None,
                },
                ..ArchiveOptions::default()
            };
            let a = Archive::open(&dir, opts)?;
            let req = IngestRequest {
                source: &src,
                kind: kind(),
                first_timestamp: Some("2026-01-05T10:00:00Z"),
                meta: None,
            };
            let mut redact = synth::redact;
            let t = Instant::now();
            let r = if args.iter().any(|a| a == "--no-redact") {
                a.ingest(&req, None)?
            } else {
                a.ingest(&req, Some(&mut redact))?
            };
            let secs = t.elapsed().as_secs_f64();
            out(&format!(
                "in={} out={} secs={secs:.4} mbps={:.1} ratio={:.3}",
                r.appended_source_bytes,
                r.appended_bytes,
                r.appended_source_bytes as f64 / 1e6 / secs,
                r.appended_source_bytes as f64 / r.appended_bytes as f64
            ))?;
        }
        Some("append") => {
            let src = PathBuf::from(args.get(1).ok_or("SRC")?);
            let dir = PathBuf::from(args.get(2).ok_or("DIR")?);
            let kb: usize = args.get(3).ok_or("KB")?.parse()?;
            let rounds: usize = args.get(4).ok_or("ROUNDS")?.parse()?;
            let a = Archive::open(&dir, ArchiveOptions::default())?;
            let req = IngestRequest {
                source: &src,
                kind: kind(),
                first_timestamp: Some("2026-01-05T10:00:00Z"),
                meta: None,
            };
            let mut redact = synth::redact;
            a.ingest(&req, Some(&mut redact))?;
            let pieces: Vec<Vec<u8>> = (0..16)
                .map(|i| synth::transcript(1000 + i, kb << 10))
                .collect();
            let mut times = Vec::new();
            for round in 0..rounds {
                let piece = &pieces[round % pieces.len()];
                std::fs::OpenOptions::new()
                    .append(true)
                    .open(&src)?
                    .write_all(piece)?;
                let t = Instant::now();
                let r = a.ingest(&req, Some(&mut redact))?;
                times.push(t.elapsed().as_secs_f64() * 1e3);
                assert!(r.appended_source_bytes > 0);
            }
            times.sort_by(f64::total_cmp);
            out(&format!(
                "append_kb={kb} rounds={rounds} median_ms={:.3} p90_ms={:.3} max_ms={:.3}",
                times[times.len() / 2],
                times[times.len() * 9 / 10],
                times[times.len() - 1]
            ))?;
        }
        Some("dict") => {
            let dir = PathBuf::from(args.get(1).ok_or("DIR")?);
            let opts = ArchiveOptions {
                dict: skein_archive::DictMode::Off,
                ..ArchiveOptions::default()
            };
            let a = Archive::open(&dir, opts)?;
            for (i, file) in args[2..].iter().enumerate() {
                let req = IngestRequest {
                    source: std::path::Path::new(file),
                    kind: Kind::Subagent {
                        agent_type: "sample".into(),
                        agent_id: format!("a{i:05}"),
                        parent_session: Some("dict-samples".into()),
                        tool_use_id: None,
                    },
                    first_timestamp: Some("2026-01-05T10:00:00Z"),
                    meta: None,
                };
                a.ingest(&req, None)?;
            }
            let r = a.train_dictionary(&skein_archive::TrainOptions::default())?;
            out(&format!("{r:?}"))?;
        }
        _ => return Err("usage: archive_bench gen|archive|append|dict ...".into()),
    }
    Ok(())
}
