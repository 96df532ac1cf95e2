//! `kafka-topics` against a Kafka cluster: list, create, describe, alter and delete through
//! Metadata, CreateTopics, DescribeTopicPartitions, DescribeConfigs, DescribeCluster,
//! CreatePartitions and DeleteTopics, with `TopicCommand`'s checks, output and messages.

use std::collections::BTreeMap;
use std::io::Write;

use anyhow::anyhow;
use clap::ArgMatches;

use super::{PartitionView, REPORT_FILTERS, TopicView, topic_pattern, write_describe};
use crate::cli::{CliError, OutputFormat};
use crate::local::topic_name;
use crate::remote::{Cluster, NewTopic, PartitionIncrease, PartitionInfo, RemoteError, TopicInfo};

/// TOPIC_ALREADY_EXISTS: ignored with `--if-not-exists`, as TopicCommand ignores it.
const TOPIC_ALREADY_EXISTS: i16 = 36;

/// Runs one `kafka-topics` action on the cluster.
pub(super) fn run(
    cluster: &mut Cluster,
    action: &str,
    m: &ArgMatches,
    out: &mut impl Write,
) -> Result<(), CliError> {
    match action {
        "list" => list(cluster, m, out),
        "create" => create(cluster, m, out),
        "delete" => delete(cluster, m),
        "describe" => describe(cluster, m, out),
        "alter" => alter(cluster, m),
        // The actions come from ACTIONS, all matched above.
        other => Err(anyhow::anyhow!("unknown kafka-topics action --{other}").into()),
    }
}

/// The cluster's topic names, sorted, without internal ones under `--exclude-internal`, matching
/// `--topic` when given: TopicCommand's `getTopics`.
fn topic_names(cluster: &mut Cluster, m: &ArgMatches) -> Result<Vec<String>, CliError> {
    Ok(matching_topics(cluster, m)?
        .into_iter()
        .map(|t| t.name)
        .collect())
}

/// The topics `topic_names` selects, with what Metadata says of them.
fn matching_topics(cluster: &mut Cluster, m: &ArgMatches) -> Result<Vec<TopicInfo>, CliError> {
    let exclude_internal = m.get_flag("exclude-internal");
    let pattern = m
        .get_one::<String>("topic")
        .map(|arg| topic_pattern(arg))
        .transpose()?;
    let metadata = cluster.metadata(None).map_err(anyhow::Error::from)?;
    Ok(metadata
        .topics
        .into_iter()
        // The broker's flag is what the admin client's listTopics uses; the name check is
        // TopicCommand's own second filter.
        .filter(|t| !(exclude_internal && (t.internal || topic_name::is_internal(&t.name))))
        .filter(|t| pattern.as_ref().is_none_or(|p| p.is_match(&t.name)))
        .collect())
}

/// `Topic 'x' does not exist as expected` when `--topic` matched nothing, unless `--if-exists`.
fn ensure_found(names: &[String], m: &ArgMatches) -> Result<(), CliError> {
    if let Some(arg) = m.get_one::<String>("topic")
        && names.is_empty()
        && !m.get_flag("if-exists")
    {
        return Err(anyhow!("Topic '{arg}' does not exist as expected").into());
    }
    Ok(())
}

/// The page size of DescribeTopicPartitions (`--partition-size-limit-per-response`, Kafka's
/// default 2000).
fn page_limit(m: &ArgMatches) -> i32 {
    m.get_one::<i32>("partition-size-limit-per-response")
        .copied()
        .filter(|l| *l > 0)
        .unwrap_or(2000)
}

fn describe(cluster: &mut Cluster, m: &ArgMatches, out: &mut impl Write) -> Result<(), CliError> {
    let format = OutputFormat::from_matches(m)?;
    let (names, topics) = match m
        .get_one::<String>("topic-id")
        .filter(|id| !super::is_zero_uuid(id))
    {
        // By id: Kafka's tool asks Metadata, which has no ELR (printed `N/A`).
        Some(id) => {
            let all = cluster.metadata(None).map_err(anyhow::Error::from)?;
            let topics: Vec<TopicInfo> = all.topics.into_iter().filter(|t| &t.id == id).collect();
            if topics.is_empty() && !m.get_flag("if-exists") {
                return Err(anyhow!("TopicId '{id}' does not exist as expected").into());
            }
            let names: Vec<String> = topics.iter().map(|t| t.name.clone()).collect();
            (names, topics)
        }
        // By name: DescribeTopicPartitions, as Kafka's tool does.
        None => {
            let names = topic_names(cluster, m)?;
            ensure_found(&names, m)?;
            if names.is_empty() {
                return write_describe(&[], format, out);
            }
            let topics = cluster
                .describe_topics(&names, page_limit(m))
                .map_err(anyhow::Error::from)?;
            (names, topics)
        }
    };
    if names.is_empty() {
        return write_describe(&[], format, out);
    }
    // Like the admin client's `allTopicNames().get()`: the first failure is the command's error.
    for t in &topics {
        if t.error_code != 0 {
            return Err(anyhow::Error::from(RemoteError::broker(t.error_code, None)).into());
        }
    }
    let mut configs = BTreeMap::new();
    for (name, entries) in cluster
        .describe_configs(&names)
        .map_err(anyhow::Error::from)?
    {
        configs.insert(name, entries.map_err(anyhow::Error::from)?);
    }
    let filters: Vec<&str> = REPORT_FILTERS
        .into_iter()
        .filter(|f| m.get_flag(f))
        .collect();
    let live = if filters.contains(&"unavailable-partitions") {
        cluster.live_brokers().map_err(anyhow::Error::from)?
    } else {
        Vec::new()
    };
    let overrides_only = m.get_flag("topics-with-overrides");
    let mut views = Vec::new();
    for t in topics {
        let entries = configs.remove(&t.name).unwrap_or_default();
        let overrides: Vec<(String, String)> = entries
            .iter()
            .filter(|e| !e.is_default)
            .map(|e| {
                let value = e.value.clone().unwrap_or_else(|| "null".to_string());
                (e.name.clone(), value)
            })
            .collect();
        if overrides_only && overrides.is_empty() {
            continue;
        }
        let min_isr: Option<usize> = entries
            .iter()
            .find(|e| e.name == "min.insync.replicas")
            .and_then(|e| e.value.as_deref()?.trim().parse().ok());
        let shown = |p: &PartitionInfo| {
            let leader = (p.leader >= 0).then_some(p.leader);
            filters.is_empty()
                || filters.iter().any(|f| match *f {
                    "under-replicated-partitions" => p.replicas.len() > p.isr.len(),
                    "unavailable-partitions" => leader.is_none_or(|l| !live.contains(&l)),
                    "under-min-isr-partitions" => {
                        leader.is_none() || min_isr.is_some_and(|min| p.isr.len() < min)
                    }
                    "at-min-isr-partitions" => min_isr == Some(p.isr.len()),
                    _ => false,
                })
        };
        let partitions = if overrides_only {
            Vec::new()
        } else {
            t.partitions
                .iter()
                .filter(|p| shown(p))
                .map(|p| PartitionView {
                    partition: p.partition,
                    leader: (p.leader >= 0).then_some(p.leader),
                    replicas: p.replicas.clone(),
                    isr: p.isr.clone(),
                    elr: p.elr.clone(),
                    last_known_elr: p.last_known_elr.clone(),
                })
                .collect()
        };
        views.push(TopicView {
            partition_count: t.partitions.len(),
            replication_factor: t.partitions.first().map_or(0, |p| p.replicas.len()),
            name: t.name,
            id: t.id,
            configs: overrides,
            summary: filters.is_empty(),
            partitions,
        });
    }
    write_describe(&views, format, out)
}

fn alter(cluster: &mut Cluster, m: &ArgMatches) -> Result<(), CliError> {
    let count = *m.get_one::<i32>("partitions").expect("validated");
    let names = topic_names(cluster, m)?;
    ensure_found(&names, m)?;
    if names.is_empty() {
        return Ok(());
    }
    let assignment = m
        .get_one::<String>("replica-assignment")
        .map(|text| parse_replica_assignment(text))
        .transpose()?;
    let mut increases = Vec::new();
    match assignment {
        // The entries from the current partition count onward place the new partitions.
        Some(assignment) => {
            let topics = cluster
                .describe_topics(&names, page_limit(m))
                .map_err(anyhow::Error::from)?;
            for t in topics {
                if t.error_code != 0 {
                    return Err(anyhow::Error::from(RemoteError::broker(t.error_code, None)).into());
                }
                increases.push(PartitionIncrease {
                    assignments: Some(
                        assignment
                            .iter()
                            .skip(t.partitions.len())
                            .cloned()
                            .collect(),
                    ),
                    name: t.name,
                    count,
                });
            }
        }
        None => {
            increases = names
                .into_iter()
                .map(|name| PartitionIncrease {
                    name,
                    count,
                    assignments: None,
                })
                .collect();
        }
    }
    // Like the admin client's `all().get()`: the first failure is the command's error.
    for (_, outcome) in cluster
        .create_partitions(&increases)
        .map_err(anyhow::Error::from)?
    {
        outcome.map_err(anyhow::Error::from)?;
    }
    Ok(())
}

fn list(cluster: &mut Cluster, m: &ArgMatches, out: &mut impl Write) -> Result<(), CliError> {
    let names = topic_names(cluster, m)?;
    // Text: one line per topic; with none, one empty line, as Java's `String.join` prints.
    super::write_names(&names, crate::cli::OutputFormat::from_matches(m)?, out)
}

fn create(cluster: &mut Cluster, m: &ArgMatches, out: &mut impl Write) -> Result<(), CliError> {
    let name = m.get_one::<String>("topic").expect("validated");
    if topic_name::has_collision_chars(name) {
        eprintln!(
            "WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could collide. To avoid issues it is best to use either, but not both."
        );
    }
    let replication_factor = m.get_one::<i32>("replication-factor").copied();
    if let Some(rf) = replication_factor
        && !(1..=i32::from(i16::MAX)).contains(&rf)
    {
        return Err(anyhow!("The replication factor must be between 1 and 32767 inclusive").into());
    }
    let partitions = m.get_one::<i32>("partitions").copied();
    if partitions.is_some_and(|p| p < 1) {
        return Err(anyhow!("The partitions must be greater than 0").into());
    }
    let configs = super::parse_configs(m)?;
    let assignments = match m.get_one::<String>("replica-assignment") {
        Some(text) => parse_replica_assignment(text)?,
        None => Vec::new(),
    };
    // The broker validates the name, the partition count against its limits and the replication
    // factor against the live brokers; its messages are the ones Kafka's tool prints.
    let topic = NewTopic {
        name: name.clone(),
        partitions: if assignments.is_empty() {
            partitions
        } else {
            None
        },
        replication_factor: replication_factor
            .filter(|_| assignments.is_empty())
            .and_then(|rf| i16::try_from(rf).ok()),
        assignments,
        configs: configs.into_iter().collect(),
    };
    let outcomes = cluster
        .create_topics(std::slice::from_ref(&topic))
        .map_err(anyhow::Error::from)?;
    for (_, outcome) in outcomes {
        match outcome {
            Ok(()) => {
                writeln!(out, "Created topic {name}.").map_err(anyhow::Error::from)?;
            }
            Err(e) if e.code() == Some(TOPIC_ALREADY_EXISTS) && m.get_flag("if-not-exists") => {}
            Err(e) => return Err(anyhow::Error::from(e).into()),
        }
    }
    Ok(())
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
                duplicates
                    .iter()
                    .map(i32::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            )
            .into());
        }
        if let Some(first) = out.first()
            && first.len() != ids.len()
        {
            return Err(anyhow!(
                "Partition {i} has different replication factor: [{}]",
                ids.iter()
                    .map(i32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
            .into());
        }
        out.push(ids);
    }
    Ok(out)
}

fn delete(cluster: &mut Cluster, m: &ArgMatches) -> Result<(), CliError> {
    let names = topic_names(cluster, m)?;
    if names.is_empty() && !m.get_flag("if-exists") {
        let arg = m.get_one::<String>("topic").expect("validated");
        return Err(anyhow!("Topic '{arg}' does not exist as expected").into());
    }
    if names.is_empty() {
        return Ok(());
    }
    // Like the admin client's `all().get()`: the first failure is the command's error.
    for (_, outcome) in cluster.delete_topics(&names).map_err(anyhow::Error::from)? {
        outcome.map_err(anyhow::Error::from)?;
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
            err("1:2,3"),
            "Partition 1 has different replication factor: [3]"
        );
        assert_eq!(err("1:x"), "For input string: \"x\"");
    }
}
