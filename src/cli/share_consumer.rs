//! `kafka-console-share-consumer`: prints the records a share group hands this member (Kafka's
//! `ConsoleShareConsumer`), acknowledging each one: accepted, or rejected (`--reject`) or
//! released (`--release`).
//!
//! A record is acknowledged only once its output reached the reader: written to stdout and,
//! into a pipe, taken out of it. Records whose output is still in the pipe when the tool
//! stops (`| head -5`) are released at the close, so the group delivers them again rather
//! than counting them done.

use std::collections::VecDeque;
use std::fs::File;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::anyhow;
use clap::{Arg, ArgAction, ArgMatches, Command};

use super::client_config;
use super::consumer::formatter;
use super::formatter::Formatter;
use super::pipe;
use super::properties::{self, Properties};
use super::signals::Interrupt;
use super::{CliError, connection_args, open_client, run_tool, usage};
use crate::client::share::{ShareConsumer, ShareConsumerConfig, SharedRecord};
use crate::kafka::share::AcknowledgeType;

/// How long one poll waits for records before the loop looks at its deadlines again.
const POLL_WAIT: Duration = Duration::from_millis(100);
/// The stdout pipe's size when it can be grown (see `consumer`).
const PIPE_BYTES: usize = 1024 * 1024;
/// How long the tool waits at its end for its pipe's reader to take what is left, and how
/// often it looks.
const READER_WAIT: Duration = Duration::from_secs(10);
const READER_POLL: Duration = Duration::from_millis(10);
/// Consumer properties a share consumer refuses (Kafka's list and order).
const NOT_FOR_SHARE_GROUPS: &[&str] = &[
    "auto.offset.reset",
    "enable.auto.commit",
    "group.instance.id",
    "isolation.level",
    "partition.assignment.strategy",
    "interceptor.classes",
    "session.timeout.ms",
    "heartbeat.interval.ms",
    "group.protocol",
    "group.remote.assignor",
];

fn opt(name: &'static str, value_name: &'static str, help: &'static str) -> Arg {
    super::value_option(name, value_name, help, "Consumer")
}

fn flag(name: &'static str, help: &'static str) -> Arg {
    Arg::new(name)
        .long(name)
        .action(ArgAction::SetTrue)
        .help(help)
        .help_heading("Consumer")
}

/// The clap definition of `kafka-console-share-consumer`.
pub fn command() -> Command {
    let cmd = Command::new("kafka-console-share-consumer")
        .about("This tool helps to read data from Kafka topics using share groups and outputs it to standard output.")
        .arg(opt("topic", "topic", "The topic to consume from."))
        .arg(opt("group", "share group id", "The share group id of the consumer [default: console-share-consumer]."))
        .arg(opt("max-messages", "Integer: num_messages", "The maximum number of messages to consume before exiting. If not set, consumption is continual.").value_parser(clap::value_parser!(i32)).allow_negative_numbers(true))
        .arg(opt("timeout-ms", "Integer: timeout_ms", "If specified, exit if no message is available for consumption for the specified interval.").value_parser(clap::value_parser!(i64)).allow_negative_numbers(true))
        .arg(flag("reject", "If specified, messages are rejected as they are consumed."))
        .arg(flag("release", "If specified, messages are released as they are consumed."))
        .arg(flag("reject-message-on-error", "If there is an error when processing a message, reject it instead of halting."))
        .arg(opt("formatter", "class", "DefaultMessageFormatter, LoggingMessageFormatter or NoOpMessageFormatter.").value_parser(super::Suggest(super::consumer::FORMATTERS)))
        .arg(opt("formatter-property", "prop", "A formatter property key=value (repeatable); print.delivery=true prints each record's delivery count.").action(ArgAction::Append))
        .arg(opt("property", "prop", "Deprecated: use --formatter-property.").action(ArgAction::Append))
        .arg(opt("formatter-config", "config file", "Formatter properties file."))
        .arg(opt("key-deserializer", "deserializer for keys", "The name of the class to use for deserializing keys.").value_parser(super::Suggest(super::consumer::DESERIALIZERS)))
        .arg(opt("value-deserializer", "deserializer for values", "The name of the class to use for deserializing values.").value_parser(super::Suggest(super::consumer::DESERIALIZERS)))
        .arg(opt("command-property", "consumer_prop", "Consumer config properties in the form key=value (repeatable).").action(ArgAction::Append))
        .arg(opt("consumer-property", "consumer_prop", "Deprecated: use --command-property.").action(ArgAction::Append))
        .arg(opt("command-config", "config file", "Consumer config properties file."))
        .arg(opt("consumer-config", "config file", "Deprecated: use --command-config."))
        .arg(flag("enable-systest-events", "Print shutdown_complete when the consumer stops."));
    connection_args(cmd)
}

/// Entry point of the `kafka-console-share-consumer` binary.
pub fn main() -> ExitCode {
    run_tool(command(), "", run)
}

/// A run, as the arguments say.
struct Options {
    consumer: ShareConsumerConfig,
    max_messages: Option<u64>,
    timeout: Option<Duration>,
    /// How each printed record is acknowledged.
    ack: AcknowledgeType,
    reject_on_error: bool,
    formatter: Formatter,
    systest: bool,
}

fn options(m: &ArgMatches) -> Result<(Options, Properties), CliError> {
    let Some(topic) = m.get_one::<String>("topic") else {
        return usage("--topic is a required argument");
    };
    if m.get_flag("reject") && m.get_flag("release") {
        return usage("At most one of --reject and --release may be specified.");
    }
    for (new, old) in [
        ("command-property", "consumer-property"),
        ("formatter-property", "property"),
    ] {
        if m.contains_id(new) && m.contains_id(old) {
            return usage(format!(
                "Options --{old} and --{new} cannot be specified together."
            ));
        }
    }
    // Kafka's tool prints these on stdout; kafkit's warnings all go to stderr.
    for (new, old) in [
        ("command-property", "consumer-property"),
        ("command-config", "consumer-config"),
        ("formatter-property", "property"),
    ] {
        if m.contains_id(old) {
            eprintln!(
                "Option --{old} is deprecated and will be removed in a future version. Use --{new} instead."
            );
        }
    }
    let mut file = Properties::new();
    for name in ["consumer-config", "command-config"] {
        if let Some(path) = m.get_one::<String>(name) {
            file.extend(properties::load_file(path.as_ref())?);
        }
    }
    let pairs = properties::parse_pairs(
        m.get_many::<String>("command-property")
            .or(m.get_many::<String>("consumer-property"))
            .into_iter()
            .flatten(),
    );
    let group = group_id(m, &file, &pairs)?;
    let mut command = file;
    command.extend(pairs);
    let refused: Vec<&str> = NOT_FOR_SHARE_GROUPS
        .iter()
        .copied()
        .filter(|name| command.contains_key(*name))
        .collect();
    if !refused.is_empty() {
        return Err(anyhow!(
            "{} cannot be set when using a share group.",
            refused.join(", ")
        )
        .into());
    }
    client_config::validate(client_config::Client::Consumer, &command)?;
    let max_poll_records = match command.get("max.poll.records") {
        None => 500,
        Some(v) => match v.trim().parse::<i32>() {
            Ok(n) if n >= 1 => n as usize,
            Ok(n) => {
                return usage(format!(
                    "Invalid value {n} for configuration max.poll.records: Value must be at least 1"
                ));
            }
            Err(_) => {
                return usage(format!(
                    "Invalid value {v} for configuration max.poll.records: Not a number of type INT"
                ));
            }
        },
    };
    command.insert("group.id".into(), group.clone());
    let client_id = command
        .entry("client.id".to_string())
        .or_insert_with(|| "console-share-consumer".to_string())
        .clone();
    // Kafka's loop runs while `count < max || max == -1`: -1 is no limit, and 0 or any other
    // negative number reads nothing.
    let max_messages = match m.get_one::<i32>("max-messages") {
        None | Some(-1) => None,
        Some(n) => Some((*n).max(0) as u64),
    };
    let timeout = m
        .get_one::<i64>("timeout-ms")
        .filter(|t| **t >= 0)
        .map(|t| Duration::from_millis(*t as u64));
    let ack = if m.get_flag("reject") {
        AcknowledgeType::Reject
    } else if m.get_flag("release") {
        AcknowledgeType::Release
    } else {
        AcknowledgeType::Accept
    };
    Ok((
        Options {
            consumer: ShareConsumerConfig {
                group_id: group,
                client_id,
                topics: vec![topic.clone()],
                max_poll_records,
            },
            max_messages,
            timeout,
            ack,
            reject_on_error: m.get_flag("reject-message-on-error"),
            formatter: formatter(m)?,
            systest: m.get_flag("enable-systest-events"),
        },
        command,
    ))
}

/// The group id from `--group`, the command properties and the command config (Kafka's
/// `console-share-consumer` when none gives one); where more than one gives it they must agree.
fn group_id(m: &ArgMatches, file: &Properties, pairs: &Properties) -> Result<String, CliError> {
    let ids: Vec<&String> = [
        m.get_one::<String>("group"),
        pairs.get("group.id"),
        file.get("group.id"),
    ]
    .into_iter()
    .flatten()
    .collect();
    let mut distinct = ids.clone();
    distinct.sort();
    distinct.dedup();
    if distinct.len() > 1 {
        let mut listed: Vec<String> = ids.iter().map(|id| format!("'{id}'")).collect();
        listed.dedup();
        return usage(format!(
            "The group ids provided in different places (directly using '--group', via '--consumer-property', or via '--consumer-config') do not match. Detected group ids: {}",
            listed.join(", ")
        ));
    }
    Ok(ids
        .first()
        .map_or_else(|| "console-share-consumer".to_string(), |id| (*id).clone()))
}

fn run(m: &ArgMatches) -> Result<(), CliError> {
    let (opts, command) = options(m)?;
    let consumer = open_client(m, Some(&command))?.into_share_consumer(opts.consumer.clone())?;
    let interrupt = Interrupt::install();
    let mut printer = Printer::new(consumer)?;
    let result = printer.run(&opts, &interrupt);
    printer.wait_for_reader();
    printer.acknowledge_read();
    let closed = printer.consumer.close().map_err(CliError::from);
    let result = result.and(closed);
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

/// A printed record waiting for its acknowledgement: once the reader took its output.
struct Printed {
    /// Where its output ends, counted from the first byte the tool wrote.
    end: u64,
    topic: String,
    partition: i32,
    offset: i64,
    ack: AcknowledgeType,
}

/// The loop: polls, formats each round into one buffer, writes it to stdout, and
/// acknowledges what the reader took.
struct Printer {
    consumer: ShareConsumer,
    /// Records formatted (for `--max-messages`).
    count: u64,
    /// Records whose output stdout accepted.
    written: u64,
    /// Bytes stdout accepted in all.
    bytes_written: u64,
    out: Vec<u8>,
    /// The round's records: their acknowledgements, with their output ends in `out`.
    round: Vec<Printed>,
    /// Written records not yet acknowledged (their output may still be in the pipe).
    waiting: VecDeque<Printed>,
    stdout: File,
    pipe_size: Option<usize>,
    is_pipe: bool,
    last_record: Instant,
}

impl Printer {
    fn new(consumer: ShareConsumer) -> Result<Printer, CliError> {
        let (stdout, is_pipe, pipe_size) = pipe::stdout_for_records(PIPE_BYTES)
            .map_err(|e| anyhow!("cannot use standard out: {e}"))?;
        Ok(Printer {
            consumer,
            count: 0,
            written: 0,
            bytes_written: 0,
            out: Vec::new(),
            round: Vec::new(),
            waiting: VecDeque::new(),
            stdout,
            pipe_size,
            is_pipe,
            last_record: Instant::now(),
        })
    }

    fn run(&mut self, opts: &Options, interrupt: &Interrupt) -> Result<(), CliError> {
        if opts.max_messages == Some(0) {
            return Ok(());
        }
        loop {
            if interrupt.is_set() {
                return Err(interrupt.error());
            }
            self.acknowledge_read();
            if let Some(max) = opts.max_messages {
                let left = max.saturating_sub(self.count);
                self.consumer
                    .acquire_at_most(usize::try_from(left).unwrap_or(usize::MAX));
            }
            let mut failure = None;
            let polled = {
                let (out, round, count) = (&mut self.out, &mut self.round, &mut self.count);
                self.consumer.poll(POLL_WAIT, |r| {
                    format_record(opts, r, out, round, count, &mut failure)
                })
            };
            if polled.is_err() {
                let _ = self.write_out(interrupt);
            }
            let polled = polled?;
            for refused in &polled.refused {
                eprintln!("WARN: {refused}");
            }
            if let Err(e) = self.write_out(interrupt) {
                if interrupt.is_set() {
                    return Err(interrupt.error());
                }
                eprintln!("Unable to write to standard out, closing consumer.");
                return match e.kind() {
                    std::io::ErrorKind::BrokenPipe => Ok(()),
                    _ => Err(anyhow!("writing to standard out failed: {e}").into()),
                };
            }
            if let Some(e) = failure {
                return Err(anyhow!("Unknown error when running consumer: {e}").into());
            }
            if polled.records > 0 {
                self.last_record = Instant::now();
            }
            if opts.max_messages.is_some_and(|max| self.count >= max) {
                return Ok(());
            }
            if polled.records == 0 {
                // As the console consumer: no TimeoutException log line (see the README).
                if opts
                    .timeout
                    .is_some_and(|t| self.last_record.elapsed() >= t)
                {
                    return Ok(());
                }
                if pipe::reader_gone(&self.stdout) {
                    eprintln!("Unable to write to standard out, closing consumer.");
                    return Ok(());
                }
            }
        }
    }

    /// Writes the round's output; the records within what `write(2)` accepted wait for their
    /// reader, the others are left to be released.
    fn write_out(&mut self, interrupt: &Interrupt) -> std::io::Result<()> {
        let (accepted, result) =
            pipe::write_interruptibly(&mut self.stdout, self.pipe_size, &self.out, || {
                interrupt.is_set()
            });
        for mut printed in self.round.drain(..) {
            if printed.end as usize > accepted {
                break;
            }
            printed.end += self.bytes_written;
            self.written += 1;
            self.waiting.push_back(printed);
        }
        self.round.clear();
        self.bytes_written += accepted as u64;
        self.out.clear();
        result
    }

    /// Acknowledges every written record whose output the reader has taken (all of them,
    /// unless stdout is a pipe).
    fn acknowledge_read(&mut self) {
        let unread = if self.is_pipe {
            pipe::unread(&self.stdout)
        } else {
            0
        };
        let taken = self.bytes_written.saturating_sub(unread);
        while let Some(printed) = self.waiting.front() {
            if printed.end > taken {
                break;
            }
            let p = self.waiting.pop_front().expect("front exists");
            self.consumer
                .acknowledge(&p.topic, p.partition, p.offset, p.ack);
        }
    }

    /// At the end: gives the reader of the pipe time to take what was written, so that its
    /// records are acknowledged rather than delivered again (not past the reader's exit or
    /// [`READER_WAIT`]).
    fn wait_for_reader(&mut self) {
        if !self.is_pipe {
            return;
        }
        let start = Instant::now();
        while pipe::unread(&self.stdout) > 0
            && !pipe::reader_gone(&self.stdout)
            && start.elapsed() < READER_WAIT
        {
            std::thread::sleep(READER_POLL);
        }
    }
}

/// Formats one record into `out` and notes its acknowledgement; `false` stops the round.
fn format_record(
    opts: &Options,
    r: SharedRecord<'_, '_>,
    out: &mut Vec<u8>,
    round: &mut Vec<Printed>,
    count: &mut u64,
    failure: &mut Option<String>,
) -> bool {
    *count += 1;
    let ack = match opts.formatter.format_delivered(
        r.partition,
        r.timestamp_type,
        r.record,
        Some(r.delivery_count),
        out,
    ) {
        Ok(()) => opts.ack,
        Err(e) if opts.reject_on_error => {
            eprintln!("ERROR Error processing message, rejecting this message: {e}");
            AcknowledgeType::Reject
        }
        Err(e) => {
            *failure = Some(e);
            return false;
        }
    };
    round.push(Printed {
        end: out.len() as u64,
        topic: r.topic.to_string(),
        partition: r.partition,
        offset: r.record.offset,
        ack,
    });
    opts.max_messages.is_none_or(|max| *count < max)
}
