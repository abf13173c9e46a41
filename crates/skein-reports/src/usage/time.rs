//! Timestamps (parsed to and formatted from milliseconds since the epoch) and the fixed UTC
//! offsets `--timezone` takes.

use crate::dates::Day;

/// Milliseconds since 1970-01-01T00:00:00Z of an ISO-8601 timestamp
/// (`YYYY-MM-DD[THH:MM[:SS[.fff…]]][Z|±HH:MM|±HHMM]`, `T` or a space; no zone = UTC).
pub fn parse_timestamp_ms(ts: &str) -> Option<i64> {
    let b = ts.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = b.get(r)?;
        if s.is_empty() || !s.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(s).ok()?.parse().ok()
    };
    let day = Day::parse(ts.get(..10)?).ok()?;
    let mut ms = day.days_since_epoch() * 86_400_000;
    let mut i = 10;
    if matches!(b.get(i), Some(b'T' | b't' | b' ')) {
        let h = num(i + 1..i + 3)?;
        if b.get(i + 3) != Some(&b':') {
            return None;
        }
        let m = num(i + 4..i + 6)?;
        i += 6;
        let mut s = 0;
        if b.get(i) == Some(&b':') {
            s = num(i + 1..i + 3)?;
            i += 3;
        }
        let mut frac_ms = 0;
        if matches!(b.get(i), Some(b'.' | b',')) {
            let start = i + 1;
            let mut end = start;
            while b.get(end).is_some_and(u8::is_ascii_digit) {
                end += 1;
            }
            if end == start {
                return None;
            }
            let digits = &ts[start..end.min(start + 3)];
            frac_ms = digits.parse::<i64>().ok()? * 10_i64.pow(3 - digits.len() as u32);
            i = end;
        }
        if h > 23 || m > 59 || s > 60 {
            return None;
        }
        ms += ((h * 60 + m) * 60 + s) * 1000 + frac_ms;
    }
    match b.get(i) {
        None => Some(ms),
        Some(b'Z' | b'z') if i + 1 == b.len() => Some(ms),
        Some(b'+' | b'-') => {
            let off = UtcOffset::parse(&ts[i..]).ok()?;
            Some(ms - i64::from(off.minutes) * 60_000)
        }
        _ => None,
    }
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` for milliseconds since the epoch.
pub fn format_timestamp_ms(ms: i64) -> String {
    let day = Day::from_days(ms.div_euclid(86_400_000));
    let rest = ms.rem_euclid(86_400_000);
    format!(
        "{}T{:02}:{:02}:{:02}.{:03}Z",
        day.key(),
        rest / 3_600_000,
        rest / 60_000 % 60,
        rest / 1000 % 60,
        rest % 1000
    )
}

/// A fixed offset from UTC for day boundaries (`--timezone`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UtcOffset {
    /// Minutes east of UTC.
    pub minutes: i32,
}

/// Why a time zone was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid time zone {0:?}: expected UTC or a fixed offset such as +09:00, -0500, +05:30 \
     (IANA names are not supported)"
)]
pub struct OffsetError(pub String);

impl UtcOffset {
    /// UTC.
    pub const UTC: Self = Self { minutes: 0 };

    /// Parses `UTC`, `Z`, `GMT`, `±HH`, `±HHMM` or `±HH:MM` (optionally after `UTC`/`GMT`).
    pub fn parse(s: &str) -> Result<Self, OffsetError> {
        let err = || OffsetError(s.to_owned());
        let t = s.trim();
        let upper = t.to_ascii_uppercase();
        let rest = upper
            .strip_prefix("UTC")
            .or_else(|| upper.strip_prefix("GMT"))
            .unwrap_or(&upper);
        if rest.is_empty() || rest == "Z" {
            return Ok(Self::UTC);
        }
        let (sign, digits) = match rest.as_bytes()[0] {
            b'+' => (1, &rest[1..]),
            b'-' => (-1, &rest[1..]),
            _ => return Err(err()),
        };
        let digits: String = match digits.len() {
            2 | 4 => digits.to_owned(),
            5 if digits.as_bytes()[2] == b':' => digits.replace(':', ""),
            _ => return Err(err()),
        };
        if !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(err());
        }
        let h: i32 = digits[..2].parse().map_err(|_| err())?;
        let m: i32 = if digits.len() == 4 {
            digits[2..].parse().map_err(|_| err())?
        } else {
            0
        };
        if h > 14 || m > 59 {
            return Err(err());
        }
        Ok(Self {
            minutes: sign * (h * 60 + m),
        })
    }

    /// The local day of a UTC instant.
    pub fn day_of(self, ms: i64) -> Day {
        Day::from_days((ms + i64::from(self.minutes) * 60_000).div_euclid(86_400_000))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_parse_and_format() {
        let ms = parse_timestamp_ms("2026-05-01T10:00:02.123Z").expect("ts");
        assert_eq!(format_timestamp_ms(ms), "2026-05-01T10:00:02.123Z");
        assert_eq!(
            parse_timestamp_ms("2026-05-01T12:00:02.123456+02:00"),
            Some(ms)
        );
        assert_eq!(parse_timestamp_ms("2026-05-01T10:00:02.1Z"), Some(ms - 23));
        assert_eq!(
            parse_timestamp_ms("2026-05-01"),
            parse_timestamp_ms("2026-05-01T00:00:00Z")
        );
        for bad in [
            "",
            "x",
            "2026-05-01T1",
            "2026-05-01T10:00:02Zx",
            "2026-13-01T00:00Z",
        ] {
            assert_eq!(parse_timestamp_ms(bad), None, "{bad}");
        }
        assert_eq!(format_timestamp_ms(-1), "1969-12-31T23:59:59.999Z");
    }

    #[test]
    fn offsets() {
        assert_eq!(UtcOffset::parse("UTC"), Ok(UtcOffset::UTC));
        assert_eq!(UtcOffset::parse("+09:00").map(|o| o.minutes), Ok(540));
        assert_eq!(UtcOffset::parse("-0530").map(|o| o.minutes), Ok(-330));
        assert_eq!(UtcOffset::parse("UTC+1").ok(), None);
        assert_eq!(UtcOffset::parse("GMT-05").map(|o| o.minutes), Ok(-300));
        assert!(UtcOffset::parse("Europe/Paris").is_err());
        let ms = parse_timestamp_ms("2026-05-31T23:30:00Z").expect("ts");
        assert_eq!(UtcOffset::UTC.day_of(ms).key(), "2026-05-31");
        let east = UtcOffset::parse("+01:00").expect("tz");
        assert_eq!(east.day_of(ms).key(), "2026-06-01");
    }
}
