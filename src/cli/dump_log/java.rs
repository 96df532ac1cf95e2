//! What Kafka's Java tool gets from the JVM, reproduced where it shows in the output: an
//! uncaught exception's first line, `java.io.File`'s path handling, `Long.parseLong`,
//! `new String(bytes, UTF_8)`, `OptionalLong` and `HashMap`'s iteration order.

use std::fmt;

use crate::cli::java_map::{self, Added};

/// An exception that ends Kafka's tool: the JVM prints `Exception in thread "main" ` and the
/// exception (its class, then `: message` when it has one) as the first line on stderr, with a
/// stack trace after it, which kafkit leaves out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JavaError {
    pub class: &'static str,
    pub message: Option<String>,
}

impl JavaError {
    pub fn new(class: &'static str, message: impl Into<String>) -> Self {
        JavaError {
            class,
            message: Some(message.into()),
        }
    }

    /// An exception with no message (`NoSuchElementException`, `BufferUnderflowException`).
    pub fn bare(class: &'static str) -> Self {
        JavaError {
            class,
            message: None,
        }
    }

    pub fn kafka(message: impl Into<String>) -> Self {
        JavaError::new(KAFKA_EXCEPTION, message)
    }

    pub fn illegal_argument(message: impl Into<String>) -> Self {
        JavaError::new("java.lang.IllegalArgumentException", message)
    }

    /// The message as a `Throwable.getMessage()` reader sees it (`null` when there is none).
    pub fn message_or_null(&self) -> &str {
        self.message.as_deref().unwrap_or("null")
    }
}

impl fmt::Display for JavaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Exception in thread \"main\" {}", self.class)?;
        if let Some(m) = &self.message {
            write!(f, ": {m}")?;
        }
        Ok(())
    }
}

impl std::error::Error for JavaError {}

pub const KAFKA_EXCEPTION: &str = "org.apache.kafka.common.KafkaException";
pub const CORRUPT_RECORD: &str = "org.apache.kafka.common.errors.CorruptRecordException";
pub const INVALID_RECORD: &str = "org.apache.kafka.common.InvalidRecordException";
pub const CORRUPT_INDEX: &str = "org.apache.kafka.storage.internals.log.CorruptIndexException";

/// The exception `FileChannel.open` or `Files.readAllBytes` throws for `path`.
pub fn open_error(path: &str, e: &std::io::Error) -> JavaError {
    let class = match e.kind() {
        std::io::ErrorKind::NotFound => "java.nio.file.NoSuchFileException",
        std::io::ErrorKind::PermissionDenied => "java.nio.file.AccessDeniedException",
        _ => return io_exception(e),
    };
    JavaError::new(class, path)
}

/// Java's `IOException` for an I/O error: the system's message alone (`Is a directory`).
pub fn io_exception(e: &std::io::Error) -> JavaError {
    let text = e.to_string();
    let text = match text.rfind(" (os error ") {
        Some(at) => text[..at].to_string(),
        None => text,
    };
    JavaError::new("java.io.IOException", text)
}

/// `java.io.File.toString()` of a path given on the command line: repeated `/` collapse and a
/// trailing `/` goes, as `UnixFileSystem.normalize` does.
pub fn file_display(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        if c == '/' && out.ends_with('/') {
            continue;
        }
        out.push(c);
    }
    if out.len() > 1 && out.ends_with('/') {
        out.pop();
    }
    out
}

/// `File.getAbsolutePath()`: a relative path is resolved against the working directory,
/// without resolving `.`, `..` or links.
pub fn absolute(display: &str) -> String {
    if display.starts_with('/') {
        return display.to_string();
    }
    let cwd = std::env::current_dir()
        .map(|d| d.to_string_lossy().into_owned())
        .unwrap_or_default();
    if display.is_empty() {
        cwd
    } else if cwd.ends_with('/') {
        format!("{cwd}{display}")
    } else {
        format!("{cwd}/{display}")
    }
}

/// `new File(file.getAbsoluteFile().getParent(), name)`: `name` beside the file.
pub fn sibling(display: &str, name: &str) -> String {
    let absolute = absolute(display);
    match absolute.rfind('/') {
        Some(0) => format!("/{name}"),
        Some(at) => format!("{}/{name}", &absolute[..at]),
        None => name.to_string(),
    }
}

/// `File.getName()`: what follows the last `/`.
pub fn file_name(display: &str) -> &str {
    display.rsplit('/').next().unwrap_or(display)
}

/// `name.split("\\.")[0]`: what precedes the first `.` (Java's split drops trailing empty
/// strings, so a name made of dots alone has no element 0).
pub fn name_prefix(name: &str) -> Result<&str, JavaError> {
    if !name.is_empty() && name.bytes().all(|b| b == b'.') {
        return Err(JavaError::new(
            "java.lang.ArrayIndexOutOfBoundsException",
            "Index 0 out of bounds for length 0",
        ));
    }
    Ok(name.split('.').next().unwrap_or(""))
}

/// `Long.parseLong` (ASCII digits, an optional sign).
pub fn parse_long(s: &str) -> Result<i64, JavaError> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    let ok = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
    ok.then(|| s.parse::<i64>().ok()).flatten().ok_or_else(|| {
        JavaError::new(
            "java.lang.NumberFormatException",
            format!("For input string: \"{s}\""),
        )
    })
}

/// The segment's base offset from its file name, as Kafka's tool reads it.
pub fn base_offset(name: &str) -> Result<i64, JavaError> {
    parse_long(name_prefix(name)?)
}

/// `new String(bytes, UTF_8)`: invalid sequences become U+FFFD, as Rust's lossy decoding does,
/// except that the JVM replaces an encoded surrogate (`ED A0..BF`, with or without its third
/// byte) by one U+FFFD where Rust puts one per byte.
pub fn utf8_lossy(bytes: &[u8]) -> String {
    if let Ok(s) = std::str::from_utf8(bytes) {
        return s.to_string();
    }
    let mut out = String::with_capacity(bytes.len() + 8);
    let mut rest = bytes;
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                out.push_str(s);
                break;
            }
            Err(e) => {
                let (good, bad) = rest.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(good).expect("validated prefix"));
                out.push('\u{FFFD}');
                let skip = match bad {
                    [0xed, 0xa0..=0xbf, 0x80..=0xbf, ..] => 3,
                    [0xed, 0xa0..=0xbf, ..] => 2,
                    _ => e.error_len().unwrap_or(bad.len()),
                };
                rest = &bad[skip..];
            }
        }
    }
    out
}

/// `String.valueOf(OptionalLong)`.
pub fn optional_long(v: Option<i64>) -> String {
    match v {
        Some(v) => format!("OptionalLong[{v}]"),
        None => "OptionalLong.empty".to_string(),
    }
}

/// The order in which a `java.util.HashMap<String, _>` that had `keys` added by
/// `computeIfAbsent` (distinct, in that order) iterates them (see `cli::java_map`). Kafka's tool
/// prints its summaries per file in this order.
pub fn hash_map_order<S: AsRef<str>>(keys: &[S]) -> Vec<usize> {
    java_map::hash_map_order(keys, Added::ComputeIfAbsent)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_parses_file_names() {
        assert_eq!(file_display("a//b/"), "a/b");
        assert_eq!(file_display("/"), "/");
        assert_eq!(
            file_name("x/00000000000000000005.log"),
            "00000000000000000005.log"
        );
        assert_eq!(base_offset("00000000000000000005.log").unwrap(), 5);
        assert_eq!(base_offset("-3.log").unwrap(), -3);
        assert_eq!(
            base_offset("abc.log").unwrap_err().to_string(),
            "Exception in thread \"main\" java.lang.NumberFormatException: For input string: \"abc\""
        );
        assert_eq!(
            base_offset(".log").unwrap_err().message_or_null(),
            "For input string: \"\""
        );
        assert!(base_offset("...").is_err());
    }

    #[test]
    fn java_decodes_utf8_with_replacements() {
        assert_eq!(utf8_lossy(b"ok"), "ok");
        assert_eq!(utf8_lossy(&[0xed, 0xa0, 0x80]), "\u{FFFD}");
        assert_eq!(utf8_lossy(&[0xed, 0xa0, 0x41]), "\u{FFFD}A");
        assert_eq!(utf8_lossy(&[0xed, 0xa0, 0xc0]), "\u{FFFD}\u{FFFD}");
        assert_eq!(utf8_lossy(&[0xe0, 0x80, 0x80]), "\u{FFFD}\u{FFFD}\u{FFFD}");
        assert_eq!(utf8_lossy(&[0x41, 0xe2, 0x82]), "A\u{FFFD}");
    }

    #[test]
    fn hash_map_order_follows_java() {
        // "Aa" and "BB" share a hash code: the last added first within the bucket.
        assert_eq!(java_map::string_hash("Aa"), java_map::string_hash("BB"));
        assert_eq!(hash_map_order(&["BB", "Aa"]), vec![1, 0]);
        // Java's HashMap iterates {"b", "a"} as a, b (hashes 98 and 97).
        assert_eq!(hash_map_order(&["b", "a"]), vec![1, 0]);
    }
}
