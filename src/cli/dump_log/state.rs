//! Dumping a partition's producer state (`.snapshot`) and aborted transactions (`.txnindex`).

use super::java::{self, JavaError, optional_long};
use super::{Out, Stop};
use crate::log_files::{ABORTED_TXN_SIZE, aborted_txn, producer_snapshot};

/// One line per producer. A snapshot that does not read is reported on stderr and the dump
/// goes on, as in Kafka.
pub fn dump_producer_snapshot(display: &str, out: &mut Out) -> Result<(), Stop> {
    let bytes = std::fs::read(display).map_err(|e| java::open_error(display, &e))?;
    let entries = match producer_snapshot(&bytes) {
        Ok(entries) => entries,
        Err(e) => {
            // After what is already on stdout, as Kafka's unbuffered streams show it.
            out.flush()?;
            eprintln!("{e}");
            return Ok(());
        }
    };
    for e in entries {
        let txn_first = (e.current_txn_first_offset >= 0).then_some(e.current_txn_first_offset);
        let mut line = format!(
            "producerId: {} producerEpoch: {} coordinatorEpoch: {} currentTxnFirstOffset: {} \
             lastTimestamp: {}",
            e.producer_id,
            e.epoch,
            e.coordinator_epoch,
            optional_long(txn_first),
            e.timestamp
        );
        // Kafka keeps the last batch's metadata only when the snapshot names an offset.
        if e.last_offset >= 0 {
            line.push_str(&format!(
                " firstSequence: {} lastSequence: {} lastOffset: {} offsetDelta: {} timestamp: {}",
                decrement_sequence(e.last_sequence, e.offset_delta),
                e.last_sequence,
                e.last_offset,
                e.offset_delta,
                e.timestamp
            ));
        }
        out.line(&line)?;
    }
    Ok(())
}

/// `DefaultRecordBatch.decrementSequence`: sequences wrap below 0 to `i32::MAX`.
fn decrement_sequence(sequence: i32, decrement: i32) -> i32 {
    if sequence < decrement {
        return i32::MAX
            .wrapping_sub(decrement.wrapping_sub(sequence))
            .wrapping_add(1);
    }
    sequence.wrapping_sub(decrement)
}

/// One line per aborted transaction; a missing file has none (Kafka's index is created only
/// when written). Every entry is read before the first is printed.
pub fn dump_txn_index(display: &str, name: &str, out: &mut Out) -> Result<(), Stop> {
    let prefix = &name[..name.find('.').unwrap_or(name.len())];
    java::parse_long(prefix)?;
    let bytes = match std::fs::read(display) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(java::open_error(display, &e).into()),
    };
    let mut lines = Vec::new();
    for chunk in bytes.chunks_exact(ABORTED_TXN_SIZE) {
        let txn = aborted_txn(chunk.try_into().expect("34 bytes"));
        if txn.version > 0 {
            return Err(JavaError::kafka(format!(
                "Unexpected aborted transaction version {} in transaction index {}, current \
                 version is 0",
                txn.version,
                java::absolute(display)
            ))
            .into());
        }
        lines.push(format!(
            "version: {} producerId: {} firstOffset: {} lastOffset: {} lastStableOffset: {}",
            txn.version, txn.producer_id, txn.first_offset, txn.last_offset, txn.last_stable_offset
        ));
    }
    for line in lines {
        out.line(&line)?;
    }
    Ok(())
}
