//! Time zones as values: UTC, fixed offsets, or any jiff zone (IANA rules with DST, POSIX TZ
//! strings) that the binary resolved. Local days, their starts and local RFC 3339 text.

use jiff::Timestamp;
use jiff::civil::DateTime;
use jiff::tz::{Offset, TimeZone};

use super::{Civil, Day, MS_PER_DAY};

/// A time zone in which instants become local days.
#[derive(Debug, Clone)]
pub struct Zone {
    tz: TimeZone,
    name: String,
}

impl Default for Zone {
    fn default() -> Self {
        Self::utc()
    }
}

impl PartialEq for Zone {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

/// Why a time zone was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid time zone {0:?}: expected an IANA name such as Europe/Berlin, UTC, or a fixed \
     offset such as +09:00, -0500, +05:30"
)]
pub struct ZoneError(pub String);

impl Zone {
    /// UTC.
    pub fn utc() -> Self {
        Self {
            tz: TimeZone::UTC,
            name: "UTC".into(),
        }
    }

    /// A zone jiff resolved (from the time-zone database or a POSIX TZ string), under the
    /// name it was asked by.
    pub fn from_jiff(name: &str, tz: TimeZone) -> Self {
        Self {
            tz,
            name: name.to_owned(),
        }
    }

    /// A fixed offset, in minutes east of UTC (at most ±25:59).
    pub fn fixed_minutes(minutes: i32) -> Option<Self> {
        let offset = Offset::from_seconds(minutes.checked_mul(60)?).ok()?;
        let sign = if minutes < 0 { '-' } else { '+' };
        let m = minutes.unsigned_abs();
        Some(Self {
            tz: TimeZone::fixed(offset),
            name: format!("{sign}{:02}:{:02}", m / 60, m % 60),
        })
    }

    /// Parses the zones that need no database: `UTC`, `Z`, `GMT`, `±HH`, `±HHMM` or `±HH:MM`,
    /// optionally after `UTC`/`GMT` (east positive, as in ISO 8601: `GMT-05` is five hours
    /// behind UTC, unlike the POSIX `TZ` syntax).
    pub fn parse_fixed(s: &str) -> Result<Self, ZoneError> {
        let err = || ZoneError(s.to_owned());
        let upper = s.trim().to_ascii_uppercase();
        if upper.is_empty() {
            return Err(err());
        }
        let rest = upper
            .strip_prefix("UTC")
            .or_else(|| upper.strip_prefix("GMT"))
            .unwrap_or(&upper);
        if rest.is_empty() || rest == "Z" {
            return Ok(Self::utc());
        }
        let (sign, digits) = match rest.as_bytes()[0] {
            b'+' => (1, &rest[1..]),
            b'-' => (-1, &rest[1..]),
            _ => return Err(err()),
        };
        let digits = match digits.len() {
            2 | 4 => digits.to_owned(),
            5 if digits.as_bytes()[2] == b':' => format!("{}{}", &digits[..2], &digits[3..]),
            _ => return Err(err()),
        };
        if !matches!(digits.len(), 2 | 4) || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(err());
        }
        let h: i32 = digits[..2].parse().map_err(|_| err())?;
        let m: i32 = digits
            .get(2..)
            .filter(|m| !m.is_empty())
            .map_or(Ok(0), str::parse)
            .map_err(|_| err())?;
        if h > 14 || m > 59 {
            return Err(err());
        }
        Self::fixed_minutes(sign * (h * 60 + m)).ok_or_else(err)
    }

    /// The name it was given (`UTC`, `+09:00`, `Europe/Berlin`, a POSIX TZ string).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The zone's offset from UTC at an instant, in milliseconds (0 outside jiff's range of
    /// years -9999..=9999).
    pub fn offset_ms(&self, ms: i64) -> i64 {
        Timestamp::from_millisecond(ms)
            .map_or(0, |t| i64::from(self.tz.to_offset(t).seconds()) * 1000)
    }

    /// The local day of an instant.
    pub fn day_of(&self, ms: i64) -> Day {
        Day::of_ms(ms + self.offset_ms(ms))
    }

    /// The local date-time of an instant (fields as on a wall clock in this zone).
    pub fn civil_of(&self, ms: i64) -> Civil {
        Civil::from_ms(ms + self.offset_ms(ms))
    }

    /// The first instant of a local day (for a day that starts in a DST gap, the first instant
    /// after the gap).
    pub fn start_of_day(&self, day: Day) -> i64 {
        let utc_midnight = day.days_since_epoch() * MS_PER_DAY;
        let Ok(dt) = DateTime::new(day.year as i16, day.month as i8, day.day as i8, 0, 0, 0, 0)
        else {
            return utc_midnight;
        };
        self.tz
            .to_ambiguous_timestamp(dt)
            .compatible()
            .map_or(utc_midnight, Timestamp::as_millisecond)
    }

    /// `YYYY-MM-DDTHH:MM:SS.mmm±HH:MM` in this zone (`Z` for UTC).
    pub fn format_ms(&self, ms: i64) -> String {
        let off = self.offset_ms(ms);
        let c = Civil::from_ms(ms + off);
        let zone = if off == 0 && self.name == "UTC" {
            "Z".to_owned()
        } else {
            let sign = if off < 0 { '-' } else { '+' };
            let m = off.unsigned_abs() / 60_000;
            format!("{sign}{:02}:{:02}", m / 60, m % 60)
        };
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}{zone}",
            c.year, c.month, c.day, c.hour, c.minute, c.second, c.milli
        )
    }
}
