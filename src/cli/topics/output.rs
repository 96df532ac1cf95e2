//! `kafka-topics` output: the topic list and `--describe` in Kafka's text, JSON or a table.

use std::io::Write;

use super::is_zero_uuid;
use crate::cli::{CliError, OutputFormat, new_table};
use crate::client::PartitionDescription;

/// Prints a topic list in the chosen format (Kafka's text: one name per line).
pub(super) fn write_names(
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
    crate::cli::closed_pipe_ok(out.write_all(text.as_bytes()))
}

/// What `--describe` shows of one topic after the filters, whichever the backend.
pub(super) struct TopicView {
    pub name: String,
    /// 22-character URL-safe base64; the all-zero id is not printed, as Kafka does.
    pub id: String,
    pub partition_count: usize,
    pub replication_factor: usize,
    /// Non-default config entries, in the order the backend gave them.
    pub configs: Vec<(String, String)>,
    /// The summary line (no partition filter given).
    pub summary: bool,
    /// One line each (an unknown ELR is printed `N/A`).
    pub partitions: Vec<PartitionDescription>,
}

/// Prints `--describe` results in the chosen format.
pub(super) fn write_describe(
    views: &[TopicView],
    format: OutputFormat,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let text = match format {
        OutputFormat::Text => describe_text(views),
        OutputFormat::Json => format!("{}\n", describe_json(views)),
        OutputFormat::Table => describe_table(views),
    };
    crate::cli::closed_pipe_ok(out.write_all(text.as_bytes()))
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
