//! Topic name patterns in Java's regular expression syntax, as Kafka's tools take them
//! (`kafka-topics --topic`, `kafka-console-consumer --include`): users copy these from Java,
//! so look-around, back-references, atomic groups and `\Q...\E` quoting work here too.
//!
//! `fancy-regex` covers Java's constructs beyond the `regex` crate's (it hands the parts it can
//! to `regex` and backtracks only where it must); `\Q...\E`, which neither has, is translated
//! into escaped text first.

use std::fmt;

/// A compiled pattern that must match a whole topic name.
#[derive(Clone)]
pub struct TopicPattern {
    regex: fancy_regex::Regex,
    text: String,
}

impl TopicPattern {
    /// Kafka's `IncludeList` topic filter (`--topic` of the admin tools): trimmed as Java
    /// trims, commas become `|`, spaces are removed and quotes around it dropped (property
    /// files may bring them); then [`TopicPattern::whole_names`]. The error names the cleaned
    /// pattern and why it does not compile.
    pub fn include_list(raw: &str) -> Result<TopicPattern, (String, String)> {
        // Java's trim drops every character up to U+0020, control characters included.
        let trimmed = raw.trim_matches(|c: char| c <= ' ');
        let cleaned = trimmed.replace(',', "|").replace(' ', "");
        let cleaned = cleaned.trim_matches(|c| c == '"' || c == '\'');
        TopicPattern::whole_names(cleaned).map_err(|why| (cleaned.to_string(), why))
    }

    /// Compiles `java`, anchored at both ends as Java's `Pattern.matcher(name).matches()`.
    /// The error is the syntax error's one-line description.
    pub fn whole_names(java: &str) -> Result<TopicPattern, String> {
        let translated = translate_quoting(java)?;
        let regex = fancy_regex::Regex::new(&format!("^(?:{translated})$")).map_err(|e| {
            let text = e.to_string();
            let line = text.lines().next().unwrap_or_default();
            // Positions count in the anchored, translated text, not in what the user wrote.
            match line.split_once(": ") {
                Some((at, why)) if at.starts_with("Parsing error at position") => why.to_string(),
                _ => line.to_string(),
            }
        })?;
        Ok(TopicPattern {
            regex,
            text: java.to_string(),
        })
    }

    /// Whether `name` matches. A match that would backtrack past fancy-regex's limit counts as
    /// no match (topic names are at most 249 characters, so only pathological patterns do).
    pub fn is_match(&self, name: &str) -> bool {
        self.regex.is_match(name).unwrap_or(false)
    }

    /// The pattern as given.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl fmt::Debug for TopicPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("TopicPattern").field(&self.text).finish()
    }
}

/// Replaces Java's `\Q...\E` (everything between is literal; an unclosed `\Q` runs to the end)
/// with escaped text. Other escapes pass through as they are.
fn translate_quoting(java: &str) -> Result<String, String> {
    let mut out = String::with_capacity(java.len());
    let mut rest = java;
    while let Some(i) = rest.find('\\') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let Some(next) = after.chars().next() else {
            return Err("the pattern ends with a backslash that escapes nothing".to_string());
        };
        if next == 'Q' {
            let quoted = &after[1..];
            let (literal, tail) = match quoted.find("\\E") {
                Some(end) => (&quoted[..end], &quoted[end + 2..]),
                None => (quoted, ""),
            };
            out.push_str(&fancy_regex::escape(literal));
            rest = tail;
        } else {
            out.push('\\');
            out.push(next);
            rest = &after[next.len_utf8()..];
        }
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, name: &str) -> bool {
        TopicPattern::whole_names(pattern).unwrap().is_match(name)
    }

    #[test]
    fn java_constructs_work() {
        // Look-ahead: every topic ending in "ra" that is not internal.
        assert!(matches("(?!__).*ra", "camera"));
        assert!(!matches("(?!__).*ra", "__extra"));
        assert!(matches("(?<=a)b|ab", "ab"));
        assert!(matches(r"(a)\1", "aa"));
        assert!(matches(r"\Qa.b\E", "a.b"));
        assert!(!matches(r"\Qa.b\E", "axb"));
        assert!(matches(r"x\Q.*", "x.*"));
        assert!(matches(r"\Qa\\E.c", r"a\zc"));
        assert!(matches("orders-[0-9]+", "orders-12"));
        assert!(!matches("orders", "orders-12"), "whole names only");
    }

    #[test]
    fn invalid_patterns_have_one_line_errors() {
        for bad in ["(unclosed", "[z-a]", "*", "\\"] {
            let err = TopicPattern::whole_names(bad).unwrap_err();
            assert!(!err.is_empty() && !err.contains('\n'), "{bad}: {err}");
        }
    }
}
