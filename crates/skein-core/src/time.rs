//! Time, the one place: ISO-8601 / RFC 3339 timestamps to milliseconds since the Unix epoch
//! and back, the proleptic Gregorian calendar, calendar days and their day / ISO-week / month
//! keys, and time zones as values ([`Zone`]).
//!
//! Instants are `i64` milliseconds since 1970-01-01T00:00:00Z throughout. Parsing is
//! hand-written because it runs once per usage record (see [`parse_ms`]; a property test holds
//! it to jiff's RFC 3339 parser); zone rules (offsets, DST) come from jiff. Nothing here reads
//! the clock, the environment or the time-zone database: the binary resolves `--timezone`,
//! `TZ` and `/etc/localtime` into a [`Zone`] and passes it in.

mod calendar;
mod zone;

pub use calendar::{Bound, Civil, DateError, DateRange, Day, MsRange};
pub use zone::{Zone, ZoneError};

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds in a day.
pub const MS_PER_DAY: i64 = 86_400_000;

/// Milliseconds since the epoch of `t` (negative before 1970, saturating).
pub fn unix_ms(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_millis()).unwrap_or(i64::MAX),
    }
}

/// Milliseconds since the epoch of an ISO-8601 timestamp. Accepted:
/// `YYYY-MM-DD[(T|t| )HH:MM[:SS[(.|,)fraction]]][Z|z|±HH:MM|±HHMM|±HH]`; no zone means UTC,
/// a date alone means its midnight UTC, fractions beyond milliseconds are truncated, a leap
/// second (`:60`) counts as the next second. Returns `None` for anything else, including
/// impossible dates (`2026-02-30`).
pub fn parse_ms(ts: &str) -> Option<i64> {
    let b = ts.as_bytes();
    let day = Day::parse_iso(b.get(..10)?)?;
    let mut ms = day.days_since_epoch() * MS_PER_DAY;
    let mut i = 10;
    if matches!(b.get(i), Some(b'T' | b't' | b' ')) {
        let h = digits2(b, i + 1)?;
        if b.get(i + 3) != Some(&b':') {
            return None;
        }
        let m = digits2(b, i + 4)?;
        i += 6;
        let mut s = 0;
        if b.get(i) == Some(&b':') {
            s = digits2(b, i + 1)?;
            i += 3;
        }
        let mut frac = 0;
        if matches!(b.get(i), Some(b'.' | b',')) {
            let start = i + 1;
            let mut end = start;
            while b.get(end).is_some_and(u8::is_ascii_digit) {
                end += 1;
            }
            if end == start {
                return None;
            }
            let kept = &b[start..end.min(start + 3)];
            for d in kept {
                frac = frac * 10 + i64::from(d - b'0');
            }
            frac *= [100, 10, 1][kept.len() - 1];
            i = end;
        }
        if h > 23 || m > 59 || s > 60 {
            return None;
        }
        ms += ((h * 60 + m) * 60 + s) * 1000 + frac;
    }
    match b.get(i) {
        None => Some(ms),
        Some(b'Z' | b'z') if i + 1 == b.len() => Some(ms),
        Some(&sign @ (b'+' | b'-')) => {
            let h = digits2(b, i + 1)?;
            let m = match b.len() - i {
                3 => 0,
                5 => digits2(b, i + 3)?,
                6 if b[i + 3] == b':' => digits2(b, i + 4)?,
                _ => return None,
            };
            if h > 23 || m > 59 {
                return None;
            }
            let off = (h * 60 + m) * 60_000;
            Some(if sign == b'+' { ms - off } else { ms + off })
        }
        _ => None,
    }
}

/// Two ASCII digits at `at`.
fn digits2(b: &[u8], at: usize) -> Option<i64> {
    match b.get(at..at + 2)? {
        &[x @ b'0'..=b'9', y @ b'0'..=b'9'] => Some(i64::from(x - b'0') * 10 + i64::from(y - b'0')),
        _ => None,
    }
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` (UTC, milliseconds) for milliseconds since the epoch.
pub fn format_ms(ms: i64) -> String {
    let c = Civil::from_ms(ms);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        c.year, c.month, c.day, c.hour, c.minute, c.second, c.milli
    )
}

/// `YYYYMMDDTHHMMSSmmmZ` (UTC): sorts like the instant it encodes and is safe as a path
/// component.
pub fn format_compact_ms(ms: i64) -> String {
    let c = Civil::from_ms(ms);
    format!(
        "{:04}{:02}{:02}T{:02}{:02}{:02}{:03}Z",
        c.year, c.month, c.day, c.hour, c.minute, c.second, c.milli
    )
}

#[cfg(test)]
mod tests;
