//! A batch's fields and records as Kafka's `DefaultRecordBatch` hands them out: header fields
//! read from whatever bytes were loaded (no checks), records read with Kafka's iterator rules
//! (none when the count is 0; an uncompressed batch one record at a time; a compressed one
//! decompressed and read whole before the first record is handed out).

use super::file_records::FileBatch;
use super::java::{INVALID_RECORD, JavaError};
use crate::record::{
    BATCH_OVERHEAD, BatchHeader, Compression, RawHeaders, RawRecord, RecordError, RecordReader,
    RecordSource, TimestampType,
};

/// No sequence (`RecordBatch.NO_SEQUENCE`).
pub const NO_SEQUENCE: i32 = -1;

/// The header fields of a batch, from its loaded bytes.
pub struct Fields(BatchHeader);

impl Fields {
    /// The fields in `bytes`; fewer than a header's bytes (a loaded batch shorter than its
    /// header) is Java's `IndexOutOfBoundsException` on the first field read.
    pub fn of(bytes: &[u8]) -> Result<Fields, JavaError> {
        let Some(head) = bytes.first_chunk::<BATCH_OVERHEAD>() else {
            return Err(JavaError::bare("java.lang.IndexOutOfBoundsException"));
        };
        Ok(Fields(BatchHeader::read(head)))
    }

    pub fn header(&self) -> &BatchHeader {
        &self.0
    }

    /// Wrapping, as Java's arithmetic: an unchecked header may overflow.
    pub fn last_offset(&self) -> i64 {
        self.0
            .base_offset
            .wrapping_add(i64::from(self.0.last_offset_delta))
    }

    pub fn last_sequence(&self) -> i32 {
        if self.0.base_sequence == NO_SEQUENCE {
            return NO_SEQUENCE;
        }
        increment_sequence(self.0.base_sequence, self.0.last_offset_delta)
    }

    pub fn timestamp_type(&self) -> &'static str {
        self.0.timestamp_type().name()
    }

    pub fn is_log_append_time(&self) -> bool {
        self.0.timestamp_type() == TimestampType::LogAppendTime
    }

    pub fn is_transactional(&self) -> bool {
        self.0.is_transactional()
    }

    pub fn is_control(&self) -> bool {
        self.0.is_control()
    }

    pub fn delete_horizon_ms(&self) -> Option<i64> {
        self.0.has_delete_horizon().then_some(self.0.base_timestamp)
    }

    /// The codec, or Java's exception for an id with none.
    pub fn compression(&self) -> Result<Compression, JavaError> {
        self.0.compression().map_err(|_| {
            let id = self.0.attributes & 0x07;
            JavaError::illegal_argument(format!("Unknown compression type id: {id}"))
        })
    }
}

/// `DefaultRecordBatch.incrementSequence`: sequences wrap to 0 after `i32::MAX`.
pub fn increment_sequence(sequence: i32, increment: i32) -> i32 {
    if sequence > i32::MAX.wrapping_sub(increment) {
        return increment
            .wrapping_sub(i32::MAX.wrapping_sub(sequence))
            .wrapping_sub(1);
    }
    sequence.wrapping_add(increment)
}

/// `DefaultRecordBatch.isValid()` of a loaded batch: a whole header and a good CRC-32C.
pub fn is_valid(full: &[u8]) -> bool {
    crate::record::verify_crc(full).is_ok()
}

/// One record with the values Kafka's `Record` methods return.
pub struct RecordView<'a> {
    pub offset: i64,
    pub timestamp: i64,
    pub sequence: i32,
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
    pub headers: RawHeaders<'a>,
}

impl RecordView<'_> {
    pub fn key_size(&self) -> i32 {
        self.key.map_or(-1, |k| k.len() as i32)
    }

    pub fn value_size(&self) -> i32 {
        self.value.map_or(-1, |v| v.len() as i32)
    }
}

/// Kafka's exception for a record that does not parse.
pub fn record_error(e: RecordError) -> JavaError {
    match e {
        RecordError::Invalid(m) => JavaError::new(INVALID_RECORD, m),
        // Kafka's first line names no cause (the codec's own message follows it).
        RecordError::Compression { .. } => JavaError::kafka("Failed to decompress record stream"),
        other => JavaError::kafka(other.to_string()),
    }
}

/// Calls `f` with each record of the batch, in Kafka's iteration order and failure points.
pub fn for_each_record<E: From<JavaError>>(
    batch: &mut FileBatch<'_>,
    mut f: impl FnMut(&Fields, RecordView<'_>) -> Result<(), E>,
) -> Result<(), E> {
    let full = batch.full()?;
    let fields = Fields::of(full)?;
    let h = fields.header();
    if h.records_count == 0 {
        return Ok(());
    }
    let codec = fields.compression()?;
    let err = |e| E::from(record_error(e));
    let body = &full[BATCH_OVERHEAD..];
    if codec == Compression::None {
        let mut reader =
            RecordReader::new(body, h.records_count, h.magic, RecordSource::Batch).map_err(err)?;
        while let Some(r) = reader.next_record().map_err(err)? {
            f(&fields, view(&fields, r))?;
        }
        return Ok(());
    }
    // Kafka's iterator reads a compressed batch's records whole before handing out the first.
    let records = codec
        .decompress(body, crate::record::batch::MAX_DECOMPRESSED)
        .map_err(err)?;
    let mut reader = RecordReader::new(
        &records,
        h.records_count,
        h.magic,
        RecordSource::Decompressed,
    )
    .map_err(err)?;
    let mut all = Vec::with_capacity((h.records_count as usize).min(records.len()));
    while let Some(r) = reader.next_record().map_err(err)? {
        all.push(r);
    }
    for r in all {
        f(&fields, view(&fields, r))?;
    }
    Ok(())
}

/// A record's values from its stored fields and its batch's header.
fn view<'a>(fields: &Fields, r: RawRecord<'a>) -> RecordView<'a> {
    let h = fields.header();
    RecordView {
        offset: h.base_offset.wrapping_add(i64::from(r.offset_delta)),
        timestamp: if fields.is_log_append_time() {
            h.max_timestamp
        } else {
            h.base_timestamp.wrapping_add(r.timestamp_delta)
        },
        sequence: if h.base_sequence >= 0 {
            increment_sequence(h.base_sequence, r.offset_delta)
        } else {
            NO_SEQUENCE
        },
        key: r.key,
        value: r.value,
        headers: r.headers,
    }
}
