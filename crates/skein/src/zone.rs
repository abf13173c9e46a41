//! The time zone of reports: `--timezone`, else `TZ`, else the system zone
//! (`/etc/localtime`), else UTC. Resolving names reads the environment and the time-zone
//! database, so it happens here, at the edge; libraries take the resolved [`Zone`].

use anyhow::{Result, bail};
use jiff::tz::TimeZone;
use skein_core::time::{Zone, ZoneError};

use crate::output::error_line;

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

/// `TZ`, then `/etc/localtime`, then UTC (with a warning when `TZ` or the system zone is set
/// but unusable).
fn local() -> Zone {
    match TimeZone::try_system() {
        Ok(tz) => {
            let name = tz.iana_name().unwrap_or("local").to_owned();
            Zone::from_jiff(&name, tz)
        }
        Err(e) => {
            if std::env::var_os("TZ").is_some_and(|v| !v.is_empty()) {
                error_line(&format!("cannot use TZ ({e}): dates are in UTC"));
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
}
