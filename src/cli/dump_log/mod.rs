//! `kafka-dump-log` (Kafka's `DumpLogSegments`): prints the batches and records of segment
//! files, the entries of their indexes, producer snapshots and transaction indexes, with Kafka's
//! text, reading the files directly (no broker, no log dir, no locks, nothing written).
//!
//! - `java`: what Kafka's output gets from the JVM (exception lines, file names, number
//!   parsing, UTF-8 decoding, `HashMap` order).
//! - `file_records`, `batch`: a segment read as Kafka's `FileRecords` reads it, each batch's
//!   fields and records read where and as Kafka reads them, through `crate::record`.
//! - `log`, `control`, `parsers`: `.log` and `.checkpoint` dumps, control records, what
//!   `--print-data-log` and the decoder options print; `schema`: Kafka's message schemas, for
//!   the JSON of control and coordinator records.
//! - `index`, `state`: `.index`/`.timeindex`, and `.snapshot`/`.txnindex` dumps.
//!
//! Like Kafka's tool, it reads each file named by `--files` in turn, prints what it finds on
//! stdout, and ends with the problems it noticed (index entries that do not match the log,
//! offsets that are not consecutive) on stderr. Damage it cannot read past ends the run with
//! the first line of the exception Kafka's tool would throw, and status 1.

mod batch;
mod control;
mod file_records;
mod index;
mod java;
mod log;
mod parsers;
mod schema;
mod state;

use std::collections::BTreeMap;
use std::io::Write;
use std::process::ExitCode;

use clap::{Arg, ArgAction, ArgMatches, Command};

use super::{CliError, flag_option, usage, value_option};
use java::JavaError;
use parsers::{Coordinator, Decoder, MessageParser};

const STRING_DECODER: &str = "org.apache.kafka.tools.api.StringDecoder";
const DEFAULT_MAX_MESSAGE_SIZE: i32 = 5 * 1024 * 1024;

/// The clap definition: Kafka's options, with its descriptions.
pub fn command() -> Command {
    Command::new("kafka-dump-log")
        .about(
            "This tool helps to parse a log file and dump its contents to the console, useful \
             for debugging a seemingly corrupt log segment.",
        )
        .arg(
            value_option(
                "files",
                "file1, file2, ...",
                "REQUIRED: The comma separated list of data and index log files to be dumped.",
                "Files",
            )
            .value_hint(clap::ValueHint::FilePath),
        )
        .args(log_args())
        .args(decoder_args())
        .args(index_args())
}

/// jopt-simple takes a flag given twice; clap would refuse it.
fn flag(name: &'static str, help: &'static str, heading: &'static str) -> Arg {
    flag_option(name, help, heading, ArgAction::SetTrue).overrides_with(name)
}

fn log_args() -> [Arg; 4] {
    const LOGS: &str = "Log segments";
    [
        flag(
            "deep-iteration",
            "If set, uses deep instead of shallow iteration. Automatically set if \
             print-data-log is enabled.",
            LOGS,
        ),
        flag(
            "print-data-log",
            "If set, printing the messages content when dumping data logs. Automatically set if \
             any decoder option is specified.",
            LOGS,
        ),
        flag(
            "skip-record-metadata",
            "Skip metadata when printing records. This flag also skips control records.",
            LOGS,
        ),
        int_option(
            "max-bytes",
            "Limit the amount of total batches read in bytes avoiding reading the whole .log \
             file(s). [default: 2147483647]",
            LOGS,
        ),
    ]
}

fn decoder_args() -> [Arg; 7] {
    const DECODERS: &str = "Decoders";
    [
        decoder_option("key-decoder-class", "keys"),
        decoder_option("value-decoder-class", "messages"),
        flag(
            "offsets-decoder",
            "If set, log data will be parsed as offset data from the __consumer_offsets topic.",
            DECODERS,
        ),
        flag(
            "transaction-log-decoder",
            "If set, log data will be parsed as transaction metadata from the \
             __transaction_state topic.",
            DECODERS,
        ),
        flag(
            "share-group-state-decoder",
            "If set, log data will be parsed as share group state data from the \
             __share_group_state topic.",
            DECODERS,
        ),
        flag(
            "cluster-metadata-decoder",
            "If set, log data will be parsed as cluster metadata records.",
            DECODERS,
        ),
        flag(
            "remote-log-metadata-decoder",
            "If set, log data will be parsed as TopicBasedRemoteLogMetadataManager (RLMM) \
             metadata records (not supported by kafkit).",
            DECODERS,
        ),
    ]
}

fn index_args() -> [Arg; 3] {
    const INDEXES: &str = "Indexes";
    [
        flag(
            "verify-index-only",
            "If set, just verify the index log without printing its content.",
            INDEXES,
        ),
        flag(
            "index-sanity-check",
            "If set, just checks the index sanity without printing its content. This is the \
             same check that is executed on broker startup to determine if an index needs \
             rebuilding or not.",
            INDEXES,
        ),
        int_option(
            "max-message-size",
            "Size of largest message. [default: 5242880]",
            INDEXES,
        ),
    ]
}

/// An integer option. Kafka converts the value only when it is used (`--max-bytes` for a
/// `.log`, `--max-message-size` for an `.index`), so a bad one is reported then.
fn int_option(name: &'static str, help: &'static str, heading: &'static str) -> Arg {
    value_option(name, "size", help, heading)
}

/// An integer option's value, or its default; a value that is not an `int` is a usage error.
fn int_value(name: &str, value: Option<&str>, default: i32) -> Result<i32, Stop> {
    let Some(text) = value else {
        return Ok(default);
    };
    text.parse()
        .map_err(|_| Stop::Unsupported(format!("Cannot parse argument '{text}' of option {name}")))
}

/// `--key-decoder-class` and `--value-decoder-class`: the class name is optional.
fn decoder_option(name: &'static str, what: &'static str) -> Arg {
    let help: &'static str = if what == "keys" {
        "If set, used to deserialize the keys: org.apache.kafka.tools.api.StringDecoder \
         (default), IntegerDecoder or LongDecoder."
    } else {
        "If set, used to deserialize the messages: org.apache.kafka.tools.api.StringDecoder \
         (default), IntegerDecoder or LongDecoder."
    };
    value_option(name, "String", help, "Decoders")
        .num_args(0..=1)
        .default_missing_value(STRING_DECODER)
}

pub fn main() -> ExitCode {
    super::run_file_tool(command(), run)
}

/// The options of a run.
struct Options {
    files: Vec<String>,
    print_contents: bool,
    deep_iteration: bool,
    skip_record_metadata: bool,
    max_bytes: Option<String>,
    max_message_size: Option<String>,
    sanity_only: bool,
    verify_only: bool,
    /// How contents are printed, or why kafkit cannot print them that way.
    parser: Result<MessageParser, Unsupported>,
}

/// A way of printing contents kafkit does not have: an error when a log is dumped.
#[derive(Debug, Clone)]
enum Unsupported {
    /// A decoder class kafkit does not know: Kafka fails to load a class it does not have.
    UnknownClass,
    /// Something Kafka can do and kafkit cannot, with what to do instead.
    Option(String),
}

impl Options {
    fn from(m: &ArgMatches) -> Result<Options, CliError> {
        let Some(files) = m.get_one::<String>("files") else {
            return usage("Missing required argument \"[files]\"");
        };
        let has = |name: &str| m.get_flag(name);
        let decoder_class = |name: &str| m.get_one::<String>(name).map(String::as_str);
        let print_contents = [
            "print-data-log",
            "offsets-decoder",
            "transaction-log-decoder",
            "cluster-metadata-decoder",
            "remote-log-metadata-decoder",
            "share-group-state-decoder",
        ]
        .iter()
        .any(|f| has(f))
            || decoder_class("value-decoder-class").is_some()
            || decoder_class("key-decoder-class").is_some();
        Ok(Options {
            files: crate::cli::java_split(files, ',')
                .into_iter()
                .map(str::to_string)
                .collect(),
            print_contents,
            deep_iteration: has("deep-iteration") || print_contents,
            skip_record_metadata: has("skip-record-metadata"),
            max_bytes: m.get_one::<String>("max-bytes").cloned(),
            max_message_size: m.get_one::<String>("max-message-size").cloned(),
            sanity_only: has("index-sanity-check"),
            verify_only: has("verify-index-only"),
            parser: message_parser(m),
        })
    }
}

/// The parser Kafka's options pick, in Kafka's order of precedence.
fn message_parser(m: &ArgMatches) -> Result<MessageParser, Unsupported> {
    let has = |name: &str| m.get_flag(name);
    if has("offsets-decoder") {
        return Ok(MessageParser::Coordinator(Coordinator::Group));
    }
    if has("transaction-log-decoder") {
        return Ok(MessageParser::Coordinator(Coordinator::Transaction));
    }
    if has("cluster-metadata-decoder") {
        return Ok(MessageParser::ClusterMetadata);
    }
    if has("remote-log-metadata-decoder") {
        return Err(Unsupported::Option(
            "--remote-log-metadata-decoder is not supported by kafkit (Kafka prints Java objects \
             there); use --print-data-log"
                .into(),
        ));
    }
    if has("share-group-state-decoder") {
        return Ok(MessageParser::Coordinator(Coordinator::Share));
    }
    let decoder = |name: &str| {
        let class = m
            .get_one::<String>(name)
            .map_or(STRING_DECODER, String::as_str);
        if class == "org.apache.kafka.tools.api.DefaultDecoder" {
            return Err(Unsupported::Option(format!(
                "--{name} {class} is not supported by kafkit (Java prints a byte array's object \
                 id, not its bytes); use {STRING_DECODER}"
            )));
        }
        Decoder::from_class(class).ok_or(Unsupported::UnknownClass)
    };
    Ok(MessageParser::Decoders {
        value: decoder("value-decoder-class")?,
        key: decoder("key-decoder-class")?,
    })
}

/// Why a dump stopped early.
pub enum Stop {
    /// Kafka's tool would have thrown this.
    Java(JavaError),
    /// Standard output was closed (`| head`): stop quietly.
    Closed,
    /// Standard output failed otherwise.
    Write(std::io::Error),
    /// An option kafkit cannot honour (a usage error).
    Unsupported(String),
    /// Data kafkit cannot show (a runtime error).
    Unreadable(String),
}

impl From<JavaError> for Stop {
    fn from(e: JavaError) -> Self {
        Stop::Java(e)
    }
}

impl From<std::io::Error> for Stop {
    fn from(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            Stop::Closed
        } else {
            Stop::Write(e)
        }
    }
}

/// Standard output, buffered.
pub struct Out {
    w: std::io::BufWriter<std::io::Stdout>,
}

impl Out {
    pub fn print(&mut self, s: &str) -> Result<(), Stop> {
        Ok(self.w.write_all(s.as_bytes())?)
    }

    pub fn line(&mut self, s: &str) -> Result<(), Stop> {
        self.print(s)?;
        self.print("\n")
    }

    fn flush(&mut self) -> Result<(), Stop> {
        Ok(self.w.flush()?)
    }
}

/// One summary kept per file, in the order the files first appear.
type PerFile<T> = Vec<(String, T)>;

fn per_file<'a, T: Default>(all: &'a mut PerFile<T>, file: &str) -> &'a mut T {
    let at = match all.iter().position(|(f, _)| f == file) {
        Some(at) => at,
        None => {
            all.push((file.to_string(), T::default()));
            all.len() - 1
        }
    };
    &mut all[at].1
}

/// What the dumps noticed, printed on stderr at the end (Kafka's maps, in its order).
#[derive(Default)]
pub struct Findings {
    /// Index offset to the log's last offset of the batch there, per index file.
    index_mismatches: PerFile<BTreeMap<i64, i64>>,
    time_mismatches: PerFile<Vec<(i64, i64)>>,
    out_of_order: PerFile<Vec<(i64, i64)>>,
    not_found: PerFile<Vec<(i64, i64)>>,
    non_consecutive: PerFile<BTreeMap<i64, i64>>,
}

impl Findings {
    pub fn index_mismatch(&mut self, file: &str, index_offset: i64, log_offset: i64) {
        per_file(&mut self.index_mismatches, file).insert(index_offset, log_offset);
    }

    pub fn time_mismatch(&mut self, file: &str, index_ts: i64, log_ts: i64) {
        per_file(&mut self.time_mismatches, file).push((index_ts, log_ts));
    }

    pub fn out_of_order(&mut self, file: &str, index_ts: i64, previous: i64) {
        per_file(&mut self.out_of_order, file).push((index_ts, previous));
    }

    pub fn not_found(&mut self, file: &str, index_offset: i64, log_offset: i64) {
        per_file(&mut self.not_found, file).push((index_offset, log_offset));
    }

    pub fn non_consecutive(&mut self, file: &str, previous: i64, next: i64) {
        per_file(&mut self.non_consecutive, file).insert(previous, next);
    }

    /// The summaries, one line each, in Kafka's order.
    fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (file, m) in in_hash_order(&self.index_mismatches) {
            out.push(format!("Mismatches in :{file}"));
            for (index, log) in m.iter().rev() {
                out.push(format!("  Index offset: {index}, log offset: {log}"));
            }
        }
        for (file, list) in in_hash_order(&self.time_mismatches) {
            out.push(format!("Found timestamp mismatch in :{file}"));
            for (index, log) in list {
                out.push(format!("  Index timestamp: {index}, log timestamp: {log}"));
            }
        }
        for (file, list) in in_hash_order(&self.out_of_order) {
            out.push(format!("Found out of order timestamp in :{file}"));
            for (index, previous) in list {
                out.push(format!(
                    "  Index timestamp: {index}, Previously indexed timestamp: {previous}"
                ));
            }
        }
        for (file, list) in in_hash_order(&self.not_found) {
            out.push(format!(
                "The following indexed offsets are not found in :{file}"
            ));
            for (index, log) in list {
                out.push(format!("Indexed offset: {index}, found log offset: {log}"));
            }
        }
        for (file, m) in in_hash_order(&self.non_consecutive) {
            out.push(format!("Non-consecutive offsets in {file}"));
            for (previous, next) in m {
                out.push(format!("  {previous} is followed by {next}"));
            }
        }
        out
    }
}

/// A per-file summary in the order Kafka's `HashMap` of it iterates.
fn in_hash_order<T>(all: &PerFile<T>) -> impl Iterator<Item = &(String, T)> {
    let names: Vec<&str> = all.iter().map(|(f, _)| f.as_str()).collect();
    java::hash_map_order(&names)
        .into_iter()
        .map(move |i| &all[i])
}

fn run(m: &ArgMatches) -> Result<(), CliError> {
    let opts = Options::from(m)?;
    let mut out = Out {
        w: std::io::BufWriter::with_capacity(1 << 16, std::io::stdout()),
    };
    let mut findings = Findings::default();
    let result = dump_all(&opts, &mut out, &mut findings).and_then(|()| out.flush());
    match result {
        Ok(()) => {
            for line in findings.lines() {
                eprintln!("{line}");
            }
            Ok(())
        }
        Err(stop) => {
            // What was printed before the failure stays printed, as in Kafka.
            let _ = out.flush();
            match stop {
                Stop::Closed => Ok(()),
                Stop::Java(e) => Err(CliError::Runtime(anyhow::anyhow!("{e}"))),
                Stop::Write(e) => Err(CliError::Runtime(anyhow::anyhow!(
                    "cannot write to standard output: {e}"
                ))),
                Stop::Unsupported(why) => usage(why),
                Stop::Unreadable(why) => Err(CliError::Runtime(anyhow::anyhow!("{why}"))),
            }
        }
    }
}

fn dump_all(opts: &Options, out: &mut Out, findings: &mut Findings) -> Result<(), Stop> {
    for arg in &opts.files {
        let display = java::file_display(arg);
        out.line(&format!("Dumping {display}"))?;
        let name = java::file_name(&display);
        let Some(dot) = name.rfind('.') else {
            out.flush()?;
            eprintln!("Ignoring unknown file {display}");
            continue;
        };
        match &name[dot..] {
            ".log" | ".checkpoint" => {
                let parser = match &opts.parser {
                    Ok(parser) => parser,
                    Err(Unsupported::UnknownClass) => {
                        return Err(JavaError::new(
                            "java.lang.RuntimeException",
                            "Failed to load decoder class",
                        )
                        .into());
                    }
                    Err(Unsupported::Option(why)) => return Err(Stop::Unsupported(why.clone())),
                };
                let log_opts = log::LogOptions {
                    print_contents: opts.print_contents,
                    deep_iteration: opts.deep_iteration,
                    skip_record_metadata: opts.skip_record_metadata,
                    max_bytes: int_value("max-bytes", opts.max_bytes.as_deref(), i32::MAX)?,
                    parser,
                };
                log::dump(&display, name, &log_opts, out, findings)?;
            }
            ".index" => {
                let index_opts = index::IndexOptions {
                    sanity_only: opts.sanity_only,
                    verify_only: opts.verify_only,
                    max_message_size: int_value(
                        "max-message-size",
                        opts.max_message_size.as_deref(),
                        DEFAULT_MAX_MESSAGE_SIZE,
                    )?,
                };
                index::dump_index(&display, name, &index_opts, out, findings)?;
            }
            ".timeindex" => {
                let index_opts = index::IndexOptions {
                    sanity_only: opts.sanity_only,
                    verify_only: opts.verify_only,
                    max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
                };
                index::dump_time_index(&display, name, &index_opts, out, findings)?;
            }
            ".snapshot" => state::dump_producer_snapshot(&display, out)?,
            ".txnindex" => state::dump_txn_index(&display, name, out)?,
            _ => {
                out.flush()?;
                eprintln!("Ignoring unknown file {display}");
            }
        }
    }
    Ok(())
}
