//! `kafka-producer-perf-test`'s options: the clap definition, argparse4j's checks and messages
//! as Kafka's `ProducerPerformance` has them, and the producer properties.

use std::path::Path;
use std::time::Duration;

use clap::{Arg, ArgAction, ArgMatches, Command};

use crate::cli::producer::{ProducerDefaults, from_properties};
use crate::cli::properties::{self, Properties};
use crate::cli::{
    CliError, argparse_number as convert, connection_args, java_split, usage, validate_bootstrap,
};
use crate::client::{BatchSettings, ProducerSettings};

/// The producer defaults of Kafka's `KafkaProducer` (the perf test sets none of its own).
const PERF: ProducerDefaults = ProducerDefaults {
    linger_ms: 5,
    retries: i32::MAX as i64,
};

fn opt(name: &'static str, value_name: &'static str, help: &'static str) -> Arg {
    crate::cli::value_option(name, value_name, help, "Producer perf test")
}

fn props_opt(name: &'static str, help: &'static str) -> Arg {
    opt(name, "PROP-NAME=PROP-VALUE", help)
        .num_args(1..)
        .action(ArgAction::Append)
}

fn flag(name: &'static str, help: &'static str) -> Arg {
    crate::cli::flag_option(name, help, "Producer perf test", ArgAction::SetTrue)
}

/// The clap definition of `kafka-producer-perf-test`.
pub fn command() -> Command {
    let cmd = Command::new("kafka-producer-perf-test")
        .about("This tool is used to verify the producer performance. To enable transactions, you can specify a transactional id or set a transaction duration using --transaction-duration-ms. There are three ways to specify the transactional id: set transactional.id=<id> via --command-property, set transactional.id=<id> in the config file via --command-config, or use --transactional-id <id>.")
        .args_override_self(true)
        .arg(opt("topic", "TOPIC", "Produce records to this topic."))
        .arg(opt("num-records", "NUM-RECORDS", "Number of records to produce."))
        .arg(opt("payload-delimiter", "PAYLOAD-DELIMITER", "Provides the delimiter to be used when --payload-file is provided. Note that this parameter will be ignored if --payload-file is not provided. [default: \\n]"))
        .arg(opt("throughput", "THROUGHPUT", "Throttle maximum record throughput to *approximately* THROUGHPUT records/sec. Set this to -1 to disable throttling."))
        .arg(props_opt("producer-props", "(DEPRECATED) Kafka producer related configuration properties like client.id. Use --command-property instead."))
        .arg(props_opt("command-property", "Kafka producer related configuration properties like client.id. These configs take precedence over those passed via --command-config or --producer.config. Example: --command-property linger.ms=10 batch.size=32768"))
        .arg(opt("producer.config", "CONFIG-FILE", "(DEPRECATED) Producer config properties file. Use --command-config instead."))
        .arg(opt("command-config", "CONFIG-FILE", "Producer config properties file."))
        .arg(flag("print-metrics", "Print out metrics at the end of the test."))
        .arg(opt("transactional-id", "TRANSACTIONAL-ID", "The transactional id to use. This config takes precedence over the transactional.id specified via --command-property or --command-config. Note that if the transactional id is not specified while --transaction-duration-ms is provided, the default value for the transactional id will be performance-producer- followed by a random uuid."))
        .arg(opt("transaction-duration-ms", "TRANSACTION-DURATION", "The maximum duration of each transaction. The commitTransaction will be called after this time has elapsed. The value should be greater than 0. If the transactional id is specified via --command-property, --command-config or --transactional-id but --transaction-duration-ms is not specified, the default value will be 3000."))
        .arg(opt("warmup-records", "WARMUP-RECORDS", "The number of records to treat as warmup. These initial records will not be included in steady-state statistics. An additional summary line will be printed describing the steady-state statistics. [default: 0]"))
        .arg(opt("reporting-interval", "INTERVAL-MS", "Interval in milliseconds at which to print progress info. [default: 5000]"))
        .arg(opt("record-size", "RECORD-SIZE", "Record size in bytes. Note that you must provide exactly one of --record-size, --payload-file or --payload-monotonic."))
        .arg(opt("payload-file", "PAYLOAD-FILE", "File to read the record payloads from. This works only for UTF-8 encoded text files. Payloads will be read from this file and a payload will be randomly selected when sending records."))
        .arg(flag("payload-monotonic", "Payload is a monotonically increasing integer."));
    connection_args(cmd)
}

/// Where the records' values come from.
#[derive(Debug, Clone)]
pub enum Payload {
    /// Random capital letters, this many bytes.
    Size(usize),
    /// The records of `--payload-file`.
    File(Vec<Vec<u8>>),
    /// The record's number.
    Monotonic,
}

/// A run of the perf test, as its arguments say.
#[derive(Debug)]
pub struct Options {
    pub topic: String,
    pub num_records: u64,
    pub warmup_records: u64,
    pub throughput: f64,
    pub reporting_interval: i64,
    pub print_metrics: bool,
    pub payload: Payload,
    /// The producer properties, with `client.id` and `bootstrap.servers` set.
    pub properties: Properties,
    pub client_id: String,
    pub linger: Duration,
    pub batching: BatchSettings,
    pub delivery: ProducerSettings,
    /// How long each transaction lasts, when the records go in transactions (the
    /// transactional id is in `delivery`).
    pub transaction_duration_ms: Option<i64>,
}

fn required<T>(value: Option<T>, name: &str) -> Result<T, CliError> {
    match value {
        Some(v) => Ok(v),
        None => usage(format!("argument --{name} is required")),
    }
}

impl Options {
    /// The options, checked as Kafka's tool checks them, in its order.
    pub fn from_matches(m: &ArgMatches) -> Result<Options, CliError> {
        let throughput = required(convert::<f64>(m, "throughput", "Double")?, "throughput")?;
        let num_records = required(convert::<i64>(m, "num-records", "Long")?, "num-records")?;
        let topic = required(m.get_one::<String>("topic").cloned(), "topic")?;
        let record_size = convert::<i32>(m, "record-size", "Integer")?;
        let payload_file = m.get_one::<String>("payload-file");
        let monotonic = m.get_flag("payload-monotonic");
        check_payload_choice(m)?;
        let warmup = convert::<i64>(m, "warmup-records", "Long")?
            .unwrap_or(0)
            .max(0);
        let duration = convert::<i64>(m, "transaction-duration-ms", "Long")?;
        let reporting_interval = convert::<i64>(m, "reporting-interval", "Long")?.unwrap_or(5000);
        if num_records <= 0 {
            return usage("--num-records should be greater than zero.");
        }
        if warmup >= num_records {
            return usage(
                "The value for --warmup-records must be strictly fewer than the number of records in the test, --num-records.",
            );
        }
        if record_size.is_some_and(|s| s <= 0) {
            return usage("--record-size should be greater than zero.");
        }
        for (new, old) in [
            ("command-property", "producer-props"),
            ("command-config", "producer.config"),
        ] {
            if m.contains_id(new) && m.contains_id(old) {
                return usage(format!("--{new} and --{old} cannot be specified together."));
            }
        }
        if duration.is_some_and(|d| d <= 0) {
            return usage("--transaction-duration-ms should be greater than zero.");
        }
        if reporting_interval <= 0 {
            return usage("--reporting-interval should be greater than zero.");
        }
        if let Some(servers) = m.get_one::<String>("bootstrap-server") {
            validate_bootstrap(servers)?;
        }
        let payload = match (record_size, payload_file) {
            (Some(size), _) => Payload::Size(size as usize),
            (None, Some(path)) => Payload::File(read_payload_file(
                path,
                m.get_one::<String>("payload-delimiter"),
            )?),
            (None, None) if monotonic => Payload::Monotonic,
            (None, None) => unreachable!("checked by check_payload_choice"),
        };
        let mut properties = producer_properties(m)?;
        // As Kafka's tool: a transactional id (the flag over the property) or a duration turns
        // transactions on; the other gets its default.
        if let Some(id) = m.get_one::<String>("transactional-id") {
            properties.insert("transactional.id".into(), id.clone());
        }
        let transaction_duration_ms = match (properties.contains_key("transactional.id"), duration)
        {
            (false, None) => None,
            (true, None) => Some(3000),
            (_, Some(d)) => Some(d),
        };
        if transaction_duration_ms.is_some() && !properties.contains_key("transactional.id") {
            let uuid = uuid::Builder::from_random_bytes(rand::random()).into_uuid();
            properties.insert(
                "transactional.id".into(),
                format!("performance-producer-{uuid}"),
            );
        }
        let client_id = properties
            .get("client.id")
            .cloned()
            .unwrap_or_else(|| "perf-producer-client".to_string());
        let (linger, batching, mut delivery) = from_properties(&properties, &PERF)?;
        if transaction_duration_ms.is_some() {
            let id = properties
                .get("transactional.id")
                .cloned()
                .unwrap_or_default();
            if id.is_empty() {
                return usage("The transactional id must not be empty.");
            }
            if !delivery.idempotence {
                // Kafka's producer refuses it so (a ConfigException).
                return usage("Cannot set a transactional.id without also enabling idempotence.");
            }
            delivery.transactional_id = Some(id);
            if let Some(timeout) = properties.get("transaction.timeout.ms") {
                delivery.transaction_timeout_ms = timeout.trim().parse().map_err(|_| {
                    CliError::Usage(format!(
                        "Invalid value {timeout} for configuration transaction.timeout.ms: Not a number of type INT"
                    ))
                })?;
            }
        }
        Ok(Options {
            topic,
            num_records: num_records as u64,
            warmup_records: warmup as u64,
            throughput,
            reporting_interval,
            print_metrics: m.get_flag("print-metrics"),
            payload,
            properties,
            client_id,
            linger,
            batching,
            delivery,
            transaction_duration_ms,
        })
    }
}

/// Exactly one of `--record-size`, `--payload-file` and `--payload-monotonic` (argparse4j's
/// mutually exclusive group and its messages).
fn check_payload_choice(m: &ArgMatches) -> Result<(), CliError> {
    let given: Vec<&str> = ["record-size", "payload-file", "payload-monotonic"]
        .into_iter()
        .filter(|name| match *name {
            "payload-monotonic" => m.get_flag(name),
            _ => m.contains_id(name),
        })
        .collect();
    match given.as_slice() {
        [] => usage(
            "one of the arguments --record-size --payload-file --payload-monotonic is required",
        ),
        [_] => Ok(()),
        [first, second, ..] => {
            // argparse4j names the later one on the command line first.
            let position = |name: &str| m.index_of(name).unwrap_or(0);
            let (earlier, later) = if position(first) <= position(second) {
                (first, second)
            } else {
                (second, first)
            };
            usage(format!(
                "argument --{later}: not allowed with argument --{earlier}"
            ))
        }
    }
}

/// The producer properties: the config file, then the `key=value` pairs (each must be
/// exactly one `=`, as Kafka's tool splits them), `client.id` defaulted and
/// `--bootstrap-server` over `bootstrap.servers`. The deprecated spellings warn.
fn producer_properties(m: &ArgMatches) -> Result<Properties, CliError> {
    if m.contains_id("producer-props") {
        eprintln!(
            "Option --producer-props has been deprecated and will be removed in a future version. Use --command-property instead."
        );
    }
    if m.contains_id("producer.config") {
        eprintln!(
            "Option --producer.config has been deprecated and will be removed in a future version. Use --command-config instead."
        );
    }
    let mut props = Properties::new();
    if let Some(path) = m
        .get_one::<String>("command-config")
        .or(m.get_one::<String>("producer.config"))
    {
        props.extend(properties::load_file(Path::new(path))?);
    }
    let pairs = m
        .get_many::<String>("command-property")
        .or(m.get_many::<String>("producer-props"));
    for pair in pairs.into_iter().flatten() {
        match java_split(pair, '=').as_slice() {
            [key, value] => {
                props.insert(key.to_string(), value.to_string());
            }
            _ => return usage(format!("Invalid property: {pair}")),
        }
    }
    props
        .entry("client.id".to_string())
        .or_insert_with(|| "perf-producer-client".to_string());
    if let Some(servers) = m.get_one::<String>("bootstrap-server") {
        props.insert("bootstrap.servers".to_string(), servers.clone());
    }
    Ok(props)
}

/// The most `--payload-file` may hold: it is read whole, as Kafka reads it.
const PAYLOAD_FILE_LIMIT: u64 = 256 * 1024 * 1024;

/// `--payload-file`: the file's text split by the delimiter (a regular expression, as Java's
/// `Scanner` takes it; empty pieces skipped as the scanner skips them). Kafka's two lines
/// about it are printed.
fn read_payload_file(path: &str, delimiter: Option<&String>) -> Result<Vec<Vec<u8>>, CliError> {
    let path = Path::new(path);
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    crate::cli::emit(&format!("Reading payloads from: {}\n", absolute.display()))?;
    let delimiter = match delimiter.map(String::as_str) {
        None | Some("\\n") => "\n",
        Some(d) => d,
    };
    let pattern = regex::Regex::new(delimiter)
        .map_err(|e| CliError::Usage(format!("--payload-delimiter {delimiter:?}: {e}")))?;
    let text = match crate::files::read_limited(path, PAYLOAD_FILE_LIMIT) {
        Ok(bytes) if !bytes.is_empty() => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e @ crate::files::ReadError::TooLarge { .. }) => {
            return Err(
                anyhow::anyhow!("cannot read --payload-file {}: {e}", path.display()).into(),
            );
        }
        _ => {
            return Err(anyhow::anyhow!("File does not exist or empty file provided.").into());
        }
    };
    let records: Vec<Vec<u8>> = pattern
        .split(&text)
        .filter(|piece| !piece.is_empty())
        .map(|piece| piece.as_bytes().to_vec())
        .collect();
    crate::cli::emit(&format!("Number of records read: {}\n", records.len()))?;
    if records.is_empty() {
        return Err(anyhow::anyhow!(
            "File {} holds no payload between its delimiters",
            path.display()
        )
        .into());
    }
    Ok(records)
}
