//! Walking an archive file frame by frame: where each complete zstd frame ends, what it decodes
//! to, and where (and why) decoding stops. Recovery uses it to prove that what it keeps decodes
//! to the checkpoint's counts before it cuts anything, and to rebuild a checkpoint from the
//! frames when the two disagree; `verify` uses it to explain a disagreement.

use std::fs::File;
use std::io::{self, BufRead, Read};
use std::path::Path;

use skein_core::PageReader;

use zstd::zstd_safe::{DCtx, DParameter, InBuffer, OutBuffer};

use crate::codec::MAX_WINDOW_LOG;

/// zstd's frame magic number, little-endian on disk.
pub(crate) const MAGIC: u32 = 0xFD2F_B528;

/// One complete frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Frame {
    pub(crate) start: u64,
    pub(crate) end: u64,
    pub(crate) lines: u64,
    pub(crate) raw_bytes: u64,
    /// The frame's last decoded byte (`None` for an empty frame).
    pub(crate) last_byte: Option<u8>,
    /// The frame carries a content checksum (which decoding verified).
    pub(crate) checksummed: bool,
}

/// The frames of a file, in order, up to the first byte that is not part of a complete frame.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct FrameScan {
    pub(crate) frames: Vec<Frame>,
    /// The file's length when scanned.
    pub(crate) len: u64,
    /// Why decoding stopped before `len`: a corrupt frame or an incomplete last one.
    pub(crate) stop: Option<String>,
}

impl FrameScan {
    /// Where the complete frames end.
    pub(crate) fn end(&self) -> u64 {
        self.frames.last().map_or(0, |f| f.end)
    }

    /// The frames from the start up to the first one without a checksum.
    pub(crate) fn trusted(&self) -> &[Frame] {
        let n = self
            .frames
            .iter()
            .position(|f| !f.checksummed)
            .unwrap_or(self.frames.len());
        &self.frames[..n]
    }

    /// Whether the content of the frames ending at or before `at` is empty or ends with `\n`.
    pub(crate) fn ends_with_newline_at(&self, at: u64) -> bool {
        self.frames
            .iter()
            .take_while(|f| f.end <= at)
            .filter_map(|f| f.last_byte)
            .last()
            .is_none_or(|b| b == b'\n')
    }

    /// Lines, bytes and frames decoded from the frames ending at or before `at`, if `at` is
    /// the start of the file or the end of a frame.
    pub(crate) fn totals_at(&self, at: u64) -> Option<(u64, u64, u64)> {
        if at == 0 {
            return Some((0, 0, 0));
        }
        let mut acc = (0, 0, 0);
        for f in &self.frames {
            acc = (acc.0 + f.lines, acc.1 + f.raw_bytes, acc.2 + 1);
            if f.end == at {
                return Some(acc);
            }
            if f.end > at {
                return None;
            }
        }
        None
    }

    /// The last frame boundary among the trusted frames where the decoded lines and bytes are
    /// exactly `lines` and `raw_bytes`, with the number of frames before it.
    pub(crate) fn boundary_with(&self, lines: u64, raw_bytes: u64) -> Option<(u64, u64)> {
        let mut acc = (0u64, 0u64);
        let mut found = (lines == 0 && raw_bytes == 0).then_some((0, 0));
        for (i, f) in self.trusted().iter().enumerate() {
            acc = (acc.0 + f.lines, acc.1 + f.raw_bytes);
            if acc == (lines, raw_bytes) {
                found = Some((f.end, i as u64 + 1));
            }
            if acc.1 > raw_bytes {
                break;
            }
        }
        found
    }
}

/// Decodes `path` frame by frame with `dict` (checksums verified).
pub(crate) fn scan_frames(path: &Path, dict: Option<&[u8]>) -> io::Result<FrameScan> {
    let file = File::open(path)?;
    let len = file.metadata()?.len();
    let mut scan = scan_reader(file, dict, u64::MAX)?;
    scan.len = len;
    Ok(scan)
}

/// Decodes a stream frame by frame with `dict` (checksums verified), stopping once more than
/// `max_out` bytes were decoded; `len` is what was read.
pub(crate) fn scan_reader(
    file: impl Read,
    dict: Option<&[u8]>,
    max_out: u64,
) -> io::Result<FrameScan> {
    let mut decoded = 0u64;
    let mut scan = FrameScan::default();
    // The first bytes of the frame being decoded: magic number and frame header descriptor.
    let mut header: Vec<u8> = Vec::with_capacity(5);
    let mut dctx = DCtx::create();
    let zerr = |code| io::Error::other(zstd::zstd_safe::get_error_name(code));
    dctx.set_parameter(DParameter::WindowLogMax(MAX_WINDOW_LOG))
        .map_err(zerr)?;
    if let Some(d) = dict {
        dctx.load_dictionary(d).map_err(zerr)?;
    }
    // 32 KiB each: a few more calls per MiB than zstd's suggested 128 KiB, a quarter of the
    // memory to clear per scan (verify scans every file). Read through a `PageReader`, so that
    // the kernel's copy lands in page (`skein_core::page`).
    let mut file = PageReader::with_capacity(1 << 15, file);
    let mut output = vec![0u8; 1 << 15];
    let (mut fed, mut start) = (0u64, 0u64);
    let (mut lines, mut raw, mut last_byte) = (0u64, 0u64, None);
    loop {
        let input = file.fill_buf()?;
        let n = input.len();
        if n == 0 {
            break;
        }
        let mut inb = InBuffer::around(&input[..n]);
        let take = (5 - header.len()).min(n);
        header.extend_from_slice(&input[..take]);
        loop {
            let mut outb = OutBuffer::around(&mut output[..]);
            let result = dctx.decompress_stream(&mut outb, &mut inb);
            let produced = outb.pos();
            lines += memchr::memchr_iter(b'\n', &output[..produced]).count() as u64;
            raw += produced as u64;
            decoded += produced as u64;
            if produced > 0 {
                last_byte = Some(output[produced - 1]);
            }
            if decoded > max_out {
                scan.stop = Some(format!("more than {max_out} bytes decoded"));
                scan.len = fed + inb.pos() as u64;
                return Ok(scan);
            }
            match result {
                Err(code) => {
                    scan.stop = Some(format!(
                        "frame at byte {start}: {}",
                        zstd::zstd_safe::get_error_name(code)
                    ));
                    scan.len = fed + n as u64;
                    return Ok(scan);
                }
                Ok(0) => {
                    let end = fed + inb.pos() as u64;
                    scan.frames.push(Frame {
                        start,
                        end,
                        lines,
                        raw_bytes: raw,
                        last_byte,
                        checksummed: checksummed(&header),
                    });
                    (start, lines, raw, last_byte) = (end, 0, 0, None);
                    let at = inb.pos();
                    header.clear();
                    header.extend_from_slice(&input[at..n.min(at + 5)]);
                }
                Ok(_) => {}
            }
            if inb.pos() == n && produced < output.len() {
                break;
            }
        }
        file.consume(n);
        fed += n as u64;
    }
    if fed > start {
        scan.stop = Some(format!(
            "incomplete frame at byte {start} ({} bytes)",
            fed - start
        ));
    }
    scan.len = fed;
    Ok(scan)
}

/// Whether a frame starting with `header` announces a content checksum (a zstd frame whose
/// frame header descriptor has the checksum flag).
fn checksummed(header: &[u8]) -> bool {
    header.len() == 5
        && u32::from_le_bytes([header[0], header[1], header[2], header[3]]) == MAGIC
        && header[4] & 0b100 != 0
}

/// One frame for the fuzz targets: `(end, lines, raw_bytes, checksummed)`.
#[doc(hidden)]
pub type FuzzFrame = (u64, u64, u64, bool);

/// For the fuzz targets: the frames of `bytes`, and why decoding stopped early, if it did (at
/// most `max_out` bytes are decoded).
#[doc(hidden)]
pub fn fuzz_scan(bytes: &[u8], max_out: u64) -> (Vec<FuzzFrame>, Option<String>) {
    match scan_reader(bytes, None, max_out) {
        Ok(s) => (
            s.frames
                .iter()
                .map(|f| (f.end, f.lines, f.raw_bytes, f.checksummed))
                .collect(),
            s.stop,
        ),
        Err(e) => (Vec::new(), Some(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{CodecOptions, compress_stream};

    fn frame(data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let opts = CodecOptions {
            threads: 1,
            ..CodecOptions::default()
        };
        compress_stream(data, &mut out, &opts, Some(data.len() as u64)).expect("compress");
        out
    }

    #[test]
    fn frames_torn_tails_and_corruption() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("a.zst");
        let (a, b) = (frame(b"one\ntwo\n"), frame(&b"three\n".repeat(50_000)));
        let mut data = [a.clone(), b.clone()].concat();
        std::fs::write(&p, &data).expect("write");
        let s = scan_frames(&p, None).expect("scan");
        assert_eq!(s.frames.len(), 2);
        assert_eq!((s.end(), s.stop.as_deref()), (data.len() as u64, None));
        assert_eq!(s.frames[1].lines, 50_000);
        assert!(s.frames.iter().all(|f| f.checksummed));
        assert_eq!(s.totals_at(a.len() as u64), Some((2, 8, 1)));
        assert_eq!(s.totals_at(3), None);
        assert_eq!(s.boundary_with(2, 8), Some((a.len() as u64, 1)));
        assert_eq!(
            s.boundary_with(50_002, 300_008),
            Some((data.len() as u64, 2))
        );
        assert_eq!(s.boundary_with(0, 0), Some((0, 0)));
        assert_eq!(s.boundary_with(3, 8), None);

        // A torn third frame.
        data.extend_from_slice(&frame(b"four\n")[..7]);
        std::fs::write(&p, &data).expect("write");
        let s = scan_frames(&p, None).expect("scan");
        assert_eq!(s.frames.len(), 2);
        assert!(
            s.stop.as_deref().is_some_and(|m| m.contains("incomplete")),
            "{s:?}"
        );

        // A flipped byte inside the second frame: its checksum (or structure) fails.
        let mut bad = [a.clone(), b.clone()].concat();
        let at = a.len() + b.len() / 2;
        bad[at] ^= 0x55;
        std::fs::write(&p, &bad).expect("write");
        let s = scan_frames(&p, None).expect("scan");
        assert_eq!(s.frames.len(), 1);
        assert!(s.stop.is_some());
    }
}
