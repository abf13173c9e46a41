//! Any text: the time parsers never panic, every instant parsed formats back to itself, a
//! parsed day's keys are consistent, and a zone parsed from text gives a local day within a day
//! of the UTC one.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skein_core::time::{Day, MS_PER_DAY, Zone, format_ms, parse_ms};

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    if let Some(ms) = parse_ms(s) {
        assert_eq!(parse_ms(&format_ms(ms)), Some(ms), "{s:?}");
        let utc = Day::of_ms(ms);
        assert_eq!(Day::from_days(utc.days_since_epoch()), utc);
        if let Ok(z) = Zone::parse_fixed(s.get(..6).unwrap_or("UTC")) {
            let local = z.day_of(ms).days_since_epoch();
            assert!((local - ms.div_euclid(MS_PER_DAY)).abs() <= 1);
        }
    }
    if let Ok(d) = Day::parse(s) {
        assert_eq!(Day::parse(&d.key()), Ok(d));
        assert!(d.week_key() <= d.key());
    }
    let _ = Zone::parse_fixed(s);
});
