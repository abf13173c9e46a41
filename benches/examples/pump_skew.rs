//! The archive pump's two copies, alone: compresses FILE with the settings `skein archive`
//! gives zstd (`skein_archive::codec::encoder`, private, copied here: level 3, checksum,
//! pledged size, two workers, overlap log 9), reading 128 KiB steps that land SKEW
//! bytes past their place in their page of the file.
//!
//!     cargo build --release -p skein-bench --example pump_skew
//!     perf record -e cpu-clock target/release/examples/pump_skew FILE SKEW
//!
//! With SKEW 0 zstd's copy into its job buffer (`memmove` under `ZSTD_compressStream2`) is the
//! slow one, with 16 the kernel's (`_copy_to_iter`); with 64 or 2048 both are fast
//! (docs/performance.md, "The archive's two copies"). The pump uses 2048.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    clippy::print_stderr,
    reason = "a measuring tool: reads the file it is given, prints its usage"
)]

use std::io::Write;
use std::os::unix::fs::FileExt;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(path), Some(skew)) = (args.get(1), args.get(2).and_then(|s| s.parse::<u64>().ok()))
    else {
        eprintln!("usage: pump_skew FILE SKEW");
        std::process::exit(64);
    };
    let file = std::fs::File::open(path).expect("open");
    let len = file.metadata().expect("metadata").len();
    let mut enc = zstd::stream::write::Encoder::new(std::io::sink(), 3).expect("encoder");
    enc.include_checksum(true).expect("checksum");
    enc.set_pledged_src_size(Some(len)).expect("size");
    enc.multithread(2).expect("workers");
    enc.set_parameter(zstd::zstd_safe::CParameter::OverlapSizeLog(9))
        .expect("overlap");
    let step = skein_core::lines::DEFAULT_BLOCK;
    let mut buf = Vec::new();
    let mut pos = 0u64;
    while pos < len {
        let want = (len - pos).min(step as u64) as usize;
        let at = skein_core::page::settle_in_page(&mut buf, 0..0, pos.wrapping_add(skew), want);
        file.read_exact_at(&mut buf[at..at + want], pos)
            .expect("read");
        enc.write_all(&buf[at..at + want]).expect("compress");
        pos += want as u64;
    }
    enc.finish().expect("finish");
}
