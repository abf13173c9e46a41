use super::*;
use proptest::prelude::*;

fn berlin() -> Zone {
    // Europe/Berlin's rule as a POSIX TZ string, so the test needs no time-zone database:
    // CET (+01:00), CEST (+02:00) from the last Sunday of March 02:00 to the last Sunday of
    // October 03:00.
    let tz = jiff::tz::TimeZone::posix("CET-1CEST,M3.5.0,M10.5.0/3").expect("posix tz");
    Zone::from_jiff("Europe/Berlin", tz)
}

#[test]
fn parses_iso_8601_forms() {
    let ms = parse_ms("2026-05-01T10:00:02.123Z").expect("ts");
    assert_eq!(format_ms(ms), "2026-05-01T10:00:02.123Z");
    assert_eq!(parse_ms("2026-05-01T12:00:02.123456+02:00"), Some(ms));
    assert_eq!(parse_ms("2026-05-01T12:00:02.123+0200"), Some(ms));
    assert_eq!(parse_ms("2026-05-01T07:00:02.123-03"), Some(ms));
    assert_eq!(parse_ms("2026-05-01 10:00:02,123z"), Some(ms));
    assert_eq!(parse_ms("2026-05-01T10:00:02.1Z"), Some(ms - 23));
    assert_eq!(parse_ms("2026-05-01T10:00:02"), Some(ms - 123));
    assert_eq!(parse_ms("2026-05-01T10:00Z"), Some(ms - 2123));
    assert_eq!(parse_ms("2026-05-01"), parse_ms("2026-05-01T00:00:00Z"));
    assert_eq!(parse_ms("1970-01-01T00:00:00Z"), Some(0));
    assert_eq!(parse_ms("1970-01-01T01:00:00+01:00"), Some(0));
    assert_eq!(parse_ms("2000-03-01T00:00:00.000Z"), Some(951_868_800_000));
    assert_eq!(parse_ms("1969-12-31T23:59:59.999Z"), Some(-1));
    assert_eq!(
        parse_ms("2016-12-31T23:59:60Z"),
        parse_ms("2017-01-01T00:00:00Z")
    );
    for bad in [
        "",
        "x",
        "garbage-and-more-text",
        "2026-05-01T1",
        "2026-05-01T10:00:02Zx",
        "2026-05-01T10:00:02.Z",
        "2026-05-01T10:00:02+2",
        "2026-05-01T10:00:02+02:0",
        "2026-05-01T24:00:00Z",
        "2026-13-01T00:00Z",
        "2026-02-29T00:00:00Z",
        "2026-04-31",
        "2026/05/01T10:00:00Z",
        "+2026-05-01T10:00:00Z",
    ] {
        assert_eq!(parse_ms(bad), None, "{bad}");
    }
    assert_eq!(parse_ms("2024-02-29T00:00:00Z"), Some(1_709_164_800_000));
}

#[test]
fn formats_instants() {
    let t = 1_787_393_702_123;
    assert_eq!(format_ms(t), "2026-08-22T10:15:02.123Z");
    assert_eq!(format_compact_ms(t), "20260822T101502123Z");
    assert_eq!(format_ms(0), "1970-01-01T00:00:00.000Z");
    assert_eq!(format_ms(-1), "1969-12-31T23:59:59.999Z");
    assert_eq!(&format_ms(951_782_400_000)[..10], "2000-02-29");
    let c = Civil::from_ms(1_767_621_802_000);
    assert_eq!(
        (c.year, c.month, c.day, c.hour, c.minute, c.second),
        (2026, 1, 5, 14, 3, 22)
    );
    assert_eq!(c.date().key(), "2026-01-05");
    let before = std::time::UNIX_EPOCH - std::time::Duration::from_millis(1500);
    assert_eq!(unix_ms(before), -1500);
    assert_eq!(
        unix_ms(std::time::UNIX_EPOCH + std::time::Duration::from_millis(7)),
        7
    );
}

#[test]
fn days_and_keys() {
    let d = Day::parse("2026-05-01").expect("date");
    assert_eq!(Day::parse("20260501"), Ok(d));
    for bad in [
        "2026-5-1",
        "2026-13-01",
        "2026-02-30",
        "2026050",
        "2026x0501",
        "２０２６0501",
    ] {
        assert!(Day::parse(bad).is_err(), "{bad}");
    }
    assert_eq!(d.month_key(), "2026-05");
    assert_eq!(d.week_key(), "2026-04-27");
    assert_eq!(
        Day::parse("2026-04-27").expect("d").week_key(),
        "2026-04-27"
    );
    assert_eq!(
        Day::parse("2026-05-03").expect("d").week_key(),
        "2026-04-27"
    );
    assert_eq!(Day::from_days(0).key(), "1970-01-01");
    for days in [-800_000_i64, -1, 0, 1, 11_016, 20_000, 2_932_896] {
        assert_eq!(Day::from_days(days).days_since_epoch(), days);
    }
}

#[test]
fn ranges_are_inclusive_local_days() {
    let r = DateRange {
        since: Day::parse("2026-05-01").ok().map(Bound::Day),
        until: Day::parse("2026-05-02").ok().map(Bound::Day),
    };
    let utc = Zone::utc();
    assert!(r.contains_timestamp(Some("2026-05-01T00:00:00Z"), &utc));
    assert!(r.contains_timestamp(Some("2026-05-02T23:59:59.999Z"), &utc));
    assert!(!r.contains_timestamp(Some("2026-05-03T00:00:00Z"), &utc));
    // The offset in the timestamp is honoured: this is 2026-05-03T00:30Z.
    assert!(!r.contains_timestamp(Some("2026-05-02T23:30:00-01:00"), &utc));
    assert!(!r.contains_timestamp(None, &utc));
    assert!(!r.contains_timestamp(Some("not a time"), &utc));
    assert!(DateRange::default().contains_timestamp(None, &utc));
    // In Berlin, 2026-04-30T22:30Z is already May 1st.
    assert!(!r.contains_timestamp(Some("2026-04-30T22:30:00Z"), &utc));
    assert!(r.contains_timestamp(Some("2026-04-30T22:30:00Z"), &berlin()));
}

#[test]
fn fixed_zones() {
    assert_eq!(Zone::parse_fixed("UTC"), Ok(Zone::utc()));
    assert_eq!(Zone::parse_fixed("z"), Ok(Zone::utc()));
    let ms = parse_ms("2026-05-31T23:30:00Z").expect("ts");
    let offset = |s: &str| Zone::parse_fixed(s).map(|z| z.offset_ms(ms) / 60_000);
    assert_eq!(offset("+09:00"), Ok(540));
    assert_eq!(offset("-0530"), Ok(-330));
    assert_eq!(offset("GMT-05"), Ok(-300));
    assert_eq!(offset("UTC+14"), Ok(840));
    for bad in [
        "UTC+1",
        "-:::::",
        "+1:1:1",
        "+15:00",
        "+09:60",
        "Europe/Paris",
        "+9",
        "local",
        "",
        " ",
    ] {
        assert!(Zone::parse_fixed(bad).is_err(), "{bad}");
    }
    assert_eq!(Zone::parse_fixed("-0530").expect("tz").name(), "-05:30");
    assert_eq!(Zone::utc().day_of(ms).key(), "2026-05-31");
    let east = Zone::parse_fixed("+01:00").expect("tz");
    assert_eq!(east.day_of(ms).key(), "2026-06-01");
    assert_eq!(east.format_ms(ms), "2026-06-01T00:30:00.000+01:00");
    assert_eq!(Zone::utc().format_ms(ms), "2026-05-31T23:30:00.000Z");
}

#[test]
fn dst_changes_move_day_boundaries() {
    let z = berlin();
    let at = |ts: &str| parse_ms(ts).expect("ts");
    // Winter: +01:00. 2026-03-28T23:30Z is 00:30 on the 29th in Berlin.
    assert_eq!(z.offset_ms(at("2026-03-28T23:30:00Z")), 3_600_000);
    assert_eq!(z.day_of(at("2026-03-28T23:30:00Z")).key(), "2026-03-29");
    assert_eq!(z.day_of(at("2026-03-28T22:59:59Z")).key(), "2026-03-28");
    // The change happens at 01:00Z on 2026-03-29: from then on +02:00.
    assert_eq!(z.offset_ms(at("2026-03-29T00:59:59Z")), 3_600_000);
    assert_eq!(z.offset_ms(at("2026-03-29T01:00:00Z")), 7_200_000);
    assert_eq!(z.day_of(at("2026-03-29T22:30:00Z")).key(), "2026-03-30");
    assert_eq!(z.day_of(at("2026-03-29T21:59:59Z")).key(), "2026-03-29");
    // 2026-03-29 is 23 hours long in Berlin; 2026-10-25 is 25 hours long.
    let day = |s: &str| Day::parse(s).expect("day");
    let len = |a: &str, b: &str| z.start_of_day(day(b)) - z.start_of_day(day(a));
    assert_eq!(len("2026-03-29", "2026-03-30"), 23 * 3_600_000);
    assert_eq!(len("2026-10-25", "2026-10-26"), 25 * 3_600_000);
    assert_eq!(
        z.start_of_day(day("2026-03-29")),
        at("2026-03-28T23:00:00Z")
    );
    assert_eq!(
        z.format_ms(at("2026-07-01T12:00:00Z")),
        "2026-07-01T14:00:00.000+02:00"
    );
    assert_eq!(z.civil_of(at("2026-10-25T00:30:00Z")).hour, 2);
    assert_eq!(z.civil_of(at("2026-10-25T01:30:00Z")).hour, 2);
}

proptest! {
    /// The hand-written parser agrees with jiff's RFC 3339 parser on every RFC 3339 instant.
    #[test]
    fn parse_agrees_with_jiff(
        days in -700_000_i64..2_900_000,
        ms_of_day in 0_i64..MS_PER_DAY,
        frac_digits in 0_usize..10,
        offset_min in -1439_i32..1439,
        sep in prop::sample::select(vec!["T", "t", " "]),
    ) {
        let local = days * MS_PER_DAY + ms_of_day;
        let c = Civil::from_ms(local);
        prop_assume!((0..=9999).contains(&c.year));
        let frac = format!("{:03}456789", c.milli);
        let frac = if frac_digits == 0 { String::new() } else { format!(".{}", &frac[..frac_digits]) };
        let zone = if offset_min == 0 {
            "Z".to_owned()
        } else {
            let m = offset_min.unsigned_abs();
            format!("{}{:02}:{:02}", if offset_min < 0 { '-' } else { '+' }, m / 60, m % 60)
        };
        let text = format!(
            "{:04}-{:02}-{:02}{sep}{:02}:{:02}:{:02}{frac}{zone}",
            c.year, c.month, c.day, c.hour, c.minute, c.second
        );
        let ours = parse_ms(&text);
        // jiff keeps nanoseconds; skein drops the digits after the milliseconds (the floor).
        let theirs = text
            .parse::<jiff::Timestamp>()
            .ok()
            .map(|t| i64::try_from(t.as_nanosecond().div_euclid(1_000_000)).expect("ms"));
        prop_assert_eq!(ours, theirs, "{}", text);
        let milli = i64::from(c.milli);
        let kept = match frac_digits { 0 => 0, 1 => milli / 100 * 100, 2 => milli / 10 * 10, _ => milli };
        prop_assert_eq!(ours, Some(local - milli + kept - i64::from(offset_min) * 60_000));
    }

    /// Formatting then parsing gives the instant back.
    #[test]
    fn format_round_trips(ms in -62_000_000_000_000_i64..253_000_000_000_000) {
        prop_assert_eq!(parse_ms(&format_ms(ms)), Some(ms));
    }

    /// Never panics on arbitrary text.
    #[test]
    fn parse_total(s in "\\PC{0,40}") {
        let _ = parse_ms(&s);
        let _ = Day::parse(&s);
        let _ = Zone::parse_fixed(&s);
    }

    /// A local day in a fixed zone is the UTC day of the shifted instant.
    #[test]
    fn local_day_in_fixed_zones(ms in -1_000_000_000_000_i64..10_000_000_000_000, minutes in -840_i32..=840) {
        let z = Zone::fixed_minutes(minutes).expect("zone");
        prop_assert_eq!(z.day_of(ms), Day::of_ms(ms + i64::from(minutes) * 60_000));
        let start = z.start_of_day(z.day_of(ms));
        prop_assert!(start <= ms && ms - start < MS_PER_DAY);
    }
}

#[test]
fn bounds_are_days_times_or_relative() {
    let now = parse_ms("2026-05-10T12:00:00Z").expect("now");
    let day = Day::parse("2026-05-01").expect("day");
    assert_eq!(Bound::parse("2026-05-01", now), Ok(Bound::Day(day)));
    assert_eq!(Bound::parse("20260501", now), Ok(Bound::Day(day)));
    assert_eq!(
        Bound::parse("2026-05-01T10:00:00+02:00", now),
        Ok(Bound::Instant(parse_ms("2026-05-01T08:00:00Z").expect("t")))
    );
    let ago = |s: &str| Bound::parse(s, now).map(|b| b.start_ms(&Zone::utc()));
    assert_eq!(ago("7d"), Ok(parse_ms("2026-05-03T12:00:00Z").expect("t")));
    assert_eq!(ago("12h"), Ok(parse_ms("2026-05-10T00:00:00Z").expect("t")));
    assert_eq!(ago("2w"), Ok(parse_ms("2026-04-26T12:00:00Z").expect("t")));
    assert_eq!(ago("30m"), Ok(parse_ms("2026-05-10T11:30:00Z").expect("t")));
    assert_eq!(ago("0s"), Ok(now));
    for bad in [
        "",
        "d",
        "7x",
        "-7d",
        "7 d",
        "2026-02-30",
        "2026-02-30T10:00:00Z",
        "yesterday",
    ] {
        assert!(Bound::parse(bad, now).is_err(), "{bad:?} was accepted");
    }
    assert!(Bound::parse("99999999999999999d", now).is_err());
}

#[test]
fn instant_bounds_cut_inside_a_day() {
    let now = parse_ms("2026-05-10T12:00:00Z").expect("now");
    let r = DateRange {
        since: Some(Bound::parse("12h", now).expect("since")),
        until: Some(Bound::parse("2026-05-10T11:00:00Z", now).expect("until")),
    };
    let utc = Zone::utc();
    assert!(!r.contains_timestamp(Some("2026-05-09T23:59:59.999Z"), &utc));
    assert!(r.contains_timestamp(Some("2026-05-10T00:00:00Z"), &utc));
    assert!(r.contains_timestamp(Some("2026-05-10T11:00:00Z"), &utc));
    assert!(!r.contains_timestamp(Some("2026-05-10T11:00:00.001Z"), &utc));
    assert_eq!(
        r.bounds_ms(&utc),
        (
            parse_ms("2026-05-10T00:00:00Z"),
            parse_ms("2026-05-10T11:00:00.001Z")
        )
    );
    // A day bound ends at the next local midnight.
    let d = DateRange {
        since: None,
        until: Some(Bound::Day(Day::parse("2026-05-01").expect("d"))),
    };
    assert_eq!(d.bounds_ms(&berlin()).1, parse_ms("2026-05-01T22:00:00Z"));
}
