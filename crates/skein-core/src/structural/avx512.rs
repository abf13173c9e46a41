//! The index's masks from AVX-512: a 64-byte block is one register, and each compare gives
//! its 64-bit mask directly (no `movemask` of two halves). A block's structurals are
//! flattened by `vpcompressb` (AVX512-VBMI2): their byte positions packed to the front of a
//! register and widened to offsets sixteen at a time, instead of a `tzcnt`/`blsr` step per
//! offset (that loop was about a quarter of the AVX2 index's samples in stop 39's `perf
//! annotate`, docs/performance.md).

use std::arch::x86_64::{
    __m128i, __m512i, _mm512_add_epi32, _mm512_castsi512_si128, _mm512_cmpeq_epi8_mask,
    _mm512_cmplt_epu8_mask, _mm512_cvtepu8_epi32, _mm512_extracti32x4_epi32, _mm512_loadu_si512,
    _mm512_maskz_compress_epi8, _mm512_or_si512, _mm512_set1_epi8, _mm512_set1_epi32,
    _mm512_storeu_si512,
};

use super::Masks;

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

/// The masks of `block`, as `super::masks_bytes` gives them.
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
pub(super) fn masks(block: &[u8; 64]) -> Masks {
    let v = load(block);
    // `[ ]` differ from `{ }` by 0x20: one compare each after folding them up.
    let folded = _mm512_or_si512(v, _mm512_set1_epi8(0x20));
    let quote = eq(v, b'"');
    let backslash = eq(v, b'\\');
    Masks {
        quote,
        backslash,
        op: eq(folded, b'{') | eq(folded, b'}') | eq(v, b':') | eq(v, b','),
        ws: eq(v, b' ') | eq(v, b'\t') | eq(v, b'\n') | eq(v, b'\r'),
        ctrl: ctrl(v),
        escapable: quote | backslash | escapable(v),
    }
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

/// `super::escapable_bytes`.
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
pub(super) fn escapable_only(block: &[u8; 64]) -> u64 {
    let v = load(block);
    eq(v, b'"') | eq(v, b'\\') | escapable(v)
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

/// Appends `base + i` to `idx` for every bit `i` set in `bits`, in order.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi2")]
#[inline]
#[allow(clippy::cast_possible_wrap, reason = "offsets below 4 GiB as lanes")]
pub(super) fn flatten(idx: &mut Vec<u32>, bits: u64, base: u32) {
    let count = bits.count_ones() as usize;
    if count == 0 {
        return;
    }
    idx.reserve(64);
    let len = idx.len();
    let packed = _mm512_maskz_compress_epi8(bits, load(&POSITIONS));
    let base = _mm512_set1_epi32(base as i32);
    let out = idx.spare_capacity_mut().as_mut_ptr().cast::<u32>();
    // SAFETY (each `put`): slots `at..at + 16` of the 64 that `reserve(64)` made.
    unsafe {
        put(out, 0, _mm512_castsi512_si128(packed), base);
        if count > 16 {
            put(out, 16, _mm512_extracti32x4_epi32::<1>(packed), base);
        }
        if count > 32 {
            put(out, 32, _mm512_extracti32x4_epi32::<2>(packed), base);
        }
        if count > 48 {
            put(out, 48, _mm512_extracti32x4_epi32::<3>(packed), base);
        }
    }
    // SAFETY: the `count` slots past `len` were written just above (garbage past them, in the
    // spare capacity, is left out by the length).
    unsafe { idx.set_len(len + count) };
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
