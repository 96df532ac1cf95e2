//! Golden vectors: RecordBatch bytes from Kafka's reference encoder, in every codec, and the
//! murmur2 key-to-partition table.

use kafkit::record::{
    BatchBuilder, BatchHeader, BatchIter, Compression, decode_batch, set_partition_leader_epoch,
    verify_crc,
};
use serde_json::Value;

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn vectors(name: &str) -> Value {
    let path = format!("{}/tests/vectors/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn opt_hex(v: &Value) -> Option<Vec<u8>> {
    v.as_str().map(unhex)
}

#[test]
fn small_golden_batch_from_log_format_reference() {
    let expected = unhex(concat!(
        "0000000000000000000000420000000002af2b6054000000000001",
        "0000018bcfe568000000018bcfe56800ffffffffffffffffffffffffffff00000002",
        "0e00000001026100100000020104626300"
    ));
    let mut b = BatchBuilder::new(Compression::None);
    b.append(1_700_000_000_000, None, Some(b"a"), &[]);
    b.append(1_700_000_000_000, None, Some(b"bc"), &[]);
    let mut got = b.build(0).unwrap();
    set_partition_leader_epoch(&mut got, 0);
    assert_eq!(got.len(), 78);
    assert_eq!(got, expected);
    assert_eq!(crc32c::crc32c(b"123456789"), 0xE306_9283);
    assert_eq!(crc32c::crc32c(b"Hello world!"), 0x7B98_E751);
}

#[test]
fn canonical_batch_is_byte_identical_and_every_codec_decodes() {
    let v = vectors("record-batches.json");
    let records = v["records"].as_array().unwrap();
    let batches = v["batches"].as_array().unwrap();
    assert_eq!(batches.len(), 5);
    for batch in batches {
        let bytes = unhex(batch["batch_hex"].as_str().unwrap());
        let codec = Compression::from_name(batch["codec"].as_str().unwrap()).unwrap();
        verify_crc(&bytes).unwrap();
        let header = BatchHeader::parse(&bytes).unwrap();
        assert_eq!(header.compression().unwrap(), codec);
        let (_, decoded) = decode_batch(&bytes).unwrap();
        assert_eq!(decoded.len(), records.len(), "{codec:?}");
        for (got, want) in decoded.iter().zip(records) {
            assert_eq!(got.offset, want["offset"].as_i64().unwrap());
            assert_eq!(got.timestamp, want["timestamp"].as_i64().unwrap());
            assert_eq!(got.key, opt_hex(&want["key_hex"]), "{codec:?}");
            assert_eq!(got.value, opt_hex(&want["value_hex"]), "{codec:?}");
            let want_headers: Vec<(String, Option<Vec<u8>>)> = want["headers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|h| (h[0].as_str().unwrap().to_string(), opt_hex(&h[1])))
                .collect();
            let got_headers: Vec<(String, Option<Vec<u8>>)> = got
                .headers
                .iter()
                .map(|h| (h.key.clone(), h.value.clone()))
                .collect();
            assert_eq!(got_headers, want_headers);
        }
        // Re-encoding with our codec reads back the same records.
        let again = kafkit::record::encode_batch(0, &decoded, codec).unwrap();
        assert_eq!(decode_batch(&again).unwrap().1, decoded);
        if batch["canonical_bytes"].as_bool().unwrap() {
            let mut ours = again.clone();
            set_partition_leader_epoch(&mut ours, 0);
            assert_eq!(ours, bytes, "uncompressed encoding must be byte-exact");
        }
    }
}

#[test]
fn batch_iter_stops_at_a_torn_tail() {
    let v = vectors("record-batches.json");
    let one = unhex(v["batches"][0]["batch_hex"].as_str().unwrap());
    let mut two = one.clone();
    two.extend_from_slice(&one);
    for cut in one.len()..two.len() {
        let mut it = BatchIter::new(&two[..cut]);
        assert!(it.next().unwrap().is_ok());
        assert!(it.next().is_none(), "cut at {cut}");
        assert_eq!(it.position(), one.len());
    }
}

#[test]
fn murmur2_partitions_match_java() {
    let v = vectors("murmur2-partitions.json");
    for case in v["vectors"].as_array().unwrap() {
        let key = unhex(case["key_hex"].as_str().unwrap());
        assert_eq!(
            kafkit::partitioner::murmur2(&key),
            case["murmur2_java_int"].as_i64().unwrap() as i32
        );
        for (n, p) in case["partition"].as_object().unwrap() {
            let n: u32 = n.parse().unwrap();
            assert_eq!(
                kafkit::partitioner::partition_for_key(&key, n),
                p.as_u64().unwrap() as u32
            );
        }
    }
}
