//! The producer's writer thread: batches are written and fdatasync'ed on their own thread while
//! the producer reads input and builds the next ones.
//!
//! Each job is what one flush used to write: every partition's finished batches, appended under
//! the shared log-dir lock and each partition's exclusive lock (one pwrite and one fdatasync per
//! partition, as [`PartitionLog::append`](super::PartitionLog::append) does). Jobs are written
//! in order. At most [`IN_FLIGHT`] jobs wait or are being written, so memory stays bounded and a
//! producer faster than the disk waits for it.
//!
//! Nothing is acknowledged here: the producer reports success only after [`WriteBehind::wait`]
//! saw every job written. After a failed job the thread writes nothing more, so the log never
//! holds records from after a failure with a gap before them.

use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, channel, sync_channel};
use std::thread::JoinHandle;

use kafka_protocol::ResponseError;

use super::lock::LockMode;
use super::{KeptTail, LogDir, TopicMeta};
use super::{LocalError, Result};

/// Jobs handed to the thread and not yet written: one being written, one waiting.
pub const IN_FLIGHT: usize = 2;

/// A job's batches: one buffer per partition, each holding whole batches (or nothing).
pub type Batches = Vec<Vec<u8>>;

/// A written job: its buffers (emptied, for reuse) and how the write went.
struct Done {
    buffers: Batches,
    result: Result<()>,
}

/// The writer thread of one producer, and the jobs it has not reported on yet.
#[derive(Debug)]
pub struct WriteBehind {
    jobs: Option<SyncSender<Batches>>,
    done: Receiver<Done>,
    in_flight: usize,
    /// Emptied buffers of written jobs, for the next job.
    spare: Vec<Batches>,
    /// The first failure, reported once.
    failure: Option<LocalError>,
    /// Set once a failure was reported: nothing more is written.
    failed: bool,
    /// Jobs written so far, in order (what a caller counting its jobs compares against).
    written: u64,
    thread: Option<JoinHandle<()>>,
}

impl WriteBehind {
    /// Starts the thread that writes `meta`'s batches into `dir`.
    pub fn spawn(dir: LogDir, meta: TopicMeta) -> std::io::Result<WriteBehind> {
        // The channel holds one job while the thread writes another.
        let (jobs, queue) = sync_channel::<Batches>(IN_FLIGHT - 1);
        let (done_tx, done) = channel();
        let thread = std::thread::Builder::new()
            .name("kafkit-writer".into())
            .spawn(move || {
                // Each partition's active segment, kept open from one job to the next.
                let mut tails = Vec::new();
                for mut buffers in queue {
                    let result = write(&dir, &meta, &mut buffers, &mut tails);
                    let failed = result.is_err();
                    if done_tx.send(Done { buffers, result }).is_err() || failed {
                        return;
                    }
                }
            })?;
        Ok(WriteBehind {
            jobs: Some(jobs),
            done,
            in_flight: 0,
            spare: Vec::new(),
            failure: None,
            failed: false,
            written: 0,
            thread: Some(thread),
        })
    }

    /// Empty buffers for the next job, `partitions` of them (reused from written jobs).
    pub fn buffers(&mut self, partitions: usize) -> Batches {
        let mut buffers = self.spare.pop().unwrap_or_default();
        buffers.resize_with(partitions, Vec::new);
        buffers
    }

    /// Hands a job to the thread, waiting while [`IN_FLIGHT`] jobs are already there. Fails
    /// with an earlier job's failure instead, once one is known.
    pub fn send(&mut self, buffers: Batches) -> Result<()> {
        self.collect(false);
        self.check()?;
        let sent = self.jobs.as_ref().map(|jobs| jobs.send(buffers));
        match sent {
            Some(Ok(())) => {
                self.in_flight += 1;
                Ok(())
            }
            // The thread stopped: it reports why.
            _ => {
                self.collect(true);
                self.check()
            }
        }
    }

    /// Waits until every job handed over is written; fails with the first failure.
    pub fn wait(&mut self) -> Result<()> {
        self.collect(true);
        self.check()
    }

    /// Takes the reports of the jobs written by now, waiting up to `wait` for the oldest one
    /// when none is; fails with the first failure. Returns how many jobs were written in all.
    pub fn poll(&mut self, wait: std::time::Duration) -> Result<u64> {
        if self.in_flight > 0
            && !wait.is_zero()
            && let Ok(done) = self.done.recv_timeout(wait)
        {
            self.take(done);
        }
        self.collect(false);
        self.check()?;
        Ok(self.written)
    }

    /// Whether a job handed over now would be taken without waiting.
    pub fn has_room(&self) -> bool {
        self.in_flight < IN_FLIGHT
    }

    /// Takes one written job's report: its buffers for reuse, its failure if any.
    fn take(&mut self, done: Done) {
        let Done {
            mut buffers,
            result,
        } = done;
        self.in_flight -= 1;
        buffers.iter_mut().for_each(Vec::clear);
        self.spare.push(buffers);
        match result {
            Ok(()) => self.written += 1,
            Err(e) => {
                self.failure.get_or_insert(e);
            }
        }
    }

    /// Takes the reports of written jobs; with `all`, waits for every job in flight.
    fn collect(&mut self, all: bool) {
        while self.in_flight > 0 {
            let done = if all {
                self.done.recv().map_err(|_| TryRecvError::Disconnected)
            } else {
                self.done.try_recv()
            };
            match done {
                Ok(done) => self.take(done),
                Err(TryRecvError::Empty) => return,
                Err(TryRecvError::Disconnected) => {
                    // Stopped after a failure (reported above) or panicked.
                    self.in_flight = 0;
                    self.jobs = None;
                    if self.failure.is_none() && !self.failed {
                        self.failure = Some(LocalError::kafka(
                            ResponseError::KafkaStorageError,
                            "the writer thread stopped unexpectedly; the records read since the last flush were not all written",
                        ));
                    }
                }
            }
        }
    }

    /// The first failure, once; after it, every call fails.
    fn check(&mut self) -> Result<()> {
        if let Some(e) = self.failure.take() {
            self.failed = true;
            self.jobs = None;
            return Err(e);
        }
        if self.failed {
            return Err(LocalError::kafka(
                ResponseError::KafkaStorageError,
                "an earlier write to the log failed; nothing more is written",
            ));
        }
        Ok(())
    }
}

impl Drop for WriteBehind {
    /// Lets a job being written finish (its records are then whole in the log, though never
    /// acknowledged) rather than cutting it off when the process exits.
    fn drop(&mut self) {
        self.jobs = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Writes one job: every partition's batches, under the shared log-dir lock, which keeps topic
/// deletion out while we write. The buffers are emptied only by the caller.
fn write(
    dir: &LogDir,
    meta: &TopicMeta,
    buffers: &mut Batches,
    tails: &mut Vec<KeptTail>,
) -> Result<()> {
    let config = meta.partition_config();
    let _lock = dir.lock(LockMode::Shared)?;
    if dir.topic(&meta.name)?.is_none_or(|t| t.id != meta.id) {
        return Err(LocalError::kafka(
            ResponseError::UnknownTopicOrPartition,
            format!(
                "topic '{}' was deleted while producing; the records read since the last flush were not written",
                meta.name
            ),
        ));
    }
    tails.resize_with(buffers.len(), KeptTail::default);
    for ((p, batches), tail) in buffers.iter_mut().enumerate().zip(tails.iter_mut()) {
        if batches.is_empty() {
            continue;
        }
        let log = dir.partition(&meta.name, p as u32)?;
        log.append_built(batches, &config, tail)
            .map_err(|e| e.context(format!("cannot write to partition {}-{p}", meta.name)))?;
    }
    Ok(())
}
