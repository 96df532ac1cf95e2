//! `sasl.jaas.config` as Kafka's clients write it: one login module entry,
//! `ClassName flag key=value key="quoted value" ...;`.
//!
//! The text holds a password, so nothing here ever puts a value into an error or Debug output:
//! errors say what is wrong and where by option name only.

use std::fmt;

/// One parsed login module entry.
pub struct JaasEntry {
    /// The login module's class, e.g. `org.apache.kafka.common.security.scram.ScramLoginModule`.
    pub module: String,
    /// `required`, `requisite`, `sufficient` or `optional`.
    pub flag: String,
    /// The options in order, values unquoted and unescaped.
    options: Vec<(String, String)>,
}

impl JaasEntry {
    /// The value of option `name`, if given.
    pub fn option(&self, name: &str) -> Option<&str> {
        self.options
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Every option, in order (for the fuzz targets' round trip).
    #[cfg(feature = "fuzzing")]
    pub(crate) fn options(&self) -> &[(String, String)] {
        &self.options
    }
}

// By hand: the derived form would print the password.
impl fmt::Debug for JaasEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JaasEntry")
            .field("module", &self.module)
            .field("flag", &self.flag)
            .field(
                "options",
                &self.options.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// The control flags JAAS knows.
const FLAGS: [&str; 4] = ["required", "requisite", "sufficient", "optional"];

/// Parses one entry; the error is a short reason without any value from the text.
pub fn parse(text: &str) -> Result<JaasEntry, String> {
    let mut tokens = Tokens {
        chars: text.chars().peekable(),
    };
    let module = match tokens.next()? {
        Some(Token::Word(w)) => w,
        Some(_) | None => return Err("expected a login module class name first".to_string()),
    };
    let flag = match tokens.next()? {
        Some(Token::Word(w)) if FLAGS.contains(&w.to_ascii_lowercase().as_str()) => {
            w.to_ascii_lowercase()
        }
        _ => {
            return Err(format!(
                "expected a control flag ({}) after the login module name",
                FLAGS.join(", ")
            ));
        }
    };
    let mut options = Vec::new();
    loop {
        match tokens.next()? {
            Some(Token::Semicolon) => break,
            Some(Token::Word(key)) => {
                if tokens.next()? != Some(Token::Equals) {
                    // Not naming the word: after an unquoted value with a space in it, the
                    // "option" is the rest of a password.
                    return Err(
                        "expected key=value options; quote values that contain spaces".to_string(),
                    );
                }
                match tokens.next()? {
                    Some(Token::Word(v) | Token::Quoted(v)) => options.push((key, v)),
                    _ => return Err(format!("expected a value after {key}=")),
                }
            }
            Some(_) => return Err("expected an option name (key=value)".to_string()),
            None => return Err("missing the ';' that ends the login module entry".to_string()),
        }
    }
    if tokens.next()?.is_some() {
        return Err("more than one login module entry; Kafka clients take exactly one".to_string());
    }
    Ok(JaasEntry {
        module,
        flag,
        options,
    })
}

#[derive(Debug, PartialEq, Eq)]
enum Token {
    Word(String),
    Quoted(String),
    Equals,
    Semicolon,
}

/// The lexer: bare words, double-quoted strings with backslash escapes (as Java's
/// StreamTokenizer reads them), `=` and `;`, separated by any white space.
struct Tokens<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
}

impl Tokens<'_> {
    fn next(&mut self) -> Result<Option<Token>, String> {
        while self.chars.next_if(|c| c.is_whitespace()).is_some() {}
        let Some(c) = self.chars.next() else {
            return Ok(None);
        };
        Ok(Some(match c {
            '=' => Token::Equals,
            ';' => Token::Semicolon,
            '"' => {
                let mut value = String::new();
                loop {
                    match self.chars.next() {
                        None => return Err("a quoted value is not closed".to_string()),
                        Some('"') => break,
                        Some('\\') => match self.chars.next() {
                            None => return Err("a quoted value is not closed".to_string()),
                            Some('n') => value.push('\n'),
                            Some('t') => value.push('\t'),
                            Some('r') => value.push('\r'),
                            Some(other) => value.push(other),
                        },
                        Some(other) => value.push(other),
                    }
                }
                Token::Quoted(value)
            }
            first => {
                let mut word = first.to_string();
                while let Some(c) = self
                    .chars
                    .next_if(|c| !c.is_whitespace() && !matches!(c, '=' | ';' | '"'))
                {
                    word.push(c);
                }
                Token::Word(word)
            }
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_kafka_style_entries() {
        let e = parse(
            r#"org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="s3cret";"#,
        )
        .unwrap();
        assert_eq!(
            e.module,
            "org.apache.kafka.common.security.plain.PlainLoginModule"
        );
        assert_eq!(e.flag, "required");
        assert_eq!(e.option("username"), Some("alice"));
        assert_eq!(e.option("password"), Some("s3cret"));
        assert_eq!(e.option("other"), None);
    }

    #[test]
    fn quoted_values_unescape_and_bare_values_work() {
        let e = parse(
            "org.apache.kafka.common.security.scram.ScramLoginModule REQUIRED\n  username=bob\n  password=\"a \\\"quoted\\\" \\\\ pass;word=\" ;",
        )
        .unwrap();
        assert_eq!(e.flag, "required");
        assert_eq!(e.option("username"), Some("bob"));
        assert_eq!(e.option("password"), Some("a \"quoted\" \\ pass;word="));
    }

    #[test]
    fn errors_never_show_values() {
        for bad in [
            r#"org.x.Module required username="alice" password="hunter2""#,
            r#"org.x.Module required username="alice" password="hunter2"#,
            r#"org.x.Module username="alice" password="hunter2";"#,
            r#"org.x.Module required username "hunter2";"#,
            r#"org.x.Module required password="hunter2"; other.Module required;"#,
            // An unquoted value with a space: the rest of it must not be named either.
            r#"org.x.Module required password=hunt hunter2;"#,
            "",
        ] {
            let err = parse(bad).unwrap_err();
            assert!(!err.contains("hunter2"), "{err}");
            assert!(!err.is_empty());
        }
        let e = parse(r#"m.M required password="hunter2";"#).unwrap();
        assert!(!format!("{e:?}").contains("hunter2"));
    }
}
