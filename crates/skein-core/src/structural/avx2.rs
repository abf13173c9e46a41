//! The index's masks from AVX2: each 64-byte block as two 32-byte halves, compared and
//! moved to bit masks (`movemask`), and the prefix XOR as one carry-less multiplication.

use std::arch::x86_64::{
    __m256i, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_max_epu8, _mm256_movemask_epi8,
    _mm256_or_si256, _mm256_set1_epi8,
};

use super::Masks;

/// Whether this CPU runs [`masks`] and [`prefix_xor`] (checked once).
pub(super) fn available() -> bool {
    static HAS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *HAS.get_or_init(|| {
        std::is_x86_feature_detected!("avx2")
            && std::is_x86_feature_detected!("pclmulqdq")
            && std::is_x86_feature_detected!("popcnt")
            && std::is_x86_feature_detected!("bmi1")
    })
}

#[target_feature(enable = "avx2")]
#[inline]
#[allow(clippy::cast_possible_wrap, reason = "byte patterns")]
fn eq(v: __m256i, c: u8) -> __m256i {
    _mm256_cmpeq_epi8(v, _mm256_set1_epi8(c as i8))
}

#[target_feature(enable = "avx2")]
#[inline]
#[allow(clippy::cast_sign_loss, reason = "a movemask is 32 bits")]
fn bits(lo: __m256i, hi: __m256i) -> u64 {
    u64::from(_mm256_movemask_epi8(lo) as u32) | (u64::from(_mm256_movemask_epi8(hi) as u32) << 32)
}

/// `{ } [ ] : ,`: `[ ]` differ from `{ }` by 0x20, one compare each after folding them up.
#[target_feature(enable = "avx2")]
#[inline]
fn op(v: __m256i) -> __m256i {
    let folded = _mm256_or_si256(v, _mm256_set1_epi8(0x20));
    _mm256_or_si256(
        _mm256_or_si256(eq(folded, b'{'), eq(folded, b'}')),
        _mm256_or_si256(eq(v, b':'), eq(v, b',')),
    )
}

/// Bytes below 0x20.
#[target_feature(enable = "avx2")]
#[inline]
fn ctrl(v: __m256i) -> __m256i {
    let max = _mm256_set1_epi8(0x1f);
    _mm256_cmpeq_epi8(_mm256_max_epu8(v, max), max)
}

/// `/ b f n r t` (with the quote and the backslash, what may follow a backslash).
#[target_feature(enable = "avx2")]
#[inline]
fn escapable(v: __m256i) -> __m256i {
    _mm256_or_si256(
        _mm256_or_si256(
            _mm256_or_si256(eq(v, b'/'), eq(v, b'b')),
            _mm256_or_si256(eq(v, b'f'), eq(v, b'n')),
        ),
        _mm256_or_si256(eq(v, b'r'), eq(v, b't')),
    )
}

/// Everything that may follow a backslash: [`escapable`] with the block's quotes and
/// backslashes (given, where the caller has them already).
#[target_feature(enable = "avx2")]
#[inline]
fn escapable_with(v: __m256i, quote: __m256i, backslash: __m256i) -> __m256i {
    _mm256_or_si256(escapable(v), _mm256_or_si256(quote, backslash))
}

/// Tab, line feed, carriage return.
#[target_feature(enable = "avx2")]
#[inline]
fn tnr(v: __m256i) -> __m256i {
    _mm256_or_si256(_mm256_or_si256(eq(v, b'\t'), eq(v, b'\n')), eq(v, b'\r'))
}

/// [`super::prefix_xor`] in one carry-less multiplication by all ones.
#[target_feature(enable = "avx2,pclmulqdq")]
#[inline]
#[allow(
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    reason = "bit patterns"
)]
pub(super) fn prefix_xor(x: u64) -> u64 {
    use std::arch::x86_64::{
        _mm_clmulepi64_si128, _mm_cvtsi128_si64, _mm_set_epi64x, _mm_set1_epi8,
    };
    _mm_cvtsi128_si64(_mm_clmulepi64_si128(
        _mm_set_epi64x(0, x as i64),
        _mm_set1_epi8(-1),
        0,
    )) as u64
}

/// [`super::string_masks_bytes`].
#[target_feature(enable = "avx2")]
#[inline]
pub(super) fn string_masks(block: &[u8; 64]) -> [u64; 4] {
    let (lo, hi) = halves(block);
    [
        bits(eq(lo, b'"'), eq(hi, b'"')),
        bits(eq(lo, b'\\'), eq(hi, b'\\')),
        bits(eq(lo, b'n'), eq(hi, b'n')),
        bits(ctrl(lo), ctrl(hi)),
    ]
}

/// The two 32-byte halves of `block`.
#[target_feature(enable = "avx2")]
#[inline]
fn halves(block: &[u8; 64]) -> (__m256i, __m256i) {
    // SAFETY: both loads read 32 bytes inside the 64-byte array (unaligned loads).
    #[allow(clippy::cast_ptr_alignment, reason = "`loadu` loads unaligned")]
    unsafe {
        (
            _mm256_loadu_si256(block.as_ptr().cast::<__m256i>()),
            _mm256_loadu_si256(block.as_ptr().add(32).cast::<__m256i>()),
        )
    }
}

/// [`super::escapable_bytes`].
#[target_feature(enable = "avx2")]
#[inline]
pub(super) fn escapable_only(block: &[u8; 64]) -> u64 {
    let (lo, hi) = halves(block);
    let all = |v| escapable_with(v, eq(v, b'"'), eq(v, b'\\'));
    bits(all(lo), all(hi))
}

/// The masks of `block`, as [`super::masks_bytes`] gives them.
#[target_feature(enable = "avx2")]
#[inline]
pub(super) fn masks(block: &[u8; 64]) -> Masks {
    let (lo, hi) = halves(block);
    let (quote_lo, quote_hi) = (eq(lo, b'"'), eq(hi, b'"'));
    let (backslash_lo, backslash_hi) = (eq(lo, b'\\'), eq(hi, b'\\'));
    Masks {
        quote: bits(quote_lo, quote_hi),
        backslash: bits(backslash_lo, backslash_hi),
        escapable: bits(
            escapable_with(lo, quote_lo, backslash_lo),
            escapable_with(hi, quote_hi, backslash_hi),
        ),
        op: bits(op(lo), op(hi)),
        ws: bits(
            _mm256_or_si256(eq(lo, b' '), tnr(lo)),
            _mm256_or_si256(eq(hi, b' '), tnr(hi)),
        ),
        ctrl: bits(ctrl(lo), ctrl(hi)),
    }
}
