//! `kafka-topics` against a Kafka cluster: list, create and delete through Metadata,
//! CreateTopics and DeleteTopics, with `TopicCommand`'s checks, output and messages.
//! Describe and alter are not wired to the cluster yet and say so.

use std::collections::BTreeMap;
use std::io::Write;

use anyhow::anyhow;
use clap::ArgMatches;
use regex::Regex;

use super::topic_pattern;
use crate::backend::BackendError;
use crate::cli::CliError;
use crate::local::{topic_config, topic_name};
use crate::remote::{Cluster, NewTopic};

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
        other => Err(BackendError::RemoteUnsupported(format!("kafka-topics --{other}")).into()),
    }
}

/// The cluster's topic names, sorted, without internal ones under `--exclude-internal`, matching
/// `--topic` when given: TopicCommand's `getTopics`.
fn topic_names(cluster: &mut Cluster, m: &ArgMatches) -> Result<Vec<String>, CliError> {
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
        .map(|t| t.name)
        .collect())
}

fn list(cluster: &mut Cluster, m: &ArgMatches, out: &mut impl Write) -> Result<(), CliError> {
    let names = topic_names(cluster, m)?;
    // One line per topic; with none, one empty line, as Java's `String.join("\n", ...)` prints.
    writeln!(out, "{}", names.join("\n")).map_err(anyhow::Error::from)?;
    Ok(())
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
    let configs = parse_configs(m)?;
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

/// `--config` entries, split on `\s*=\s*` and checked as Kafka's tool checks them before
/// sending; the broker checks them again.
fn parse_configs(m: &ArgMatches) -> Result<BTreeMap<String, String>, CliError> {
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
