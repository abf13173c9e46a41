//! Dates: parsing `--since` / `--until`, and day / ISO week / month keys of timestamps.

/// A calendar day.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Day {
    pub year: i32,
    pub month: u32,
    pub day: u32,
}

/// Why a date was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid date {0:?}: expected YYYY-MM-DD or YYYYMMDD")]
pub struct DateError(pub String);

impl Day {
    /// Parses `YYYY-MM-DD` or `YYYYMMDD`.
    pub fn parse(s: &str) -> Result<Self, DateError> {
        let digits: String = s.chars().filter(char::is_ascii_digit).collect();
        let ok = digits.len() == 8
            && (s.len() == 8 || (s.len() == 10 && &s[4..5] == "-" && &s[7..8] == "-"));
        if !ok {
            return Err(DateError(s.to_owned()));
        }
        let year = digits[0..4].parse().map_err(|_| DateError(s.to_owned()))?;
        let month = digits[4..6].parse().map_err(|_| DateError(s.to_owned()))?;
        let day = digits[6..8].parse().map_err(|_| DateError(s.to_owned()))?;
        if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
            return Err(DateError(s.to_owned()));
        }
        Ok(Self { year, month, day })
    }

    /// The day of an ISO-8601 timestamp (its first 10 characters, UTC).
    pub fn of_timestamp(ts: &str) -> Option<Self> {
        Self::parse(ts.get(..10)?).ok()
    }

    /// `YYYY-MM-DD`.
    pub fn key(self) -> String {
        format!("{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }

    /// `YYYY-MM`.
    pub fn month_key(self) -> String {
        format!("{:04}-{:02}", self.year, self.month)
    }

    /// Days since 1970-01-01.
    pub fn days_since_epoch(self) -> i64 {
        let (y, m, d) = (
            i64::from(self.year),
            i64::from(self.month),
            i64::from(self.day),
        );
        let y2 = if m <= 2 { y - 1 } else { y };
        let era = y2.div_euclid(400);
        let yoe = y2 - era * 400;
        let mp = (m + 9) % 12;
        let doy = (153 * mp + 2) / 5 + d - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        era * 146_097 + doe - 719_468
    }

    /// The day `days` after 1970-01-01.
    pub fn from_days(days: i64) -> Self {
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let y = yoe + era * 400;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let d = doy - (153 * mp + 2) / 5 + 1;
        let m = if mp < 10 { mp + 3 } else { mp - 9 };
        Self {
            year: (if m <= 2 { y + 1 } else { y }) as i32,
            month: m as u32,
            day: d as u32,
        }
    }

    /// The Monday starting this day's week, as `YYYY-MM-DD` (weeks start on Monday).
    pub fn week_key(self) -> String {
        let days = self.days_since_epoch();
        // 1970-01-01 was a Thursday: (days + 3) mod 7 is 0 on Mondays.
        let monday = days - (days + 3).rem_euclid(7);
        Self::from_days(monday).key()
    }
}

/// An inclusive day range from `--since` / `--until`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DateRange {
    pub since: Option<Day>,
    pub until: Option<Day>,
}

impl DateRange {
    /// True when the timestamp's day lies in the range (timestamps without a day pass only
    /// when the range is open).
    pub fn contains_timestamp(&self, ts: Option<&str>) -> bool {
        if self.since.is_none() && self.until.is_none() {
            return true;
        }
        let Some(day) = ts.and_then(Day::of_timestamp) else {
            return false;
        };
        self.since.is_none_or(|s| day >= s) && self.until.is_none_or(|u| day <= u)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_keys() {
        let d = Day::parse("2026-05-01").expect("date");
        assert_eq!(Day::parse("20260501"), Ok(d));
        assert!(Day::parse("2026-5-1").is_err());
        assert!(Day::parse("2026-13-01").is_err());
        assert_eq!(d.month_key(), "2026-05");
        assert_eq!(d.week_key(), "2026-04-27");
        assert_eq!(
            Day::parse("2026-04-27").expect("d").week_key(),
            "2026-04-27"
        );
        assert_eq!(Day::from_days(d.days_since_epoch()), d);
        assert_eq!(Day::from_days(0).key(), "1970-01-01");
    }

    #[test]
    fn ranges_are_inclusive() {
        let r = DateRange {
            since: Day::parse("2026-05-01").ok(),
            until: Day::parse("2026-05-02").ok(),
        };
        assert!(r.contains_timestamp(Some("2026-05-01T00:00:00Z")));
        assert!(r.contains_timestamp(Some("2026-05-02T23:59:59.999Z")));
        assert!(!r.contains_timestamp(Some("2026-05-03T00:00:00Z")));
        assert!(!r.contains_timestamp(None));
        assert!(DateRange::default().contains_timestamp(None));
    }
}
