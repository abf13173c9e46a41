//! The time zone of reports: `--timezone`, else `TZ`, else the system zone
//! (`/etc/localtime`), else UTC. Resolving names reads the environment and the time-zone
//! database, so it happens here, at the edge; libraries take the resolved [`Zone`].

use std::path::PathBuf;

use anyhow::{Result, bail};
use jiff::tz::TimeZone;
use skein_core::time::{Bound, DateRange, Zone, ZoneError};

use crate::output::warning_line;

/// Now, in milliseconds since the epoch: the clock, read here at the edge.
pub(crate) fn now_ms() -> i64 {
    skein_core::time::unix_ms(std::time::SystemTime::now())
}

/// `--since` / `--until` as one range: days (`2026-05-01`, `20260501`), RFC 3339 times, or
/// durations before `now` (`7d`, `12h`, `30m`, `2w`), the same in every command.
pub(crate) fn date_range(since: Option<&str>, until: Option<&str>, now: i64) -> Result<DateRange> {
    let bound = |flag: &str, v: Option<&str>| -> Result<Option<Bound>> {
        v.map(|t| Bound::parse(t, now).map_err(|e| anyhow::anyhow!("--{flag}: {e}")))
            .transpose()
    };
    Ok(DateRange {
        since: bound("since", since)?,
        until: bound("until", until)?,
    })
}

/// The zone named by `--timezone`, or the local zone when it is absent or `local`.
pub(crate) fn resolve(arg: Option<&str>) -> Result<Zone> {
    match arg.map(str::trim) {
        None | Some("local") => Ok(local()),
        Some(name) => named(name),
    }
}

/// A zone given by name: a fixed offset (`UTC`, `+09:00`, `-0500`), an IANA name
/// (`Europe/Berlin`, looked up in the system's zoneinfo, else jiff's bundled copy), or a POSIX
/// TZ rule (`CET-1CEST,M3.5.0,M10.5.0/3`).
pub(crate) fn named(name: &str) -> Result<Zone> {
    if let Ok(z) = Zone::parse_fixed(name) {
        return Ok(z);
    }
    if let Some(tz) = from_zoneinfo(name) {
        return Ok(Zone::from_jiff(name, tz));
    }
    if let Ok(tz) = TimeZone::get(name) {
        return Ok(Zone::from_jiff(name, tz));
    }
    // A POSIX rule has a comma-separated DST part; plain words are names that were not found.
    if name.contains(',')
        && let Ok(tz) = TimeZone::posix(name)
    {
        return Ok(Zone::from_jiff(name, tz));
    }
    bail!(ZoneError(name.to_owned()))
}

/// The system's zoneinfo directory: `TZDIR`, else `/usr/share/zoneinfo`.
fn zoneinfo_dir() -> PathBuf {
    std::env::var_os("TZDIR")
        .map(PathBuf::from)
        .filter(|d| d.is_absolute())
        .unwrap_or_else(|| PathBuf::from("/usr/share/zoneinfo"))
}

/// An IANA name read straight from its zoneinfo file. jiff's own lookup lists the whole
/// database on first use (some forty directory reads, about a millisecond), which a status
/// line drawn on every message should not pay; names it cannot find this way (another case,
/// no system database) still go through jiff.
fn from_zoneinfo(name: &str) -> Option<TimeZone> {
    let plain = !name.is_empty()
        && !name.starts_with('/')
        && name
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != "..");
    if !plain {
        return None;
    }
    let data = std::fs::read(zoneinfo_dir().join(name)).ok()?;
    TimeZone::tzif(name, &data).ok()
}

/// `TZ` naming a zoneinfo file, or `/etc/localtime` linked into the zoneinfo directory, read
/// directly (see [`from_zoneinfo`]); `None` leaves it to jiff.
fn local_fast() -> Option<Zone> {
    match std::env::var_os("TZ") {
        Some(v) if !v.is_empty() => {
            let v = v.to_str()?;
            let name = v.strip_prefix(':').unwrap_or(v);
            from_zoneinfo(name).map(|tz| Zone::from_jiff(name, tz))
        }
        Some(_) => None,
        None => {
            let target = std::fs::read_link("/etc/localtime").ok()?;
            let target = target.to_str()?;
            let (_, name) = target.rsplit_once("zoneinfo/")?;
            let data = std::fs::read("/etc/localtime").ok()?;
            let tz = TimeZone::tzif(name, &data).ok()?;
            Some(Zone::from_jiff(name, tz))
        }
    }
}

/// `TZ`, then `/etc/localtime`, then UTC (with a warning when `TZ` or the system zone is set
/// but unusable).
fn local() -> Zone {
    if let Some(z) = local_fast() {
        return z;
    }
    match TimeZone::try_system() {
        Ok(tz) => {
            let name = tz.iana_name().unwrap_or("local").to_owned();
            Zone::from_jiff(&name, tz)
        }
        Err(e) => {
            if std::env::var_os("TZ").is_some_and(|v| !v.is_empty()) {
                warning_line(&format!("cannot use TZ ({e}): dates are in UTC"));
            }
            Zone::utc()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve() {
        assert_eq!(named("UTC").expect("utc").name(), "UTC");
        assert_eq!(named("-0500").expect("fixed").name(), "-05:00");
        let berlin = named("Europe/Berlin").expect("iana");
        // 2026-07-01T12:00Z: summer time, +02:00.
        assert_eq!(berlin.offset_ms(1_782_907_200_000), 7_200_000);
        let posix = named("CET-1CEST,M3.5.0,M10.5.0/3").expect("posix");
        assert_eq!(posix.offset_ms(1_782_907_200_000), 7_200_000);
        for bad in ["Mars/Olympus", "", "+25:00", "yesterday"] {
            assert!(named(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn zoneinfo_files_are_read_directly_and_only_inside_the_database() {
        // Where the system has a zoneinfo database, names read straight from it agree with
        // jiff's lookup; another case still resolves through jiff.
        if let Some(direct) = from_zoneinfo("America/New_York") {
            let jiff = TimeZone::get("America/New_York").expect("jiff");
            let t = jiff::Timestamp::from_millisecond(1_782_907_200_000).expect("time");
            assert_eq!(direct.to_offset(t), jiff.to_offset(t));
        }
        assert!(named("europe/berlin").is_ok());
        for outside in [
            "../../etc/passwd",
            "/etc/localtime",
            "Europe/../UTC",
            "Europe//Berlin",
            ".",
        ] {
            assert!(from_zoneinfo(outside).is_none(), "{outside}");
        }
    }
}
