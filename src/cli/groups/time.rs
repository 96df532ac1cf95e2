//! `--to-datetime` (Kafka's `Utils.getDateTime`) and `--by-duration` (`java.time.Duration`)
//! parsing, with Kafka's error texts.

/// Parses `yyyy-MM-ddTHH:mm:ss.SSS` with an optional zone (`Z`, `±HH`, `±HHmm`, `±HH:mm`) into
/// epoch milliseconds; no zone means UTC. Errors are Kafka's messages.
pub(crate) fn parse_datetime(text: &str) -> Result<i64, String> {
    let Some((_, time)) = text.split_once('T').filter(|(_, t)| !t.is_empty()) else {
        return Err(format!(
            "java.text.ParseException: Error parsing timestamp. It does not contain a 'T' according to ISO8601 format ({text})."
        ));
    };
    // Kafka appends `Z` when the time part names no zone, and reports the amended text.
    let amended = if time.contains(['+', '-', 'Z']) {
        text.to_string()
    } else {
        format!("{text}Z")
    };
    strict_datetime(&amended)
        .ok_or_else(|| format!("java.text.ParseException: Unparseable date: \"{amended}\""))
}

/// `yyyy-MM-ddTHH:mm:ss.SSS<zone>` exactly, with a zone; `None` if anything is off.
fn strict_datetime(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 24 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' {
        return None;
    }
    if b[16] != b':' || b[19] != b'.' {
        return None;
    }
    let num = |from: usize, to: usize| -> Option<i64> {
        let part = s.get(from..to)?;
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    let (year, month, day) = (num(0, 4)?, num(5, 7)?, num(8, 10)?);
    let (hour, minute, second, millis) = (num(11, 13)?, num(14, 16)?, num(17, 19)?, num(20, 23)?);
    let valid = (1..=12).contains(&month)
        && (1..=days_in_month(year, month)).contains(&day)
        && hour < 24
        && minute < 60
        && second < 60;
    if !valid {
        return None;
    }
    let offset = zone_offset_minutes(s.get(23..)?)?;
    let days = days_from_civil(year, month, day);
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset * 60;
    Some(seconds * 1000 + millis)
}

/// `Z`, `±HH`, `±HHmm` or `±HH:mm` as minutes east of UTC.
fn zone_offset_minutes(zone: &str) -> Option<i64> {
    if zone == "Z" {
        return Some(0);
    }
    let sign = match zone.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let digits = &zone[1..];
    let two = |s: &str| -> Option<i64> {
        (s.len() == 2 && s.bytes().all(|c| c.is_ascii_digit())).then(|| s.parse().ok())?
    };
    let (hours, minutes) = match digits.len() {
        2 => (two(digits)?, 0),
        4 => (two(digits.get(..2)?)?, two(digits.get(2..)?)?),
        5 if digits.as_bytes()[2] == b':' => (two(&digits[..2])?, two(&digits[3..])?),
        _ => return None,
    };
    (hours < 24 && minutes < 60).then_some(sign * (hours * 60 + minutes))
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Parses an ISO-8601 duration as `java.time.Duration.parse` does (`[-+]PnDTnHnMn.nS`, days,
/// hours, minutes and seconds only, case-insensitive) into nanoseconds.
pub(super) fn parse_duration(text: &str) -> Result<i128, String> {
    let bad = || format!("Text cannot be parsed to a Duration: {text}");
    let upper = text.to_ascii_uppercase();
    let (negate, rest) = split_sign(&upper);
    let rest = rest.strip_prefix('P').ok_or_else(bad)?;
    let (date, time) = match rest.split_once('T') {
        Some((_, "")) => return Err(bad()),
        Some((d, t)) => (d, Some(t)),
        None => (rest, None),
    };
    let mut total: i128 = 0;
    let mut any = false;
    let mut add = |part: &str, units: &[(char, i128)]| -> Option<()> {
        let mut rest = part;
        for &(unit, nanos) in units {
            if let Some(i) = rest.find(unit) {
                total += field_nanos(&rest[..i], nanos, unit == 'S')?;
                rest = &rest[i + 1..];
                any = true;
            }
        }
        rest.is_empty().then_some(())
    };
    add(date, &[('D', 86_400 * NANOS)]).ok_or_else(bad)?;
    if let Some(time) = time {
        add(
            time,
            &[('H', 3600 * NANOS), ('M', 60 * NANOS), ('S', NANOS)],
        )
        .ok_or_else(bad)?;
    }
    if !any || total.abs() > i128::from(i64::MAX) * NANOS {
        return Err(bad());
    }
    Ok(if negate { -total } else { total })
}

const NANOS: i128 = 1_000_000_000;

fn split_sign(s: &str) -> (bool, &str) {
    match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    }
}

/// One `[-+]digits` field (seconds may have `.` or `,` and up to 9 fraction digits) times its
/// unit in nanoseconds.
fn field_nanos(text: &str, unit: i128, fraction_ok: bool) -> Option<i128> {
    let (negate, body) = split_sign(text);
    let (whole, frac) = match body.split_once(['.', ',']) {
        Some((w, f)) if fraction_ok => (w, Some(f)),
        Some(_) => return None,
        None => (body, None),
    };
    if whole.is_empty() || whole.len() > 19 || !whole.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let mut value = whole.parse::<i128>().ok()? * unit;
    if let Some(f) = frac {
        if f.len() > 9 || !f.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        let padded = format!("{f:0<9}");
        value += padded.parse::<i128>().ok()?;
    }
    Some(if negate { -value } else { value })
}

/// Now minus `nanos`, in epoch milliseconds (Kafka's `Instant.now().minus(d).toEpochMilli()`).
pub(super) fn millis_before_now(nanos: i128) -> i64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128);
    let ms = (now - nanos).div_euclid(1_000_000);
    ms.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datetimes_parse_like_kafka() {
        assert_eq!(parse_datetime("1970-01-01T00:00:00.000"), Ok(0));
        assert_eq!(
            parse_datetime("1970-01-01T00:00:01.5"),
            Err("java.text.ParseException: Unparseable date: \"1970-01-01T00:00:01.5Z\"".into())
        );
        assert_eq!(
            parse_datetime("2024-02-29T12:30:45.123Z"),
            Ok(1_709_209_845_123)
        );
        assert_eq!(
            parse_datetime("2024-02-29T14:30:45.123+02"),
            Ok(1_709_209_845_123)
        );
        assert_eq!(
            parse_datetime("2024-02-29T14:30:45.123+0200"),
            Ok(1_709_209_845_123)
        );
        assert_eq!(
            parse_datetime("2024-02-29T07:00:45.123-05:30"),
            Ok(1_709_209_845_123)
        );
        assert_eq!(parse_datetime("1969-12-31T23:59:59.999"), Ok(-1));
        for bad in [
            "2023-02-29T00:00:00.000",
            "2024-13-01T00:00:00.000",
            "2024-01-01T24:00:00.000",
            "2024-01-01T00:00:00.0000",
            "2024-01-01T00:00:00",
            "2024-1-01T00:00:00.000",
            "2024-01-01T00:00:00.000+2",
            "2024-01-01T00:00:00.000X",
            "2024-01-01Tnoon",
        ] {
            let err = parse_datetime(bad).unwrap_err();
            assert!(err.contains("Unparseable date: \"2"), "{bad}: {err}");
        }
        assert_eq!(
            parse_datetime("2024-01-01").unwrap_err(),
            "java.text.ParseException: Error parsing timestamp. It does not contain a 'T' according to ISO8601 format (2024-01-01)."
        );
        assert!(parse_datetime("2024-01-01T").is_err());
    }

    #[test]
    fn durations_parse_like_java() {
        let s = |n: i128| n * NANOS;
        assert_eq!(parse_duration("PT1H"), Ok(s(3600)));
        assert_eq!(
            parse_duration("P1DT2H30M"),
            Ok(s(86_400 + 2 * 3600 + 30 * 60))
        );
        assert_eq!(parse_duration("PT0.1S"), Ok(NANOS / 10));
        assert_eq!(parse_duration("pt-1.5s"), Ok(-s(3) / 2));
        assert_eq!(parse_duration("-PT1M"), Ok(-s(60)));
        assert_eq!(parse_duration("P2D"), Ok(s(2 * 86_400)));
        for bad in [
            "", "P", "PT", "P1DT", "1H", "PT1H1H", "PT1M1H", "P1H", "PT1.5M", "PTxS", "P1Y",
        ] {
            assert_eq!(
                parse_duration(bad),
                Err(format!("Text cannot be parsed to a Duration: {bad}")),
                "{bad}"
            );
        }
    }
}
