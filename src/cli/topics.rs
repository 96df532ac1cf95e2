//! `kafka-topics`: create, list, describe, alter and delete topics (Kafka's `TopicCommand`).

use std::collections::BTreeMap;
use std::io::Write;
use std::process::ExitCode;

use anyhow::anyhow;
use clap::{Arg, ArgAction, ArgMatches, Command};
use regex::Regex;

mod remote;

use super::{
    CliError, OutputFormat, connection_args, new_table, open_backend, properties, run_tool, usage,
};
use crate::backend::Backend;
use crate::local::logdir::LOCAL_NODE_ID;
use crate::local::{LocalError, LogDir, TopicMeta, topic_config, topic_name};

const ACTIONS: [&str; 5] = ["list", "describe", "create", "alter", "delete"];
const REPORT_FILTERS: [&str; 4] = [
    "under-replicated-partitions",
    "unavailable-partitions",
    "under-min-isr-partitions",
    "at-min-isr-partitions",
];

fn flag(name: &'static str, help: &'static str, heading: &'static str) -> Arg {
    Arg::new(name)
        .long(name)
        .action(ArgAction::SetTrue)
        .help(help)
        .help_heading(heading)
}

fn value(name: &'static str, value_name: &'static str, help: &'static str) -> Arg {
    Arg::new(name)
        .long(name)
        .value_name(value_name)
        .help(help)
        .help_heading("Options")
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
        .arg(value(
            "topic",
            "topic",
            "The topic to create, alter, describe or delete. Except with --create it is a regular expression that must match whole names; commas separate alternatives.",
        ))
        .arg(value("topic-id", "topic-id", "The id of the topic to describe."))
        .arg(
            value("partitions", "Integer: # of partitions", "The number of partitions for the topic being created or altered.")
                .value_parser(clap::value_parser!(i32)),
        )
        .arg(
            value("replication-factor", "Integer: replication factor", "The replication factor for each partition (only 1 on the embedded log).")
                .value_parser(clap::value_parser!(i32)),
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
                .value_parser(clap::value_parser!(i32)),
        )
        .arg(OutputFormat::arg())
        .arg(
            Arg::new("command-config")
                .long("command-config")
                .value_name("command config property file")
                .help("Property file containing configs to be passed to the admin client.")
                .help_heading("Connection"),
        );
    connection_args(cmd)
}

/// Entry point of the `kafka-topics` binary.
pub fn main() -> ExitCode {
    run_tool(command(), "Error while executing topic command : ", run)
}

fn run(m: &ArgMatches) -> Result<(), CliError> {
    let actions: Vec<&str> = ACTIONS.into_iter().filter(|a| m.get_flag(a)).collect();
    if actions.len() != 1 {
        return usage(
            "Command must include exactly one action: --list, --describe, --create, --alter or --delete",
        );
    }
    let action = actions[0];
    if m.contains_id("delete-config") {
        eprintln!(
            "delete-config option is no longer supported and deprecated since version 4.0. The config will be fully removed in future releases."
        );
    }
    validate(m, action)?;
    let command_config = match m.get_one::<String>("command-config") {
        Some(path) => Some(properties::load_file(path.as_ref())?),
        None => None,
    };
    let backend = open_backend(m, command_config.as_ref())?;
    let mut out = std::io::stdout().lock();
    let result = match backend {
        Backend::Local(dir) => match action {
            "create" => create(&dir, m, &mut out),
            "list" => list(&dir, m, &mut out),
            "describe" => describe(&dir, m, &mut out),
            "alter" => alter(&dir, m),
            _ => delete(&dir, m),
        },
        Backend::Remote(mut cluster) => remote::run(&mut cluster, action, m, &mut out),
    };
    out.flush().ok();
    result
}

/// Kafka's option checks (`TopicCommandOptions.checkArgs`), in its order.
fn validate(m: &ArgMatches, action: &str) -> Result<(), CliError> {
    let has = |id: &str| m.value_source(id) == Some(clap::parser::ValueSource::CommandLine);
    if action == "describe" && has("if-exists") && !has("topic") && !has("topic-id") {
        return usage("--topic or --topic-id is required to describe a topic");
    }
    if action != "list" && action != "describe" && !has("topic") {
        return usage("Missing required argument \"[topic]\"");
    }
    if action == "alter" && has("config") {
        return usage(
            "Option combination \"[[bootstrap-server], [config]]\" can't be used with option \"[alter]\" (To alter topic configurations, the kafka-configs tool can be used.)",
        );
    }
    if action == "alter" && !has("partitions") {
        return usage("Missing required argument \"[partitions]\"");
    }
    let only_with = |opt: &str, allowed: &[&str]| -> Result<(), CliError> {
        if has(opt) && !allowed.contains(&action) {
            return usage(format!(
                "Option \"[{opt}]\" can't be used with option \"[{action}]\""
            ));
        }
        Ok(())
    };
    only_with("config", &["create", "alter"])?;
    only_with("partitions", &["create", "alter"])?;
    only_with("replication-factor", &["create"])?;
    only_with("replica-assignment", &["create", "alter"])?;
    if action == "create" && has("replica-assignment") {
        for other in ["partitions", "replication-factor"] {
            if has(other) {
                return usage(format!(
                    "Option \"[replica-assignment]\" can't be used with option \"[{other}]\""
                ));
            }
        }
    }
    for filter in REPORT_FILTERS {
        only_with(filter, &["describe"])?;
        if has(filter) && has("topics-with-overrides") {
            return usage(format!(
                "Option \"[{filter}]\" can't be used with option \"[topics-with-overrides]\""
            ));
        }
    }
    only_with("topics-with-overrides", &["describe"])?;
    only_with("if-exists", &["alter", "delete", "describe"])?;
    only_with("if-not-exists", &["create"])?;
    only_with("exclude-internal", &["list", "describe"])?;
    Ok(())
}

/// Kafka's topic selection: trimmed, `,` becomes `|`, spaces and surrounding quotes removed,
/// matched against whole names.
fn topic_pattern(arg: &str) -> Result<Regex, CliError> {
    let cleaned: String = arg.trim().replace(',', "|").replace(' ', "");
    let cleaned = cleaned.trim_matches(|c| c == '"' || c == '\'');
    Regex::new(&format!("^(?:{cleaned})$")).map_err(|e| {
        CliError::Usage(format!(
            "--topic '{arg}' is not a valid regular expression: {}",
            e.to_string().lines().last().unwrap_or("")
        ))
    })
}

/// The topics an action applies to, sorted; `Topic 'x' does not exist as expected` when a
/// named topic matches nothing (unless `--if-exists`).
fn matching_topics(dir: &LogDir, m: &ArgMatches) -> Result<Vec<TopicMeta>, CliError> {
    let exclude_internal = m.get_flag("exclude-internal");
    let mut names = dir.topic_names()?;
    names.retain(|n| !(exclude_internal && topic_name::is_internal(n)));
    let mut topics = Vec::new();
    if let Some(id) = m
        .get_one::<String>("topic-id")
        .filter(|id| !is_zero_uuid(id))
    {
        for name in names {
            if let Some(meta) = dir.topic(&name)?.filter(|t| &t.id == id) {
                topics.push(meta);
            }
        }
        if topics.is_empty() && !m.get_flag("if-exists") {
            return Err(anyhow!("TopicId '{id}' does not exist as expected").into());
        }
        return Ok(topics);
    }
    let arg = m.get_one::<String>("topic");
    let pattern = arg.map(|a| topic_pattern(a)).transpose()?;
    for name in names {
        if pattern.as_ref().is_none_or(|p| p.is_match(&name))
            && let Some(meta) = dir.topic(&name)?
        {
            topics.push(meta);
        }
    }
    if let Some(arg) = arg
        && topics.is_empty()
        && !m.get_flag("if-exists")
    {
        return Err(LocalError::UnknownTopic(arg.clone()).into());
    }
    Ok(topics)
}

fn is_zero_uuid(id: &str) -> bool {
    id == "AAAAAAAAAAAAAAAAAAAAAA"
}

fn create(dir: &LogDir, m: &ArgMatches, out: &mut impl Write) -> Result<(), CliError> {
    let name = m.get_one::<String>("topic").expect("validated");
    let if_not_exists = m.get_flag("if-not-exists");
    if topic_name::has_collision_chars(name) {
        eprintln!(
            "WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could collide. To avoid issues it is best to use either, but not both."
        );
    }
    if let Some(rf) = m.get_one::<i32>("replication-factor")
        && !(1..=32767).contains(rf)
    {
        return Err(anyhow!("The replication factor must be between 1 and 32767 inclusive").into());
    }
    if let Some(p) = m.get_one::<i32>("partitions")
        && *p < 1
    {
        return Err(anyhow!("The partitions must be greater than 0").into());
    }
    let configs = local_configs(m)?;
    let partitions = match m.get_one::<String>("replica-assignment") {
        Some(text) => parse_replica_assignment(text)?,
        None => match m.get_one::<i32>("partitions") {
            Some(p) => *p as u32,
            None => dir.default_partitions()?,
        },
    };
    if let Some(rf) = m.get_one::<i32>("replication-factor").filter(|rf| **rf > 1) {
        return Err(anyhow!(
            "Unable to replicate the partition {rf} time(s): The target replication factor of {rf} cannot be reached because only 1 broker(s) are registered or some brokers have all their log directories cordoned."
        )
        .into());
    }
    topic_name::validate(name).map_err(|e| anyhow!("Topic name is invalid: {e}"))?;
    match dir.create_topic(name, partitions, configs) {
        Ok(_) => {
            writeln!(out, "Created topic {name}.").map_err(anyhow::Error::from)?;
            Ok(())
        }
        Err(LocalError::TopicExists(_)) if if_not_exists => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// `--config` entries, split on `\s*=\s*` and validated as Kafka's tool validates them
/// (a cluster's broker checks them again), with Kafka's warnings for duplicate list items.
pub(crate) fn parse_configs(m: &ArgMatches) -> Result<BTreeMap<String, String>, CliError> {
    let mut configs = BTreeMap::new();
    let split = Regex::new(r"\s*=\s*").expect("valid regex");
    for entry in m.get_many::<String>("config").into_iter().flatten() {
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

/// [`parse_configs`] for the embedded log, which cannot compact yet.
fn local_configs(m: &ArgMatches) -> Result<BTreeMap<String, String>, CliError> {
    let configs = parse_configs(m)?;
    if let Some(policy) = configs.get("cleanup.policy")
        && policy.split(',').any(|p| p.trim() == "compact")
    {
        return Err(anyhow!(
            "cleanup.policy={policy}: compaction is not yet supported on the embedded log; use cleanup.policy=delete, or a Kafka cluster"
        )
        .into());
    }
    Ok(configs)
}

/// `--replica-assignment` on the embedded log: one replica per partition, on broker 0.
fn parse_replica_assignment(text: &str) -> Result<u32, CliError> {
    let mut count = 0u32;
    for (i, part) in text.split(',').enumerate() {
        let ids: Vec<i32> = part
            .split(':')
            .map(|id| {
                id.trim()
                    .parse::<i32>()
                    .map_err(|_| anyhow!("For input string: \"{}\"", id.trim()))
            })
            .collect::<Result<_, _>>()?;
        let mut seen = ids.clone();
        seen.sort();
        seen.dedup();
        if seen.len() != ids.len() {
            return Err(anyhow!(
                "Partition replica lists may not contain duplicate entries: {}",
                ids.iter().map(i32::to_string).collect::<Vec<_>>().join(",")
            )
            .into());
        }
        if ids != [LOCAL_NODE_ID] {
            return Err(anyhow!(
                "partition {i} is assigned to brokers {part}, but the embedded log has a single broker {LOCAL_NODE_ID}; use {LOCAL_NODE_ID} for every partition"
            )
            .into());
        }
        count += 1;
    }
    Ok(count)
}

fn list(dir: &LogDir, m: &ArgMatches, out: &mut impl Write) -> Result<(), CliError> {
    let mut names = dir.topic_names()?;
    if m.get_flag("exclude-internal") {
        names.retain(|n| !topic_name::is_internal(n));
    }
    if let Some(arg) = m.get_one::<String>("topic") {
        let pattern = topic_pattern(arg)?;
        names.retain(|n| pattern.is_match(n));
    }
    write_names(&names, OutputFormat::from_matches(m)?, out)
}

/// Prints a topic list in the chosen format (Kafka's text: one name per line).
pub(crate) fn write_names(
    names: &[String],
    format: OutputFormat,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let text = match format {
        OutputFormat::Text => format!("{}\n", names.join("\n")),
        OutputFormat::Json => format!("{}\n", serde_json::json!({ "topics": names })),
        OutputFormat::Table => {
            let mut table = new_table(&["TOPIC"]);
            for n in names {
                table.add_row(vec![n]);
            }
            format!("{table}\n")
        }
    };
    out.write_all(text.as_bytes())
        .map_err(anyhow::Error::from)?;
    Ok(())
}

/// What `--describe` shows of one topic after the filters, whichever the backend.
pub(crate) struct TopicView {
    pub name: String,
    /// 22-character URL-safe base64; the all-zero id is not printed, as Kafka does.
    pub id: String,
    pub partition_count: usize,
    pub replication_factor: usize,
    /// Non-default config entries, in the order the backend gave them.
    pub configs: Vec<(String, String)>,
    /// The summary line (no partition filter given).
    pub summary: bool,
    pub partitions: Vec<PartitionView>,
}

/// One partition line of `--describe`.
pub(crate) struct PartitionView {
    pub partition: i32,
    /// `None` when the partition has no leader.
    pub leader: Option<i32>,
    pub replicas: Vec<i32>,
    pub isr: Vec<i32>,
    /// `None` when the backend cannot tell (Metadata fallback): printed `N/A`.
    pub elr: Option<Vec<i32>>,
    pub last_known_elr: Option<Vec<i32>>,
}

fn describe(dir: &LogDir, m: &ArgMatches, out: &mut impl Write) -> Result<(), CliError> {
    let format = OutputFormat::from_matches(m)?;
    let topics = matching_topics(dir, m)?;
    for t in &topics {
        dir.apply_retention(t)?;
    }
    let filters: Vec<&str> = REPORT_FILTERS
        .into_iter()
        .filter(|f| m.get_flag(f))
        .collect();
    let overrides_only = m.get_flag("topics-with-overrides");
    let mut views = Vec::new();
    for t in &topics {
        if overrides_only && t.configs.is_empty() {
            continue;
        }
        let min_isr = topic_config::effective_i64(&t.configs, "min.insync.replicas");
        // Every local partition has its leader and one in-sync replica.
        let isr = 1;
        let shown = !overrides_only
            && (filters.is_empty()
                || filters.iter().any(|f| match *f {
                    "under-min-isr-partitions" => isr < min_isr,
                    "at-min-isr-partitions" => isr == min_isr,
                    _ => false,
                }));
        let partitions = if shown { t.partitions } else { 0 };
        views.push(TopicView {
            name: t.name.clone(),
            id: t.id.clone(),
            partition_count: t.partitions as usize,
            replication_factor: 1,
            configs: t
                .configs
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            summary: filters.is_empty(),
            partitions: (0..partitions as i32)
                .map(|p| PartitionView {
                    partition: p,
                    leader: Some(LOCAL_NODE_ID),
                    replicas: vec![LOCAL_NODE_ID],
                    isr: vec![LOCAL_NODE_ID],
                    elr: Some(Vec::new()),
                    last_known_elr: Some(Vec::new()),
                })
                .collect(),
        });
    }
    write_describe(&views, format, out)
}

/// Prints `--describe` results in the chosen format.
pub(crate) fn write_describe(
    views: &[TopicView],
    format: OutputFormat,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let text = match format {
        OutputFormat::Text => describe_text(views),
        OutputFormat::Json => format!("{}\n", describe_json(views)),
        OutputFormat::Table => describe_table(views),
    };
    out.write_all(text.as_bytes())
        .map_err(anyhow::Error::from)?;
    Ok(())
}

fn join_ids(ids: &[i32]) -> String {
    ids.iter().map(i32::to_string).collect::<Vec<_>>().join(",")
}

fn join_configs(configs: &[(String, String)]) -> String {
    configs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Kafka's describe text: a summary line per topic, then a line per partition.
fn describe_text(views: &[TopicView]) -> String {
    let mut text = String::new();
    for v in views {
        if v.summary {
            text.push_str(&format!("Topic: {}", v.name));
            if !is_zero_uuid(&v.id) {
                text.push_str(&format!("\tTopicId: {}", v.id));
            }
            text.push_str(&format!(
                "\tPartitionCount: {}\tReplicationFactor: {}\tConfigs: {}\n",
                v.partition_count,
                v.replication_factor,
                join_configs(&v.configs)
            ));
        }
        let elr = |ids: &Option<Vec<i32>>| match ids {
            Some(ids) => join_ids(ids),
            None => "N/A".to_string(),
        };
        for p in &v.partitions {
            text.push_str(&format!(
                "\tTopic: {}\tPartition: {}\tLeader: {}\tReplicas: {}\tIsr: {}\tElr: {}\tLastKnownElr: {}\n",
                v.name,
                p.partition,
                p.leader.map_or("none".to_string(), |l| l.to_string()),
                join_ids(&p.replicas),
                join_ids(&p.isr),
                elr(&p.elr),
                elr(&p.last_known_elr),
            ));
        }
    }
    text
}

/// `--output json`: `{"topics":[{name, topicId, partitionCount, replicationFactor, configs,
/// partitions:[{partition, leader, replicas, isr, elr, lastKnownElr}]}]}`; an unknown leader or
/// ELR is `null`.
fn describe_json(views: &[TopicView]) -> serde_json::Value {
    let topics: Vec<serde_json::Value> = views
        .iter()
        .map(|v| {
            let partitions: Vec<serde_json::Value> = v
                .partitions
                .iter()
                .map(|p| {
                    serde_json::json!({
                        "partition": p.partition,
                        "leader": p.leader,
                        "replicas": p.replicas,
                        "isr": p.isr,
                        "elr": p.elr,
                        "lastKnownElr": p.last_known_elr,
                    })
                })
                .collect();
            let configs: serde_json::Map<String, serde_json::Value> = v
                .configs
                .iter()
                .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
                .collect();
            serde_json::json!({
                "name": v.name,
                "topicId": v.id,
                "partitionCount": v.partition_count,
                "replicationFactor": v.replication_factor,
                "configs": configs,
                "partitions": partitions,
            })
        })
        .collect();
    serde_json::json!({ "topics": topics })
}

/// `--output table`: one row per partition, with the topic's settings.
fn describe_table(views: &[TopicView]) -> String {
    let mut table = new_table(&[
        "TOPIC",
        "PARTITIONS",
        "CONFIGS",
        "PARTITION",
        "LEADER",
        "REPLICAS",
        "ISR",
    ]);
    for v in views {
        let configs = join_configs(&v.configs);
        if v.partitions.is_empty() {
            table.add_row(vec![
                v.name.clone(),
                v.partition_count.to_string(),
                configs.clone(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
            ]);
        }
        for (i, p) in v.partitions.iter().enumerate() {
            let first = i == 0;
            let only_first = |s: String| if first { s } else { String::new() };
            table.add_row(vec![
                only_first(v.name.clone()),
                only_first(v.partition_count.to_string()),
                only_first(configs.clone()),
                p.partition.to_string(),
                p.leader.map_or("none".to_string(), |l| l.to_string()),
                join_ids(&p.replicas),
                join_ids(&p.isr),
            ]);
        }
    }
    format!("{table}\n")
}

fn alter(dir: &LogDir, m: &ArgMatches) -> Result<(), CliError> {
    let count = *m.get_one::<i32>("partitions").expect("validated");
    if count < 1 {
        return Err(anyhow!("The partitions must be greater than 0").into());
    }
    for t in matching_topics(dir, m)? {
        if let Some(text) = m.get_one::<String>("replica-assignment") {
            let given = parse_replica_assignment(text)?;
            let added = (count as u32).saturating_sub(t.partitions);
            if given < count as u32 && given < added {
                return Err(anyhow!(
                    "Attempted to add {added} additional partition(s), but only {given} assignment(s) were specified."
                )
                .into());
            }
        }
        dir.add_partitions(&t.name, count as u32)?;
    }
    Ok(())
}

fn delete(dir: &LogDir, m: &ArgMatches) -> Result<(), CliError> {
    for t in matching_topics(dir, m)? {
        if topic_name::is_internal(&t.name) {
            return Err(anyhow!(
                "Topic {} is a kafka internal topic and is not allowed to be marked for deletion.",
                t.name
            )
            .into());
        }
        match dir.delete_topic(&t.name) {
            Ok(()) | Err(LocalError::UnknownTopic(_)) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}
