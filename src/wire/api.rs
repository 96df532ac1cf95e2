//! The requests kafkit sends, tied to their API key, name and response type; Kafka's names of
//! API keys; and DescribeShareGroupOffsets v1, which the crate does not have (see
//! [`ShareGroupOffsetsRequest`]).
//!
//! The kafka-protocol crate's own `Request` trait exists only with both its `client` and `broker`
//! features (it also requires decoding requests); this trait needs only the `client` half, so
//! the broker-side decoders are never compiled.

use kafka_protocol::messages::{
    AddOffsetsToTxnRequest, AddOffsetsToTxnResponse, AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse, AlterShareGroupOffsetsRequest, AlterShareGroupOffsetsResponse,
    ApiKey, ApiVersionsRequest, ApiVersionsResponse, ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse, ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse,
    CreatePartitionsRequest, CreatePartitionsResponse, CreateTopicsRequest, CreateTopicsResponse,
    DeleteGroupsRequest, DeleteGroupsResponse, DeleteRecordsRequest, DeleteRecordsResponse,
    DeleteShareGroupOffsetsRequest, DeleteShareGroupOffsetsResponse, DeleteTopicsRequest,
    DeleteTopicsResponse, DescribeClusterRequest, DescribeClusterResponse, DescribeConfigsRequest,
    DescribeConfigsResponse, DescribeGroupsRequest, DescribeGroupsResponse,
    DescribeProducersRequest, DescribeProducersResponse, DescribeTopicPartitionsRequest,
    DescribeTopicPartitionsResponse, DescribeTransactionsRequest, DescribeTransactionsResponse,
    EndTxnRequest, EndTxnResponse, FetchRequest, FetchResponse, FindCoordinatorRequest,
    FindCoordinatorResponse, HeartbeatRequest, HeartbeatResponse, IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse, InitProducerIdRequest, InitProducerIdResponse,
    JoinGroupRequest, JoinGroupResponse, LeaveGroupRequest, LeaveGroupResponse, ListGroupsRequest,
    ListGroupsResponse, ListOffsetsRequest, ListOffsetsResponse, ListTransactionsRequest,
    ListTransactionsResponse, MetadataRequest, MetadataResponse, OffsetCommitRequest,
    OffsetCommitResponse, OffsetDeleteRequest, OffsetDeleteResponse, OffsetFetchRequest,
    OffsetFetchResponse, ProduceRequest, ProduceResponse, SaslAuthenticateRequest,
    SaslAuthenticateResponse, SaslHandshakeRequest, SaslHandshakeResponse, ShareAcknowledgeRequest,
    ShareAcknowledgeResponse, ShareFetchRequest, ShareFetchResponse, ShareGroupDescribeRequest,
    ShareGroupDescribeResponse, ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse,
    SyncGroupRequest, SyncGroupResponse, TxnOffsetCommitRequest, TxnOffsetCommitResponse,
    WriteTxnMarkersRequest, WriteTxnMarkersResponse,
};
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, Message, VersionRange};

pub use super::share_group_offsets::{ShareGroupOffsetsRequest, ShareGroupOffsetsResponse};

/// A request kafkit can send.
pub trait Api: Message + Encodable + HeaderVersion {
    /// The API key in the request header.
    const KEY: i16;
    /// The API's name, for messages.
    const NAME: &'static str;
    /// What the broker answers.
    type Response: Message + Decodable + HeaderVersion;
}

macro_rules! apis {
    ($($key:ident: $request:ty => $response:ty;)*) => {
        $(
            impl Api for $request {
                const KEY: i16 = ApiKey::$key as i16;
                const NAME: &'static str = stringify!($key);
                type Response = $response;
            }
        )*

        /// The versions kafkit sends of the API with this key; `None` for an API kafkit never
        /// sends.
        pub fn sent_versions(key: i16) -> Option<VersionRange> {
            $(
                if key == <$request as Api>::KEY {
                    return Some(super::versions::ours::<$request>());
                }
            )*
            None
        }

        /// The keys of the APIs kafkit sends, ascending.
        pub fn sent_keys() -> Vec<i16> {
            let mut keys = vec![$(<$request as Api>::KEY),*];
            keys.sort_unstable();
            keys
        }
    };
}

/// Kafka's name of an API (`Produce`, `ListOffsets`), as its tools print it; `None` for a key
/// this build does not know. The crate names the keys it knows after the same message specs.
pub fn api_name(key: i16) -> Option<String> {
    match ApiKey::try_from(key) {
        Ok(api) => Some(format!("{api:?}")),
        // Kafka 4.x's Streams group APIs, which the crate does not have.
        Err(_) => match key {
            88 => Some("StreamsGroupHeartbeat".to_string()),
            89 => Some("StreamsGroupDescribe".to_string()),
            _ => None,
        },
    }
}

apis! {
    ApiVersions: ApiVersionsRequest => ApiVersionsResponse;
    Metadata: MetadataRequest => MetadataResponse;
    CreateTopics: CreateTopicsRequest => CreateTopicsResponse;
    DeleteTopics: DeleteTopicsRequest => DeleteTopicsResponse;
    DeleteRecords: DeleteRecordsRequest => DeleteRecordsResponse;
    DescribeConfigs: DescribeConfigsRequest => DescribeConfigsResponse;
    CreatePartitions: CreatePartitionsRequest => CreatePartitionsResponse;
    IncrementalAlterConfigs: IncrementalAlterConfigsRequest => IncrementalAlterConfigsResponse;
    DescribeCluster: DescribeClusterRequest => DescribeClusterResponse;
    DescribeTopicPartitions: DescribeTopicPartitionsRequest => DescribeTopicPartitionsResponse;
    Produce: ProduceRequest => ProduceResponse;
    InitProducerId: InitProducerIdRequest => InitProducerIdResponse;
    DescribeProducers: DescribeProducersRequest => DescribeProducersResponse;
    DescribeTransactions: DescribeTransactionsRequest => DescribeTransactionsResponse;
    ListTransactions: ListTransactionsRequest => ListTransactionsResponse;
    WriteTxnMarkers: WriteTxnMarkersRequest => WriteTxnMarkersResponse;
    AddPartitionsToTxn: AddPartitionsToTxnRequest => AddPartitionsToTxnResponse;
    EndTxn: EndTxnRequest => EndTxnResponse;
    AddOffsetsToTxn: AddOffsetsToTxnRequest => AddOffsetsToTxnResponse;
    TxnOffsetCommit: TxnOffsetCommitRequest => TxnOffsetCommitResponse;
    Fetch: FetchRequest => FetchResponse;
    ListOffsets: ListOffsetsRequest => ListOffsetsResponse;
    FindCoordinator: FindCoordinatorRequest => FindCoordinatorResponse;
    JoinGroup: JoinGroupRequest => JoinGroupResponse;
    SyncGroup: SyncGroupRequest => SyncGroupResponse;
    Heartbeat: HeartbeatRequest => HeartbeatResponse;
    LeaveGroup: LeaveGroupRequest => LeaveGroupResponse;
    OffsetCommit: OffsetCommitRequest => OffsetCommitResponse;
    OffsetFetch: OffsetFetchRequest => OffsetFetchResponse;
    OffsetDelete: OffsetDeleteRequest => OffsetDeleteResponse;
    ListGroups: ListGroupsRequest => ListGroupsResponse;
    DescribeGroups: DescribeGroupsRequest => DescribeGroupsResponse;
    ConsumerGroupDescribe: ConsumerGroupDescribeRequest => ConsumerGroupDescribeResponse;
    ConsumerGroupHeartbeat: ConsumerGroupHeartbeatRequest => ConsumerGroupHeartbeatResponse;
    DeleteGroups: DeleteGroupsRequest => DeleteGroupsResponse;
    SaslHandshake: SaslHandshakeRequest => SaslHandshakeResponse;
    SaslAuthenticate: SaslAuthenticateRequest => SaslAuthenticateResponse;
    ShareGroupHeartbeat: ShareGroupHeartbeatRequest => ShareGroupHeartbeatResponse;
    ShareFetch: ShareFetchRequest => ShareFetchResponse;
    ShareAcknowledge: ShareAcknowledgeRequest => ShareAcknowledgeResponse;
    ShareGroupDescribe: ShareGroupDescribeRequest => ShareGroupDescribeResponse;
    DescribeShareGroupOffsets: ShareGroupOffsetsRequest => ShareGroupOffsetsResponse;
    AlterShareGroupOffsets: AlterShareGroupOffsetsRequest => AlterShareGroupOffsetsResponse;
    DeleteShareGroupOffsets: DeleteShareGroupOffsetsRequest => DeleteShareGroupOffsetsResponse;
}
