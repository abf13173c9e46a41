//! Any bytes as the content of an archive file: the frame-by-frame scan that recovery and
//! `verify` rely on never panics, its frames are contiguous from byte 0, it stops early only
//! with a reason, and zstd's own decoder turns the frames it accepted into exactly the bytes and
//! lines it counted. `decompress_stream` (what `skein decompress -` runs) never panics either.
//! In memory: thousands of inputs per second.
#![no_main]

use std::io::{self, Read, Write};

use libfuzzer_sys::fuzz_target;

/// Decoded bytes looked at per input (a few bytes of zstd can declare far more).
const MAX_OUT: u64 = 8 << 20;

/// A writer that takes at most `MAX_OUT` bytes.
struct Capped(u64);

impl Write for Capped {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.0 + buf.len() as u64 > MAX_OUT {
            return Err(io::Error::other("enough"));
        }
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fuzz_target!(|data: &[u8]| {
    let (frames, stop) = skein_archive::fuzz_scan(data, MAX_OUT);
    let mut at = 0;
    for &(end, ..) in &frames {
        assert!(end > at, "frames out of order: {frames:?}");
        at = end;
    }
    assert!(at <= data.len() as u64);
    if stop.is_none() {
        assert_eq!(at, data.len() as u64, "stopped without a reason");
    }
    let (lines, bytes) = frames
        .iter()
        .fold((0, 0), |(l, b), &(_, fl, fb, _)| (l + fl, b + fb));
    if at > 0 && (stop.is_none() || bytes < MAX_OUT) {
        let mut dec = zstd::stream::read::Decoder::new(&data[..at as usize]).expect("decoder");
        dec.window_log_max(31).expect("window");
        let mut out = Vec::new();
        dec.take(MAX_OUT + 1)
            .read_to_end(&mut out)
            .expect("zstd decodes the frames the scan accepted");
        assert_eq!(out.len() as u64, bytes);
        assert_eq!(out.iter().filter(|&&b| b == b'\n').count() as u64, lines);
    }
    let _ = skein_archive::decompress_stream(data, Capped(0));
});
