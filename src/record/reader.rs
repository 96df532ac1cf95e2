//! Reading the records of a batch one at a time, with the checks and messages of Kafka's
//! `DefaultRecord.readFrom` and `DefaultRecordBatch`'s record iterators.
//!
//! Every record reader in kafkit goes through [`RecordReader`]: [`super::for_each_record`]
//! (the consumer, the fuzz targets) adds its own stricter checks on top, and `kafka-dump-log`
//! uses it as it is, so that a damaged batch fails at the same record, with the same message,
//! as Kafka's own tools.
//!
//! Kafka reads an uncompressed batch's records straight from the batch: a record whose fields
//! run past its declared size is read on into the next record's bytes and only then reported
//! ("expected to read N bytes ..."). Decompressed records come from a stream, one declared size
//! at a time, so there the fields of a record cannot run past it. [`RecordReader::new`] takes
//! which of the two it is reading.

use super::RecordError;
use super::varint::{get_short_varint, get_varint, get_varlong};

/// One record's fields as stored, borrowed from the records section.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawRecord<'a> {
    pub timestamp_delta: i64,
    pub offset_delta: i32,
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
    pub headers: RawHeaders<'a>,
}

/// A record's headers as stored, already checked; read on demand, so that reading a record
/// allocates nothing. Keys are bytes: Kafka decodes them as UTF-8 only when asked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RawHeaders<'a> {
    bytes: &'a [u8],
    count: usize,
}

impl<'a> RawHeaders<'a> {
    /// How many headers the record has.
    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Each header's key and value, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&'a [u8], Option<&'a [u8]>)> + use<'a> {
        let (bytes, mut pos) = (self.bytes, 0);
        // Checked by `parse_fields`: nothing here can fail.
        (0..self.count).map_while(move |_| read_header(bytes, &mut pos).ok())
    }
}

/// Where a batch's records come from (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordSource {
    /// The records section of an uncompressed batch.
    Batch,
    /// The decompressed records section of a compressed batch.
    Decompressed,
}

/// Reads the `count` records of a records section, one per [`RecordReader::next_record`].
#[derive(Debug)]
pub struct RecordReader<'a> {
    buf: &'a [u8],
    pos: usize,
    count: i32,
    read: i32,
    source: RecordSource,
}

/// Kafka's `InvalidRecordException` with its message.
fn invalid(message: impl Into<String>) -> RecordError {
    RecordError::Invalid(message.into())
}

const PREMATURE_EOF: &str = "Incorrect declared batch size, premature EOF reached";
const INVALID_STRUCTURE: &str = "Found invalid record structure";

impl<'a> RecordReader<'a> {
    /// A reader of `count` records (the batch header's count) from `records`; `magic` is only
    /// for the message about a negative count.
    pub fn new(
        records: &'a [u8],
        count: i32,
        magic: i8,
        source: RecordSource,
    ) -> Result<Self, RecordError> {
        if count < 0 {
            return Err(invalid(format!(
                "Found invalid record count {count} in magic v{magic} batch"
            )));
        }
        Ok(RecordReader {
            buf: records,
            pos: 0,
            count,
            read: 0,
            source,
        })
    }

    /// The next record, `None` after the last. After the last record, bytes left over in the
    /// section are an error, as in Kafka.
    pub fn next_record(&mut self) -> Result<Option<RawRecord<'a>>, RecordError> {
        if self.read >= self.count {
            return Ok(None);
        }
        self.read += 1;
        let record = match self.source {
            RecordSource::Batch => self.read_in_batch()?,
            RecordSource::Decompressed => self.read_sized()?,
        };
        if self.read == self.count && self.pos < self.buf.len() {
            return Err(invalid(
                "Incorrect declared batch size, records still remaining in file",
            ));
        }
        Ok(Some(record))
    }

    /// The next record when it is a common one (see `plain_record`) of an uncompressed batch,
    /// read without building an error path; `None` when [`RecordReader::next_record`] must
    /// read it (or tell that there is none, or that bytes are left over after the last).
    #[inline(always)]
    pub fn next_plain(&mut self) -> Option<RawRecord<'a>> {
        if self.source != RecordSource::Batch || self.read >= self.count {
            return None;
        }
        let (record, used) = plain_record(&self.buf[self.pos..])?;
        let pos = self.pos + used;
        if self.read + 1 == self.count && pos < self.buf.len() {
            return None;
        }
        self.pos = pos;
        self.read += 1;
        Some(record)
    }

    /// A record of an uncompressed batch: its fields are read from the rest of the section.
    #[inline]
    fn read_in_batch(&mut self) -> Result<RawRecord<'a>, RecordError> {
        if let Some((record, used)) = plain_record(&self.buf[self.pos..]) {
            self.pos += used;
            return Ok(record);
        }
        self.read_in_batch_checked()
    }

    /// [`RecordReader::read_in_batch`] for the records the fast path leaves: headers, long
    /// varints, and every error with Kafka's message.
    #[inline(never)]
    fn read_in_batch_checked(&mut self) -> Result<RawRecord<'a>, RecordError> {
        let size = get_varint(self.buf, &mut self.pos).map_err(|_| invalid(PREMATURE_EOF))?;
        let remaining = self.buf.len() - self.pos;
        if (remaining as i64) < i64::from(size) {
            return Err(invalid(format!(
                "Invalid record size: expected {size} bytes in record payload, but instead the \
                 buffer has only {remaining} remaining bytes."
            )));
        }
        let (record, used) = parse_fields(&self.buf[self.pos..], size)?;
        self.pos += used;
        Ok(record)
    }

    /// A record of a decompressed stream: exactly its declared size is read first.
    fn read_sized(&mut self) -> Result<RawRecord<'a>, RecordError> {
        let size = get_varint(self.buf, &mut self.pos).map_err(|_| invalid(PREMATURE_EOF))?;
        if size < 0 {
            return Err(invalid(PREMATURE_EOF));
        }
        let Some(body) = self.buf.get(self.pos..self.pos + size as usize) else {
            self.pos = self.buf.len();
            return Err(invalid(format!(
                "Invalid record size: expected {size} bytes in record payload, but the record \
                 payload reached EOF."
            )));
        };
        let (record, used) = parse_fields(body, size)?;
        debug_assert_eq!(used, size as usize);
        self.pos += size as usize;
        Ok(record)
    }
}

/// The common record, read with no error to report: varints of at most three bytes, no
/// headers, its fields exactly filling its declared size. `None` for anything else, which the
/// checked path then reads (or refuses with Kafka's message); whatever this reads, the checked
/// path reads the same. Most of a consumer's time per record is here.
#[inline(always)]
fn plain_record(buf: &[u8]) -> Option<(RawRecord<'_>, usize)> {
    let mut pos = 0;
    let size = get_short_varint(buf, &mut pos)?;
    let body = buf.get(pos..pos + usize::try_from(size).ok()?)?;
    // The attributes byte, unused, then the fields.
    let mut at = 1;
    let timestamp_delta = get_short_varint(body, &mut at)?;
    let offset_delta = i32::try_from(get_short_varint(body, &mut at)?).ok()?;
    let key = short_bytes(body, &mut at)?;
    let value = short_bytes(body, &mut at)?;
    let headers = get_short_varint(body, &mut at)?;
    if headers != 0 || at != body.len() {
        return None;
    }
    let record = RawRecord {
        timestamp_delta,
        offset_delta,
        key,
        value,
        headers: RawHeaders::default(),
    };
    Some((record, pos + body.len()))
}

/// A key or value (length -1: null) whose length is a short varint (`get_short_varint`);
/// `None` for any other.
#[inline(always)]
fn short_bytes<'a>(buf: &'a [u8], pos: &mut usize) -> Option<Option<&'a [u8]>> {
    let len = get_short_varint(buf, pos)?;
    if len == -1 {
        return Some(None);
    }
    let end = pos.checked_add(usize::try_from(len).ok()?)?;
    let bytes = buf.get(*pos..end)?;
    *pos = end;
    Some(Some(bytes))
}

/// `Utils.readBytes`: a length of -1 is null; one past the end is a structure error. Kafka
/// reads any negative length as null, but no Kafka client writes one below -1, and librdkafka
/// cannot read past such a record (kcat loops on it): it is refused as damaged.
fn read_bytes<'a>(buf: &'a [u8], pos: &mut usize) -> Result<Option<&'a [u8]>, RecordError> {
    let len = get_varint(buf, pos).map_err(|_| invalid(INVALID_STRUCTURE))?;
    if len == -1 {
        return Ok(None);
    }
    if len < 0 {
        return Err(invalid(format!(
            "Invalid negative length {len} in a record (only -1, for null, is valid)"
        )));
    }
    take(buf, pos, len as usize).map(Some)
}

/// The `len` bytes at `*pos`, advancing it.
fn take<'a>(buf: &'a [u8], pos: &mut usize, len: usize) -> Result<&'a [u8], RecordError> {
    let end = pos
        .checked_add(len)
        .filter(|&e| e <= buf.len())
        .ok_or_else(|| invalid(INVALID_STRUCTURE))?;
    let out = &buf[*pos..end];
    *pos = end;
    Ok(out)
}

/// One header at `*pos`: its key and value, advancing `pos`.
fn read_header<'a>(
    buf: &'a [u8],
    pos: &mut usize,
) -> Result<(&'a [u8], Option<&'a [u8]>), RecordError> {
    let key_len = get_varint(buf, pos).map_err(|_| invalid(INVALID_STRUCTURE))?;
    if key_len < 0 {
        return Err(invalid(format!(
            "Invalid negative header key size {key_len}"
        )));
    }
    let key = take(buf, pos, key_len as usize)?;
    Ok((key, read_bytes(buf, pos)?))
}

/// Parses one record's fields from the start of `buf`, which must end up `size` bytes long;
/// returns the record and the bytes it took.
fn parse_fields(buf: &[u8], size: i32) -> Result<(RawRecord<'_>, usize), RecordError> {
    let structure = |_| invalid(INVALID_STRUCTURE);
    // The record's attributes byte: unused by every version so far.
    buf.first().ok_or_else(|| invalid(INVALID_STRUCTURE))?;
    let mut pos = 1;
    let timestamp_delta = get_varlong(buf, &mut pos).map_err(structure)?;
    let offset_delta = get_varint(buf, &mut pos).map_err(structure)?;
    let key = read_bytes(buf, &mut pos)?;
    let value = read_bytes(buf, &mut pos)?;
    let count = get_varint(buf, &mut pos).map_err(structure)?;
    if count < 0 {
        return Err(invalid(format!(
            "Found invalid number of record headers {count}"
        )));
    }
    if count as usize > buf.len() - pos {
        return Err(invalid(format!(
            "Found invalid number of record headers. {count} is larger than the remaining size \
             of the buffer"
        )));
    }
    let headers_start = pos;
    for _ in 0..count {
        read_header(buf, &mut pos)?;
    }
    let headers = RawHeaders {
        bytes: &buf[headers_start..pos],
        count: count as usize,
    };
    if pos as i64 != i64::from(size) {
        return Err(invalid(format!(
            "Invalid record size: expected to read {size} bytes in record payload, but instead \
             read {pos}"
        )));
    }
    let record = RawRecord {
        timestamp_delta,
        offset_delta,
        key,
        value,
        headers,
    };
    Ok((record, pos))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::varint::put_varint;

    fn record(key: Option<&[u8]>, value: &[u8], headers: &[(&str, Option<&[u8]>)]) -> Vec<u8> {
        let mut body = vec![0u8, 0, 0];
        let put = |b: &mut Vec<u8>, v: Option<&[u8]>| match v {
            None => put_varint(b, -1),
            Some(v) => {
                put_varint(b, v.len() as i32);
                b.extend_from_slice(v);
            }
        };
        put(&mut body, key);
        put(&mut body, Some(value));
        put_varint(&mut body, headers.len() as i32);
        for (k, v) in headers {
            put(&mut body, Some(k.as_bytes()));
            put(&mut body, *v);
        }
        let mut out = Vec::new();
        put_varint(&mut out, body.len() as i32);
        out.extend_from_slice(&body);
        out
    }

    fn read_all(buf: &[u8], count: i32, source: RecordSource) -> Result<usize, RecordError> {
        let mut reader = RecordReader::new(buf, count, 2, source)?;
        let mut n = 0;
        while reader.next_record()?.is_some() {
            n += 1;
        }
        Ok(n)
    }

    /// Every record of `buf` as the fast path (with its fallback) reads them, and as the
    /// checked path alone does: the two must agree, errors included.
    fn both_ways(buf: &[u8], count: i32) -> [Result<Vec<RawRecord<'_>>, RecordError>; 2] {
        let fast = (|| {
            let mut reader = RecordReader::new(buf, count, 2, RecordSource::Batch)?;
            let mut records = Vec::new();
            loop {
                match reader.next_plain() {
                    Some(r) => records.push(r),
                    None => match reader.next_record()? {
                        Some(r) => records.push(r),
                        None => return Ok(records),
                    },
                }
            }
        })();
        let checked = (|| {
            let mut reader = RecordReader::new(buf, count, 2, RecordSource::Batch)?;
            let mut records = Vec::new();
            while reader.read < reader.count {
                reader.read += 1;
                records.push(reader.read_in_batch_checked()?);
                if reader.read == reader.count && reader.pos < reader.buf.len() {
                    return Err(invalid(
                        "Incorrect declared batch size, records still remaining in file",
                    ));
                }
            }
            Ok(records)
        })();
        [fast, checked]
    }

    /// The fast path reads what the checked path reads, for records around the varint size
    /// boundaries, with and without headers, and for every single-byte change of them.
    #[test]
    fn the_fast_path_reads_what_the_checked_path_reads() {
        let value = vec![b'v'; 9000];
        let mut section = Vec::new();
        let mut count = 0;
        for len in [0, 1, 63, 64, 100, 8191, 8192] {
            for key in [None, Some(&b"key"[..])] {
                let headers: &[(&str, Option<&[u8]>)] =
                    if len == 64 { &[("h", None)] } else { &[] };
                section.extend(record(key, &value[..len], headers));
                count += 1;
            }
        }
        let [fast, checked] = both_ways(&section, count);
        assert_eq!(fast.as_ref().map(Vec::len), Ok(count as usize));
        assert_eq!(fast, checked);
        // Damage: each byte of the small records' part changed in turn, and the count off by one.
        let small: Vec<u8> = [None, Some(&b"k"[..])]
            .into_iter()
            .flat_map(|k| record(k, b"value", &[]))
            .collect();
        for at in 0..small.len() {
            let near = [1u8, 2, 254, 255].map(|d| small[at].wrapping_add(d));
            for with in [0x00, 0x01, 0x7f, 0x80, 0xff].into_iter().chain(near) {
                let mut damaged = small.clone();
                damaged[at] = with;
                for n in [1, 2, 3] {
                    let [fast, checked] = both_ways(&damaged, n);
                    assert_eq!(fast, checked, "byte {at} = {with:#x}, count {n}");
                }
            }
        }
    }

    #[test]
    fn reads_records_with_keys_values_and_headers() {
        let mut buf = record(Some(b"k"), b"v", &[("h", None), ("\u{e9}", Some(b"x"))]);
        buf.extend(record(None, b"", &[]));
        let mut reader = RecordReader::new(&buf, 2, 2, RecordSource::Batch).unwrap();
        let first = reader.next_record().unwrap().unwrap();
        assert_eq!(first.key, Some(&b"k"[..]));
        assert_eq!(
            first.headers.iter().collect::<Vec<_>>(),
            vec![(&b"h"[..], None), ("\u{e9}".as_bytes(), Some(&b"x"[..]))]
        );
        let second = reader.next_record().unwrap().unwrap();
        assert_eq!((second.key, second.value), (None, Some(&b""[..])));
        assert!(reader.next_record().unwrap().is_none());
    }

    #[test]
    fn kafkas_messages_for_damaged_records() {
        let buf = record(Some(b"k"), b"value", &[]);
        let err = |buf: &[u8], count, source| read_all(buf, count, source).unwrap_err();
        assert_eq!(
            err(&buf, -1, RecordSource::Batch),
            invalid("Found invalid record count -1 in magic v2 batch")
        );
        assert_eq!(
            err(&buf, 2, RecordSource::Batch),
            invalid(PREMATURE_EOF),
            "a second record that is not there"
        );
        let mut extra = buf.clone();
        extra.push(0);
        assert_eq!(
            err(&extra, 1, RecordSource::Batch),
            invalid("Incorrect declared batch size, records still remaining in file")
        );
        // The declared size one more than the fields take: in a batch, the next byte is read
        // on and the mismatch reported; from a stream, the stream ends first.
        let mut longer = buf.clone();
        longer[0] += 2;
        longer.push(0);
        assert_eq!(
            err(&longer, 1, RecordSource::Batch),
            invalid(
                "Invalid record size: expected to read 13 bytes in record payload, but instead \
                 read 12"
            )
        );
        longer.pop();
        assert_eq!(
            err(&longer, 1, RecordSource::Decompressed),
            invalid(
                "Invalid record size: expected 13 bytes in record payload, but the record \
                 payload reached EOF."
            )
        );
        assert_eq!(
            err(&longer, 1, RecordSource::Batch),
            invalid(
                "Invalid record size: expected 13 bytes in record payload, but instead the \
                 buffer has only 12 remaining bytes."
            )
        );
    }
}
