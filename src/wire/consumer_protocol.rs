//! The bytes a classic consumer group carries inside JoinGroup, SyncGroup and DescribeGroups:
//! ConsumerProtocolSubscription and ConsumerProtocolAssignment (v0-v3), each an `int16` version
//! followed by the struct at that version. The structs are the kafka-protocol crate's; this
//! module only adds the version prefix, as Java's `ConsumerProtocol` does.
//!
//! A version newer than v3 is read as v3, which is what Java does too: newer versions only
//! append fields, so the v3 prefix of the bytes is still a valid v3 struct.

use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::messages::{ConsumerProtocolAssignment, ConsumerProtocolSubscription};
use kafka_protocol::protocol::{Decodable, Encodable};

/// The highest version of both structs this module writes and reads.
pub const MAX_VERSION: i16 = 3;

/// Why assignment or subscription bytes could not be read or written.
#[derive(Debug, thiserror::Error)]
#[error("malformed consumer protocol {what}: {reason}")]
pub struct ConsumerProtocolError {
    what: &'static str,
    reason: String,
}

fn encode<T: Encodable>(
    value: &T,
    version: i16,
    what: &'static str,
) -> Result<Bytes, ConsumerProtocolError> {
    let mut buf = BytesMut::new();
    buf.put_i16(version);
    value
        .encode(&mut buf, version)
        .map_err(|e| ConsumerProtocolError {
            what,
            reason: e.to_string(),
        })?;
    Ok(buf.freeze())
}

fn decode<T: Decodable>(bytes: &[u8], what: &'static str) -> Result<T, ConsumerProtocolError> {
    let fail = |reason: String| ConsumerProtocolError { what, reason };
    let mut buf = Bytes::copy_from_slice(bytes);
    if buf.remaining() < 2 {
        return Err(fail(format!(
            "{} bytes, too short for a version",
            bytes.len()
        )));
    }
    let version = buf.get_i16();
    if version < 0 {
        return Err(fail(format!("negative version {version}")));
    }
    T::decode(&mut buf, version.min(MAX_VERSION)).map_err(|e| fail(e.to_string()))
}

/// A member's subscription as JoinGroup metadata bytes.
pub fn encode_subscription(
    s: &ConsumerProtocolSubscription,
    version: i16,
) -> Result<Bytes, ConsumerProtocolError> {
    encode(s, version, "subscription")
}

/// Reads a member's subscription from JoinGroup or DescribeGroups metadata bytes.
pub fn decode_subscription(
    bytes: &[u8],
) -> Result<ConsumerProtocolSubscription, ConsumerProtocolError> {
    decode(bytes, "subscription")
}

/// A member's assignment as SyncGroup bytes.
pub fn encode_assignment(
    a: &ConsumerProtocolAssignment,
    version: i16,
) -> Result<Bytes, ConsumerProtocolError> {
    encode(a, version, "assignment")
}

/// Reads a member's assignment from SyncGroup or DescribeGroups bytes; empty bytes (a member
/// that has no assignment yet) read as no partitions.
pub fn decode_assignment(
    bytes: &[u8],
) -> Result<ConsumerProtocolAssignment, ConsumerProtocolError> {
    if bytes.is_empty() {
        return Ok(ConsumerProtocolAssignment::default());
    }
    decode(bytes, "assignment")
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::messages::TopicName;
    use kafka_protocol::messages::consumer_protocol_assignment::TopicPartition;
    use kafka_protocol::protocol::StrBytes;

    fn assignment() -> ConsumerProtocolAssignment {
        ConsumerProtocolAssignment::default().with_assigned_partitions(vec![
            TopicPartition::default()
                .with_topic(TopicName(StrBytes::from_static_str("t")))
                .with_partitions(vec![0, 2]),
        ])
    }

    #[test]
    fn assignment_golden_bytes_and_round_trip() {
        let bytes = encode_assignment(&assignment(), 0).unwrap();
        // version 0, one topic "t" with partitions [0, 2], null user data.
        assert_eq!(
            &bytes[..],
            &[
                0, 0, 0, 0, 0, 1, 0, 1, b't', 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 2, 255, 255, 255,
                255
            ]
        );
        for v in 0..=MAX_VERSION {
            let bytes = encode_assignment(&assignment(), v).unwrap();
            assert_eq!(decode_assignment(&bytes).unwrap(), assignment());
        }
        assert!(
            decode_assignment(&[])
                .unwrap()
                .assigned_partitions
                .is_empty()
        );
        assert!(decode_assignment(&[0]).is_err());
        assert!(decode_assignment(&[0, 0, 0, 0, 0, 5]).is_err());
    }

    #[test]
    fn newer_versions_read_as_v3() {
        let mut bytes = encode_assignment(&assignment(), 3).unwrap().to_vec();
        bytes[1] = 4;
        assert_eq!(decode_assignment(&bytes).unwrap(), assignment());
    }

    #[test]
    fn subscription_round_trips() {
        let s = ConsumerProtocolSubscription::default()
            .with_topics(vec![StrBytes::from_static_str("a")])
            .with_generation_id(3)
            .with_rack_id(Some(StrBytes::from_static_str("r1")));
        let bytes = encode_subscription(&s, 3).unwrap();
        assert_eq!(decode_subscription(&bytes).unwrap(), s);
        let v0 = decode_subscription(&encode_subscription(&s, 0).unwrap()).unwrap();
        assert_eq!(v0.topics, s.topics);
        assert_eq!(v0.generation_id, -1, "v0 carries no generation");
    }
}
