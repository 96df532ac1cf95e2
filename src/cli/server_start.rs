//! `kafka-server-start [server.properties] [--override key=value]...`: serves the embedded log
//! over the Kafka protocol in the foreground until SIGINT or SIGTERM (exit 130 or 143), with
//! Kafka-style log lines on stderr.
//!
//! The log directory is `--log-dir`, else the properties' `log.dirs`, else the tools' default,
//! so a `server.properties` from Kafka's quickstart works as it is.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Arg, ArgAction, ArgMatches, Command};

use super::properties::{Properties, load_file};
use super::{CliError, usage};
use crate::server::{self, Level, Logger, ServerConfig};

/// The clap definition of `kafka-server-start`.
pub fn command() -> Command {
    Command::new("kafka-server-start")
        .about("Serve the embedded log over the Kafka protocol, so that any Kafka client can use it (a one-node local Kafka).")
        .arg(
            Arg::new("properties")
                .value_name("server.properties")
                .value_parser(clap::value_parser!(PathBuf))
                .help(format!(
                    "Kafka broker properties: {} (others are ignored)",
                    server::READ_KEYS.join(", ")
                )),
        )
        .arg(
            Arg::new("override")
                .long("override")
                .value_name("property=value")
                .action(ArgAction::Append)
                .help("A broker property that overrides the file's"),
        )
        .arg(
            Arg::new("log-dir")
                .long("log-dir")
                .value_name("DIR")
                .value_parser(clap::value_parser!(PathBuf))
                .help("Embedded log directory [default: log.dirs, else $KAFKIT_LOG_DIR, else $XDG_DATA_HOME/kafkit]"),
        )
        .arg(
            Arg::new("quiet")
                .long("quiet")
                .action(ArgAction::SetTrue)
                .conflicts_with("verbose")
                .help("Log warnings and errors only"),
        )
        .arg(
            Arg::new("verbose")
                .long("verbose")
                .action(ArgAction::SetTrue)
                .help("Log every request"),
        )
}

/// Entry point of the `kafka-server-start` binary.
pub fn main() -> ExitCode {
    // What Kafka's script takes first; said plainly rather than parsed as `-d`.
    if std::env::args_os().skip(1).any(|a| a == "-daemon") {
        eprintln!(
            "-daemon is not supported: run kafka-server-start in the background with your shell (&, nohup) or a service manager (see kafka-server-start --help)"
        );
        return ExitCode::from(2);
    }
    super::run_tool_without_required_args(command(), run)
}

fn run(m: &ArgMatches) -> Result<(), CliError> {
    let mut props = match m.get_one::<PathBuf>("properties") {
        Some(path) => load_file(path)?,
        None => Properties::new(),
    };
    // The file's keys: most are Kafka's that the server ignores, but one a letter away from a
    // key it reads is a setting lost (an `--override`'s unread key is warned of below).
    let misspelt = server::config::near_misses(&props);
    for pair in m.get_many::<String>("override").into_iter().flatten() {
        match pair.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => {
                let key = k.trim();
                // Given on purpose, so most likely misspelt: said, where a file's are not.
                if !server::READ_KEYS.contains(&key) {
                    eprintln!(
                        "WARN: --override {key}: kafka-server-start does not read this property; it is ignored (see --help)"
                    );
                }
                props.insert(key.to_string(), v.trim().to_string());
            }
            _ => {
                return usage(format!(
                    "--override {pair} is not of the form property=value"
                ));
            }
        }
    }
    let level = if m.get_flag("quiet") {
        Level::Warn
    } else if m.get_flag("verbose") {
        Level::Debug
    } else {
        Level::Info
    };
    // Before the settings are checked: a misspelt key may be why they fail (`log.dirz`).
    let log = Logger::new(level);
    for (given, meant) in misspelt {
        log.warn(&format!(
            "The configuration '{given}' was supplied but isn't a known config; did you mean '{meant}'?"
        ));
    }
    let config =
        ServerConfig::from_properties(&props).map_err(|e| CliError::Runtime(anyhow::anyhow!(e)))?;
    let log_dir = m
        .get_one::<PathBuf>("log-dir")
        .cloned()
        .or_else(|| config.log_dir.clone())
        .or_else(crate::client::default_log_dir);
    let Some(log_dir) = log_dir else {
        return usage("no log directory: give --log-dir or log.dirs, or set KAFKIT_LOG_DIR");
    };
    let signal = server::run(config, &log_dir, log).map_err(|e| CliError::Runtime(e.into()))?;
    Err(CliError::Interrupted(
        u8::try_from(128 + signal).unwrap_or(130),
    ))
}
