//! The proleptic Gregorian calendar (Howard Hinnant's day-number algorithms): calendar days,
//! their keys, UTC date-times, and inclusive day ranges.

use super::{MS_PER_DAY, Zone, parse_ms};

/// A calendar day.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Day {
    pub year: i32,
    pub month: u32,
    pub day: u32,
}

/// Why a date was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid date {0:?}: expected YYYY-MM-DD, YYYYMMDD, an RFC 3339 time or a relative 7d/12h/30m"
)]
pub struct DateError(pub String);

impl Day {
    /// Parses `YYYY-MM-DD` or `YYYYMMDD` (a real date: `2026-02-30` is refused).
    pub fn parse(s: &str) -> Result<Self, DateError> {
        let b = s.as_bytes();
        let day = match b.len() {
            10 => Self::parse_iso(b),
            8 => {
                let mut iso = [b'-'; 10];
                iso[..4].copy_from_slice(&b[..4]);
                iso[5..7].copy_from_slice(&b[4..6]);
                iso[8..].copy_from_slice(&b[6..]);
                Self::parse_iso(&iso)
            }
            _ => None,
        };
        day.ok_or_else(|| DateError(s.to_owned()))
    }

    /// `YYYY-MM-DD` exactly.
    pub(crate) fn parse_iso(b: &[u8]) -> Option<Self> {
        if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
            return None;
        }
        let mut year = 0;
        for &c in &b[..4] {
            if !c.is_ascii_digit() {
                return None;
            }
            year = year * 10 + i32::from(c - b'0');
        }
        let two = |at: usize| match b[at..at + 2] {
            [x @ b'0'..=b'9', y @ b'0'..=b'9'] => {
                Some(u32::from(x - b'0') * 10 + u32::from(y - b'0'))
            }
            _ => None,
        };
        let (month, day) = (two(5)?, two(8)?);
        if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
            return None;
        }
        Some(Self { year, month, day })
    }

    /// `YYYY-MM-DD`.
    pub fn key(self) -> String {
        format!("{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }

    /// `YYYY-MM`.
    pub fn month_key(self) -> String {
        format!("{:04}-{:02}", self.year, self.month)
    }

    /// The Monday starting this day's week, as `YYYY-MM-DD` (weeks start on Monday, as in
    /// ISO 8601; the key is the Monday's date, not `YYYY-Www`).
    pub fn week_key(self) -> String {
        let days = self.days_since_epoch();
        // 1970-01-01 was a Thursday: (days + 3) mod 7 is 0 on Mondays.
        Self::from_days(days - (days + 3).rem_euclid(7)).key()
    }

    /// Days since 1970-01-01.
    pub fn days_since_epoch(self) -> i64 {
        let (m, d) = (i64::from(self.month), i64::from(self.day));
        let y = i64::from(self.year) - i64::from(m <= 2);
        let era = y.div_euclid(400);
        let yoe = y - era * 400;
        let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        era * 146_097 + doe - 719_468
    }

    /// The day `days` after 1970-01-01.
    pub fn from_days(days: i64) -> Self {
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let year = (yoe + era * 400 + i64::from(month <= 2)) as i32;
        Self { year, month, day }
    }

    /// The UTC day of an instant.
    pub fn of_ms(ms: i64) -> Self {
        Self::from_days(ms.div_euclid(MS_PER_DAY))
    }
}

fn days_in_month(year: i32, month: u32) -> u32 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// A UTC date-time, to the millisecond.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Civil {
    pub year: i32,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    pub milli: u32,
}

impl Civil {
    /// The UTC calendar fields of an instant.
    pub fn from_ms(ms: i64) -> Self {
        let d = Day::of_ms(ms);
        let rest = ms.rem_euclid(MS_PER_DAY) as u32;
        Self {
            year: d.year,
            month: d.month,
            day: d.day,
            hour: rest / 3_600_000,
            minute: rest / 60_000 % 60,
            second: rest / 1000 % 60,
            milli: rest % 1000,
        }
    }

    /// The day.
    pub fn date(self) -> Day {
        Day {
            year: self.year,
            month: self.month,
            day: self.day,
        }
    }
}

/// One end of a [`DateRange`]: a whole local day, or an instant (an RFC 3339 time, or a
/// relative `7d` / `12h` / `30m` / `2w` counted back from the clock the caller passes in).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// A calendar day, read in the report's time zone.
    Day(Day),
    /// Milliseconds since the epoch.
    Instant(i64),
}

impl From<Day> for Bound {
    fn from(day: Day) -> Self {
        Self::Day(day)
    }
}

impl Bound {
    /// `YYYY-MM-DD` or `YYYYMMDD` (a day), an RFC 3339 time (`2026-05-01T10:00:00Z`, with a
    /// zone or offset; none means UTC), or `N` followed by `w`, `d`, `h`, `m` or `s`: that long
    /// before `now_ms`. Impossible dates (`2026-02-30`) are refused.
    pub fn parse(s: &str, now_ms: i64) -> Result<Self, DateError> {
        let err = || DateError(s.to_owned());
        let t = s.trim();
        if let Some(ago) = relative_ms(t) {
            return now_ms.checked_sub(ago).map(Self::Instant).ok_or_else(err);
        }
        if t.len() > 10 {
            return parse_ms(t).map(Self::Instant).ok_or_else(err);
        }
        Day::parse(t).map(Self::Day)
    }

    /// The first millisecond this bound lets in (as a lower bound), in `zone`.
    pub fn start_ms(self, zone: &Zone) -> i64 {
        match self {
            Self::Day(d) => zone.start_of_day(d),
            Self::Instant(ms) => ms,
        }
    }

    /// The first millisecond past this bound (as an upper bound, exclusive), in `zone`.
    pub fn end_ms(self, zone: &Zone) -> i64 {
        match self {
            Self::Day(d) => zone.start_of_day(Day::from_days(d.days_since_epoch() + 1)),
            Self::Instant(ms) => ms.saturating_add(1),
        }
    }
}

/// `7d`, `12h`, `30m`, `2w`, `90s` in milliseconds; `None` when `s` is not of that form.
fn relative_ms(s: &str) -> Option<i64> {
    let unit = match s.as_bytes().last()? {
        b'w' => 7 * MS_PER_DAY,
        b'd' => MS_PER_DAY,
        b'h' => 3_600_000,
        b'm' => 60_000,
        b's' => 1000,
        _ => return None,
    };
    let digits = &s[..s.len() - 1];
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<i64>().ok()?.checked_mul(unit)
}

/// A [`DateRange`] resolved in a zone: `[start, end)` in milliseconds, `None` for no bound.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MsRange {
    pub start: Option<i64>,
    pub end: Option<i64>,
}

impl MsRange {
    /// True when the instant `ms` lies in the range.
    pub fn contains(&self, ms: i64) -> bool {
        self.start.is_none_or(|s| ms >= s) && self.end.is_none_or(|e| ms < e)
    }

    /// True when the timestamp lies in the range. Timestamps that are missing or do not
    /// parse pass only when the range is open.
    pub fn contains_timestamp(&self, ts: Option<&str>) -> bool {
        if self.start.is_none() && self.end.is_none() {
            return true;
        }
        ts.and_then(parse_ms).is_some_and(|ms| self.contains(ms))
    }
}

/// An inclusive range (`--since` / `--until`) of days or instants, read in a time zone.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DateRange {
    pub since: Option<Bound>,
    pub until: Option<Bound>,
}

impl DateRange {
    /// No bound.
    pub fn is_open(&self) -> bool {
        self.since.is_none() && self.until.is_none()
    }

    /// True when the instant `ms` lies in the range; day bounds are local days in `zone`.
    /// A loop over many instants resolves the range once instead ([`DateRange::in_zone`]).
    pub fn contains_ms(&self, ms: i64, zone: &Zone) -> bool {
        self.in_zone(zone).contains(ms)
    }

    /// The range as `[start, end)` milliseconds in `zone`: the zone's rules are looked up
    /// here once, not for every instant tested.
    pub fn in_zone(&self, zone: &Zone) -> MsRange {
        MsRange {
            start: self.since.map(|s| s.start_ms(zone)),
            end: self.until.map(|u| u.end_ms(zone)),
        }
    }

    /// The range as `[start, end)` milliseconds in `zone` (for index queries).
    pub fn bounds_ms(&self, zone: &Zone) -> (Option<i64>, Option<i64>) {
        let r = self.in_zone(zone);
        (r.start, r.end)
    }

    /// True when the timestamp lies in the range in `zone`. Timestamps that are missing or do
    /// not parse pass only when the range is open.
    pub fn contains_timestamp(&self, ts: Option<&str>, zone: &Zone) -> bool {
        self.in_zone(zone).contains_timestamp(ts)
    }
}
