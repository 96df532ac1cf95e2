//! The producer on either backend: one accumulator (Kafka's partitioner, a batch builder per
//! partition, the size checks) that hands finished batches to the backend. The embedded log
//! writes them at each flush; a cluster pipelines them to the partitions' leaders as they come.
//! The same input so becomes the same record batches on both.

use std::time::Duration;

use kafka_protocol::ResponseError;

use super::{Backend, Client, ClientError, Result};
pub use crate::kafka::producer::ProducerSettings;
use crate::local::producer::LocalWriter;
use crate::local::txn_admin::LocalTransactions;
use crate::partitioner::Partitioner;
use crate::record::{BATCH_OVERHEAD, BatchBuilder, Compression};
use crate::remote;

/// How large a batch may grow while more input is already waiting, unless `batch.size` was
/// given (librdkafka's default batch size). A broker handles one connection's requests one at
/// a time, each carrying one batch per partition, so bulk input into few partitions goes as
/// fast as the batches are large; input that pauses still goes out in batches of
/// `batch.size`, as Kafka's producer sends them.
pub const BULK_BATCH: usize = 1_000_000;
/// Kafka's default `max.message.bytes`, for a cluster that does not say (no rights to
/// describe configs, say).
const DEFAULT_MAX_MESSAGE_BYTES: usize = 1_048_588;

/// How records become batches: the same on both backends.
#[derive(Debug, Clone)]
pub struct BatchSettings {
    pub compression: Compression,
    /// `batch.size`: a batch this full is ready to go.
    pub batch_size: usize,
    /// `batch.size` was given: batches never grow past it (else see [`BULK_BATCH`]).
    pub batch_size_given: bool,
    /// `max.request.size`: the largest record the producer takes.
    pub max_request_size: usize,
}

/// One record to send, borrowed from its input.
#[derive(Debug, Clone, Copy)]
pub struct ProducerRecord<'a> {
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
    pub headers: &'a [(&'a str, Option<&'a [u8]>)],
    pub timestamp: i64,
    /// The partition to write to; `None`: Kafka's partitioner chooses.
    pub partition: Option<u32>,
}

/// A producer for one topic.
#[derive(Debug)]
pub struct Producer {
    topic: String,
    sink: Sink,
    settings: BatchSettings,
    partitioner: Partitioner,
    /// One per partition; empty until the topic is known.
    builders: Vec<BatchBuilder>,
    /// How large a batch may grow (see [`BULK_BATCH`]).
    batch_limit: usize,
    /// The topic's `max.message.bytes`, where the backend checks records against it as they
    /// are added (the embedded log); a cluster's broker checks it itself.
    record_limit: Option<usize>,
    /// On the embedded log, whether the topic is compacted: its records need keys (a
    /// cluster's broker refuses keyless ones itself).
    keys_required: bool,
    /// Bytes in the builders.
    pending_bytes: usize,
    /// What the batches handed to the backend so far were like.
    stats: BatchStats,
    /// `transactional.id` and `transaction.timeout.ms`, when the records go in transactions.
    transactional: Option<(String, i32)>,
    /// The embedded log's coordinator of the transactional id (this process).
    local_transactions: Option<LocalTransactions>,
    /// A transaction is open: records were sent since the last commit.
    in_transaction: bool,
}

/// The batches a producer handed to its backend, for its metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BatchStats {
    /// Batches handed over.
    pub batches: u64,
    /// Records in them.
    pub records: u64,
    /// Their sizes before compression (records and batch headers), added up.
    pub bytes: u64,
    /// The largest one's size before compression.
    pub max_bytes: u64,
}

/// Where finished batches go.
#[derive(Debug)]
// One per process: the size difference between the variants costs nothing.
#[allow(clippy::large_enum_variant)]
enum Sink {
    Local(LocalWriter),
    Remote(remote::Producer),
}

impl Client {
    /// A producer for `topic`: `batching` shapes the batches; `delivery` says how a cluster is
    /// written to (acks, retries, idempotence; the embedded log makes every flush durable).
    /// Nothing is sent until the first record.
    pub fn into_producer(
        self,
        topic: &str,
        batching: BatchSettings,
        delivery: ProducerSettings,
    ) -> Producer {
        let transactional = delivery
            .transactional_id
            .clone()
            .map(|id| (id, delivery.transaction_timeout_ms));
        let sink = match self.backend {
            Backend::Local(dir) => Sink::Local(LocalWriter::new(dir, topic)),
            Backend::Remote(cluster) => Sink::Remote(cluster.into_producer(topic, delivery)),
        };
        Producer {
            topic: topic.to_string(),
            sink,
            partitioner: Partitioner::new(1, batching.batch_size),
            batch_limit: batching.batch_size,
            settings: batching,
            builders: Vec::new(),
            record_limit: None,
            keys_required: false,
            pending_bytes: 0,
            stats: BatchStats::default(),
            transactional,
            local_transactions: None,
            in_transaction: false,
        }
    }
}

impl Producer {
    /// Adds a record to its partition's batch, handing the batch over first when the record
    /// would not fit. A record refused by the checks is [`ClientError::InvalidRecord`].
    pub fn send(&mut self, record: ProducerRecord<'_>) -> Result<()> {
        self.send_to(record).map(|_| ())
    }

    /// [`Producer::send`], returning the partition the record went to (for
    /// [`Producer::acknowledged`]).
    pub fn send_to(&mut self, record: ProducerRecord<'_>) -> Result<u32> {
        if self.builders.is_empty() {
            self.start()?;
        }
        if self.transactional.is_some() && !self.in_transaction {
            self.begin_transaction()?;
        }
        let ProducerRecord {
            key,
            value,
            headers,
            timestamp,
            partition,
        } = record;
        let record_size = BatchBuilder::record_size(key, value, headers);
        let size = record_size.bytes();
        let max = self.settings.max_request_size;
        if size + BATCH_OVERHEAD > max {
            return Err(invalid(
                ResponseError::MessageTooLarge,
                format!(
                    "The message is {} bytes when serialized which is larger than {max}, which is the value of the max.request.size configuration.",
                    size + BATCH_OVERHEAD
                ),
            ));
        }
        if let Some(max) = self.record_limit
            && size + BATCH_OVERHEAD > max
        {
            return Err(invalid(
                ResponseError::MessageTooLarge,
                format!(
                    "a record of {} bytes is larger than the topic's max.message.bytes ({max}); split the line or create the topic with a larger --config max.message.bytes",
                    size + BATCH_OVERHEAD
                ),
            ));
        }
        let partitions = self.builders.len() as u32;
        let p = match partition {
            Some(p) if p < partitions => p as usize,
            Some(p) => {
                return Err(invalid(
                    ResponseError::UnknownTopicOrPartition,
                    format!(
                        "the record names partition {p}, but topic '{}' has {partitions} partition(s)",
                        self.topic
                    ),
                ));
            }
            None => self.partitioner.partition(key, size) as usize,
        };
        if key.is_none() && self.keys_required {
            // Kafka's broker refuses it so (LogValidator), the batch with it.
            return Err(invalid(
                ResponseError::InvalidRecord,
                format!(
                    "Compacted topic cannot accept message without key in topic partition {}-{p}",
                    self.topic
                ),
            ));
        }
        if !self.builders[p].is_empty() && self.builders[p].size() + size > self.batch_limit {
            self.hand_over(p)?;
        }
        let builder = &mut self.builders[p];
        let before = builder.size();
        builder.append_sized(record_size, timestamp, key, value, headers);
        self.pending_bytes += builder.size() - before;
        Ok(p as u32)
    }

    /// Learns the topic (its partitions, a producer id when idempotent, its limits) and sets
    /// up a builder per partition.
    fn start(&mut self) -> Result<()> {
        let (partitions, producer_id, topic_max) = match &mut self.sink {
            Sink::Local(writer) => {
                let meta = writer.open()?;
                self.record_limit = Some(meta.max_message_bytes());
                self.keys_required = meta.is_compacted();
                let (partitions, max) = (meta.partitions, meta.max_message_bytes());
                // Records in transactions carry the id's producer id and epoch.
                let producer = match &self.transactional {
                    Some((id, timeout)) => {
                        let txn = LocalTransactions::init(writer.dir(), id, *timeout)?;
                        let producer = txn.producer();
                        self.local_transactions = Some(txn);
                        Some(producer)
                    }
                    None => None,
                };
                (partitions, producer, Some(max))
            }
            Sink::Remote(producer) => (
                producer.partitions()?,
                producer.producer_id(),
                producer.max_message_bytes(),
            ),
        };
        self.partitioner = Partitioner::new(partitions, self.settings.batch_size);
        self.batch_limit = batch_limit(
            &self.settings,
            topic_max.unwrap_or(DEFAULT_MAX_MESSAGE_BYTES),
        );
        // Each builder numbers its batches' records from sequence 0 on, one partition each.
        self.builders = (0..partitions)
            .map(|_| {
                let mut b = BatchBuilder::new(self.settings.compression);
                if let Some((id, epoch)) = producer_id {
                    b.set_producer(id, epoch, 0);
                }
                b.set_transactional(self.transactional.is_some());
                b
            })
            .collect();
        Ok(())
    }

    /// Hands partition `p`'s batch to the backend.
    fn hand_over(&mut self, p: usize) -> Result<()> {
        let builder = &mut self.builders[p];
        self.pending_bytes -= builder.size() - BATCH_OVERHEAD;
        let size = builder.size() as u64;
        self.stats.batches += 1;
        self.stats.records += builder.len() as u64;
        self.stats.bytes += size;
        self.stats.max_bytes = self.stats.max_bytes.max(size);
        match &mut self.sink {
            Sink::Local(writer) => Ok(writer.queue(p, builder)?),
            Sink::Remote(producer) => Ok(producer.push(p as u32, builder.build(0)?.into())?),
        }
    }

    /// Hands every partial batch to the backend.
    fn hand_over_all(&mut self) -> Result<()> {
        for p in 0..self.builders.len() {
            if !self.builders[p].is_empty() {
                self.hand_over(p)?;
            }
        }
        Ok(())
    }

    /// Input paused: hands over the batches that `batch.size` calls full, as Kafka's producer
    /// would have sent them by now; smaller ones wait for the linger.
    pub fn input_paused(&mut self) -> Result<()> {
        for p in 0..self.builders.len() {
            if self.builders[p].size() >= self.settings.batch_size {
                self.hand_over(p)?;
            }
        }
        Ok(())
    }

    /// The linger passed: every partial batch goes. The embedded log writes them durably; a
    /// cluster gets them without waiting for the answers.
    pub fn send_lingered(&mut self) -> Result<()> {
        self.hand_over_all()?;
        match &mut self.sink {
            Sink::Local(writer) => Ok(writer.flush()?),
            Sink::Remote(_) => Ok(()),
        }
    }

    /// The linger passed, for a producer that counts acknowledgements: every partial batch
    /// goes, without waiting for anything (the embedded log hands them to its writer unless
    /// it is still busy with earlier ones, which then take them along).
    pub fn send_partial(&mut self) -> Result<()> {
        self.hand_over_all()?;
        match &mut self.sink {
            Sink::Local(writer) => Ok(writer.hand_over_if_idle()?),
            Sink::Remote(_) => Ok(()),
        }
    }

    /// How many records of each partition are acknowledged so far (durable on the embedded
    /// log, acknowledged as `acks` asks by a cluster), counting from the first sent to it:
    /// records of a partition are acknowledged in the order sent. Waits up to `wait` for an
    /// acknowledgement when none is there yet; sends nothing that was not handed over already.
    pub fn acknowledged(&mut self, wait: Duration) -> Result<Vec<u64>> {
        match &mut self.sink {
            Sink::Local(writer) => Ok(writer.acknowledged(wait)?.to_vec()),
            Sink::Remote(producer) => {
                producer.poll(wait)?;
                Ok(producer.acked_records().collect())
            }
        }
    }

    /// What the batches handed to the backend so far were like.
    pub fn batch_stats(&self) -> BatchStats {
        self.stats
    }

    /// Sends everything added so far and returns once it is durable (the embedded log) or
    /// acknowledged as `acks` asks (a cluster).
    pub fn flush(&mut self) -> Result<()> {
        self.hand_over_all()?;
        match &mut self.sink {
            Sink::Local(writer) => Ok(writer.flush()?),
            Sink::Remote(producer) => Ok(producer.flush()?),
        }
    }

    /// Kafka's `initTransactions`: gets the `transactional.id`'s producer id and a new epoch,
    /// which fences earlier producers of the id and ends the transaction they left open.
    /// Optional: the first record or [`Producer::begin_transaction`] does it when it has not
    /// been done. Without a `transactional.id` it is an error, as in Kafka.
    pub fn init_transactions(&mut self) -> Result<()> {
        if self.transactional.is_none() {
            return Err(ClientError::Kafka {
                kind: ResponseError::InvalidTxnState,
                message: "Transactional method invoked on a non-transactional producer: set a transactional.id".to_string(),
            });
        }
        if self.builders.is_empty() {
            self.start()?;
        }
        Ok(())
    }

    /// Kafka's `beginTransaction`: opens a transaction over every partition of the topic
    /// (Kafka's transaction version 1: the partitions join before their first record). The
    /// first record after a commit or an abort opens one too; opening one that is open does
    /// nothing. Without a `transactional.id` it is an error, as in Kafka.
    pub fn begin_transaction(&mut self) -> Result<()> {
        self.init_transactions()?;
        if self.in_transaction {
            return Ok(());
        }
        let partitions: Vec<(String, i32)> = (0..self.builders.len() as i32)
            .map(|p| (self.topic.clone(), p))
            .collect();
        match &mut self.sink {
            Sink::Local(_) => {
                if let Some(txn) = &mut self.local_transactions {
                    txn.begin(&partitions)?;
                }
            }
            Sink::Remote(producer) => producer.begin_transaction()?,
        }
        self.in_transaction = true;
        Ok(())
    }

    /// Adds a consumer group's offsets (topic, partition, the next offset to read) to the
    /// transaction, opening one if none is: the group's committed offsets become these when
    /// the transaction commits, and stay as they were when it aborts (Kafka's
    /// `sendOffsetsToTransaction`, for consume-transform-produce loops). Nothing happens
    /// without a `transactional.id`.
    pub fn send_offsets_to_transaction(
        &mut self,
        group: &str,
        offsets: &[(crate::kafka::TopicPartition, i64)],
    ) -> Result<()> {
        if self.transactional.is_none() {
            return Ok(());
        }
        if self.builders.is_empty() {
            self.start()?;
        }
        if !self.in_transaction {
            self.begin_transaction()?;
        }
        match &mut self.sink {
            Sink::Local(_) => {
                if let Some(txn) = &mut self.local_transactions {
                    txn.add_offsets(group, offsets)?;
                }
            }
            Sink::Remote(producer) => producer.send_offsets_to_transaction(group, offsets)?,
        }
        Ok(())
    }

    /// Commits the open transaction: every record sent since the last commit is written
    /// (durable, or acknowledged as `acks` asks), then its COMMIT markers. The next record
    /// opens the next transaction. Nothing happens when no transaction is open.
    pub fn commit_transaction(&mut self) -> Result<()> {
        self.end_transaction(true)
    }

    /// Aborts the open transaction: what was sent since the last commit is written, then its
    /// ABORT markers, so that `read_committed` readers skip it.
    pub fn abort_transaction(&mut self) -> Result<()> {
        self.end_transaction(false)
    }

    fn end_transaction(&mut self, commit: bool) -> Result<()> {
        if !self.in_transaction {
            return Ok(());
        }
        self.flush()?;
        match &mut self.sink {
            Sink::Local(_) => {
                if let Some(txn) = &mut self.local_transactions {
                    txn.end(commit)?;
                }
            }
            Sink::Remote(producer) => producer.end_transaction(commit)?,
        }
        self.in_transaction = false;
        Ok(())
    }

    /// Flushes and ends the producer. A transaction still open is aborted: only
    /// [`Producer::commit_transaction`] commits.
    pub fn close(mut self) -> Result<()> {
        self.flush()?;
        self.end_transaction(false)?;
        match self.sink {
            Sink::Local(writer) => {
                writer.clean_written();
                Ok(())
            }
            Sink::Remote(producer) => Ok(producer.close()?),
        }
    }

    /// Bytes added and not yet sent or written.
    pub fn pending_bytes(&self) -> usize {
        let buffered = match &self.sink {
            Sink::Local(writer) => writer.buffered_bytes(),
            Sink::Remote(_) => 0,
        };
        self.pending_bytes + buffered
    }
}

/// The largest batch to build: `batch.size` when it was given; otherwise up to
/// [`BULK_BATCH`], within `max.request.size` and the topic's `max.message.bytes` (with room
/// for a codec that grows incompressible data), never below `batch.size`.
fn batch_limit(settings: &BatchSettings, topic_max: usize) -> usize {
    let configured = settings.batch_size.min(settings.max_request_size);
    if settings.batch_size_given {
        return configured;
    }
    BULK_BATCH
        .min(settings.max_request_size)
        .min(topic_max / 16 * 15)
        .max(configured)
}

fn invalid(kind: ResponseError, message: String) -> ClientError {
    ClientError::InvalidRecord { kind, message }
}
