//! Kafka's texts for refusals: Java's `toString()` of the exception for an error code
//! (`org.apache.kafka.common.errors.X: message`), as Kafka's tools print them per group and
//! per partition (`kafka-consumer-groups`, `kafka-delete-records`, `kafka-get-offsets`).

use crate::client::ClientError;
use crate::client::groups::{GROUP_SUBSCRIBED_TO_TOPIC, Refusal};

/// Java's exception class (in `org.apache.kafka.common.errors`) for an error code, with the
/// message Kafka's `Errors` gives it.
fn known(code: i16) -> Option<(&'static str, &'static str)> {
    Some(match code {
        1 => (
            "OffsetOutOfRangeException",
            "The requested offset is not within the range of offsets maintained by the server.",
        ),
        3 => (
            "UnknownTopicOrPartitionException",
            "This server does not host this topic-partition.",
        ),
        5 => (
            "LeaderNotAvailableException",
            "There is no leader for this topic-partition as we are in the middle of a leadership election.",
        ),
        6 => (
            "NotLeaderOrFollowerException",
            "For requests intended only for the leader, this error indicates that the broker is not the current leader. For requests intended for any replica, this error indicates that the broker is not a replica of the topic partition.",
        ),
        7 => ("TimeoutException", "The request timed out."),
        24 => (
            "InvalidGroupIdException",
            "The configured groupId is invalid.",
        ),
        29 => ("TopicAuthorizationException", "Topic authorization failed."),
        30 => ("GroupAuthorizationException", "Group authorization failed."),
        35 => (
            "UnsupportedVersionException",
            "The version of API is not supported.",
        ),
        44 => (
            "PolicyViolationException",
            "Request parameters do not satisfy the configured policy.",
        ),
        56 => (
            "KafkaStorageException",
            "Disk error when trying to access log file on the disk.",
        ),
        68 => ("GroupNotEmptyException", "The group is not empty."),
        69 => ("GroupIdNotFoundException", "The group id does not exist."),
        86 => ("GroupSubscribedToTopicException", GROUP_SUBSCRIBED_TO_TOPIC),
        _ => return None,
    })
}

/// Java's `toString()` of the exception for a Kafka error code.
pub(crate) fn exception(code: i16) -> String {
    match known(code) {
        Some((class, message)) => format!("org.apache.kafka.common.errors.{class}: {message}"),
        None => ClientError::from_code(code, None).to_string(),
    }
}

/// Kafka's message for a top-level error code (the exception's message).
pub(crate) fn message(code: i16) -> String {
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
pub(crate) fn refusal(r: &Refusal) -> String {
    match &r.message {
        Some(message) => format!("{}: {message}", class(r.code)),
        None => exception(r.code),
    }
}

/// The text Java's tools print for a failed call: the exception's class and the error's
/// message for a refusal of a kind Kafka names, else kafkit's own one-line text (a connection
/// or disk failure has no Java counterpart to mimic).
pub(crate) fn of_error(e: &ClientError) -> String {
    match e {
        ClientError::Kafka { kind, message } => match known(kind.code()) {
            Some((class, _)) => format!("org.apache.kafka.common.errors.{class}: {message}"),
            None => message.clone(),
        },
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::ResponseError;

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
        let out_of_range = ClientError::from_code(1, None);
        assert_eq!(of_error(&out_of_range), exception(1));
        let unknown = ClientError::kafka(ResponseError::UnknownTopicOrPartition, "gone");
        assert_eq!(
            of_error(&unknown),
            "org.apache.kafka.common.errors.UnknownTopicOrPartitionException: gone"
        );
    }
}
