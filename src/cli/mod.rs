//! The tools' command lines: clap definitions, Kafka's validation and messages, output.
//!
//! - [`topics`], [`producer`], [`consumer`], [`groups`], [`get_offsets`],
//!   [`broker_api_versions`], [`configs`], [`delete_records`]: one module per tool, each with
//!   `command()` (the clap definition) and `main()`.
//! - `exceptions`: Kafka's exception texts for error codes, as its tools print them.
//! - [`producer_perf`], [`consumer_perf`], [`share_consumer_perf`]: `kafka-producer-perf-test`,
//!   `kafka-consumer-perf-test` and `kafka-share-consumer-perf-test`; [`perf_stats`]: their
//!   statistics and lines, [`date_format`]: Java's `SimpleDateFormat`.
//! - [`dump_log`]: `kafka-dump-log`, which reads segment files directly (no client, no
//!   connection options).
//! - [`server_start`]: `kafka-server-start`, the embedded log served over the Kafka protocol.
//! - [`share_consumer`]: `kafka-console-share-consumer`, a member of a share group;
//!   [`share_groups`]: `kafka-share-groups`, share-group admin.
//! - [`line_reader`], [`formatter`]: the console tools' LineMessageReader and
//!   DefaultMessageFormatter.
//! - [`properties`]: `key=value` options and Java properties files; [`client_config`]:
//!   Kafka's checks of the producer and consumer properties.
//! - [`signals`]: Ctrl-C, SIGTERM and SIGHUP handling.
//! - [`pipe`]: growing the consumer's stdout pipe.
//!
//! Exit codes: 0 ok, 1 runtime error, 2 usage error, 130, 143 or 129 when ended by SIGINT,
//! SIGTERM or SIGHUP. Errors and warnings go to stderr, results to stdout.

pub mod broker_api_versions;
pub mod client_config;
pub mod configs;
pub mod consumer;
pub mod consumer_perf;
pub mod date_format;
pub mod delete_records;
pub mod dump_log;
pub(crate) mod exceptions;
pub mod formatter;
pub mod get_offsets;
pub mod groups;
pub mod jackson;
pub mod java_map;
pub mod json;
pub mod line_reader;
pub mod perf_stats;
pub mod pipe;
pub mod producer;
pub mod producer_perf;
pub mod profile;
pub mod progress;
pub mod properties;
pub mod server_start;
pub mod share_consumer;
pub mod share_consumer_perf;
pub mod share_groups;
pub mod signals;
pub mod topics;
pub mod transactions;

use std::process::ExitCode;

/// The Apache Kafka tool version whose behaviour kafkit mirrors.
pub const KAFKA_VERSION: &str = "4.3.1";

/// How a tool run failed; each maps to an exit code.
#[derive(Debug)]
pub enum CliError {
    /// Bad flags or values: exit 2.
    Usage(String),
    /// The command could not be carried out: exit 1.
    Runtime(anyhow::Error),
    /// Ended by a signal: exit 128 plus its number (130 for Ctrl-C, 143 for SIGTERM).
    Interrupted(u8),
    /// A runtime error the tool has printed itself, where Kafka's prints it (before a closing
    /// line): exit 1, nothing more printed.
    Reported,
}

impl From<anyhow::Error> for CliError {
    fn from(e: anyhow::Error) -> Self {
        CliError::Runtime(e)
    }
}

impl From<crate::client::ClientError> for CliError {
    fn from(e: crate::client::ClientError) -> Self {
        CliError::Runtime(e.into())
    }
}

/// argparse4j's conversion of an option's value to a number (`java_type` names it: Integer,
/// Long, Double), with its message; `None` when the option is not given.
pub(crate) fn argparse_number<T: std::str::FromStr>(
    m: &clap::ArgMatches,
    name: &str,
    java_type: &str,
) -> Result<Option<T>, CliError> {
    let Some(text) = m.get_one::<String>(name) else {
        return Ok(None);
    };
    match text.parse::<T>() {
        Ok(v) => Ok(Some(v)),
        Err(_) => usage(format!(
            "argument --{name}: could not convert '{text}' to {java_type} (For input string: \"{text}\")"
        )),
    }
}

/// Shorthand for a usage error.
pub fn usage<T>(msg: impl Into<String>) -> Result<T, CliError> {
    Err(CliError::Usage(msg.into()))
}

/// Adds `--version` (kafkit's own), which every tool has.
pub fn with_version_arg(cmd: clap::Command) -> clap::Command {
    cmd.disable_version_flag(true)
        .arg(
            clap::Arg::new("version")
                .long("version")
                .help("Print the Kafka version this tool mirrors and kafkit's version")
                .action(clap::ArgAction::SetTrue)
                .help_heading("Other"),
        )
        .mut_args(next_word_is_the_value)
}

/// Adds the arguments every tool that reaches the data through a client shares: `--version`,
/// `--profile` and `--log-dir`.
pub fn with_common_args(cmd: clap::Command) -> clap::Command {
    with_version_arg(cmd)
        .arg(
            clap::Arg::new("profile")
                .long("profile")
                .value_name("NAME")
                .help("A named cluster or log dir from ~/.config/kafkit/config.toml [env: KAFKIT_PROFILE]")
                .help_heading("Connection"),
        )
        .arg(
            clap::Arg::new("log-dir")
                .long("log-dir")
                .value_name("DIR")
                .value_parser(clap::value_parser!(std::path::PathBuf))
                .help(
                    "Embedded log directory [default: $KAFKIT_LOG_DIR, else $XDG_DATA_HOME/kafkit]",
                )
                .help_heading("Connection"),
        )
        .mut_args(next_word_is_the_value)
}

/// jopt-simple, which Kafka's tools parse with, takes the word after an option that requires
/// an argument as its value even when it starts with `-` (`--topic -dash`, `--partitions -1`).
/// Options whose value is optional keep clap's reading, as jopt does: a following `--flag`
/// is not their value.
fn next_word_is_the_value(arg: clap::Arg) -> clap::Arg {
    let required_value =
        arg.get_action().takes_values() && arg.get_num_args().is_none_or(|n| n.min_values() > 0);
    if required_value {
        arg.allow_hyphen_values(true)
    } else {
        arg
    }
}

/// An option that takes a value, shown under `heading` in `--help`.
pub(crate) fn value_option(
    name: &'static str,
    value_name: &'static str,
    help: &'static str,
    heading: &'static str,
) -> clap::Arg {
    clap::Arg::new(name)
        .long(name)
        .value_name(value_name)
        .help(help)
        .help_heading(heading)
}

/// A flag (no value), shown under `heading` in `--help`.
pub(crate) fn flag_option(
    name: &'static str,
    help: &'static str,
    heading: &'static str,
    action: clap::ArgAction,
) -> clap::Arg {
    clap::Arg::new(name)
        .long(name)
        .action(action)
        .help(help)
        .help_heading(heading)
}

/// The `--command-config` option of an admin tool (each of Kafka's tools words it its own way).
pub(crate) fn admin_config_arg(value_name: &'static str, help: &'static str) -> clap::Arg {
    clap::Arg::new("command-config")
        .long("command-config")
        .value_name(value_name)
        .help(help)
        .help_heading("Connection")
}

/// A value parser that accepts any text (the tools validate it with Kafka's messages) but
/// offers fixed choices to `--help`, shell completions and man pages.
#[derive(Clone, Debug)]
pub struct Suggest(pub &'static [&'static str]);

impl clap::builder::TypedValueParser for Suggest {
    type Value = String;

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        Ok(value.to_string_lossy().into_owned())
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            self.0.iter().map(|v| clap::builder::PossibleValue::new(*v)),
        ))
    }
}

/// `--output`: Kafka's text (default), one JSON document, or an aligned table for people.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    Text,
    Json,
    Table,
}

impl OutputFormat {
    /// The `--output` argument.
    pub fn arg() -> clap::Arg {
        clap::Arg::new("output")
            .long("output")
            .value_name("format")
            .help("text (Kafka's output), json (one JSON document for scripts) or table (aligned, for people) [default: text]")
            .value_parser(Suggest(&["text", "json", "table"]))
            .help_heading("Output")
    }

    /// The format `--output` selected; an unknown name is a usage error.
    pub fn from_matches(m: &clap::ArgMatches) -> Result<OutputFormat, CliError> {
        match m.get_one::<String>("output").map(String::as_str) {
            None | Some("text") => Ok(OutputFormat::Text),
            Some("json") => Ok(OutputFormat::Json),
            Some("table") => Ok(OutputFormat::Table),
            Some(other) => usage(format!(
                "--output {other} is not supported; use text, json or table"
            )),
        }
    }
}

/// A comfy-table for `--output table`: ASCII borders, no colors, sized to the content.
pub fn new_table(header: &[&str]) -> comfy_table::Table {
    let mut table = comfy_table::Table::new();
    table
        .load_style(comfy_table::presets::ASCII_FULL_CONDENSED)
        .set_content_arrangement(comfy_table::ContentArrangement::Disabled)
        .set_header(header.to_vec());
    table
}

/// The tools' complete clap commands, for completions and man pages.
pub fn tool_commands() -> Vec<clap::Command> {
    let mut all: Vec<clap::Command> = [
        topics::command(),
        producer::command(),
        consumer::command(),
        share_consumer::command(),
        share_groups::command(),
        groups::command(),
        get_offsets::command(),
        broker_api_versions::command(),
        configs::command(),
        delete_records::command(),
        producer_perf::command(),
        consumer_perf::command(),
        share_consumer_perf::command(),
        transactions::command(),
    ]
    .into_iter()
    .map(with_common_args)
    .collect();
    all.push(with_version_arg(dump_log::command()));
    all.push(with_version_arg(server_start::command()));
    all
}

/// Runs a tool: parses arguments with `cmd`, calls `run`, prints errors (runtime errors after
/// the tool's `error_prefix`, as Kafka's tools print them) and picks the exit code.
///
/// `--version` prints the mirrored Kafka version and kafkit's own; with no arguments at all the
/// help goes to stderr with a usage-error exit, as Kafka's tools do.
pub fn run_tool(
    cmd: clap::Command,
    error_prefix: &str,
    run: impl FnOnce(&clap::ArgMatches) -> Result<(), CliError>,
) -> ExitCode {
    run_command(
        with_common_args(cmd),
        error_prefix,
        Dialect::JoptSimple,
        run,
    )
}

/// [`run_tool`] for a tool whose Kafka original parses its arguments with argparse4j
/// (`kafka-producer-perf-test`): parse errors read as argparse4j words them.
pub fn run_argparse_tool(
    cmd: clap::Command,
    run: impl FnOnce(&clap::ArgMatches) -> Result<(), CliError>,
) -> ExitCode {
    // argparse4j takes a word starting with `-` as an option, unless it reads as a negative
    // number; an option with several values takes words up to the next option.
    // A tool with commands (`kafka-transactions`) takes its own options before or after the
    // command.
    let commands = cmd.has_subcommands();
    let argparse = |arg: clap::Arg| {
        if arg.get_action().takes_values() {
            arg.allow_hyphen_values(false).allow_negative_numbers(true)
        } else {
            arg
        }
    };
    let cmd = with_common_args(cmd)
        .mut_args(|arg| argparse(if commands { arg.global(true) } else { arg }))
        .mut_subcommands(|sub| sub.mut_args(argparse));
    run_command(cmd, "", Dialect::Argparse4j, run)
}

/// The Java argument parser whose messages a tool's parse errors mirror.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Dialect {
    JoptSimple,
    Argparse4j,
}

/// [`run_tool`] for a tool that reads files and takes no connection options.
pub fn run_file_tool(
    cmd: clap::Command,
    run: impl FnOnce(&clap::ArgMatches) -> Result<(), CliError>,
) -> ExitCode {
    run_command(with_version_arg(cmd), "", Dialect::JoptSimple, run)
}

/// [`run_file_tool`] for a tool whose every argument is optional, so that running it bare does
/// its default work instead of printing the help (`kafka-server-start`).
pub fn run_tool_without_required_args(
    cmd: clap::Command,
    run: impl FnOnce(&clap::ArgMatches) -> Result<(), CliError>,
) -> ExitCode {
    // An unknown `--flag` is an error, not the value of a positional argument.
    let cmd = with_version_arg(cmd).mut_args(|a| {
        if a.is_positional() {
            a.allow_hyphen_values(false)
        } else {
            a
        }
    });
    run_parsed(
        cmd,
        "",
        Dialect::JoptSimple,
        std::env::args_os().collect(),
        run,
    )
}

fn run_command(
    mut cmd: clap::Command,
    error_prefix: &str,
    dialect: Dialect,
    run: impl FnOnce(&clap::ArgMatches) -> Result<(), CliError>,
) -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.len() <= 1 {
        let _ = cmd.write_long_help(&mut std::io::stderr());
        return ExitCode::from(2);
    }
    run_parsed(cmd, error_prefix, dialect, args, run)
}

fn run_parsed(
    mut cmd: clap::Command,
    error_prefix: &str,
    dialect: Dialect,
    args: Vec<std::ffi::OsString>,
    run: impl FnOnce(&clap::ArgMatches) -> Result<(), CliError>,
) -> ExitCode {
    let name = cmd.get_name().to_string();
    let matches = match cmd.try_get_matches_from_mut(args) {
        Ok(m) => m,
        Err(e) => return clap_error(&name, e, dialect),
    };
    if matches.get_flag("version") {
        println!("{KAFKA_VERSION} (kafkit {})", env!("CARGO_PKG_VERSION"));
        return ExitCode::SUCCESS;
    }
    let result = run(&matches);
    for warning in crate::client::drain_warnings() {
        eprintln!("WARN: {warning}");
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError::Usage(msg)) => {
            eprintln!("{msg} (see {name} --help)");
            ExitCode::from(2)
        }
        Err(CliError::Runtime(e)) => {
            eprintln!("{error_prefix}{}", error_chain(&e));
            ExitCode::from(1)
        }
        Err(CliError::Interrupted(status)) => ExitCode::from(status),
        Err(CliError::Reported) => ExitCode::from(1),
    }
}

/// One line: an error and its causes, joined with ": ", skipping causes already in the text.
pub fn error_chain(e: &anyhow::Error) -> String {
    let mut out = e.to_string();
    for cause in e.chain().skip(1) {
        let c = cause.to_string();
        if !out.contains(&c) {
            out.push_str(": ");
            out.push_str(&c);
        }
    }
    out
}

/// Turns clap's parse errors into jopt-simple's one-line messages (Kafka's wording).
fn clap_error(name: &str, e: clap::Error, dialect: Dialect) -> ExitCode {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        let _ = e.print();
        return ExitCode::SUCCESS;
    }
    let ctx = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => s.clone(),
        Some(ContextValue::Strings(v)) => v.join(", "),
        _ => String::new(),
    };
    let option = |arg: String| {
        arg.split_whitespace()
            .next()
            .unwrap_or("")
            .trim_start_matches('-')
            .to_string()
    };
    let msg = match e.kind() {
        ErrorKind::UnknownArgument if dialect == Dialect::Argparse4j => {
            format!("unrecognized arguments: '{}'", ctx(ContextKind::InvalidArg))
        }
        ErrorKind::InvalidValue
            if dialect == Dialect::Argparse4j && ctx(ContextKind::InvalidValue).is_empty() =>
        {
            format!(
                "argument --{}: expected one argument",
                option(ctx(ContextKind::InvalidArg))
            )
        }
        ErrorKind::MissingRequiredArgument if dialect == Dialect::Argparse4j => {
            format!(
                "argument {} is required",
                ctx(ContextKind::InvalidArg)
                    .split_whitespace()
                    .next()
                    .unwrap_or_default()
            )
        }
        ErrorKind::InvalidSubcommand if dialect == Dialect::Argparse4j => {
            format!("invalid choice: '{}'", ctx(ContextKind::InvalidSubcommand))
        }
        ErrorKind::UnknownArgument => {
            let arg = ctx(ContextKind::InvalidArg);
            format!("{} is not a recognized option", arg.trim_start_matches('-'))
        }
        ErrorKind::InvalidValue if ctx(ContextKind::InvalidValue).is_empty() => {
            format!(
                "Option {} requires an argument",
                option(ctx(ContextKind::InvalidArg))
            )
        }
        ErrorKind::ValueValidation | ErrorKind::InvalidValue => format!(
            "Cannot parse argument '{}' of option {}",
            ctx(ContextKind::InvalidValue),
            option(ctx(ContextKind::InvalidArg))
        ),
        ErrorKind::ArgumentConflict => {
            let arg = option(ctx(ContextKind::InvalidArg));
            let other = option(ctx(ContextKind::PriorArg));
            if arg == other || other.is_empty() {
                format!("Found multiple arguments for option {arg}, but you asked for only one")
            } else {
                format!("Option \"[{arg}]\" can't be used with option \"[{other}]\"")
            }
        }
        _ => e
            .render()
            .to_string()
            .lines()
            .next()
            .unwrap_or("invalid arguments")
            .trim_start_matches("error: ")
            .to_string(),
    };
    eprintln!("{msg} (see {name} --help)");
    ExitCode::from(2)
}

/// Common connection arguments: `--bootstrap-server` and `--command-config`.
pub fn connection_args(cmd: clap::Command) -> clap::Command {
    cmd.arg(
        clap::Arg::new("bootstrap-server")
            .long("bootstrap-server")
            .value_name("host:port")
            .help("Kafka cluster to connect to (omit to use the embedded log)")
            .help_heading("Connection"),
    )
}

/// Kafka's bootstrap check: every entry is `[scheme://]host:port`.
pub(crate) fn validate_bootstrap(servers: &str) -> Result<(), CliError> {
    if servers.trim().is_empty() {
        return usage("Error while validating the bootstrap address");
    }
    for entry in servers.split(',') {
        let entry = entry.trim();
        let hostport = entry.split_once("://").map_or(entry, |(_, rest)| rest);
        let ok = hostport
            .rsplit_once(':')
            .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok());
        if !ok {
            return usage("Please provide valid host:port like host1:9091,host2:9092");
        }
    }
    Ok(())
}

/// Where the common connection arguments point: `--bootstrap-server`, else `--log-dir` (the
/// two together are refused), else `bootstrap.servers` of the command config, else the
/// profile's cluster, else the embedded log. The client properties (`request.timeout.ms`,
/// `client.id`, ...) of the profile and the command config configure the connection to a
/// cluster.
pub fn connect_options(
    m: &clap::ArgMatches,
    command_config: Option<&properties::Properties>,
) -> Result<crate::client::ConnectOptions, CliError> {
    // Explicit flags win over the command config, which wins over the profile.
    let profile =
        profile::selected(m.get_one::<String>("profile").map(String::as_str))?.unwrap_or_default();
    let log_dir = m.get_one::<std::path::PathBuf>("log-dir");
    let flag_servers = m.get_one::<String>("bootstrap-server");
    if log_dir.is_some() && flag_servers.is_some() {
        // Two places to read and write: taking either silently would surprise.
        return usage(
            "--log-dir and --bootstrap-server cannot be used together: --log-dir works on the embedded log, --bootstrap-server on a Kafka cluster; give one",
        );
    }
    // A --log-dir flag outranks a cluster named by the command config or the profile.
    let servers = flag_servers.cloned().or_else(|| {
        log_dir
            .is_none()
            .then(|| {
                command_config
                    .and_then(|c| c.get("bootstrap.servers").cloned())
                    .or_else(|| profile.bootstrap_servers.clone())
            })
            .flatten()
    });
    let mut properties = profile.properties.clone();
    properties.extend(command_config.cloned().unwrap_or_default());
    Ok(crate::client::ConnectOptions {
        bootstrap_servers: servers,
        log_dir: log_dir.cloned().or(profile.log_dir.clone()),
        properties,
    })
}

/// Java's `String.split` by a single character: the parts, with trailing empty ones dropped
/// (a text without the separator, even an empty one, is its only part).
pub(crate) fn java_split(text: &str, sep: char) -> Vec<&str> {
    let mut parts: Vec<&str> = text.split(sep).collect();
    while parts.len() > 1 && parts.last() == Some(&"") {
        parts.pop();
    }
    if parts == [""] && !text.is_empty() {
        parts.clear();
    }
    parts
}

/// An admin tool's `--command-config` file, read; `None` without one.
pub(crate) fn command_config(
    m: &clap::ArgMatches,
) -> Result<Option<properties::Properties>, CliError> {
    match m.get_one::<String>("command-config") {
        Some(path) => Ok(Some(properties::load_file(std::path::Path::new(path))?)),
        None => Ok(None),
    }
}

/// A write to stdout, done: a closed pipe (`| head`) ends the output quietly; any other
/// failure is the run's error.
pub(crate) fn closed_pipe_ok(written: std::io::Result<()>) -> Result<(), CliError> {
    match written {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(anyhow::Error::from(e)
            .context("cannot write to stdout")
            .into()),
        _ => Ok(()),
    }
}

/// Writes results to stdout in one go (see [`closed_pipe_ok`]).
pub(crate) fn emit(text: &str) -> Result<(), CliError> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    closed_pipe_ok(out.write_all(text.as_bytes()).and_then(|()| out.flush()))
}

/// Opens the client the common connection arguments point at (see [`connect_options`]).
pub fn open_client(
    m: &clap::ArgMatches,
    command_config: Option<&properties::Properties>,
) -> Result<crate::client::Client, CliError> {
    Ok(crate::client::Client::open(&connect_options(
        m,
        command_config,
    )?)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_split_drops_trailing_empties() {
        assert_eq!(java_split("t:", ':'), vec!["t"]);
        assert_eq!(java_split("t:0", ':'), vec!["t", "0"]);
        assert_eq!(java_split(":0", ':'), vec!["", "0"]);
        assert_eq!(java_split("0,1,,", ','), vec!["0", "1"]);
        assert_eq!(java_split("", ','), vec![""]);
        assert_eq!(java_split(",,", ','), Vec::<&str>::new());
    }

    #[test]
    fn splits_as_java_does() {
        assert_eq!(java_split("", ','), vec![""]);
        assert_eq!(java_split("a", ','), vec!["a"]);
        assert_eq!(java_split("a,b,", ','), vec!["a", "b"]);
        assert_eq!(java_split(",a", ','), vec!["", "a"]);
        assert_eq!(java_split(",,,", ','), Vec::<&str>::new());
        assert_eq!(java_split("a,,b", ','), vec!["a", "", "b"]);
    }
}
