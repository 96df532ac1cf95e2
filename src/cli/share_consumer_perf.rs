//! `kafka-share-consumer-perf-test` (Kafka's `ShareConsumerPerformance`): reads a number of
//! records with one or more share consumers of one share group, accepting each, and prints
//! Kafka's statistics lines: the totals, and with `--show-consumer-stats` each consumer's, with
//! `--show-detailed-stats` each reporting interval's.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use clap::{Arg, ArgAction, ArgMatches, Command};

use super::consumer_perf::reporting_interval;
use super::date_format::DateFormat;
use super::perf_stats::java_fixed;
use super::properties::{self, Properties};
use super::signals::Interrupt;
use super::{CliError, connection_args, emit, open_client, run_tool, usage, validate_bootstrap};
use crate::client::share::ShareConsumerConfig;
use crate::kafka::now_ms;
use crate::kafka::share::AcknowledgeType;

const MB: f64 = 1024.0 * 1024.0;
/// How long one poll waits for records.
const POLL_WAIT: Duration = Duration::from_millis(100);

fn opt(name: &'static str, value_name: &'static str, help: &'static str) -> Arg {
    super::value_option(name, value_name, help, "Share consumer perf test")
}

fn flag(name: &'static str, help: &'static str) -> Arg {
    super::flag_option(name, help, "Share consumer perf test", ArgAction::SetTrue)
}

fn long(name: &'static str, value_name: &'static str, help: &'static str) -> Arg {
    opt(name, value_name, help)
        .value_parser(clap::value_parser!(i64))
        .allow_negative_numbers(true)
}

fn int(name: &'static str, value_name: &'static str, help: &'static str) -> Arg {
    opt(name, value_name, help)
        .value_parser(clap::value_parser!(i32))
        .allow_negative_numbers(true)
}

/// The clap definition of `kafka-share-consumer-perf-test`.
pub fn command() -> Command {
    let cmd = Command::new("kafka-share-consumer-perf-test")
        .about("This tool is used to verify the share consumer performance.")
        .arg(opt("topic", "topic", "REQUIRED: The topic to consume from."))
        .arg(opt("group", "gid", "The group id to consume on. [default: perf-share-consumer]"))
        .arg(long("num-records", "count", "REQUIRED: The number of records to consume."))
        .arg(long("messages", "count", "(DEPRECATED) The number of records to consume. Use --num-records instead."))
        .arg(int("threads", "count", "The number of share consumers to use for sharing the load. [default: 1]"))
        .arg(int("fetch-size", "size", "The amount of data to fetch in a single request (accepted; kafkit fetches up to 4 MiB). [default: 1048576]"))
        .arg(int("socket-buffer-size", "size", "The size of the tcp RECV size (accepted and ignored). [default: 2097152]"))
        .arg(long("timeout", "milliseconds", "The maximum allowed time in milliseconds between returned records. [default: 10000]").num_args(0..=1))
        .arg(opt("reporting-interval", "interval_ms", "Interval in milliseconds at which to print progress info. [default: 5000]"))
        .arg(opt("date-format", "date format", "The date format to use for formatting the time field. See java.text.SimpleDateFormat for options. [default: yyyy-MM-dd HH:mm:ss:SSS]"))
        .arg(opt("command-property", "prop1=val1", "Kafka share consumer related configuration properties like client.id. These configs take precedence over those passed via --command-config or --consumer.config.").action(ArgAction::Append))
        .arg(opt("command-config", "config file", "Config properties file."))
        .arg(opt("consumer.config", "config file", "(DEPRECATED) Share consumer config properties file. Use --command-config instead."))
        .arg(flag("print-metrics", "Print out the metrics (accepted; kafkit prints none)."))
        .arg(flag("show-detailed-stats", "If set, stats are reported for each reporting interval as configured by reporting-interval."))
        .arg(flag("show-consumer-stats", "If set, stats are reported for each share consumer depending on the no. of threads."))
        .arg(flag("hide-header", "If set, skips printing the header for the stats."));
    connection_args(cmd)
}

/// Entry point of the `kafka-share-consumer-perf-test` binary.
pub fn main() -> ExitCode {
    run_tool(command(), "", run)
}

/// A run, as its arguments say.
struct Options {
    topic: String,
    group: String,
    num_records: u64,
    threads: usize,
    timeout: i64,
    reporting_interval: i64,
    detailed: bool,
    per_consumer: bool,
    hide_header: bool,
    date_format: DateFormat,
    client_id: String,
    properties: Properties,
}

fn options(m: &ArgMatches) -> Result<Options, CliError> {
    let Some(topic) = m.get_one::<String>("topic") else {
        return usage("Missing required argument \"[topic]\"");
    };
    if m.contains_id("messages") == m.contains_id("num-records") {
        return usage(
            "Exactly one of the following arguments is required: [messages], [num-records]",
        );
    }
    if m.contains_id("consumer.config") && m.contains_id("command-config") {
        return usage(
            "Option \"[consumer.config]\" can't be used with option \"[command-config]\"",
        );
    }
    if m.contains_id("messages") {
        eprintln!("Warning: --messages is deprecated. Use --num-records instead.");
    }
    if m.contains_id("consumer.config") {
        eprintln!("Warning: --consumer.config is deprecated. Use --command-config instead.");
    }
    if let Some(servers) = m.get_one::<String>("bootstrap-server") {
        validate_bootstrap(servers)?;
    }
    crate::client::topic_name::validate(topic).map_err(|e| anyhow::anyhow!(e))?;
    let threads = m.get_one::<i32>("threads").copied().unwrap_or(1);
    if threads < 1 {
        return usage(format!("--threads must be at least 1, not {threads}"));
    }
    let pattern = m
        .get_one::<String>("date-format")
        .map_or("yyyy-MM-dd HH:mm:ss:SSS", String::as_str);
    let date_format = DateFormat::new(pattern).map_err(CliError::Usage)?;
    let mut props = match m
        .get_one::<String>("consumer.config")
        .or(m.get_one::<String>("command-config"))
    {
        Some(path) => properties::load_file(path.as_ref())?,
        None => Properties::new(),
    };
    props.extend(properties::parse_pairs(
        m.get_many::<String>("command-property")
            .into_iter()
            .flatten(),
    ));
    let group = m
        .get_one::<String>("group")
        .cloned()
        .unwrap_or_else(|| "perf-share-consumer".to_string());
    props.insert("group.id".into(), group.clone());
    let client_id = props
        .entry("client.id".into())
        .or_insert_with(|| "perf-share-consumer-client".into())
        .clone();
    if let Some(servers) = m.get_one::<String>("bootstrap-server") {
        props.insert("bootstrap.servers".into(), servers.clone());
    }
    let num_records = m
        .get_one::<i64>("num-records")
        .or(m.get_one::<i64>("messages"))
        .copied()
        .unwrap_or(0);
    Ok(Options {
        topic: topic.clone(),
        group,
        num_records: num_records.max(0) as u64,
        threads: threads as usize,
        timeout: m.get_one::<i64>("timeout").copied().unwrap_or(10_000),
        reporting_interval: reporting_interval(m)?,
        detailed: m.get_flag("show-detailed-stats"),
        per_consumer: m.get_flag("show-consumer-stats"),
        hide_header: m.get_flag("hide-header"),
        date_format,
        client_id,
        properties: props,
    })
}

/// What one consumer read.
#[derive(Default)]
struct Consumed {
    records: u64,
    bytes: u64,
}

/// Counts shared by the consumers: the run stops once they read `--num-records` together.
struct Shared {
    records: AtomicU64,
    bytes: AtomicU64,
    stop: AtomicBool,
}

fn run(m: &ArgMatches) -> Result<(), CliError> {
    let opts = options(m)?;
    if !opts.hide_header {
        emit(
            "start.time, end.time, data.consumed.in.MB, MB.sec, nMsg.sec, data.consumed.in.nMsg, fetch.time.ms\n",
        )?;
    }
    let interrupt = Interrupt::install();
    let shared = Arc::new(Shared {
        records: AtomicU64::new(0),
        bytes: AtomicU64::new(0),
        stop: AtomicBool::new(false),
    });
    let start = now_ms();
    let results: Vec<Result<Consumed, CliError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (1..=opts.threads)
            .map(|index| {
                let (shared, interrupt, opts) = (Arc::clone(&shared), interrupt.clone(), &opts);
                scope.spawn(move || consume(m, opts, index, &shared, &interrupt))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    let end = now_ms();
    let mut consumed = Vec::new();
    for result in results {
        consumed.push(result?);
    }
    let mut out = String::new();
    if opts.per_consumer {
        for (i, c) in consumed.iter().enumerate() {
            out.push_str(&format!(
                "Share consumer {} having client id {}-{} consumption metrics- {}\n",
                i + 1,
                opts.client_id,
                i + 1,
                stats(&opts, start, end, c.records, c.bytes)
            ));
        }
    }
    let records = shared.records.load(Ordering::Relaxed);
    if records < opts.num_records && !interrupt.is_set() {
        emit(&out)?;
        out.clear();
        eprintln!(
            "WARNING: Exiting before consuming the expected number of records: timeout ({} ms) exceeded. You can use the --timeout option to increase the timeout.",
            opts.timeout
        );
    }
    out.push_str(&stats(
        &opts,
        start,
        end,
        records,
        shared.bytes.load(Ordering::Relaxed),
    ));
    out.push('\n');
    emit(&out)?;
    if interrupt.is_set() {
        return Err(interrupt.error());
    }
    Ok(())
}

/// Kafka's statistics fields from `start` to `end` (ms): the times, MB, MB/s, records/s,
/// records and the milliseconds.
fn stats(opts: &Options, start: i64, end: i64, records: u64, bytes: u64) -> String {
    let seconds = ((end - start) as f64 / 1000.0).max(f64::MIN_POSITIVE);
    let mb = bytes as f64 / MB;
    format!(
        "{}, {}, {}, {}, {}, {}, {}",
        opts.date_format.format(start),
        opts.date_format.format(end),
        java_fixed(mb, 4),
        java_fixed(mb / seconds, 4),
        java_fixed(records as f64 / seconds, 4),
        records,
        end - start
    )
}

/// One share consumer's loop: polls and accepts until the consumers read `--num-records`
/// together, or `--timeout` passes without a record.
fn consume(
    m: &ArgMatches,
    opts: &Options,
    index: usize,
    shared: &Shared,
    interrupt: &Interrupt,
) -> Result<Consumed, CliError> {
    let mut props = opts.properties.clone();
    if opts.threads > 1 {
        props.insert("client.id".into(), format!("{}-{index}", opts.client_id));
    }
    let max_poll_records = props
        .get("max.poll.records")
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|n| *n > 0)
        .unwrap_or(500);
    let config = ShareConsumerConfig {
        group_id: opts.group.clone(),
        client_id: props["client.id"].clone(),
        topics: vec![opts.topic.clone()],
        max_poll_records,
    };
    let mut consumer = open_client(m, Some(&props))?.into_share_consumer(config)?;
    let mut mine = Consumed::default();
    let mut last_record = now_ms();
    let (mut last_report, mut report_records, mut report_bytes) = (last_record, 0u64, 0u64);
    let result = loop {
        if shared.stop.load(Ordering::Relaxed) || interrupt.is_set() {
            break Ok(());
        }
        if shared.records.load(Ordering::Relaxed) >= opts.num_records
            || now_ms() - last_record > opts.timeout
        {
            shared.stop.store(true, Ordering::Relaxed);
            break Ok(());
        }
        let mut batch = Vec::new();
        let polled = consumer.poll(POLL_WAIT, |r| {
            let size = r.record.key.map_or(0, <[u8]>::len) + r.record.value.map_or(0, <[u8]>::len);
            batch.push((
                r.topic.to_string(),
                r.partition,
                r.record.offset,
                size as u64,
            ));
            true
        });
        if let Err(e) = polled {
            break Err(e.into());
        }
        for (topic, partition, offset, size) in batch.drain(..) {
            mine.records += 1;
            mine.bytes += size;
            shared.records.fetch_add(1, Ordering::Relaxed);
            shared.bytes.fetch_add(size, Ordering::Relaxed);
            consumer.acknowledge(&topic, partition, offset, AcknowledgeType::Accept);
            last_record = now_ms();
        }
        let now = now_ms();
        if opts.detailed && now - last_report >= opts.reporting_interval {
            let seconds = ((now - last_report) as f64 / 1000.0).max(f64::MIN_POSITIVE);
            let interval_mb = (mine.bytes - report_bytes) as f64 / MB;
            let line = format!(
                "{}, {}, {}, {}, {}, {}, {} for share consumer {index}\n",
                opts.date_format.format(last_report),
                opts.date_format.format(now),
                java_fixed(mine.bytes as f64 / MB, 4),
                java_fixed(interval_mb / seconds, 4),
                java_fixed((mine.records - report_records) as f64 / seconds, 4),
                mine.records,
                now - last_report
            );
            emit(&line)?;
            (last_report, report_records, report_bytes) = (now, mine.records, mine.bytes);
        }
    };
    // The close sends the last acceptances and gives back what was not read.
    let closed = consumer.close().map_err(CliError::from);
    result.and(closed)?;
    Ok(mine)
}
