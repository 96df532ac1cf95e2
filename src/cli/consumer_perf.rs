//! `kafka-consumer-perf-test`: reads `--num-records` records as a member of a group and reports
//! how fast (Kafka's `ConsumerPerformance`), through the consumer engine of
//! `kafka-console-consumer`, on the embedded log or a cluster.
//!
//! Output is Kafka's: a CSV header, then one line of totals, or with `--show-detailed-stats` a
//! line per reporting interval. The rebalance time is the wait for the group's first
//! assignment; the fetch time is the rest of the run.

use std::process::ExitCode;
use std::time::Duration;

use clap::{Arg, ArgAction, ArgMatches, Command};

use super::consumer::group_settings;
use super::date_format::DateFormat;
use super::perf_stats::{MetricValue, java_fixed, metrics_table};
use super::properties::{self, Properties};
use super::signals::Interrupt;
use super::{CliError, connection_args, emit, open_client, run_tool, usage, validate_bootstrap};
use crate::client::TopicPattern;
use crate::client::consumer::{
    Consumer, ConsumerConfig, Handled, Isolation, OffsetReset, Subscription,
};
use crate::kafka::now_ms;

/// How long to wait before reading again when every partition is caught up.
const POLL_INTERVAL: Duration = Duration::from_millis(20);
const MB: f64 = 1024.0 * 1024.0;

fn opt(name: &'static str, value_name: &'static str, help: &'static str) -> Arg {
    super::value_option(name, value_name, help, "Consumer perf test")
}

fn flag(name: &'static str, help: &'static str) -> Arg {
    super::flag_option(name, help, "Consumer perf test", ArgAction::SetTrue)
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

/// The clap definition of `kafka-consumer-perf-test`.
pub fn command() -> Command {
    let cmd = Command::new("kafka-consumer-perf-test")
        .about("This tool is used to verify the consumer performance.")
        .arg(opt("topic", "topic", "The topic to consume from."))
        .arg(opt("include", "Java regex (String)", "Regular expression specifying list of topics to include for consumption."))
        .arg(opt("group", "gid", "The group id to consume on. [default: perf-consumer-<random number>]"))
        .arg(int("fetch-size", "size", "The maximum amount of data to fetch from a single partition per request (accepted; kafkit fetches 1 MiB per partition). [default: 1048576]"))
        .arg(opt("command-property", "prop1=val1", "Kafka consumer related configuration properties like client.id. These configs take precedence over those passed via --command-config or --consumer.config.").action(ArgAction::Append))
        .arg(flag("from-latest", "If the consumer does not already have an established offset to consume from, start with the latest record present in the log rather than the earliest record."))
        .arg(int("socket-buffer-size", "size", "The size of the tcp RECV size (accepted and ignored). [default: 2097152]"))
        .arg(opt("consumer.config", "config file", "(DEPRECATED) Consumer config properties file. Use --command-config instead."))
        .arg(opt("command-config", "config file", "Config properties file."))
        .arg(flag("print-metrics", "Print out the metrics."))
        .arg(flag("show-detailed-stats", "If set, stats are reported for each reporting interval as configured by reporting-interval."))
        .arg(long("timeout", "milliseconds", "The maximum allowed time in milliseconds between returned records. [default: 10000]").num_args(0..=1))
        .arg(long("messages", "count", "(DEPRECATED) The number of records to consume. Use --num-records instead."))
        .arg(long("num-records", "count", "REQUIRED: The number of records to consume."))
        .arg(opt("reporting-interval", "interval_ms", "Interval in milliseconds at which to print progress info. [default: 5000]"))
        .arg(opt("date-format", "date format", "The date format to use for formatting the time field. See java.text.SimpleDateFormat for options. [default: yyyy-MM-dd HH:mm:ss:SSS]"))
        .arg(flag("hide-header", "If set, skips printing the header for the stats."));
    connection_args(cmd)
}

/// Entry point of the `kafka-consumer-perf-test` binary.
pub fn main() -> ExitCode {
    run_tool(command(), "", run)
}

/// A run, as its arguments say.
struct Options {
    num_records: u64,
    timeout: i64,
    reporting_interval: i64,
    detailed: bool,
    hide_header: bool,
    print_metrics: bool,
    date_format: DateFormat,
    client_id: String,
    consumer: ConsumerConfig,
    /// The consumer properties, for the connection.
    properties: Properties,
}

fn options(m: &ArgMatches) -> Result<Options, CliError> {
    let one_of = |a: &str, b: &str| -> Result<(), CliError> {
        if m.contains_id(a) == m.contains_id(b) {
            return usage(format!(
                "Exactly one of the following arguments is required: [{a}], [{b}]"
            ));
        }
        Ok(())
    };
    one_of("topic", "include")?;
    one_of("messages", "num-records")?;
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
    let reporting_interval = reporting_interval(m)?;
    let pattern = m
        .get_one::<String>("date-format")
        .map_or("yyyy-MM-dd HH:mm:ss:SSS", String::as_str);
    let date_format = DateFormat::new(pattern).map_err(CliError::Usage)?;
    let (props, group) = consumer_properties(m)?;
    super::client_config::validate(super::client_config::Client::Consumer, &props)?;
    let subscription = match (m.get_one::<String>("topic"), m.get_one::<String>("include")) {
        (Some(topic), _) => {
            // Checked before the group is joined, so that a bad name leaves no group behind.
            crate::client::topic_name::validate(topic).map_err(|e| anyhow::anyhow!(e))?;
            Subscription::Topic(topic.clone())
        }
        (None, Some(re)) => Subscription::Pattern(
            TopicPattern::whole_names(re)
                .map_err(|why| CliError::Usage(format!("{re} is an invalid regex. ({why})")))?,
        ),
        (None, None) => unreachable!("checked above"),
    };
    let num_records = m
        .get_one::<i64>("num-records")
        .or(m.get_one::<i64>("messages"))
        .copied()
        .unwrap_or(0);
    Ok(Options {
        num_records: num_records.max(0) as u64,
        timeout: m.get_one::<i64>("timeout").copied().unwrap_or(10_000),
        reporting_interval,
        detailed: m.get_flag("show-detailed-stats"),
        hide_header: m.get_flag("hide-header"),
        print_metrics: m.get_flag("print-metrics"),
        date_format,
        client_id: props["client.id"].clone(),
        consumer: ConsumerConfig {
            subscription,
            reset: if m.get_flag("from-latest") {
                OffsetReset::Latest
            } else {
                OffsetReset::Earliest
            },
            isolation: Isolation::ReadUncommitted,
            from_time: None,
            until_end: false,
            until_time: None,
            group: Some(group_settings(group, &props)?),
            allow_auto_create_topics: props
                .get("allow.auto.create.topics")
                .is_none_or(|v| !v.trim().eq_ignore_ascii_case("false")),
        },
        properties: props,
    })
}

/// `--reporting-interval`: digits only (Kafka's regex), more than 0.
pub(super) fn reporting_interval(m: &ArgMatches) -> Result<i64, CliError> {
    let Some(v) = m.get_one::<String>("reporting-interval") else {
        return Ok(5000);
    };
    let digits = !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit());
    match v.parse::<i64>() {
        Ok(0) if digits => usage("Reporting interval must be greater than 0."),
        Ok(n) if digits => Ok(n),
        _ => usage(format!(
            "Cannot parse argument '{v}' of option reporting-interval"
        )),
    }
}

/// The consumer properties: the config file, then `--command-property`, then what Kafka's tool
/// sets over them (the group, the bootstrap servers) and the client id it defaults; with the
/// group id.
fn consumer_properties(m: &ArgMatches) -> Result<(Properties, String), CliError> {
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
    // What Kafka's tool sets over the properties, and the client id it defaults.
    let group = m
        .get_one::<String>("group")
        .cloned()
        .unwrap_or_else(|| format!("perf-consumer-{}", rand::random::<u32>() % 100_000));
    props.insert("group.id".into(), group.clone());
    props
        .entry("client.id".into())
        .or_insert_with(|| "perf-consumer-client".into());
    if let Some(servers) = m.get_one::<String>("bootstrap-server") {
        props.insert("bootstrap.servers".into(), servers.clone());
    }
    Ok((props, group))
}

fn run(m: &ArgMatches) -> Result<(), CliError> {
    let opts = options(m)?;
    if !opts.hide_header {
        let extra = ", rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec";
        let first = if opts.detailed {
            "time, threadId"
        } else {
            "start.time, end.time"
        };
        emit(&format!(
            "{first}, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec{extra}\n"
        ))?;
    }
    let mut consumer =
        open_client(m, Some(&opts.properties))?.into_consumer(opts.consumer.clone())?;
    let interrupt = Interrupt::install();
    let start = now_ms();
    let mut run = Run::new(start);
    let consumed = run.consume(&mut consumer, &opts, &interrupt);
    let end = now_ms();
    if consumed.is_ok() && run.records < opts.num_records && !interrupt.is_set() {
        eprintln!(
            "WARNING: Exiting before consuming the expected number of records: timeout ({} ms) exceeded. You can use the --timeout option to increase the timeout.",
            opts.timeout
        );
    }
    let mut out = String::new();
    if consumed.is_ok() && !opts.detailed {
        out.push_str(&run.totals(&opts, start, end));
    }
    if consumed.is_ok() && opts.print_metrics {
        out.push_str(&run.metrics(&opts, consumer.assigned_partitions(), end - start));
    }
    emit(&out)?;
    // As Kafka's consumer on close: commit what was read, then leave the group.
    let closed = consumer.close();
    consumed?;
    closed?;
    if interrupt.is_set() {
        return Err(interrupt.error());
    }
    Ok(())
}

/// What a run read so far.
struct Run {
    records: u64,
    bytes: u64,
    /// The wait for the group's first assignment (ms), once known.
    join_ms: i64,
    /// Of it, what falls in the current reporting interval.
    join_in_interval: i64,
    joined: bool,
    join_start: i64,
    last_report: i64,
    last_records: u64,
    last_bytes: u64,
}

impl Run {
    fn new(start: i64) -> Run {
        Run {
            records: 0,
            bytes: 0,
            join_ms: 0,
            join_in_interval: 0,
            joined: false,
            join_start: start,
            last_report: start,
            last_records: 0,
            last_bytes: 0,
        }
    }

    /// Reads until `--num-records` records, or until `--timeout` passes without one.
    fn consume(
        &mut self,
        consumer: &mut Consumer,
        opts: &Options,
        interrupt: &Interrupt,
    ) -> Result<(), CliError> {
        let start = now_ms();
        let mut last_consumed = start;
        let mut current = start;
        while self.records < opts.num_records && current - last_consumed <= opts.timeout {
            let (records, bytes, wanted) = (&mut self.records, &mut self.bytes, opts.num_records);
            // The group's assignment came just before its first record: the join ends there.
            let mut joined_at = None;
            let round = consumer.poll(|r| {
                if joined_at.is_none() {
                    joined_at = Some(now_ms());
                }
                *records += 1;
                *bytes += (r.record.key.map_or(0, <[u8]>::len)
                    + r.record.value.map_or(0, <[u8]>::len)) as u64;
                Handled {
                    output_end: 0,
                    delivered: true,
                    stop: *records >= wanted,
                }
            })?;
            consumer.settle(0);
            current = now_ms();
            for warning in &round.warnings {
                eprintln!("{warning}");
            }
            if !self.joined && (joined_at.is_some() || consumer.assigned_partitions() > 0) {
                let at = joined_at.unwrap_or(current);
                self.joined = true;
                self.join_ms += at - self.join_start;
                self.join_in_interval += at - self.join_start;
            }
            if round.read {
                last_consumed = current;
                if current - self.last_report >= opts.reporting_interval {
                    if opts.detailed {
                        emit(&self.progress(opts, current))?;
                    }
                    self.join_in_interval = 0;
                    self.last_report = current;
                    self.last_records = self.records;
                    self.last_bytes = self.bytes;
                }
            }
            consumer.auto_commit()?;
            if interrupt.is_set() {
                break;
            }
            if !round.read && self.records < opts.num_records {
                std::thread::sleep(POLL_INTERVAL);
                current = now_ms();
            }
        }
        Ok(())
    }

    /// A `--show-detailed-stats` line: the interval since the last one.
    fn progress(&self, opts: &Options, now: i64) -> String {
        let elapsed = (now - self.last_report) as f64;
        let mb = self.bytes as f64 / MB;
        let interval_mb = (self.bytes - self.last_bytes) as f64 / MB;
        let interval_records = (self.records - self.last_records) as f64;
        let fetch_ms = now - self.last_report - self.join_in_interval;
        let per_fetch_sec = |v: f64| {
            if fetch_ms <= 0 {
                0.0
            } else {
                1000.0 * v / fetch_ms as f64
            }
        };
        format!(
            "{}, 0, {}, {}, {}, {}, {}, {}, {}, {}\n",
            opts.date_format.format(now),
            java_fixed(mb, 4),
            java_fixed(1000.0 * interval_mb / elapsed, 4),
            self.records,
            java_fixed(interval_records / elapsed * 1000.0, 4),
            self.join_in_interval,
            fetch_ms,
            java_fixed(per_fetch_sec(interval_mb), 4),
            java_fixed(per_fetch_sec(interval_records), 4),
        )
    }

    /// The line of totals, for a run from `start` to `end` (ms).
    fn totals(&self, opts: &Options, start: i64, end: i64) -> String {
        let seconds = (end - start) as f64 / 1000.0;
        let fetch_ms = (end - start) - self.join_ms;
        let fetch_seconds = fetch_ms as f64 / 1000.0;
        let mb = self.bytes as f64 / MB;
        let records = self.records as f64;
        format!(
            "{}, {}, {}, {}, {}, {}, {}, {}, {}, {}\n",
            opts.date_format.format(start),
            opts.date_format.format(end),
            java_fixed(mb, 4),
            java_fixed(mb / seconds, 4),
            self.records,
            java_fixed(records / seconds, 4),
            self.join_ms,
            fetch_ms,
            java_fixed(mb / fetch_seconds, 4),
            java_fixed(records / fetch_seconds, 4),
        )
    }

    /// The metrics kafkit can compute honestly, named as Kafka's consumer names them.
    fn metrics(&self, opts: &Options, assigned: usize, elapsed_ms: i64) -> String {
        let client = format!("{{client-id={}}}", opts.client_id);
        let per_sec = |n: u64| n as f64 * 1000.0 / elapsed_ms.max(1) as f64;
        let n = MetricValue::Number;
        let fetch = "consumer-fetch-manager-metrics";
        metrics_table(&[
            (
                format!("consumer-coordinator-metrics:assigned-partitions:{client}"),
                n(assigned as f64),
            ),
            (
                format!("{fetch}:bytes-consumed-rate:{client}"),
                n(per_sec(self.bytes)),
            ),
            (
                format!("{fetch}:bytes-consumed-total:{client}"),
                n(self.bytes as f64),
            ),
            (
                format!("{fetch}:records-consumed-rate:{client}"),
                n(per_sec(self.records)),
            ),
            (
                format!("{fetch}:records-consumed-total:{client}"),
                n(self.records as f64),
            ),
        ])
    }
}
