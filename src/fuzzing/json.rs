//! The `json_input` target: the producer's `--input json` lines, split as the producer splits
//! its input. A record that parses must survive what follows: written back in the consumer's
//! `--output json` format it reads back the same, and in a record batch it decodes the same.

use crate::cli::json::{JsonRecord, parse_record, write_record};
use crate::record::{BatchBuilder, Compression, RecordRef, TimestampType, decode_batch};

/// The input is the producer's stdin: lines split on `\n`, a `\r` before it dropped.
pub fn json_input(data: &[u8]) {
    for line in data.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if let Ok(r) = parse_record(line) {
            round_trip(&r);
        }
    }
}

fn round_trip(r: &JsonRecord) {
    let headers: Vec<(&str, Option<&[u8]>)> = r
        .headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_deref()))
        .collect();
    let timestamp = r.timestamp.unwrap_or(0);
    let record = RecordRef {
        offset: 0,
        timestamp,
        key: r.key.as_deref(),
        value: r.value.as_deref(),
        headers: headers.clone(),
    };
    // The consumer writes i32 partitions; a larger one is refused by the producer anyway.
    let partition = r.partition.and_then(|p| i32::try_from(p).ok());
    let mut line = Vec::new();
    write_record(
        "t",
        partition.unwrap_or(0),
        TimestampType::CreateTime,
        &record,
        &mut line,
    );
    assert_eq!(line.pop(), Some(b'\n'));
    let back = parse_record(&line).expect("a written record reads back");
    assert_eq!(
        (&back.key, &back.value, &back.headers),
        (&r.key, &r.value, &r.headers)
    );
    assert_eq!(back.timestamp, Some(timestamp));
    if partition.is_some() {
        assert_eq!(back.partition, r.partition);
    }

    let mut builder = BatchBuilder::new(Compression::None);
    builder.append(timestamp, r.key.as_deref(), r.value.as_deref(), &headers);
    let batch = builder.build(0).expect("one record builds");
    let (_, decoded) = decode_batch(&batch).expect("a built batch decodes");
    let d = &decoded[0];
    assert_eq!(
        (&d.key, &d.value, d.timestamp),
        (&r.key, &r.value, timestamp)
    );
    let decoded_headers: Vec<(&str, Option<&[u8]>)> = d
        .headers
        .iter()
        .map(|h| (h.key.as_str(), h.value.as_deref()))
        .collect();
    assert_eq!(decoded_headers, headers);
}
