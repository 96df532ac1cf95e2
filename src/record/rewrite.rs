//! A batch written again with some of its records, as Kafka's log cleaner writes it
//! (`MemoryRecords.filterTo`): the records keep their own offsets and timestamps, and the
//! batch keeps its base and last offset (so its last producer sequence survives), producer id,
//! epoch and base sequence, leader epoch, timestamp type, transactional and control flags and
//! codec. Offsets inside it then have gaps, which readers skip.
//!
//! A batch whose records are all gone but which must stay (a producer's last batch, or the
//! last of a cleaning round) becomes a bare 61-byte header with no records
//! ([`empty_batch`], Kafka's `writeEmptyHeader`).

use super::batch::{
    BatchHeader, CONTROL_BIT, DELETE_HORIZON_BIT, RecordRef, TIMESTAMP_TYPE_BIT, TRANSACTIONAL_BIT,
    put_batch, put_record_at,
};
use super::{RecordError, TimestampType, for_each_record_crc};

/// Builds the new version of one batch from the records it keeps, pushed in offset order.
#[derive(Debug)]
pub struct BatchRewriter {
    header: BatchHeader,
    /// The base timestamp the records' deltas count from: the delete horizon when there is
    /// one, else the first kept record's timestamp.
    base_timestamp: Option<i64>,
    max_timestamp: i64,
    records: Vec<u8>,
    count: i32,
}

impl BatchRewriter {
    /// A rewrite of the batch `header` heads. With `delete_horizon` the batch gets Kafka's
    /// delete-horizon flag (attribute bit 6, KIP-534) and the horizon as its base timestamp:
    /// the time after which a cleaning may drop its tombstones.
    pub fn new(header: &BatchHeader, delete_horizon: Option<i64>) -> BatchRewriter {
        let mut header = header.clone();
        header.attributes &= !DELETE_HORIZON_BIT;
        if delete_horizon.is_some() {
            header.attributes |= DELETE_HORIZON_BIT;
        }
        BatchRewriter {
            header,
            base_timestamp: delete_horizon,
            max_timestamp: -1,
            records: Vec::new(),
            count: 0,
        }
    }

    /// Adds a kept record (at its own offset, with its own timestamp).
    pub fn push(&mut self, record: &RecordRef<'_>) -> Result<(), RecordError> {
        let offset_delta = record.offset - self.header.base_offset;
        if !(0..=i64::from(self.header.last_offset_delta)).contains(&offset_delta) {
            return Err(RecordError::Corrupt(format!(
                "record offset {} is outside its batch {}..={}",
                record.offset,
                self.header.base_offset,
                self.header.last_offset()
            )));
        }
        let base = *self.base_timestamp.get_or_insert(record.timestamp);
        self.max_timestamp = self.max_timestamp.max(record.timestamp);
        put_record_at(
            &mut self.records,
            record.timestamp.wrapping_sub(base),
            offset_delta as i32,
            record.key,
            record.value,
            &record.headers,
        );
        self.count += 1;
        Ok(())
    }

    /// Appends the rewritten batch to `out`, compressed with the original's codec.
    pub fn finish_into(self, out: &mut Vec<u8>) -> Result<(), RecordError> {
        let mut header = self.header;
        let codec = header.compression()?;
        header.base_timestamp = self.base_timestamp.unwrap_or(-1);
        // A LogAppendTime batch's time is the broker's, kept in its max timestamp.
        if header.timestamp_type() == TimestampType::CreateTime {
            header.max_timestamp = self.max_timestamp;
        }
        let compressed;
        let body: &[u8] = if codec == super::Compression::None {
            &self.records
        } else {
            compressed = codec.compress(&self.records)?;
            &compressed
        };
        put_batch(out, &header, self.count, body);
        Ok(())
    }
}

/// Appends to `out` one whole batch, whose CRC its caller has checked, written again with the
/// records `keep` accepts (see [`BatchRewriter`]).
pub fn rewrite_batch(
    batch: &[u8],
    delete_horizon: Option<i64>,
    scratch: &mut Vec<u8>,
    out: &mut Vec<u8>,
    mut keep: impl FnMut(&RecordRef<'_>) -> bool,
) -> Result<(), RecordError> {
    let header = BatchHeader::parse(batch)?;
    let mut rewriter = BatchRewriter::new(&header, delete_horizon);
    for_each_record_crc(batch, scratch, false, |r| {
        if keep(&r) {
            rewriter.push(&r)?;
        }
        Ok(())
    })?;
    rewriter.finish_into(out)
}

/// The bare header kept in place of a batch whose records are all gone (Kafka's
/// `writeEmptyHeader`): base and last offset, producer fields, leader epoch, timestamp type,
/// max timestamp and the transactional and control flags are copied; the base timestamp is -1,
/// with no codec and no delete horizon.
pub fn empty_batch(header: &BatchHeader) -> Vec<u8> {
    let mut empty = header.clone();
    empty.attributes &= TIMESTAMP_TYPE_BIT | TRANSACTIONAL_BIT | CONTROL_BIT;
    empty.base_timestamp = -1;
    let mut out = Vec::with_capacity(super::BATCH_OVERHEAD);
    put_batch(&mut out, &empty, 0, &[]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{BatchBuilder, Compression, decode_batch};

    /// Five records at offsets 100..=104 with timestamps 1000..=1004, keys k0..k4, from
    /// producer 7 (epoch 2, base sequence 30), leader epoch 9.
    fn batch(codec: Compression) -> Vec<u8> {
        let mut b = BatchBuilder::new(codec);
        b.set_producer(7, 2, 30);
        for i in 0..5 {
            let key = format!("k{i}");
            let value = (i != 3).then(|| format!("v{i}"));
            b.append(
                1000 + i as i64,
                Some(key.as_bytes()),
                value.as_deref().map(str::as_bytes),
                &[("h", Some(b"x"))],
            );
        }
        let mut out = b.build(100).unwrap();
        crate::record::set_partition_leader_epoch(&mut out, 9);
        out
    }

    /// Rewrites `original` keeping the records at `keep`.
    fn rewrite(original: &[u8], keep: &[i64], horizon: Option<i64>) -> Vec<u8> {
        let mut out = Vec::new();
        rewrite_batch(original, horizon, &mut Vec::new(), &mut out, |r| {
            keep.contains(&r.offset)
        })
        .unwrap();
        out
    }

    #[test]
    fn kept_records_keep_their_offsets_and_the_batch_its_identity() {
        for codec in [Compression::None, Compression::Gzip, Compression::Zstd] {
            let original = batch(codec);
            let rewritten = rewrite(&original, &[101, 104], None);
            let (before, _) = decode_batch(&original).unwrap();
            let (after, records) = decode_batch(&rewritten).unwrap();
            assert_eq!(
                records.iter().map(|r| r.offset).collect::<Vec<_>>(),
                [101, 104]
            );
            assert_eq!(
                records.iter().map(|r| r.timestamp).collect::<Vec<_>>(),
                [1001, 1004]
            );
            assert_eq!(records[0].key.as_deref(), Some(&b"k1"[..]));
            assert_eq!(records[1].value.as_deref(), Some(&b"v4"[..]));
            assert_eq!(records[1].headers[0].key, "h");
            assert_eq!(after.base_offset, 100);
            assert_eq!(after.last_offset(), 104);
            assert_eq!(after.last_sequence(), before.last_sequence());
            assert_eq!(after.records_count, 2);
            assert_eq!(after.base_timestamp, 1001);
            assert_eq!(after.max_timestamp, 1004);
            assert_eq!(after.producer_id, 7);
            assert_eq!(after.producer_epoch, 2);
            assert_eq!(after.base_sequence, 30);
            assert_eq!(after.partition_leader_epoch, 9);
            assert_eq!(after.compression().unwrap(), codec);
            assert!(!after.has_delete_horizon());
        }
    }

    #[test]
    fn a_delete_horizon_is_the_base_timestamp_and_record_times_stay_right() {
        let rewritten = rewrite(&batch(Compression::None), &[102, 103], Some(5000));
        let (header, records) = decode_batch(&rewritten).unwrap();
        assert!(header.has_delete_horizon());
        assert_eq!(header.base_timestamp, 5000);
        assert_eq!(header.max_timestamp, 1003);
        assert_eq!(
            records.iter().map(|r| r.timestamp).collect::<Vec<_>>(),
            [1002, 1003]
        );
        assert_eq!(records[1].value, None, "the tombstone stays a tombstone");
        // Rewritten again without a horizon, the flag goes.
        let again = rewrite(&rewritten, &[102], None);
        assert!(!BatchHeader::parse(&again).unwrap().has_delete_horizon());
    }

    #[test]
    fn an_empty_batch_is_a_bare_header_with_the_batch_identity() {
        let original = batch(Compression::Snappy);
        let header = BatchHeader::parse(&original).unwrap();
        let empty = empty_batch(&header);
        assert_eq!(empty.len(), crate::record::BATCH_OVERHEAD);
        let (h, records) = decode_batch(&empty).unwrap();
        assert!(records.is_empty());
        assert_eq!(h.records_count, 0);
        assert_eq!((h.base_offset, h.last_offset()), (100, 104));
        assert_eq!((h.producer_id, h.producer_epoch), (7, 2));
        assert_eq!(h.last_sequence(), header.last_sequence());
        assert_eq!(h.base_timestamp, -1);
        assert_eq!(h.max_timestamp, 1004);
        assert_eq!(h.partition_leader_epoch, 9);
        assert_eq!(h.compression().unwrap(), Compression::None);
    }

    #[test]
    fn a_record_outside_its_batch_is_refused() {
        let header = BatchHeader::parse(&batch(Compression::None)).unwrap();
        let mut rewriter = BatchRewriter::new(&header, None);
        let stray = RecordRef {
            offset: 105,
            timestamp: 0,
            key: None,
            value: None,
            headers: Vec::new(),
        };
        assert!(rewriter.push(&stray).is_err());
    }
}
