//! The `record_batch` target: the RecordBatch v2 decoder (header, CRC, every codec, records),
//! with a round trip through the encoder for every batch that decodes.
//!
//! A CRC-32C is out of a fuzzer's reach, so only the first mode feeds the bytes as they are;
//! the others write a valid length and CRC around what the fuzzer chose, to get past them.

use super::Input;
use crate::record::{
    BATCH_OVERHEAD, BatchIter, Compression, LOG_OVERHEAD, Record, decode_batch, encode_batch,
};

/// Batches whose records take more than this are not re-encoded (a decompression bomb may
/// decode to 256 MiB; encoding it again would only slow the fuzzer down).
const ROUND_TRIP_LIMIT: usize = 1 << 20;

/// First byte: the mode.
/// - 0: the rest as concatenated batches, as a segment or a Fetch response holds them;
/// - 1: the rest as one batch whose length field, magic and CRC are made valid;
/// - 2: codec, header fields, then a records section handed to the decompressor as it is;
/// - 3: codec, header fields, then an uncompressed records section that is compressed with
///   the codec first, so that the record parser runs behind every decompressor.
pub fn record_batch(data: &[u8]) {
    if let Some(bytes) = batches(data) {
        decode_all(&bytes);
    }
}

/// The `produce_batches` target: a Produce request's records as the server checks them before
/// it stores them (the same four modes as [`record_batch`]). Whatever the server accepts, the
/// consumer's reader must read whole: one stored batch it cannot read poisons the partition.
pub fn produce_batches(data: &[u8]) {
    let Some(bytes) = batches(data) else { return };
    let Ok(headers) = crate::server::handlers::produce::check_batches(&bytes, 1 << 20, Some("t-0"))
    else {
        return;
    };
    let mut pos = 0;
    for header in headers {
        let batch = &bytes[pos..pos + header.total_size()];
        let (_, records) = decode_batch(batch).expect("an accepted batch decodes");
        assert_eq!(records.len(), header.records_count as usize);
        for (i, record) in records.iter().enumerate() {
            assert_eq!(record.offset, header.base_offset + i as i64);
        }
        pos += header.total_size();
    }
    assert_eq!(pos, bytes.len(), "every byte accepted is in a batch");
}

/// The bytes the first byte's mode makes of the input (see [`record_batch`]); `None` when the
/// codec cannot compress the section.
fn batches(data: &[u8]) -> Option<Vec<u8>> {
    let mut input = Input::new(data);
    Some(match input.byte() % 4 {
        0 => input.rest().to_vec(),
        1 => fix_frame(input.rest()),
        mode => {
            let codec = Compression::ALL[input.byte() as usize % Compression::ALL.len()];
            let header = Header::read(&mut input, codec);
            let section = input.rest();
            let body = if mode == 2 {
                section.to_vec()
            } else {
                codec.compress(section).ok()?
            };
            header.wrap(&body)
        }
    })
}

/// Splits `bytes` into batches and decodes each one; every batch that decodes must survive a
/// round trip through the encoder.
fn decode_all(bytes: &[u8]) {
    for batch in BatchIter::new(bytes) {
        let Ok(batch) = batch else { return };
        let Ok((header, records)) = decode_batch(batch) else {
            continue;
        };
        assert_eq!(records.len(), header.records_count as usize);
        let codec = header
            .compression()
            .expect("a decoded batch has a known codec");
        round_trip(header.base_offset, &records, codec);
    }
}

/// Encodes `records` again and decodes the result: the same records, at consecutive offsets.
fn round_trip(base_offset: i64, records: &[Record], codec: Compression) {
    let size: usize = records
        .iter()
        .map(|r| {
            let headers: usize = r
                .headers
                .iter()
                .map(|h| h.key.len() + h.value.as_ref().map_or(0, Vec::len))
                .sum();
            r.key.as_ref().map_or(0, Vec::len) + r.value.as_ref().map_or(0, Vec::len) + headers
        })
        .sum();
    if size > ROUND_TRIP_LIMIT {
        return;
    }
    let bytes = encode_batch(base_offset, records, codec).expect("decoded records encode again");
    let (header, again) = decode_batch(&bytes).expect("an encoded batch decodes");
    assert_eq!(header.records_count as usize, records.len());
    assert_eq!(again.len(), records.len());
    for (i, (a, b)) in records.iter().zip(&again).enumerate() {
        assert_eq!(b.offset, base_offset.wrapping_add(i as i64));
        assert_eq!(
            (&a.key, &a.value, &a.headers, a.timestamp),
            (&b.key, &b.value, &b.headers, b.timestamp)
        );
    }
}

/// One batch with a valid length field, magic and CRC (bytes too short for a header are
/// returned as they are).
fn fix_frame(bytes: &[u8]) -> Vec<u8> {
    let mut batch = bytes.to_vec();
    if batch.len() < BATCH_OVERHEAD {
        return batch;
    }
    let length = i32::try_from(batch.len() - LOG_OVERHEAD).unwrap_or(i32::MAX);
    batch[8..12].copy_from_slice(&length.to_be_bytes());
    batch[16] = 2;
    set_crc(&mut batch);
    batch
}

fn set_crc(batch: &mut [u8]) {
    let crc = crc32c::crc32c(&batch[21..]);
    batch[17..21].copy_from_slice(&crc.to_be_bytes());
}

/// The header fields the fuzzer picks in modes 2 and 3.
struct Header {
    attributes: i16,
    base_offset: i64,
    last_offset_delta: i32,
    base_timestamp: i64,
    max_timestamp: i64,
    producer_id: i64,
    records_count: i32,
}

impl Header {
    /// The codec bits come from `codec`; the other attribute bits (timestamp type,
    /// transactional, control) from the input.
    fn read(input: &mut Input<'_>, codec: Compression) -> Header {
        Header {
            attributes: (input.i16() & !0x07) | codec.id(),
            base_offset: input.i64(),
            last_offset_delta: input.i32(),
            base_timestamp: input.i64(),
            max_timestamp: input.i64(),
            producer_id: input.i64(),
            records_count: input.i32(),
        }
    }

    fn wrap(&self, body: &[u8]) -> Vec<u8> {
        let mut b = Vec::with_capacity(BATCH_OVERHEAD + body.len());
        let length = i32::try_from(BATCH_OVERHEAD - LOG_OVERHEAD + body.len()).unwrap_or(i32::MAX);
        b.extend_from_slice(&self.base_offset.to_be_bytes());
        b.extend_from_slice(&length.to_be_bytes());
        b.extend_from_slice(&0i32.to_be_bytes()); // partition leader epoch
        b.push(2); // magic
        b.extend_from_slice(&[0; 4]); // CRC, set below
        b.extend_from_slice(&self.attributes.to_be_bytes());
        b.extend_from_slice(&self.last_offset_delta.to_be_bytes());
        b.extend_from_slice(&self.base_timestamp.to_be_bytes());
        b.extend_from_slice(&self.max_timestamp.to_be_bytes());
        b.extend_from_slice(&self.producer_id.to_be_bytes());
        b.extend_from_slice(&0i16.to_be_bytes()); // producer epoch
        b.extend_from_slice(&0i32.to_be_bytes()); // base sequence
        b.extend_from_slice(&self.records_count.to_be_bytes());
        b.extend_from_slice(body);
        set_crc(&mut b);
        b
    }
}
