//! `kafka-producer-perf-test`: sends generated records as fast as allowed and reports their
//! rate and latency (Kafka's `ProducerPerformance`), through the same producer as
//! `kafka-console-producer`, on the embedded log or a cluster.
//!
//! Kafka's tool parses its arguments with argparse4j, so its errors read `argument --x: ...`;
//! they are reproduced here one line each. Each record's latency runs from its send to its
//! acknowledgement: durable on the embedded log, acknowledged as `acks` asks by a cluster. The
//! producer reports acknowledgements as counts per partition (records of a partition are
//! acknowledged in the order sent), so the tool keeps each partition's send times in a queue.

mod options;

use std::collections::VecDeque;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::anyhow;
use clap::ArgMatches;

use super::perf_stats::{MetricValue, Stats, Throttle, Throttler, metrics_table};
use super::signals::Interrupt;
use super::{CliError, emit};
use crate::client::{Producer, ProducerRecord, topic_name};
use crate::kafka::now_ms;
use options::{Options, Payload};

pub use options::command;

/// How many records go between two looks at the acknowledgements and the linger.
const CHECK_EVERY: u64 = 64;
/// The longest nap while waiting with nothing to collect.
const NAP: Duration = Duration::from_millis(1);

/// Entry point of the `kafka-producer-perf-test` binary.
pub fn main() -> ExitCode {
    super::run_argparse_tool(command(), run)
}

fn run(m: &ArgMatches) -> Result<(), CliError> {
    let opts = Options::from_matches(m)?;
    topic_name::validate(&opts.topic)
        .map_err(|e| anyhow!("Invalid topic '{}': {e}", opts.topic))?;
    let payloads = Payloads::new(&opts.payload)?;
    let producer = super::open_client(m, Some(&opts.properties))?.into_producer(
        &opts.topic,
        opts.batching.clone(),
        opts.delivery.clone(),
    );
    if opts.warmup_records > 0 {
        emit(&format!(
            "Warmup first {} records. Steady state results will print after the complete test summary.\n",
            opts.warmup_records
        ))?;
    }
    let mut test = Test::new(&opts, producer);
    let interrupt = Interrupt::install();
    test.send_all(&opts, payloads, &interrupt)?;
    test.producer.flush()?;
    // The last transaction is committed (an interrupted run's too, as Kafka's tool does).
    test.producer.commit_transaction()?;
    test.collect(Duration::ZERO)?;
    let Test {
        producer,
        mut stats,
        mut steady,
        ..
    } = test;
    let batches = producer.batch_stats();
    if !opts.print_metrics {
        producer.close()?;
    }
    let now = now_ms();
    let mut out = stats.total_line(now) + "\n";
    if let Some(steady) = steady.as_mut() {
        out.push_str(&steady.total_line(now));
        out.push('\n');
    }
    if opts.print_metrics {
        out.push_str(&metrics(&opts, stats.count(), batches, now - test.start));
    }
    emit(&out)?;
    if interrupt.is_set() {
        return Err(interrupt.error());
    }
    Ok(())
}

/// The metrics kafkit can compute honestly, named as Kafka's producer names them.
fn metrics(
    opts: &Options,
    acknowledged: u64,
    batches: crate::client::BatchStats,
    elapsed_ms: i64,
) -> String {
    let client = format!("{{client-id={}}}", opts.client_id);
    let topic = format!("{{client-id={}, topic={}}}", opts.client_id, opts.topic);
    let per_sec = |n: u64| n as f64 * 1000.0 / elapsed_ms.max(1) as f64;
    let avg = batches.bytes as f64 / batches.batches.max(1) as f64;
    let n = |v: f64| MetricValue::Number(v);
    let rows = vec![
        (format!("producer-metrics:batch-size-avg:{client}"), n(avg)),
        (
            format!("producer-metrics:batch-size-max:{client}"),
            n(batches.max_bytes as f64),
        ),
        (
            format!("producer-metrics:record-send-rate:{client}"),
            n(per_sec(acknowledged)),
        ),
        (
            format!("producer-metrics:record-send-total:{client}"),
            n(acknowledged as f64),
        ),
        (
            format!("producer-metrics:records-per-request-avg:{client}"),
            n(batches.records as f64 / batches.batches.max(1) as f64),
        ),
        (
            format!("producer-topic-metrics:record-send-rate:{topic}"),
            n(per_sec(acknowledged)),
        ),
        (
            format!("producer-topic-metrics:record-send-total:{topic}"),
            n(acknowledged as f64),
        ),
    ];
    metrics_table(&rows)
}

/// One record sent and not yet acknowledged.
struct Sent {
    /// When it was sent (ms).
    time: i64,
    bytes: u32,
    /// It counts in the steady-state statistics too.
    steady: bool,
}

/// A run: the producer, the records in flight per partition, the statistics.
struct Test {
    producer: Producer,
    /// Per partition: records sent and not yet acknowledged, oldest first.
    in_flight: Vec<VecDeque<Sent>>,
    /// Per partition: records acknowledged and counted so far.
    counted: Vec<u64>,
    /// Records sent and not yet acknowledged, over all partitions.
    outstanding: u64,
    stats: Stats,
    steady: Option<Stats>,
    start: i64,
    linger: Duration,
    /// When the oldest record not yet handed to the backend was added.
    first_unsent: Option<Instant>,
}

impl Test {
    fn new(opts: &Options, producer: Producer) -> Test {
        let start = now_ms();
        Test {
            producer,
            in_flight: Vec::new(),
            counted: Vec::new(),
            outstanding: 0,
            stats: Stats::new(opts.num_records, opts.reporting_interval, false, start),
            steady: None,
            start,
            linger: opts.linger,
            first_unsent: None,
        }
    }

    /// Sends `--num-records` records at the `--throughput` asked, collecting
    /// acknowledgements as they come.
    fn send_all(
        &mut self,
        opts: &Options,
        mut payloads: Payloads,
        interrupt: &Interrupt,
    ) -> Result<(), CliError> {
        let mut throttler = Throttler::new(opts.throughput, self.start);
        // As Kafka's tool: a transaction opens with its first record and is committed after
        // the first record sent once it has lasted --transaction-duration-ms.
        let mut transaction_start = None;
        for i in 0..opts.num_records {
            let payload = payloads.next(i);
            let send_start = now_ms();
            if opts.transaction_duration_ms.is_some() && transaction_start.is_none() {
                transaction_start = Some(send_start);
            }
            if opts.warmup_records > 0 && i == opts.warmup_records {
                self.steady = Some(Stats::new(
                    opts.num_records - opts.warmup_records,
                    opts.reporting_interval,
                    true,
                    send_start,
                ));
                self.stats.suppress_printing();
            }
            self.send(payload, send_start)?;
            if let (Some(duration), Some(start)) = (opts.transaction_duration_ms, transaction_start)
                && send_start - start >= duration
            {
                self.producer.commit_transaction()?;
                self.collect(Duration::ZERO)?;
                transaction_start = None;
            }
            if i % CHECK_EVERY == CHECK_EVERY - 1 {
                self.linger_check()?;
                self.collect(Duration::ZERO)?;
            }
            match throttler.after(i, send_start) {
                Throttle::Go => {}
                Throttle::Sleep(d) => {
                    self.producer.input_paused()?;
                    self.wait_until(Instant::now() + d, interrupt)?;
                }
                // Kafka's tool waits for ever: so does this one, until Ctrl-C.
                Throttle::Stop => {
                    while !interrupt.is_set() {
                        self.wait_until(Instant::now() + Duration::from_secs(3600), interrupt)?;
                    }
                }
            }
            if interrupt.is_set() {
                break;
            }
        }
        Ok(())
    }

    /// Sends one record.
    fn send(&mut self, payload: &[u8], now: i64) -> Result<(), CliError> {
        let record = ProducerRecord {
            key: None,
            value: Some(payload),
            headers: &[],
            timestamp: now,
            partition: None,
        };
        let p = self.producer.send_to(record)? as usize;
        if p >= self.in_flight.len() {
            self.in_flight.resize_with(p + 1, VecDeque::new);
            self.counted.resize(p + 1, 0);
        }
        self.in_flight[p].push_back(Sent {
            time: now,
            bytes: payload.len() as u32,
            steady: self.steady.is_some(),
        });
        self.outstanding += 1;
        if self.first_unsent.is_none() {
            self.first_unsent = Some(Instant::now());
        }
        Ok(())
    }

    /// Hands the partial batches over once the oldest record in them waited `linger.ms`.
    fn linger_check(&mut self) -> Result<(), CliError> {
        if self
            .first_unsent
            .is_some_and(|t| t.elapsed() >= self.linger)
        {
            self.producer.send_partial()?;
            self.first_unsent = None;
        }
        Ok(())
    }

    /// Counts the records acknowledged by now (waiting up to `wait` for one), printing the
    /// lines of the reporting windows they end.
    fn collect(&mut self, wait: Duration) -> Result<(), CliError> {
        let acked = self.producer.acknowledged(wait)?;
        let now = now_ms();
        let mut lines = String::new();
        for (p, &acked) in acked.iter().enumerate().take(self.in_flight.len()) {
            while self.counted[p] < acked {
                let Some(sent) = self.in_flight[p].pop_front() else {
                    break;
                };
                self.counted[p] += 1;
                self.outstanding -= 1;
                let latency = (now - sent.time).clamp(0, i64::from(i32::MAX)) as i32;
                let bytes = u64::from(sent.bytes);
                if let Some(text) = self.stats.record(latency, bytes, now) {
                    lines.push_str(&text);
                }
                if sent.steady
                    && let Some(text) = self
                        .steady
                        .as_mut()
                        .and_then(|s| s.record(latency, bytes, now))
                {
                    lines.push_str(&text);
                }
            }
        }
        if !lines.is_empty() {
            emit(&lines)?;
        }
        Ok(())
    }

    /// Waits until `deadline` (the throttle's sleep), collecting acknowledgements and sending
    /// the partial batches when the linger passes meanwhile.
    fn wait_until(&mut self, deadline: Instant, interrupt: &Interrupt) -> Result<(), CliError> {
        loop {
            let now = Instant::now();
            if now >= deadline || interrupt.is_set() {
                return Ok(());
            }
            let mut wait = deadline - now;
            if let Some(first) = self.first_unsent {
                let due = first + self.linger;
                if now >= due {
                    self.linger_check()?;
                    continue;
                }
                wait = wait.min(due - now);
            }
            // Ctrl-C is looked at every 100 ms.
            wait = wait.min(Duration::from_millis(100));
            let before = self.outstanding;
            if before > 0 {
                self.collect(wait)?;
            }
            if self.outstanding == before {
                // Nothing in flight to wait on (or nothing came): nap instead of spinning.
                std::thread::sleep(wait.min(NAP));
            }
        }
    }
}

/// The records' values: random capital letters of `--record-size` (a window into one random
/// buffer, so that generating them costs next to nothing), lines of `--payload-file` picked at
/// random, or the record's number with `--payload-monotonic`.
enum Payloads {
    Random { buffer: Vec<u8>, size: usize },
    File(Vec<Vec<u8>>),
    Monotonic(String),
}

/// How many distinct starting points the random buffer offers.
const RANDOM_WINDOWS: usize = 4096;

impl Payloads {
    fn new(payload: &Payload) -> Result<Payloads, CliError> {
        Ok(match payload {
            Payload::Size(size) => {
                let letters = (0..size + RANDOM_WINDOWS)
                    .map(|_| b'A' + (rand::random::<u32>() % 26) as u8)
                    .collect();
                Payloads::Random {
                    buffer: letters,
                    size: *size,
                }
            }
            Payload::File(records) => Payloads::File(records.clone()),
            Payload::Monotonic => Payloads::Monotonic(String::new()),
        })
    }

    /// The value of record `i`.
    fn next(&mut self, i: u64) -> &[u8] {
        match self {
            Payloads::Random { buffer, size } => {
                let at = (rand::random::<u32>() as usize) % RANDOM_WINDOWS;
                &buffer[at..at + *size]
            }
            Payloads::File(records) => {
                let at = (rand::random::<u64>() % records.len() as u64) as usize;
                &records[at]
            }
            Payloads::Monotonic(text) => {
                use std::fmt::Write;
                text.clear();
                let _ = write!(text, "{i}");
                text.as_bytes()
            }
        }
    }
}
