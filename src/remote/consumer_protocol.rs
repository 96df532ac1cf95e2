//! The consumer protocol's embedded payloads: a member's subscription (JoinGroup metadata) and
//! its assignment (SyncGroup), each a version (`i16`) followed by the struct at that version.
//!
//! Decoding reads newer versions as the newest we know: later versions only append fields, which
//! is how Kafka's own clients stay compatible with each other.

use std::collections::{BTreeMap, BTreeSet};

use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::messages::consumer_protocol_assignment::TopicPartition as AssignedTopic;
use kafka_protocol::messages::consumer_protocol_subscription::TopicPartition as OwnedTopic;
use kafka_protocol::messages::{
    ConsumerProtocolAssignment, ConsumerProtocolSubscription, TopicName,
};
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};

/// The version we write: v1 (owned partitions) is understood by every 2.x+ client.
const WRITE_VERSION: i16 = 1;
/// The newest version the crate can read.
const READ_VERSION: i16 = 3;

/// Partitions by topic, sorted.
pub type Partitions = BTreeMap<String, BTreeSet<i32>>;

/// A subscription to `topics`, saying which partitions the member owns now.
pub fn encode_subscription(topics: &BTreeSet<String>, owned: &Partitions) -> Bytes {
    let subscription = ConsumerProtocolSubscription::default()
        .with_topics(
            topics
                .iter()
                .map(|t| StrBytes::from_string(t.clone()))
                .collect(),
        )
        .with_owned_partitions(
            owned
                .iter()
                .map(|(t, ps)| {
                    OwnedTopic::default()
                        .with_topic(TopicName(StrBytes::from_string(t.clone())))
                        .with_partitions(ps.iter().copied().collect())
                })
                .collect(),
        );
    encode(&subscription)
}

/// The topics a member subscribes to; `None` when the bytes are not a subscription.
pub fn decode_subscription(bytes: &Bytes) -> Option<BTreeSet<String>> {
    let s: ConsumerProtocolSubscription = decode(bytes)?;
    Some(s.topics.into_iter().map(|t| t.to_string()).collect())
}

/// An assignment of `partitions`.
pub fn encode_assignment(partitions: &Partitions) -> Bytes {
    let assignment = ConsumerProtocolAssignment::default().with_assigned_partitions(
        partitions
            .iter()
            .map(|(t, ps)| {
                AssignedTopic::default()
                    .with_topic(TopicName(StrBytes::from_string(t.clone())))
                    .with_partitions(ps.iter().copied().collect())
            })
            .collect(),
    );
    encode(&assignment)
}

/// The partitions of an assignment (empty bytes: nothing assigned); `None` when malformed.
pub fn decode_assignment(bytes: &Bytes) -> Option<Partitions> {
    if bytes.is_empty() {
        return Some(Partitions::new());
    }
    let a: ConsumerProtocolAssignment = decode(bytes)?;
    let mut out = Partitions::new();
    for t in a.assigned_partitions {
        out.entry(t.topic.0.to_string())
            .or_default()
            .extend(t.partitions);
    }
    Some(out)
}

fn encode<T: Encodable>(message: &T) -> Bytes {
    let mut buf = BytesMut::new();
    buf.put_i16(WRITE_VERSION);
    // Encoding into memory fails only on values over the protocol's limits (a string over
    // 32 KiB), which topic names cannot reach.
    message
        .encode(&mut buf, WRITE_VERSION)
        .expect("consumer protocol payload within protocol limits");
    buf.freeze()
}

fn decode<T: Decodable>(bytes: &Bytes) -> Option<T> {
    let mut buf = bytes.clone();
    if buf.remaining() < 2 {
        return None;
    }
    let version = buf.get_i16();
    if version < 0 {
        return None;
    }
    T::decode(&mut buf, version.min(READ_VERSION)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subscription_round_trip() {
        let topics: BTreeSet<String> = ["a".to_string(), "b".to_string()].into();
        let owned: Partitions = [("a".to_string(), [0, 2].into())].into();
        let bytes = encode_subscription(&topics, &owned);
        assert_eq!(&bytes[..2], &[0, 1]);
        assert_eq!(decode_subscription(&bytes), Some(topics));
    }

    #[test]
    fn assignment_round_trip_and_empty() {
        let parts: Partitions = [("t".to_string(), [1, 3].into())].into();
        assert_eq!(decode_assignment(&encode_assignment(&parts)), Some(parts));
        assert_eq!(decode_assignment(&Bytes::new()), Some(Partitions::new()));
        assert_eq!(decode_assignment(&Bytes::from_static(&[0])), None);
    }

    #[test]
    fn newer_versions_read_as_the_newest_known() {
        // A v5 subscription from a future client: v3's fields, then more.
        let s = ConsumerProtocolSubscription::default()
            .with_topics(vec![StrBytes::from_static_str("x")]);
        let mut buf = BytesMut::new();
        buf.put_i16(5);
        s.encode(&mut buf, 3).unwrap();
        buf.put_slice(&[0, 0, 0, 0]);
        let expected: BTreeSet<String> = ["x".to_string()].into();
        assert_eq!(decode_subscription(&buf.freeze()), Some(expected));
    }
}
