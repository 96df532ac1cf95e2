//! The embedded log's end of the producer: finished batches wait per partition and are
//! written at a flush, one write and one fdatasync per partition.

use kafka_protocol::ResponseError;

use super::lock::LockMode;
use super::{LogDir, TopicMeta};
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
        }
    }

    /// The topic's metadata, creating the topic on first use when the log dir allows it
    /// (`auto.create.topics.enable`, with `num.partitions`), as a broker does.
    pub fn open(&mut self) -> Result<&TopicMeta> {
        if self.meta.is_none() {
            let meta = match self.dir.topic_or_auto_create(&self.topic)? {
                Some(meta) => meta,
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
    pub fn flush(&mut self) -> Result<()> {
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
            log.append(batches, &config).map_err(|e| {
                ClientError::from(e).context(format!("cannot write to partition {}-{p}", meta.name))
            })?;
            batches.clear();
        }
        self.pending_bytes = 0;
        Ok(())
    }
}
