//! `kafka-console-producer`: standard-input lines become records (Kafka's `ConsoleProducer`
//! with `LineMessageReader`).
//!
//! A reader thread feeds stdin in chunks; the main thread splits lines and builds record
//! batches per partition. On the embedded log it flushes them (one write and one fdatasync per
//! partition) when the linger passes, every few MiB, on `--sync` after each record, and at the
//! end. To a cluster each full batch goes to the producer at once, which pipelines it to the
//! leader while the next is built; partial batches follow when the linger passes, and a flush
//! (input pausing past the linger, `--sync`, the end) waits for every acknowledgement.

use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TryRecvError, sync_channel};
use std::time::{Duration, Instant};

use anyhow::anyhow;
use clap::{Arg, ArgAction, ArgMatches, Command};

use super::client_config;
use super::json;
use super::line_reader::LineReader;
use super::progress::{self, Progress, Total};
use super::properties::{self, Properties};
use super::signals::Interrupt;
use super::{CliError, connection_args, open_client, run_tool, usage, validate_bootstrap};
use crate::client::{
    BatchSettings, ClientError, Producer, ProducerRecord, ProducerSettings, topic_name,
};
use crate::kafka::now_ms;
use crate::record::Compression;

/// Pending bytes that trigger a flush even while input keeps coming.
const FLUSH_BYTES: usize = 16 * 1024 * 1024;
/// How much stdin one read takes.
const READ_CHUNK: usize = 256 * 1024;
/// How often the main loop wakes to check for Ctrl-C while idle.
const TICK: Duration = Duration::from_millis(100);
const LINE_READER: &str = "org.apache.kafka.tools.LineMessageReader";

fn opt(name: &'static str, value_name: &'static str, help: &'static str) -> Arg {
    super::value_option(name, value_name, help, "Producer")
}

fn num<T: Clone + Send + Sync + 'static + std::str::FromStr>(
    name: &'static str,
    help: &'static str,
) -> Arg
where
    T::Err: std::error::Error + Send + Sync + 'static,
{
    // Negative numbers are numbers here, for Kafka's range checks to word their errors.
    opt(name, "Integer", help)
        .value_parser(clap::builder::ValueParser::new(
            |s: &str| -> Result<T, String> { s.parse::<T>().map_err(|_| s.to_string()) },
        ))
        .allow_negative_numbers(true)
}

/// The clap definition of `kafka-console-producer`.
pub fn command() -> Command {
    let cmd = Command::new("kafka-console-producer")
        .about("This tool helps to read data from standard input and publish it to Kafka.")
        .arg(opt("topic", "topic", "The topic to produce messages to (required)."))
        .arg(
            Arg::new("sync")
                .long("sync")
                .action(ArgAction::SetTrue)
                .help("Send each message synchronously: fsync it (embedded log) or wait for its acknowledgement (cluster) before reading the next line.")
                .help_heading("Producer"),
        )
        .arg(
            opt("compression-codec", "compression-codec", "none, gzip, snappy, lz4 or zstd; without a value, gzip.")
                .num_args(0..=1)
                .default_missing_value("gzip")
                .value_parser(super::Suggest(&["none", "gzip", "snappy", "lz4", "zstd"])),
        )
        .arg(num::<i32>("batch-size", "Bytes of records sent in one batch [default: 16384; on a cluster, input already waiting fills batches up to 1 MB unless this is given]."))
        .arg(num::<i32>("max-partition-memory-bytes", "Deprecated: use --batch-size."))
        .arg(num::<i32>("message-send-max-retries", "Retries before giving up on a send [default: 3]."))
        .arg(num::<i64>("retry-backoff-ms", "Wait before retrying a send [default: 100]."))
        .arg(num::<i64>("timeout", "Linger: the longest a record waits before it is sent, in ms [default: 1000]."))
        .arg(opt("request-required-acks", "acks", "Acks required from the broker: -1/all, 0 or 1 [default: -1].").value_parser(super::Suggest(&["all", "-1", "0", "1"])).allow_hyphen_values(true))
        .arg(num::<i32>("request-timeout-ms", "Request timeout in ms [default: 1500]."))
        .arg(num::<i64>("metadata-expiry-ms", "Metadata refresh period in ms [default: 300000]."))
        .arg(num::<i64>("max-block-ms", "Longest a send blocks in ms [default: 60000]."))
        .arg(num::<i64>("max-memory-bytes", "Producer buffer memory [default: 33554432]."))
        .arg(num::<i32>("socket-buffer-size", "Socket send buffer [default: 102400]."))
        .arg(
            Arg::new("no-progress")
                .long("no-progress")
                .action(ArgAction::SetTrue)
                .help("Do not draw progress on stderr (it is drawn only when stderr is a terminal).")
                .help_heading("Output"),
        )
        .arg(
            opt("input", "format", "How lines are read: text (Kafka's LineMessageReader) or json (one kafkit JSON record per line, as kafka-console-consumer --output json writes them) [default: text].")
                .value_parser(super::Suggest(&["text", "json"])),
        )
        .arg(opt("line-reader", "reader_class", "The record reader class [default: org.apache.kafka.tools.LineMessageReader]."))
        .arg(opt("reader-property", "prop", "A LineMessageReader property key=value (repeatable).").action(ArgAction::Append))
        .arg(opt("property", "prop", "Deprecated: use --reader-property.").action(ArgAction::Append))
        .arg(opt("reader-config", "config file", "LineMessageReader properties file."))
        .arg(opt("command-property", "producer_prop", "A producer property key=value (repeatable).").action(ArgAction::Append))
        .arg(opt("producer-property", "producer_prop", "Deprecated: use --command-property.").action(ArgAction::Append))
        .arg(opt("command-config", "config file", "Producer properties file."))
        .arg(opt("producer.config", "config file", "Deprecated: use --command-config."));
    connection_args(cmd)
}

/// Entry point of the `kafka-console-producer` binary.
pub fn main() -> ExitCode {
    run_tool(command(), "", run)
}

/// How input lines are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Input {
    /// Kafka's LineMessageReader.
    Text,
    /// kafkit's JSON record format (see [`super::json`]).
    Json,
}

/// What a producer run does, from its arguments and properties.
struct Settings {
    topic: String,
    sync: bool,
    linger: Duration,
    /// How records become batches (both backends).
    batching: BatchSettings,
    /// How a cluster is written to (the embedded log makes every flush durable).
    delivery: ProducerSettings,
}

fn deprecated_pair(m: &ArgMatches, new: &str, old: &str) -> Result<Option<&'static str>, CliError> {
    if m.contains_id(new) && m.contains_id(old) {
        return usage(format!(
            "Options --{new} and --{old} cannot be specified together."
        ));
    }
    if m.contains_id(old) {
        eprintln!(
            "Warning: --{old} is deprecated and will be removed in a future version. Use --{new} instead."
        );
    }
    Ok(None)
}

fn settings(m: &ArgMatches) -> Result<(Settings, Properties, Properties), CliError> {
    let Some(topic) = m.get_one::<String>("topic").cloned() else {
        return usage("Missing required argument \"[topic]\"");
    };
    deprecated_pair(m, "command-config", "producer.config")?;
    deprecated_pair(m, "command-property", "producer-property")?;
    deprecated_pair(m, "reader-property", "property")?;
    if m.contains_id("max-partition-memory-bytes") {
        eprintln!(
            "Warning: --max-partition-memory-bytes is deprecated and will be removed in Apache Kafka 5.0. Use --batch-size instead."
        );
    }
    if let Some(servers) = m.get_one::<String>("bootstrap-server") {
        validate_bootstrap(servers)?;
    }
    let mut command = Properties::new();
    if let Some(path) = m
        .get_one::<String>("command-config")
        .or(m.get_one::<String>("producer.config"))
    {
        command.extend(properties::load_file(path.as_ref())?);
    }
    let pairs = m
        .get_many::<String>("command-property")
        .or(m.get_many::<String>("producer-property"));
    command.extend(properties::parse_pairs(pairs.into_iter().flatten()));
    let reader = reader_properties(m, &topic)?;
    // Java's producer checks every property it knows when it is built.
    client_config::validate(client_config::Client::Producer, &command)?;
    let (linger, batching) = batching(Some(m), &command, &CONSOLE)?;
    let delivery = delivery(Some(m), &command, &CONSOLE)?;
    console_defaults(m, &mut command);
    let settings = Settings {
        topic,
        sync: m.get_flag("sync"),
        linger,
        batching,
        delivery,
    };
    Ok((settings, command, reader))
}

/// The producer defaults that differ between the tools built on the producer.
pub(crate) struct ProducerDefaults {
    /// `linger.ms`.
    pub linger_ms: i64,
    /// `retries`.
    pub retries: i64,
}

/// `kafka-console-producer`'s: its `--timeout` and `--message-send-max-retries` defaults.
const CONSOLE: ProducerDefaults = ProducerDefaults {
    linger_ms: 1000,
    retries: 3,
};

/// A console producer flag's value; `None` for a tool without the flag (`m` is `None`).
fn flag<'a, T: Clone + Send + Sync + 'static>(
    m: Option<&'a ArgMatches>,
    name: &str,
) -> Option<&'a T> {
    m.and_then(|m| m.get_one::<T>(name))
}

/// How a producer configured by properties alone (no console flags) batches and delivers,
/// checked as Kafka's producer checks them: the linger, the batches (with
/// `compression.type`), and the delivery settings.
pub(crate) fn from_properties(
    command: &Properties,
    defaults: &ProducerDefaults,
) -> Result<(Duration, BatchSettings, ProducerSettings), CliError> {
    client_config::validate(client_config::Client::Producer, command)?;
    let (linger, batching) = batching(None, command, defaults)?;
    Ok((linger, batching, delivery(None, command, defaults)?))
}

/// A numeric producer property; explicit flags win over it, and it over the console
/// producer's defaults.
fn prop_num(command: &Properties, key: &str) -> Result<Option<i64>, CliError> {
    client_config::number(client_config::Client::Producer, command, key)
}

/// How records become batches: the linger (`--timeout`, `linger.ms`), `batch.size`,
/// `max.request.size` and the codec.
fn batching(
    m: Option<&ArgMatches>,
    command: &Properties,
    defaults: &ProducerDefaults,
) -> Result<(Duration, BatchSettings), CliError> {
    let linger = match flag::<i64>(m, "timeout") {
        Some(v) => *v,
        None => prop_num(command, "linger.ms")?.unwrap_or(defaults.linger_ms),
    };
    if linger < 0 {
        return usage(format!(
            "Invalid value {linger} for configuration linger.ms: Value must be at least 0"
        ));
    }
    let batch_size_flag =
        flag::<i32>(m, "max-partition-memory-bytes").or(flag::<i32>(m, "batch-size"));
    let batch_size_prop = prop_num(command, "batch.size")?;
    let batch_size_given = batch_size_flag.is_some() || batch_size_prop.is_some();
    let batch_size = match batch_size_flag {
        Some(v) => *v as i64,
        None => batch_size_prop.unwrap_or(16384),
    };
    if batch_size < 0 {
        return usage(format!(
            "Invalid value {batch_size} for configuration batch.size: Value must be at least 0"
        ));
    }
    let max_request_size = prop_num(command, "max.request.size")?
        .unwrap_or(1048576)
        .max(1);
    let compression = match m {
        Some(m) => compression(m)?,
        None => compression_type(command)?,
    };
    let batching = BatchSettings {
        compression,
        batch_size: batch_size.max(1) as usize,
        batch_size_given,
        max_request_size: max_request_size as usize,
    };
    Ok((Duration::from_millis(linger as u64), batching))
}

/// How a cluster is written to: acks, retries and their backoff, `max.block.ms`, requests in
/// flight, `delivery.timeout.ms` and idempotence.
fn delivery(
    m: Option<&ArgMatches>,
    command: &Properties,
    defaults: &ProducerDefaults,
) -> Result<ProducerSettings, CliError> {
    let acks = acks(m, command)?;
    let retries = match flag::<i32>(m, "message-send-max-retries") {
        Some(v) => *v as i64,
        None => prop_num(command, "retries")?.unwrap_or(defaults.retries),
    };
    let retry_backoff = match flag::<i64>(m, "retry-backoff-ms") {
        Some(v) => *v,
        None => prop_num(command, "retry.backoff.ms")?.unwrap_or(100),
    };
    let max_block = match flag::<i64>(m, "max-block-ms") {
        Some(v) => *v,
        None => prop_num(command, "max.block.ms")?.unwrap_or(60000),
    };
    for (key, v) in [
        ("retries", retries),
        ("retry.backoff.ms", retry_backoff),
        ("max.block.ms", max_block),
    ] {
        if v < 0 {
            return usage(format!(
                "Invalid value {v} for configuration {key}: Value must be at least 0"
            ));
        }
    }
    let max_in_flight = prop_num(command, "max.in.flight.requests.per.connection")?.unwrap_or(5);
    if max_in_flight < 1 {
        return usage(format!(
            "Invalid value {max_in_flight} for configuration max.in.flight.requests.per.connection: Value must be at least 1"
        ));
    }
    let delivery_timeout = prop_num(command, "delivery.timeout.ms")?.unwrap_or(120000);
    if delivery_timeout < 0 {
        return usage(format!(
            "Invalid value {delivery_timeout} for configuration delivery.timeout.ms: Value must be at least 0"
        ));
    }
    Ok(ProducerSettings {
        acks,
        retries: retries.min(u32::MAX as i64) as u32,
        retry_backoff: Duration::from_millis(retry_backoff as u64),
        max_block: Duration::from_millis(max_block as u64),
        idempotence: idempotence(command, acks, max_in_flight)?,
        max_in_flight: max_in_flight.min(i32::MAX as i64) as usize,
        delivery_timeout: Duration::from_millis(delivery_timeout as u64),
        // Set by the tools that do transactions (the perf test).
        transactional_id: None,
        transaction_timeout_ms: 60_000,
    })
}

/// The LineMessageReader's properties (`--reader-config`, `--reader-property`), with the topic.
fn reader_properties(m: &ArgMatches, topic: &str) -> Result<Properties, CliError> {
    let mut reader = Properties::new();
    if let Some(path) = m.get_one::<String>("reader-config") {
        reader.extend(properties::load_file(path.as_ref())?);
    }
    reader.insert("topic".into(), topic.to_string());
    let pairs = m
        .get_many::<String>("reader-property")
        .or(m.get_many::<String>("property"));
    reader.extend(properties::parse_pairs(pairs.into_iter().flatten()));

    if let Some(class) = m.get_one::<String>("line-reader")
        && class.trim() != LINE_READER
        && class.trim() != "LineMessageReader"
    {
        return usage(format!(
            "--line-reader {class} is not supported; kafkit reads lines with {LINE_READER} only"
        ));
    }
    Ok(reader)
}

/// `--request-required-acks`, else `acks`: -1 (all), 0 or 1.
fn acks(m: Option<&ArgMatches>, command: &Properties) -> Result<i16, CliError> {
    let acks = flag::<String>(m, "request-required-acks")
        .or(command.get("acks"))
        .map_or("-1", |s| s.as_str());
    if !["all", "-1", "0", "1"].contains(&acks.trim()) {
        return usage(format!(
            "Invalid value {acks} for configuration acks: String must be one of: all, -1, 0, 1"
        ));
    }
    Ok(match acks.trim() {
        "all" | "-1" => -1,
        "0" => 0,
        _ => 1,
    })
}

/// `enable.idempotence`: on by default with acks=all and at most 5 requests in flight, as
/// Kafka; asked for explicitly, it needs both.
fn idempotence(command: &Properties, acks: i16, max_in_flight: i64) -> Result<bool, CliError> {
    match command
        .get("enable.idempotence")
        .map(|v| v.trim().to_ascii_lowercase())
    {
        None => Ok(acks == -1 && max_in_flight <= 5),
        Some(v) if v == "false" => Ok(false),
        Some(v) if v == "true" && acks == -1 && max_in_flight > 5 => {
            Err(anyhow!(
                "Must set max.in.flight.requests.per.connection to at most 5 to use the idempotent producer."
            )
            .into())
        }
        Some(v) if v == "true" && acks == -1 => Ok(true),
        Some(v) if v == "true" => {
            Err(anyhow!(
                "Must set acks to all in order to use the idempotent producer. Otherwise we cannot guarantee idempotence."
            )
            .into())
        }
        Some(v) => {
            usage(format!(
                "Invalid value {v} for configuration enable.idempotence: Expected value to be either true or false"
            ))
        }
    }
}

/// The console producer's request timeout (and client id) replace the client library's,
/// unless the properties set them; the flag always wins.
fn console_defaults(m: &ArgMatches, command: &mut Properties) {
    match m.get_one::<i32>("request-timeout-ms") {
        Some(v) => {
            command.insert("request.timeout.ms".into(), v.to_string());
        }
        None => {
            command
                .entry("request.timeout.ms".into())
                .or_insert_with(|| "1500".into());
        }
    }
    command
        .entry("client.id".into())
        .or_insert_with(|| "console-producer".into());
}

/// Kafka always sets compression.type from --compression-codec (none when absent).
fn compression(m: &ArgMatches) -> Result<Compression, CliError> {
    let codec = m
        .get_one::<String>("compression-codec")
        .map_or("none", |s| s.as_str());
    Compression::from_name(codec).ok_or_else(|| {
        CliError::Usage(format!(
            "Invalid value {codec} for configuration compression.type: String must be one of: none, gzip, snappy, lz4, zstd"
        ))
    })
}

/// `compression.type` of a producer configured by properties alone (Kafka's default: none).
fn compression_type(command: &Properties) -> Result<Compression, CliError> {
    let codec = command.get("compression.type").map_or("none", |s| s.trim());
    Compression::from_name(codec).ok_or_else(|| {
        CliError::Usage(format!(
            "Invalid value {codec} for configuration compression.type: String must be one of: none, gzip, snappy, lz4, zstd"
        ))
    })
}

/// `--input`: text (Kafka's line reader) or json.
fn input_format(m: &ArgMatches) -> Result<Input, CliError> {
    match m.get_one::<String>("input").map(String::as_str) {
        None | Some("text") => Ok(Input::Text),
        Some("json") => Ok(Input::Json),
        Some(other) => usage(format!(
            "--input {other} is not supported; use text (Kafka's line reader) or json"
        )),
    }
}

fn run(m: &ArgMatches) -> Result<(), CliError> {
    let (settings, command, reader_props) = settings(m)?;
    let input = input_format(m)?;
    let reader = LineReader::from_properties(&reader_props).map_err(|e| anyhow!(e))?;
    topic_name::validate(&settings.topic)
        .map_err(|e| anyhow!("Invalid topic '{}': {e}", settings.topic))?;
    // Kafka's console producer names itself so to the cluster (quotas and broker logs show it).
    let mut command = command;
    command
        .entry("client.id".to_string())
        .or_insert_with(|| "console-producer".to_string());
    let mut sink = open_client(m, Some(&command))?.into_producer(
        &settings.topic,
        settings.batching.clone(),
        settings.delivery.clone(),
    );
    let interrupt = Interrupt::install();
    let prompt = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    let (chunks, recycle) = spawn_stdin_reader(prompt);
    let mut lines = LineSplitter::default();
    let mut first_pending: Option<Instant> = None;
    let mut progress = Progress::new(
        progress::wanted(m.get_flag("no-progress")),
        stdin_file_size().map_or(Total::Unknown, Total::Bytes),
    );
    // A chunk already read while checking whether more input was waiting.
    let mut next = None;
    loop {
        let wait = first_pending.map_or(TICK, |t| {
            settings.linger.saturating_sub(t.elapsed()).min(TICK)
        });
        let received = match next.take() {
            Some(chunk) => Ok(chunk),
            None => chunks.recv_timeout(wait),
        };
        match received {
            Ok(Ok(chunk)) => {
                let eof = chunk.is_empty();
                // One timestamp per chunk: records read together share a millisecond anyway.
                let now = now_ms();
                let lines_before = lines.number;
                let mut flush_failed = false;
                let result = lines.feed(&chunk, eof, |number, line| {
                    send_line(&mut sink, input, &reader, line, number, now)?;
                    if settings.sync {
                        sink.flush().inspect_err(|_| flush_failed = true)?;
                    }
                    Ok(())
                });
                match result {
                    // A failed write is not tried again (see `LocalWriter::flush`).
                    Err(e) if flush_failed => return Err(e.into()),
                    // Records read before the bad line are still delivered, as Kafka's are.
                    Err(e) => return Err(stop_with(sink, e)),
                    Ok(()) => {}
                }
                progress.add(lines.number - lines_before, chunk.len() as u64);
                let _ = recycle.try_send(chunk);
                if eof {
                    break;
                }
                if sink.pending_bytes() >= FLUSH_BYTES {
                    sink.flush()?;
                    first_pending = None;
                } else if first_pending.is_some_and(|t| t.elapsed() >= settings.linger) {
                    // Input that never pauses must not hold a partial batch past the linger.
                    sink.send_lingered()?;
                    first_pending = None;
                }
                match chunks.try_recv() {
                    Ok(chunk) => next = Some(chunk),
                    Err(TryRecvError::Empty) => sink.input_paused()?,
                    Err(TryRecvError::Disconnected) => {}
                }
                if first_pending.is_none() && sink.pending_bytes() > 0 {
                    first_pending = Some(Instant::now());
                }
            }
            Ok(Err(e)) => {
                let e = anyhow::Error::from(e).context("cannot read standard input");
                return Err(stop_with(sink, e));
            }
            Err(RecvTimeoutError::Disconnected) => break,
            Err(RecvTimeoutError::Timeout) => {
                if first_pending.is_some_and(|t| t.elapsed() >= settings.linger) {
                    sink.flush()?;
                    first_pending = None;
                }
            }
        }
        if interrupt.is_set() {
            sink.close()?;
            return Err(interrupt.error());
        }
    }
    sink.close()?;
    Ok(())
}

/// Sends the record of input line `number`; a record refused by the producer's checks is
/// named by its line.
fn send(producer: &mut Producer, record: ProducerRecord<'_>, number: u64) -> anyhow::Result<()> {
    match producer.send(record) {
        Ok(()) => Ok(()),
        Err(e @ ClientError::InvalidRecord { .. }) => Err(anyhow!("line {number}: {e}")),
        Err(e) => Err(e.into()),
    }
}

/// Turns input line `number` into a record (Kafka's line reader or a JSON record) and sends
/// it; records of one chunk share its timestamp `now` unless their JSON names one.
fn send_line(
    sink: &mut Producer,
    input: Input,
    reader: &LineReader,
    line: &[u8],
    number: u64,
    now: i64,
) -> anyhow::Result<()> {
    match input {
        Input::Text => {
            let parsed = reader.parse(line, number).map_err(|e| anyhow!(e))?;
            let headers: Vec<(&str, Option<&[u8]>)> = parsed
                .headers
                .iter()
                .map(|(k, v)| (k.as_ref(), *v))
                .collect();
            let record = ProducerRecord {
                key: parsed.key,
                value: parsed.value,
                headers: &headers,
                timestamp: now,
                partition: None,
            };
            send(sink, record, number)?;
        }
        Input::Json => {
            let r = json::parse_record(line).map_err(|e| anyhow!("line {number}: {e}"))?;
            let headers: Vec<(&str, Option<&[u8]>)> = r
                .headers
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_deref()))
                .collect();
            let record = ProducerRecord {
                key: r.key.as_deref(),
                value: r.value.as_deref(),
                headers: &headers,
                timestamp: r.timestamp.unwrap_or(now),
                partition: r.partition,
            };
            send(sink, record, number)?;
        }
    }
    Ok(())
}

/// Delivers what was read before `error` stopped the producer, then returns `error`, naming a
/// failed delivery too rather than letting it hide the first cause.
fn stop_with(sink: Producer, error: anyhow::Error) -> CliError {
    match sink.close() {
        Ok(()) => error.into(),
        Err(sent) => {
            anyhow!("{error:#}; the lines before it were not all delivered either: {sent:#}").into()
        }
    }
}

/// The size of stdin when it is a regular file (for the progress ETA).
fn stdin_file_size() -> Option<u64> {
    use std::os::fd::AsFd;
    let fd = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
    let meta = std::fs::File::from(fd).metadata().ok()?;
    meta.is_file().then_some(meta.len())
}

/// Reads stdin on its own thread, so the main thread can flush on linger while a read blocks.
/// An empty chunk means end of input. Chunks sent back on the returned sender are reused.
fn spawn_stdin_reader(prompt: bool) -> (Receiver<std::io::Result<Vec<u8>>>, SyncSender<Vec<u8>>) {
    let (tx, rx) = sync_channel(4);
    let (recycle_tx, recycle_rx) = sync_channel::<Vec<u8>>(8);
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        loop {
            if prompt {
                let mut out = std::io::stdout();
                let _ = out.write_all(b">").and_then(|_| out.flush());
            }
            let mut buf = recycle_rx.try_recv().unwrap_or_default();
            buf.resize(READ_CHUNK, 0);
            match stdin.read(&mut buf) {
                Ok(0) => {
                    let _ = tx.send(Ok(Vec::new()));
                    return;
                }
                Ok(n) => {
                    buf.truncate(n);
                    if tx.send(Ok(buf)).is_err() {
                        return;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            }
        }
    });
    (rx, recycle_tx)
}

/// Splits chunks into lines on `\n`, dropping a `\r` before it; keeps a partial last line.
#[derive(Default)]
struct LineSplitter {
    carry: Vec<u8>,
    number: u64,
}

impl LineSplitter {
    fn feed(
        &mut self,
        chunk: &[u8],
        eof: bool,
        mut each: impl FnMut(u64, &[u8]) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let mut rest = chunk;
        if !self.carry.is_empty() {
            match memchr::memchr(b'\n', rest) {
                Some(i) => {
                    self.carry.extend_from_slice(&rest[..i]);
                    rest = &rest[i + 1..];
                    let line = std::mem::take(&mut self.carry);
                    self.number += 1;
                    each(self.number, strip_cr(&line))?;
                }
                None => {
                    self.carry.extend_from_slice(rest);
                    rest = &[];
                }
            }
        }
        // memchr scans a word or a vector at a time, not byte by byte.
        while let Some(i) = memchr::memchr(b'\n', rest) {
            self.number += 1;
            each(self.number, strip_cr(&rest[..i]))?;
            rest = &rest[i + 1..];
        }
        self.carry.extend_from_slice(rest);
        if eof && !self.carry.is_empty() {
            let line = std::mem::take(&mut self.carry);
            self.number += 1;
            each(self.number, strip_cr(&line))?;
        }
        Ok(())
    }
}

fn strip_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}
