//! A hook for the fuzz targets (feature `fuzzing`): one partition's Fetch answer, as a broker
//! may send it, taken and walked by the consumer engine's own code ([`take_fetched`], as the
//! cluster backend loads it, and [`Consumer::deliver`]): batches split, skipped below the
//! position, control batches and aborted transactions left out, records handed to a caller,
//! delivery marks settled.
//!
//! A child of the consumer module so that it can reach the engine's private parts without
//! widening what the module exports.

use std::cell::RefCell;

use super::backend::Loaded;
use super::cluster::take_fetched;
use super::{Assigned, Consumer, Handled, Isolation};
use crate::local::LogDir;
use crate::remote::fetch::PartitionData;

/// How the walk goes.
#[derive(Debug, Default)]
pub(crate) struct Walk {
    /// The partition's position: the offset of the first record wanted.
    pub position: i64,
    pub read_committed: bool,
    /// `--timeout`-less bounded reads: stop at the first record after this time.
    pub until_time: Option<i64>,
    /// The caller stops after this many records.
    pub stop_after: Option<u32>,
    /// The caller leaves every other record undelivered (as when output fails part way).
    pub leave_undelivered: bool,
}

thread_local! {
    /// One consumer for the process, reset before each walk (making one per input would
    /// spend the fuzzer's time on setup). Its backend, an empty log dir, is never used by a
    /// walk, so the partition a walk assigns is not opened on it.
    static CONSUMER: RefCell<Option<Consumer>> = const { RefCell::new(None) };
}

fn consumer() -> Consumer {
    let dir = crate::fuzzing::scratch_dir("consumer");
    let dir = LogDir::open(&dir).expect("a log dir for the fuzz consumer");
    let mut consumer = Consumer::on_topic_t(dir);
    consumer.started = true;
    consumer
}

/// Walks `records` (one partition's batches from a Fetch response, with its aborted
/// transactions as `(producer id, first offset)`) as a consumer round does. Panics if a record
/// is handed over below the position or out of order, or if a position moves backwards.
pub(crate) fn walk_fetched(records: &[u8], aborted: Vec<(i64, i64)>, walk: &Walk) {
    CONSUMER.with_borrow_mut(|slot| {
        let c = slot.get_or_insert_with(consumer);
        c.config.isolation = match walk.read_committed {
            true => Isolation::ReadCommitted,
            false => Isolation::ReadUncommitted,
        };
        c.config.until_time = walk.until_time;
        c.marks.clear();
        c.assigned = vec![Assigned::new("t".to_string(), 0, walk.position, i64::MAX)];
        let data = PartitionData {
            end_offset: i64::MAX,
            records: bytes::Bytes::copy_from_slice(records),
            aborted,
        };
        let Loaded::Batches {
            aborted,
            crc_checked,
        } = take_fetched(&mut c.assigned[0], data, &mut c.fetched)
        else {
            panic!("a fetched partition loads as batches");
        };
        let mut next = walk.position;
        let mut count = 0u32;
        let mut output = 0usize;
        let mut each = |r: super::ConsumedRecord<'_, '_>| {
            let offset = r.record.offset;
            assert!(
                offset >= next,
                "record {offset} handed over below position {next}"
            );
            next = offset.saturating_add(1);
            count += 1;
            output += 1;
            Handled {
                output_end: output,
                delivered: !(walk.leave_undelivered && count.is_multiple_of(2)),
                stop: walk.stop_after.is_some_and(|n| count >= n),
            }
        };
        let mut read_any = false;
        let _ = c.deliver(0, aborted, crc_checked, &mut each, &mut read_any);
        let a = &c.assigned[0];
        assert!(a.position >= walk.position, "the position moved backwards");
        assert_eq!(read_any, count > 0);
        let settled = c.settle(output);
        assert!(settled <= u64::from(count));
        let a = &c.assigned[0];
        assert!(a.delivered <= a.position, "delivered past the position");
    });
}
