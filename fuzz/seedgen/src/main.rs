//! Writes the seed corpus of the fuzz targets, `fuzz/seeds/<target>/`: inputs that each target
//! reads as something valid (laid out as `kafkit::fuzzing` documents for that target), so that
//! the fuzzer starts from real batches, frames and files instead of discovering their shapes.
//!
//! Record batches come from `tests/vectors/record-batches.json` (written by kafka-python);
//! response frames are kafka-protocol's own encodings, every API and version kafkit decodes.

use std::path::{Path, PathBuf};

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::api_versions_response::ApiVersion;
use kafka_protocol::messages::describe_groups_response::{DescribedGroup, DescribedGroupMember};
use kafka_protocol::messages::fetch_response::{
    AbortedTransaction, FetchableTopicResponse, PartitionData,
};
use kafka_protocol::messages::join_group_response::JoinGroupResponseMember;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Encodable, HeaderVersion, StrBytes};

fn main() {
    let batches = vectors();
    record_batch(&batches);
    response_frame(&batches);
    command_config();
    json_input();
    reset_plan();
    segment_recovery(&batches);
}

/// One target's seed directory, emptied first.
struct Seeds {
    dir: PathBuf,
}

impl Seeds {
    fn new(target: &str) -> Seeds {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../seeds")
            .join(target);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Seeds { dir }
    }

    fn put(&self, name: &str, parts: &[&[u8]]) {
        std::fs::write(self.dir.join(name), parts.concat()).unwrap();
    }
}

/// The vector batches, by codec name, in `Compression::ALL` order (none, gzip, snappy, lz4,
/// zstd): 44 records each, base offset 0, partition leader epoch 0.
fn vectors() -> Vec<(String, Vec<u8>)> {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors/record-batches.json");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut out: Vec<(String, Vec<u8>)> = json["batches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            let hex = b["batch_hex"].as_str().unwrap();
            let bytes = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                .collect();
            (b["codec"].as_str().unwrap().to_string(), bytes)
        })
        .collect();
    let order = ["none", "gzip", "snappy", "lz4", "zstd"];
    out.sort_by_key(|(codec, _)| order.iter().position(|c| c == codec).unwrap());
    assert_eq!(out.len(), order.len());
    out
}

/// A batch with its base offset changed (the CRC does not cover it).
fn at(batch: &[u8], base: i64) -> Vec<u8> {
    let mut b = batch.to_vec();
    b[..8].copy_from_slice(&base.to_be_bytes());
    b
}

fn set_crc(batch: &mut [u8]) {
    let crc = crc32c::crc32c(&batch[21..]);
    batch[17..21].copy_from_slice(&crc.to_be_bytes());
}

/// A transactional batch of producer 7 (the vector's records, attributes changed).
fn transactional(batch: &[u8], base: i64) -> Vec<u8> {
    let mut b = at(batch, base);
    b[21..23].copy_from_slice(&0x10i16.to_be_bytes());
    b[43..51].copy_from_slice(&7i64.to_be_bytes());
    set_crc(&mut b);
    b
}

/// Producer 7's abort marker at `offset`: a control batch of one record whose key is
/// version 0, type 0 (abort).
fn abort_marker(offset: i64) -> Vec<u8> {
    let record: &[u8] = &[
        0x20, // length 16 (zigzag varint)
        0,    // attributes
        0,    // timestamp delta
        0,    // offset delta
        0x08, 0, 0, 0, 0, // key: 4 bytes, version 0, type abort
        0x0c, 0, 0, 0, 0, 0, 0, // value: 6 bytes, version 0, coordinator epoch 0
        0, // no headers
    ];
    let mut b = Vec::new();
    b.extend_from_slice(&offset.to_be_bytes());
    b.extend_from_slice(&((49 + record.len()) as i32).to_be_bytes());
    b.extend_from_slice(&0i32.to_be_bytes());
    b.push(2);
    b.extend_from_slice(&[0; 4]);
    b.extend_from_slice(&0x30i16.to_be_bytes()); // transactional, control
    b.extend_from_slice(&0i32.to_be_bytes()); // last offset delta
    b.extend_from_slice(&1_700_000_000_000i64.to_be_bytes());
    b.extend_from_slice(&1_700_000_000_000i64.to_be_bytes());
    b.extend_from_slice(&7i64.to_be_bytes());
    b.extend_from_slice(&0i16.to_be_bytes());
    b.extend_from_slice(&(-1i32).to_be_bytes());
    b.extend_from_slice(&1i32.to_be_bytes());
    b.extend_from_slice(record);
    set_crc(&mut b);
    b
}

/// The 60 bytes after a batch's first 61 that modes 2 and 3 of `record_batch` read before the
/// records: attributes, base offset, last offset delta, timestamps, producer id, count.
fn header_fields(batch: &[u8]) -> Vec<u8> {
    let mut h = Vec::new();
    h.extend_from_slice(&batch[21..23]); // attributes
    h.extend_from_slice(&batch[0..8]); // base offset
    h.extend_from_slice(&batch[23..51]); // last offset delta, timestamps, producer id
    h.extend_from_slice(&batch[57..61]); // records count
    h
}

fn record_batch(batches: &[(String, Vec<u8>)]) {
    let seeds = Seeds::new("record_batch");
    let plain = &batches[0].1[61..];
    for (i, (codec, batch)) in batches.iter().enumerate() {
        seeds.put(&format!("whole-{codec}"), &[&[0], batch]);
        seeds.put(&format!("fixed-{codec}"), &[&[1], batch]);
        let fields = header_fields(batch);
        seeds.put(
            &format!("section-{codec}"),
            &[&[2, i as u8], &fields, &batch[61..]],
        );
        seeds.put(
            &format!("compress-{codec}"),
            &[&[3, i as u8], &fields, plain],
        );
    }
    let both = [at(&batches[0].1, 0), at(&batches[1].1, 44)].concat();
    seeds.put("two-batches", &[&[0], &both]);
    // Offsets and timestamps at the edges of their range.
    let mut edge = at(&batches[0].1, i64::MAX - 40);
    edge[27..35].copy_from_slice(&(i64::MAX - 5).to_be_bytes());
    set_crc(&mut edge);
    seeds.put("edge-offsets", &[&[0], &edge]);
    let mut fields = header_fields(&edge);
    fields[2..10].copy_from_slice(&i64::MIN.to_be_bytes());
    seeds.put("edge-compress", &[&[3, 0], &fields, plain]);
}

/// A response frame after its size prefix: header (correlation id 1), then the body.
fn frame<R: Encodable + HeaderVersion>(response: &R, version: i16) -> Option<Vec<u8>> {
    let mut buf = BytesMut::new();
    ResponseHeader::default()
        .with_correlation_id(1)
        .encode(&mut buf, R::header_version(version))
        .ok()?;
    response.encode(&mut buf, version).ok()?;
    Some(buf.to_vec())
}

macro_rules! defaults {
    ($($key:ident: $response:ty),* $(,)?) => {
        /// An empty response of API `key` at `version`.
        fn default_frame(key: i16, version: i16) -> Option<Vec<u8>> {
            $(
                if key == ApiKey::$key as i16 {
                    return frame(&<$response>::default(), version);
                }
            )*
            panic!("no response type for API key {key}: add it here");
        }
    };
}

defaults! {
    ApiVersions: ApiVersionsResponse,
    Metadata: MetadataResponse,
    CreateTopics: CreateTopicsResponse,
    DeleteTopics: DeleteTopicsResponse,
    DescribeConfigs: DescribeConfigsResponse,
    CreatePartitions: CreatePartitionsResponse,
    IncrementalAlterConfigs: IncrementalAlterConfigsResponse,
    DescribeCluster: DescribeClusterResponse,
    DescribeTopicPartitions: DescribeTopicPartitionsResponse,
    Produce: ProduceResponse,
    InitProducerId: InitProducerIdResponse,
    Fetch: FetchResponse,
    ListOffsets: ListOffsetsResponse,
    FindCoordinator: FindCoordinatorResponse,
    JoinGroup: JoinGroupResponse,
    SyncGroup: SyncGroupResponse,
    Heartbeat: HeartbeatResponse,
    LeaveGroup: LeaveGroupResponse,
    OffsetCommit: OffsetCommitResponse,
    OffsetFetch: OffsetFetchResponse,
    OffsetDelete: OffsetDeleteResponse,
    ListGroups: ListGroupsResponse,
    DescribeGroups: DescribeGroupsResponse,
    ConsumerGroupDescribe: ConsumerGroupDescribeResponse,
    ConsumerGroupHeartbeat: ConsumerGroupHeartbeatResponse,
    DeleteGroups: DeleteGroupsResponse,
    SaslHandshake: SaslHandshakeResponse,
    SaslAuthenticate: SaslAuthenticateResponse,
}

/// `int16 version` then the struct, as `remote::consumer_protocol` writes them.
fn versioned<T: Encodable>(value: &T, version: i16) -> Bytes {
    let mut buf = BytesMut::new();
    buf.extend_from_slice(&version.to_be_bytes());
    value.encode(&mut buf, version).unwrap();
    buf.freeze()
}

fn response_frame(batches: &[(String, Vec<u8>)]) {
    let seeds = Seeds::new("response_frame");
    let apis = kafkit::fuzzing::response_apis();
    for (key, range) in &apis {
        for version in range.min..=range.max {
            if let Some(frame) = default_frame(*key, version) {
                seeds.put(
                    &format!("{key}-v{version}"),
                    &[&[*key as u8, version as u8], &frame],
                );
            }
        }
    }
    let versions = ApiVersionsResponse::default().with_api_keys(
        apis.iter()
            .map(|(key, range)| {
                ApiVersion::default()
                    .with_api_key(*key)
                    .with_min_version(0)
                    .with_max_version(range.max + 1)
            })
            .collect(),
    );
    for v in [0, 3] {
        let f = frame(&versions, v).unwrap();
        seeds.put(&format!("api-versions-v{v}"), &[&[18, v as u8], &f]);
    }
    fetch_seeds(&seeds, batches);
    group_seeds(&seeds);
}

/// Fetch responses with plain, transactional, abort-marker and zstd batches, and the same
/// batches for the target's fetched-records mode.
fn fetch_seeds(seeds: &Seeds, batches: &[(String, Vec<u8>)]) {
    let records = [
        at(&batches[0].1, 0),
        transactional(&batches[1].1, 44),
        abort_marker(88),
        at(&batches[4].1, 89),
    ]
    .concat();
    let partition = PartitionData::default()
        .with_high_watermark(133)
        .with_last_stable_offset(133)
        .with_aborted_transactions(Some(vec![
            AbortedTransaction::default()
                .with_producer_id(ProducerId(7))
                .with_first_offset(44),
        ]))
        .with_records(Some(Bytes::from(records.clone())));
    let fetch = FetchResponse::default().with_responses(vec![
        FetchableTopicResponse::default()
            .with_topic(TopicName(StrBytes::from_static_str("t")))
            .with_partitions(vec![partition]),
    ]);
    for v in [4, 12] {
        let f = frame(&fetch, v).unwrap();
        seeds.put(&format!("fetch-records-v{v}"), &[&[1, v as u8], &f]);
    }
    // The partition's batches alone: position 0, read_committed, no time, no stop, the
    // aborted transaction of producer 7 from offset 44.
    let mut walk = vec![0xf0];
    walk.extend_from_slice(&0i64.to_be_bytes());
    walk.push(1);
    walk.extend_from_slice(&0i64.to_be_bytes());
    walk.extend_from_slice(&[0, 1, 7]);
    walk.extend_from_slice(&44i64.to_be_bytes());
    seeds.put("fetched-read-committed", &[&walk, &records]);
    // Batches at the end of the offset range, read from a position near it.
    let edge = [at(&batches[0].1, i64::MAX - 45), abort_marker(i64::MAX - 1)].concat();
    let mut walk = vec![0xf0];
    walk.extend_from_slice(&(i64::MAX - 50).to_be_bytes());
    walk.extend_from_slice(&[1; 9]);
    walk.extend_from_slice(&[0, 0]);
    seeds.put("fetched-edge-offsets", &[&walk, &edge]);
}

/// JoinGroup, SyncGroup and DescribeGroups responses carrying consumer-protocol bytes, at the
/// oldest and newest consumer-protocol versions.
fn group_seeds(seeds: &Seeds) {
    let subscription = ConsumerProtocolSubscription::default()
        .with_topics(vec![StrBytes::from_static_str("t")])
        .with_generation_id(3);
    let assignment = ConsumerProtocolAssignment::default().with_assigned_partitions(vec![
        consumer_protocol_assignment::TopicPartition::default()
            .with_topic(TopicName(StrBytes::from_static_str("t")))
            .with_partitions(vec![0, 2]),
    ]);
    for cv in [0, 3] {
        let join = JoinGroupResponse::default()
            .with_protocol_name(Some(StrBytes::from_static_str("range")))
            .with_members(vec![
                JoinGroupResponseMember::default()
                    .with_member_id(StrBytes::from_static_str("m-1"))
                    .with_metadata(versioned(&subscription, cv)),
            ]);
        for v in [4, 9] {
            let f = frame(&join, v).unwrap();
            seeds.put(&format!("join-group-v{v}-c{cv}"), &[&[11, v as u8], &f]);
        }
        let sync = SyncGroupResponse::default().with_assignment(versioned(&assignment, cv));
        for v in [0, 5] {
            let f = frame(&sync, v).unwrap();
            seeds.put(&format!("sync-group-v{v}-c{cv}"), &[&[14, v as u8], &f]);
        }
        let describe = DescribeGroupsResponse::default().with_groups(vec![
            DescribedGroup::default().with_members(vec![
                DescribedGroupMember::default()
                    .with_member_metadata(versioned(&subscription, cv))
                    .with_member_assignment(versioned(&assignment, cv)),
            ]),
        ]);
        for v in [0, 5] {
            let f = frame(&describe, v).unwrap();
            seeds.put(
                &format!("describe-groups-v{v}-c{cv}"),
                &[&[15, v as u8], &f],
            );
        }
    }
}

fn command_config() {
    let seeds = Seeds::new("command_config");
    let scram = "# client.properties\n\
        ! for SASL_SSL\n\
        bootstrap.servers=localhost:9092\n\
        security.protocol=SASL_SSL\n\
        sasl.mechanism=SCRAM-SHA-512\n\
        sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n\
        \x20   username=\"alice\" \\\n\
        \x20   password=\"al\\\\\"ice\\u00e9\\uD83D\\uDE00\";\n\
        ssl.endpoint.identification.algorithm=\n\
        request.timeout.ms : 5000\n\
        client.id my\\ client\\tid\n";
    seeds.put("scram", &[&[0], scram.as_bytes()]);
    let plain = "security.protocol=SASL_PLAINTEXT\n\
        sasl.mechanism=PLAIN\n\
        sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=bob password=pw;\n";
    seeds.put("plain", &[&[0], plain.as_bytes()]);
    let tls = "security.protocol=SSL\n\
        ssl.truststore.type=PEM\n\
        ssl.truststore.certificates=-----BEGIN CERTIFICATE-----\\n\
        MIIBszCCAVmgAwIBAgIUZmFrZQ==\\n\
        -----END CERTIFICATE-----\n\
        ssl.keystore.key=-----BEGIN PRIVATE KEY-----\\nMC4CAQAwBQYDK2VwBCIEIA==\\n-----END PRIVATE KEY-----\n";
    seeds.put("tls-inline", &[&[0], tls.as_bytes()]);
    let jaas = "org.apache.kafka.common.security.scram.ScramLoginModule REQUIRED\n  \
        username=bob\n  password=\"a \\\"quoted\\\" \\\\ pass;word=\" ;";
    seeds.put("jaas", &[&[1], jaas.as_bytes()]);
}

fn json_input() {
    let seeds = Seeds::new("json_input");
    let lines = concat!(
        r#"{"topic":"t","partition":2,"offset":5,"timestamp":1700000000000,"timestampType":"CreateTime","key":{"base64":"/wBh"},"value":"caf\u00e9 \"quoted\"\n","headers":[["h","v"],["h",null],["bin",{"base64":"gA=="}]]}"#,
        "\r\n",
        r#"{"value":null}"#,
        "\n",
        r#"{"key":"k","value":"","partition":0,"timestamp":-1}"#,
        "\n",
    );
    seeds.put("lines", &[lines.as_bytes()]);
}

fn reset_plan() {
    let seeds = Seeds::new("reset_plan");
    seeds.put("three-columns", &[&[1], b"t,0,5\nt,1,7\n\n"]);
    seeds.put(
        "four-columns",
        &[&[0], b"g,t,0,5\r\n\"b,c\",t,1,7\n\"q\"\"g\",\" t\",2,0\n"],
    );
}

/// Layout of `kafkit::fuzzing::segment_recovery`'s input.
struct SegmentSeed<'a> {
    flags: u8,
    index: &'a [u8],
    timeindex: &'a [u8],
    checkpoint: &'a [u8],
    split: u16,
    second_base: u8,
    log: &'a [u8],
}

impl SegmentSeed<'_> {
    fn bytes(&self) -> Vec<u8> {
        let mut b = vec![self.flags, 0]; // base offset 0
        b.push(self.index.len() as u8);
        b.push(self.timeindex.len() as u8);
        b.push(self.checkpoint.len() as u8);
        b.extend_from_slice(&1_700_000_000_010i64.to_be_bytes()); // a time inside the records
        b.push(0); // index.interval.bytes 1
        b.extend_from_slice(&0u16.to_be_bytes()); // no byte flipped
        b.extend_from_slice(&self.split.to_be_bytes());
        b.push(self.second_base);
        b.extend_from_slice(self.index);
        b.extend_from_slice(self.timeindex);
        b.extend_from_slice(self.checkpoint);
        b.extend_from_slice(self.log);
        b
    }
}

fn segment_recovery(batches: &[(String, Vec<u8>)]) {
    let seeds = Seeds::new("segment_recovery");
    let (b0, b1, b2) = (
        at(&batches[0].1, 0),
        at(&batches[1].1, 44),
        at(&batches[2].1, 88),
    );
    let log = [b0.clone(), b1.clone(), b2.clone()].concat();
    // The indexes a writer keeps with index.interval.bytes 1: the first batch is never
    // indexed; each later one is, by its last offset and position. The max timestamp is the
    // same in every batch, so the time index holds one entry, for the first batch's.
    let mut index = Vec::new();
    for (last, position) in [(87i32, b0.len()), (131, b0.len() + b1.len())] {
        index.extend_from_slice(&last.to_be_bytes());
        index.extend_from_slice(&(position as u32).to_be_bytes());
    }
    let max_ts = &b0[35..43];
    let timeindex = [max_ts, &43i32.to_be_bytes()].concat();
    let seed = |flags, index, timeindex, checkpoint, split, second_base, log| {
        SegmentSeed {
            flags,
            index,
            timeindex,
            checkpoint,
            split,
            second_base,
            log,
        }
        .bytes()
    };
    let put = |name: &str, bytes: Vec<u8>| seeds.put(name, &[&bytes]);
    put("three-batches", seed(0, &[], &[], &[], 0, 0, &log));
    put("indexed", seed(0, &index, &timeindex, &[], 0, 0, &log));
    put("checkpoint", seed(8, &[], &[], b"0\n44\n", 0, 0, &log));
    put(
        "two-segments",
        seed(4, &[], &[], &[], b0.len() as u16, 43, &log),
    );
    let torn = &log[..log.len() - 7];
    put("torn-tail", seed(0, &index, &timeindex, &[], 0, 0, torn));
    put("fixed-and-flipped", seed(3, &[], &[], &[], 0, 0, &log));
}
