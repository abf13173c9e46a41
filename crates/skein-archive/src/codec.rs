//! zstd settings and single-file helpers: streaming compression (multi-threaded for big
//! inputs, optional long-distance window) and decompression that finds trained dictionaries.
//!
//! Every frame skein writes carries a content checksum, so corruption is detected on decode.
//! Decoders accept windows up to 2^31 so `--long=31` archives read back.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::Path;

use skein_core::PageReader;
use zstd::stream::read::Decoder;
use zstd::stream::write::Encoder;

use crate::error::{ArchiveError, IoContext, Result};

/// Inputs at least this big are compressed with worker threads when `threads` is 0 (auto).
pub const MT_THRESHOLD: u64 = 4 << 20;

/// Levels at and below this one (the default) compress blocks whole: speed is what they are
/// chosen for. Higher levels keep zstd's block splitting, which gains them ratio.
const FAST_LEVEL: i32 = 3;

/// One byte under zstd's 128 KiB block: the largest block libzstd 1.5.7 does not split.
const UNSPLIT_BLOCK: u32 = (128 << 10) - 1;

/// Largest window the decoders accept (log2).
pub const MAX_WINDOW_LOG: u32 = 31;

/// How to compress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodecOptions {
    /// zstd level (1..=22, or negative fast levels down to -7). Default 3.
    pub level: i32,
    /// Long-distance matching with this window log (10..=31), e.g. 27 for `--long`.
    /// Windows above 27 need a decoder that allows them (skein's do; `zstd -d` needs `--long=N`).
    pub long: Option<u32>,
    /// Worker threads: 0 = automatic (all cores, at most 4, for inputs ≥ 4 MiB; none below),
    /// 1 = single-threaded, n = n workers.
    pub threads: u32,
}

impl Default for CodecOptions {
    fn default() -> Self {
        Self {
            level: 3,
            long: None,
            threads: 0,
        }
    }
}

impl CodecOptions {
    /// Refuses levels and windows zstd would reject.
    pub fn validate(&self) -> Result<()> {
        if !(-7..=22).contains(&self.level) || self.level == 0 {
            return Err(ArchiveError::Option(format!(
                "zstd level {} (use 1..=22 or -7..=-1)",
                self.level
            )));
        }
        if let Some(w) = self.long
            && !(10..=MAX_WINDOW_LOG).contains(&w)
        {
            return Err(ArchiveError::Option(format!(
                "long window log {w} (use 10..=31)"
            )));
        }
        Ok(())
    }

    /// Worker threads for an input of `len` bytes (`None`: unknown size).
    pub fn workers_for(&self, len: Option<u64>) -> u32 {
        match self.threads {
            0 if len.is_none_or(|l| l >= MT_THRESHOLD) => std::thread::available_parallelism()
                .map_or(2, |n| n.get() as u32)
                .clamp(2, 4),
            0 | 1 => 0,
            n => n,
        }
    }
}

/// A zstd encoder writing one frame into `w` with skein's settings. `len` is the expected input
/// size (picks threads); with `exact` it is pledged, which records the content size in the frame
/// and lets zstd shrink its tables for small inputs (a must for high levels and long windows).
pub(crate) fn encoder<W: Write>(
    w: W,
    opts: &CodecOptions,
    (len, exact): (Option<u64>, bool),
    dict: Option<&[u8]>,
) -> io::Result<Encoder<'static, W>> {
    let mut enc = match dict {
        Some(d) => Encoder::with_dictionary(w, opts.level, d)?,
        None => Encoder::new(w, opts.level)?,
    };
    enc.include_checksum(true)?;
    if exact {
        enc.set_pledged_src_size(len)?;
    }
    let workers = opts.workers_for(len);
    if workers > 0 {
        // zstd's own overlap between jobs (1/8 of the window at level 3), as `zstd -T0` has: a
        // full window cost 4 % more of zstd's instructions for 0.15 % fewer bytes on real
        // transcripts (3.4 % on a synthetic session that re-reads its files within megabytes).
        enc.multithread(workers)?;
    }
    if opts.level <= FAST_LEVEL {
        // libzstd 1.5.7 looks for a place to split each full 128 KiB block before compressing
        // it (the 1.5.4 CLI did not), and skips that for smaller blocks. With zstd's overlap
        // and whole blocks, a session takes 8.7 % fewer instructions to compress and its frame
        // is as small as `zstd -3 -T0`'s, within 0.2 % (docs/performance.md, "zstd as the CLI
        // sets it").
        enc.set_parameter(zstd::zstd_safe::CParameter::MaxBlockSize(UNSPLIT_BLOCK))?;
    }
    if let Some(wlog) = opts.long {
        enc.long_distance_matching(true)?;
        enc.window_log(wlog)?;
    }
    Ok(enc)
}

/// A decoder for concatenated frames, optionally with a dictionary.
pub(crate) fn decoder<R: Read>(
    r: R,
    dict: Option<&[u8]>,
) -> io::Result<Decoder<'static, PageReader<R>>> {
    // (A `BufReader`'s buffer starts 16 bytes into its page: every read of the file would take
    // the kernel's slow copy, `skein_core::page`.)
    let mut dec = match dict {
        Some(d) => Decoder::with_dictionary(PageReader::with_capacity(1 << 17, r), d)?,
        None => Decoder::with_buffer(PageReader::with_capacity(1 << 17, r))?,
    };
    dec.window_log_max(MAX_WINDOW_LOG)?;
    Ok(dec)
}

/// Bytes in and out of a compress/decompress call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CodecReport {
    pub bytes_in: u64,
    pub bytes_out: u64,
}

/// Compresses `input` into `output` as one frame. `size_hint` picks multi-threading.
pub fn compress_stream<R: Read, W: Write>(
    mut input: R,
    output: W,
    opts: &CodecOptions,
    size_hint: Option<u64>,
) -> io::Result<CodecReport> {
    let mut out = CountingWriter {
        inner: output,
        n: 0,
    };
    let mut enc = encoder(&mut out, opts, (size_hint, false), None)?;
    let bytes_in = io::copy(&mut input, &mut enc)?;
    enc.finish()?;
    out.flush()?;
    Ok(CodecReport {
        bytes_in,
        bytes_out: out.n,
    })
}

/// Decompresses all frames of `input` (no dictionary) into `output`.
pub fn decompress_stream<R: Read, W: Write>(input: R, mut output: W) -> io::Result<CodecReport> {
    let mut inp = CountingReader { inner: input, n: 0 };
    let mut dec = decoder(&mut inp, None)?;
    let bytes_out = io::copy(&mut dec, &mut output)?;
    drop(dec);
    output.flush()?;
    Ok(CodecReport {
        bytes_in: inp.n,
        bytes_out,
    })
}

/// Compresses one file into `output` (replaced atomically, mode 0600).
/// An `output` that is `input` (by identity) is refused.
pub fn compress_file(input: &Path, output: &Path, opts: &CodecOptions) -> Result<CodecReport> {
    opts.validate()?;
    skein_store::ensure_not_input(output, &[input])?;
    let src = File::open(input).ctx(input)?;
    let len = src.metadata().ctx(input)?.len();
    let mut dst = skein_store::AtomicFile::create(output).ctx(output)?;
    dst.set_mode(0o600).ctx(output)?;
    let mut reader = TaggedReader {
        inner: src,
        failed: false,
    };
    let report = compress_stream(&mut reader, &mut dst, opts, Some(len));
    let report = match report {
        Ok(r) => r,
        Err(e) if reader.failed => return Err(e).ctx(input),
        Err(e) => return Err(e).ctx(output),
    };
    dst.commit().ctx(output)?;
    Ok(report)
}

/// Decompresses one `.zst` file (an archive file's trained dictionary and committed length are
/// honoured, see [`crate::open_archived`]) into `output` (replaced atomically, mode 0600). An
/// `output` that is `input` (by identity) is refused.
pub fn decompress_file(input: &Path, output: &Path) -> Result<CodecReport> {
    skein_store::ensure_not_input(output, &[input])?;
    let mut reader = crate::reader::open_archived(input)?;
    let mut dst = skein_store::AtomicFile::create(output).ctx(output)?;
    dst.set_mode(0o600).ctx(output)?;
    let mut buf = vec![0u8; 1 << 20];
    let mut bytes_out = 0u64;
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e).ctx(input),
        };
        dst.write_all(&buf[..n]).ctx(output)?;
        bytes_out += n as u64;
    }
    dst.commit().ctx(output)?;
    let bytes_in = std::fs::metadata(input).ctx(input)?.len();
    Ok(CodecReport {
        bytes_in,
        bytes_out,
    })
}

/// Counts bytes written through it.
pub(crate) struct CountingWriter<W> {
    pub(crate) inner: W,
    pub(crate) n: u64,
}

impl<W: Write> Write for CountingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.n += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

struct CountingReader<R> {
    inner: R,
    n: u64,
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.n += n as u64;
        Ok(n)
    }
}

/// Remembers whether an error came from the input side.
struct TaggedReader<R> {
    inner: R,
    failed: bool,
}

impl<R: Read> Read for TaggedReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf).inspect_err(|_| self.failed = true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sizes of the blocks of the one frame in `z`, as their headers give them (compressed
    /// or raw size; zstd's frame format, RFC 8878 section 3.1.1).
    fn block_sizes(z: &[u8]) -> Vec<usize> {
        assert_eq!(z[..4], crate::frames::MAGIC.to_le_bytes(), "zstd magic");
        let fhd = z[4];
        let single = fhd & 0x20 != 0;
        let fcs = match fhd >> 6 {
            0 => usize::from(single),
            1 => 2,
            2 => 4,
            _ => 8,
        };
        let dict = [0, 1, 2, 4][usize::from(fhd & 3)];
        let mut at = 5 + usize::from(!single) + dict + fcs;
        let mut sizes = Vec::new();
        loop {
            let h = u32::from_le_bytes([z[at], z[at + 1], z[at + 2], 0]);
            let size = (h >> 3) as usize;
            sizes.push(size);
            // An RLE block holds one byte, whatever size it stands for.
            at += 3 + if (h >> 1) & 3 == 1 { 1 } else { size };
            if h & 1 == 1 {
                return sizes;
            }
        }
    }

    /// At the default level a block is never split: four bytes short of a mebibyte go into
    /// blocks of [`UNSPLIT_BLOCK`] bytes, nine of them (blocks of 128 KiB would be eight, and
    /// more wherever libzstd split one).
    #[test]
    fn default_level_blocks_are_whole() {
        let mut rng = skein_testkit::Xorshift::new(0x9e37_79b9_7f4a_7c15);
        let mut data = Vec::new();
        let len = (1 << 20) - 4;
        while data.len() < len {
            let n = rng.next();
            let line = format!("{{\"n\":{},\"t\":\"{:x}\"}}\n", n % 1000, n % 65_536);
            data.extend_from_slice(line.as_bytes());
        }
        data.truncate(len);
        let pledged = Some(len as u64);
        let mut enc =
            encoder(Vec::new(), &CodecOptions::default(), (pledged, true), None).expect("encoder");
        enc.write_all(&data).expect("write");
        let z = enc.finish().expect("finish");
        let blocks = block_sizes(&z);
        assert_eq!(
            blocks.len(),
            len.div_ceil(UNSPLIT_BLOCK as usize),
            "{blocks:?}"
        );
        assert_eq!(zstd::decode_all(&z[..]).expect("decode"), data);
    }

    #[test]
    fn file_round_trip_with_long_window_and_threads() {
        let dir = tempfile::tempdir().expect("tempdir");
        let plain = dir.path().join("a.jsonl");
        let data: Vec<u8> = (0..200_000)
            .flat_map(|i| format!("{{\"i\":{i},\"t\":\"user\"}}\n").into_bytes())
            .collect();
        std::fs::write(&plain, &data).expect("write");
        for opts in [
            CodecOptions::default(),
            CodecOptions {
                level: 9,
                long: Some(28),
                threads: 2,
            },
        ] {
            let z = dir.path().join("a.jsonl.zst");
            let r = compress_file(&plain, &z, &opts).expect("compress");
            assert_eq!(r.bytes_in, data.len() as u64);
            assert!(r.bytes_out < r.bytes_in / 5, "{r:?}");
            let back = dir.path().join("b.jsonl");
            let d = decompress_file(&z, &back).expect("decompress");
            assert_eq!(d.bytes_out, data.len() as u64);
            assert_eq!(std::fs::read(&back).expect("read"), data);
        }
        let bad = CodecOptions {
            level: 40,
            ..CodecOptions::default()
        };
        assert!(compress_file(&plain, &dir.path().join("x"), &bad).is_err());
    }
}
