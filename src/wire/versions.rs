//! API version negotiation: which versions kafkit speaks, which Kafka 4.0 removed (KIP-896), and
//! the per-connection choice `min(ours, broker's)` after ApiVersions.
//!
//! Our range for an API is the kafka-protocol crate's `Message::VERSIONS` (not
//! `ApiKey::valid_versions()`, which includes versions the schema marks unstable), raised to
//! Kafka 4.0's floor and capped where a newer version changes semantics we do not handle yet;
//! a newer version whose fields are an older one's is written in that older layout.

use std::collections::HashMap;

use kafka_protocol::messages::ApiKey;
use kafka_protocol::protocol::VersionRange;

use super::api::Api;

/// The lowest version Kafka 4.0+ accepts for an API whose old versions KIP-896 removed; 0 for
/// the others. Applied even when a broker advertises less: 4.x advertises Produce v0 for old
/// librdkafka clients but rejects v0-2 (KAFKA-18659), and a broker drops the connection, without
/// an answer, on a version outside its real range.
pub fn kip896_floor(key: i16) -> i16 {
    match ApiKey::try_from(key) {
        Ok(ApiKey::Produce) => 3,
        Ok(ApiKey::Fetch) => 4,
        Ok(ApiKey::ListOffsets) => 1,
        Ok(ApiKey::OffsetCommit) => 2,
        Ok(ApiKey::OffsetFetch) => 1,
        Ok(ApiKey::CreateTopics) => 2,
        Ok(ApiKey::DeleteTopics) => 1,
        Ok(ApiKey::DescribeConfigs) => 1,
        Ok(ApiKey::OffsetForLeaderEpoch) => 2,
        Ok(ApiKey::CreateAcls | ApiKey::DescribeAcls | ApiKey::DeleteAcls) => 1,
        Ok(ApiKey::DescribeLogDirs) => 1,
        Ok(ApiKey::AlterReplicaLogDirs) => 1,
        Ok(
            ApiKey::CreateDelegationToken
            | ApiKey::RenewDelegationToken
            | ApiKey::ExpireDelegationToken
            | ApiKey::DescribeDelegationToken,
        ) => 1,
        _ => 0,
    }
}

/// Our own bounds on top of the crate's range, for APIs where a version changes what we must
/// send or parse.
fn our_bounds(key: i16) -> (i16, i16) {
    match ApiKey::try_from(key) {
        // v4 is the first with allow_auto_topic_creation (an admin must not create topics by
        // asking about them); v13 only adds a top-level error code, kept for when it is needed.
        Ok(ApiKey::Metadata) => (4, 12),
        // v13+ name topics by id; v12 is the last with names.
        Ok(ApiKey::Fetch) => (4, 12),
        // v13 names topics by id; v12 is the last with names.
        Ok(ApiKey::Produce) => (3, 12),
        // v10 only adds a timeout; v11 (Kafka 4.2) is v10's layout (see SAME_LAYOUT).
        Ok(ApiKey::ListOffsets) => (1, 11),
        // v4+ take a list of keys (Kafka 2.8+); the single-key form is not written.
        Ok(ApiKey::FindCoordinator) => (4, i16::MAX),
        // v8+ take a list of groups (Kafka 3.0+); v10 names topics by id.
        Ok(ApiKey::OffsetFetch) => (8, 9),
        // v4+ answer a first join with MEMBER_ID_REQUIRED, which the member handles.
        Ok(ApiKey::JoinGroup) => (4, i16::MAX),
        // v3+ leave by a list of members.
        Ok(ApiKey::LeaveGroup) => (3, i16::MAX),
        // Transaction version 1, which kafkit's producer speaks: v4+ of AddPartitionsToTxn are
        // for brokers; EndTxn v5+ and TxnOffsetCommit v5+ are transaction version 2's.
        Ok(ApiKey::AddPartitionsToTxn) => (0, 3),
        Ok(ApiKey::EndTxn | ApiKey::TxnOffsetCommit) => (0, 4),
        _ => (0, i16::MAX),
    }
}

/// Versions newer than the kafka-protocol crate knows whose request and response fields are
/// exactly an older version's: `(api key, version, the version whose layout it has)`. Their
/// bodies are written and read in that layout under the newer number.
///
/// ListOffsets v11 (Kafka 4.2, KIP-1023) only lets the timestamp be -6 (earliest pending
/// upload); a broker refuses -6 at v10.
const SAME_LAYOUT: [(i16, i16, i16); 1] = [(ApiKey::ListOffsets as i16, 11, 10)];

/// The version whose layout a request or response body of `key` at `version` has: itself,
/// unless [`SAME_LAYOUT`] maps it.
pub fn layout_version(key: i16, version: i16) -> i16 {
    SAME_LAYOUT
        .iter()
        .find(|(k, v, _)| *k == key && *v == version)
        .map_or(version, |(_, _, layout)| *layout)
}

/// The newest version of `key` kafkit can write: the crate's newest, or a newer one of the same
/// layout.
fn newest_writable(key: i16, crate_max: i16) -> i16 {
    SAME_LAYOUT
        .iter()
        .filter(|(k, _, layout)| *k == key && *layout <= crate_max)
        .map(|(_, v, _)| *v)
        .fold(crate_max, i16::max)
}

/// The lowest ListOffsets version whose timestamp field may carry `timestamp`: the special
/// values came one version at a time, and a broker refuses one below its version with
/// UNSUPPORTED_VERSION (or, before Kafka 4.0, reads it as a time).
pub fn list_offsets_min_version(timestamp: i64) -> i16 {
    match timestamp {
        -3 => 7,  // max timestamp (KIP-734)
        -4 => 8,  // earliest local (KIP-405)
        -5 => 9,  // latest tiered (KIP-1005)
        -6 => 11, // earliest pending upload (KIP-1023)
        _ => 1,
    }
}

/// The versions of `R` kafkit can send.
pub fn ours<R: Api>() -> VersionRange {
    let (min, max) = our_bounds(R::KEY);
    VersionRange {
        min: R::VERSIONS.min.max(kip896_floor(R::KEY)).max(min),
        max: newest_writable(R::KEY, R::VERSIONS.max).min(max),
    }
}

/// The version to use: the highest both sides speak, never below Kafka 4.0's floor; `None` when
/// the ranges do not meet.
pub fn negotiate(key: i16, ours: VersionRange, broker: VersionRange) -> Option<i16> {
    let floor = VersionRange {
        min: kip896_floor(key),
        max: i16::MAX,
    };
    let both = ours.intersect(&broker).intersect(&floor);
    (!both.is_empty()).then_some(both.max)
}

/// The version ranges one broker advertised in its ApiVersions response.
#[derive(Debug, Clone, Default)]
pub struct BrokerVersions {
    ranges: HashMap<i16, VersionRange>,
}

impl BrokerVersions {
    /// From the `(api_key, min, max)` triples of an ApiVersions response.
    pub fn new(ranges: impl IntoIterator<Item = (i16, i16, i16)>) -> Self {
        BrokerVersions {
            ranges: ranges
                .into_iter()
                .map(|(key, min, max)| (key, VersionRange { min, max }))
                .collect(),
        }
    }

    /// Every API the broker advertised with its range, by ascending key.
    pub fn all(&self) -> Vec<(i16, VersionRange)> {
        let mut all: Vec<(i16, VersionRange)> = self.ranges.iter().map(|(k, r)| (*k, *r)).collect();
        all.sort_unstable_by_key(|(key, _)| *key);
        all
    }

    /// The broker's range for an API, if it has the API at all.
    pub fn get(&self, key: i16) -> Option<VersionRange> {
        self.ranges.get(&key).copied()
    }

    /// The version of `R` to send to this broker.
    pub fn pick<R: Api>(&self) -> Option<i16> {
        negotiate(R::KEY, ours::<R>(), self.get(R::KEY)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::messages::{
        ApiVersionsRequest, CreateTopicsRequest, DeleteTopicsRequest, MetadataRequest,
    };

    fn range(min: i16, max: i16) -> VersionRange {
        VersionRange { min, max }
    }

    #[test]
    fn ours_respects_kip896_and_caps() {
        assert_eq!(ours::<MetadataRequest>(), range(4, 12));
        assert_eq!(ours::<CreateTopicsRequest>().min, 2);
        assert_eq!(ours::<DeleteTopicsRequest>().min, 1);
        assert_eq!(kip896_floor(0), 3, "Produce");
        assert_eq!(kip896_floor(1), 4, "Fetch");
        assert_eq!(ours::<ApiVersionsRequest>().min, 0);
        assert_eq!(
            ours::<kafka_protocol::messages::FetchRequest>(),
            range(4, 12)
        );
        assert_eq!(
            ours::<kafka_protocol::messages::ListOffsetsRequest>(),
            range(1, 11)
        );
        assert_eq!(layout_version(2, 11), 10, "ListOffsets v11 is v10's layout");
        assert_eq!(layout_version(2, 9), 9);
        assert_eq!(layout_version(3, 11), 11);
    }

    #[test]
    fn negotiation_picks_the_highest_common_version() {
        // A 4.x broker advertising Produce 0..=13 still gets at least v3.
        assert_eq!(negotiate(0, range(0, 13), range(0, 13)), Some(13));
        assert_eq!(negotiate(0, range(0, 2), range(0, 13)), None);
        assert_eq!(negotiate(3, range(4, 12), range(0, 13)), Some(12));
        assert_eq!(negotiate(3, range(4, 12), range(0, 9)), Some(9));
        assert_eq!(negotiate(3, range(4, 12), range(0, 3)), None);
        let broker = BrokerVersions::new([(3, 0, 13), (19, 2, 7)]);
        assert_eq!(broker.pick::<MetadataRequest>(), Some(12));
        assert_eq!(broker.pick::<CreateTopicsRequest>(), Some(7));
        assert_eq!(broker.pick::<DeleteTopicsRequest>(), None, "not advertised");
    }
}
