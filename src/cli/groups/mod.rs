//! `kafka-consumer-groups` (Kafka's `ConsumerGroupCommand`) on the embedded log or a cluster:
//! list, describe, delete and reset consumer groups, delete their offsets, validate a regex.
//!
//! - `options`: the typed options of a run; `validate`: Kafka's option checks, in its order,
//!   with its messages.
//! - `list`, `describe`, `reset`, `delete`: one module per action.
//! - `exceptions` (shared, `crate::cli::exceptions`): Kafka's exception texts for the refusals
//!   the client API reports.
//! - `plan_file`: the reset plan CSV (`--export`, `--from-file`).
//! - `time`: `--to-datetime` and `--by-duration` parsing.
//! - `output`: `--output text|json|table` for list, describe and the reset plan.
//!
//! Differences from Kafka: errors go to stderr after `Error: ` and exit 1 (Kafka prints them on
//! stdout and exits 0); rows are sorted where Kafka prints hash-map order; warnings are on
//! stderr.

mod delete;
mod describe;
use super::exceptions;
mod list;
mod options;
mod output;
pub(crate) mod plan_file;
mod reset;
mod time;
mod validate;

pub(crate) use reset::{TopicArg, parse_topic_arg};
pub(crate) use time::parse_datetime;

use std::process::ExitCode;

use clap::{Arg, ArgAction, ArgMatches, Command};

use super::{CliError, connection_args, emit, java_split, open_client, run_tool};
use crate::client::TopicPattern;
use crate::client::groups::{GroupAdmin, GroupState, TopicPartition};
use options::{Action, GroupsOptions};

/// The one-line description Kafka prints with its usage.
const ABOUT: &str = "This tool helps to list all consumer groups, describe a consumer group, delete consumer group info, or reset consumer group offsets.";

fn flag(name: &'static str, help: &'static str, heading: &'static str) -> Arg {
    crate::cli::flag_option(name, help, heading, ArgAction::Count)
}

fn value(name: &'static str, value_name: &'static str, help: &'static str) -> Arg {
    crate::cli::value_option(name, value_name, help, "Options")
}

fn actions(cmd: Command) -> Command {
    cmd.arg(flag("list", "List all consumer groups.", "Actions"))
        .arg(flag("describe", "Describe consumer group and list offset lag (number of messages not yet processed) related to given group.", "Actions"))
        .arg(flag("delete", "Pass in groups to delete topic partition offsets and ownership information over the entire consumer group.", "Actions"))
        .arg(flag("reset-offsets", "Reset offsets of consumer group. Supports one consumer group at the time, and instances should be inactive. Dry run by default; add --execute to apply.", "Actions"))
        .arg(flag("delete-offsets", "Delete offsets of consumer group. Supports one consumer group at the time, and multiple topics.", "Actions"))
        .arg(
            value("validate-regex", "regex", "Validate that the syntax of the provided regular expression is valid (Java regex syntax).")
                .help_heading("Actions")
                .allow_hyphen_values(true),
        )
}

fn selection(cmd: Command) -> Command {
    cmd.arg(
        value("group", "consumer group", "The consumer group we wish to act on (repeatable).")
            .action(ArgAction::Append),
    )
    .arg(flag("all-groups", "Apply to all consumer groups.", "Options"))
    .arg(
        value("topic", "topic", "The topic whose consumer group information should be deleted or included in the reset offset process: 'topic' or 'topic:0,1,2' (repeatable).")
            .action(ArgAction::Append),
    )
    .arg(flag("all-topics", "Consider all topics assigned to a group in the reset-offsets process.", "Options"))
    .arg(
        value("timeout", "timeout (ms)", "The timeout that can be set for some use cases (ignored on the embedded log).")
            .value_parser(clap::value_parser!(i64))
            .allow_negative_numbers(true),
    )
}

fn views(cmd: Command) -> Command {
    cmd.arg(flag("members", "Describe members of the group.", "Describe"))
        .arg(flag("offsets", "Describe the group and list all topic partitions in the group along with their offset information (the default).", "Describe"))
        .arg(
            value("state", "String", "With --describe: the state of the group. With --list: list with states, optionally only these (comma-separated, e.g. Stable,Empty).")
                .help_heading("Describe")
                .num_args(0..=1)
                .value_parser(crate::cli::Suggest(&GroupState::LISTABLE_NAMES)),
        )
        .arg(flag("verbose", "Provide additional information, if any, when describing the group.", "Describe"))
        .arg(
            value("type", "String", "With --list: list with types, optionally only these (comma-separated: classic, consumer).")
                .help_heading("Describe")
                .num_args(0..=1)
                .value_parser(crate::cli::Suggest(&["classic", "consumer"])),
        )
}

fn reset_options(cmd: Command) -> Command {
    cmd.arg(flag("dry-run", "Only show results without executing changes on consumer groups (the default).", "Reset"))
        .arg(flag("execute", "Execute the operation.", "Reset"))
        .arg(flag("export", "Export the operation result to CSV format.", "Reset"))
        .arg(
            value("to-offset", "Long: offset", "Reset offsets to a specific offset.")
                .help_heading("Reset")
                .value_parser(clap::value_parser!(i64))
                .allow_negative_numbers(true),
        )
        .arg(flag("to-earliest", "Reset offsets to earliest offset.", "Reset"))
        .arg(flag("to-latest", "Reset offsets to latest offset.", "Reset"))
        .arg(flag("to-current", "Reset offsets to current offset.", "Reset"))
        .arg(
            value("shift-by", "Long: number-of-offsets", "Reset offsets shifting current offset by 'n', where 'n' can be positive or negative.")
                .help_heading("Reset")
                .value_parser(clap::value_parser!(i64))
                .allow_negative_numbers(true),
        )
        .arg(
            value("to-datetime", "datetime", "Reset offsets to offset from datetime. Format: 'YYYY-MM-DDThh:mm:ss.sss' with an optional zone (Z, +hh, +hhmm, +hh:mm); UTC if none.")
                .help_heading("Reset"),
        )
        .arg(
            value("by-duration", "duration", "Reset offsets to offset by duration from current timestamp. Format: 'PnDTnHnMnS'.")
                .help_heading("Reset")
                .allow_hyphen_values(true),
        )
        .arg(
            value("from-file", "path to CSV file", "Reset offsets to values defined in CSV file.")
                .help_heading("Reset"),
        )
        .arg(flag("no-progress", "Do not draw progress on stderr for --reset-offsets (it is drawn only when stderr is a terminal).", "Output"))
}

/// The clap definition of `kafka-consumer-groups`.
pub fn command() -> Command {
    let cmd = Command::new("kafka-consumer-groups").about(ABOUT);
    let cmd = reset_options(views(selection(actions(cmd)))).arg(
        value("output", "format", "How --list, --describe and the --reset-offsets plan are printed: text (Kafka's), json (one JSON document) or table (aligned tables with lag totals) [default: text].")
            .help_heading("Output")
            .value_parser(crate::cli::Suggest(&output::FORMATS)),
    );
    connection_args(cmd.arg(crate::cli::admin_config_arg(
        "command config property file",
        "Property file containing configs to be passed to Admin Client.",
    )))
}

/// Entry point of the `kafka-consumer-groups` binary.
pub fn main() -> ExitCode {
    run_tool(command(), "Error: ", run)
}

fn run(m: &ArgMatches) -> Result<(), CliError> {
    let o = GroupsOptions::from_matches(m)?;
    if o.action == Action::ValidateRegex {
        return validate_regex(&o.regex);
    }
    let mut command_config = super::command_config(m)?;
    // Kafka's --timeout bounds each admin call; on a cluster it is the request timeout.
    if let Some(ms) = o.timeout_ms.filter(|ms| *ms > 0) {
        command_config
            .get_or_insert_with(Default::default)
            .insert("request.timeout.ms".to_string(), ms.to_string());
    }
    let mut client = open_client(m, command_config.as_ref())?;
    dispatch(&mut client.group_admin(), &o)
}

fn dispatch(src: &mut GroupAdmin, o: &GroupsOptions) -> Result<(), CliError> {
    match o.action {
        Action::List => list::run(src, o),
        Action::Describe => describe::run(src, o),
        Action::Delete => delete::delete_groups(src, o),
        Action::DeleteOffsets => delete::delete_offsets(src, o),
        Action::ResetOffsets => reset::run(src, o),
        Action::ValidateRegex => validate_regex(&o.regex),
    }
}

/// `--validate-regex`: Kafka compiles with `java.util.regex`; kafkit takes the same syntax
/// ([`TopicPattern`]). An invalid pattern is an error (exit 1; Kafka exits 0).
fn validate_regex(pattern: &str) -> Result<(), CliError> {
    match TopicPattern::whole_names(pattern) {
        Ok(_) => emit(&format!("The regular expression `{pattern}` is valid.\n")),
        Err(why) => {
            let why = why.trim_end_matches('.');
            Err(anyhow::anyhow!("The regular expression `{pattern}` is invalid: {why}.").into())
        }
    }
}

/// Kafka's generic runtime failure: `Executing consumer group command failed due to <msg>`.
fn failed(msg: impl std::fmt::Display) -> CliError {
    CliError::Runtime(anyhow::anyhow!(
        "Executing consumer group command failed due to {msg}"
    ))
}

/// Kafka's `TopicPartition.toString()`: `t-0`.
fn tp_name(tp: &TopicPartition) -> String {
    format!("{}-{}", tp.0, tp.1)
}

/// Left-justifies `s` in `width` columns (Java's `%-Ns`).
fn pad(s: &str, width: usize) -> String {
    format!("{s:<width$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_is_valid() {
        command().debug_assert();
    }
}
