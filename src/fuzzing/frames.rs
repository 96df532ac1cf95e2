//! The `response_frame` target: Kafka response frames as the remote client reads them (size
//! prefix, response header, correlation id, body), for every API kafkit sends and every
//! version it may negotiate; then what the client reads out of some of them: the record batches
//! of a Fetch response (walked as the consumer walks them), the consumer-protocol bytes of
//! JoinGroup, SyncGroup and DescribeGroups, and ApiVersions' ranges (negotiated against ours).

use bytes::Bytes;
use kafka_protocol::messages::{
    ApiVersionsRequest, ApiVersionsResponse, ConsumerGroupDescribeRequest,
    ConsumerGroupHeartbeatRequest, CreatePartitionsRequest, CreateTopicsRequest,
    DeleteGroupsRequest, DeleteTopicsRequest, DescribeClusterRequest, DescribeConfigsRequest,
    DescribeGroupsRequest, DescribeGroupsResponse, DescribeTopicPartitionsRequest, FetchRequest,
    FetchResponse, FindCoordinatorRequest, HeartbeatRequest, IncrementalAlterConfigsRequest,
    InitProducerIdRequest, JoinGroupRequest, JoinGroupResponse, LeaveGroupRequest,
    ListGroupsRequest, ListOffsetsRequest, MetadataRequest, OffsetCommitRequest,
    OffsetDeleteRequest, OffsetFetchRequest, ProduceRequest, SaslAuthenticateRequest,
    SaslHandshakeRequest, SyncGroupRequest, SyncGroupResponse,
};
use kafka_protocol::protocol::VersionRange;

use super::Input;
use crate::client::consumer::fuzz::{Walk, walk_fetched};
use crate::wire::api::Api;
use crate::wire::consumer_protocol::{
    MAX_VERSION, decode_assignment, decode_subscription, encode_assignment, encode_subscription,
};
use crate::wire::frame::{api_versions_error_code, check_size, decode_response};
use crate::wire::versions::{self, kip896_floor};

/// Input: API key, version, then the frame after its size prefix (its first four bytes, the
/// correlation id, are also taken as the id expected, so that the body gets decoded). A key
/// kafkit does not send picks one of those it does by its position in the list; a version
/// outside the range kafkit negotiates for the API picks one inside it. A first byte of 0xf0
/// or more skips the frame: the rest are the record batches of one Fetch partition (see
/// `fetched` below), so the consumer's walk gets fuzzed without a whole response around it.
pub fn response_frame(data: &[u8]) {
    let mut input = Input::new(data);
    let key = input.byte();
    if key >= 0xf0 {
        return fetched(&mut input);
    }
    let version = input.byte();
    let frame = input.rest();
    if let Some(prefix) = frame.get(..4) {
        let _ = check_size(prefix.try_into().expect("4 bytes"), 100 << 20);
    }
    let frame = Bytes::copy_from_slice(frame);
    let _ = api_versions_error_code(&frame);
    decode_by_key(i16::from(key), frame, version);
}

/// Decodes a frame as `R`'s response at the version the input picks.
fn decode<R: Api>(frame: Bytes, version: u8) -> Option<R::Response> {
    let range = versions::ours::<R>();
    if range.is_empty() {
        return None;
    }
    let wanted = i16::from(version);
    let version = if (range.min..=range.max).contains(&wanted) {
        wanted
    } else {
        range.min + wanted % (range.max - range.min + 1)
    };
    let id = frame
        .get(..4)
        .map_or(0, |b| i32::from_be_bytes(b.try_into().expect("4 bytes")));
    decode_response::<R>(frame, version, id).ok()
}

/// Runs after a response decodes; most are only decoded.
fn nothing<T>(_: T) {}

macro_rules! responses {
    ($($request:ty => $then:expr),* $(,)?) => {
        const KEYS: &[i16] = &[$(<$request as Api>::KEY),*];

        fn decode_by_key(key: i16, frame: Bytes, version: u8) {
            let key = if KEYS.contains(&key) { key } else { KEYS[key as usize % KEYS.len()] };
            $(
                if key == <$request as Api>::KEY {
                    if let Some(response) = decode::<$request>(frame, version) {
                        $then(response);
                    }
                    return;
                }
            )*
        }

        /// The APIs this target decodes: key and the version range kafkit negotiates (for the
        /// seed generator in `fuzz/seedgen`).
        pub fn response_apis() -> Vec<(i16, VersionRange)> {
            vec![$((<$request as Api>::KEY, versions::ours::<$request>())),*]
        }
    };
}

responses! {
    ApiVersionsRequest => api_versions,
    MetadataRequest => nothing,
    CreateTopicsRequest => nothing,
    DeleteTopicsRequest => nothing,
    DescribeConfigsRequest => nothing,
    CreatePartitionsRequest => nothing,
    IncrementalAlterConfigsRequest => nothing,
    DescribeClusterRequest => nothing,
    DescribeTopicPartitionsRequest => nothing,
    ProduceRequest => nothing,
    InitProducerIdRequest => nothing,
    FetchRequest => fetch,
    ListOffsetsRequest => nothing,
    FindCoordinatorRequest => nothing,
    JoinGroupRequest => join_group,
    SyncGroupRequest => sync_group,
    HeartbeatRequest => nothing,
    LeaveGroupRequest => nothing,
    OffsetCommitRequest => nothing,
    OffsetFetchRequest => nothing,
    OffsetDeleteRequest => nothing,
    ListGroupsRequest => nothing,
    DescribeGroupsRequest => describe_groups,
    ConsumerGroupDescribeRequest => nothing,
    ConsumerGroupHeartbeatRequest => nothing,
    DeleteGroupsRequest => nothing,
    SaslHandshakeRequest => nothing,
    SaslAuthenticateRequest => nothing,
}

/// The broker's ranges, negotiated against ours for every API: a version picked lies in both
/// ranges and not below Kafka 4.0's floor.
fn api_versions(r: ApiVersionsResponse) {
    let broker = versions::BrokerVersions::new(
        r.api_keys
            .iter()
            .map(|k| (k.api_key, k.min_version, k.max_version)),
    );
    for (key, ours) in response_apis() {
        let Some(theirs) = broker.get(key) else {
            continue;
        };
        if let Some(v) = versions::negotiate(key, ours, theirs) {
            assert!((ours.min..=ours.max).contains(&v), "{key} v{v} vs {ours:?}");
            assert!((theirs.min..=theirs.max).contains(&v), "{key} v{v}");
            assert!(v >= kip896_floor(key));
        }
    }
}

/// Every partition's records walked as the consumer walks them, from offset 0, with the
/// response's aborted transactions, both isolation levels.
fn fetch(r: FetchResponse) {
    for t in r.responses {
        for p in t.partitions {
            let Some(records) = p.records else { continue };
            let aborted: Vec<(i64, i64)> = p
                .aborted_transactions
                .unwrap_or_default()
                .iter()
                .map(|a| (a.producer_id.0, a.first_offset))
                .collect();
            for read_committed in [false, true] {
                let walk = Walk {
                    position: 0,
                    read_committed,
                    ..Walk::default()
                };
                walk_fetched(&records, aborted.clone(), &walk);
            }
        }
    }
}

fn join_group(r: JoinGroupResponse) {
    for m in r.members {
        subscription(&m.metadata);
    }
}

fn sync_group(r: SyncGroupResponse) {
    assignment(&r.assignment);
}

fn describe_groups(r: DescribeGroupsResponse) {
    for g in r.groups {
        for m in g.members {
            subscription(&m.member_metadata);
            assignment(&m.member_assignment);
        }
    }
}

/// A subscription that decodes encodes again at our version and decodes to the same.
fn subscription(bytes: &[u8]) {
    if let Ok(s) = decode_subscription(bytes) {
        let again = encode_subscription(&s, MAX_VERSION).expect("a decoded subscription encodes");
        assert_eq!(decode_subscription(&again).expect("and decodes"), s);
    }
}

fn assignment(bytes: &[u8]) {
    if let Ok(a) = decode_assignment(bytes) {
        let again = encode_assignment(&a, MAX_VERSION).expect("a decoded assignment encodes");
        assert_eq!(decode_assignment(&again).expect("and decodes"), a);
    }
}

/// The record batches of one Fetch partition, walked by the consumer. Input: the fetch
/// position (i64), flags (bit 0 read_committed, bit 1 stop at a time, bit 2 leave every
/// other record undelivered), the time (i64), how many records until the caller stops (0:
/// never), the number of aborted transactions (up to 7), each a producer id byte and a first
/// offset (i64), then the batches.
fn fetched(input: &mut Input<'_>) {
    let position = input.i64();
    let flags = input.byte();
    let time = input.i64();
    let stop_after = input.byte();
    let aborted = (0..input.byte() % 8)
        .map(|_| (i64::from(input.byte()), input.i64()))
        .collect();
    let walk = Walk {
        position,
        read_committed: flags & 1 != 0,
        until_time: (flags & 2 != 0).then_some(time),
        stop_after: (stop_after != 0).then_some(u32::from(stop_after)),
        leave_undelivered: flags & 4 != 0,
    };
    walk_fetched(input.rest(), aborted, &walk);
}
