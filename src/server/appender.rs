//! Group commit: produce requests for one partition queue up while an append is under way and
//! are then written together, with one write and one fdatasync, by one blocking task. So a
//! request is answered only once its data is durable, yet many concurrent producers share each
//! fsync instead of paying one each.
//!
//! The queue also holds what only its writer touches: the kept tail of the active segment (see
//! `KeptTail`) and the producers' sequence state, checked in append order.

use std::sync::{Arc, Mutex, MutexGuard};

use kafka_protocol::ResponseError;
use tokio::sync::oneshot;

use super::broker::{Broker, ServedPartition};
use super::sequences::{Sequences, Staged, Verdict};
use crate::local::KeptTail;
use crate::local::lock::LockMode;
use crate::record::BatchHeader;

/// A partition's answer to one produce: where its batches went, or an error code with a
/// message.
pub type Appended = Result<Written, (ResponseError, String)>;

/// Where a produce's batches went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Written {
    /// The offset of the first.
    pub base_offset: i64,
    /// The time they were stamped with on a `LogAppendTime` topic, else -1 (a produce's
    /// `log_append_time_ms`).
    pub log_append_time: i64,
}

impl Written {
    /// Batches already in the log (a retried produce): only their offset is answered.
    fn earlier(base_offset: i64) -> Written {
        Written {
            base_offset,
            log_append_time: -1,
        }
    }
}

/// Validated batches of one request for one partition, waiting to be written.
#[derive(Debug)]
pub struct Pending {
    /// Whole batches, concatenated.
    pub batches: Vec<u8>,
    /// Their headers, in order.
    pub headers: Vec<BatchHeader>,
    pub reply: oneshot::Sender<Appended>,
}

#[derive(Debug, Default)]
struct Waiting {
    pending: Vec<Pending>,
    /// A writer task is running and will take what is pending.
    writing: bool,
}

#[derive(Debug, Default)]
struct Writer {
    tail: KeptTail,
    sequences: Sequences,
}

/// One partition's produce queue.
#[derive(Debug, Default)]
pub struct AppendQueue {
    waiting: Mutex<Waiting>,
    writer: Mutex<Writer>,
}

fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Queues a request's batches for a partition at once, and returns a future of where they
/// were written, ready once they are durable. Requests queued one after another are written
/// in that order (the connection queues a pipelined produce before it reads the next).
pub fn append(
    broker: &Arc<Broker>,
    partition: &Arc<ServedPartition>,
    batches: Vec<u8>,
    headers: Vec<BatchHeader>,
) -> impl std::future::Future<Output = Appended> + Send + use<> {
    let (reply, answer) = oneshot::channel();
    let start_writer = {
        let mut w = locked(&partition.queue.waiting);
        w.pending.push(Pending {
            batches,
            headers,
            reply,
        });
        !std::mem::replace(&mut w.writing, true)
    };
    if start_writer {
        let (broker, partition) = (Arc::clone(broker), Arc::clone(partition));
        tokio::task::spawn_blocking(move || drain(&broker, &partition));
    }
    async move {
        answer.await.unwrap_or_else(|_| {
            Err((
                ResponseError::UnknownServerError,
                "the append task ended without an answer".to_string(),
            ))
        })
    }
}

/// Writes what is queued, group by group, until the queue is empty. Transaction markers are
/// written apart, after the data queued with them: an append with markers may fail after its
/// data is durable (the partition's transaction state could not be saved), and the
/// coordinator then writes its markers again, while a producer would write its data twice.
fn drain(broker: &Broker, partition: &ServedPartition) {
    loop {
        let group = {
            let mut w = locked(&partition.queue.waiting);
            if w.pending.is_empty() {
                w.writing = false;
                return;
            }
            std::mem::take(&mut w.pending)
        };
        let (markers, data): (Vec<Pending>, Vec<Pending>) = group
            .into_iter()
            .partition(|p| p.headers.iter().any(BatchHeader::is_control));
        for group in [data, markers] {
            if !group.is_empty() {
                write_group(broker, partition, group);
            }
        }
    }
}

/// Checks sequences in order, writes the accepted batches of every request in one append, and
/// answers each request.
fn write_group(broker: &Broker, partition: &ServedPartition, group: Vec<Pending>) {
    let mut writer = locked(&partition.queue.writer);
    look_up_earlier_producers(broker, partition, &mut writer.sequences, &group);
    let mut staged = Staged::new();
    let mut accepted: Vec<Pending> = Vec::with_capacity(group.len());
    let mut buffer = Vec::new();
    for request in group {
        match check_request(&writer.sequences, &mut staged, &request.headers) {
            Verdict::Append => {
                buffer.extend_from_slice(&request.batches);
                accepted.push(request);
            }
            Verdict::Duplicate(offset) => {
                let _ = request.reply.send(Ok(Written::earlier(offset)));
            }
            Verdict::Refuse(code, message) => {
                let _ = request.reply.send(Err((code, message)));
            }
        }
    }
    if accepted.is_empty() {
        return;
    }
    match write(broker, partition, &mut writer.tail, &mut buffer) {
        Ok((mut next, log_append_time)) => {
            for request in accepted {
                let base_offset = next;
                for h in &request.headers {
                    writer.sequences.written(h, next);
                    next += h.records_count as i64;
                }
                let _ = request.reply.send(Ok(Written {
                    base_offset,
                    log_append_time,
                }));
            }
            broker.notify_appended();
        }
        Err(failure) => {
            let producers = accepted
                .iter()
                .flat_map(|r| r.headers.iter().map(|h| h.producer_id))
                .collect::<Vec<_>>();
            writer.sequences.forget(producers);
            for request in accepted {
                let _ = request.reply.send(Err(failure.clone()));
            }
        }
    }
}

/// Rebuilds the sequence state of the producers in `group` that were handed their ids before
/// this run, from the log (see `sequences`). A failed lookup is logged: those producers'
/// batches are then taken as they come, as before.
fn look_up_earlier_producers(
    broker: &Broker,
    partition: &ServedPartition,
    sequences: &mut Sequences,
    group: &[Pending],
) {
    for h in group.iter().flat_map(|r| &r.headers) {
        if broker.is_of_an_earlier_run(h.producer_id)
            && let Err(e) = sequences.look_up(h.producer_id, &partition.log)
        {
            broker.log.warn(&format!(
                "The state of producer {} in {}-{} could not be read from the log: {e}",
                h.producer_id, partition.topic, partition.partition
            ));
        }
    }
}

/// A request's verdict: its batches are checked one after another (normally there is one).
fn check_request(sequences: &Sequences, staged: &mut Staged, headers: &[BatchHeader]) -> Verdict {
    let before = staged.clone();
    for h in headers {
        match sequences.check(staged, h) {
            Verdict::Append => {}
            // A retried request is a duplicate as a whole, or not at all.
            other => {
                *staged = before;
                return other;
            }
        }
    }
    Verdict::Append
}

/// Appends the buffer under the shared log-dir lock (which keeps a topic deletion out), after
/// checking that the topic is still the one the handle was made for. Returns the first offset
/// and the append time the batches were stamped with (-1: none).
fn write(
    broker: &Broker,
    partition: &ServedPartition,
    tail: &mut KeptTail,
    buffer: &mut [u8],
) -> Result<(i64, i64), (ResponseError, String)> {
    let failed = |e: crate::local::LocalError| {
        broker.log.error(&format!(
            "Append to {}-{} failed: {e}",
            partition.topic, partition.partition
        ));
        (ResponseError::KafkaStorageError, e.to_string())
    };
    let _lock = broker.dir.lock(LockMode::Shared).map_err(failed)?;
    let meta = match broker.topic(&partition.topic).map_err(failed)? {
        Some(meta) if meta.id == partition.topic_id => meta,
        _ => {
            return Err((
                ResponseError::UnknownTopicOrPartition,
                format!("topic '{}' was deleted", partition.topic),
            ));
        }
    };
    let result = partition
        .log
        .append_built(buffer, &meta.partition_config(), tail)
        .map_err(failed)?;
    if let Some(e) = result.retention_error {
        broker.log.warn(&format!(
            "Retention of {}-{} could not be applied after an append: {e}",
            partition.topic, partition.partition
        ));
    }
    Ok((result.base_offset, result.log_append_time.unwrap_or(-1)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{BatchBuilder, Compression};
    use crate::server::config::ServerConfig;
    use crate::server::log::{Level, Logger};

    /// Written at `base_offset`, on a topic without LogAppendTime.
    fn at(base_offset: i64) -> Appended {
        Ok(Written::earlier(base_offset))
    }

    fn batch(producer: i64, sequence: i32, values: &[&str]) -> (Vec<u8>, Vec<BatchHeader>) {
        let mut builder = BatchBuilder::new(Compression::None);
        builder.set_producer(producer, 0, sequence);
        // Now: older records would be deleted by retention (7 days) at the next append.
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64;
        for v in values {
            builder.append(now, None, Some(v.as_bytes()), &[]);
        }
        let bytes = builder.build(0).unwrap();
        let header = BatchHeader::parse(&bytes).unwrap();
        (bytes, vec![header])
    }

    #[test]
    fn retried_batch_is_answered_with_its_first_offset_and_written_once() {
        let root = tempfile::tempdir().unwrap();
        let dir = crate::local::LogDir::open(root.path()).unwrap();
        dir.create_topic("t", 1, Default::default()).unwrap();
        let config = ServerConfig::from_properties(&Default::default()).unwrap();
        let broker = Arc::new(Broker::new(
            dir,
            config,
            ("localhost".into(), 9092),
            Logger::new(Level::Error),
        ));
        let meta = broker.topic("t").unwrap().unwrap();
        let partition = broker.partition(&meta, 0).unwrap();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let (first, h) = batch(5, 0, &["a", "b"]);
            assert_eq!(
                append(&broker, &partition, first.clone(), h.clone()).await,
                at(0)
            );
            // The same batch again (a producer retrying after a lost answer).
            assert_eq!(append(&broker, &partition, first, h).await, at(0));
            let (next, h) = batch(5, 2, &["c"]);
            assert_eq!(append(&broker, &partition, next, h).await, at(2));
            // A gap in the sequence is refused and writes nothing.
            let (gap, h) = batch(5, 9, &["d"]);
            assert!(matches!(
                append(&broker, &partition, gap, h).await,
                Err((ResponseError::OutOfOrderSequenceNumber, _))
            ));
        });
        let snapshot = partition.log.snapshot().unwrap();
        assert_eq!(snapshot.log_end_offset, 3);
    }

    /// After a restart (a new broker on the same directory), a batch written before it and
    /// sent again is a duplicate, found in the log; the next one continues the sequence.
    #[test]
    fn a_producer_from_before_a_restart_is_checked_against_the_log() {
        let root = tempfile::tempdir().unwrap();
        let dir = crate::local::LogDir::open(root.path()).unwrap();
        dir.create_topic("t", 1, Default::default()).unwrap();
        let new_broker = || {
            let dir = crate::local::LogDir::open(root.path()).unwrap();
            let config = ServerConfig::from_properties(&Default::default()).unwrap();
            let log = Logger::new(Level::Error);
            Arc::new(Broker::new(dir, config, ("localhost".into(), 9092), log))
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap();
        let (first, h1) = batch(5, 0, &["a", "b"]);
        let (second, h2) = batch(5, 2, &["c"]);
        let before = new_broker();
        let meta = before.topic("t").unwrap().unwrap();
        let partition = before.partition(&meta, 0).unwrap();
        runtime.block_on(async {
            assert_eq!(append(&before, &partition, first, h1).await, at(0));
            assert_eq!(
                append(&before, &partition, second.clone(), h2.clone()).await,
                at(2)
            );
        });
        drop((before, partition));
        let after = new_broker();
        let partition = after.partition(&meta, 0).unwrap();
        runtime.block_on(async {
            assert_eq!(append(&after, &partition, second, h2).await, at(2));
            let (third, h3) = batch(5, 3, &["d"]);
            assert_eq!(append(&after, &partition, third, h3).await, at(3));
            let (gap, h) = batch(5, 9, &["e"]);
            assert!(matches!(
                append(&after, &partition, gap, h).await,
                Err((ResponseError::OutOfOrderSequenceNumber, _))
            ));
        });
        assert_eq!(partition.log.snapshot().unwrap().log_end_offset, 4);
    }
}
