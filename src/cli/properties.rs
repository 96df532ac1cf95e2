//! `key=value` options (`--reader-property`, `--command-property`, ...) and Java properties
//! files (`--command-config`, `--reader-config`, `--formatter-config`).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context;

/// Property name to value; later entries win.
pub type Properties = BTreeMap<String, String>;

/// Parses `key=value` arguments: split on the first `=`, a bare `key` means an empty value.
pub fn parse_pairs<'a>(pairs: impl IntoIterator<Item = &'a String>) -> Properties {
    pairs
        .into_iter()
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (k.to_string(), v.to_string()),
            None => (p.to_string(), String::new()),
        })
        .collect()
}

/// Reads a `java.util.Properties` file.
pub fn load_file(path: &Path) -> anyhow::Result<Properties> {
    let text = crate::files::read_limited(path, crate::files::CONFIG_FILE_LIMIT)
        .with_context(|| format!("cannot read properties file {}", path.display()))?;
    Ok(parse_java_properties(&String::from_utf8_lossy(&text)))
}

/// Parses the `java.util.Properties` text format: `#`/`!` comments, `=`, `:` or white space
/// between key and value, backslash line continuations and escapes (`\t`, `\n`, `\uXXXX`, ...).
pub fn parse_java_properties(text: &str) -> Properties {
    let mut out = Properties::new();
    let mut logical = String::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if logical.is_empty() && (trimmed.is_empty() || trimmed.starts_with(['#', '!'])) {
            continue;
        }
        logical.push_str(trimmed);
        if ends_with_odd_backslashes(&logical) {
            logical.pop();
            if lines.clone().next().is_some() {
                continue;
            }
        }
        let (k, v) = split_entry(&logical);
        out.insert(unescape(&k), unescape(&v));
        logical.clear();
    }
    out
}

fn ends_with_odd_backslashes(s: &str) -> bool {
    s.chars().rev().take_while(|&c| c == '\\').count() % 2 == 1
}

/// Splits a logical line at the first unescaped `=`, `:` or white space.
fn split_entry(line: &str) -> (String, String) {
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    let mut key = String::new();
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' && i + 1 < chars.len() {
            key.push(c);
            key.push(chars[i + 1]);
            i += 2;
            continue;
        }
        if c == '=' || c == ':' || c.is_whitespace() {
            break;
        }
        key.push(c);
        i += 1;
    }
    while i < chars.len() && chars[i].is_whitespace() {
        i += 1;
    }
    if i < chars.len() && (chars[i] == '=' || chars[i] == ':') {
        i += 1;
    }
    while i < chars.len() && chars[i].is_whitespace() {
        i += 1;
    }
    (key, chars[i..].iter().collect())
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\x0c'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                let unit = u32::from_str_radix(&hex, 16).ok();
                // Java writes a character beyond U+FFFF as two escapes, a UTF-16 surrogate pair.
                if let Some(high @ 0xd800..=0xdbff) = unit {
                    let mut ahead = chars.clone();
                    if let (Some('\\'), Some('u')) = (ahead.next(), ahead.next()) {
                        let low: String = ahead.by_ref().take(4).collect();
                        if let Ok(low @ 0xdc00..=0xdfff) = u32::from_str_radix(&low, 16) {
                            let c = 0x10000 + ((high - 0xd800) << 10) + (low - 0xdc00);
                            out.extend(char::from_u32(c));
                            chars = ahead;
                            continue;
                        }
                    }
                }
                match unit.and_then(char::from_u32) {
                    Some(ch) => out.push(ch),
                    None => out.push_str(&hex),
                }
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

/// Kafka's boolean reading for tool properties: true only for a trimmed, case-insensitive `true`.
pub fn is_true(props: &Properties, key: &str) -> bool {
    props
        .get(key)
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_split_on_first_equals() {
        let args = vec!["a=b=c".to_string(), "bare".to_string(), "a=d".to_string()];
        let p = parse_pairs(&args);
        assert_eq!(p["a"], "d");
        assert_eq!(p["bare"], "");
    }

    #[test]
    fn java_properties_format() {
        let text = "# comment\n! also\nkey1=value1\nkey2 : value2\nkey3 value3\n\
                    long = first \\\n   second\ntab=a\\tb\nuni=\\u0041\nempty=\n  spaced.key  =  v  \n";
        let p = parse_java_properties(text);
        assert_eq!(p["key1"], "value1");
        assert_eq!(p["key2"], "value2");
        assert_eq!(p["key3"], "value3");
        assert_eq!(p["long"], "first second");
        assert_eq!(p["tab"], "a\tb");
        assert_eq!(p["uni"], "A");
        assert_eq!(p["empty"], "");
        assert_eq!(p["spaced.key"], "v  ");
        assert_eq!(p.len(), 8);
    }

    #[test]
    fn characters_beyond_the_bmp_as_java_escapes_them() {
        // Properties.store writes U+1F600 as a surrogate pair of escapes (found by fuzzing:
        // each half was read on its own, as its hex digits).
        let p = parse_java_properties("password=a\\uD83D\\uDE00b\nlone=\\uD83Dx\n");
        assert_eq!(p["password"], "a\u{1F600}b");
        // A high surrogate without its low half cannot be a Rust char: kept as its digits.
        assert_eq!(p["lone"], "D83Dx");
    }
}
