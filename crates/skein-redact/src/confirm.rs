//! Confirmation helpers run at an anchor hit: the lead (token boundary) check, the escape
//! marker check, and the windowed regex search.

use regex::bytes::Regex;

/// Is there a token boundary before `s`, as `%L%` in the patterns defines it: start, a
/// non-token byte, or a `\n`/`\r`/`\t`, `\uXXXX` or ANSI colour escape?
pub(crate) fn lead_ok(hay: &[u8], s: usize) -> bool {
    let Some(&p) = s.checked_sub(1).and_then(|i| hay.get(i)) else {
        return true;
    };
    if !(p.is_ascii_alphanumeric() || p == b'_') {
        return true;
    }
    let esc = |n: usize| s >= n && hay[s - n] == b'\\';
    (matches!(p, b'n' | b'r' | b't') && esc(2))
        || (esc(6) && hay[s - 5] == b'u' && hay[s - 4..s].iter().all(u8::is_ascii_hexdigit))
        || (p == b'm' && {
            let digits = hay[..s - 1]
                .iter()
                .rev()
                .take(13)
                .take_while(|b| b.is_ascii_digit() || **b == b';')
                .count();
            s >= digits + 2 && hay[s - 2 - digits] == b'['
        })
}

/// A real (not itself escaped) `\u00XX` for a printable ASCII character at `s`.
pub(crate) fn odd_escape(hay: &[u8], s: usize) -> bool {
    let before = hay[..s].iter().rev().take_while(|&&b| b == b'\\').count();
    before % 2 == 0 && matches!(hay.get(s + 4), Some(b'2'..=b'7'))
}

/// Pushes the group `group` of every match of `re` that starts within the `words` words after
/// `e` on the same line (a real line break ends the window). Counted in words, not bytes, so
/// that redacting a secret in between cannot bring another one into the window.
pub(crate) fn regex_near(
    re: &Regex,
    group: usize,
    words: usize,
    hay: &[u8],
    e: usize,
    out: &mut Vec<(usize, usize)>,
) {
    let line_end = memchr::memchr(b'\n', &hay[e..]).map_or(hay.len(), |n| e + n);
    let (mut end, mut n) = (e, 0);
    while end < line_end && n < words {
        end += hay[end..line_end]
            .iter()
            .take_while(|b| b.is_ascii_whitespace())
            .count();
        end += hay[end..line_end]
            .iter()
            .take_while(|b| !b.is_ascii_whitespace())
            .count();
        n += 1;
    }
    let hay = &hay[..line_end];
    let mut locs = re.capture_locations();
    let mut pos = e;
    while pos < end {
        let Some(m) = re.captures_read_at(&mut locs, hay, pos) else {
            return;
        };
        if m.start() >= end {
            return;
        }
        let (a, b) = locs.get(group).unwrap_or((m.start(), m.end()));
        out.push((a, b));
        // From the secret's end, not the match's: the boundary after one token is the
        // boundary before the next.
        pos = b.max(pos + 1);
    }
}

/// Runs `re` in a window around the anchor `s..e` and pushes the secret span of the first
/// match that overlaps the anchor. A match touching the window's end is retried without it.
#[allow(clippy::too_many_arguments)]
pub(crate) fn regex_at(
    re: &Regex,
    group: usize,
    back: usize,
    ahead: usize,
    hay: &[u8],
    s: usize,
    e: usize,
    out: &mut Vec<(usize, usize)>,
) {
    let mut we = hay.len().min(e + ahead + 32);
    let mut pos = s.saturating_sub(back);
    loop {
        let Some(m) = re.find_at(&hay[..we], pos) else {
            return;
        };
        if m.start() >= e {
            return;
        }
        if m.end() <= s {
            pos = (m.end().saturating_sub(1)).max(pos + 1);
            continue;
        }
        if m.end() == we && we < hay.len() {
            we = hay.len();
            continue;
        }
        let mut locs = re.capture_locations();
        if re
            .captures_read_at(&mut locs, &hay[..we], m.start())
            .is_some()
        {
            out.push(locs.get(group).unwrap_or((m.start(), m.end())));
        }
        return;
    }
}
