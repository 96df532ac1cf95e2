//! The server's log cleaner: one thread that goes over the compacted topics' partitions and
//! cleans each that is dirty enough (see [`crate::local::cleaner`]), then pauses for
//! `log.cleaner.backoff.ms` when none was. A round holds a partition's lock only to swap its
//! cleaned segments in, and no log-dir lock, so produce, fetch and topic changes go on
//! meanwhile. Stopping the server stops the
//! thread; a round in progress gives up and leaves its partition as it was. The thread runs at
//! a lower priority (nice 10), so that on a busy machine the requests come first.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::broker::Broker;
use crate::local::cleaner::{CleanerConfig, Outcome};

/// How long a partition whose round failed is left alone.
const RETRY_FAILED: Duration = Duration::from_secs(300);

/// The running cleaner thread.
pub struct Cleaner {
    stop: Arc<AtomicBool>,
    wake: Arc<(Mutex<()>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl Cleaner {
    /// Starts the thread, unless `log.cleaner.enable` is false.
    pub fn start(broker: Arc<Broker>) -> Option<Cleaner> {
        let settings = broker.config.cleaner.clone();
        if !settings.enabled {
            broker
                .log
                .info("The log cleaner is disabled (log.cleaner.enable=false): compacted topics are not cleaned");
            return None;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let wake = Arc::new((Mutex::new(()), Condvar::new()));
        let config = CleanerConfig {
            dedupe_buffer_size: settings.dedupe_buffer_size.max(0) as u64,
            max_bytes_per_second: settings.max_bytes_per_second,
            cancel: Some(Arc::clone(&stop)),
            ..CleanerConfig::default()
        };
        let backoff = Duration::from_millis(settings.backoff_ms.max(0) as u64);
        let (s, w) = (Arc::clone(&stop), Arc::clone(&wake));
        let thread = std::thread::Builder::new()
            .name("log-cleaner".into())
            .spawn(move || run(&broker, &config, backoff, &s, &w))
            .ok()?;
        Some(Cleaner {
            stop,
            wake,
            thread: Some(thread),
        })
    }

    /// Stops the thread and waits for it (a round in progress gives up).
    pub fn stop(mut self) {
        {
            // Under the mutex: the thread checks the flag and starts waiting under it, so the
            // wakeup cannot fall in between.
            let _guard = self.wake.0.lock().unwrap_or_else(|e| e.into_inner());
            self.stop.store(true, Ordering::Relaxed);
            self.wake.1.notify_all();
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The cleaner thread's nice value: on a busy machine produce and fetch come first (a
/// cleaning taking longer matters less than a producer slowed down).
const NICE: i32 = 10;

fn run(
    broker: &Broker,
    config: &CleanerConfig,
    backoff: Duration,
    stop: &AtomicBool,
    wake: &(Mutex<()>, Condvar),
) {
    // On Linux a thread's priority is its own (setpriority with its thread id).
    if let Err(e) = rustix::process::setpriority_process(Some(rustix::thread::gettid()), NICE) {
        broker.log.debug(&format!(
            "The log cleaner keeps its priority (setpriority: {e})"
        ));
    }
    // Partitions whose round failed (damage, say), and when: logged once, and left alone for
    // a while rather than read whole again at every pass.
    let mut failing: HashMap<(String, u32), Instant> = HashMap::new();
    while !stop.load(Ordering::Relaxed) {
        let cleaned = pass(broker, config, stop, &mut failing);
        if cleaned == 0 {
            let guard = wake.0.lock().unwrap_or_else(|e| e.into_inner());
            if !stop.load(Ordering::Relaxed) {
                let _ = wake.1.wait_timeout(guard, backoff);
            }
        }
    }
}

/// Cleans every compacted partition that is dirty enough, once; how many were cleaned.
fn pass(
    broker: &Broker,
    config: &CleanerConfig,
    stop: &AtomicBool,
    failing: &mut HashMap<(String, u32), Instant>,
) -> usize {
    let names = match broker.dir.topic_names() {
        Ok(names) => names,
        Err(e) => {
            broker
                .log
                .warn(&format!("The log cleaner cannot list the topics: {e}"));
            return 0;
        }
    };
    let mut cleaned = 0;
    for name in names {
        let Ok(Some(meta)) = broker.topic(&name) else {
            continue;
        };
        let Some(topic) = meta.compaction_config() else {
            continue;
        };
        for p in 0..meta.partitions {
            if stop.load(Ordering::Relaxed) {
                return cleaned;
            }
            let key = (name.clone(), p);
            if failing
                .get(&key)
                .is_some_and(|at| at.elapsed() < RETRY_FAILED)
            {
                continue;
            }
            match broker.dir.clean_partition(&meta, &topic, p, config) {
                Ok(Outcome::Cleaned(report)) => {
                    cleaned += 1;
                    failing.remove(&key);
                    broker.log.info(&format!(
                        "Cleaned {name}-{p} up to offset {}: {} segments of {} bytes into {} of {} bytes, {} records kept, {} removed",
                        report.end_offset,
                        report.segments_before,
                        report.bytes_before,
                        report.segments_after,
                        report.bytes_after,
                        report.records.kept,
                        report.records.dropped
                    ));
                    if report.records.keyless > 0 {
                        broker.log.warn(&format!(
                            "Found {} invalid messages during compaction of {name}-{p} (records without a key, removed)",
                            report.records.keyless
                        ));
                    }
                }
                Ok(_) => {}
                Err(e) => {
                    if failing.insert(key, Instant::now()).is_none() {
                        broker.log.warn(&format!(
                            "The log cleaner cannot clean {name}-{p} (it tries again in {} minutes): {e}",
                            RETRY_FAILED.as_secs() / 60
                        ));
                    }
                }
            }
        }
    }
    cleaned
}
