//! Kafka's texts for what a group command was refused: Java's `toString()` of the exception
//! for an error code (`org.apache.kafka.common.errors.X: message`), as Kafka's tool prints
//! them per group and per partition.

use crate::client::ClientError;
use crate::client::groups::{GROUP_SUBSCRIBED_TO_TOPIC, Refusal};

/// Java's `toString()` of the exception for a Kafka error code.
pub(super) fn exception(code: i16) -> String {
    let (class, message) = match code {
        3 => (
            "UnknownTopicOrPartitionException",
            "This server does not host this topic-partition.",
        ),
        24 => (
            "InvalidGroupIdException",
            "The configured groupId is invalid.",
        ),
        29 => ("TopicAuthorizationException", "Topic authorization failed."),
        30 => ("GroupAuthorizationException", "Group authorization failed."),
        68 => ("GroupNotEmptyException", "The group is not empty."),
        69 => ("GroupIdNotFoundException", "The group id does not exist."),
        86 => ("GroupSubscribedToTopicException", GROUP_SUBSCRIBED_TO_TOPIC),
        _ => return ClientError::from_code(code, None).to_string(),
    };
    format!("org.apache.kafka.common.errors.{class}: {message}")
}

/// Kafka's message for a top-level error code (the exception's message).
pub(super) fn message(code: i16) -> String {
    let text = exception(code);
    match text.split_once(": ") {
        Some((_, m)) if text.starts_with("org.apache") => m.to_string(),
        _ => text,
    }
}

/// The exception class of a code, as [`exception`] names it.
fn class(code: i16) -> String {
    let text = exception(code);
    text.split_once(": ")
        .map_or(text.clone(), |(c, _)| c.to_string())
}

/// The exception text of a refusal: the backend's own message after the class, or Kafka's
/// standard text for the code.
pub(super) fn refusal(r: &Refusal) -> String {
    match &r.message {
        Some(message) => format!("{}: {message}", class(r.code)),
        None => exception(r.code),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exceptions_are_javas() {
        assert_eq!(
            exception(69),
            "org.apache.kafka.common.errors.GroupIdNotFoundException: The group id does not exist."
        );
        assert_eq!(message(68), "The group is not empty.");
        assert_eq!(
            class(86),
            "org.apache.kafka.common.errors.GroupSubscribedToTopicException"
        );
    }
}
