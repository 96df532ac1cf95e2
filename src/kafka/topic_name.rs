//! Kafka's rules for topic names: which names are legal, which are internal, and which could
//! collide in metric names.
//!
//! The rules and messages are those of Kafka 4.x (`org.apache.kafka.common.internals.Topic`):
//! 1 to 249 characters from `[a-zA-Z0-9._-]`, and neither `.` nor `..`. Lengths are counted in
//! UTF-16 code units, as Java's `String.length()` does, so the check order matches Kafka's for
//! non-ASCII names too. [`validate`]'s error text is exactly what a broker returns for a bad name
//! (`Topic name is invalid: …`).

/// The longest legal topic name, in UTF-16 code units (all legal names are ASCII).
pub const MAX_NAME_LENGTH: usize = 249;

/// Kafka's internal topics, as `Topic.isInternal` knows them (`--exclude-internal` hides these).
pub const INTERNAL_TOPICS: [&str; 3] = [
    "__consumer_offsets",
    "__transaction_state",
    "__share_group_state",
];

/// Why `name` is not a legal topic name, worded as Kafka words it, or `None` if it is legal.
fn reason_invalid(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("the empty string is not allowed".to_string());
    }
    if name == "." {
        return Some("'.' is not allowed".to_string());
    }
    if name == ".." {
        return Some("'..' is not allowed".to_string());
    }
    if name.encode_utf16().count() > MAX_NAME_LENGTH {
        return Some(format!(
            "the length of '{name}' is longer than the max allowed length {MAX_NAME_LENGTH}"
        ));
    }
    if !name.bytes().all(is_legal_byte) {
        return Some(format!(
            "'{name}' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"
        ));
    }
    None
}

/// One byte of a legal name: ASCII letters and digits, `.`, `_` and `-`. Any byte of a multi-byte
/// UTF-8 character is >= 0x80 and so is rejected, as Kafka rejects every non-ASCII character.
fn is_legal_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || b == b'-'
}

/// Checks a topic name the way Kafka does. The error is Kafka's `InvalidTopicException` text:
///
/// - `Topic name is invalid: the empty string is not allowed`
/// - `Topic name is invalid: '.' is not allowed` (and the same for `'..'`)
/// - `Topic name is invalid: the length of '<name>' is longer than the max allowed length 249`
/// - `Topic name is invalid: '<name>' contains one or more characters other than ASCII
///   alphanumerics, '.', '_' and '-'` (on one line)
pub fn validate(name: &str) -> Result<(), String> {
    match reason_invalid(name) {
        None => Ok(()),
        Some(reason) => Err(format!("Topic name is invalid: {reason}")),
    }
}

/// True if [`validate`] accepts `name`.
pub fn is_valid(name: &str) -> bool {
    reason_invalid(name).is_none()
}

/// True if `name` contains `.` or `_`, which Kafka's metric names cannot tell apart
/// (`kafka-topics --create` then prints its "could collide" warning).
pub fn has_collision_chars(name: &str) -> bool {
    name.contains(['.', '_'])
}

/// `name` with every `.` replaced by `_`: two names collide when these forms are equal.
pub fn unify_collision_chars(name: &str) -> String {
    name.replace('.', "_")
}

/// True if `a` and `b` differ at most by `.` versus `_` in the same positions.
pub fn has_collision(a: &str, b: &str) -> bool {
    unify_collision_chars(a) == unify_collision_chars(b)
}

/// Refuses a new topic whose name collides with an existing one, as Kafka's controller does:
/// `Topic '<name>' collides with existing topic: <existing>`. An existing topic with exactly the
/// same name is not a collision (that is "already exists", which the caller reports).
pub fn check_collision<'a, I>(name: &str, existing: I) -> Result<(), String>
where
    I: IntoIterator<Item = &'a str>,
{
    if !has_collision_chars(name) {
        return Ok(());
    }
    let unified = unify_collision_chars(name);
    match existing
        .into_iter()
        .find(|other| *other != name && unify_collision_chars(other) == unified)
    {
        Some(other) => Err(format!(
            "Topic '{name}' collides with existing topic: {other}"
        )),
        None => Ok(()),
    }
}

/// True for Kafka's internal topics: `__consumer_offsets`, `__transaction_state` and
/// `__share_group_state`.
pub fn is_internal(name: &str) -> bool {
    INTERNAL_TOPICS.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_legal_names() {
        for name in [
            "a",
            "orders",
            "Orders-2024_v1.x",
            "-",
            "_",
            "...",
            ".a",
            "a..",
            "__x",
        ] {
            assert_eq!(validate(name), Ok(()), "{name}");
            assert!(is_valid(name), "{name}");
        }
        let longest = "a".repeat(MAX_NAME_LENGTH);
        assert_eq!(validate(&longest), Ok(()));
    }

    #[test]
    fn rejects_empty_and_dots() {
        assert_eq!(
            validate(""),
            Err("Topic name is invalid: the empty string is not allowed".to_string())
        );
        assert_eq!(
            validate("."),
            Err("Topic name is invalid: '.' is not allowed".to_string())
        );
        assert_eq!(
            validate(".."),
            Err("Topic name is invalid: '..' is not allowed".to_string())
        );
        assert!(!is_valid(""));
        assert!(!is_valid(".."));
    }

    #[test]
    fn rejects_long_names() {
        let name = "x".repeat(MAX_NAME_LENGTH + 1);
        assert_eq!(
            validate(&name),
            Err(format!(
                "Topic name is invalid: the length of '{name}' is longer than the max allowed length 249"
            ))
        );
    }

    #[test]
    fn rejects_illegal_characters() {
        for name in ["a b", "a/b", "a:b", "tab\t", "é", "a*", "topic!"] {
            assert_eq!(
                validate(name),
                Err(format!(
                    "Topic name is invalid: '{name}' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"
                )),
                "{name}"
            );
        }
    }

    #[test]
    fn length_is_checked_before_characters_in_utf16_units() {
        // 125 characters outside the BMP are 250 UTF-16 units: too long, as in Java.
        let name = "\u{1F600}".repeat(125);
        assert!(
            validate(&name)
                .unwrap_err()
                .contains("is longer than the max allowed length")
        );
        // 124 of them are 248 units: short enough, so the character rule reports it.
        let name = "\u{1F600}".repeat(124);
        assert!(
            validate(&name)
                .unwrap_err()
                .contains("contains one or more characters")
        );
    }

    #[test]
    fn collision_chars() {
        assert!(has_collision_chars("a.b"));
        assert!(has_collision_chars("a_b"));
        assert!(!has_collision_chars("a-b"));
        assert_eq!(unify_collision_chars("a.b_c.d"), "a_b_c_d");
        assert!(has_collision("a.b", "a_b"));
        assert!(has_collision("a.b", "a.b"));
        assert!(!has_collision("a.b", "ab"));
    }

    #[test]
    fn collision_with_existing_topics() {
        let existing = ["orders", "a_b", "x.y"];
        assert_eq!(
            check_collision("a.b", existing),
            Err("Topic 'a.b' collides with existing topic: a_b".to_string())
        );
        assert_eq!(
            check_collision("x_y", existing),
            Err("Topic 'x_y' collides with existing topic: x.y".to_string())
        );
        assert_eq!(check_collision("a_b", existing), Ok(()));
        assert_eq!(check_collision("orders", existing), Ok(()));
        assert_eq!(check_collision("c.d", existing), Ok(()));
    }

    #[test]
    fn internal_topics() {
        assert!(is_internal("__consumer_offsets"));
        assert!(is_internal("__transaction_state"));
        assert!(is_internal("__share_group_state"));
        assert!(!is_internal("__cluster_metadata"));
        assert!(!is_internal("consumer_offsets"));
        assert!(!is_internal("__CONSUMER_OFFSETS"));
    }
}
