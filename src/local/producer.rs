//! The embedded log's end of the producer: finished batches are gathered per partition and
//! handed to the writer thread ([`super::write_behind`]) every [`WRITE_BEHIND_BYTES`] and at
//! each flush; one write and one fdatasync per partition and job. A flush returns once
//! everything handed over is durable.

use kafka_protocol::ResponseError;

use super::Result;
use super::write_behind::WriteBehind;
use super::{LocalError, LogDir, TopicMeta};
use crate::kafka::topic_config;
use crate::record::BatchBuilder;

/// Batches gathered before they go to the writer thread. Large enough that a write and an
/// fdatasync cost little per byte, small enough that the jobs in flight
/// ([`super::write_behind::IN_FLIGHT`]) keep the producer's memory small.
pub const WRITE_BEHIND_BYTES: usize = 2 * 1024 * 1024;

/// How long a producer's exit may wait for the cleaning of one partition it wrote.
pub const CLEAN_BUDGET: std::time::Duration = std::time::Duration::from_millis(100);

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
    /// Records per partition in the queues (see [`LocalWriter::acknowledged`]).
    pending_records: Vec<u64>,
    /// Records per partition of each job handed to the writer thread and not yet known to be
    /// written, oldest first.
    unwritten: std::collections::VecDeque<Vec<u64>>,
    /// Jobs known to be written, of those handed over.
    jobs_written: u64,
    /// Records per partition known to be durable.
    durable: Vec<u64>,
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
            pending_records: Vec::new(),
            unwritten: std::collections::VecDeque::new(),
            jobs_written: 0,
            durable: Vec::new(),
        }
    }

    /// The log directory written to.
    pub fn dir(&self) -> &LogDir {
        &self.dir
    }

    /// The topic's metadata, creating the topic on first use when the log dir allows it
    /// (`auto.create.topics.enable`, with `num.partitions`), as a broker does.
    pub fn open(&mut self) -> Result<&TopicMeta> {
        if self.meta.is_none() {
            let meta = match self.dir.topic_or_auto_create(&self.topic)? {
                Some(meta) => meta,
                None => {
                    return Err(LocalError::kafka(
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
            self.pending_records = vec![0; meta.partitions as usize];
            self.durable = vec![0; meta.partitions as usize];
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
        self.pending_records[p] += builder.len() as u64;
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
        if let Some(writer) = &mut self.writer {
            writer.wait()?;
            self.settle(u64::MAX);
        }
        Ok(())
    }

    /// After the producer's last flush: cleans the compacted topic's partitions it wrote,
    /// each for at most [`CLEAN_BUDGET`] (there is no cleaner daemon without a server). A
    /// failure is a warning: the records are written.
    pub fn clean_written(&self) {
        let Some(meta) = &self.meta else {
            return;
        };
        if !meta.is_compacted() {
            return;
        }
        let written = (0..meta.partitions).filter(|&p| self.durable[p as usize] > 0);
        match self.dir.clean_partitions(meta, written, Some(CLEAN_BUDGET)) {
            Err(e) => {
                super::warnings::push(format!("topic '{}' was not cleaned: {e}", meta.name));
            }
            Ok(left) if !left.is_empty() => {
                // Otherwise nothing would ever clean it without a server: say how.
                let list: Vec<String> = left.iter().map(u32::to_string).collect();
                let ratio = topic_config::effective(&meta.configs, "min.cleanable.dirty.ratio");
                super::warnings::push(format!(
                    "partition(s) {} of compacted topic '{}' hold more to clean than a producer cleans as it exits; clean them with kafka-configs --alter --entity-type topics --entity-name {} --add-config min.cleanable.dirty.ratio={ratio}, or serve the log with kafka-server-start",
                    list.join(", "),
                    meta.name,
                    meta.name
                ));
            }
            Ok(_) => {}
        }
    }

    /// Hands the queued batches to the writer thread unless it is busy with earlier ones (then
    /// they wait for the next call, growing meanwhile): a linger passing never makes the
    /// producer wait for the disk.
    pub fn hand_over_if_idle(&mut self) -> Result<()> {
        if self.writer.as_ref().is_none_or(WriteBehind::has_room) {
            self.hand_over()?;
        }
        Ok(())
    }

    /// Records per partition known to be durable, counting from the first; waits up to
    /// `wait` for the oldest job in flight when none was written since the last call.
    pub fn acknowledged(&mut self, wait: std::time::Duration) -> Result<&[u64]> {
        if let Some(writer) = &mut self.writer {
            let written = writer.poll(wait)?;
            self.settle(written);
        }
        Ok(&self.durable)
    }

    /// Counts the records of the jobs written, up to `written` jobs in all (every job handed
    /// over, with `u64::MAX`), as durable.
    fn settle(&mut self, written: u64) {
        while self.jobs_written < written
            && let Some(job) = self.unwritten.pop_front()
        {
            self.jobs_written += 1;
            for (d, n) in self.durable.iter_mut().zip(job) {
                *d += n;
            }
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
                let writer = WriteBehind::spawn(self.dir.clone(), meta.clone())
                    .map_err(|e| LocalError::io("cannot start the writer thread", e))?;
                self.writer.insert(writer)
            }
        };
        let empty = writer.buffers(self.pending.len());
        let full = std::mem::replace(&mut self.pending, empty);
        self.pending_bytes = 0;
        let records = vec![0; self.pending_records.len()];
        self.unwritten
            .push_back(std::mem::replace(&mut self.pending_records, records));
        writer.send(full)
    }
}
