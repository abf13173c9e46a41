//! Stage 1 of a JSON parse, and nothing after it: where a line's structural characters are
//! (`{ } [ ] : ,`, every string's opening quote, the first byte of every other value), and
//! which characters are escaped. [`crate::lazy`] walks these to read a few fields of a line
//! without building simd-json's tape or unescaping the strings it does not read.
//!
//! The technique is simdjson's (Langdale and Lemire, "Parsing Gigabytes of JSON per Second"):
//! each 64-byte block becomes bit masks (quotes, backslashes, operators, whitespace, control
//! characters), odd runs of backslashes mark escaped characters, a prefix XOR of the unescaped
//! quotes marks what is inside strings, and the bits left are flattened into byte offsets.
//! The masks of one block come from AVX2 where the CPU has it and from a byte loop otherwise,
//! through one loop (`index_loop!`); both give the same masks (`structural::tests`). AVX-512
//! has a loop of its own (`structural/avx512.rs`), held to the same offsets; both loops take
//! the bit work after the masks from one function (`structurals`). A block that
//! starts inside a string and does not close it (two thirds of the bench tree's blocks: tool
//! output, file contents) takes a short path: only its escapes and control characters can
//! matter there.
//!
//! [`Structure::index`] answers `false` for what it does not vouch for: an unclosed string, a
//! control character inside a string or outside one (but the whitespace), an escape other
//! than `\" \\ \/ \b \f \n \r \t` (a `\u` escape included: simd-json checks its surrogates, and
//! the caller lets simd-json judge such lines). UTF-8 is not checked here, but by
//! [`Structure::index_str`].

#![allow(
    unsafe_code,
    reason = "AVX2 intrinsics behind runtime detection; `set_len` over offsets just written; \
              an ASCII line as `str` unchecked"
)]

/// A line's structural offsets and escaped characters (one per 64-byte block), reused from
/// line to line.
#[derive(Debug, Default)]
pub struct Structure {
    /// Byte offsets of the structural characters, in order.
    pub idx: Vec<u32>,
    /// Per 64-byte block: bit `i` of `.0` for a backslash at `64 * b + i`, of `.1` for a byte
    /// that follows an odd run of backslashes (the escaped character a run ends with).
    pub escapes: Vec<(u64, u64)>,
    /// The byte at each offset of `idx` (`chars[i] == text[idx[i]]`): the grammar's walk and
    /// the readers tell values apart by it without a load that waits on the offset's.
    pub chars: Vec<u8>,
    /// Whether the text is known to be ASCII: set where the AVX-512 level saw no byte of
    /// 0x80 or more as it went (the other levels do not look, and leave it `false`).
    ascii: bool,
}

/// The masks of one 64-byte block: bit `i` for byte `i`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Masks {
    quote: u64,
    backslash: u64,
    /// `{ } [ ] : ,`
    op: u64,
    /// space, tab, line feed, carriage return
    ws: u64,
    /// bytes below 0x20
    ctrl: u64,
    /// what may follow a backslash: `" \ / b f n r t`
    escapable: u64,
}

const EVEN_BITS: u64 = 0x5555_5555_5555_5555;

/// Bit `i` set when an odd number of bits at or below `i` are set.
fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

/// The characters escaped by an odd run of backslashes (simdjson's `find_odd_backslash_sequences`):
/// bit `i` set when byte `i` follows a run of an odd number of backslashes (never a backslash
/// itself). `odd_carry` says whether the previous block ended inside such a run. The skim finds
/// escaped quotes with it too.
pub(crate) fn escaped_chars(backslash: u64, odd_carry: &mut u64) -> u64 {
    // (Most blocks hold no backslash and follow none: nothing escaped, no carry.)
    if backslash == 0 && *odd_carry == 0 {
        return 0;
    }
    escaped_chars_always(backslash, odd_carry)
}

/// [`escaped_chars`] without its test for a block with no backslash: the AVX-512 loop's, where
/// blocks with and without backslashes alternate (text with line breaks) and the test was
/// mispredicted (with it the index took 0.82 of the shared loop's time on the corpus, without
/// it 0.77: stop 44, docs/performance.md).
#[inline]
pub(crate) fn escaped_chars_always(backslash: u64, odd_carry: &mut u64) -> u64 {
    let starts = backslash & !(backslash << 1);
    let even_start_mask = EVEN_BITS ^ *odd_carry;
    let even_starts = starts & even_start_mask;
    let odd_starts = starts & !even_start_mask;
    let even_carries = backslash.wrapping_add(even_starts);
    let (mut odd_carries, overflow) = backslash.overflowing_add(odd_starts);
    odd_carries |= *odd_carry;
    *odd_carry = u64::from(overflow);
    let even_carry_ends = even_carries & !backslash;
    let odd_carry_ends = odd_carries & !backslash;
    (even_carry_ends & !EVEN_BITS) | (odd_carry_ends & EVEN_BITS)
}

fn masks_bytes(block: &[u8; 64]) -> Masks {
    let mut m = Masks::default();
    for (i, &b) in block.iter().enumerate() {
        let bit = 1u64 << i;
        match b {
            b'"' => m.quote |= bit,
            b'\\' => m.backslash |= bit,
            b'{' | b'}' | b'[' | b']' | b':' | b',' => m.op |= bit,
            b' ' | b'\t' | b'\n' | b'\r' => m.ws |= bit,
            _ => {}
        }
        if b < 0x20 {
            m.ctrl |= bit;
        }
        if matches!(b, b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') {
            m.escapable |= bit;
        }
    }
    m
}

/// Quote, backslash, `n` and below-0x20 masks alone: the first look at a block that starts
/// inside a string, and the skim's masks ([`skim_masks`]).
pub(crate) fn string_masks_bytes(block: &[u8; 64]) -> [u64; 4] {
    let mut m = [0u64; 4];
    for (i, &b) in block.iter().enumerate() {
        for (mask, hit) in m
            .iter_mut()
            .zip([b == b'"', b == b'\\', b == b'n', b < 0x20])
        {
            *mask |= u64::from(hit) << i;
        }
    }
    m
}

/// The escapable characters alone (the short path's check of the escapes other than `\"`,
/// `\\` and `\n`).
fn escapable_bytes(block: &[u8; 64]) -> u64 {
    masks_bytes(block).escapable
}

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;

/// Bits `from..to` of a block (`from < to <= 64`).
fn span(from: usize, to: usize) -> u64 {
    if to - from == 64 {
        u64::MAX
    } else {
        ((1u64 << (to - from)) - 1) << from
    }
}

/// Which vector instructions a block's masks come from ([`Simd::detect`]: the widest this CPU
/// runs; the benches and tests name each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Simd {
    /// A loop over the bytes (or, in the skim, SSE2).
    Bytes,
    /// AVX2, a carry-less multiply, `popcnt` and `tzcnt`.
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// AVX-512 (F, BW and VBMI2) with the same.
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

impl Simd {
    /// The widest this CPU runs (checked once).
    pub fn detect() -> Self {
        static WIDEST: std::sync::OnceLock<Simd> = std::sync::OnceLock::new();
        *WIDEST.get_or_init(|| Self::all().into_iter().last().unwrap_or(Self::Bytes))
    }

    /// Every level this CPU runs, the bytes' loop first (the tests hold each to it).
    pub fn all() -> Vec<Self> {
        let mut all = vec![Self::Bytes];
        #[cfg(target_arch = "x86_64")]
        all.extend([Self::Avx2, Self::Avx512].into_iter().filter(|s| s.runs()));
        all
    }

    /// Whether this CPU runs this level (checked once per level).
    fn runs(self) -> bool {
        match self {
            Self::Bytes => true,
            #[cfg(target_arch = "x86_64")]
            Self::Avx2 => avx2::available(),
            #[cfg(target_arch = "x86_64")]
            Self::Avx512 => avx512::available(),
        }
    }
}

/// The skim's masks of one block ([`crate::skim`]): quotes, backslashes, `n`s and bytes below
/// 0x20, from AVX-512 or AVX2 as `simd` says ([`Simd::detect`]); `None` for [`Simd::Bytes`],
/// and the skim computes them with SSE2. (`Skim::reduce` with its 16-byte compares inlined was
/// a sixth of the archive's metadata thread's instructions; this is one call per block, since
/// the skim's loop is not compiled for AVX2.)
pub(crate) fn skim_masks(block: &[u8; 64], simd: Simd) -> Option<[u64; 4]> {
    match simd {
        Simd::Bytes => None,
        // SAFETY: `Simd::detect` gives these only where the CPU runs them.
        #[cfg(target_arch = "x86_64")]
        Simd::Avx2 => Some(unsafe { avx2::string_masks(block) }),
        #[cfg(target_arch = "x86_64")]
        Simd::Avx512 => Some(unsafe { avx512::string_masks(block) }),
    }
}

/// Appends `base + i` to `idx` and `block[i]` to `chars` for every bit `i` set in `bits`, in
/// order. Both are written into the spare capacity eight at a time, as simdjson does: the
/// writes past the block's count are garbage the lengths leave out, and there is no check per
/// offset (the per-offset loop was a fifth of the index). Always inlined: compiled into the
/// AVX2 loop, its count and its bit walk are `popcnt` and `tzcnt` (out of line, a call per
/// block and a multiply-and-shift count).
#[inline(always)]
#[allow(
    clippy::inline_always,
    reason = "measured: out of line it is a call per block, counted without `popcnt`"
)]
fn flatten(idx: &mut Vec<u32>, chars: &mut Vec<u8>, mut bits: u64, base: u32, block: &[u8; 64]) {
    idx.reserve(64);
    chars.reserve(64);
    let (len, chars_len) = (idx.len(), chars.len());
    let count = bits.count_ones() as usize;
    let spare = &mut idx.spare_capacity_mut()[..64];
    let spare_chars = &mut chars.spare_capacity_mut()[..64];
    let mut at = 0;
    while at < count {
        for (slot, char_slot) in spare[at..at + 8]
            .iter_mut()
            .zip(&mut spare_chars[at..at + 8])
        {
            let i = bits.trailing_zeros();
            slot.write(base.wrapping_add(i));
            // (`i` is 64 past the last bit: a garbage slot.)
            char_slot.write(block[i as usize & 63]);
            bits &= bits.wrapping_sub(1);
        }
        at += 8;
    }
    // SAFETY: the `count` slots past each length were written just above (`reserve(64)` made
    // room for 64, and a block has at most 64 bits).
    unsafe {
        idx.set_len(len + count);
        chars.set_len(chars_len + count);
    }
}

/// What the full path of a block makes of its unescaped quotes (`quote`, and their prefix XOR
/// `in_quotes`), its operators and its whitespace, given what the previous block handed on
/// (updated for the next): the block's structurals, and the inside of its strings (closing
/// quotes included, opening ones not). The one copy for both loops, `index_loop!` and
/// AVX-512's; always inlined into them, as `flatten` is.
#[inline(always)]
#[allow(
    clippy::inline_always,
    reason = "a few bit operations per block, in loops compiled for their vector level"
)]
fn structurals(
    quote: u64,
    in_quotes: u64,
    op: u64,
    ws: u64,
    in_string_carry: &mut u64,
    scalar_carry: &mut u64,
) -> (u64, u64) {
    let in_string = in_quotes ^ *in_string_carry;
    *in_string_carry = 0u64.wrapping_sub(in_string >> 63);
    let string_tail = in_string ^ quote;
    let scalar = !(op | ws);
    let nonquote_scalar = scalar & !quote;
    let follows_scalar = (nonquote_scalar << 1) | *scalar_carry;
    *scalar_carry = nonquote_scalar >> 63;
    (
        (op | (scalar & !follows_scalar)) & !string_tail,
        string_tail,
    )
}

/// The loop of [`Structure::index`] over `text`'s blocks, with `$masks` giving a block's masks
/// and `$string_masks` and `$escapable` those the short path inside strings reads (a macro, so
/// that the AVX2 copy is compiled for AVX2 whole).
macro_rules! index_loop {
    (
        $s:ident,
        $text:ident,
        $masks:path,
        $prefix_xor:path,
        $string_masks:path,
        $escapable:path,
        $flatten:path
    ) => {{
        let text: &[u8] = $text;
        $s.ascii = false;
        $s.idx.clear();
        $s.chars.clear();
        $s.escapes.clear();
        $s.escapes.reserve(text.len() / 64 + 1);
        if u32::try_from(text.len()).is_err() {
            return false;
        }
        let (mut odd_carry, mut in_string_carry, mut scalar_carry) = (0u64, 0u64, 0u64);
        let mut bad = 0u64;
        let mut base = 0u32;
        let chunks = text.chunks_exact(64);
        // The last, partial block is read from a copy padded with spaces.
        let mut tail = [b' '; 64];
        let rest = chunks.remainder();
        tail[..rest.len()].copy_from_slice(rest);
        let last = (!rest.is_empty()).then_some(&tail);
        for block in chunks
            .filter_map(|c| <&[u8; 64]>::try_from(c).ok())
            .chain(last)
        {
            // A block that starts inside a string and does not close it (tool output, a file's
            // contents: most of a transcript's bytes) holds no structural: only its escapes and
            // control characters count, and the operator, whitespace and prefix-XOR work of
            // the full path below would find nothing. Taken when no quote in it is unescaped.
            if in_string_carry != 0 {
                let [quote, backslash, n, ctrl] = std::hint::black_box($string_masks(block));
                let mut odd = odd_carry;
                let escaped = escaped_chars(backslash, &mut odd);
                if quote & !escaped == 0 {
                    odd_carry = odd;
                    bad |= ctrl;
                    // `\"`, `\\` and `\n` are valid escapes; the others are checked.
                    let other = escaped & !(quote | backslash | n);
                    if other != 0 {
                        bad |= other & !$escapable(block);
                    }
                    // (`scalar_carry` is left as it is: it only says whether the next block's
                    // first byte starts a scalar, and that byte is inside this string or is
                    // its closing quote, which the full path masks out either way.)
                    $s.escapes.push((backslash, escaped));
                    base = base.wrapping_add(64);
                    continue;
                }
            }
            // Through memory on purpose: without `black_box`, LLVM carried the masks' bit
            // operations out as vectors of 64 one-bit lanes (`vpinsrb`/`vpextrb` by the
            // hundred) and the index ran at 1.0 GiB/s instead of 2.4 (`benches/benches/parse.rs`).
            let m = std::hint::black_box($masks(block));
            let escaped = escaped_chars(m.backslash, &mut odd_carry);
            let quote = m.quote & !escaped;
            let (structural, string_tail) = structurals(
                quote,
                $prefix_xor(quote),
                m.op,
                m.ws,
                &mut in_string_carry,
                &mut scalar_carry,
            );
            bad |= m.ctrl & string_tail;
            bad |= m.ctrl & !m.ws & !string_tail;
            bad |= escaped & !m.escapable;
            $s.escapes.push((m.backslash, escaped));
            $flatten(&mut $s.idx, &mut $s.chars, structural, base, block);
            base = base.wrapping_add(64);
        }
        in_string_carry == 0 && bad == 0
    }};
}

impl Structure {
    /// Empty buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Indexes `text` (a whole JSON document; lines of up to 4 GiB). `false` where the
    /// document has an unclosed string, a control character in a string or an escape other
    /// than the eight simple ones: the caller then leaves it to a full parser.
    pub fn index(&mut self, text: &[u8]) -> bool {
        self.index_checked(text, Simd::detect())
    }

    /// [`Structure::index`] of a line that must also be UTF-8: the line as a `str` where both
    /// hold, else `None`. UTF-8 is checked after the index, which at the AVX-512 level notes
    /// as it goes whether every byte is ASCII: an ASCII line (most lines, half the bytes of
    /// the corpus) is not read a second time.
    pub fn index_str<'t>(&mut self, text: &'t [u8]) -> Option<&'t str> {
        if !self.index(text) {
            return None;
        }
        if self.ascii {
            // SAFETY: the index saw every byte of `text`, none of 0x80 or more: ASCII is UTF-8.
            Some(unsafe { std::str::from_utf8_unchecked(text) })
        } else {
            simdutf8::basic::from_utf8(text).ok()
        }
    }

    /// [`Structure::index`] with the masks of `simd`, which must be one of [`Simd::all`] (any
    /// other is taken as [`Simd::Bytes`]): the same index whichever it is.
    pub fn index_with(&mut self, text: &[u8], simd: Simd) -> bool {
        let simd = if simd.runs() { simd } else { Simd::Bytes };
        self.index_checked(text, simd)
    }

    /// [`Structure::index_with`] of a level this CPU runs.
    fn index_checked(&mut self, text: &[u8], simd: Simd) -> bool {
        match simd {
            Simd::Bytes => self.index_bytes(text),
            // SAFETY: `Simd::detect` gives these only where the CPU runs them.
            #[cfg(target_arch = "x86_64")]
            Simd::Avx2 => unsafe { self.index_avx2(text) },
            #[cfg(target_arch = "x86_64")]
            Simd::Avx512 => unsafe { self.index_avx512(text) },
        }
    }

    fn index_bytes(&mut self, text: &[u8]) -> bool {
        index_loop!(
            self,
            text,
            masks_bytes,
            prefix_xor,
            string_masks_bytes,
            escapable_bytes,
            flatten
        )
    }

    /// [`Structure::index_bytes`] with the masks of AVX2 and a carry-less multiply, all of it
    /// compiled for them (so that the masks inline into the loop).
    ///
    /// # Safety
    /// The CPU must have AVX2, PCLMULQDQ, POPCNT and BMI1 ([`avx2::available`]).
    #[cfg(target_arch = "x86_64")]
    // `popcnt` and `bmi1` (`tzcnt`): the flattening counts and walks bits; without them the
    // count was a multiply-and-shift sequence in the loop's profile.
    #[target_feature(enable = "avx2,pclmulqdq,popcnt,bmi1")]
    unsafe fn index_avx2(&mut self, text: &[u8]) -> bool {
        index_loop!(
            self,
            text,
            avx2::masks,
            avx2::prefix_xor,
            avx2::string_masks,
            avx2::escapable_only,
            flatten
        )
    }

    /// [`Structure::index_bytes`] with the masks of AVX-512 and its flattening, all of it
    /// compiled for them.
    ///
    /// # Safety
    /// The CPU must have what [`avx512::available`] checks.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi2,pclmulqdq,popcnt,bmi1")]
    unsafe fn index_avx512(&mut self, text: &[u8]) -> bool {
        avx512::index(self, text)
    }

    /// The backslash and escaped-character masks of the blocks `text[start..end]` spans, each
    /// cut to the span.
    fn masks_in(&self, start: usize, end: usize) -> impl Iterator<Item = (u64, u64)> + '_ {
        let mut at = start;
        std::iter::from_fn(move || {
            if at >= end {
                return None;
            }
            let block = at / 64;
            let to = (end - block * 64).min(64);
            let span = span(at % 64, to);
            at = block * 64 + to;
            let (backslash, escaped) = self.escapes.get(block).copied().unwrap_or_default();
            Some((backslash & span, escaped & span))
        })
    }

    /// Whether `text[start..end]` (a string's inside) holds an escape: inside a closed string
    /// every backslash starts or ends one. (Asked as `escapes_in(..) == 0`, the test compiled
    /// to the bit counts in one build and not in the next: 30 % more instructions per string
    /// read; a byte search was no better.)
    pub fn has_escape(&self, start: usize, end: usize) -> bool {
        self.masks_in(start, end)
            .any(|(backslash, _)| backslash != 0)
    }

    /// How many bytes the escapes in `text[start..end]` (a string's inside) add to what they
    /// stand for: one each, `\n` being two bytes for one. Only the eight simple escapes occur
    /// in an indexed document. A run of `L` backslashes holds `L / 2` escaped backslashes and,
    /// when `L` is odd, escapes the byte after it: `(L + odd) / 2` escapes, so the escapes of a
    /// string are half its backslashes plus its runs' escaped ends.
    pub fn escapes_in(&self, start: usize, end: usize) -> usize {
        // Backslashes plus escaped run ends, halved.
        let n: usize = self
            .masks_in(start, end)
            .map(|(backslash, escaped)| (backslash.count_ones() + escaped.count_ones()) as usize)
            .sum();
        n / 2
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// What the index must hold, by a plain walk over the bytes; `None` for a backslash outside
    /// strings (no JSON, and the walker refuses the value it starts, whatever the index says).
    fn by_hand(text: &[u8]) -> Option<(Vec<u32>, bool)> {
        let mut idx = Vec::new();
        let (mut in_string, mut escape, mut in_scalar) = (false, false, false);
        let mut ok = true;
        for (i, &b) in text.iter().enumerate() {
            let i = u32::try_from(i).unwrap();
            if in_string {
                if escape {
                    escape = false;
                    if !b"\"\\/bfnrt".contains(&b) {
                        return Some((idx, false));
                    }
                } else if b == b'\\' {
                    escape = true;
                } else if b == b'"' {
                    in_string = false;
                } else if b < 0x20 {
                    ok = false;
                }
                continue;
            }
            match b {
                b'{' | b'}' | b'[' | b']' | b':' | b',' => {
                    idx.push(i);
                    in_scalar = false;
                }
                b' ' | b'\t' | b'\n' | b'\r' => in_scalar = false,
                0..0x20 => return Some((idx, false)),
                b'"' => {
                    // A quote right after a scalar's byte is no value's start (simdjson's
                    // rule); the walker refuses that scalar anyway.
                    if !in_scalar {
                        idx.push(i);
                    }
                    in_string = true;
                    in_scalar = false;
                }
                _ => {
                    if !in_scalar {
                        idx.push(i);
                    }
                    in_scalar = true;
                    if b == b'\\' {
                        return None;
                    }
                }
            }
        }
        Some((idx, ok && !in_string))
    }

    fn check(text: &[u8]) {
        let Some(expected) = by_hand(text) else {
            return;
        };
        let utf8 = std::str::from_utf8(text).is_ok();
        for simd in Simd::all() {
            let mut s = Structure::new();
            let ok = s.index_with(text, simd);
            assert_eq!(
                ok,
                expected.1,
                "{:?} simd={simd:?}",
                String::from_utf8_lossy(text)
            );
            // The ASCII note is never wrong, and AVX-512 always makes it.
            assert!(!s.ascii || text.is_ascii());
            #[cfg(target_arch = "x86_64")]
            if simd == Simd::Avx512 {
                assert_eq!(
                    s.ascii,
                    text.is_ascii(),
                    "{:?}",
                    String::from_utf8_lossy(text)
                );
            }
            if simd == Simd::detect() {
                let as_str = s.index_str(text).map(str::as_bytes);
                assert_eq!(as_str, (ok && utf8).then_some(text));
            }
            if ok {
                assert_eq!(s.idx, expected.0, "{:?}", String::from_utf8_lossy(text));
                let chars: Vec<u8> = s.idx.iter().map(|&at| text[at as usize]).collect();
                assert_eq!(
                    s.chars,
                    chars,
                    "{:?} simd={simd:?}",
                    String::from_utf8_lossy(text)
                );
                assert_eq!(
                    s.escapes,
                    escapes_by_hand(text),
                    "{:?}",
                    String::from_utf8_lossy(text)
                );
            }
        }
    }

    /// Per block, the backslashes and the bytes that follow an odd run of them.
    fn escapes_by_hand(text: &[u8]) -> Vec<(u64, u64)> {
        let mut out = vec![(0u64, 0u64); text.len().div_ceil(64)];
        let mut run = 0usize;
        for (i, &b) in text.iter().enumerate() {
            let bit = 1u64 << (i % 64);
            if b == b'\\' {
                out[i / 64].0 |= bit;
                run += 1;
            } else {
                if run % 2 == 1 {
                    out[i / 64].1 |= bit;
                }
                run = 0;
            }
        }
        out
    }

    #[test]
    fn marks_what_simdjson_marks() {
        for text in [
            r#"{"a":1,"b":[true,false,null],"c":{"d":"e\"f\\"}}"#,
            r#"{ "k" : "v" , "n" : -12.5e3 }"#,
            r#"{"a":"\u00e9"}"#,
            r#"{"a":"\x"}"#,
            "{\"a\":\"tab\there\"}",
            r#"{"a":"unclosed}"#,
            r#"{"x":"\\\\\""}"#,
            r#"{"x":"a"b"c"}"#,
            "",
            "{}",
        ] {
            check(text.as_bytes());
        }
        // A control character, a bad escape and a `\u` escape in blocks that start inside a
        // string and do not close it.
        for bad in ["\u{1}", "\\x", "\\u0041", "\t"] {
            let line = format!(
                r#"{{"k":"{}{bad}{}","n":1}}"#,
                "a".repeat(200),
                "b".repeat(200)
            );
            check(line.as_bytes());
        }
        // Escapes and strings across block boundaries.
        for pad in 55..70 {
            let line = format!(
                r#"{{"{}":"\\\"{}\\","z":[1, 2]}}"#,
                "k".repeat(pad),
                "q".repeat(pad)
            );
            check(line.as_bytes());
        }
    }

    #[test]
    fn counts_the_escapes_of_a_span() {
        let line = format!(r#"{{"a":"{}\n\\\"x{}\t"}}"#, "y".repeat(60), "z".repeat(70));
        let mut s = Structure::new();
        assert!(s.index(line.as_bytes()));
        let start = 6;
        let end = line.len() - 2;
        assert_eq!(s.escapes_in(start, end), 4);
        assert_eq!(s.escapes_in(start, start + 60), 0);
        assert_eq!(s.escapes_in(0, line.len()), 4);
        // Escapes at 66, 68 and 70 (the second block), then 70 `z`s from 73: spans without
        // a backslash have none.
        assert!(s.has_escape(start, end) && s.has_escape(60, 70));
        assert!(!s.has_escape(start, start + 60) && !s.has_escape(start, 66));
        assert!(s.has_escape(start, 67) && !s.has_escape(73, 140));
    }

    /// What a level computes of one block, each part where it has one alone (`None` where
    /// its loop computes it inline, as AVX-512's full masks and escapable characters: the
    /// whole-line tests hold those to the bytes).
    #[derive(Debug, Clone, PartialEq)]
    struct Parts {
        masks: Option<Masks>,
        string_masks: [u64; 4],
        escapable: Option<u64>,
        flattened: Vec<u32>,
    }

    /// A block's masks, string masks and escapable characters, and the flattening of a mask,
    /// at `simd` (one of [`Simd::all`]).
    fn block_by(simd: Simd, block: &[u8; 64], bits: u64) -> Parts {
        // Room for the flattening's writes, filled with a value no offset has: an offset it
        // fails to write shows (and not a value an earlier test left in freed memory).
        let mut idx = vec![u32::MAX; 128];
        idx.truncate(1);
        idx[0] = 7;
        match simd {
            Simd::Bytes => {
                flatten(&mut idx, &mut Vec::new(), bits, 1000, block);
                Parts {
                    masks: Some(masks_bytes(block)),
                    string_masks: string_masks_bytes(block),
                    escapable: Some(escapable_bytes(block)),
                    flattened: idx,
                }
            }
            // SAFETY: the levels of `Simd::all` run on this CPU.
            #[cfg(target_arch = "x86_64")]
            Simd::Avx2 => unsafe {
                flatten(&mut idx, &mut Vec::new(), bits, 1000, block);
                Parts {
                    masks: Some(avx2::masks(block)),
                    string_masks: avx2::string_masks(block),
                    escapable: Some(avx2::escapable_only(block)),
                    flattened: idx,
                }
            },
            #[cfg(target_arch = "x86_64")]
            Simd::Avx512 => unsafe {
                let len = idx.len();
                idx.reserve(64);
                let n = avx512::flatten_into(idx.as_mut_ptr().add(len), bits, 1000);
                idx.set_len(len + n);
                Parts {
                    masks: None,
                    string_masks: avx512::string_masks(block),
                    escapable: None,
                    flattened: idx,
                }
            },
        }
    }

    fn space() -> impl Strategy<Value = &'static str> {
        proptest::sample::select(&["", "", " ", "\t", "\r\n", "  \n "][..])
    }

    fn string() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            proptest::sample::select(
                &[
                    "a",
                    "key",
                    "\\n",
                    "\\\"",
                    "\\\\",
                    "\\t",
                    "\\/",
                    "\u{e9}",
                    " ",
                    "{[:,]}",
                    "plain text of some length, long enough to cross a block ",
                ][..],
            ),
            0..12,
        )
        .prop_map(|parts| format!("\"{}\"", parts.concat()))
    }

    fn json_object() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            proptest::sample::select(&["true", "false", "null", "0", "-12", "3.25", "1234567"][..])
                .prop_map(String::from),
            string(),
        ];
        let value = leaf.prop_recursive(4, 48, 6, |inner| {
            let member = (space(), string(), space(), space(), inner.clone(), space())
                .prop_map(|(a, k, b, c, v, d)| format!("{a}{k}{b}:{c}{v}{d}"));
            let element = (space(), inner, space()).prop_map(|(a, v, b)| format!("{a}{v}{b}"));
            prop_oneof![
                proptest::collection::vec(member, 0..6)
                    .prop_map(|m| format!("{{{}}}", m.join(","))),
                proptest::collection::vec(element, 0..6).prop_map(|e| format!("[{}]", e.join(","))),
            ]
        });
        (string(), value).prop_map(|(k, v)| format!("{{{k}:{v}}}"))
    }

    proptest! {
        /// Every level's masks are the bytes' masks, and every level's flattening gives the
        /// set bits' offsets in order, after what the list held. (The lines of the tests
        /// below seldom reach the index's comparisons of offsets with whitespace outside
        /// strings: most generated lines are refused first.)
        #[test]
        fn every_level_masks_as_the_bytes(
            bytes in proptest::collection::vec(
                proptest::sample::select(&[
                    b'"', b'\\', b'{', b'}', b'[', b']', b':', b',', b' ', b'\t', b'\n', b'\r',
                    b'/', b'b', b'f', b'n', b'r', b't', b'u', b'a', b'0', 0, 0x1f, 0x7f, 0x80,
                    0xff, b';', b'Z', b'z', b'|',
                ][..]),
                64,
            ),
            // (Any number of bits set, 0 to 64: the flattening writes 16 offsets at a time.)
            set in proptest::sample::subsequence((0..64).collect::<Vec<u32>>(), 0..=64),
        ) {
            let block: [u8; 64] = bytes.try_into().expect("64 bytes");
            let bits = set.iter().fold(0u64, |b, i| b | 1 << i);
            let expected = block_by(Simd::Bytes, &block, bits);
            let want: Vec<u32> = std::iter::once(7)
                .chain((0..64).filter(|i| bits >> i & 1 == 1).map(|i| 1000 + i))
                .collect();
            prop_assert_eq!(&expected.flattened, &want);
            for simd in Simd::all() {
                let got = block_by(simd, &block, bits);
                prop_assert_eq!(&got.string_masks, &expected.string_masks, "{:?}", simd);
                prop_assert_eq!(&got.flattened, &expected.flattened, "{:?}", simd);
                if let Some(masks) = got.masks {
                    prop_assert_eq!(Some(masks), expected.masks, "{:?}", simd);
                }
                if let Some(escapable) = got.escapable {
                    prop_assert_eq!(Some(escapable), expected.escapable, "{:?}", simd);
                }
            }
        }

        /// Strings over many blocks, which the blocks inside them take the short path through:
        /// escapes (escaped quotes and backslash runs among them) across block boundaries,
        /// and the control characters, bad escapes and unescaped quotes that the short path
        /// must still see.
        #[test]
        fn long_strings_index_as_by_hand(
            values in proptest::collection::vec(
                proptest::collection::vec(
                    proptest::sample::select(&[
                        "plain text of some length, no escapes in it at all ",
                        "\\n", "\\\"", "\\\\", "\\\\\\", "\\t", "\\/", "\u{e9}", "x",
                    ][..]),
                    0..120,
                ),
                1..4,
            ),
            poison in proptest::option::of((0usize..10_000, proptest::sample::select(&[
                "\u{1}", "\\x", "\\u0041", "\"", "\\",
            ][..]))),
        ) {
            let members: Vec<String> = values
                .iter()
                .enumerate()
                .map(|(i, v)| format!("\"k{i}\":\"{}\",\"n{i}\":[1, {{}}]", v.concat()))
                .collect();
            let mut line = format!("{{{}}}", members.join(","));
            if let Some((at, p)) = poison {
                // (At a place in proportion to the line's length.)
                let mut at = at * line.len() / 10_000;
                while !line.is_char_boundary(at) {
                    at -= 1;
                }
                line.insert_str(at, p);
            }
            check(line.as_bytes());
        }

        /// Valid lines (whatever the walk accepts must index as by hand): nested values with
        /// whitespace of every kind between tokens, strings with escapes and non-ASCII
        /// text, across block boundaries. (Random bytes, below, are mostly refused before
        /// their offsets are compared.)
        #[test]
        fn valid_lines_index_as_by_hand(line in json_object()) {
            check(line.as_bytes());
        }

        #[test]
        fn generated_lines_index_as_by_hand(
            parts in proptest::collection::vec(
                proptest::sample::select(&[
                    "{", "}", "[", "]", ":", ",", " ", "\t", "\"", "\\", "\\\"", "\\\\", "\\n",
                    "\\u", "abc", "1", "-2.5", "true", "\u{e9}", "\u{1}", "\r", "\u{7f}", "x\"y",
                ][..]),
                0..90,
            )
        ) {
            let text: String = parts.concat();
            check(text.as_bytes());
        }
    }
}
