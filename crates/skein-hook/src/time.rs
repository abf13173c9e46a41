//! UTC timestamps without a date library: RFC 3339 for humans and logs, a compact form for
//! sortable request ids.

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch (0 for times before it).
pub(crate) fn unix_millis(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

struct Parts {
    year: i64,
    month: u32,
    day: u32,
    hour: u64,
    minute: u64,
    second: u64,
    milli: u64,
}

fn parts(t: SystemTime) -> Parts {
    let ms = unix_millis(t);
    let secs = ms / 1000;
    let days = i64::try_from(secs / 86_400).unwrap_or(i64::MAX);
    let rem = secs % 86_400;
    let (year, month, day) = civil_from_days(days);
    Parts {
        year,
        month,
        day,
        hour: rem / 3600,
        minute: rem % 3600 / 60,
        second: rem % 60,
        milli: ms % 1000,
    }
}

/// `2026-08-22T10:15:02.123Z`
pub(crate) fn rfc3339(t: SystemTime) -> String {
    let p = parts(t);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        p.year, p.month, p.day, p.hour, p.minute, p.second, p.milli
    )
}

/// `20260822T101502123Z`: sorts like the time it encodes, safe as a path component.
pub(crate) fn compact(t: SystemTime) -> String {
    let p = parts(t);
    format!(
        "{:04}{:02}{:02}T{:02}{:02}{:02}{:03}Z",
        p.year, p.month, p.day, p.hour, p.minute, p.second, p.milli
    )
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar
/// (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn formats_known_instants() {
        let t = UNIX_EPOCH + Duration::from_millis(1_787_393_702_123);
        assert_eq!(rfc3339(t), "2026-08-22T10:15:02.123Z");
        assert_eq!(compact(t), "20260822T101502123Z");
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(&rfc3339(leap)[..10], "2000-02-29");
    }
}
