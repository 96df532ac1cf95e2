//! RecordBatch v2: header parsing, CRC-32C, building and decoding (Kafka's `DefaultRecordBatch`).
//!
//! All integers in the header are big-endian; records inside use zigzag varints. The CRC covers
//! bytes 21 to the end, so the base offset (0..8) and partition leader epoch (12..16) can be
//! patched after a batch is built without recomputing it.

use super::reader::{RecordReader, RecordSource};
use super::varint::{put_varint, put_varlong, varlong_size};
use super::{Compression, Header, Record, RecordError, TimestampType};

/// Bytes before the records: the batch header.
pub const BATCH_OVERHEAD: usize = 61;
/// Base offset plus length: the bytes not counted by the length field.
pub const LOG_OVERHEAD: usize = 12;
/// The smallest legal length field (Kafka's `RECORD_OVERHEAD_V0`).
const MIN_LENGTH_FIELD: i32 = 14;
const CRC_OFFSET: usize = 17;
const ATTRIBUTES_OFFSET: usize = 21;
const MAX_TIMESTAMP_OFFSET: usize = 35;
const MAGIC: i8 = 2;
/// Upper bound for a decompressed records section: a few KB of a hostile batch must not make
/// a reader allocate gigabytes.
pub const MAX_DECOMPRESSED: usize = 256 * 1024 * 1024;

const COMPRESSION_BITS: i16 = 0x07;
pub(super) const TIMESTAMP_TYPE_BIT: i16 = 0x08;
pub(super) const TRANSACTIONAL_BIT: i16 = 0x10;
pub(super) const CONTROL_BIT: i16 = 0x20;
pub(super) const DELETE_HORIZON_BIT: i16 = 0x40;

/// The fixed 61-byte header of a batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchHeader {
    pub base_offset: i64,
    pub length: i32,
    pub partition_leader_epoch: i32,
    pub magic: i8,
    pub crc: u32,
    pub attributes: i16,
    pub last_offset_delta: i32,
    pub base_timestamp: i64,
    pub max_timestamp: i64,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub base_sequence: i32,
    pub records_count: i32,
}

/// The producer sequence number after `seq` (wrapping from `i32::MAX` to 0, as Kafka's).
pub fn next_sequence(seq: i32) -> i32 {
    if seq == i32::MAX { 0 } else { seq + 1 }
}

/// Big-endian integers at `at` in a buffer known to hold them (Kafka's byte order); shared by
/// every reader of Kafka's file and wire layouts.
pub(crate) fn be_i64(b: &[u8], at: usize) -> i64 {
    i64::from_be_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}
pub(crate) fn be_i32(b: &[u8], at: usize) -> i32 {
    i32::from_be_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}
pub(crate) fn be_i16(b: &[u8], at: usize) -> i16 {
    i16::from_be_bytes(b[at..at + 2].try_into().expect("2 bytes"))
}

impl BatchHeader {
    /// Parses the header at the start of `buf`, checking magic and the length field.
    pub fn parse(buf: &[u8]) -> Result<BatchHeader, RecordError> {
        let Some(head) = buf.first_chunk::<BATCH_OVERHEAD>() else {
            return Err(RecordError::Truncated {
                needed: BATCH_OVERHEAD,
                available: buf.len(),
            });
        };
        let length = be_i32(buf, 8);
        if length < (BATCH_OVERHEAD - LOG_OVERHEAD) as i32 {
            return Err(RecordError::InvalidSize(length as i64));
        }
        let magic = buf[16] as i8;
        if magic != MAGIC {
            return Err(RecordError::UnsupportedMagic(magic));
        }
        // The offset after the batch must exist, so that `last_offset` and `next_offset`
        // cannot overflow (found by fuzzing: batches near i64::MAX from a broker or a file).
        let (base_offset, last_offset_delta) = (be_i64(buf, 0), be_i32(buf, 23));
        if base_offset
            .checked_add(i64::from(last_offset_delta) + 1)
            .is_none()
        {
            return Err(RecordError::Corrupt(format!(
                "base offset {base_offset} plus last offset delta {last_offset_delta} overflows"
            )));
        }
        Ok(BatchHeader::read(head))
    }

    /// The header fields as they are, checking nothing: for tools that show damaged batches
    /// as Kafka's do. [`BatchHeader::last_offset`], [`BatchHeader::next_offset`] and
    /// [`BatchHeader::total_size`] assume a header [`BatchHeader::parse`] accepted.
    pub fn read(buf: &[u8; BATCH_OVERHEAD]) -> BatchHeader {
        BatchHeader {
            base_offset: be_i64(buf, 0),
            length: be_i32(buf, 8),
            partition_leader_epoch: be_i32(buf, 12),
            magic: buf[16] as i8,
            crc: be_i32(buf, CRC_OFFSET) as u32,
            attributes: be_i16(buf, ATTRIBUTES_OFFSET),
            last_offset_delta: be_i32(buf, 23),
            base_timestamp: be_i64(buf, 27),
            max_timestamp: be_i64(buf, MAX_TIMESTAMP_OFFSET),
            producer_id: be_i64(buf, 43),
            producer_epoch: be_i16(buf, 51),
            base_sequence: be_i32(buf, 53),
            records_count: be_i32(buf, 57),
        }
    }

    /// The whole batch's size in bytes, header included.
    pub fn total_size(&self) -> usize {
        LOG_OVERHEAD + self.length as usize
    }

    /// The offset of the batch's last record.
    pub fn last_offset(&self) -> i64 {
        self.base_offset + self.last_offset_delta as i64
    }

    /// The offset after this batch.
    pub fn next_offset(&self) -> i64 {
        self.last_offset() + 1
    }

    /// The producer sequence number of the batch's last record (sequences wrap from
    /// `i32::MAX` to 0, as Kafka's).
    pub fn last_sequence(&self) -> i32 {
        ((i64::from(self.base_sequence) + i64::from(self.last_offset_delta))
            % (i64::from(i32::MAX) + 1)) as i32
    }

    pub fn compression(&self) -> Result<Compression, RecordError> {
        Compression::from_id(self.attributes & COMPRESSION_BITS)
    }

    pub fn timestamp_type(&self) -> TimestampType {
        if self.attributes & TIMESTAMP_TYPE_BIT != 0 {
            TimestampType::LogAppendTime
        } else {
            TimestampType::CreateTime
        }
    }

    pub fn is_transactional(&self) -> bool {
        self.attributes & TRANSACTIONAL_BIT != 0
    }

    pub fn is_control(&self) -> bool {
        self.attributes & CONTROL_BIT != 0
    }

    /// Whether the base timestamp is a delete horizon (compacted batches, KIP-534).
    pub fn has_delete_horizon(&self) -> bool {
        self.attributes & DELETE_HORIZON_BIT != 0
    }
}

/// Checks the CRC-32C of a whole batch (`batch` holds exactly one batch).
pub fn verify_crc(batch: &[u8]) -> Result<(), RecordError> {
    if batch.len() < BATCH_OVERHEAD {
        return Err(RecordError::Truncated {
            needed: BATCH_OVERHEAD,
            available: batch.len(),
        });
    }
    let stored = be_i32(batch, CRC_OFFSET) as u32;
    let computed = crc32c::crc32c(&batch[ATTRIBUTES_OFFSET..]);
    if stored != computed {
        return Err(RecordError::CrcMismatch { stored, computed });
    }
    Ok(())
}

/// Writes a batch's base offset (not covered by the CRC).
pub fn set_base_offset(batch: &mut [u8], base_offset: i64) {
    batch[0..8].copy_from_slice(&base_offset.to_be_bytes());
}

/// Writes a batch's partition leader epoch (not covered by the CRC).
pub fn set_partition_leader_epoch(batch: &mut [u8], epoch: i32) {
    batch[12..16].copy_from_slice(&epoch.to_be_bytes());
}

/// Stamps a batch with the broker's append time, as Kafka does on a topic whose
/// `message.timestamp.type` is `LogAppendTime`: the timestamp-type attribute set and `now` as
/// the max timestamp, which readers then give every record; the records themselves are left as
/// they are. The CRC is computed again (both fields are covered by it). `batch` holds exactly
/// one whole batch.
pub fn set_log_append_time(batch: &mut [u8], now: i64) {
    let attributes = i16::from_be_bytes([batch[ATTRIBUTES_OFFSET], batch[ATTRIBUTES_OFFSET + 1]]);
    batch[ATTRIBUTES_OFFSET..ATTRIBUTES_OFFSET + 2]
        .copy_from_slice(&(attributes | TIMESTAMP_TYPE_BIT).to_be_bytes());
    batch[MAX_TIMESTAMP_OFFSET..MAX_TIMESTAMP_OFFSET + 8].copy_from_slice(&now.to_be_bytes());
    let crc = crc32c::crc32c(&batch[ATTRIBUTES_OFFSET..]);
    batch[CRC_OFFSET..CRC_OFFSET + 4].copy_from_slice(&crc.to_be_bytes());
}

/// Splits concatenated batches (a segment file or a fetch response) into whole batches.
///
/// Stops (returns `None`) at a truncated tail, as Kafka's `FileLogInputStream` does; a length
/// field below the legal minimum is an error.
pub struct BatchIter<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> BatchIter<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        BatchIter { buf, pos: 0 }
    }

    /// Bytes consumed so far: the end of the last whole batch returned.
    pub fn position(&self) -> usize {
        self.pos
    }
}

impl<'a> Iterator for BatchIter<'a> {
    type Item = Result<&'a [u8], RecordError>;

    fn next(&mut self) -> Option<Self::Item> {
        let rest = &self.buf[self.pos..];
        if rest.len() < CRC_OFFSET {
            return None;
        }
        let length = be_i32(rest, 8);
        if length < MIN_LENGTH_FIELD {
            self.pos = self.buf.len();
            return Some(Err(RecordError::InvalidSize(length as i64)));
        }
        let size = LOG_OVERHEAD + length as usize;
        if rest.len() < size {
            return None;
        }
        self.pos += size;
        Some(Ok(&rest[..size]))
    }
}

/// A record borrowed from a decoded batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordRef<'a> {
    pub offset: i64,
    pub timestamp: i64,
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
    pub headers: Vec<(&'a str, Option<&'a [u8]>)>,
}

impl RecordRef<'_> {
    pub fn to_owned_record(&self) -> Record {
        Record {
            offset: self.offset,
            timestamp: self.timestamp,
            key: self.key.map(<[u8]>::to_vec),
            value: self.value.map(<[u8]>::to_vec),
            headers: self
                .headers
                .iter()
                .map(|(k, v)| Header {
                    key: (*k).to_string(),
                    value: v.map(<[u8]>::to_vec),
                })
                .collect(),
        }
    }
}

/// Calls `f` for every record of one whole batch, after checking its CRC.
///
/// `scratch` holds decompressed records, so the borrowed records live only for the call.
pub fn for_each_record<F>(
    batch: &[u8],
    scratch: &mut Vec<u8>,
    f: F,
) -> Result<BatchHeader, RecordError>
where
    F: FnMut(RecordRef<'_>) -> Result<(), RecordError>,
{
    for_each_record_crc(batch, scratch, true, f)
}

/// [`for_each_record`], checking the CRC only when `check_crc`: a batch whose CRC its reader
/// has just checked (the embedded log checks every batch it reads) is not summed twice.
/// Everything else (framing, lengths, counts) is always checked.
pub fn for_each_record_crc<F>(
    batch: &[u8],
    scratch: &mut Vec<u8>,
    check_crc: bool,
    mut f: F,
) -> Result<BatchHeader, RecordError>
where
    F: FnMut(RecordRef<'_>) -> Result<(), RecordError>,
{
    let header = BatchHeader::parse(batch)?;
    if batch.len() < header.total_size() {
        return Err(RecordError::Truncated {
            needed: header.total_size(),
            available: batch.len(),
        });
    }
    let batch = &batch[..header.total_size()];
    if check_crc {
        verify_crc(batch)?;
    }
    let body = &batch[BATCH_OVERHEAD..];
    let codec = header.compression()?;
    let records: &[u8] = if codec == Compression::None {
        body
    } else {
        *scratch = codec.decompress(body, MAX_DECOMPRESSED)?;
        scratch
    };
    if header.records_count < 0 || header.records_count as usize > records.len() {
        return Err(RecordError::Corrupt(format!(
            "batch claims {} records in {} bytes",
            header.records_count,
            records.len()
        )));
    }
    let source = if codec == Compression::None {
        RecordSource::Batch
    } else {
        RecordSource::Decompressed
    };
    let mut reader = RecordReader::new(records, header.records_count, header.magic, source)?;
    loop {
        let raw = match reader.next_plain() {
            Some(raw) => raw,
            None => match reader.next_record()? {
                Some(raw) => raw,
                None => break,
            },
        };
        // Kafka decodes header keys leniently; the API hands them out as `&str`. One
        // allocation for a record with headers, none without.
        let mut headers = Vec::with_capacity(raw.headers.len());
        for (k, v) in raw.headers.iter() {
            let k = std::str::from_utf8(k)
                .map_err(|_| RecordError::Corrupt("header key is not UTF-8".into()))?;
            headers.push((k, v));
        }
        let timestamp = if header.timestamp_type() == TimestampType::LogAppendTime {
            header.max_timestamp
        } else {
            header.base_timestamp.wrapping_add(raw.timestamp_delta)
        };
        // As for the batch, the offset after the record must exist.
        let offset_delta = raw.offset_delta;
        let offset = header
            .base_offset
            .checked_add(i64::from(offset_delta) + 1)
            .map(|next| next - 1)
            .ok_or_else(|| {
                RecordError::Corrupt(format!(
                    "offset delta {offset_delta} overflows base offset {}",
                    header.base_offset
                ))
            })?;
        f(RecordRef {
            offset,
            timestamp,
            key: raw.key,
            value: raw.value,
            headers,
        })?;
    }
    Ok(header)
}

/// Decodes one whole batch into owned records, after checking its CRC.
pub fn decode_batch(batch: &[u8]) -> Result<(BatchHeader, Vec<Record>), RecordError> {
    let mut scratch = Vec::new();
    let mut out = Vec::new();
    let header = for_each_record(batch, &mut scratch, |r| {
        out.push(r.to_owned_record());
        Ok(())
    })?;
    Ok((header, out))
}

/// Builds one batch incrementally, without an allocation per record.
#[derive(Debug)]
pub struct BatchBuilder {
    compression: Compression,
    producer_id: i64,
    producer_epoch: i16,
    base_sequence: i32,
    transactional: bool,
    records: Vec<u8>,
    count: i32,
    base_timestamp: i64,
    max_timestamp: i64,
}

/// A record's size as the first of a batch, from [`BatchBuilder::record_size`].
#[derive(Clone, Copy, Debug)]
pub struct RecordSize {
    /// Bytes of the body (all but the leading length) with both deltas zero.
    first_body: usize,
}

impl RecordSize {
    /// Bytes the record takes as the first of a batch, its length included.
    pub fn bytes(self) -> usize {
        varlong_size(self.first_body as i64) + self.first_body
    }
}

/// Bytes of a record's body (all but its leading length), given its timestamp and offset
/// deltas.
#[inline]
fn body_size(
    timestamp_delta: i64,
    offset_delta: i32,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    headers: &[(&str, Option<&[u8]>)],
) -> usize {
    let bytes_size = |b: Option<&[u8]>| match b {
        None => 1,
        Some(b) => varlong_size(b.len() as i64) + b.len(),
    };
    let mut size = 1
        + varlong_size(timestamp_delta)
        + varlong_size(offset_delta as i64)
        + bytes_size(key)
        + bytes_size(value)
        + varlong_size(headers.len() as i64);
    for (k, v) in headers {
        size += bytes_size(Some(k.as_bytes())) + bytes_size(*v);
    }
    size
}

/// Appends one record whose body is `body` bytes long (see [`body_size`]) to `buf`.
#[inline]
fn put_record(
    buf: &mut Vec<u8>,
    body: usize,
    timestamp_delta: i64,
    offset_delta: i32,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    headers: &[(&str, Option<&[u8]>)],
) {
    let put_bytes = |buf: &mut Vec<u8>, b: Option<&[u8]>| match b {
        None => put_varint(buf, -1),
        Some(b) => {
            put_varint(buf, b.len() as i32);
            buf.extend_from_slice(b);
        }
    };
    buf.reserve(varlong_size(body as i64) + body);
    put_varint(buf, body as i32);
    buf.push(0);
    put_varlong(buf, timestamp_delta);
    put_varint(buf, offset_delta);
    put_bytes(buf, key);
    put_bytes(buf, value);
    put_varint(buf, headers.len() as i32);
    for (k, v) in headers {
        put_bytes(buf, Some(k.as_bytes()));
        put_bytes(buf, *v);
    }
}

/// Appends a record with the given deltas to `buf`: for batches whose offsets have gaps (a
/// cleaned batch keeps each record's own offset).
pub(super) fn put_record_at(
    buf: &mut Vec<u8>,
    timestamp_delta: i64,
    offset_delta: i32,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    headers: &[(&str, Option<&[u8]>)],
) {
    let body = body_size(timestamp_delta, offset_delta, key, value, headers);
    put_record(
        buf,
        body,
        timestamp_delta,
        offset_delta,
        key,
        value,
        headers,
    );
}

/// Appends a whole batch to `out`: `header`'s fields (its length, CRC and record count aside)
/// with `count` records in `body` (compressed as the attributes say), the CRC computed.
pub(super) fn put_batch(out: &mut Vec<u8>, header: &BatchHeader, count: i32, body: &[u8]) {
    let start = out.len();
    let length = (BATCH_OVERHEAD - LOG_OVERHEAD + body.len()) as i32;
    out.reserve(BATCH_OVERHEAD + body.len());
    out.extend_from_slice(&header.base_offset.to_be_bytes());
    out.extend_from_slice(&length.to_be_bytes());
    out.extend_from_slice(&header.partition_leader_epoch.to_be_bytes());
    out.push(MAGIC as u8);
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&header.attributes.to_be_bytes());
    out.extend_from_slice(&header.last_offset_delta.to_be_bytes());
    out.extend_from_slice(&header.base_timestamp.to_be_bytes());
    out.extend_from_slice(&header.max_timestamp.to_be_bytes());
    out.extend_from_slice(&header.producer_id.to_be_bytes());
    out.extend_from_slice(&header.producer_epoch.to_be_bytes());
    out.extend_from_slice(&header.base_sequence.to_be_bytes());
    out.extend_from_slice(&count.to_be_bytes());
    out.extend_from_slice(body);
    let crc = crc32c::crc32c(&out[start + ATTRIBUTES_OFFSET..]);
    out[start + CRC_OFFSET..start + CRC_OFFSET + 4].copy_from_slice(&crc.to_be_bytes());
}

impl BatchBuilder {
    pub fn new(compression: Compression) -> Self {
        BatchBuilder {
            compression,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            transactional: false,
            records: Vec::new(),
            count: 0,
            base_timestamp: -1,
            max_timestamp: -1,
        }
    }

    /// Sets the idempotent-producer fields of the next batches.
    pub fn set_producer(&mut self, producer_id: i64, epoch: i16, base_sequence: i32) {
        self.producer_id = producer_id;
        self.producer_epoch = epoch;
        self.base_sequence = base_sequence;
    }

    pub fn set_transactional(&mut self, transactional: bool) {
        self.transactional = transactional;
    }

    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// Records appended since the last build.
    pub fn len(&self) -> usize {
        self.count as usize
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Uncompressed size of the batch built so far.
    pub fn size(&self) -> usize {
        BATCH_OVERHEAD + self.records.len()
    }

    /// Uncompressed bytes a record adds as the first of a batch (a later one may take a few
    /// bytes more, for its timestamp and offset deltas): the size the producer's checks and
    /// partitioner go by, as Kafka's do. Pass it on to [`BatchBuilder::append_sized`].
    pub fn record_size(
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        headers: &[(&str, Option<&[u8]>)],
    ) -> RecordSize {
        RecordSize {
            first_body: body_size(0, 0, key, value, headers),
        }
    }

    /// Appends one record with a CreateTime timestamp.
    pub fn append(
        &mut self,
        timestamp: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        headers: &[(&str, Option<&[u8]>)],
    ) {
        let size = Self::record_size(key, value, headers);
        self.append_sized(size, timestamp, key, value, headers);
    }

    /// [`BatchBuilder::append`] of a record whose [`BatchBuilder::record_size`] is known.
    #[inline]
    pub fn append_sized(
        &mut self,
        size: RecordSize,
        timestamp: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        headers: &[(&str, Option<&[u8]>)],
    ) {
        if self.count == 0 {
            self.base_timestamp = timestamp;
            self.max_timestamp = timestamp;
        }
        self.max_timestamp = self.max_timestamp.max(timestamp);
        let timestamp_delta = timestamp.wrapping_sub(self.base_timestamp);
        // The first record's deltas take one byte each.
        let body =
            size.first_body - 2 + varlong_size(timestamp_delta) + varlong_size(self.count as i64);
        put_record(
            &mut self.records,
            body,
            timestamp_delta,
            self.count,
            key,
            value,
            headers,
        );
        self.count += 1;
    }

    /// Appends the finished batch (with `base_offset`) to `out` and empties the builder.
    ///
    /// The partition leader epoch is written as -1 (unknown), as producers do.
    pub fn build_into(&mut self, base_offset: i64, out: &mut Vec<u8>) -> Result<(), RecordError> {
        let compressed;
        let body: &[u8] = if self.compression == Compression::None {
            &self.records
        } else {
            compressed = self.compression.compress(&self.records)?;
            &compressed
        };
        let mut attributes = self.compression.id();
        if self.transactional {
            attributes |= TRANSACTIONAL_BIT;
        }
        let header = BatchHeader {
            base_offset,
            length: 0,
            // Unknown, as producers write it.
            partition_leader_epoch: -1,
            magic: MAGIC,
            crc: 0,
            attributes,
            last_offset_delta: (self.count - 1).max(0),
            base_timestamp: self.base_timestamp,
            max_timestamp: self.max_timestamp,
            producer_id: self.producer_id,
            producer_epoch: self.producer_epoch,
            base_sequence: self.base_sequence,
            records_count: self.count,
        };
        put_batch(out, &header, self.count, body);
        if self.base_sequence >= 0 {
            self.base_sequence = self.base_sequence.wrapping_add(self.count) & i32::MAX;
        }
        self.records.clear();
        self.count = 0;
        self.base_timestamp = -1;
        self.max_timestamp = -1;
        Ok(())
    }

    /// Builds the batch into a new buffer.
    pub fn build(&mut self, base_offset: i64) -> Result<Vec<u8>, RecordError> {
        let mut out = Vec::new();
        self.build_into(base_offset, &mut out)?;
        Ok(out)
    }
}

/// A transaction marker as Kafka writes it: its own batch, transactional and control,
/// uncompressed, with the producer's id and epoch, base sequence -1 and one record whose key
/// is int16 version 0, int16 `kind` (0 ABORT, 1 COMMIT) and whose value is int16 version 0,
/// int32 coordinator epoch.
pub fn encode_marker(
    producer_id: i64,
    producer_epoch: i16,
    kind: i16,
    coordinator_epoch: i32,
    timestamp: i64,
) -> Vec<u8> {
    let mut key = [0u8; 4];
    key[2..].copy_from_slice(&kind.to_be_bytes());
    let mut value = [0u8; 6];
    value[2..].copy_from_slice(&coordinator_epoch.to_be_bytes());
    let mut builder = BatchBuilder::new(Compression::None);
    builder.set_producer(producer_id, producer_epoch, -1);
    builder.append(timestamp, Some(&key), Some(&value), &[]);
    let header = BatchHeader {
        base_offset: 0,
        length: 0,
        partition_leader_epoch: -1,
        magic: MAGIC,
        crc: 0,
        attributes: TRANSACTIONAL_BIT | CONTROL_BIT,
        last_offset_delta: 0,
        base_timestamp: timestamp,
        max_timestamp: timestamp,
        producer_id,
        producer_epoch,
        base_sequence: -1,
        records_count: 1,
    };
    let mut out = Vec::new();
    put_batch(&mut out, &header, 1, &builder.records);
    out
}

/// Encodes owned records (their offsets are ignored: they become consecutive from `base_offset`).
pub fn encode_batch(
    base_offset: i64,
    records: &[Record],
    compression: Compression,
) -> Result<Vec<u8>, RecordError> {
    let mut builder = BatchBuilder::new(compression);
    for r in records {
        let headers: Vec<(&str, Option<&[u8]>)> = r
            .headers
            .iter()
            .map(|h| (h.key.as_str(), h.value.as_deref()))
            .collect();
        builder.append(r.timestamp, r.key.as_deref(), r.value.as_deref(), &headers);
    }
    builder.build(base_offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_records(base_offset: i64) -> Vec<u8> {
        let mut b = BatchBuilder::new(Compression::None);
        b.append(0, None, Some(b"a"), &[]);
        b.append(0, None, Some(b"b"), &[]);
        b.build(base_offset).unwrap()
    }

    #[test]
    fn offsets_past_i64_max_are_corrupt_not_an_overflow() {
        // The last offset may be i64::MAX - 1: the offset after it still exists.
        let (h, records) = decode_batch(&two_records(i64::MAX - 2)).unwrap();
        assert_eq!(h.next_offset(), i64::MAX);
        assert_eq!(records[1].offset, i64::MAX - 1);
        let err = BatchHeader::parse(&two_records(i64::MAX - 1)).unwrap_err();
        assert!(matches!(err, RecordError::Corrupt(m) if m.contains("overflows")));
        // A record whose offset delta goes past the batch's last offset delta: the header
        // claims one record, both records are decoded (Kafka does not check the deltas).
        let mut batch = two_records(i64::MAX - 1);
        batch[23..27].copy_from_slice(&0i32.to_be_bytes());
        let crc = crc32c::crc32c(&batch[ATTRIBUTES_OFFSET..]);
        batch[CRC_OFFSET..CRC_OFFSET + 4].copy_from_slice(&crc.to_be_bytes());
        let err = decode_batch(&batch).unwrap_err();
        assert!(matches!(err, RecordError::Corrupt(m) if m.contains("offset delta 1")));
    }

    #[test]
    fn a_marker_is_the_78_bytes_kafka_writes() {
        // A COMMIT of producer 0 at epoch 1, coordinator epoch 0, as Kafka 4.3.1 wrote it at
        // offset 3 (reference/transactions.md, section 5).
        let mut m = encode_marker(0, 1, 1, 0, 1_796_328_338_226);
        set_base_offset(&mut m, 3);
        assert_eq!(m.len(), 78);
        let h = BatchHeader::parse(&m).unwrap();
        assert_eq!((h.base_offset, h.length, h.attributes), (3, 66, 0x30));
        assert_eq!(
            (h.producer_id, h.producer_epoch, h.base_sequence),
            (0, 1, -1)
        );
        let record = &m[BATCH_OVERHEAD..];
        assert_eq!(
            record,
            [0x20, 0, 0, 0, 8, 0, 0, 0, 1, 0x0c, 0, 0, 0, 0, 0, 0, 0]
        );
        verify_crc(&m).unwrap();
    }
}
