//! The data path of an ingest: find the last complete line, then stream the new source bytes
//! through the optional per-line transform into exactly one zstd frame.

use std::fs::File;
use std::io::Write;
use std::path::Path;

use skein_core::page::settle_in_page;
use skein_store::SyncBehind;
use skein_store::append::read_exact_at;

use crate::codec::{CodecOptions, encoder};
use crate::error::{IoContext, Result, corrupt};
use crate::ingest::Transform;

/// Source bytes read per step: the lines' block (`skein_core::lines::DEFAULT_BLOCK`). The
/// archive measured alike with it and with the 4 MiB steps it read before (docs/performance.md,
/// stop 33); the small step keeps the buffer small.
const CHUNK: usize = skein_core::lines::DEFAULT_BLOCK;
/// How far past its place in its page of the source each read lands. Two copies follow each
/// other here: the kernel's into `buf`, then zstd's out of it into its job buffer; either is
/// three times as slow when its destination sits 1 to 31 bytes past its source within a page
/// (`skein_core::page`). Measured: landing in page (0) made zstd's copy the slow one (its buffer
/// sits 16 bytes into a page, as a heap buffer from `mmap` does), landing 16 bytes off the
/// kernel's; half a page keeps both fast (docs/performance.md, "The archive's two copies").
const SKEW: u64 = 2048;
/// Transformed bytes buffered before they are handed to the encoder.
const FLUSH: usize = 1 << 20;
/// Compressed bytes after which the disk is asked to start writing them.
const WRITEBACK: u64 = 8 << 20;

/// The archive file the frame goes to: counts the bytes and, every [`WRITEBACK`] bytes, has
/// them written and synced behind the pump ([`SyncBehind`]), so the sync of the commit (a
/// 462 MB session makes a 74 MB frame) finds them on disk instead of writing them all while it
/// waits.
struct FrameOut<'f> {
    file: &'f File,
    n: u64,
    kicked: u64,
    behind: SyncBehind,
}

impl Write for FrameOut<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.file.write(buf)?;
        self.n += n as u64;
        if self.n - self.kicked >= WRITEBACK {
            // Advice only: the commit's sync is what makes the frame durable.
            self.behind.kick(self.file);
            self.kicked = self.n;
        }
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

impl<'f> FrameOut<'f> {
    fn new(file: &'f File) -> Self {
        Self {
            file,
            n: 0,
            kicked: 0,
            behind: SyncBehind::default(),
        }
    }
}

#[derive(Debug, Default)]
pub(crate) struct PumpStats {
    pub(crate) src_lines: u64,
    pub(crate) out_lines: u64,
    pub(crate) out_bytes: u64,
    pub(crate) compressed: u64,
    pub(crate) frames: u64,
}

/// Streams `start..end` of the source through the transform into one zstd frame.
#[allow(clippy::too_many_arguments)]
pub(crate) fn pump(
    source: &File,
    src_path: &Path,
    start: u64,
    end: u64,
    (out, out_path): (&File, &Path),
    codec: &CodecOptions,
    dict: Option<&[u8]>,
    always_frame: bool,
    mut transform: Option<&mut Transform<'_>>,
) -> Result<PumpStats> {
    let len = end - start;
    // Without a transform exactly `len` bytes go in, so the size can be pledged.
    let exact = transform.is_none();
    let mut enc = None;
    let mut sink = |data: &[u8], lines: Option<u64>, st: &mut PumpStats| -> Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        st.out_lines += lines.unwrap_or_else(|| memchr::memchr_iter(b'\n', data).count() as u64);
        st.out_bytes += data.len() as u64;
        if enc.is_none() {
            enc = Some(encoder(FrameOut::new(out), codec, (Some(len), exact), dict).ctx(out_path)?);
        }
        if let Some(e) = enc.as_mut() {
            e.write_all(data).ctx(out_path)?;
        }
        Ok(())
    };
    let mut st = PumpStats::default();
    let mut buf = Vec::new();
    let mut tbuf: Vec<u8> = Vec::new();
    // What is read sits in `buf[lead..lead + carry + want]`, half a page past where it sits in
    // its page of the source (`settle_in_page`, SKEW).
    let (mut pos, mut lead, mut carry) = (start, 0usize, 0usize);
    while pos < end {
        let want = (end - pos).min(CHUNK as u64) as usize;
        lead = settle_in_page(&mut buf, lead..lead + carry, pos.wrapping_add(SKEW), want);
        let filled = lead + carry + want;
        read_exact_at(source, &mut buf[lead + carry..filled], pos).ctx(src_path)?;
        pos += want as u64;
        let upto = if pos == end {
            if buf[filled - 1] != b'\n' {
                return Err(corrupt(src_path, "source changed while being archived"));
            }
            filled
        } else {
            // The carry holds no newline (it is what followed the last one): look only at the
            // new bytes, so that a line of many chunks is not searched again at every step.
            memchr::memrchr(b'\n', &buf[lead + carry..filled])
                .map_or(lead, |i| lead + carry + i + 1)
        };
        let chunk = &buf[lead..upto];
        let chunk_lines = memchr::memchr_iter(b'\n', chunk).count() as u64;
        st.src_lines += chunk_lines;
        match transform.as_deref_mut() {
            None => sink(chunk, Some(chunk_lines), &mut st)?,
            Some(t) => {
                let mut rest = chunk;
                while !rest.is_empty() {
                    let cut = memchr::memchr(b'\n', rest).map_or(rest.len(), |i| i + 1);
                    let before = tbuf.len();
                    t(&rest[..cut], &mut tbuf);
                    if tbuf.len() > before && tbuf.last() != Some(&b'\n') {
                        tbuf.push(b'\n');
                    }
                    rest = &rest[cut..];
                    if tbuf.len() >= FLUSH {
                        sink(&tbuf, None, &mut st)?;
                        tbuf.clear();
                    }
                }
            }
        }
        (lead, carry) = (upto, filled - upto);
    }
    sink(&tbuf, None, &mut st)?;
    if enc.is_none() && always_frame {
        // A new file always gets a (possibly empty) frame so it is a valid zstd stream.
        enc = Some(encoder(FrameOut::new(out), codec, (Some(0), true), dict).ctx(out_path)?);
    }
    if let Some(e) = enc {
        let w = e.finish().ctx(out_path)?;
        st.compressed = w.n;
        st.frames = 1;
    }
    Ok(st)
}
