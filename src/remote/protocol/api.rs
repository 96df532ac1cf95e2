//! The requests kafkit sends, tied to their API key, name and response type.
//!
//! The kafka-protocol crate's own `Request` trait exists only with both its `client` and `broker`
//! features (it also requires decoding requests); this trait needs only the `client` half, so
//! the broker-side decoders are never compiled.

use kafka_protocol::messages::{
    ApiKey, ApiVersionsRequest, ApiVersionsResponse, ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse, ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse,
    CreatePartitionsRequest, CreatePartitionsResponse, CreateTopicsRequest, CreateTopicsResponse,
    DeleteGroupsRequest, DeleteGroupsResponse, DeleteTopicsRequest, DeleteTopicsResponse,
    DescribeClusterRequest, DescribeClusterResponse, DescribeConfigsRequest,
    DescribeConfigsResponse, DescribeGroupsRequest, DescribeGroupsResponse,
    DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse, FetchRequest, FetchResponse,
    FindCoordinatorRequest, FindCoordinatorResponse, HeartbeatRequest, HeartbeatResponse,
    IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse, InitProducerIdRequest,
    InitProducerIdResponse, JoinGroupRequest, JoinGroupResponse, LeaveGroupRequest,
    LeaveGroupResponse, ListGroupsRequest, ListGroupsResponse, ListOffsetsRequest,
    ListOffsetsResponse, MetadataRequest, MetadataResponse, OffsetCommitRequest,
    OffsetCommitResponse, OffsetDeleteRequest, OffsetDeleteResponse, OffsetFetchRequest,
    OffsetFetchResponse, ProduceRequest, ProduceResponse, SaslAuthenticateRequest,
    SaslAuthenticateResponse, SaslHandshakeRequest, SaslHandshakeResponse, SyncGroupRequest,
    SyncGroupResponse,
};
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, Message};

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
    };
}

apis! {
    ApiVersions: ApiVersionsRequest => ApiVersionsResponse;
    Metadata: MetadataRequest => MetadataResponse;
    CreateTopics: CreateTopicsRequest => CreateTopicsResponse;
    DeleteTopics: DeleteTopicsRequest => DeleteTopicsResponse;
    DescribeConfigs: DescribeConfigsRequest => DescribeConfigsResponse;
    CreatePartitions: CreatePartitionsRequest => CreatePartitionsResponse;
    IncrementalAlterConfigs: IncrementalAlterConfigsRequest => IncrementalAlterConfigsResponse;
    DescribeCluster: DescribeClusterRequest => DescribeClusterResponse;
    DescribeTopicPartitions: DescribeTopicPartitionsRequest => DescribeTopicPartitionsResponse;
    Produce: ProduceRequest => ProduceResponse;
    InitProducerId: InitProducerIdRequest => InitProducerIdResponse;
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
}
