//! Java's `SimpleDateFormat` patterns (`yyyy-MM-dd HH:mm:ss:SSS`), for `kafka-consumer-perf-test
//! --date-format`: times in milliseconds formatted in the local time zone (`TZ`, else the
//! system's), with English names as Java's default locale has them.

use jiff::tz::TimeZone;

/// A parsed pattern: literal text and fields, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DateFormat {
    parts: Vec<Part>,
    zone: TimeZone,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Text(String),
    /// A pattern letter and how many times it was repeated.
    Field(char, usize),
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

impl DateFormat {
    /// Parses `pattern` as `SimpleDateFormat` does; an unknown letter or an unterminated quote
    /// is Java's error text.
    pub fn new(pattern: &str) -> Result<DateFormat, String> {
        let mut parts = Vec::new();
        let mut chars = pattern.chars().peekable();
        let mut text = String::new();
        while let Some(c) = chars.next() {
            if c == '\'' {
                if chars.peek() == Some(&'\'') {
                    chars.next();
                    text.push('\'');
                    continue;
                }
                // Quoted text up to the next lone quote; '' inside is one quote.
                loop {
                    match chars.next() {
                        None => return Err("Unterminated quote".to_string()),
                        Some('\'') if chars.peek() == Some(&'\'') => {
                            chars.next();
                            text.push('\'');
                        }
                        Some('\'') => break,
                        Some(q) => text.push(q),
                    }
                }
            } else if c.is_ascii_alphabetic() {
                if !"GyYMLwWDdFEuaHkKhmsSzZX".contains(c) {
                    return Err(format!("Illegal pattern character '{c}'"));
                }
                let mut count = 1;
                while chars.peek() == Some(&c) {
                    chars.next();
                    count += 1;
                }
                if c == 'X' && count > 3 {
                    return Err("invalid ISO 8601 format: length=4".to_string());
                }
                if !text.is_empty() {
                    parts.push(Part::Text(std::mem::take(&mut text)));
                }
                parts.push(Part::Field(c, count));
            } else {
                text.push(c);
            }
        }
        if !text.is_empty() {
            parts.push(Part::Text(text));
        }
        Ok(DateFormat {
            parts,
            zone: TimeZone::try_system().unwrap_or(TimeZone::UTC),
        })
    }

    /// `millis` since the epoch, formatted.
    pub fn format(&self, millis: i64) -> String {
        let ts = jiff::Timestamp::from_millisecond(millis).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
        let info = self.zone.to_offset_info(ts);
        let local = Local {
            time: info.offset().to_datetime(ts),
            offset_seconds: info.offset().seconds(),
            abbreviation: info.abbreviation().to_string(),
        };
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Text(t) => out.push_str(t),
                Part::Field(c, n) => field(&mut out, &local, *c, *n),
            }
        }
        out
    }
}

/// A moment in the local time zone.
struct Local {
    time: jiff::civil::DateTime,
    offset_seconds: i32,
    abbreviation: String,
}

/// Appends one field: numbers zero-padded to the letter count, names full from four letters.
fn field(out: &mut String, local: &Local, letter: char, count: usize) {
    let z = &local.time;
    let num = |out: &mut String, v: i64| out.push_str(&format!("{v:0count$}"));
    let hour = i64::from(z.hour());
    let weekday = z.weekday().to_monday_zero_offset() as usize;
    match letter {
        'G' => out.push_str(if z.year() > 0 { "AD" } else { "BC" }),
        'y' | 'Y' if count == 2 => num(out, i64::from(z.year()).rem_euclid(100)),
        'y' | 'Y' => num(out, i64::from(z.year())),
        'M' | 'L' if count >= 4 => out.push_str(MONTHS[z.month() as usize - 1]),
        'M' | 'L' if count == 3 => out.push_str(&MONTHS[z.month() as usize - 1][..3]),
        'M' | 'L' => num(out, i64::from(z.month())),
        'd' => num(out, i64::from(z.day())),
        'D' => num(out, i64::from(z.day_of_year())),
        'F' => num(out, (i64::from(z.day()) - 1) / 7 + 1),
        'w' | 'W' => num(out, week(z, letter == 'w')),
        'E' if count >= 4 => out.push_str(DAYS[weekday]),
        'E' => out.push_str(&DAYS[weekday][..3]),
        'u' => num(out, weekday as i64 + 1),
        'a' => out.push_str(if hour < 12 { "AM" } else { "PM" }),
        'H' => num(out, hour),
        'k' => num(out, if hour == 0 { 24 } else { hour }),
        'K' => num(out, hour % 12),
        'h' => num(out, if hour % 12 == 0 { 12 } else { hour % 12 }),
        'm' => num(out, i64::from(z.minute())),
        's' => num(out, i64::from(z.second())),
        'S' => num(out, i64::from(z.millisecond())),
        'z' => out.push_str(&zone_name(local)),
        'Z' => out.push_str(&offset(local.offset_seconds, false)),
        _ => out.push_str(&iso_offset(local.offset_seconds, count)),
    }
}

/// Week of the year (`w`) or of the month (`W`), weeks starting on Sunday, as Java's default
/// (US) locale counts them.
fn week(z: &jiff::civil::DateTime, of_year: bool) -> i64 {
    let day = if of_year {
        i64::from(z.day_of_year())
    } else {
        i64::from(z.day())
    };
    // Sunday = 0 for the day in question, then back to the first day of the period.
    let weekday = i64::from(z.weekday().to_sunday_zero_offset());
    let first = (weekday - (day - 1)).rem_euclid(7);
    (day - 1 + first) / 7 + 1
}

/// `z`: the zone's abbreviation (`UTC`, `CET`), or its offset as `GMT+hh:mm`.
fn zone_name(local: &Local) -> String {
    let abbreviation = &local.abbreviation;
    if abbreviation.starts_with(['+', '-']) || abbreviation.is_empty() {
        format!("GMT{}", offset(local.offset_seconds, true))
    } else {
        abbreviation.clone()
    }
}

/// `Z`: `+hhmm`; with `colon`, `+hh:mm`.
fn offset(seconds: i32, colon: bool) -> String {
    let sign = if seconds < 0 { '-' } else { '+' };
    let minutes = seconds.unsigned_abs() / 60;
    let sep = if colon { ":" } else { "" };
    format!("{sign}{:02}{sep}{:02}", minutes / 60, minutes % 60)
}

/// `X`, `XX`, `XXX`: ISO 8601 offsets, `Z` for UTC.
fn iso_offset(seconds: i32, count: usize) -> String {
    if seconds == 0 {
        return "Z".to_string();
    }
    let full = offset(seconds, count == 3);
    if count == 1 {
        full[..3].to_string()
    } else {
        full
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(pattern: &str) -> DateFormat {
        let mut f = DateFormat::new(pattern).unwrap();
        f.zone = TimeZone::UTC;
        f
    }

    #[test]
    fn formats_kafkas_default_pattern() {
        // 2026-12-01T21:19:41.573Z, a Tuesday.
        let t = 1_796_159_981_573;
        assert_eq!(
            utc("yyyy-MM-dd HH:mm:ss:SSS").format(t),
            "2026-12-01 21:19:41:573"
        );
        assert_eq!(
            utc("yyyy-MM-dd'T'HH:mm:ss.SSSZ EEE a hh").format(t),
            "2026-12-01T21:19:41.573+0000 Tue PM 09"
        );
        assert_eq!(
            utc("EEEE MMMM yy X z''").format(t),
            "Tuesday December 26 Z UTC'"
        );
        assert_eq!(utc("S").format(t), "573");
    }

    #[test]
    fn refuses_what_java_refuses() {
        assert_eq!(
            DateFormat::new("yyyy-bb").unwrap_err(),
            "Illegal pattern character 'b'"
        );
        assert_eq!(DateFormat::new("'open").unwrap_err(), "Unterminated quote");
    }
}
