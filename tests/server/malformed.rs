//! Malformed record batches sent in Produce requests over a raw socket: each is refused with
//! Kafka's error code, nothing of it is written, and the partition stays readable by kcat, the
//! Java consumer and `--log-dir` (one stored batch that no reader can parse would hide every
//! record after it).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::Duration;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::ResponseError;
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::{ApiKey, ProduceRequest, ProduceResponse, RequestHeader};
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
use kafkit::record::{BatchBuilder, Compression};

use crate::common::broker::{CONSOLE_CONSUMER, java_tool};
use crate::common::server::Server;
use crate::common::{Kafkit, text};

const PRODUCE_VERSION: i16 = 3;

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
    let request = ProduceRequest::default()
        .with_acks(1)
        .with_timeout_ms(30_000)
        .with_topic_data(vec![
            TopicProduceData::default()
                .with_name(StrBytes::from_string(topic.to_string()).into())
                .with_partition_data(vec![
                    PartitionProduceData::default()
                        .with_index(0)
                        .with_records(Some(Bytes::from(records))),
                ]),
        ]);
    let header = RequestHeader::default()
        .with_request_api_key(ApiKey::Produce as i16)
        .with_request_api_version(PRODUCE_VERSION)
        .with_correlation_id(7)
        .with_client_id(Some(StrBytes::from_static_str("malformed")));
    let mut body = BytesMut::new();
    header
        .encode(
            &mut body,
            ApiKey::Produce.request_header_version(PRODUCE_VERSION),
        )
        .unwrap();
    request.encode(&mut body, PRODUCE_VERSION).unwrap();
    let mut frame = BytesMut::new();
    frame.put_i32(body.len() as i32);
    frame.extend_from_slice(&body);

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
    assert_eq!(answer.get_i32(), 7, "correlation id");
    let response = ProduceResponse::decode(&mut answer, PRODUCE_VERSION).unwrap();
    response.responses[0].partition_responses[0].error_code
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
