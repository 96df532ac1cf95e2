//! Kafka's log-directory file layouts besides the record batches themselves: `.index` and
//! `.timeindex` entries, producer-state `.snapshot` files and `.txnindex` entries.
//!
//! Pure parsing of bytes already read, shared by the embedded log (which writes and reads the
//! indexes) and `kafka-dump-log` (which shows all four as Kafka's `DumpLogSegments` does). Values
//! come out as Kafka's Java code reads them: signed, big-endian, unchecked; what a reader accepts
//! is its own business.

use crate::record::batch::{be_i16, be_i32, be_i64};

/// Bytes per `.index` entry: int32 offset relative to the segment base, int32 file position.
pub const OFFSET_ENTRY_SIZE: usize = 8;
/// Bytes per `.timeindex` entry: int64 timestamp, int32 relative offset.
pub const TIME_ENTRY_SIZE: usize = 12;
/// Bytes per `.txnindex` entry (Kafka's `AbortedTxn`).
pub const ABORTED_TXN_SIZE: usize = 34;

/// An `.index` entry: (relative offset, position), from exactly [`OFFSET_ENTRY_SIZE`] bytes.
pub fn offset_entry(b: &[u8; OFFSET_ENTRY_SIZE]) -> (i32, i32) {
    (be_i32(b, 0), be_i32(b, 4))
}

/// A `.timeindex` entry: (timestamp, relative offset), from exactly [`TIME_ENTRY_SIZE`] bytes.
pub fn time_entry(b: &[u8; TIME_ENTRY_SIZE]) -> (i64, i32) {
    (be_i64(b, 0), be_i32(b, 8))
}

/// One `.txnindex` entry: an aborted transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AbortedTxn {
    /// The first byte of the int16 version field: what Kafka's `AbortedTxn.version()` reads.
    pub version: i8,
    pub producer_id: i64,
    pub first_offset: i64,
    pub last_offset: i64,
    pub last_stable_offset: i64,
}

/// The entry in exactly [`ABORTED_TXN_SIZE`] bytes.
pub fn aborted_txn(b: &[u8; ABORTED_TXN_SIZE]) -> AbortedTxn {
    AbortedTxn {
        version: b[0] as i8,
        producer_id: be_i64(b, 2),
        first_offset: be_i64(b, 10),
        last_offset: be_i64(b, 18),
        last_stable_offset: be_i64(b, 26),
    }
}

/// One producer of a producer-state snapshot (`ProducerSnapshot` v1's `ProducerEntry`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProducerEntry {
    pub producer_id: i64,
    pub epoch: i16,
    pub last_sequence: i32,
    pub last_offset: i64,
    pub offset_delta: i32,
    pub timestamp: i64,
    pub coordinator_epoch: i32,
    pub current_txn_first_offset: i64,
}

const PRODUCER_ENTRY_SIZE: usize = 8 + 2 + 4 + 8 + 4 + 8 + 4 + 8;
/// The snapshot's CRC covers the bytes after the version (2) and CRC (4) fields.
const PRODUCER_ENTRIES_AT: usize = 6;

/// Why a producer snapshot could not be read: Kafka's `CorruptSnapshotException` messages.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SnapshotError {
    /// The bytes do not hold the schema; the text is what Kafka's schema reader says.
    #[error("Snapshot failed schema validation: {0}")]
    Schema(String),
    #[error(
        "Snapshot is corrupt (CRC is no longer valid). Stored crc: {stored}. Computed crc: {computed}"
    )]
    Crc { stored: u32, computed: u32 },
}

/// Reads a producer-state snapshot (`<offset>.snapshot`): int16 version 1, uint32 CRC-32C of
/// the rest, then an int32 count of fixed-size entries. Extra bytes after the entries are
/// ignored, as Kafka's reader ignores them (they are still covered by the CRC).
pub fn producer_snapshot(bytes: &[u8]) -> Result<Vec<ProducerEntry>, SnapshotError> {
    if bytes.len() < 2 {
        // Kafka's ByteBuffer.getShort fails with an exception that has no message.
        return Err(SnapshotError::Schema("null".into()));
    }
    let version = be_i16(bytes, 0);
    if version != 1 {
        // Kafka wraps its unknown-version message in a schema failure.
        return Err(SnapshotError::Schema(format!(
            "Snapshot contained an unknown file version {version}"
        )));
    }
    let entries = schema_entries(bytes)?;
    let stored = be_i32(bytes, 2) as u32;
    let computed = crc32c::crc32c(&bytes[PRODUCER_ENTRIES_AT..]);
    if stored != computed {
        return Err(SnapshotError::Crc { stored, computed });
    }
    Ok(entries)
}

/// The bytes of a producer-state snapshot holding `entries`, as Kafka writes them (version 1).
pub fn encode_producer_snapshot(entries: &[ProducerEntry]) -> Vec<u8> {
    let mut body = Vec::with_capacity(4 + entries.len() * PRODUCER_ENTRY_SIZE);
    body.extend((entries.len() as i32).to_be_bytes());
    for e in entries {
        body.extend(e.producer_id.to_be_bytes());
        body.extend(e.epoch.to_be_bytes());
        body.extend(e.last_sequence.to_be_bytes());
        body.extend(e.last_offset.to_be_bytes());
        body.extend(e.offset_delta.to_be_bytes());
        body.extend(e.timestamp.to_be_bytes());
        body.extend(e.coordinator_epoch.to_be_bytes());
        body.extend(e.current_txn_first_offset.to_be_bytes());
    }
    let mut out = Vec::with_capacity(PRODUCER_ENTRIES_AT + body.len());
    out.extend(1i16.to_be_bytes());
    out.extend(crc32c::crc32c(&body).to_be_bytes());
    out.extend(body);
    out
}

/// The [`ABORTED_TXN_SIZE`] bytes of a `.txnindex` entry (version 0).
pub fn encode_aborted_txn(t: &AbortedTxn) -> [u8; ABORTED_TXN_SIZE] {
    let mut b = [0u8; ABORTED_TXN_SIZE];
    b[2..10].copy_from_slice(&t.producer_id.to_be_bytes());
    b[10..18].copy_from_slice(&t.first_offset.to_be_bytes());
    b[18..26].copy_from_slice(&t.last_offset.to_be_bytes());
    b[26..34].copy_from_slice(&t.last_stable_offset.to_be_bytes());
    b
}

/// The entries after the version, as Kafka's generated `ProducerSnapshot` reader takes them.
fn schema_entries(bytes: &[u8]) -> Result<Vec<ProducerEntry>, SnapshotError> {
    if bytes.len() < PRODUCER_ENTRIES_AT + 4 {
        // A buffer underflow, which has no message.
        return Err(SnapshotError::Schema("null".into()));
    }
    let count = be_i32(bytes, PRODUCER_ENTRIES_AT);
    let body = &bytes[PRODUCER_ENTRIES_AT + 4..];
    if count < 0 {
        return Err(SnapshotError::Schema(
            "non-nullable field producerEntries was serialized as null".into(),
        ));
    }
    if count as usize > body.len() {
        return Err(SnapshotError::Schema(format!(
            "Tried to allocate a collection of size {count}, but there are only {} bytes \
             remaining.",
            body.len()
        )));
    }
    let count = count as usize;
    if count * PRODUCER_ENTRY_SIZE > body.len() {
        return Err(SnapshotError::Schema("null".into()));
    }
    Ok(body
        .chunks_exact(PRODUCER_ENTRY_SIZE)
        .take(count)
        .map(|e| ProducerEntry {
            producer_id: be_i64(e, 0),
            epoch: be_i16(e, 8),
            last_sequence: be_i32(e, 10),
            last_offset: be_i64(e, 14),
            offset_delta: be_i32(e, 22),
            timestamp: be_i64(e, 26),
            coordinator_epoch: be_i32(e, 34),
            current_txn_first_offset: be_i64(e, 38),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn producer_snapshots_round_trip_and_check_their_crc() {
        let entry = ProducerEntry {
            producer_id: 7,
            epoch: 1,
            last_sequence: 9,
            last_offset: 41,
            offset_delta: 4,
            timestamp: 1_700_000_000_000,
            coordinator_epoch: -1,
            current_txn_first_offset: -1,
        };
        let mut bytes = encode_producer_snapshot(&[entry, entry]);
        assert_eq!(producer_snapshot(&bytes).unwrap(), vec![entry, entry]);
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        assert!(matches!(
            producer_snapshot(&bytes),
            Err(SnapshotError::Crc { .. })
        ));
        bytes[1] = 2;
        assert_eq!(
            producer_snapshot(&bytes).unwrap_err().to_string(),
            "Snapshot failed schema validation: Snapshot contained an unknown file version 2"
        );
    }

    #[test]
    fn index_entries() {
        let mut b = [0u8; 12];
        b[..8].copy_from_slice(&(-5i64).to_be_bytes());
        b[8..].copy_from_slice(&3i32.to_be_bytes());
        assert_eq!(time_entry(&b), (-5, 3));
        let b = [0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff];
        assert_eq!(offset_entry(&b), (1, -1));
    }
}
