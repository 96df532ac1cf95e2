//! `kafka-topics`: create, list, describe, alter and delete topics (Kafka's `TopicCommand`),
//! through the client API, so the embedded log and a cluster take the same path.
//!
//! The arguments become `TopicsOptions` once, with Kafka's checks and messages; each action
//! is then a few client calls and the output of `output`.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::ExitCode;

use anyhow::anyhow;
use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Command};
use kafka_protocol::ResponseError;

mod output;
mod repair;

use super::java_map::{Added, hash_map_order};
use super::{CliError, OutputFormat, connection_args, open_client, run_tool, usage};
use crate::client::{
    Client, NewTopic, PartitionDescription, PartitionIncrease, TopicPattern, topic_config,
    topic_name,
};
use output::{TopicView, write_describe, write_names};

/// `--describe`'s partition filters, in Kafka's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ReportFilter {
    UnderReplicated,
    Unavailable,
    UnderMinIsr,
    AtMinIsr,
}

impl ReportFilter {
    const ALL: [ReportFilter; 4] = [
        ReportFilter::UnderReplicated,
        ReportFilter::Unavailable,
        ReportFilter::UnderMinIsr,
        ReportFilter::AtMinIsr,
    ];

    fn flag(self) -> &'static str {
        match self {
            ReportFilter::UnderReplicated => "under-replicated-partitions",
            ReportFilter::Unavailable => "unavailable-partitions",
            ReportFilter::UnderMinIsr => "under-min-isr-partitions",
            ReportFilter::AtMinIsr => "at-min-isr-partitions",
        }
    }

    /// Whether the filter shows partition `p` (`live`: the brokers that are up; `min_isr`:
    /// the topic's `min.insync.replicas`).
    fn shows(self, p: &PartitionDescription, live: &[i32], min_isr: Option<usize>) -> bool {
        match self {
            ReportFilter::UnderReplicated => p.replicas.len() > p.isr.len(),
            ReportFilter::Unavailable => p.leader.is_none_or(|l| !live.contains(&l)),
            ReportFilter::UnderMinIsr => {
                p.leader.is_none() || min_isr.is_some_and(|min| p.isr.len() < min)
            }
            ReportFilter::AtMinIsr => min_isr == Some(p.isr.len()),
        }
    }
}

/// The one action of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    Create,
    List,
    Describe,
    Alter,
    Delete,
    /// kafkit's own: cut damaged partitions of the embedded log back (see `repair`).
    Repair,
}

impl Action {
    const ALL: [Action; 6] = [
        Action::List,
        Action::Describe,
        Action::Create,
        Action::Alter,
        Action::Delete,
        Action::Repair,
    ];

    fn flag(self) -> &'static str {
        match self {
            Action::Create => "create",
            Action::List => "list",
            Action::Describe => "describe",
            Action::Alter => "alter",
            Action::Delete => "delete",
            Action::Repair => "repair",
        }
    }
}

/// A `kafka-topics` run, as its arguments say.
#[derive(Debug)]
struct TopicsOptions {
    action: Action,
    /// `--topic`: the name to create, or a pattern of names for the other actions.
    topic: Option<String>,
    /// `--topic-id` (describe), unless it is the all-zero id.
    topic_id: Option<String>,
    partitions: Option<i32>,
    replication_factor: Option<i32>,
    replica_assignment: Option<String>,
    /// `--config name=value` entries, as given.
    configs: Vec<String>,
    if_exists: bool,
    if_not_exists: bool,
    exclude_internal: bool,
    topics_with_overrides: bool,
    filters: Vec<ReportFilter>,
    /// `--partition-size-limit-per-response` (Kafka's default 2000).
    page_limit: i32,
    output: OutputFormat,
}

fn flag(name: &'static str, help: &'static str, heading: &'static str) -> Arg {
    crate::cli::flag_option(name, help, heading, ArgAction::SetTrue)
}

fn value(name: &'static str, value_name: &'static str, help: &'static str) -> Arg {
    crate::cli::value_option(name, value_name, help, "Options")
}

/// The clap definition of `kafka-topics`.
pub fn command() -> Command {
    let cmd = Command::new("kafka-topics")
        .about("Create, delete, describe, or change a topic.")
        .arg(flag("create", "Create a new topic.", "Actions"))
        .arg(flag("list", "List all available topics.", "Actions"))
        .arg(flag("describe", "List details for the given topics.", "Actions"))
        .arg(flag("alter", "Alter the number of partitions of a topic.", "Actions"))
        .arg(flag("delete", "Delete a topic.", "Actions"))
        .arg(flag(
            "repair",
            "kafkit only, embedded log only: check every batch of the topic's partitions and cut each back before its first damaged batch or missing segment, setting the rest aside in *.damaged-<ms> files; a partition directory naming another topic id is adopted.",
            "Actions",
        ))
        .arg(value(
            "topic",
            "topic",
            "The topic to create, alter, describe or delete. Except with --create it is a regular expression that must match whole names; commas separate alternatives.",
        ))
        .arg(value("topic-id", "topic-id", "The id of the topic to describe."))
        .arg(
            value("partitions", "Integer: # of partitions", "The number of partitions for the topic being created or altered.")
                .value_parser(clap::value_parser!(i32))
                .allow_negative_numbers(true),
        )
        .arg(
            value("replication-factor", "Integer: replication factor", "The replication factor for each partition (only 1 on the embedded log).")
                .value_parser(clap::value_parser!(i32))
                .allow_negative_numbers(true),
        )
        .arg(value(
            "replica-assignment",
            "broker_id_for_part1_replica1:broker_id_for_part1_replica2, ...",
            "A list of manual partition-to-broker assignments.",
        ))
        .arg(
            value("config", "name=value", "A topic configuration override for the topic being created (repeatable).")
                .action(ArgAction::Append),
        )
        .arg(
            value("delete-config", "name", "Deprecated and ignored since Kafka 4.0.")
                .action(ArgAction::Append),
        )
        .arg(flag("if-exists", "With --alter, --delete or --describe: only act if the topic exists.", "Options"))
        .arg(flag("if-not-exists", "With --create: only create the topic if it does not already exist.", "Options"))
        .arg(flag("exclude-internal", "Exclude internal topics when listing or describing.", "Options"))
        .arg(flag("topics-with-overrides", "With --describe: only show topics that have overridden configs.", "Describe filters"))
        .arg(flag("under-replicated-partitions", "With --describe: only show under-replicated partitions.", "Describe filters"))
        .arg(flag("unavailable-partitions", "With --describe: only show partitions whose leader is not available.", "Describe filters"))
        .arg(flag("under-min-isr-partitions", "With --describe: only show partitions whose isr count is less than the configured minimum.", "Describe filters"))
        .arg(flag("at-min-isr-partitions", "With --describe: only show partitions whose isr count is equal to the configured minimum.", "Describe filters"))
        .arg(
            value("partition-size-limit-per-response", "Integer", "The maximum partition size to be included in one DescribeTopicPartitions response.")
                .value_parser(clap::value_parser!(i32))
                .allow_negative_numbers(true),
        )
        .arg(OutputFormat::arg())
        .arg(
            crate::cli::admin_config_arg("command config property file", "Property file containing configs to be passed to the admin client."),
        );
    connection_args(cmd)
}

/// Entry point of the `kafka-topics` binary.
pub fn main() -> ExitCode {
    run_tool(command(), "Error while executing topic command : ", run)
}

fn run(m: &ArgMatches) -> Result<(), CliError> {
    let opts = TopicsOptions::from_matches(m)?;
    let mut client = open_client(m, super::command_config(m)?.as_ref())?;
    let mut out = std::io::stdout().lock();
    let result = match opts.action {
        Action::Create => create(&mut client, &opts, &mut out),
        Action::List => list(&mut client, &opts, &mut out),
        Action::Describe => describe(&mut client, &opts, &mut out),
        Action::Alter => alter(&mut client, &opts),
        Action::Delete => delete(&mut client, &opts),
        Action::Repair => repair(&mut client, &opts, &mut out),
    };
    out.flush().ok();
    result
}

impl TopicsOptions {
    /// The options of a run, with Kafka's checks (`TopicCommandOptions.checkArgs`) in its
    /// order.
    fn from_matches(m: &ArgMatches) -> Result<TopicsOptions, CliError> {
        let actions: Vec<Action> = Action::ALL
            .into_iter()
            .filter(|a| m.get_flag(a.flag()))
            .collect();
        let [action] = actions[..] else {
            return usage(
                "Command must include exactly one action: --list, --describe, --create, --alter or --delete",
            );
        };
        if m.contains_id("delete-config") {
            eprintln!(
                "delete-config option is no longer supported and deprecated since version 4.0. The config will be fully removed in future releases."
            );
        }
        validate(m, action)?;
        Ok(TopicsOptions {
            action,
            topic: m.get_one::<String>("topic").cloned(),
            topic_id: m
                .get_one::<String>("topic-id")
                .filter(|id| !is_zero_uuid(id))
                .cloned(),
            partitions: m.get_one::<i32>("partitions").copied(),
            replication_factor: m.get_one::<i32>("replication-factor").copied(),
            replica_assignment: m.get_one::<String>("replica-assignment").cloned(),
            configs: m
                .get_many::<String>("config")
                .into_iter()
                .flatten()
                .cloned()
                .collect(),
            if_exists: m.get_flag("if-exists"),
            if_not_exists: m.get_flag("if-not-exists"),
            exclude_internal: m.get_flag("exclude-internal"),
            topics_with_overrides: m.get_flag("topics-with-overrides"),
            filters: ReportFilter::ALL
                .into_iter()
                .filter(|f| m.get_flag(f.flag()))
                .collect(),
            page_limit: m
                .get_one::<i32>("partition-size-limit-per-response")
                .copied()
                .filter(|l| *l > 0)
                .unwrap_or(2000),
            output: OutputFormat::from_matches(m)?,
        })
    }
}

/// Kafka's option checks (`TopicCommandOptions.checkArgs`), in its order.
fn validate(m: &ArgMatches, action: Action) -> Result<(), CliError> {
    let has = |id: &str| m.value_source(id) == Some(ValueSource::CommandLine);
    let name = action.flag();
    if action == Action::Describe && has("if-exists") && !has("topic") && !has("topic-id") {
        return usage("--topic or --topic-id is required to describe a topic");
    }
    if !matches!(action, Action::List | Action::Describe) && !has("topic") {
        return usage("Missing required argument \"[topic]\"");
    }
    if action == Action::Alter && has("config") {
        return usage(
            "Option combination \"[[bootstrap-server], [config]]\" can't be used with option \"[alter]\" (To alter topic configurations, the kafka-configs tool can be used.)",
        );
    }
    if action == Action::Alter && !has("partitions") {
        return usage("Missing required argument \"[partitions]\"");
    }
    let only_with = |opt: &str, allowed: &[Action]| -> Result<(), CliError> {
        if has(opt) && !allowed.contains(&action) {
            return usage(format!(
                "Option \"[{opt}]\" can't be used with option \"[{name}]\""
            ));
        }
        Ok(())
    };
    only_with("config", &[Action::Create, Action::Alter])?;
    only_with("partitions", &[Action::Create, Action::Alter])?;
    only_with("replication-factor", &[Action::Create])?;
    only_with("replica-assignment", &[Action::Create, Action::Alter])?;
    if action == Action::Create && has("replica-assignment") {
        for other in ["partitions", "replication-factor"] {
            if has(other) {
                return usage(format!(
                    "Option \"[replica-assignment]\" can't be used with option \"[{other}]\""
                ));
            }
        }
    }
    for filter in ReportFilter::ALL.map(ReportFilter::flag) {
        only_with(filter, &[Action::Describe])?;
        if has(filter) && has("topics-with-overrides") {
            return usage(format!(
                "Option \"[{filter}]\" can't be used with option \"[topics-with-overrides]\""
            ));
        }
    }
    only_with("topics-with-overrides", &[Action::Describe])?;
    only_with(
        "if-exists",
        &[Action::Alter, Action::Delete, Action::Describe],
    )?;
    only_with("if-not-exists", &[Action::Create])?;
    only_with("exclude-internal", &[Action::List, Action::Describe])?;
    Ok(())
}

/// Kafka's topic selection (an `IncludeList`); its error names the argument as given.
fn topic_pattern(arg: &str) -> Result<TopicPattern, CliError> {
    TopicPattern::include_list(arg)
        .map_err(|(_, why)| CliError::Usage(format!("{arg} is an invalid regex. ({why})")))
}

fn is_zero_uuid(id: &str) -> bool {
    id == "AAAAAAAAAAAAAAAAAAAAAA"
}

/// The topic names an action applies to, sorted: TopicCommand's `getTopics` (internal
/// topics left out under `--exclude-internal`, `--topic` as a pattern of whole names).
fn topic_names(client: &mut Client, opts: &TopicsOptions) -> Result<Vec<String>, CliError> {
    let pattern = opts.topic.as_deref().map(topic_pattern).transpose()?;
    Ok(client
        .list_topics()?
        .into_iter()
        // The cluster's flag is what the admin client's listTopics uses; the name check is
        // TopicCommand's own second filter.
        .filter(|t| !(opts.exclude_internal && (t.internal || topic_name::is_internal(&t.name))))
        .filter(|t| pattern.as_ref().is_none_or(|p| p.is_match(&t.name)))
        .map(|t| t.name)
        .collect())
}

/// [`topic_names`] for an action that needs a match: `Topic 'x' does not exist as expected`
/// when `--topic` matched nothing, unless `--if-exists`.
fn existing_names(client: &mut Client, opts: &TopicsOptions) -> Result<Vec<String>, CliError> {
    let names = topic_names(client, opts)?;
    if let Some(arg) = &opts.topic
        && names.is_empty()
        && !opts.if_exists
    {
        return Err(anyhow!("Topic '{arg}' does not exist as expected").into());
    }
    Ok(names)
}

fn list(client: &mut Client, opts: &TopicsOptions, out: &mut impl Write) -> Result<(), CliError> {
    let names = topic_names(client, opts)?;
    // Text: one line per topic; with none, one empty line, as Java's `String.join` prints.
    write_names(&names, opts.output, out)
}

fn describe(
    client: &mut Client,
    opts: &TopicsOptions,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let topics = match &opts.topic_id {
        // By id: Kafka's tool asks Metadata, which has no ELR (printed `N/A`).
        Some(id) => {
            let found: Vec<_> = client.describe_topic_id(id)?.into_iter().collect();
            if found.is_empty() && !opts.if_exists {
                return Err(anyhow!("TopicId '{id}' does not exist as expected").into());
            }
            found
        }
        // By name: DescribeTopicPartitions, as Kafka's tool does.
        None => {
            let names = existing_names(client, opts)?;
            if names.is_empty() {
                Vec::new()
            } else {
                client.describe_topics(&names, opts.page_limit)?
            }
        }
    };
    if topics.is_empty() {
        return write_describe(&[], opts.output, out);
    }
    let names: Vec<String> = topics.iter().map(|t| t.name.clone()).collect();
    let mut configs: BTreeMap<String, _> = client.describe_configs(&names)?.into_iter().collect();
    let live = if opts.filters.contains(&ReportFilter::Unavailable) {
        client.live_brokers()?
    } else {
        Vec::new()
    };
    let mut views = Vec::new();
    for t in topics {
        let entries = configs.remove(&t.name).unwrap_or_default();
        // Java's tool iterates the answer as a HashMap: in its order, not the broker's.
        let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
        let overrides: Vec<(String, String)> = hash_map_order(&names, Added::Put)
            .into_iter()
            .map(|i| &entries[i])
            .filter(|e| !e.is_default)
            .map(|e| {
                let value = e.value.clone().unwrap_or_else(|| "null".to_string());
                (e.name.clone(), value)
            })
            .collect();
        if opts.topics_with_overrides && overrides.is_empty() {
            continue;
        }
        let min_isr: Option<usize> = entries
            .iter()
            .find(|e| e.name == "min.insync.replicas")
            .and_then(|e| e.value.as_deref()?.trim().parse().ok());
        let shown = |p: &PartitionDescription| {
            opts.filters.is_empty() || opts.filters.iter().any(|f| f.shows(p, &live, min_isr))
        };
        let partitions = if opts.topics_with_overrides {
            Vec::new()
        } else {
            t.partitions.iter().filter(|p| shown(p)).cloned().collect()
        };
        views.push(TopicView {
            partition_count: t.partitions.len(),
            replication_factor: t.partitions.first().map_or(0, |p| p.replicas.len()),
            name: t.name,
            id: t.id,
            configs: overrides,
            summary: opts.filters.is_empty(),
            partitions,
        });
    }
    write_describe(&views, opts.output, out)
}

fn create(client: &mut Client, opts: &TopicsOptions, out: &mut impl Write) -> Result<(), CliError> {
    let name = opts.topic.as_ref().expect("validated");
    if topic_name::has_collision_chars(name) {
        eprintln!(
            "WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could collide. To avoid issues it is best to use either, but not both."
        );
    }
    if let Some(rf) = opts.replication_factor
        && !(1..=i32::from(i16::MAX)).contains(&rf)
    {
        return Err(anyhow!("The replication factor must be between 1 and 32767 inclusive").into());
    }
    if opts.partitions.is_some_and(|p| p < 1) {
        return Err(anyhow!("The partitions must be greater than 0").into());
    }
    let configs = parse_configs(&opts.configs)?;
    let assignments = match &opts.replica_assignment {
        Some(text) => parse_replica_assignment(text)?,
        None => Vec::new(),
    };
    // The backend validates the name, the partition count against its limits and the
    // replication factor against the live brokers, with the messages Kafka's tool prints.
    let topic = NewTopic {
        name: name.clone(),
        partitions: opts.partitions.filter(|_| assignments.is_empty()),
        replication_factor: opts
            .replication_factor
            .filter(|_| assignments.is_empty())
            .and_then(|rf| i16::try_from(rf).ok()),
        assignments,
        configs: configs.into_iter().collect(),
    };
    for (_, outcome) in client.create_topics(std::slice::from_ref(&topic))? {
        match outcome {
            Ok(()) => writeln!(out, "Created topic {name}.").map_err(anyhow::Error::from)?,
            Err(e) if e.kind() == Some(ResponseError::TopicAlreadyExists) && opts.if_not_exists => {
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// `--config` entries, split on `\s*=\s*` and validated as Kafka's tool validates them
/// (the backend checks them again), with Kafka's warnings for duplicate list items.
fn parse_configs(entries: &[String]) -> Result<BTreeMap<String, String>, CliError> {
    let mut configs = BTreeMap::new();
    let split = regex::Regex::new(r"\s*=\s*").expect("valid regex");
    for entry in entries {
        let parts: Vec<&str> = split.split(entry).collect();
        if parts.len() != 2 {
            return Err(anyhow!(
                "requirement failed: Invalid topic config: all configs to be added must be in the format \"key=val\"."
            )
            .into());
        }
        configs.insert(parts[0].trim().to_string(), parts[1].trim().to_string());
    }
    topic_config::validate_all(&configs).map_err(|e| anyhow!(e))?;
    for (name, value) in &configs {
        if let Some(warning) = topic_config::duplicate_warning(name, value) {
            eprintln!("{warning}");
        }
    }
    Ok(configs)
}

/// `--replica-assignment 1:2,2:3`: the replica broker ids of partitions 0, 1, ... with
/// TopicCommand's checks (no duplicates within a partition, one replication factor for all).
fn parse_replica_assignment(text: &str) -> Result<Vec<Vec<i32>>, CliError> {
    let mut out: Vec<Vec<i32>> = Vec::new();
    for (i, part) in text.split(',').enumerate() {
        let ids: Vec<i32> = part
            .split(':')
            .map(|id| {
                id.trim()
                    .parse::<i32>()
                    .map_err(|_| anyhow!("For input string: \"{}\"", id.trim()))
            })
            .collect::<Result<_, _>>()?;
        let mut duplicates: Vec<i32> = ids
            .iter()
            .filter(|id| ids.iter().filter(|other| other == id).count() > 1)
            .copied()
            .collect();
        // Each duplicate once (1:2:1:2 names 1,2), as Kafka does.
        duplicates.sort_unstable();
        duplicates.dedup();
        if !duplicates.is_empty() {
            return Err(anyhow!(
                "Partition replica lists may not contain duplicate entries: {}",
                join(&duplicates, ",")
            )
            .into());
        }
        if let Some(first) = out.first()
            && first.len() != ids.len()
        {
            return Err(anyhow!(
                "Partition {i} has different replication factor: [{}]",
                join(&ids, ", ")
            )
            .into());
        }
        out.push(ids);
    }
    Ok(out)
}

fn join(ids: &[i32], separator: &str) -> String {
    ids.iter()
        .map(i32::to_string)
        .collect::<Vec<_>>()
        .join(separator)
}

fn alter(client: &mut Client, opts: &TopicsOptions) -> Result<(), CliError> {
    let count = opts.partitions.expect("validated");
    let names = existing_names(client, opts)?;
    if names.is_empty() {
        return Ok(());
    }
    let increases: Vec<PartitionIncrease> = match &opts.replica_assignment {
        // The entries from the current partition count onward place the new partitions.
        Some(text) => {
            let assignment = parse_replica_assignment(text)?;
            client
                .describe_topics(&names, opts.page_limit)?
                .into_iter()
                .map(|t| PartitionIncrease {
                    assignments: Some(
                        assignment
                            .iter()
                            .skip(t.partitions.len())
                            .cloned()
                            .collect(),
                    ),
                    name: t.name,
                    count,
                })
                .collect()
        }
        None => names
            .into_iter()
            .map(|name| PartitionIncrease {
                name,
                count,
                assignments: None,
            })
            .collect(),
    };
    // Like the admin client's `all().get()`: the first failure is the command's error.
    for (_, outcome) in client.create_partitions(&increases)? {
        outcome?;
    }
    Ok(())
}

fn delete(client: &mut Client, opts: &TopicsOptions) -> Result<(), CliError> {
    let names = existing_names(client, opts)?;
    if let Some(internal) = names.iter().find(|n| topic_name::is_internal(n)) {
        return Err(anyhow!(
            "Topic {internal} is a kafka internal topic and is not allowed to be marked for deletion."
        )
        .into());
    }
    if names.is_empty() {
        return Ok(());
    }
    // Like the admin client's `all().get()`: the first failure is the command's error. A
    // topic deleted meanwhile by someone else is gone, as asked.
    for (_, outcome) in client.delete_topics(&names)? {
        match outcome {
            Err(e) if e.kind() != Some(ResponseError::UnknownTopicOrPartition) => {
                return Err(e.into());
            }
            _ => {}
        }
    }
    Ok(())
}

/// Repairs each topic `--topic` matches (the action names no topic it did not find).
fn repair(client: &mut Client, opts: &TopicsOptions, out: &mut impl Write) -> Result<(), CliError> {
    for name in existing_names(client, opts)? {
        let repairs = client.repair_topic(&name)?;
        repair::write_repairs(&name, &repairs, opts.output, out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replica_assignment() {
        assert_eq!(
            parse_replica_assignment("1:2, 2 :3,3:1").ok(),
            Some(vec![vec![1, 2], vec![2, 3], vec![3, 1]])
        );
        let err = |text| match parse_replica_assignment(text) {
            Err(CliError::Runtime(e)) => e.to_string(),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            err("1:1:2"),
            "Partition replica lists may not contain duplicate entries: 1"
        );
        assert_eq!(
            err("1:2:1:2"),
            "Partition replica lists may not contain duplicate entries: 1,2"
        );
        assert_eq!(
            err("1:2,3"),
            "Partition 1 has different replication factor: [3]"
        );
        assert_eq!(err("1:x"), "For input string: \"x\"");
    }
}
