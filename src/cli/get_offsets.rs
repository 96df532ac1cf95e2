//! `kafka-get-offsets`: the offsets of topic-partitions at a time, or their earliest, latest or
//! max-timestamp offsets (Kafka's `GetOffsetShell`), through the client API, so the embedded log
//! and a cluster take the same path.
//!
//! Output: `topic:partition:offset` lines sorted as Kafka sorts them (by the text
//! `topic-partition`, so `t-10` comes before `t-2`); a partition without an offset for the time
//! asked (no record at or after it, an empty partition for max-timestamp) is left out. A
//! partition whose offset cannot be read gets Kafka's `Skip getting offsets ...` line on stderr,
//! and the run then exits 1 (Kafka exits 0).

mod filter;

use std::io::Write;
use std::process::ExitCode;

use anyhow::anyhow;
use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Command};

use super::{
    CliError, Suggest, closed_pipe_ok, connection_args, open_client, run_tool, usage,
    validate_bootstrap,
};
use crate::client::Client;
use crate::client::offsets::OffsetSpec;
use crate::kafka::TopicPartition;
use filter::TopicPartitionFilter;

/// The named values of `--time`, with the number each stands for.
const NAMED_TIMES: [(&str, i64); 6] = [
    ("latest", -1),
    ("earliest", -2),
    ("max-timestamp", -3),
    ("earliest-local", -4),
    ("latest-tiered", -5),
    ("earliest-pending-upload", -6),
];

/// A `kafka-get-offsets` run, as its arguments say.
#[derive(Debug)]
struct GetOffsetsOptions {
    filter: TopicPartitionFilter,
    spec: OffsetSpec,
    exclude_internal: bool,
}

fn value(name: &'static str, value_name: &'static str, help: &'static str) -> Arg {
    crate::cli::value_option(name, value_name, help, "Options")
}

/// The clap definition of `kafka-get-offsets`.
pub fn command() -> Command {
    let cmd = Command::new("kafka-get-offsets")
        .about("Print the offsets of topic-partitions: earliest, latest, max-timestamp, or the first at or after a time.")
        .arg(value(
            "topic",
            "topic",
            "The topics to look at: a regular expression of whole names (every topic when absent). Not with --topic-partitions.",
        ))
        .arg(value(
            "partitions",
            "partition ids",
            "Comma-separated partition ids to look at (every partition when absent). Not with --topic-partitions.",
        ))
        .arg(value(
            "topic-partitions",
            "topic1:1,topic2:0-3,topic3,topic4:5-,topic5:-3",
            "Comma-separated rules TOPIC_REGEX[:PARTITIONS], PARTITIONS being N, N-M (M excluded), N- or -M; an empty regex takes every topic.",
        ))
        .arg(
            value(
                "time",
                "timestamp",
                "A time in ms since the epoch (the first offset at or after it), or -1/latest, -2/earliest, -3/max-timestamp, -4/earliest-local, -5/latest-tiered, -6/earliest-pending-upload [default: latest]",
            )
            .value_parser(Suggest(&[
                "latest",
                "earliest",
                "max-timestamp",
                "earliest-local",
                "latest-tiered",
                "earliest-pending-upload",
            ])),
        )
        .arg(crate::cli::flag_option(
            "exclude-internal-topics",
            "Leave out internal topics (included by default).",
            "Options",
            ArgAction::SetTrue,
        ))
        .arg(
            crate::cli::admin_config_arg("config file", "Property file containing configs to be passed to the admin client."),
        );
    connection_args(cmd)
}

/// Entry point of the `kafka-get-offsets` binary.
pub fn main() -> ExitCode {
    run_tool(command(), "Error occurred: ", run)
}

fn run(m: &ArgMatches) -> Result<(), CliError> {
    let opts = GetOffsetsOptions::from_matches(m)?;
    let mut client = open_client(m, super::command_config(m)?.as_ref())?;
    let partitions = matching_partitions(&mut client, &opts)?;
    if partitions.is_empty() {
        return Err(
            anyhow!("Could not match any topic-partitions with the specified filters").into(),
        );
    }
    let answers = client.list_offsets(&partitions, opts.spec)?;
    // Kafka's order: a TreeMap keyed by TopicPartition.toString(), "topic-partition".
    let mut rows: Vec<_> = answers
        .into_iter()
        .map(|((topic, partition), answer)| {
            (format!("{topic}-{partition}"), topic, partition, answer)
        })
        .collect();
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut skipped = 0;
    for (name, topic, partition, answer) in rows {
        match answer {
            Ok(Some(offset)) => closed_pipe_ok(writeln!(out, "{topic}:{partition}:{offset}"))?,
            Ok(None) => {}
            Err(e) => {
                skipped += 1;
                eprintln!(
                    "Skip getting offsets for topic-partition {name} due to error: {}",
                    super::exceptions::of_error(&e)
                );
            }
        }
    }
    closed_pipe_ok(out.flush())?;
    if skipped > 0 {
        return Err(anyhow!(
            "the offsets of {skipped} topic-partition(s) could not be read (see above)"
        )
        .into());
    }
    Ok(())
}

impl GetOffsetsOptions {
    /// The options of a run, with Kafka's checks in its order: the bootstrap address, then
    /// `--topic-partitions` against `--topic`/`--partitions`, `--time`, and the filters.
    fn from_matches(m: &ArgMatches) -> Result<GetOffsetsOptions, CliError> {
        let has = |id: &str| m.value_source(id) == Some(ValueSource::CommandLine);
        let text = |id: &str| m.get_one::<String>(id).map(String::as_str);
        if let Some(servers) = text("bootstrap-server") {
            validate_bootstrap(servers)?;
        }
        if has("topic-partitions") && (has("topic") || has("partitions")) {
            return usage("--topic-partitions cannot be used with --topic or --partitions");
        }
        let spec = parse_time(text("time").unwrap_or("latest"))?;
        let filter = match text("topic-partitions") {
            Some(rules) => TopicPartitionFilter::from_rules(rules),
            None => {
                TopicPartitionFilter::from_topic_and_partitions(text("topic"), text("partitions"))
            }
        }
        .map_err(CliError::Usage)?;
        Ok(GetOffsetsOptions {
            filter,
            spec,
            exclude_internal: m.get_flag("exclude-internal-topics"),
        })
    }
}

/// `--time`: a name, or a number (`-1` to `-6` are the named specs, others a time in ms).
fn parse_time(arg: &str) -> Result<OffsetSpec, CliError> {
    let number = NAMED_TIMES
        .iter()
        .find(|(name, _)| *name == arg)
        .map(|(_, n)| *n)
        .or_else(|| arg.parse::<i64>().ok());
    match number {
        Some(n) => Ok(OffsetSpec::from_list_offsets_timestamp(n)),
        None => usage(format!(
            "Malformed time argument {arg}. Please use -1 or latest / -2 or earliest / -3 or max-timestamp / -4 or earliest-local / -5 or latest-tiered / -6 or earliest-pending-upload, or a specified long format timestamp"
        )),
    }
}

/// The topic-partitions the filters take, among the topics the backend lists (internal ones
/// left out under `--exclude-internal-topics`, as the admin client's `listInternal(false)`).
fn matching_partitions(
    client: &mut Client,
    opts: &GetOffsetsOptions,
) -> Result<Vec<TopicPartition>, CliError> {
    let names: Vec<String> = client
        .list_topics()?
        .into_iter()
        .filter(|t| !(opts.exclude_internal && t.internal))
        .filter(|t| opts.filter.allows_topic(&t.name))
        .map(|t| t.name)
        .collect();
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for topic in client.describe_topics(&names, 2000)? {
        for p in &topic.partitions {
            if opts.filter.allows(&topic.name, p.partition) && p.partition >= 0 {
                out.push((topic.name.clone(), p.partition));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_by_name_and_number() {
        let spec = |arg| parse_time(arg).unwrap();
        assert_eq!(spec("latest"), OffsetSpec::Latest);
        assert_eq!(spec("-1"), OffsetSpec::Latest);
        assert_eq!(spec("earliest"), OffsetSpec::Earliest);
        assert_eq!(spec("-2"), OffsetSpec::Earliest);
        assert_eq!(spec("max-timestamp"), OffsetSpec::MaxTimestamp);
        assert_eq!(spec("-3"), OffsetSpec::MaxTimestamp);
        assert_eq!(spec("-4"), OffsetSpec::EarliestLocal);
        assert_eq!(spec("latest-tiered"), OffsetSpec::LatestTiered);
        assert_eq!(spec("-6"), OffsetSpec::EarliestPendingUpload);
        assert_eq!(spec("+1500"), OffsetSpec::Timestamp(1500));
        assert_eq!(spec("-7"), OffsetSpec::Timestamp(-7));
        for bad in ["LATEST", "1.5", "", "99999999999999999999"] {
            assert!(
                matches!(parse_time(bad), Err(CliError::Usage(m)) if m.starts_with(&format!("Malformed time argument {bad}. "))),
                "{bad}"
            );
        }
    }
}
