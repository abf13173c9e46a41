//! The index at AVX-512: a 64-byte block is one register, and each compare gives its 64-bit
//! mask directly (no `movemask` of two halves). A block's structurals are flattened by
//! `vpcompressb` (AVX512-VBMI2): their byte positions packed to the front of a register and
//! widened to offsets sixteen at a time, instead of a `tzcnt`/`blsr` step per offset (that
//! loop was about a quarter of the AVX2 index's samples in stop 39's `perf annotate`,
//! docs/performance.md).
//!
//! The loop is this level's own ([`index`]), not `index_loop!`: it computes each mask once
//! and only as far as a block needs it (the four of the short path first; the operators and
//! the prefix XOR only for a block with structure; the escapable characters only after an
//! escape other than `\"`, `\\` and `\n`), finds escapes without a branch, keeps the lengths
//! of its outputs in registers, and notes whether the text is ASCII as it goes, which spares
//! an ASCII line its UTF-8 check (`Structure::index_str`). Control characters outside
//! strings are taken as whitespace, and those that are not whitespace refuse the line, as at
//! every level. Stop 44 measured it at 0.77–0.80× the shared loop's time on the corpus
//! (docs/performance.md).

use std::arch::x86_64::{
    __m128i, __m512i, _mm512_add_epi32, _mm512_castsi512_si128, _mm512_cmpeq_epi8_mask,
    _mm512_cmplt_epu8_mask, _mm512_cvtepu8_epi32, _mm512_extracti32x4_epi32, _mm512_loadu_si512,
    _mm512_maskz_compress_epi8, _mm512_movepi8_mask, _mm512_or_si512, _mm512_set1_epi8,
    _mm512_set1_epi32, _mm512_storeu_si512,
};

/// Whether this CPU runs this module's functions and the AVX2 module's `prefix_xor` (checked
/// once).
pub(super) fn available() -> bool {
    static HAS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *HAS.get_or_init(|| {
        super::avx2::available()
            && std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512vbmi2")
    })
}

#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
fn load(block: &[u8; 64]) -> __m512i {
    // SAFETY: reads the 64 bytes of the array (an unaligned load).
    unsafe { _mm512_loadu_si512(block.as_ptr().cast()) }
}

#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
#[allow(clippy::cast_possible_wrap, reason = "byte patterns")]
fn eq(v: __m512i, c: u8) -> u64 {
    _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(c as i8))
}

/// Bytes below 0x20.
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
fn ctrl(v: __m512i) -> u64 {
    _mm512_cmplt_epu8_mask(v, _mm512_set1_epi8(0x20))
}

/// `/ b f n r t` (with the quote and the backslash, what may follow a backslash).
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
fn escapable(v: __m512i) -> u64 {
    eq(v, b'/') | eq(v, b'b') | eq(v, b'f') | eq(v, b'n') | eq(v, b'r') | eq(v, b't')
}

/// `super::string_masks_bytes`: quotes, backslashes, `n`s and bytes below 0x20.
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
pub(super) fn string_masks(block: &[u8; 64]) -> [u64; 4] {
    let v = load(block);
    [eq(v, b'"'), eq(v, b'\\'), eq(v, b'n'), ctrl(v)]
}

/// Byte `i` is `i`: what `vpcompressb` packs the set bits' positions from.
const POSITIONS: [u8; 64] = {
    let mut p = [0u8; 64];
    let mut i = 0;
    while i < 64 {
        p[i] = i as u8;
        i += 1;
    }
    p
};

/// Writes `base + i` for every bit `i` set in `bits`, in order, to `out` and the slots after
/// it; gives how many. Sixteen are written whatever the count (garbage past it).
///
/// # Safety
/// `out[..64]` must be writable.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi2")]
#[inline]
#[allow(clippy::cast_possible_wrap, reason = "offsets below 4 GiB as lanes")]
pub(super) unsafe fn flatten_into(out: *mut u32, bits: u64, base: u32) -> usize {
    let count = bits.count_ones() as usize;
    let packed = _mm512_maskz_compress_epi8(bits, load(&POSITIONS));
    let base = _mm512_set1_epi32(base as i32);
    // SAFETY (each `put`): slots `at..at + 16` of the caller's 64.
    unsafe {
        put(out, 0, _mm512_castsi512_si128(packed), base);
        if count > 16 {
            put(out, 16, _mm512_extracti32x4_epi32::<1>(packed), base);
            if count > 32 {
                put(out, 32, _mm512_extracti32x4_epi32::<2>(packed), base);
                if count > 48 {
                    put(out, 48, _mm512_extracti32x4_epi32::<3>(packed), base);
                }
            }
        }
    }
    count
}

/// Writes the 16 positions in `bytes` plus `base` as offsets to `out[at..at + 16]`.
///
/// # Safety
/// `out[at..at + 16]` must be writable.
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
unsafe fn put(out: *mut u32, at: usize, bytes: __m128i, base: __m512i) {
    let offsets = _mm512_add_epi32(_mm512_cvtepu8_epi32(bytes), base);
    // SAFETY: the caller's.
    unsafe { _mm512_storeu_si512(out.add(at).cast(), offsets) };
}

/// What one block hands the next, and where the index's offsets go.
struct Carry {
    /// Whether the previous block ended inside an odd run of backslashes.
    odd: u64,
    /// All ones when the previous block ended inside a string.
    in_string: u64,
    /// Whether the previous block's last byte belonged to a scalar.
    scalar: u64,
    /// What makes the line one to refuse.
    bad: u64,
    /// The bytes of 0x80 or more.
    high: u64,
    base: u32,
    /// The offsets written so far (`idx`'s length is set once, at the end).
    len: usize,
}

/// `super::index_loop!`'s work for one block, with the masks computed once and only as far
/// as the block needs them (a macro: a function, even `#[inline]`, stayed a call per block).
macro_rules! step {
    ($idx:ident, $chars:ident, $escapes:ident, $c:ident, $block:expr) => {{
        let v = load($block);
        let quote = eq(v, b'"');
        let backslash = eq(v, b'\\');
        let ctrl = ctrl(v);
        $c.high |= _mm512_movepi8_mask(v);
        let escaped = super::escaped_chars_always(backslash, &mut $c.odd);
        // `\"`, `\\` and `\n` are valid escapes; the others are checked.
        let other = escaped & !(quote | backslash | eq(v, b'n'));
        if other != 0 {
            $c.bad |= other & !escapable(v);
        }
        if let Some(slot) = $escapes.next() {
            slot.write((backslash, escaped));
        }
        let quote = quote & !escaped;
        if $c.in_string != 0 && quote == 0 {
            $c.bad |= ctrl;
        } else {
            let folded = _mm512_or_si512(v, _mm512_set1_epi8(0x20));
            let op = eq(folded, b'{') | eq(folded, b'}') | eq(v, b':') | eq(v, b',');
            // Control characters outside strings count as whitespace here, and the ones that
            // are not (all but tab, line feed and carriage return) refuse the line below.
            let ws = eq(v, b' ') | ctrl;
            let (structural, string_tail) = super::structurals(
                quote,
                super::avx2::prefix_xor(quote),
                op,
                ws,
                &mut $c.in_string,
                &mut $c.scalar,
            );
            $c.bad |= ctrl & string_tail;
            let stray = ctrl & !string_tail;
            if stray != 0 {
                $c.bad |= stray & !(eq(v, b'\t') | eq(v, b'\n') | eq(v, b'\r'));
            }
            if $idx.capacity() - $c.len < 64 || $chars.capacity() - $c.len < 64 {
                // SAFETY: the `len` offsets and bytes were written (below, in earlier blocks).
                unsafe {
                    $idx.set_len($c.len);
                    $chars.set_len($c.len);
                }
                $idx.reserve(64);
                $chars.reserve(64);
            }
            // SAFETY: 64 bytes of room past `len`, just made sure of; the structurals' bytes
            // packed to the front, garbage after them.
            unsafe {
                _mm512_storeu_si512(
                    $chars.as_mut_ptr().add($c.len).cast(),
                    _mm512_maskz_compress_epi8(structural, v),
                );
            }
            // SAFETY: 64 slots of room past `len`, just made sure of.
            $c.len += unsafe { flatten_into($idx.as_mut_ptr().add($c.len), structural, $c.base) };
        }
        $c.base = $c.base.wrapping_add(64);
    }};
}

/// `Structure::index` with AVX-512 (see the module's text). The caller makes sure the CPU has
/// what [`available`] checks.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi2,pclmulqdq,popcnt,bmi1")]
pub(super) fn index(s: &mut super::Structure, text: &[u8]) -> bool {
    let super::Structure {
        idx,
        escapes,
        chars,
        ascii,
    } = s;
    idx.clear();
    chars.clear();
    escapes.clear();
    if u32::try_from(text.len()).is_err() {
        return false;
    }
    let blocks = text.len().div_ceil(64);
    escapes.reserve(blocks);
    let mut c = Carry {
        odd: 0,
        in_string: 0,
        scalar: 0,
        bad: 0,
        high: 0,
        base: 0,
        len: 0,
    };
    let filled = {
        let mut slots = escapes.spare_capacity_mut()[..blocks].iter_mut();
        let chunks = text.chunks_exact(64);
        let rest = chunks.remainder();
        for block in chunks {
            if let Ok(block) = <&[u8; 64]>::try_from(block) {
                step!(idx, chars, slots, c, block);
            }
        }
        if !rest.is_empty() {
            let mut tail = [b' '; 64];
            tail[..rest.len()].copy_from_slice(rest);
            step!(idx, chars, slots, c, &tail);
        }
        // (All of them: a block each.)
        blocks - slots.len()
    };
    // SAFETY: every slot of `escapes` taken from the iterator was written by its block, and
    // the `len` offsets of `idx` were written.
    unsafe {
        escapes.set_len(filled);
        idx.set_len(c.len);
        chars.set_len(c.len);
    }
    *ascii = c.high == 0;
    c.in_string == 0 && c.bad == 0
}
