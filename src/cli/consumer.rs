//! `kafka-console-consumer`: prints records of the embedded log or, without `--group`, of a
//! Kafka cluster (Kafka's `ConsoleConsumer`).
//!
//! The two differ only in `Source` and `Reader`: a local partition is read from its log,
//! remote partitions are fetched from their leaders, all at once, once per round.
//! It assigns itself every partition of `--topic` (or of the topics matching `--include`), or
//! one `--partition`, and tails them by polling each partition's end every few tens of
//! milliseconds until `--max-messages`, `--timeout-ms`, Ctrl-C or a closed stdout.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::fs::File;
use std::io::Write;
use std::os::fd::AsFd;
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::anyhow;
use clap::{Arg, ArgAction, ArgMatches, Command};
use regex::Regex;

use super::formatter::{Formatter, FormatterKind};
use super::json;
use super::progress::{self, Progress, Total};
use super::properties::{self, Properties};
use super::signals::Interrupt;
use super::{CliError, connection_args, open_backend, run_tool, usage};
use crate::client::Backend;
use crate::client::topic_name;
use crate::local::group::member::AssignmentChange;
use crate::local::group::{Member, MemberConfig, TopicPartition};
use crate::local::{LocalError, LogDir, PartitionLog};
use crate::record::{BatchHeader, BatchIter, for_each_record};
use crate::remote::{
    ConsumerClient, Fetched, GroupProtocol, Isolation, MemberSettings, RemoteError, Tp,
};

/// Kafka's formatter classes, offered by completions.
const FORMATTERS: &[&str] = &[
    "org.apache.kafka.tools.consumer.DefaultMessageFormatter",
    "org.apache.kafka.tools.consumer.LoggingMessageFormatter",
    "org.apache.kafka.tools.consumer.NoOpMessageFormatter",
];
/// Kafka's deserializer classes, offered by completions.
const DESERIALIZERS: &[&str] = &[
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
/// How often topic metadata is re-read (new partitions, new topics for `--include`).
const METADATA_REFRESH: Duration = Duration::from_millis(500);
/// Bytes read from one partition per round.
const FETCH_BYTES: usize = 1024 * 1024;

fn opt(name: &'static str, value_name: &'static str, help: &'static str) -> Arg {
    Arg::new(name)
        .long(name)
        .value_name(value_name)
        .help(help)
        .help_heading("Consumer")
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

/// Where a partition starts when there is no explicit offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reset {
    Earliest,
    Latest,
}

/// What to consume.
#[derive(Debug)]
enum Subscription {
    Topic(String),
    Pattern(Regex),
    Partition {
        topic: String,
        partition: u32,
        start: Start,
    },
}

#[derive(Clone, Copy, Debug)]
enum Start {
    Earliest,
    Latest,
    Offset(i64),
}

struct Options {
    /// `--output json`: kafkit's JSON records instead of the formatter's text.
    json: bool,
    /// Draw progress (stderr is a terminal and `--no-progress` is absent).
    progress: bool,
    /// `--from-time`: start each partition at the first record at or after this time (ms).
    from_time: Option<i64>,
    /// `--until-end`: stop once every partition reaches the end it had when it was assigned.
    until_end: bool,
    /// `--until-time`: print records up to this time (ms), then stop.
    until_time: Option<i64>,
    group: Option<GroupSettings>,
    subscription: Subscription,
    reset: Reset,
    max_messages: Option<u64>,
    timeout: Option<Duration>,
    skip_errors: bool,
    formatter: Formatter,
    systest: bool,
    isolation: Isolation,
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

/// Settings of a consumer in a group: Kafka's consumer properties that matter locally.
#[derive(Debug, Clone)]
struct GroupSettings {
    id: String,
    client_id: String,
    auto_commit: bool,
    auto_commit_interval: Duration,
    member: MemberConfig,
    /// `max.poll.interval.ms`: a cluster's coordinator waits this long for a rejoin.
    rebalance_timeout: Duration,
    /// `retry.backoff.ms`.
    retry_backoff: Duration,
    /// `group.protocol` (a cluster's; the embedded log has one kind of group).
    protocol: GroupProtocol,
}

impl GroupSettings {
    fn from_properties(id: String, props: &Properties) -> Result<GroupSettings, CliError> {
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
            member: MemberConfig {
                session_timeout: ms("session.timeout.ms", 45_000)?,
                heartbeat_interval: ms("heartbeat.interval.ms", 3000)?,
            },
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
    let pairs = properties::parse_pairs(pairs.into_iter().flatten());
    let group = group_id(m, &file, &pairs)?;
    let mut command = file;
    command.extend(pairs);
    if let Some(g) = &group {
        if partition.is_some() {
            return usage("Options group and partition cannot be specified together.");
        }
        command.insert("group.id".into(), g.clone());
    }
    let group = match group {
        Some(id) => Some(GroupSettings::from_properties(id, &command)?),
        None => None,
    };
    let from_beginning = m.get_flag("from-beginning");
    let reset = match command
        .get("auto.offset.reset")
        .map(|v| v.trim().to_string())
    {
        None => {
            if from_beginning {
                Reset::Earliest
            } else {
                Reset::Latest
            }
        }
        Some(v) if from_beginning && v != "earliest" => {
            return Err(anyhow!(
                "Can't simultaneously specify --from-beginning and 'auto.offset.reset={v}', please remove one option"
            )
            .into());
        }
        Some(v) if v == "earliest" => Reset::Earliest,
        Some(v) if v == "latest" || v == "none" => Reset::Latest,
        Some(v) => {
            return usage(format!(
                "Invalid value {v} for configuration auto.offset.reset: String must be one of: latest, earliest, none"
            ));
        }
    };
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

    let subscription = match (topic, include, partition) {
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
            Subscription::Pattern(Regex::new(&format!("^(?:{pattern})$")).map_err(|e| {
                CliError::Usage(format!(
                    "--include '{pattern}' is not a valid regular expression: {e}"
                ))
            })?)
        }
        (None, None, _) => unreachable!("checked above"),
    };

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
    let formatter = Formatter::new(kind, &fprops).map_err(CliError::Usage)?;
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
    let max_messages = m.get_one::<i32>("max-messages").map(|n| (*n).max(0) as u64);
    let timeout = m
        .get_one::<i64>("timeout-ms")
        .filter(|t| **t >= 0)
        .map(|t| Duration::from_millis(*t as u64));
    Ok((
        Options {
            json,
            progress: progress::wanted(m.get_flag("no-progress")),
            from_time,
            until_end,
            until_time,
            group,
            subscription,
            reset,
            max_messages,
            timeout,
            skip_errors: m.get_flag("skip-message-on-error"),
            formatter,
            systest: m.get_flag("enable-systest-events"),
            isolation: if isolation == "read_committed" {
                Isolation::ReadCommitted
            } else {
                Isolation::ReadUncommitted
            },
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
    let source = match open_backend(m, Some(&command))? {
        Backend::Local(dir) => Source::Local(dir),
        Backend::Remote(cluster) => Source::Remote(Box::new(cluster.into_consumer(opts.isolation))),
    };
    let interrupt = Interrupt::install();
    let mut consumer = Consumer::new(source, &opts)?;
    let result = consumer.run(&opts, &interrupt);
    // Like Kafka's consumer on close: commit what was printed, then leave the group.
    let closed = consumer.close(&opts);
    eprintln!("Processed a total of {} messages", consumer.written);
    if opts.systest {
        println!("shutdown_complete");
    }
    result.and(closed)
}

/// Where the records come from: the embedded log or a cluster.
enum Source {
    Local(LogDir),
    Remote(Box<ConsumerClient>),
}

impl Source {
    /// The partition counts of the named topics that exist, or of every non-internal topic.
    fn topics(&mut self, names: Option<&[String]>) -> Result<BTreeMap<String, u32>, CliError> {
        match self {
            Source::Remote(c) => Ok(c.topics(names).map_err(anyhow::Error::from)?),
            Source::Local(dir) => {
                let all;
                let names = match names {
                    Some(n) => n,
                    None => {
                        all = dir
                            .topic_names()?
                            .into_iter()
                            .filter(|n| !topic_name::is_internal(n))
                            .collect::<Vec<_>>();
                        &all
                    }
                };
                let mut out = BTreeMap::new();
                for n in names {
                    if let Some(meta) = dir.topic(n)? {
                        out.insert(n.clone(), meta.partitions);
                    }
                }
                Ok(out)
            }
        }
    }

    /// Where the records are, for the missing-topic warning.
    fn place(&self) -> String {
        match self {
            Source::Local(dir) => dir.root().display().to_string(),
            Source::Remote(c) => format!("the cluster at {}", c.addr()),
        }
    }

    /// A partition's reader with its start and end offsets, and the first offset at or after
    /// `from_time` (the end when there is none).
    fn open(
        &mut self,
        topic: &str,
        p: u32,
        from_time: Option<i64>,
    ) -> Result<(Reader, i64, i64, Option<i64>), CliError> {
        match self {
            Source::Local(dir) => {
                let log = dir.partition(topic, p)?;
                let snap = log.snapshot()?;
                let at = match from_time {
                    Some(t) => Some(
                        log.offset_for_timestamp(&snap, t)?
                            .unwrap_or(snap.log_end_offset),
                    ),
                    None => None,
                };
                Ok((
                    Reader::Local(log),
                    snap.log_start_offset,
                    snap.log_end_offset,
                    at,
                ))
            }
            Source::Remote(c) => {
                let tp = (topic.to_string(), p as i32);
                let (lo, hi) = c.bounds(&tp).map_err(anyhow::Error::from)?;
                let at = match from_time {
                    Some(t) => Some(
                        c.list_offset(&tp, t)
                            .map_err(anyhow::Error::from)?
                            .unwrap_or(hi),
                    ),
                    None => None,
                };
                Ok((Reader::Remote, lo, hi, at))
            }
        }
    }
}

/// How one assigned partition is read.
enum Reader {
    Local(PartitionLog),
    /// Fetched from its leader, with the others, once per round.
    Remote,
}

/// One assigned partition and the next offset to print.
struct Assigned {
    topic: String,
    partition: u32,
    log: Reader,
    /// The next offset to read.
    position: i64,
    /// The offset after the last record whose output stdout accepted: what a commit covers.
    delivered: i64,
    /// `--until-end`: the partition's end when it was assigned.
    end_target: i64,
    /// `--until-time`: a record after the time was reached.
    past_until: bool,
    /// The position reached the partition's end in the last round.
    caught_up: bool,
}

impl Assigned {
    fn new(topic: String, partition: u32, log: Reader, position: i64, end: i64) -> Self {
        Assigned {
            topic,
            partition,
            log,
            position,
            delivered: position,
            end_target: end,
            past_until: false,
            caught_up: position >= end,
        }
    }
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

struct Consumer {
    source: Source,
    assigned: Vec<Assigned>,
    /// The group membership, with `--group`.
    member: Option<Member>,
    last_commit: Instant,
    /// Subscribed topics that exist, with their partition counts.
    subscription: BTreeMap<String, u32>,
    /// Partitions that existed at the first metadata refresh.
    initial: BTreeSet<TopicPartition>,
    /// Records formatted (for `--max-messages`).
    count: u64,
    /// Records whose output stdout accepted ("Processed a total of N messages").
    written: u64,
    /// Where each partition's position stands at each point of `out`, in order.
    marks: Vec<Mark>,
    /// A topic found deleted in the last round, forgotten once that round's output is settled.
    deleted: Option<String>,
    /// Standard output without Rust's buffer, so that what `write(2)` accepted is known.
    stdout: File,
    warned_missing: bool,
    /// The cluster could not be reached in the last round (warned once).
    disconnected: bool,
    /// Set after the first metadata refresh.
    started: bool,
    out: Vec<u8>,
    /// Batches fetched from one partition, reused between rounds.
    fetched: Vec<u8>,
    scratch: Vec<u8>,
    last_record: Instant,
}

/// Why the loop ended.
enum Stop {
    Done,
}

/// A point in the formatted output: once stdout has accepted `end` bytes of it, partition
/// `assigned` (an index into `Consumer::assigned`) is delivered up to `next`.
struct Mark {
    end: usize,
    assigned: usize,
    next: i64,
    /// A record ends here (it counts in "Processed a total of N messages").
    record: bool,
}

impl Consumer {
    fn new(source: Source, opts: &Options) -> Result<Self, CliError> {
        let mut source = source;
        let member = match (&opts.group, &mut source) {
            (Some(g), Source::Local(dir)) => {
                Some(dir.groups().join(&g.id, &g.client_id, g.member)?)
            }
            (Some(g), Source::Remote(c)) => {
                c.join_group(MemberSettings {
                    group_id: g.id.clone(),
                    session_timeout: g.member.session_timeout,
                    rebalance_timeout: g.rebalance_timeout,
                    heartbeat_interval: g.member.heartbeat_interval,
                    retry_backoff: g.retry_backoff,
                    protocol: g.protocol,
                });
                None
            }
            (None, _) => None,
        };
        Ok(Consumer {
            source,
            assigned: Vec::new(),
            member,
            last_commit: Instant::now(),
            subscription: BTreeMap::new(),
            initial: BTreeSet::new(),
            count: 0,
            written: 0,
            marks: Vec::new(),
            deleted: None,
            stdout: std::io::stdout()
                .as_fd()
                .try_clone_to_owned()
                .map(File::from)
                .map_err(|e| anyhow!("cannot use standard out: {e}"))?,
            warned_missing: false,
            disconnected: false,
            started: false,
            out: Vec::with_capacity(FETCH_BYTES + 4096),
            fetched: Vec::with_capacity(FETCH_BYTES),
            scratch: Vec::new(),
            last_record: Instant::now(),
        })
    }

    fn run(&mut self, opts: &Options, interrupt: &Interrupt) -> Result<(), CliError> {
        let mut last_refresh: Option<Instant> = None;
        let mut display: Option<Progress> = None;
        loop {
            if interrupt.is_set() {
                return Err(CliError::Interrupted);
            }
            // Also while the cluster is unreachable: --timeout-ms bounds the wait for records.
            if self.disconnected
                && opts
                    .timeout
                    .is_some_and(|t| self.last_record.elapsed() >= t)
            {
                return Ok(());
            }
            if last_refresh.is_none_or(|t| t.elapsed() >= METADATA_REFRESH) {
                let refreshed = self.refresh(opts);
                let Some(()) = self.unless_disconnected(refreshed)? else {
                    continue;
                };
                last_refresh = Some(Instant::now());
            }
            let rebalanced = self.rebalance(opts);
            let Some(()) = self.unless_disconnected(rebalanced)? else {
                continue;
            };
            if display.is_none() && opts.progress && opts.until_end {
                // The end is known once partitions are assigned: a bar with an ETA.
                let total = self
                    .assigned
                    .iter()
                    .map(|a| (a.end_target - a.position).max(0) as u64)
                    .sum();
                display = Some(Progress::new(true, Total::Records(total)));
            }
            let before = (self.count, self.out.len());
            let polled = self.poll(opts);
            if polled.is_err() {
                // Records formatted before the failure were read: print them before stopping.
                let _ = self.write_out();
            }
            let Some((progress, stop)) = self.unless_disconnected(polled)? else {
                continue;
            };
            if let Some(d) = display.as_mut() {
                d.add(self.count - before.0, (self.out.len() - before.1) as u64);
                if stop.is_some() {
                    d.finish();
                }
            }
            if let Err(e) = self.write_out() {
                eprintln!("Unable to write to standard out, closing consumer.");
                // A reader that closed the pipe (`| head`) ends the consumer normally, as
                // Kafka's does; any other failure (a full disk) is an error.
                return match e.kind() {
                    std::io::ErrorKind::BrokenPipe => Ok(()),
                    _ => Err(anyhow!("writing to standard out failed: {e}").into()),
                };
            }
            if let Some(topic) = self.deleted.take() {
                self.forget_topic(&topic);
            }
            if let Some(Stop::Done) = stop {
                return Ok(());
            }
            let committed = self.auto_commit(opts);
            self.unless_disconnected(committed)?;
            if interrupt.is_set() {
                return Err(CliError::Interrupted);
            }
            if !progress {
                if opts
                    .timeout
                    .is_some_and(|t| self.last_record.elapsed() >= t)
                {
                    return Ok(());
                }
                std::thread::sleep(POLL_INTERVAL);
            }
        }
    }

    /// A cluster that cannot be reached right now (a broker restarting) is waited for, as
    /// Kafka's consumer waits: one warning, then a retry every second. `None` means "try again".
    fn unless_disconnected<T>(
        &mut self,
        result: Result<T, CliError>,
    ) -> Result<Option<T>, CliError> {
        match result {
            Ok(v) => {
                self.disconnected = false;
                Ok(Some(v))
            }
            Err(CliError::Runtime(e))
                if e.downcast_ref::<RemoteError>()
                    .is_some_and(RemoteError::is_connection) =>
            {
                if !self.disconnected {
                    let what = e
                        .downcast_ref::<RemoteError>()
                        .and_then(RemoteError::connection_summary)
                        .unwrap_or_else(|| e.to_string());
                    eprintln!(
                        "WARN: lost the cluster ({what}); retrying every second until it answers"
                    );
                    self.disconnected = true;
                }
                std::thread::sleep(RECONNECT_BACKOFF);
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// Writes the formatted output to stdout, then settles what was delivered: each partition's
    /// commit position and the record count move only as far as the bytes `write(2)` accepted,
    /// so a failed or closed stdout never has records committed that it did not take.
    fn write_out(&mut self) -> std::io::Result<()> {
        let mut accepted = 0;
        let result = loop {
            if accepted == self.out.len() {
                break Ok(());
            }
            match self.stdout.write(&self.out[accepted..]) {
                Ok(0) => break Err(std::io::ErrorKind::WriteZero.into()),
                Ok(n) => accepted += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => break Err(e),
            }
        };
        for mark in self.marks.iter().take_while(|m| m.end <= accepted) {
            self.assigned[mark.assigned].delivered = mark.next;
            self.written += u64::from(mark.record);
        }
        self.marks.clear();
        self.out.clear();
        result
    }

    /// The next offset to deliver of every assigned partition: only records that stdout
    /// accepted count, so a commit never covers a record that was not printed.
    fn positions(&self) -> BTreeMap<TopicPartition, i64> {
        self.assigned
            .iter()
            .map(|a| ((a.topic.clone(), a.partition), a.delivered))
            .collect()
    }

    /// Commits printed positions every `auto.commit.interval.ms` (group members only).
    fn auto_commit(&mut self, opts: &Options) -> Result<(), CliError> {
        let Some(g) = opts.group.as_ref().filter(|g| g.auto_commit) else {
            return Ok(());
        };
        if self.last_commit.elapsed() < g.auto_commit_interval {
            return Ok(());
        }
        let positions = self.positions();
        if let Some(member) = self.member.as_mut() {
            match member.commit(&positions) {
                // Evicted: the next poll rejoins; nothing was committed.
                Ok(()) | Err(LocalError::MemberFenced { .. }) => {}
                Err(e) => return Err(e.into()),
            }
        }
        if let Source::Remote(c) = &mut self.source {
            c.group_commit(&positions).map_err(anyhow::Error::from)?;
        }
        self.last_commit = Instant::now();
        Ok(())
    }

    /// Commits (when auto-commit is on) and leaves the group.
    fn close(&mut self, opts: &Options) -> Result<(), CliError> {
        let commit = opts.group.as_ref().is_some_and(|g| g.auto_commit);
        let positions = if commit {
            self.positions()
        } else {
            BTreeMap::new()
        };
        if let Source::Remote(c) = &mut self.source {
            c.leave_group(&positions, commit)
                .map_err(anyhow::Error::from)?;
        }
        match self.member.take().map(|m| m.leave(&positions)) {
            None | Some(Ok(())) | Some(Err(LocalError::MemberFenced { .. })) => Ok(()),
            Some(Err(e)) => Err(e.into()),
        }
    }

    /// Where a partition starts when nothing says otherwise: `auto.offset.reset`, except that
    /// partitions which appeared after the consumer started are read from their beginning,
    /// since every record in them was written after the consumer started waiting.
    fn default_start(&self, opts: &Options, tp: &TopicPartition, start: i64, end: i64) -> i64 {
        if self.started && !self.initial.contains(tp) {
            return start;
        }
        match opts.reset {
            Reset::Earliest => start,
            Reset::Latest => end,
        }
    }

    /// `--until-end` / `--until-time`: whether every assigned partition is finished.
    fn bounded_read_done(&self, opts: &Options) -> bool {
        if !self.started {
            return false;
        }
        if opts.until_end {
            return self.assigned.iter().all(|a| a.position >= a.end_target);
        }
        if let Some(until) = opts.until_time {
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as i64);
            return self
                .assigned
                .iter()
                .all(|a| a.past_until || (a.caught_up && now > until));
        }
        false
    }

    /// Re-reads topic metadata: the subscription's topics and partition counts; without a
    /// group, assigns new topics and partitions. Warns once about a missing topic.
    fn refresh(&mut self, opts: &Options) -> Result<(), CliError> {
        let wanted: Vec<(String, Option<u32>, Option<Start>)> = match &opts.subscription {
            Subscription::Topic(t) => vec![(t.clone(), None, None)],
            Subscription::Partition {
                topic,
                partition,
                start,
            } => {
                vec![(topic.clone(), Some(*partition), Some(*start))]
            }
            Subscription::Pattern(_) => Vec::new(),
        };
        let existing = match &opts.subscription {
            Subscription::Pattern(_) => self.source.topics(None)?,
            _ => {
                let names: Vec<String> = wanted.iter().map(|w| w.0.clone()).collect();
                self.source.topics(Some(&names))?
            }
        };
        let wanted = match &opts.subscription {
            Subscription::Pattern(re) => existing
                .keys()
                .filter(|n| re.is_match(n))
                .map(|n| (n.clone(), None, None))
                .collect(),
            _ => wanted,
        };
        let mut subscription = BTreeMap::new();
        for (topic, only, start) in wanted {
            let Some(&partitions) = existing.get(&topic) else {
                if self.subscription.contains_key(&topic) {
                    self.forget_topic(&topic);
                } else if !matches!(opts.subscription, Subscription::Pattern(_))
                    && !self.warned_missing
                {
                    eprintln!(
                        "WARN: Topic '{topic}' does not exist in {} yet; waiting for it to be created.",
                        self.source.place()
                    );
                    self.warned_missing = true;
                }
                continue;
            };
            if let Some(p) = only
                && p >= partitions
            {
                return Err(anyhow!(
                    "Topic '{topic}' has {} partition(s) (0..{}); partition {p} does not exist",
                    partitions,
                    partitions - 1
                )
                .into());
            }
            if !self.started {
                self.initial
                    .extend((0..partitions).map(|p| (topic.clone(), p)));
            }
            subscription.insert(topic.clone(), partitions);
            if self.in_group() {
                continue;
            }
            let (first, last) = match only {
                Some(p) => (p, p + 1),
                None => (0, partitions),
            };
            for p in first..last {
                let tp = (topic.clone(), p);
                if self
                    .assigned
                    .iter()
                    .any(|a| a.topic == tp.0 && a.partition == p)
                {
                    continue;
                }
                let (log, lo, hi, at) = self.source.open(&topic, p, opts.from_time)?;
                let position = match start {
                    _ if let Some(at) = at => at,
                    _ if self.started => lo,
                    Some(Start::Earliest) => lo,
                    Some(Start::Latest) => hi,
                    Some(Start::Offset(o)) if (lo..=hi).contains(&o) => o,
                    _ => self.default_start(opts, &tp, lo, hi),
                };
                self.assigned
                    .push(Assigned::new(topic.clone(), p, log, position, hi));
            }
        }
        self.subscription = subscription;
        self.started = true;
        Ok(())
    }

    /// A subscribed topic was deleted: drop its partitions and, as Kafka's consumer does, keep
    /// waiting; if it is created again it is read from its start.
    fn forget_topic(&mut self, topic: &str) {
        eprintln!("WARN: Topic '{topic}' was deleted; waiting for it to be created again.");
        self.warned_missing = true;
        self.assigned.retain(|a| a.topic != topic);
        self.subscription.remove(topic);
        self.initial.retain(|(t, _)| t != topic);
    }

    /// Whether partitions come from a group's assignment rather than from the subscription.
    fn in_group(&self) -> bool {
        self.member.is_some() || matches!(&self.source, Source::Remote(c) if c.in_group())
    }

    /// Group members: heartbeat, follow the group's assignment (drop revoked partitions, start
    /// acquired ones at their committed offset or by `auto.offset.reset`).
    fn rebalance(&mut self, opts: &Options) -> Result<(), CliError> {
        let positions = self.positions();
        let change = match (self.member.as_mut(), &mut self.source) {
            (Some(member), _) => member.poll(&self.subscription, &positions)?,
            (None, Source::Remote(c)) if c.in_group() => {
                let commit = opts.group.as_ref().is_some_and(|g| g.auto_commit);
                let change = c
                    .group_poll(&self.subscription, &positions, commit)
                    .map_err(anyhow::Error::from)?;
                AssignmentChange {
                    acquired: change.acquired,
                    revoked: change.revoked,
                    fenced: false,
                }
            }
            (None, _) => return Ok(()),
        };
        if change.is_empty() {
            return Ok(());
        }
        self.assigned
            .retain(|a| !change.revoked.contains(&(a.topic.clone(), a.partition)));
        for (tp, committed) in change.acquired {
            let (log, lo, hi, at) = self.source.open(&tp.0, tp.1, opts.from_time)?;
            let position = match committed {
                _ if let Some(at) = at => at,
                Some(o) if (lo..=hi).contains(&o) => o,
                _ => self.default_start(opts, &tp, lo, hi),
            };
            self.assigned
                .push(Assigned::new(tp.0, tp.1, log, position, hi));
        }
        Ok(())
    }

    /// One round over the assigned partitions. Returns whether any record was read, and
    /// `Some(Stop::Done)` when `--max-messages` was reached.
    fn poll(&mut self, opts: &Options) -> Result<(bool, Option<Stop>), CliError> {
        let mut progress = false;
        // A cluster is asked once per round, one Fetch per leader for all partitions.
        let mut remote = match &mut self.source {
            Source::Remote(c) => {
                let positions: Vec<(Tp, i64)> = self
                    .assigned
                    .iter()
                    .filter(|a| !a.past_until)
                    .map(|a| ((a.topic.clone(), a.partition as i32), a.position))
                    .collect();
                c.fetch(&positions).map_err(anyhow::Error::from)?
            }
            Source::Local(_) => HashMap::new(),
        };
        let read_committed = opts.isolation == Isolation::ReadCommitted;
        for (index, a) in self.assigned.iter_mut().enumerate() {
            // Records up to `next` reach stdout with the output formatted so far.
            let mut mark = |end: usize, next: i64, record: bool| {
                self.marks.push(Mark {
                    end,
                    assigned: index,
                    next,
                    record,
                })
            };
            if a.past_until {
                continue;
            }
            // read_committed: the aborted transactions of this fetch, by first offset.
            let mut aborted: VecDeque<(i64, i64)> = VecDeque::new();
            match (&a.log, &mut self.source) {
                (Reader::Local(log), Source::Local(dir)) => {
                    let snap = match log.snapshot() {
                        Ok(snap) => snap,
                        Err(_) if dir.topic(&a.topic)?.is_none() => {
                            self.deleted = Some(a.topic.clone());
                            break;
                        }
                        Err(e) => return Err(e.into()),
                    };
                    if a.position < snap.log_start_offset {
                        // Retention removed what we were about to read: reset as Kafka's
                        // consumer does.
                        a.position = match opts.reset {
                            Reset::Earliest => snap.log_start_offset,
                            Reset::Latest => snap.log_end_offset,
                        };
                        mark(self.out.len(), a.position, false);
                    }
                    a.caught_up = a.position >= snap.log_end_offset;
                    if a.caught_up {
                        continue;
                    }
                    match log.read_into(&snap, a.position, FETCH_BYTES, &mut self.fetched) {
                        Ok(()) => {}
                        // Retention moved the start since the snapshot: the next round resets.
                        Err(LocalError::OffsetOutOfRange { .. }) => continue,
                        Err(e) => return Err(e.into()),
                    }
                }
                (Reader::Remote, Source::Remote(c)) => {
                    let tp = (a.topic.clone(), a.partition as i32);
                    match remote.remove(&tp) {
                        // Not fetched (leader unknown, moved or unreachable): the next round
                        // retries after a metadata refresh.
                        None | Some(Fetched::Retry) => continue,
                        Some(Fetched::OutOfRange) => {
                            let (lo, hi) = c.bounds(&tp).map_err(anyhow::Error::from)?;
                            a.position = match opts.reset {
                                Reset::Earliest => lo,
                                Reset::Latest => hi,
                            };
                            mark(self.out.len(), a.position, false);
                            continue;
                        }
                        Some(Fetched::Data(d)) => {
                            a.caught_up = a.position >= d.end_offset;
                            self.fetched.clear();
                            self.fetched.extend_from_slice(&d.records);
                            aborted = d.aborted.into_iter().collect();
                            aborted.make_contiguous().sort_by_key(|t| t.1);
                        }
                    }
                }
                _ => unreachable!("partitions are read from the consumer's own source"),
            }
            let mut aborting: HashSet<i64> = HashSet::new();
            for batch in BatchIter::new(&self.fetched) {
                let batch =
                    batch.map_err(|e| anyhow!("{e} in partition {}-{}", a.topic, a.partition))?;
                let header = BatchHeader::parse(batch).map_err(anyhow::Error::from)?;
                if header.next_offset() <= a.position {
                    continue;
                }
                if read_committed && header.producer_id >= 0 {
                    // As Kafka's fetcher: a transaction listed as aborted is skipped from its
                    // first offset to its abort marker.
                    while aborted.front().is_some_and(|t| t.1 <= header.last_offset()) {
                        let (pid, _) = aborted.pop_front().expect("checked");
                        aborting.insert(pid);
                    }
                    if header.is_control() {
                        if is_abort_marker(batch, &mut self.scratch)? {
                            aborting.remove(&header.producer_id);
                        }
                    } else if header.is_transactional() && aborting.contains(&header.producer_id) {
                        a.position = header.next_offset();
                        mark(self.out.len(), a.position, false);
                        continue;
                    }
                }
                if header.is_control() {
                    a.position = header.next_offset();
                    mark(self.out.len(), a.position, false);
                    continue;
                }
                let ts_type = header.timestamp_type();
                let mut past_until = false;
                let mut done = false;
                let mut failure = None;
                let position = &mut a.position;
                let partition = a.partition as i32;
                let topic = a.topic.as_str();
                let out = &mut self.out;
                let count = &mut self.count;
                for_each_record(batch, &mut self.scratch, |r| {
                    if done || past_until || r.offset < *position {
                        return Ok(());
                    }
                    if opts.until_time.is_some_and(|t| r.timestamp > t) {
                        past_until = true;
                        return Ok(());
                    }
                    *count += 1;
                    *position = r.offset + 1;
                    progress = true;
                    let delivered = r.offset + 1;
                    let formatted = if opts.json {
                        json::write_record(topic, partition, ts_type, &r, out);
                        Ok(())
                    } else {
                        opts.formatter.format(partition, ts_type, &r, out)
                    };
                    match formatted {
                        Ok(()) => mark(out.len(), delivered, true),
                        Err(e) if opts.skip_errors => {
                            eprintln!("ERROR Error processing message, skipping this message: {e}");
                            mark(out.len(), delivered, true);
                        }
                        Err(e) => {
                            // Counted, as Kafka counts it, but not delivered: a commit stops
                            // before it.
                            mark(out.len(), r.offset, true);
                            failure = Some(e);
                            done = true;
                        }
                    }
                    if opts.max_messages.is_some_and(|max| *count >= max) {
                        done = true;
                    }
                    Ok(())
                })
                .map_err(|e| anyhow!("{e} in partition {}-{}", a.topic, a.partition))?;
                if let Some(e) = failure {
                    return Err(anyhow!("Unknown error when running consumer: {e}").into());
                }
                if done {
                    self.last_record = Instant::now();
                    return Ok((true, Some(Stop::Done)));
                }
                if past_until {
                    a.past_until = true;
                    break;
                }
                if a.position < header.next_offset() {
                    a.position = header.next_offset();
                    mark(self.out.len(), a.position, false);
                }
            }
        }
        if opts.max_messages == Some(0) || self.bounded_read_done(opts) {
            return Ok((progress, Some(Stop::Done)));
        }
        if progress {
            self.last_record = Instant::now();
        }
        Ok((progress, None))
    }
}

/// Whether a control batch holds an abort marker (control key: version i16, type i16, 0 =
/// abort, 1 = commit).
fn is_abort_marker(batch: &[u8], scratch: &mut Vec<u8>) -> Result<bool, CliError> {
    let mut abort = false;
    for_each_record(batch, scratch, |r| {
        if let Some(key) = r.key
            && key.len() >= 4
            && key[2..4] == [0, 0]
        {
            abort = true;
        }
        Ok(())
    })
    .map_err(anyhow::Error::from)?;
    Ok(abort)
}
