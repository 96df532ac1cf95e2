//! The embedded log's end of the producer: finished batches are gathered per partition and
//! handed to the writer thread ([`super::write_behind`]) every [`WRITE_BEHIND_BYTES`] and at
//! each flush; one write and one fdatasync per partition and job. A flush returns once
//! everything handed over is durable.

use kafka_protocol::ResponseError;

use super::write_behind::WriteBehind;
use super::{LocalError, LogDir, TopicMeta};
use crate::client::{ClientError, Result};
use crate::record::BatchBuilder;

/// Batches gathered before they go to the writer thread. Large enough that a write and an
/// fdatasync cost little per byte, small enough that the jobs in flight
/// ([`super::write_behind::IN_FLIGHT`]) keep the producer's memory small.
pub const WRITE_BEHIND_BYTES: usize = 2 * 1024 * 1024;

/// Writes one topic's batches to the embedded log.
#[derive(Debug)]
pub struct LocalWriter {
    dir: LogDir,
    topic: String,
    meta: Option<TopicMeta>,
    /// Finished batches per partition, not yet handed to the writer thread.
    pending: Vec<Vec<u8>>,
    pending_bytes: usize,
    /// Started with the first write.
    writer: Option<WriteBehind>,
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
            writer: None,
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

    /// Finishes `builder`'s batch into partition `p`'s queue, handing the queues to the writer
    /// thread first when they would grow past [`WRITE_BEHIND_BYTES`].
    pub fn queue(&mut self, p: usize, builder: &mut BatchBuilder) -> Result<()> {
        // Handed over before the batch would overflow them, the queues' buffers never grow
        // past the threshold (a growing Vec would double its capacity), and are reused.
        if self.pending_bytes > 0 && self.pending_bytes + builder.size() > WRITE_BEHIND_BYTES {
            self.hand_over()?;
        }
        let queue = &mut self.pending[p];
        let before = queue.len();
        builder.build_into(0, queue)?;
        self.pending_bytes += queue.len() - before;
        Ok(())
    }

    /// Bytes queued and not yet handed to the writer thread.
    pub fn buffered_bytes(&self) -> usize {
        self.pending_bytes
    }

    /// Writes every queued batch and returns once all of it, and everything handed over
    /// before, is fdatasync'ed.
    pub fn flush(&mut self) -> Result<()> {
        self.hand_over()?;
        match &mut self.writer {
            Some(writer) => writer.wait(),
            None => Ok(()),
        }
    }

    /// Hands the queued batches to the writer thread (started on first use).
    fn hand_over(&mut self) -> Result<()> {
        let Some(meta) = &self.meta else {
            return Ok(());
        };
        if self.pending_bytes == 0 {
            return Ok(());
        }
        let writer = match &mut self.writer {
            Some(writer) => writer,
            None => {
                let writer = WriteBehind::spawn(self.dir.clone(), meta.clone()).map_err(|e| {
                    ClientError::from(LocalError::io("cannot start the writer thread", e))
                })?;
                self.writer.insert(writer)
            }
        };
        let empty = writer.buffers(self.pending.len());
        let full = std::mem::replace(&mut self.pending, empty);
        self.pending_bytes = 0;
        writer.send(full)
    }
}
