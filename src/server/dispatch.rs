//! One request in, one response out: the request header is read, the API and version checked
//! against what the server serves, the body decoded with the kafka-protocol crate, handed to
//! its handler, and the response encoded with its header.
//!
//! As Kafka does, an API or version the server does not serve closes the connection (the
//! client should have asked ApiVersions first), except ApiVersions itself, which is answered
//! with UNSUPPORTED_VERSION in the v0 layout so that any client can learn what is served.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::messages::api_versions_response::ApiVersion;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, Message};

use tokio::sync::OwnedSemaphorePermit;

use super::broker::Broker;
use super::{groups, handlers, share};

/// What the connection does after a request.
#[derive(Debug)]
pub enum Outcome {
    /// Send this frame (size prefix included), holding its share of the fetch budget (if any)
    /// until it is written.
    Reply(BytesMut, Option<OwnedSemaphorePermit>),
    /// Send nothing (a produce with acks=0).
    Silent,
    /// Close the connection, logging why.
    Close(String),
    /// A produce whose batches are queued: its outcome comes once they are durable, and the
    /// connection may read its next request meanwhile.
    Later(Later),
}

/// The outcome of a request still under way (see [`Outcome::Later`]).
pub struct Later(pub Pin<Box<dyn Future<Output = Outcome> + Send>>);

impl std::fmt::Debug for Later {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Later(..)")
    }
}

/// Whether a request frame (without its size prefix) is a produce, which the connection may
/// queue behind others of its kind (see `connection`).
pub fn is_produce(frame: &[u8]) -> bool {
    frame.len() >= 2 && i16::from_be_bytes([frame[0], frame[1]]) == ApiKey::Produce as i16
}

/// Who sent the request being handled: the group coordinator names members after them.
#[derive(Clone, Debug, Default)]
pub struct ClientInfo {
    pub client_id: String,
    /// `/<ip>`, as Kafka shows a member's host.
    pub host: String,
}

tokio::task_local! {
    static CLIENT: ClientInfo;
}

/// The client of the request being handled (empty outside a request).
pub fn client() -> ClientInfo {
    CLIENT.try_with(ClientInfo::clone).unwrap_or_default()
}

/// The APIs served, with the versions served: the crate's range, capped where a newer version
/// needs what the server does not do yet (topic ids in Produce and Fetch).
pub fn served() -> Vec<(ApiKey, i16, i16)> {
    fn range<R: Message>(key: ApiKey, cap: i16) -> (ApiKey, i16, i16) {
        (key, R::VERSIONS.min, R::VERSIONS.max.min(cap))
    }
    vec![
        range::<ProduceRequest>(ApiKey::Produce, 12),
        range::<FetchRequest>(ApiKey::Fetch, 12),
        // v11 (earliest pending upload, -6) is v10's layout: served in it (see `layout`).
        (ApiKey::ListOffsets, ListOffsetsRequest::VERSIONS.min, 11),
        range::<MetadataRequest>(ApiKey::Metadata, 12),
        range::<ApiVersionsRequest>(ApiKey::ApiVersions, i16::MAX),
        range::<CreateTopicsRequest>(ApiKey::CreateTopics, i16::MAX),
        range::<DeleteTopicsRequest>(ApiKey::DeleteTopics, i16::MAX),
        // v6 is KIP-939's two-phase commit, not served.
        range::<InitProducerIdRequest>(ApiKey::InitProducerId, 5),
        // v4 and later are sent by brokers to a coordinator; answered all the same.
        range::<AddPartitionsToTxnRequest>(ApiKey::AddPartitionsToTxn, i16::MAX),
        range::<AddOffsetsToTxnRequest>(ApiKey::AddOffsetsToTxn, i16::MAX),
        // v5 and later are transaction version 2's (partitions added implicitly), not served.
        range::<TxnOffsetCommitRequest>(ApiKey::TxnOffsetCommit, 4),
        // v5 and later are transaction version 2's (an epoch bump per transaction).
        range::<EndTxnRequest>(ApiKey::EndTxn, 4),
        range::<DescribeTransactionsRequest>(ApiKey::DescribeTransactions, i16::MAX),
        range::<ListTransactionsRequest>(ApiKey::ListTransactions, i16::MAX),
        range::<DescribeProducersRequest>(ApiKey::DescribeProducers, i16::MAX),
        range::<WriteTxnMarkersRequest>(ApiKey::WriteTxnMarkers, i16::MAX),
        range::<DescribeConfigsRequest>(ApiKey::DescribeConfigs, i16::MAX),
        range::<CreatePartitionsRequest>(ApiKey::CreatePartitions, i16::MAX),
        range::<IncrementalAlterConfigsRequest>(ApiKey::IncrementalAlterConfigs, i16::MAX),
        range::<DescribeClusterRequest>(ApiKey::DescribeCluster, i16::MAX),
        range::<DescribeTopicPartitionsRequest>(ApiKey::DescribeTopicPartitions, i16::MAX),
        range::<DeleteRecordsRequest>(ApiKey::DeleteRecords, i16::MAX),
        range::<FindCoordinatorRequest>(ApiKey::FindCoordinator, i16::MAX),
        range::<JoinGroupRequest>(ApiKey::JoinGroup, i16::MAX),
        range::<SyncGroupRequest>(ApiKey::SyncGroup, i16::MAX),
        range::<HeartbeatRequest>(ApiKey::Heartbeat, i16::MAX),
        range::<LeaveGroupRequest>(ApiKey::LeaveGroup, i16::MAX),
        // v10 names topics by id only.
        range::<OffsetCommitRequest>(ApiKey::OffsetCommit, 9),
        range::<OffsetFetchRequest>(ApiKey::OffsetFetch, 9),
        range::<ListGroupsRequest>(ApiKey::ListGroups, i16::MAX),
        range::<DescribeGroupsRequest>(ApiKey::DescribeGroups, i16::MAX),
        range::<DeleteGroupsRequest>(ApiKey::DeleteGroups, i16::MAX),
        range::<OffsetDeleteRequest>(ApiKey::OffsetDelete, i16::MAX),
        range::<ConsumerGroupHeartbeatRequest>(ApiKey::ConsumerGroupHeartbeat, i16::MAX),
        range::<ConsumerGroupDescribeRequest>(ApiKey::ConsumerGroupDescribe, i16::MAX),
        range::<ShareGroupHeartbeatRequest>(ApiKey::ShareGroupHeartbeat, i16::MAX),
        range::<ShareGroupDescribeRequest>(ApiKey::ShareGroupDescribe, i16::MAX),
        range::<ShareFetchRequest>(ApiKey::ShareFetch, i16::MAX),
        range::<ShareAcknowledgeRequest>(ApiKey::ShareAcknowledge, i16::MAX),
        // v1 adds the lag, which the crate does not know: v0 only.
        range::<DescribeShareGroupOffsetsRequest>(ApiKey::DescribeShareGroupOffsets, i16::MAX),
        range::<AlterShareGroupOffsetsRequest>(ApiKey::AlterShareGroupOffsets, i16::MAX),
        range::<DeleteShareGroupOffsetsRequest>(ApiKey::DeleteShareGroupOffsets, i16::MAX),
    ]
}

/// The version whose layout a body of `key` at `version` has: versions newer than the crate
/// knows that only widen what a field may hold are read and written in an older one's layout,
/// by the table our client uses.
fn layout(key: ApiKey, version: i16) -> i16 {
    crate::wire::versions::layout_version(key as i16, version)
}

fn version_served(key: ApiKey, version: i16) -> bool {
    served()
        .iter()
        .any(|&(k, min, max)| k == key && (min..=max).contains(&version))
}

/// Handles one request frame (without its size prefix).
pub async fn handle(broker: &Arc<Broker>, mut frame: Bytes, peer_ip: &str) -> Outcome {
    if frame.len() < 8 {
        return Outcome::Close(format!("a request of {} bytes has no header", frame.len()));
    }
    let (key, version) = ((&frame[0..2]).get_i16(), (&frame[2..4]).get_i16());
    let Ok(api) = ApiKey::try_from(key) else {
        return Outcome::Close(format!("unknown API key {key}"));
    };
    if api == ApiKey::ApiVersions && !version_served(api, version) {
        let correlation_id = (&frame[4..8]).get_i32();
        return Outcome::Reply(unsupported_api_versions(correlation_id), None);
    }
    if !version_served(api, version) {
        return Outcome::Close(format!(
            "{api:?} v{version} is not served (see ApiVersions for what is)"
        ));
    }
    let header = match RequestHeader::decode(&mut frame, api.request_header_version(version)) {
        Ok(h) => h,
        Err(e) => return Outcome::Close(format!("bad {api:?} request header: {e}")),
    };
    if broker.log.enabled(super::log::Level::Debug) {
        broker.log.debug(&format!(
            "{api:?} v{version} correlation id {} from client {}",
            header.correlation_id,
            header.client_id.as_deref().unwrap_or("")
        ));
    }
    let client = ClientInfo {
        client_id: header.client_id.as_deref().unwrap_or("").to_string(),
        host: format!("/{peer_ip}"),
    };
    let body_version = layout(api, version);
    if api == ApiKey::Fetch {
        // Its data holds a share of the fetch budget until the response is written.
        let request = match decode::<FetchRequest>(&mut frame, api, version, body_version) {
            Ok(r) => r,
            Err(refused) => return refused,
        };
        let (response, held) = CLIENT
            .scope(client, handlers::fetch::handle(broker, version, request))
            .await;
        return match encode(&header, &response, body_version) {
            Outcome::Reply(frame, _) => Outcome::Reply(frame, Some(held)),
            other => other,
        };
    }
    if api == ApiKey::Produce {
        let request = match decode::<ProduceRequest>(&mut frame, api, version, body_version) {
            Ok(r) => r,
            Err(refused) => return refused,
        };
        let answer = CLIENT
            .scope(client, handlers::produce::queue(broker, version, request))
            .await;
        return Outcome::Later(Later(Box::pin(async move {
            match answer.await {
                Some(response) => encode(&header, &response, body_version),
                None => Outcome::Silent,
            }
        })));
    }
    macro_rules! route {
        ($($key:ident => $request:ty, $handler:path;)*) => {
            match api {
                $(ApiKey::$key => {
                    let request = match decode::<$request>(&mut frame, api, version, body_version) {
                        Ok(r) => r,
                        Err(refused) => return refused,
                    };
                    match CLIENT.scope(client, $handler(broker, version, request)).await {
                        Some(response) => encode(&header, &response, body_version),
                        None => Outcome::Silent,
                    }
                })*
                _ => Outcome::Close(format!("{api:?} is not served")),
            }
        };
    }
    route! {
        ApiVersions => ApiVersionsRequest, handlers::api_versions;
        Metadata => MetadataRequest, handlers::metadata::handle;
        ListOffsets => ListOffsetsRequest, handlers::offsets::handle;
        InitProducerId => InitProducerIdRequest, handlers::txn::init_producer_id;
        AddPartitionsToTxn => AddPartitionsToTxnRequest, handlers::txn::add_partitions;
        AddOffsetsToTxn => AddOffsetsToTxnRequest, handlers::txn::add_offsets;
        TxnOffsetCommit => TxnOffsetCommitRequest, handlers::txn::txn_offset_commit;
        EndTxn => EndTxnRequest, handlers::txn::end_txn;
        DescribeTransactions => DescribeTransactionsRequest, handlers::txn_admin::describe_transactions;
        ListTransactions => ListTransactionsRequest, handlers::txn_admin::list_transactions;
        DescribeProducers => DescribeProducersRequest, handlers::txn_admin::describe_producers;
        WriteTxnMarkers => WriteTxnMarkersRequest, handlers::txn_admin::write_txn_markers;
        CreateTopics => CreateTopicsRequest, handlers::topics::create;
        DeleteTopics => DeleteTopicsRequest, handlers::topics::delete;
        CreatePartitions => CreatePartitionsRequest, handlers::topics::create_partitions;
        DescribeConfigs => DescribeConfigsRequest, handlers::configs::describe;
        IncrementalAlterConfigs => IncrementalAlterConfigsRequest, handlers::configs::alter;
        DescribeCluster => DescribeClusterRequest, handlers::metadata::describe_cluster;
        DescribeTopicPartitions => DescribeTopicPartitionsRequest, handlers::metadata::describe_topic_partitions;
        DeleteRecords => DeleteRecordsRequest, handlers::records::handle;
        FindCoordinator => FindCoordinatorRequest, groups::admin::find_coordinator;
        JoinGroup => JoinGroupRequest, groups::join::join_group;
        SyncGroup => SyncGroupRequest, groups::join::sync_group;
        Heartbeat => HeartbeatRequest, groups::membership::heartbeat;
        LeaveGroup => LeaveGroupRequest, groups::membership::leave_group;
        OffsetCommit => OffsetCommitRequest, groups::offsets::commit;
        OffsetFetch => OffsetFetchRequest, groups::offsets::fetch;
        OffsetDelete => OffsetDeleteRequest, groups::offsets::delete;
        ListGroups => ListGroupsRequest, groups::admin::list_groups;
        DescribeGroups => DescribeGroupsRequest, groups::admin::describe_groups;
        DeleteGroups => DeleteGroupsRequest, groups::admin::delete_groups;
        ConsumerGroupHeartbeat => ConsumerGroupHeartbeatRequest, groups::heartbeat::heartbeat;
        ConsumerGroupDescribe => ConsumerGroupDescribeRequest, groups::heartbeat::describe;
        ShareGroupHeartbeat => ShareGroupHeartbeatRequest, share::heartbeat;
        ShareGroupDescribe => ShareGroupDescribeRequest, share::describe;
        ShareFetch => ShareFetchRequest, share::fetch;
        ShareAcknowledge => ShareAcknowledgeRequest, share::acknowledge;
        DescribeShareGroupOffsets => DescribeShareGroupOffsetsRequest, share::describe_offsets;
        AlterShareGroupOffsets => AlterShareGroupOffsetsRequest, share::alter_offsets;
        DeleteShareGroupOffsets => DeleteShareGroupOffsetsRequest, share::delete_offsets;
    }
}

/// The request body, or the connection closed for a body that does not decode.
fn decode<R: Decodable>(
    frame: &mut Bytes,
    api: ApiKey,
    version: i16,
    body_version: i16,
) -> Result<R, Outcome> {
    R::decode(frame, body_version)
        .map_err(|e| Outcome::Close(format!("bad {api:?} v{version} request: {e}")))
}

/// A response frame: size, response header, body (in `body_version`'s layout).
fn encode<R: Encodable + HeaderVersion>(
    request: &RequestHeader,
    response: &R,
    body_version: i16,
) -> Outcome {
    let version = request.request_api_version;
    let header = ResponseHeader::default().with_correlation_id(request.correlation_id);
    let mut buf = BytesMut::with_capacity(256);
    buf.put_i32(0);
    let encoded = header
        .encode(&mut buf, R::header_version(version))
        .and_then(|()| response.encode(&mut buf, body_version));
    if let Err(e) = encoded {
        return Outcome::Close(format!("cannot encode the response: {e}"));
    }
    let size = (buf.len() - 4) as i32;
    buf[..4].copy_from_slice(&size.to_be_bytes());
    Outcome::Reply(buf, None)
}

/// The ApiVersions response listing what is served.
pub fn api_versions_response() -> ApiVersionsResponse {
    let keys = served()
        .into_iter()
        .map(|(key, min, max)| {
            ApiVersion::default()
                .with_api_key(key as i16)
                .with_min_version(min)
                .with_max_version(max)
        })
        .collect();
    ApiVersionsResponse::default().with_api_keys(keys)
}

/// UNSUPPORTED_VERSION for an ApiVersions version the server does not know, in the v0 layout
/// every client can read.
fn unsupported_api_versions(correlation_id: i32) -> BytesMut {
    let response = api_versions_response().with_error_code(35);
    let header = RequestHeader::default()
        .with_request_api_key(ApiKey::ApiVersions as i16)
        .with_request_api_version(0)
        .with_correlation_id(correlation_id);
    match encode(&header, &response, 0) {
        Outcome::Reply(frame, _) => frame,
        // The v0 layout of our own table always encodes.
        _ => BytesMut::new(),
    }
}
