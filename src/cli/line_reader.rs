//! Kafka's `LineMessageReader`: turns one input line into key, value and headers, driven by the
//! reader properties (`parse.key`, `key.separator`, `parse.headers`, `headers.delimiter`,
//! `headers.separator`, `headers.key.separator`, `null.marker`, `ignore.error`).
//!
//! Lines are bytes, kept as they are; separators are matched as bytes, and `headers.separator`
//! is a regular expression as in Kafka.

use std::borrow::Cow;

use regex::bytes::Regex;

use super::properties::{Properties, is_true};

/// The reader's settings, validated.
#[derive(Debug, Clone)]
pub struct LineReader {
    parse_key: bool,
    key_separator: Vec<u8>,
    parse_headers: bool,
    headers_delimiter: Vec<u8>,
    headers_separator: Regex,
    headers_key_separator: Vec<u8>,
    ignore_error: bool,
    null_marker: Option<Vec<u8>>,
}

/// One parsed line, borrowing from it.
#[derive(Debug, PartialEq, Eq)]
pub struct ParsedLine<'a> {
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
    pub headers: Vec<(Cow<'a, str>, Option<&'a [u8]>)>,
}

fn find(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    if needle.is_empty() {
        return Some(from);
    }
    memchr::memmem::find(&hay[from..], needle).map(|i| i + from)
}

impl LineReader {
    /// Builds the reader from its properties; errors carry Kafka's messages.
    pub fn from_properties(props: &Properties) -> Result<LineReader, String> {
        let get = |k: &str, default: &str| props.get(k).cloned().unwrap_or_else(|| default.into());
        let key_sep = get("key.separator", "\t");
        let delim = get("headers.delimiter", "\t");
        let sep = get("headers.separator", ",");
        let key_sep_h = get("headers.key.separator", ":");
        let null_marker = props.get("null.marker").cloned();
        let distinct = [
            ("headers.delimiter", &delim, "headers.separator", &sep),
            (
                "headers.delimiter",
                &delim,
                "headers.key.separator",
                &key_sep_h,
            ),
            (
                "headers.separator",
                &sep,
                "headers.key.separator",
                &key_sep_h,
            ),
        ];
        let parse_headers = is_true(props, "parse.headers");
        if parse_headers {
            for (a, av, b, bv) in distinct {
                if av == bv {
                    return Err(format!("{a} and {b} may not be equal"));
                }
            }
        }
        if let Some(marker) = &null_marker {
            let mut others = vec![("key.separator", &key_sep)];
            if parse_headers {
                others.extend([
                    ("headers.separator", &sep),
                    ("headers.delimiter", &delim),
                    ("headers.key.separator", &key_sep_h),
                ]);
            }
            for (name, v) in others {
                if marker == v {
                    return Err(format!("null.marker and {name} may not be equal"));
                }
            }
        }
        let headers_separator = Regex::new(&sep).map_err(|e| {
            format!("headers.separator '{sep}' is not a valid regular expression: {e}")
        })?;
        Ok(LineReader {
            parse_key: is_true(props, "parse.key"),
            key_separator: key_sep.into_bytes(),
            parse_headers,
            headers_delimiter: delim.into_bytes(),
            headers_separator,
            headers_key_separator: key_sep_h.into_bytes(),
            ignore_error: is_true(props, "ignore.error"),
            null_marker: null_marker.map(String::into_bytes),
        })
    }

    fn is_null(&self, field: &[u8]) -> bool {
        self.null_marker.as_deref() == Some(field)
    }

    /// The text between `start` and the next `sep`, or `None` when parsing is off (or the
    /// separator is missing and errors are ignored).
    fn part<'a>(
        &self,
        enabled: bool,
        line: &'a [u8],
        start: usize,
        sep: &[u8],
        what: &str,
        number: u64,
    ) -> Result<Option<&'a [u8]>, String> {
        if !enabled {
            return Ok(None);
        }
        match find(line, sep, start) {
            Some(end) => Ok(Some(&line[start..end])),
            None if self.ignore_error => Ok(None),
            None => Err(format!(
                "No {what} found on line number {number}: '{}'",
                String::from_utf8_lossy(line)
            )),
        }
    }

    /// Parses one line (without its line terminator); `number` counts from 1.
    pub fn parse<'a>(&self, line: &'a [u8], number: u64) -> Result<ParsedLine<'a>, String> {
        if !self.parse_headers && !self.parse_key && self.null_marker.is_none() {
            // The default reader: the whole line is the value (the common case, kept short).
            return Ok(ParsedLine {
                key: None,
                value: Some(line),
                headers: Vec::new(),
            });
        }
        let headers = self.part(
            self.parse_headers,
            line,
            0,
            &self.headers_delimiter,
            "headers delimiter",
            number,
        )?;
        let header_end = headers.map_or(0, |h| h.len() + self.headers_delimiter.len());
        let key = self.part(
            self.parse_key,
            line,
            header_end,
            &self.key_separator,
            "key separator",
            number,
        )?;
        let key_end = key.map_or(0, |k| k.len() + self.key_separator.len());
        let value = &line[header_end + key_end..];
        let mut parsed = ParsedLine {
            key: key.filter(|k| !self.is_null(k)),
            value: Some(value).filter(|v| !self.is_null(v)),
            headers: Vec::new(),
        };
        if let Some(block) = headers.filter(|h| !self.is_null(h)) {
            for pair in java_split(&self.headers_separator, block) {
                parsed.headers.push(self.header(pair, number)?);
            }
        }
        Ok(parsed)
    }

    fn header<'a>(
        &self,
        pair: &'a [u8],
        number: u64,
    ) -> Result<(Cow<'a, str>, Option<&'a [u8]>), String> {
        let Some(i) = find(pair, &self.headers_key_separator, 0) else {
            if self.ignore_error {
                return Ok((String::from_utf8_lossy(pair), None));
            }
            return Err(format!(
                "No header key separator found in pair '{}' on line number {number}",
                String::from_utf8_lossy(pair)
            ));
        };
        let key = &pair[..i];
        if self.is_null(key) {
            return Err(format!(
                "Header keys should not be equal to the null marker '{}' as they can't be null",
                String::from_utf8_lossy(key)
            ));
        }
        let value = &pair[i + self.headers_key_separator.len()..];
        Ok((
            String::from_utf8_lossy(key),
            Some(value).filter(|v| !self.is_null(v)),
        ))
    }
}

/// Java's `String.split(regex)`: trailing empty parts are dropped, but an empty input gives one
/// empty part.
fn java_split<'a>(re: &Regex, text: &'a [u8]) -> Vec<&'a [u8]> {
    if text.is_empty() {
        return vec![text];
    }
    let mut parts: Vec<&[u8]> = re.split(text).collect();
    // A zero-width match at the very start yields no leading empty part in Java.
    if parts.len() > 1 && parts[0].is_empty() && re.find(text).is_some_and(|m| m.end() == 0) {
        parts.remove(0);
    }
    while parts.len() > 1 && parts.last().is_some_and(|p| p.is_empty()) {
        parts.pop();
    }
    if parts.len() == 1 && parts[0].is_empty() {
        return Vec::new();
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(pairs: &[(&str, &str)]) -> LineReader {
        let props = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        LineReader::from_properties(&props).unwrap()
    }

    #[test]
    fn plain_lines_are_values() {
        let r = reader(&[]);
        let p = r.parse(b"hello\tworld", 1).unwrap();
        assert_eq!(p.key, None);
        assert_eq!(p.value, Some(&b"hello\tworld"[..]));
        assert_eq!(r.parse(b"", 2).unwrap().value, Some(&b""[..]));
    }

    #[test]
    fn keys_and_headers() {
        let r = reader(&[("parse.key", "true"), ("parse.headers", "TRUE ")]);
        let p = r.parse(b"h1:v1,h2:v2\tk\tv", 1).unwrap();
        assert_eq!(p.key, Some(&b"k"[..]));
        assert_eq!(p.value, Some(&b"v"[..]));
        assert_eq!(
            p.headers,
            vec![
                ("h1".into(), Some(&b"v1"[..])),
                ("h2".into(), Some(&b"v2"[..]))
            ]
        );
    }

    #[test]
    fn missing_separator_errors_or_is_ignored() {
        let r = reader(&[("parse.key", "true")]);
        assert_eq!(
            r.parse(b"novalue", 7).unwrap_err(),
            "No key separator found on line number 7: 'novalue'"
        );
        let r = reader(&[("parse.key", "true"), ("ignore.error", "true")]);
        let p = r.parse(b"novalue", 7).unwrap();
        assert_eq!((p.key, p.value), (None, Some(&b"novalue"[..])));
    }

    #[test]
    fn null_marker() {
        let r = reader(&[
            ("parse.key", "true"),
            ("parse.headers", "true"),
            ("null.marker", "NULL"),
        ]);
        let p = r.parse(b"a:NULL\tNULL\tNULL", 1).unwrap();
        assert_eq!((p.key, p.value), (None, None));
        assert_eq!(p.headers, vec![("a".into(), None)]);
        assert!(
            r.parse(b"NULL:x\tk\tv", 1)
                .unwrap_err()
                .contains("null marker 'NULL'")
        );
        assert!(r.parse(b"NULL\tk\tv", 1).unwrap().headers.is_empty());
    }

    #[test]
    fn config_conflicts() {
        let props: Properties = [("parse.headers", "true"), ("headers.separator", "\t")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(
            LineReader::from_properties(&props).unwrap_err(),
            "headers.delimiter and headers.separator may not be equal"
        );
        let props: Properties = [("null.marker", "\t")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(
            LineReader::from_properties(&props).unwrap_err(),
            "null.marker and key.separator may not be equal"
        );
    }

    #[test]
    fn header_separator_is_a_regex_with_java_split() {
        let r = reader(&[("parse.headers", "true"), ("headers.separator", "[,;]")]);
        let p = r.parse(b"a:1;b:2,\tv", 1).unwrap();
        assert_eq!(p.headers.len(), 2);
        let err = r.parse(b"\tv", 3).unwrap_err();
        assert_eq!(
            err,
            "No header key separator found in pair '' on line number 3"
        );
    }
}
