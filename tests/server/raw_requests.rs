//! Requests made by hand over a raw socket, with what no client library would send.
//!
//! Malformed record batches in Produce requests: each is refused with Kafka's error code,
//! nothing of it is written, and the partition stays readable by kcat, the Java consumer and
//! `--log-dir` (one stored batch that no reader can parse would hide every record after it).
//! And the limits Kafka checks: acks outside -1, 0 and 1, a Fetch limit of 0 bytes or below 0;
//! commits for partitions that do not exist; clients that pipeline fetches and never read the
//! answers.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use kafka_protocol::ResponseError;
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::{
    ApiKey, BrokerId, ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse, FetchRequest,
    FetchResponse, GroupId, OffsetCommitRequest, OffsetCommitResponse, ProduceRequest,
    ProduceResponse, RequestHeader, ResponseHeader, TopicName,
};
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
use kafkit::record::{BatchBuilder, BatchHeader, Compression, TimestampType, verify_crc};

use crate::common::broker::{CONSOLE_CONSUMER, java_tool};
use crate::common::server::Server;
use crate::common::{Kafkit, committed, text};

const PRODUCE_VERSION: i16 = 3;
const FETCH_VERSION: i16 = 4;

/// A valid batch of one record (no key, value "abc", no headers), uncompressed.
fn one_record() -> Vec<u8> {
    // Now: an old timestamp would fall to the topic's retention.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let mut builder = BatchBuilder::new(Compression::None);
    builder.append(now, None, Some(b"abc"), &[]);
    let batch = builder.build(0).unwrap();
    // The record's bytes after the 61-byte header: length 9, attributes, timestamp delta 0,
    // offset delta 0, key length -1, value length 3, "abc", 0 headers (varints zigzagged).
    assert_eq!(batch[61..], [18, 0, 0, 0, 1, 6, b'a', b'b', b'c', 0]);
    batch
}

/// `batch` with its records section's byte `at` replaced by `with`, then a valid length and
/// CRC again: only what is inside the records is wrong.
fn patched(at: usize, with: &[u8]) -> Vec<u8> {
    let mut batch = one_record();
    batch.splice(61 + at..61 + at + 1, with.iter().copied());
    reframe(batch)
}

/// `batch` with the compression bits of its attributes set to `codec` (the records stay
/// uncompressed bytes).
fn flagged(codec: u8) -> Vec<u8> {
    let mut batch = one_record();
    batch[22] = (batch[22] & !0x07) | codec;
    reframe(batch)
}

fn reframe(mut batch: Vec<u8>) -> Vec<u8> {
    let length = (batch.len() - 12) as i32;
    batch[8..12].copy_from_slice(&length.to_be_bytes());
    let crc = crc32c::crc32c(&batch[21..]);
    batch[17..21].copy_from_slice(&crc.to_be_bytes());
    batch
}

/// Sends one Produce request (acks=1) with `records` for partition 0 of `topic` and returns the
/// partition's error code.
fn produce(bootstrap: &str, topic: &str, records: Vec<u8>) -> i16 {
    produce_with_acks(bootstrap, topic, records, 1)
}

fn produce_with_acks(bootstrap: &str, topic: &str, records: Vec<u8>, acks: i16) -> i16 {
    let request = produce_request(topic, records, acks);
    let mut answer = call(bootstrap, ApiKey::Produce, PRODUCE_VERSION, &request);
    let response = ProduceResponse::decode(&mut answer, PRODUCE_VERSION).unwrap();
    response.responses[0].partition_responses[0].error_code
}

/// A Produce request of `records` for partition 0 of `topic`.
fn produce_request(topic: &str, records: Vec<u8>, acks: i16) -> ProduceRequest {
    ProduceRequest::default()
        .with_acks(acks)
        .with_timeout_ms(30_000)
        .with_topic_data(vec![
            TopicProduceData::default()
                .with_name(StrBytes::from_string(topic.to_string()).into())
                .with_partition_data(vec![
                    PartitionProduceData::default()
                        .with_index(0)
                        .with_records(Some(Bytes::from(records))),
                ]),
        ])
}

/// Fetches partition 0 of `topic` from offset 0 with these byte limits; returns the records.
fn fetch(bootstrap: &str, topic: &str, max_bytes: i32, partition_max_bytes: i32) -> Bytes {
    let request = fetch_request(topic, max_bytes, partition_max_bytes);
    let mut answer = call(bootstrap, ApiKey::Fetch, FETCH_VERSION, &request);
    let response = FetchResponse::decode(&mut answer, FETCH_VERSION).unwrap();
    let partition = &response.responses[0].partitions[0];
    assert_eq!(partition.error_code, 0);
    partition.records.clone().unwrap_or_default()
}

fn fetch_request(topic: &str, max_bytes: i32, partition_max_bytes: i32) -> FetchRequest {
    FetchRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_max_wait_ms(0)
        .with_max_bytes(max_bytes)
        .with_topics(vec![
            FetchTopic::default()
                .with_topic(TopicName(StrBytes::from_string(topic.to_string())))
                .with_partitions(vec![
                    FetchPartition::default()
                        .with_partition(0)
                        .with_fetch_offset(0)
                        .with_partition_max_bytes(partition_max_bytes),
                ]),
        ])
}

/// Sends one request on a connection of its own and returns the response's body.
fn call(bootstrap: &str, key: ApiKey, version: i16, request: &impl Encodable) -> Bytes {
    let frame = request_frame(key, version, request);
    let mut stream = TcpStream::connect(bootstrap).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    stream.write_all(&frame).unwrap();
    let mut size = [0u8; 4];
    stream.read_exact(&mut size).expect("the server answers");
    let mut answer = vec![0u8; i32::from_be_bytes(size) as usize];
    stream.read_exact(&mut answer).unwrap();
    let mut answer = Bytes::from(answer);
    let header = ResponseHeader::decode(&mut answer, key.response_header_version(version)).unwrap();
    assert_eq!(header.correlation_id, 7);
    answer
}

/// A request frame: size, header (correlation id 7), body.
fn request_frame(key: ApiKey, version: i16, request: &impl Encodable) -> BytesMut {
    numbered_frame(key, version, request, 7)
}

/// A request frame with this correlation id.
fn numbered_frame(
    key: ApiKey,
    version: i16,
    request: &impl Encodable,
    correlation_id: i32,
) -> BytesMut {
    let header = RequestHeader::default()
        .with_request_api_key(key as i16)
        .with_request_api_version(version)
        .with_correlation_id(correlation_id)
        .with_client_id(Some(StrBytes::from_static_str("malformed")));
    let mut body = BytesMut::new();
    header
        .encode(&mut body, key.request_header_version(version))
        .unwrap();
    request.encode(&mut body, version).unwrap();
    let mut frame = BytesMut::new();
    frame.put_i32(body.len() as i32);
    frame.extend_from_slice(&body);
    frame
}

/// On a LogAppendTime topic a produce is answered with the time its batch was stamped with,
/// which a fetch then gives back in the batch (its timestamp type and max timestamp); on a
/// CreateTime topic the answer's time is -1 and the batch is as sent.
#[test]
fn log_append_time_is_answered_and_stored() {
    let k = Kafkit::new();
    k.create_with("stamped", &["message.timestamp.type=LogAppendTime"]);
    k.ok("kafka-topics", &["--create", "--topic", "created"], None);
    let server = Server::start(k.log_dir(), &[]);
    let b = server.bootstrap.as_str();
    let produced = |topic: &str| {
        let request = produce_request(topic, one_record(), 1);
        let mut answer = call(b, ApiKey::Produce, PRODUCE_VERSION, &request);
        let response = ProduceResponse::decode(&mut answer, PRODUCE_VERSION).unwrap();
        let partition = response.responses[0].partition_responses[0].clone();
        assert_eq!(partition.error_code, 0, "{topic}");
        partition.log_append_time_ms
    };
    let sent = BatchHeader::parse(&one_record()).unwrap();
    let stamp = produced("stamped");
    assert!(
        stamp >= sent.max_timestamp,
        "{stamp} against {}",
        sent.max_timestamp
    );
    let stored = fetch(b, "stamped", 1 << 20, 1 << 20);
    let header = BatchHeader::parse(&stored).unwrap();
    assert_eq!(header.timestamp_type(), TimestampType::LogAppendTime);
    assert_eq!(header.max_timestamp, stamp);
    verify_crc(&stored).expect("the CRC was computed again");

    assert_eq!(produced("created"), -1);
    let stored = fetch(b, "created", 1 << 20, 1 << 20);
    let header = BatchHeader::parse(&stored).unwrap();
    assert_eq!(header.timestamp_type(), TimestampType::CreateTime);
}

#[test]
fn malformed_batches_are_refused_and_the_partition_stays_readable() {
    let k = Kafkit::new();
    k.ok("kafka-topics", &["--create", "--topic", "t"], None);
    let server = Server::start(k.log_dir(), &[]);
    let b = server.bootstrap.as_str();
    assert_eq!(
        produce(b, "t", one_record()),
        0,
        "a well-formed batch is written"
    );

    let max_varint = [0xfe, 0xff, 0xff, 0xff, 0x0f]; // 2^31 - 1, zigzagged
    let cases: Vec<(&str, Vec<u8>, ResponseError)> = vec![
        (
            "key length 2^31-1",
            patched(4, &max_varint),
            ResponseError::InvalidRecord,
        ),
        (
            "value length -5",
            patched(5, &[9]),
            ResponseError::InvalidRecord,
        ),
        (
            "header count 2^31-1",
            patched(9, &max_varint),
            ResponseError::InvalidRecord,
        ),
        (
            "gzip-flagged garbage",
            flagged(1),
            ResponseError::CorruptMessage,
        ),
        (
            "compression codec 7",
            flagged(7),
            ResponseError::CorruptMessage,
        ),
    ];
    for (what, batch, expected) in cases {
        assert_eq!(produce(b, "t", batch), expected.code(), "{what}");
    }
    assert_eq!(
        produce(b, "t", one_record()),
        0,
        "written after the refusals"
    );

    // Both records, and nothing between them, by every reader.
    let expected = "abc\nabc\n";
    let kcat = Command::new("kcat")
        .args(["-C", "-b", b, "-t", "t", "-e", "-q"])
        .output()
        .expect("kcat is installed (apt-get install kcat)");
    assert!(kcat.status.success(), "{}", text(&kcat.stderr));
    assert_eq!(text(&kcat.stdout), expected);
    let java = java_tool(
        CONSOLE_CONSUMER,
        &[
            "--bootstrap-server",
            b,
            "--topic",
            "t",
            "--from-beginning",
            "--max-messages",
            "2",
            "--timeout-ms",
            "60000",
        ],
    );
    assert_eq!(text(&java.stdout), expected, "{}", text(&java.stderr));
    let local = k.ok(
        "kafka-console-consumer",
        &["--topic", "t", "--from-beginning", "--until-end"],
        None,
    );
    assert_eq!(local, expected);
    let offsets = k.ok("kafka-get-offsets", &["--topic", "t"], None);
    assert_eq!(offsets, "t:0:2\n", "nothing else was written");
}

#[test]
fn acks_outside_kafkas_three_and_a_zero_fetch_limit_are_answered_as_kafka_does() {
    let k = Kafkit::new();
    k.ok("kafka-topics", &["--create", "--topic", "t"], None);
    k.ok("kafka-topics", &["--create", "--topic", "z"], None);
    let server = Server::start(k.log_dir(), &[]);
    let b = server.bootstrap.as_str();
    for acks in [5, -2, 2] {
        assert_eq!(
            produce_with_acks(b, "t", one_record(), acks),
            ResponseError::InvalidRequiredAcks.code(),
            "acks={acks}"
        );
    }
    let offsets = k.ok("kafka-get-offsets", &["--topic", "t"], None);
    assert_eq!(offsets, "t:0:0\n", "nothing written");
    for acks in [-1, 1] {
        assert_eq!(
            produce_with_acks(b, "t", one_record(), acks),
            0,
            "acks={acks}"
        );
    }
    // A limit of 0 bytes still returns the first batch, so that a consumer makes progress.
    let batch = one_record().len();
    assert_eq!(fetch(b, "t", 0, 0).len(), batch);
    assert_eq!(fetch(b, "t", 1 << 20, 0).len(), batch);
    assert_eq!(fetch(b, "t", 1 << 20, 1 << 20).len(), 2 * batch);
    // A negative limit is an error, as Kafka's log read raises one (UNKNOWN_SERVER_ERROR).
    for (max_bytes, partition_max_bytes) in [(-5, 1 << 20), (1 << 20, -5)] {
        let request = fetch_request("t", max_bytes, partition_max_bytes);
        let mut answer = call(b, ApiKey::Fetch, FETCH_VERSION, &request);
        let response = FetchResponse::decode(&mut answer, FETCH_VERSION).unwrap();
        let partition = &response.responses[0].partitions[0];
        assert_eq!(
            partition.error_code,
            ResponseError::UnknownServerError.code(),
            "{max_bytes} {partition_max_bytes}"
        );
        assert!(partition.records.as_ref().is_none_or(|r| r.is_empty()));
    }
    assert!(
        server.stderr().contains("Invalid max size -5"),
        "{}",
        server.stderr()
    );
}

/// Produces sent back to back on one connection are pipelined (the next is queued while the
/// previous one's fsync runs) yet answered in order and written in order, a refused one among
/// them included, and a fetch sent after them sees all their records.
#[test]
fn pipelined_produces_are_written_and_answered_in_order() {
    let k = Kafkit::new();
    k.ok("kafka-topics", &["--create", "--topic", "p"], None);
    let server = Server::start(k.log_dir(), &[]);
    let mut stream = TcpStream::connect(&server.bootstrap).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut frames = BytesMut::new();
    for id in 1..=6 {
        // The fourth names acks Kafka refuses: it is answered in its turn, and writes nothing.
        let acks = if id == 4 { 5 } else { -1 };
        let request = produce_request("p", one_record(), acks);
        frames.extend_from_slice(&numbered_frame(
            ApiKey::Produce,
            PRODUCE_VERSION,
            &request,
            id,
        ));
    }
    let fetch = fetch_request("p", 1 << 20, 1 << 20);
    frames.extend_from_slice(&numbered_frame(ApiKey::Fetch, FETCH_VERSION, &fetch, 7));
    stream.write_all(&frames).unwrap();
    let mut next_answer = |key: ApiKey, version: i16| {
        let mut size = [0u8; 4];
        stream.read_exact(&mut size).expect("the server answers");
        let mut answer = vec![0u8; i32::from_be_bytes(size) as usize];
        stream.read_exact(&mut answer).unwrap();
        let mut answer = Bytes::from(answer);
        let header =
            ResponseHeader::decode(&mut answer, key.response_header_version(version)).unwrap();
        (header.correlation_id, answer)
    };
    let mut offsets = Vec::new();
    for id in 1..=6 {
        let (correlation_id, mut answer) = next_answer(ApiKey::Produce, PRODUCE_VERSION);
        assert_eq!(
            correlation_id, id,
            "answers come in the order of the requests"
        );
        let response = ProduceResponse::decode(&mut answer, PRODUCE_VERSION).unwrap();
        let partition = &response.responses[0].partition_responses[0];
        if id == 4 {
            assert_eq!(
                partition.error_code,
                ResponseError::InvalidRequiredAcks.code()
            );
        } else {
            assert_eq!(partition.error_code, 0, "request {id}");
            offsets.push(partition.base_offset);
        }
    }
    assert_eq!(
        offsets,
        [0, 1, 2, 3, 4],
        "written in the order they were sent"
    );
    let (correlation_id, mut answer) = next_answer(ApiKey::Fetch, FETCH_VERSION);
    assert_eq!(correlation_id, 7);
    let response = FetchResponse::decode(&mut answer, FETCH_VERSION).unwrap();
    let records = response.responses[0].partitions[0]
        .records
        .clone()
        .unwrap_or_default();
    assert_eq!(
        records.len(),
        5 * one_record().len(),
        "the fetch sees the five records written before it"
    );
}

/// librdkafka's consumer of the new protocol sends an empty SubscribedTopicRegex with its topic
/// names; Kafka takes it for no regex (issue 24, item 10). A real regex is still refused.
#[test]
fn an_empty_topic_regex_is_no_regex() {
    let k = Kafkit::new();
    k.ok("kafka-topics", &["--create", "--topic", "t"], None);
    let server = Server::start(k.log_dir(), &[]);
    let heartbeat = |regex: &'static str| {
        let request = ConsumerGroupHeartbeatRequest::default()
            .with_group_id(GroupId(StrBytes::from_static_str("g")))
            .with_member_id(StrBytes::from_static_str("Vq2KpGm9SBe0j8aT1pQfzw"))
            .with_member_epoch(0)
            .with_rebalance_timeout_ms(30_000)
            .with_subscribed_topic_names(Some(vec![TopicName(StrBytes::from_static_str("t"))]))
            .with_subscribed_topic_regex(Some(StrBytes::from_static_str(regex)))
            .with_topic_partitions(Some(Vec::new()));
        let mut answer = call(
            &server.bootstrap,
            ApiKey::ConsumerGroupHeartbeat,
            1,
            &request,
        );
        ConsumerGroupHeartbeatResponse::decode(&mut answer, 1).unwrap()
    };
    let joined = heartbeat("");
    assert_eq!(joined.error_code, 0, "{:?}", joined.error_message);
    assert!(joined.member_epoch >= 1, "{joined:?}");
    let refused = heartbeat("t.*");
    assert_eq!(refused.error_code, ResponseError::InvalidRequest.code());
}

/// An offset commit for a topic or partition that does not exist is refused, as Kafka refuses
/// it, and stored nowhere: a topic created later under that name would otherwise be read from
/// the stale offset, skipping records nobody read (issue 24, item 4).
#[test]
fn commits_for_partitions_that_do_not_exist_are_refused() {
    let k = Kafkit::new();
    k.ok("kafka-topics", &["--create", "--topic", "t"], None);
    let server = Server::start(k.log_dir(), &[]);
    let partition = |index: i32| {
        OffsetCommitRequestPartition::default()
            .with_partition_index(index)
            .with_committed_offset(1000)
    };
    let topic = |name: &'static str, partitions| {
        OffsetCommitRequestTopic::default()
            .with_name(TopicName(StrBytes::from_static_str(name)))
            .with_partitions(partitions)
    };
    // As an admin commits (generation -1, no member): the group is empty.
    let request = OffsetCommitRequest::default()
        .with_group_id(GroupId(StrBytes::from_static_str("g")))
        .with_generation_id_or_member_epoch(-1)
        .with_topics(vec![
            topic("nosuchtopic", vec![partition(0)]),
            topic("t", vec![partition(5), partition(-1), partition(0)]),
        ]);
    let mut answer = call(&server.bootstrap, ApiKey::OffsetCommit, 8, &request);
    let response = OffsetCommitResponse::decode(&mut answer, 8).unwrap();
    let codes: Vec<(String, i32, i16)> = response
        .topics
        .iter()
        .flat_map(|t| {
            t.partitions
                .iter()
                .map(|p| (t.name.0.to_string(), p.partition_index, p.error_code))
        })
        .collect();
    let unknown = ResponseError::UnknownTopicOrPartition.code();
    assert_eq!(
        codes,
        [
            ("nosuchtopic".to_string(), 0, unknown),
            ("t".to_string(), 5, unknown),
            ("t".to_string(), -1, unknown),
            ("t".to_string(), 0, 0),
        ]
    );
    assert_eq!(committed(&k, "g"), [("t".to_string(), 0, 1000)]);
}

/// The server's resident memory, from /proc.
fn rss_bytes(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .and_then(|v| v.trim().parse().ok())
        .expect("VmRSS in /proc/PID/status");
    kib * 1024
}

/// 60 clients pipeline 20 fetches of 50 MB each on a 40 MB partition and never read the
/// answers (issue 24, item 2: the server's memory grew past 1 GB and it aborted). Its memory
/// stays bounded, it serves everyone else meanwhile, and once they go a consumer reads all.
#[test]
fn clients_that_never_read_their_fetches_hold_bounded_memory() {
    use std::os::fd::AsRawFd;
    let k = Kafkit::new();
    let record = "x".repeat(999);
    let input: String = (0..40_000).map(|_| format!("{record}\n")).collect();
    k.produce("big", &[], input.as_bytes());
    let server = Server::process(k.log_dir(), &[]);
    let fetch = request_frame(
        ApiKey::Fetch,
        FETCH_VERSION,
        &fetch_request("big", 50_000_000, 50_000_000),
    );
    let mut idle = Vec::new();
    for _ in 0..60 {
        let mut stream = TcpStream::connect(&server.bootstrap).unwrap();
        let small: libc::c_int = 4096;
        // SAFETY: setsockopt on a socket we own, with a c_int as SO_RCVBUF takes.
        let set = unsafe {
            libc::setsockopt(
                stream.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVBUF,
                (&small as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        assert_eq!(set, 0);
        for _ in 0..20 {
            stream.write_all(&fetch).unwrap();
        }
        idle.push(stream);
    }
    // The server reads what the budget allows, writes until the clients' buffers are full,
    // and waits. Meanwhile it answers others, and its memory stays bounded.
    let pid = server.pid();
    let mut most = 0;
    for _ in 0..20 {
        let listed = k.ok(
            "kafka-topics",
            &["--bootstrap-server", &server.bootstrap, "--list"],
            None,
        );
        assert_eq!(listed, "big\n");
        most = most.max(rss_bytes(pid));
        std::thread::sleep(Duration::from_millis(250));
    }
    eprintln!("the server's memory reached {} MiB at most", most >> 20);
    assert!(most < 256 << 20, "the server's memory reached {most} bytes");
    drop(idle);
    // Their share of the budget is back: a consumer reads every record.
    let out = k.ok(
        "kafka-console-consumer",
        &[
            "--bootstrap-server",
            &server.bootstrap,
            "--topic",
            "big",
            "--from-beginning",
            "--max-messages",
            "40000",
            "--timeout-ms",
            "60000",
        ],
        None,
    );
    assert_eq!(out.lines().count(), 40_000);
}
