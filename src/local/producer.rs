//! The embedded log's end of the producer: finished batches wait per partition and are
//! written at a flush, one write and one fdatasync per partition. After a failed append the
//! writer writes nothing more (see [`LocalWriter::flush`]).

use kafka_protocol::ResponseError;

use super::lock::LockMode;
use super::{LocalError, LogDir, TopicMeta};
use crate::client::{ClientError, Result};
use crate::record::BatchBuilder;

/// Writes one topic's batches to the embedded log.
#[derive(Debug)]
pub struct LocalWriter {
    dir: LogDir,
    topic: String,
    meta: Option<TopicMeta>,
    /// Finished batches per partition, waiting for the next flush.
    pending: Vec<Vec<u8>>,
    pending_bytes: usize,
    /// Why an append failed, once one has: no later flush writes anything.
    failed: Option<String>,
}

impl LocalWriter {
    /// A writer for `topic`; nothing is touched until [`LocalWriter::open`].
    pub fn new(dir: LogDir, topic: &str) -> LocalWriter {
        LocalWriter {
            dir,
            topic: topic.to_string(),
            meta: None,
            pending: Vec::new(),
            pending_bytes: 0,
            failed: None,
        }
    }

    /// The topic's metadata, creating the topic on first use when the log dir allows it
    /// (`auto.create.topics.enable`, with `num.partitions`), as a broker does.
    pub fn open(&mut self) -> Result<&TopicMeta> {
        if self.meta.is_none() {
            let meta = match self.dir.topic(&self.topic)? {
                Some(meta) => meta,
                None if self.dir.auto_create_topics()? => {
                    let partitions = self.dir.default_partitions()?;
                    match self
                        .dir
                        .create_topic(&self.topic, partitions, Default::default())
                    {
                        Ok(meta) => meta,
                        Err(LocalError::TopicExists(_)) => self.dir.require_topic(&self.topic)?,
                        Err(e) => return Err(e.into()),
                    }
                }
                None => {
                    return Err(ClientError::kafka(
                        ResponseError::UnknownTopicOrPartition,
                        format!(
                            "Topic '{}' does not exist and auto.create.topics.enable=false in {}; create it with kafka-topics --create --topic {}",
                            self.topic,
                            self.dir.root().join("config.properties").display(),
                            self.topic
                        ),
                    ));
                }
            };
            self.pending = vec![Vec::new(); meta.partitions as usize];
            self.meta = Some(meta);
        }
        Ok(self.meta.as_ref().expect("set above"))
    }

    /// Finishes `builder`'s batch into partition `p`'s queue.
    pub fn queue(&mut self, p: usize, builder: &mut BatchBuilder) -> Result<()> {
        let queue = &mut self.pending[p];
        let before = queue.len();
        builder.build_into(0, queue)?;
        self.pending_bytes += queue.len() - before;
        Ok(())
    }

    /// Bytes queued and not yet written.
    pub fn buffered_bytes(&self) -> usize {
        self.pending_bytes
    }

    /// Writes every queued batch: one write and one fdatasync per partition.
    ///
    /// A failed append (a write or an fdatasync) fails this writer for good: once an fsync
    /// has failed, what the kernel holds for the file says nothing about the disk (the
    /// "fsyncgate" lesson), so nothing is tried again in this process and every later flush
    /// fails too. The failed append was undone; the next process checks the tail afresh.
    pub fn flush(&mut self) -> Result<()> {
        if let Some(why) = &self.failed {
            return Err(LocalError::Invalid(format!(
                "nothing more is written to topic '{}' after a failed write ({why})",
                self.topic
            ))
            .into());
        }
        let Some(meta) = &self.meta else {
            return Ok(());
        };
        if self.pending_bytes == 0 {
            return Ok(());
        }
        let config = meta.partition_config();
        // The shared log-dir lock keeps topic deletion out while we write.
        let _lock = self.dir.lock(LockMode::Shared)?;
        if self.dir.topic(&meta.name)?.is_none_or(|t| t.id != meta.id) {
            return Err(ClientError::kafka(
                ResponseError::UnknownTopicOrPartition,
                format!(
                    "topic '{}' was deleted while producing; the records read since the last flush were not written",
                    meta.name
                ),
            ));
        }
        for (p, batches) in self.pending.iter_mut().enumerate() {
            if batches.is_empty() {
                continue;
            }
            let log = self.dir.partition(&meta.name, p as u32)?;
            if let Err(e) = log.append(batches, &config) {
                let e = ClientError::from(e)
                    .context(format!("cannot write to partition {}-{p}", meta.name));
                self.failed = Some(e.to_string());
                return Err(e);
            }
            batches.clear();
        }
        self.pending_bytes = 0;
        Ok(())
    }
}
