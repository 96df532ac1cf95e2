//! `kafka-console-consumer`: prints the records of the embedded log or a Kafka cluster
//! (Kafka's `ConsoleConsumer`), through the client's consumer engine.
//!
//! The tool turns its arguments into a [`ConsumerConfig`], formats each record the engine hands
//! it (Kafka's formatters, or JSON), writes the output to stdout, and tells the engine how much
//! of it stdout accepted, so that a group commits only what was written. It stops at
//! `--max-messages`, `--timeout-ms`, Ctrl-C or a closed stdout.

use std::fs::File;
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::anyhow;
use clap::{Arg, ArgAction, ArgMatches, Command};

use super::client_config;
use super::formatter::{Formatter, FormatterKind};
use super::json;
use super::pipe;
use super::progress::{self, Progress, Total};
use super::properties::{self, Properties};
use super::signals::Interrupt;
use super::{CliError, connection_args, open_client, run_tool, usage};
use crate::client::consumer::{
    ConsumedRecord, Consumer, ConsumerConfig, GroupProtocol, GroupSettings, Handled, Isolation,
    OffsetReset, Start, Subscription,
};
use crate::client::{ClientError, TopicPattern};

/// Kafka's formatter classes, offered by completions.
pub(super) const FORMATTERS: &[&str] = &[
    "org.apache.kafka.tools.consumer.DefaultMessageFormatter",
    "org.apache.kafka.tools.consumer.LoggingMessageFormatter",
    "org.apache.kafka.tools.consumer.NoOpMessageFormatter",
];
/// Kafka's deserializer classes, offered by completions.
pub(super) const DESERIALIZERS: &[&str] = &[
    "org.apache.kafka.common.serialization.StringDeserializer",
    "org.apache.kafka.common.serialization.LongDeserializer",
    "org.apache.kafka.common.serialization.IntegerDeserializer",
    "org.apache.kafka.common.serialization.ShortDeserializer",
    "org.apache.kafka.common.serialization.DoubleDeserializer",
    "org.apache.kafka.common.serialization.FloatDeserializer",
    "org.apache.kafka.common.serialization.UUIDDeserializer",
    "org.apache.kafka.common.serialization.ByteArrayDeserializer",
    "org.apache.kafka.common.serialization.BytesDeserializer",
    "org.apache.kafka.common.serialization.VoidDeserializer",
];
/// How long the consumer sleeps when every partition is caught up.
const POLL_INTERVAL: Duration = Duration::from_millis(20);
/// How long to wait before asking an unreachable cluster again.
const RECONNECT_BACKOFF: Duration = Duration::from_secs(1);
/// Output buffered per round, reused between rounds.
const OUTPUT_CAPACITY: usize = 1024 * 1024 + 4096;
/// The stdout pipe's size when it can be grown: about a round's output (Linux's default
/// `/proc/sys/fs/pipe-max-size`, so an unprivileged user may set it).
const PIPE_BYTES: usize = 1024 * 1024;
/// How long a group member that is done waits for its pipe's reader to take what is left
/// (see `Printer::wait_for_reader`), and how often it looks.
const READER_WAIT: Duration = Duration::from_secs(10);
const READER_POLL: Duration = Duration::from_millis(10);

fn opt(name: &'static str, value_name: &'static str, help: &'static str) -> Arg {
    super::value_option(name, value_name, help, "Consumer")
}

/// The clap definition of `kafka-console-consumer`.
pub fn command() -> Command {
    let cmd = Command::new("kafka-console-consumer")
        .about("This tool helps to read data from Kafka topics and outputs it to standard output.")
        .arg(opt("topic", "topic", "The topic to consume on."))
        .arg(opt("include", "Java regex (String)", "Regular expression of the topics to consume (whole-name match)."))
        .arg(opt("partition", "Integer: partition", "The partition to consume from; starts at the end unless --offset or --from-beginning.").value_parser(clap::value_parser!(i32)).allow_negative_numbers(true))
        .arg(opt("offset", "consume offset", "earliest, latest or a non-negative offset (with --partition) [default: latest].").allow_hyphen_values(true).value_parser(super::Suggest(&["earliest", "latest"])))
        .arg(Arg::new("from-beginning").long("from-beginning").action(ArgAction::SetTrue).help("Start with the earliest message present in the log.").help_heading("Consumer"))
        .arg(opt("group", "consumer group id", "The consumer group id of the consumer."))
        .arg(opt("max-messages", "Integer: num_messages", "Exit after consuming this many messages.").value_parser(clap::value_parser!(i32)).allow_negative_numbers(true))
        .arg(opt("timeout-ms", "Integer: timeout_ms", "Exit if no message is available for consumption for this long.").value_parser(clap::value_parser!(i64)).allow_negative_numbers(true))
        .arg(Arg::new("skip-message-on-error").long("skip-message-on-error").action(ArgAction::SetTrue).help("Skip a message that cannot be formatted instead of stopping.").help_heading("Consumer"))
        .arg(Arg::new("no-progress").long("no-progress").action(ArgAction::SetTrue).help("Do not draw progress on stderr (drawn only when stderr is a terminal and the end is known, with --until-end).").help_heading("Output"))
        .arg(opt("from-time", "time", "Start at the first record at or after this time: RFC 3339 (2026-11-30T12:00:00Z), relative (-1h, -30m, -2d) or epoch milliseconds.").allow_hyphen_values(true))
        .arg(Arg::new("until-end").long("until-end").action(ArgAction::SetTrue).help("Stop once every partition reaches the end it had when the consumer started.").help_heading("Consumer"))
        .arg(opt("until-time", "time", "Print records up to this time (same formats as --from-time), then stop.").allow_hyphen_values(true))
        .arg(
            opt("output", "format", "text (the formatter's output) or json (one lossless JSON object per record: topic, partition, offset, timestamp, timestampType, key, value, headers) [default: text].")
                .value_parser(super::Suggest(&["text", "json"])),
        )
        .arg(opt("formatter", "class", "DefaultMessageFormatter, LoggingMessageFormatter or NoOpMessageFormatter.").value_parser(super::Suggest(FORMATTERS)))
        .arg(opt("formatter-property", "prop", "A formatter property key=value (repeatable).").action(ArgAction::Append))
        .arg(opt("property", "prop", "Deprecated: use --formatter-property.").action(ArgAction::Append))
        .arg(opt("formatter-config", "config file", "Formatter properties file."))
        .arg(opt("key-deserializer", "deserializer for key", "Deserializer class for keys (formatter property key.deserializer).").value_parser(super::Suggest(DESERIALIZERS)))
        .arg(opt("value-deserializer", "deserializer for values", "Deserializer class for values (formatter property value.deserializer).").value_parser(super::Suggest(DESERIALIZERS)))
        .arg(opt("command-property", "consumer_prop", "A consumer property key=value (repeatable).").action(ArgAction::Append))
        .arg(opt("consumer-property", "consumer_prop", "Deprecated: use --command-property.").action(ArgAction::Append))
        .arg(opt("command-config", "config file", "Consumer properties file."))
        .arg(opt("consumer.config", "config file", "Deprecated: use --command-config."))
        .arg(opt("isolation-level", "isolation level", "read_committed or read_uncommitted [default: read_uncommitted].").value_parser(super::Suggest(&["read_committed", "read_uncommitted"])))
        .arg(Arg::new("enable-systest-events").long("enable-systest-events").action(ArgAction::SetTrue).help("Print shutdown_complete when the consumer stops.").help_heading("Consumer"));
    connection_args(cmd)
}

/// Entry point of the `kafka-console-consumer` binary.
pub fn main() -> ExitCode {
    run_tool(command(), "", run)
}

/// A consumer run, as its arguments say: what to read (for the engine) and how to print it.
struct Options {
    /// `--output json`: kafkit's JSON records instead of the formatter's text.
    json: bool,
    /// Draw progress (stderr is a terminal and `--no-progress` is absent).
    progress: bool,
    consumer: ConsumerConfig,
    max_messages: Option<u64>,
    timeout: Option<Duration>,
    skip_errors: bool,
    formatter: Formatter,
    systest: bool,
}

/// The group id from `--group`, the command properties and the command config; where more than
/// one gives it they must agree (Kafka's rule and message).
fn group_id(
    m: &ArgMatches,
    file: &Properties,
    pairs: &Properties,
) -> Result<Option<String>, CliError> {
    let mut ids: Vec<&String> = [
        m.get_one::<String>("group"),
        pairs.get("group.id"),
        file.get("group.id"),
    ]
    .into_iter()
    .flatten()
    .collect();
    ids.dedup();
    let mut distinct = ids.clone();
    distinct.sort();
    distinct.dedup();
    if distinct.len() > 1 {
        let listed: Vec<String> = ids.iter().map(|id| format!("'{id}'")).collect();
        return usage(format!(
            "The group ids provided in different places (directly using '--group', via '--consumer-property', or via '--consumer.config') do not match. Detected group ids: {}",
            listed.join(", ")
        ));
    }
    Ok(ids.first().map(|id| (*id).clone()))
}

/// A group member's settings from Kafka's consumer properties, checked as Kafka checks them.
pub(crate) fn group_settings(id: String, props: &Properties) -> Result<GroupSettings, CliError> {
    {
        let ms =
            |key: &str, default: u64| -> Result<Duration, CliError> {
                match props.get(key) {
                None => Ok(Duration::from_millis(default)),
                Some(v) => v.trim().parse::<u64>().map(Duration::from_millis).map_err(|_| {
                    CliError::Usage(format!(
                        "Invalid value {v} for configuration {key}: Not a number of type INT"
                    ))
                }),
            }
            };
        let auto_commit = match props.get("enable.auto.commit").map(|v| v.trim()) {
            None => true,
            Some(v) if v.eq_ignore_ascii_case("true") => true,
            Some(v) if v.eq_ignore_ascii_case("false") => false,
            Some(v) => {
                return usage(format!(
                    "Invalid value {v} for configuration enable.auto.commit: Expected value to be either true or false"
                ));
            }
        };
        let protocol = match props
            .get("group.protocol")
            .map(|v| v.trim().to_ascii_lowercase())
        {
            None => GroupProtocol::Classic,
            Some(v) if v == "classic" => GroupProtocol::Classic,
            Some(v) if v == "consumer" => GroupProtocol::Consumer,
            Some(v) => {
                return usage(format!(
                    "Invalid value {v} for configuration group.protocol: String must be one of (case insensitive): CLASSIC, CONSUMER"
                ));
            }
        };
        Ok(GroupSettings {
            id,
            client_id: props
                .get("client.id")
                .cloned()
                .unwrap_or_else(|| "console-consumer".into()),
            auto_commit,
            auto_commit_interval: ms("auto.commit.interval.ms", 5000)?,
            session_timeout: ms("session.timeout.ms", 45_000)?,
            heartbeat_interval: ms("heartbeat.interval.ms", 3000)?,
            rebalance_timeout: ms("max.poll.interval.ms", 300_000)?,
            retry_backoff: ms("retry.backoff.ms", 100)?,
            protocol,
        })
    }
}

fn deprecated_pair(m: &ArgMatches, new: &str, old: &str, warn: bool) -> Result<(), CliError> {
    if m.contains_id(new) && m.contains_id(old) {
        return usage(format!(
            "Options --{old} and --{new} cannot be specified together."
        ));
    }
    if warn && m.contains_id(old) {
        eprintln!(
            "Option --{old} is deprecated and will be removed in a future version. Use --{new} instead."
        );
    }
    Ok(())
}

fn options(m: &ArgMatches) -> Result<(Options, Properties), CliError> {
    let topic = m.get_one::<String>("topic");
    let include = m.get_one::<String>("include");
    if topic.is_some() == include.is_some() {
        return usage("Exactly one of the following arguments is required: [topic], [include]");
    }
    let partition = m.get_one::<i32>("partition");
    if partition.is_some() && topic.is_none() {
        return usage("The topic is required when partition is specified.");
    }
    if partition.is_some() && m.get_flag("from-beginning") && m.contains_id("offset") {
        return usage("Options from-beginning and offset cannot be specified together.");
    }
    if partition.is_none() && m.contains_id("offset") {
        return usage("The partition is required when offset is specified.");
    }
    deprecated_pair(m, "command-property", "consumer-property", true)?;
    deprecated_pair(m, "command-config", "consumer.config", true)?;
    deprecated_pair(m, "formatter-property", "property", true)?;

    let (file, pairs) = command_properties(m)?;
    let group = group_id(m, &file, &pairs)?;
    let mut command = file;
    command.extend(pairs);
    // Java's consumer checks every property it knows when it is built, group or not.
    client_config::validate(client_config::Client::Consumer, &command)?;
    if let Some(g) = &group {
        if partition.is_some() {
            return usage("Options group and partition cannot be specified together.");
        }
        command.insert("group.id".into(), g.clone());
    }
    let group = match group {
        Some(id) => Some(group_settings(id, &command)?),
        None => None,
    };
    let from_beginning = m.get_flag("from-beginning");
    let reset = offset_reset(&command, from_beginning)?;
    let isolation = isolation(m, &command)?;

    let subscription = subscription(m, from_beginning)?;

    let formatter = formatter(m)?;
    let parse = |name: &str| -> Result<Option<i64>, CliError> {
        m.get_one::<String>(name)
            .map(|v| parse_time(v).map_err(|e| CliError::Usage(format!("--{name} '{v}' {e}"))))
            .transpose()
    };
    let from_time = parse("from-time")?;
    let until_time = parse("until-time")?;
    let until_end = m.get_flag("until-end");
    if from_time.is_some() && (from_beginning || m.contains_id("offset")) {
        return usage("Option --from-time can't be used with --from-beginning or --offset.");
    }
    if until_end && until_time.is_some() {
        return usage("Options --until-end and --until-time cannot be specified together.");
    }
    let json = match m.get_one::<String>("output").map(String::as_str) {
        None | Some("text") => false,
        Some("json") => true,
        Some(other) => {
            return usage(format!(
                "--output {other} is not supported by kafka-console-consumer; use text (the formatter) or json"
            ));
        }
    };
    // Kafka's loop runs `while (count < max || max == -1)`: -1 is no limit, and 0 or any other
    // negative number reads nothing.
    let max_messages = match m.get_one::<i32>("max-messages") {
        None | Some(-1) => None,
        Some(n) => Some((*n).max(0) as u64),
    };
    let timeout = m
        .get_one::<i64>("timeout-ms")
        .filter(|t| **t >= 0)
        .map(|t| Duration::from_millis(*t as u64));
    Ok((
        Options {
            json,
            progress: progress::wanted(m.get_flag("no-progress")),
            consumer: ConsumerConfig {
                subscription,
                reset,
                isolation,
                from_time,
                until_end,
                until_time,
                group,
                allow_auto_create_topics: !is_false(command.get("allow.auto.create.topics")),
            },
            max_messages,
            timeout,
            skip_errors: m.get_flag("skip-message-on-error"),
            formatter,
            systest: m.get_flag("enable-systest-events"),
        },
        command,
    ))
}

fn run(m: &ArgMatches) -> Result<(), CliError> {
    let (opts, mut command) = options(m)?;
    // Kafka's console consumer names itself so to the cluster (its group members show it).
    command
        .entry("client.id".to_string())
        .or_insert_with(|| "console-consumer".to_string());
    let consumer = open_client(m, Some(&command))?.into_consumer(opts.consumer.clone())?;
    let interrupt = Interrupt::install();
    let mut printer = Printer::new(consumer, opts.consumer.group.is_some())?;
    let result = printer.run(&opts, &interrupt);
    if opts.consumer.group.is_some() {
        printer.wait_for_reader();
    }
    // Like Kafka's consumer on close: commit what was printed, then leave the group.
    let closed = printer.consumer.close().map_err(CliError::from);
    let result = result.and(closed);
    // Kafka's consumer logs its failure, then counts from its `finally`: the same order.
    let result = match result {
        Err(CliError::Runtime(e)) => {
            eprintln!("{}", super::error_chain(&e));
            Err(CliError::Reported)
        }
        other => other,
    };
    eprintln!("Processed a total of {} messages", printer.written);
    if opts.systest {
        println!("shutdown_complete");
    }
    result
}

/// The consumer's loop: rounds of the engine, formatted into one buffer, written to stdout.
struct Printer {
    consumer: Consumer,
    /// Records formatted (for `--max-messages`).
    count: u64,
    /// Records whose output stdout accepted ("Processed a total of N messages").
    written: u64,
    /// The cluster could not be reached in the last round (warned once).
    disconnected: bool,
    /// The last auto-commit failed for want of the cluster (warned once).
    commit_failing: bool,
    out: Vec<u8>,
    /// Standard output without Rust's buffer, so that what `write(2)` accepted is known.
    stdout: File,
    /// Its capacity when it is a pipe: writes never take more than its room (see `write_out`).
    pipe_size: Option<usize>,
    last_record: Instant,
}

impl Printer {
    /// A printer to stdout; a group member's (`commits`) commits only what its pipe's reader
    /// took.
    fn new(mut consumer: Consumer, commits: bool) -> Result<Printer, CliError> {
        // A round's output then fits the pipe in one write (see `pipe`), and what the pipe
        // holds is committed only once its reader has taken it.
        let (stdout, is_pipe, pipe_size) = pipe::stdout_for_records(PIPE_BYTES)
            .map_err(|e| anyhow!("cannot use standard out: {e}"))?;
        if commits && is_pipe {
            let pipe = stdout
                .try_clone()
                .map_err(|e| anyhow!("cannot use standard out: {e}"))?;
            consumer.commit_only_what_is_read(Box::new(move || pipe::unread(&pipe)));
        }
        Ok(Printer {
            consumer,
            count: 0,
            written: 0,
            disconnected: false,
            commit_failing: false,
            out: Vec::with_capacity(OUTPUT_CAPACITY),
            stdout,
            pipe_size,
            last_record: Instant::now(),
        })
    }

    fn run(&mut self, opts: &Options, interrupt: &Interrupt) -> Result<(), CliError> {
        if opts.max_messages == Some(0) {
            return Ok(());
        }
        let mut display: Option<Progress> = None;
        loop {
            if interrupt.is_set() {
                return Err(interrupt.error());
            }
            // Also while the cluster is unreachable: --timeout-ms bounds the wait for records.
            if self.disconnected && self.timed_out(opts) {
                return Ok(());
            }
            let before = (self.count, self.out.len());
            let mut failure = None;
            let polled = {
                let (out, count) = (&mut self.out, &mut self.count);
                self.consumer
                    .poll(|r| format_record(opts, r, out, count, &mut failure))
            };
            if polled.is_err() {
                // Records formatted before the failure were read: print them before stopping.
                let _ = self.write_out(interrupt);
            }
            let Some(round) = self.unless_disconnected(polled)? else {
                continue;
            };
            for warning in &round.warnings {
                eprintln!("{warning}");
            }
            if display.is_none()
                && opts.progress
                && opts.consumer.until_end
                && let Some(total) = self.consumer.remaining_to_end()
            {
                // The end is known once partitions are assigned: a bar with an ETA.
                display = Some(Progress::new(true, Total::Records(total)));
            }
            if let Some(d) = display.as_mut() {
                d.add(self.count - before.0, (self.out.len() - before.1) as u64);
                if round.done {
                    d.finish();
                }
            }
            if let Err(e) = self.write_out(interrupt) {
                // Ctrl-C while the reader took nothing: an orderly exit, not a failed write.
                if interrupt.is_set() {
                    return Err(interrupt.error());
                }
                eprintln!("Unable to write to standard out, closing consumer.");
                // A reader that closed the pipe (`| head`) ends the consumer normally, as
                // Kafka's does; any other failure (a full disk) is an error.
                return match e.kind() {
                    std::io::ErrorKind::BrokenPipe => Ok(()),
                    _ => Err(anyhow!("writing to standard out failed: {e}").into()),
                };
            }
            if let Some(e) = failure {
                return Err(anyhow!("Unknown error when running consumer: {e}").into());
            }
            if round.read {
                self.last_record = Instant::now();
            }
            if round.done {
                return Ok(());
            }
            let committed = self.consumer.auto_commit();
            self.unless_commit_failed(committed)?;
            if interrupt.is_set() {
                return Err(interrupt.error());
            }
            if !round.read {
                if self.timed_out(opts) {
                    return Ok(());
                }
                // All output is written, maybe into a pipe whose reader has exited (see
                // `pipe`): stop as a failed write would.
                if pipe::reader_gone(&self.stdout) {
                    eprintln!("Unable to write to standard out, closing consumer.");
                    return Ok(());
                }
                std::thread::sleep(POLL_INTERVAL);
            }
        }
    }

    /// Before the final commit of a group member (also after Ctrl-C): gives the reader of
    /// its pipe time to take what was written, so that records it is about to read are
    /// committed rather than read again by the group's next member. Not past the reader's
    /// exit or [`READER_WAIT`] (a reader that stopped reading: what it did not take stays
    /// uncommitted); a second Ctrl-C ends the wait with the process (see `signals`).
    fn wait_for_reader(&mut self) {
        let start = Instant::now();
        while self.consumer.unread_output() > 0
            && !pipe::reader_gone(&self.stdout)
            && start.elapsed() < READER_WAIT
        {
            std::thread::sleep(READER_POLL);
        }
    }

    /// `--timeout-ms` passed since the last record.
    fn timed_out(&self, opts: &Options) -> bool {
        opts.timeout
            .is_some_and(|t| self.last_record.elapsed() >= t)
    }

    /// A cluster that cannot be reached right now (a broker restarting) is waited for, as
    /// Kafka's consumer waits: one warning, then a retry every second. `None` means "try again".
    fn unless_disconnected<T>(
        &mut self,
        result: Result<T, ClientError>,
    ) -> Result<Option<T>, CliError> {
        match result {
            Ok(v) => {
                self.disconnected = false;
                Ok(Some(v))
            }
            Err(e) if e.is_connection() => {
                if !self.disconnected {
                    let what = e.connection_summary().unwrap_or_else(|| e.to_string());
                    eprintln!(
                        "WARN: lost the cluster ({what}); retrying every second until it answers"
                    );
                    self.disconnected = true;
                }
                std::thread::sleep(RECONNECT_BACKOFF);
                Ok(None)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// An auto-commit the cluster could not take (its group coordinator is down or moving)
    /// is retried at the next interval, as Kafka's consumer does, while reading goes on: one
    /// warning per outage, and no wait.
    fn unless_commit_failed(&mut self, result: Result<(), ClientError>) -> Result<(), CliError> {
        match result {
            Ok(()) => {
                self.commit_failing = false;
                Ok(())
            }
            Err(e) if e.is_connection() => {
                if !self.commit_failing {
                    let what = e.connection_summary().unwrap_or_else(|| e.to_string());
                    eprintln!(
                        "WARN: could not commit the group's offsets ({what}); retrying at each auto-commit interval"
                    );
                    self.commit_failing = true;
                }
                Ok(())
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Writes the formatted output to stdout, then tells the engine how much of it `write(2)`
    /// accepted: only the records within it count as delivered (committed, counted), so a
    /// failed or closed stdout never has records committed that it did not take.
    ///
    /// Into a pipe, each write takes at most the pipe's room ([`pipe::room`]), so that a
    /// reader that stopped reading never holds the consumer inside write(2): Ctrl-C stops the
    /// writing (an `Interrupted` error) and the consumer exits in order.
    fn write_out(&mut self, interrupt: &Interrupt) -> std::io::Result<()> {
        let (accepted, result) =
            pipe::write_interruptibly(&mut self.stdout, self.pipe_size, &self.out, || {
                interrupt.is_set()
            });
        self.written += self.consumer.settle(accepted);
        self.out.clear();
        result
    }
}

/// Formats one record into `out` (Kafka's formatter or JSON) and says what became of it.
fn format_record(
    opts: &Options,
    r: ConsumedRecord<'_, '_>,
    out: &mut Vec<u8>,
    count: &mut u64,
    failure: &mut Option<String>,
) -> Handled {
    *count += 1;
    let formatted = if opts.json {
        json::write_record(r.topic, r.partition, r.timestamp_type, r.record, out);
        Ok(())
    } else {
        opts.formatter
            .format(r.partition, r.timestamp_type, r.record, out)
    };
    let delivered = match formatted {
        Ok(()) => true,
        Err(e) if opts.skip_errors => {
            eprintln!("ERROR Error processing message, skipping this message: {e}");
            true
        }
        Err(e) => {
            // Counted, as Kafka counts it, but not delivered: a commit stops before it.
            *failure = Some(e);
            false
        }
    };
    Handled {
        output_end: out.len(),
        delivered,
        stop: !delivered || opts.max_messages.is_some_and(|max| *count >= max),
    }
}

/// The consumer properties of `--command-config` (or `--consumer.config`) and of
/// `--command-property` (or `--consumer-property`), apart.
fn command_properties(m: &ArgMatches) -> Result<(Properties, Properties), CliError> {
    let file = match m
        .get_one::<String>("command-config")
        .or(m.get_one::<String>("consumer.config"))
    {
        Some(path) => properties::load_file(path.as_ref())?,
        None => Properties::new(),
    };
    let pairs = m
        .get_many::<String>("command-property")
        .or(m.get_many::<String>("consumer-property"));
    Ok((file, properties::parse_pairs(pairs.into_iter().flatten())))
}

/// `auto.offset.reset`, or `--from-beginning`; both only when they agree (Kafka's rule).
fn offset_reset(command: &Properties, from_beginning: bool) -> Result<OffsetReset, CliError> {
    match command
        .get("auto.offset.reset")
        .map(|v| v.trim().to_string())
    {
        None => {
            if from_beginning {
                Ok(OffsetReset::Earliest)
            } else {
                Ok(OffsetReset::Latest)
            }
        }
        Some(v) if from_beginning && v != "earliest" => {
            Err(anyhow!(
                "Can't simultaneously specify --from-beginning and 'auto.offset.reset={v}', please remove one option"
            )
            .into())
        }
        Some(v) if v == "earliest" => Ok(OffsetReset::Earliest),
        Some(v) if v == "latest" || v == "none" => Ok(OffsetReset::Latest),
        Some(v) => {
            usage(format!(
                "Invalid value {v} for configuration auto.offset.reset: String must be one of: latest, earliest, none"
            ))
        }
    }
}

/// `--isolation-level`, else `isolation.level`.
fn isolation(m: &ArgMatches, command: &Properties) -> Result<Isolation, CliError> {
    let isolation = m
        .get_one::<String>("isolation-level")
        .or(command.get("isolation.level"))
        .map_or("read_uncommitted", |s| s.as_str())
        .to_string();
    let isolation = isolation.as_str();
    if !["read_committed", "read_uncommitted"].contains(&isolation) {
        return usage(format!(
            "Invalid value {isolation} for configuration isolation.level: String must be one of: read_committed, read_uncommitted"
        ));
    }
    Ok(if isolation == "read_committed" {
        Isolation::ReadCommitted
    } else {
        Isolation::ReadUncommitted
    })
}

/// What to consume: `--topic` (with `--partition` and `--offset`) or `--include`.
fn subscription(m: &ArgMatches, from_beginning: bool) -> Result<Subscription, CliError> {
    let topic = m.get_one::<String>("topic");
    let include = m.get_one::<String>("include");
    let partition = m.get_one::<i32>("partition");
    if topic.is_some_and(|t| t.trim().is_empty()) {
        // What Java's KafkaConsumer.subscribe throws, reported as ConsoleConsumer reports it.
        return Err(anyhow!(
            "Unknown error when running consumer: java.lang.IllegalArgumentException: Topic collection to subscribe to cannot contain null or empty topic"
        )
        .into());
    }
    Ok(match (topic, include, partition) {
        (Some(topic), _, Some(p)) => {
            if *p < 0 {
                return usage(format!(
                    "Invalid partition {p}: partitions are numbered from 0"
                ));
            }
            let start = match m.get_one::<String>("offset") {
                Some(o) if o.eq_ignore_ascii_case("earliest") => Start::Earliest,
                Some(o) if o.eq_ignore_ascii_case("latest") => Start::Latest,
                Some(o) => match o.parse::<i64>() {
                    Ok(n) if n >= 0 => Start::Offset(n),
                    _ => {
                        return usage(format!(
                            "The provided offset value '{o}' is incorrect. Valid values are 'earliest', 'latest', or a non-negative long."
                        ));
                    }
                },
                None if from_beginning => Start::Earliest,
                None => Start::Latest,
            };
            Subscription::Partition {
                topic: topic.clone(),
                partition: *p as u32,
                start,
            }
        }
        (Some(topic), _, None) => Subscription::Topic(topic.clone()),
        (None, Some(pattern), _) => {
            Subscription::Pattern(TopicPattern::whole_names(pattern).map_err(|why| {
                CliError::Usage(format!("{pattern} is an invalid regex. ({why})"))
            })?)
        }
        (None, None, _) => unreachable!("checked above"),
    })
}

/// Whether a boolean property is set to false (checked to be true or false beforehand).
fn is_false(value: Option<&String>) -> bool {
    value.is_some_and(|v| v.trim().eq_ignore_ascii_case("false"))
}

/// The formatter and its properties (`--formatter`, `--formatter-property`,
/// `--formatter-config`, the deserializer options).
pub(super) fn formatter(m: &ArgMatches) -> Result<Formatter, CliError> {
    let mut fprops = Properties::new();
    if let Some(path) = m.get_one::<String>("formatter-config") {
        fprops.extend(properties::load_file(path.as_ref())?);
    }
    let pairs = m
        .get_many::<String>("formatter-property")
        .or(m.get_many::<String>("property"));
    fprops.extend(properties::parse_pairs(pairs.into_iter().flatten()));
    if let Some(d) = m.get_one::<String>("key-deserializer") {
        fprops.insert("key.deserializer".into(), d.clone());
    }
    if let Some(d) = m.get_one::<String>("value-deserializer") {
        fprops.insert("value.deserializer".into(), d.clone());
    }
    let kind = match m.get_one::<String>("formatter") {
        Some(class) => FormatterKind::from_class(class).map_err(CliError::Usage)?,
        None => FormatterKind::Default,
    };
    Formatter::new(kind, &fprops).map_err(CliError::Usage)
}

/// Parses `--from-time`/`--until-time`: RFC 3339, a relative time (`-1h`), or epoch ms.
fn parse_time(text: &str) -> Result<i64, String> {
    let now = SystemTime::now();
    let ms = |t: SystemTime| {
        t.duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .map_err(|_| "is before 1970".to_string())
    };
    let text = text.trim();
    if let Some(ago) = text.strip_prefix('-') {
        let d = humantime::parse_duration(ago)
            .map_err(|e| format!("is not a relative time: {e}; use e.g. -1h, -30m, -2d"))?;
        return ms(now.checked_sub(d).ok_or("is too far in the past")?);
    }
    if let Ok(epoch) = text.parse::<i64>() {
        return Ok(epoch);
    }
    humantime::parse_rfc3339_weak(text).map_err(|_| {
        "is not a time: use RFC 3339 (2026-11-30T12:00:00Z), a relative time like -1h, or epoch milliseconds".to_string()
    }).and_then(ms)
}
