//! `kafka-transactions`: Kafka's `TransactionsCommand`, the operator's tool for transactions,
//! through the client API (the embedded log or a cluster): `list`, `describe`,
//! `describe-producers`, `abort`, `find-hanging` and `forceTerminateTransaction`, with Kafka's
//! options and its tables (every cell padded to its column's width and followed by a tab).
//!
//! As Kafka's, the connection options come before the command (`kafka-transactions
//! --bootstrap-server host:port list`); here they may also follow it. A failure prints Kafka's
//! `<what>: <why>. Enable debug logging for additional detail.` and exits 1.

use std::collections::{BTreeMap, BTreeSet};
use std::process::ExitCode;

use anyhow::anyhow;
use clap::{Arg, ArgMatches, Command};

use super::{
    CliError, argparse_number as number, emit, open_client, run_argparse_tool, usage,
    validate_bootstrap,
};
use crate::client::Client;
use crate::kafka::now_ms;
use crate::kafka::transactions::{AbortSpec, ProducerDescription, TransactionFilter};

fn value(name: &'static str, value_name: &'static str, help: &'static str) -> Arg {
    Arg::new(name).long(name).value_name(value_name).help(help)
}

/// The clap definition of `kafka-transactions`.
pub fn command() -> Command {
    let topic = || value("topic", "TOPIC", "topic name");
    let partition = || value("partition", "PARTITION", "partition number");
    Command::new("kafka-transactions")
        .about(
            "This tool is used to analyze the transactional state of producers in the cluster. \
             It can be used to detect and recover from hanging transactions.",
        )
        .subcommand_value_name("COMMAND")
        .subcommand_help_heading("Commands")
        // Checked in `run`, so that `--version` alone works.
        .disable_help_subcommand(true)
        .subcommand(
            Command::new("list")
                .about("list transactions")
                .arg(value(
                    "duration-filter",
                    "DURATION_FILTER",
                    "Duration (in millis) to filter by: if < 0, all transactions will be returned; otherwise, only transactions running longer than this duration will be returned",
                ))
                .arg(value(
                    "transactional-id-pattern",
                    "TRANSACTIONAL_ID_PATTERN",
                    "Transactional id regular expression pattern to filter by",
                )),
        )
        .subcommand(
            Command::new("describe")
                .about("describe the state of an active transactional-id")
                .arg(value("transactional-id", "TRANSACTIONAL_ID", "transactional id").required(true)),
        )
        .subcommand(
            Command::new("describe-producers")
                .about("describe the states of active producers for a topic partition")
                .arg(value(
                    "broker-id",
                    "BROKER_ID",
                    "optional broker id to describe the producer state on a specific replica",
                ))
                .arg(topic().required(true))
                .arg(partition().required(true)),
        )
        .subcommand(
            Command::new("abort")
                .about("abort a hanging transaction (requires administrative privileges)")
                .arg(topic().required(true))
                .arg(partition().required(true))
                .arg(value(
                    "start-offset",
                    "START_OFFSET",
                    "start offset of the transaction to abort (brokers on versions 3.0 and above)",
                ))
                .arg(value("producer-id", "PRODUCER_ID", "producer id (brokers older than 3.0)"))
                .arg(value("producer-epoch", "PRODUCER_EPOCH", "producer epoch (brokers older than 3.0)"))
                .arg(value(
                    "coordinator-epoch",
                    "COORDINATOR_EPOCH",
                    "coordinator epoch (brokers older than 3.0)",
                )),
        )
        .subcommand(
            Command::new("find-hanging")
                .about("find hanging transactions")
                .arg(value(
                    "broker-id",
                    "BROKER_ID",
                    "broker id to search for hanging transactions",
                ))
                .arg(value(
                    "max-transaction-timeout",
                    "MAX_TRANSACTION_TIMEOUT",
                    "maximum transaction timeout in minutes to limit the scope of the search (15 minutes by default)",
                ))
                .arg(value(
                    "topic",
                    "TOPIC",
                    "topic name to limit search to (required if --partition is specified)",
                ))
                .arg(partition()),
        )
        .subcommand(
            Command::new("forceTerminateTransaction")
                .about("Force abort an ongoing transaction on transactionalId (requires administrative privileges)")
                .arg(value("transactionalId", "TRANSACTIONALID", "transactional id").required(true)),
        )
        .arg(
            value(
                "bootstrap-server",
                "host:port",
                "hostname and port for the broker to connect to, in the form `host:port` (multiple comma-separated entries can be given); omit to use the embedded log",
            )
            .help_heading("Connection"),
        )
        .arg(
            value(
                "command-config",
                "FILE",
                "property file containing configs to be passed to admin client",
            )
            .help_heading("Connection"),
        )
}

/// Entry point of the `kafka-transactions` binary.
pub fn main() -> ExitCode {
    run_argparse_tool(command(), run)
}

fn run(m: &ArgMatches) -> Result<(), CliError> {
    if let Some(servers) = m.get_one::<String>("bootstrap-server") {
        validate_bootstrap(servers)?;
    }
    let Some((name, sub)) = m.subcommand() else {
        return usage(
            "too few arguments: give a command (list, describe, describe-producers, abort, find-hanging or forceTerminateTransaction)",
        );
    };
    let command_config = super::command_config(m)?;
    // Arguments first: a bad one is reported before anything is asked.
    let action = Action::parse(name, sub)?;
    let mut client = open_client(m, command_config.as_ref())?;
    action.run(&mut client)
}

/// A command with its checked arguments.
enum Action {
    List(TransactionFilter),
    Describe(String),
    DescribeProducers {
        tp: (String, i32),
        broker: Option<i32>,
    },
    Abort {
        tp: (String, i32),
        by: AbortBy,
    },
    FindHanging {
        broker: Option<i32>,
        topic: Option<String>,
        partition: Option<i32>,
        max_timeout_ms: i64,
    },
    ForceTerminate(String),
}

/// How `abort` names the transaction.
enum AbortBy {
    StartOffset(i64),
    Producer {
        id: i64,
        epoch: i16,
        coordinator_epoch: i32,
    },
}

fn text(m: &ArgMatches, name: &str) -> Option<String> {
    m.get_one::<String>(name).cloned()
}

impl Action {
    fn parse(name: &str, m: &ArgMatches) -> Result<Action, CliError> {
        Ok(match name {
            "list" => Action::List(TransactionFilter {
                duration_ms: number(m, "duration-filter", "Long")?.unwrap_or(-1),
                pattern: text(m, "transactional-id-pattern"),
                producer_ids: Vec::new(),
            }),
            "describe" => Action::Describe(text(m, "transactional-id").unwrap_or_default()),
            "describe-producers" => Action::DescribeProducers {
                tp: (
                    text(m, "topic").unwrap_or_default(),
                    number(m, "partition", "Integer")?.unwrap_or_default(),
                ),
                broker: number(m, "broker-id", "Integer")?,
            },
            "abort" => {
                let tp = (
                    text(m, "topic").unwrap_or_default(),
                    number(m, "partition", "Integer")?.unwrap_or_default(),
                );
                let by = match number::<i64>(m, "start-offset", "Long")? {
                    Some(offset) => AbortBy::StartOffset(offset),
                    None => {
                        let id = number::<i64>(m, "producer-id", "Long")?;
                        let epoch = number::<i16>(m, "producer-epoch", "Short")?;
                        let coordinator_epoch = number::<i32>(m, "coordinator-epoch", "Integer")?;
                        match (id, epoch, coordinator_epoch) {
                            (Some(id), Some(epoch), Some(coordinator_epoch)) => AbortBy::Producer {
                                id,
                                epoch,
                                coordinator_epoch,
                            },
                            (None, _, _) => {
                                return usage(
                                    "The transaction to abort must be identified either with --start-offset (for brokers on 3.0 or above) or with --producer-id, --producer-epoch, and --coordinator-epoch (for older brokers)",
                                );
                            }
                            (_, None, _) => {
                                return usage("Missing required argument --producer-epoch");
                            }
                            (_, _, None) => {
                                return usage("Missing required argument --coordinator-epoch");
                            }
                        }
                    }
                };
                Action::Abort { tp, by }
            }
            "find-hanging" => {
                let broker = number(m, "broker-id", "Integer")?;
                let topic = text(m, "topic");
                let partition = number(m, "partition", "Integer")?;
                if topic.is_none() && broker.is_none() {
                    return usage(
                        "The `find-hanging` command requires either --topic or --broker-id to limit the scope of the search",
                    );
                }
                if partition.is_some() && topic.is_none() {
                    return usage("The --partition argument requires --topic to be provided");
                }
                let minutes: i64 = number(m, "max-transaction-timeout", "Integer")?.unwrap_or(15);
                Action::FindHanging {
                    broker,
                    topic,
                    partition,
                    max_timeout_ms: minutes.saturating_mul(60_000),
                }
            }
            "forceTerminateTransaction" => {
                Action::ForceTerminate(text(m, "transactionalId").unwrap_or_default())
            }
            other => return usage(format!("invalid choice: '{other}'")),
        })
    }

    fn run(self, client: &mut Client) -> Result<(), CliError> {
        match self {
            Action::List(filter) => list(client, &filter),
            Action::Describe(id) => describe(client, &id),
            Action::DescribeProducers { tp, broker } => describe_producers(client, &tp, broker),
            Action::Abort { tp, by } => abort(client, &tp, by),
            Action::FindHanging {
                broker,
                topic,
                partition,
                max_timeout_ms,
            } => find_hanging(client, broker, topic, partition, max_timeout_ms),
            Action::ForceTerminate(id) => client.fence_producers(&id).map_err(|e| {
                failed(
                    format!("Failed to force terminate transactionalId `{id}`"),
                    e,
                )
            }),
        }
    }
}

/// Kafka's `printErrorAndExit(message, cause)`.
fn failed(what: String, e: impl std::fmt::Display) -> CliError {
    CliError::Runtime(anyhow!(
        "{what}: {e}. Enable debug logging for additional detail."
    ))
}

/// Kafka's `ToolsUtils.prettyPrintTable`: every cell left-aligned, padded with spaces to its
/// column's widest value and followed by a tab.
fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: &mut dyn Iterator<Item = &str>| {
        for (cell, w) in cells.zip(&widths) {
            out.push_str(&format!("{cell:<w$}\t"));
        }
        out.push('\n');
    };
    line(&mut headers.iter().copied());
    for row in rows {
        line(&mut row.iter().map(String::as_str));
    }
    out
}

fn optional(value: i64) -> String {
    if value < 0 {
        "None".to_string()
    } else {
        value.to_string()
    }
}

fn list(client: &mut Client, filter: &TransactionFilter) -> Result<(), CliError> {
    let listed = client
        .list_transactions(filter)
        .map_err(|e| failed("Failed to list transactions".into(), e))?;
    let rows: Vec<Vec<String>> = listed
        .into_iter()
        .map(|t| {
            vec![
                t.transactional_id,
                t.coordinator.to_string(),
                t.producer_id.to_string(),
                t.state,
            ]
        })
        .collect();
    emit(&table(
        &[
            "TransactionalId",
            "Coordinator",
            "ProducerId",
            "TransactionState",
        ],
        &rows,
    ))
}

fn describe(client: &mut Client, id: &str) -> Result<(), CliError> {
    let context = || format!("Failed to describe transaction state of transactional-id `{id}`");
    let t = match client.describe_transaction(id) {
        Ok(Some(t)) => t,
        Ok(None) => {
            return Err(failed(
                context(),
                format!(
                    "DescribeTransactions request for transactionalId `{id}` failed because the ID could not be found"
                ),
            ));
        }
        Err(e) => return Err(failed(context(), e)),
    };
    let duration = match t.start_ms {
        start if start >= 0 => (now_ms() - start).to_string(),
        _ => "None".to_string(),
    };
    // Sorted (Java: its hash set's order).
    let mut partitions = t.partitions.clone();
    partitions.sort();
    let partitions: Vec<String> = partitions.iter().map(|(t, p)| format!("{t}-{p}")).collect();
    let row = vec![
        t.coordinator.to_string(),
        t.transactional_id,
        t.producer_id.to_string(),
        t.producer_epoch.to_string(),
        t.state,
        t.timeout_ms.to_string(),
        optional(t.start_ms),
        duration,
        partitions.join(","),
    ];
    emit(&table(
        &[
            "CoordinatorId",
            "TransactionalId",
            "ProducerId",
            "ProducerEpoch",
            "TransactionState",
            "TransactionTimeoutMs",
            "CurrentTransactionStartTimeMs",
            "TransactionDurationMs",
            "TopicPartitions",
        ],
        &[row],
    ))
}

/// A partition's producers, or Kafka's failure message.
fn producers_of(
    client: &mut Client,
    tp: &(String, i32),
    broker: Option<i32>,
) -> Result<Vec<ProducerDescription>, CliError> {
    client.describe_producers(tp, broker).map_err(|e| {
        let on = match broker {
            Some(id) => format!("broker {id}"),
            None => "leader".to_string(),
        };
        failed(
            format!(
                "Failed to describe producers for partition {}-{} on {on}",
                tp.0, tp.1
            ),
            e,
        )
    })
}

fn describe_producers(
    client: &mut Client,
    tp: &(String, i32),
    broker: Option<i32>,
) -> Result<(), CliError> {
    let rows: Vec<Vec<String>> = producers_of(client, tp, broker)?
        .into_iter()
        .map(|p| {
            vec![
                p.producer_id.to_string(),
                p.producer_epoch.to_string(),
                p.coordinator_epoch.to_string(),
                p.last_sequence.to_string(),
                p.last_timestamp.to_string(),
                optional(p.current_txn_start_offset),
            ]
        })
        .collect();
    emit(&table(
        &[
            "ProducerId",
            "ProducerEpoch",
            "LatestCoordinatorEpoch",
            "LastSequence",
            "LastTimestamp",
            "CurrentTransactionStartOffset",
        ],
        &rows,
    ))
}

fn abort(client: &mut Client, tp: &(String, i32), by: AbortBy) -> Result<(), CliError> {
    let spec = match by {
        AbortBy::Producer {
            id,
            epoch,
            coordinator_epoch,
        } => AbortSpec {
            topic: tp.0.clone(),
            partition: tp.1,
            producer_id: id,
            producer_epoch: epoch,
            coordinator_epoch,
        },
        AbortBy::StartOffset(offset) => {
            let found = producers_of(client, tp, None)?
                .into_iter()
                .find(|p| p.current_txn_start_offset == offset);
            let Some(p) = found else {
                return Err(CliError::Runtime(anyhow!(
                    "Could not find any open transactions starting at offset {offset} on partition {}-{}",
                    tp.0,
                    tp.1
                )));
            };
            AbortSpec {
                topic: tp.0.clone(),
                partition: tp.1,
                producer_id: p.producer_id,
                producer_epoch: p.producer_epoch as i16,
                coordinator_epoch: p.coordinator_epoch.max(0),
            }
        }
    };
    client.abort_transaction(&spec).map_err(|e| {
        failed(
            format!(
                "Failed to abort transaction AbortTransactionSpec(topicPartition={}-{}, producerId={}, producerEpoch={}, coordinatorEpoch={})",
                spec.topic, spec.partition, spec.producer_id, spec.producer_epoch, spec.coordinator_epoch
            ),
            e,
        )
    })
}

/// An open transaction older than the limit, on one partition.
struct Candidate {
    tp: (String, i32),
    producer: ProducerDescription,
}

fn find_hanging(
    client: &mut Client,
    broker: Option<i32>,
    topic: Option<String>,
    partition: Option<i32>,
    max_timeout_ms: i64,
) -> Result<(), CliError> {
    let partitions: Vec<(String, i32)> = match (&topic, partition) {
        (Some(t), Some(p)) => vec![(t.clone(), p)],
        (Some(t), None) => {
            let all = match broker {
                Some(id) => client.partitions_led_by(id)?,
                None => {
                    let described = client
                        .describe_topics(std::slice::from_ref(t), 2000)
                        .map_err(|e| {
                            failed(format!("Failed to find the partitions of topic {t}"), e)
                        })?;
                    described
                        .into_iter()
                        .flat_map(|d| {
                            let name = d.name.clone();
                            d.partitions
                                .into_iter()
                                .map(move |p| (name.clone(), p.partition))
                        })
                        .collect()
                }
            };
            all.into_iter().filter(|(name, _)| name == t).collect()
        }
        (None, _) => client.partitions_led_by(broker.unwrap_or_default())?,
    };
    let now = now_ms();
    let mut candidates = Vec::new();
    for tp in partitions {
        for p in producers_of(client, &tp, broker)? {
            if p.current_txn_start_offset >= 0 && now - p.last_timestamp > max_timeout_ms {
                candidates.push(Candidate {
                    tp: tp.clone(),
                    producer: p,
                });
            }
        }
    }
    let mut hanging = Vec::new();
    if !candidates.is_empty() {
        let ids: BTreeSet<i64> = candidates.iter().map(|c| c.producer.producer_id).collect();
        let filter = TransactionFilter {
            duration_ms: -1,
            pattern: None,
            producer_ids: ids.into_iter().collect(),
        };
        let listed = client
            .list_transactions(&filter)
            .map_err(|e| failed("Failed to list transactions".into(), e))?;
        let mut by_producer: BTreeMap<i64, Vec<String>> = BTreeMap::new();
        for t in listed {
            by_producer
                .entry(t.producer_id)
                .or_default()
                .push(t.transactional_id);
        }
        for c in candidates {
            let mut open_here = false;
            for id in by_producer
                .get(&c.producer.producer_id)
                .into_iter()
                .flatten()
            {
                if let Some(t) = client.describe_transaction(id)? {
                    open_here |=
                        t.producer_id == c.producer.producer_id && t.partitions.contains(&c.tp);
                }
            }
            if !open_here {
                hanging.push(c);
            }
        }
    }
    let rows: Vec<Vec<String>> = hanging
        .into_iter()
        .map(|c| {
            let p = c.producer;
            vec![
                c.tp.0,
                c.tp.1.to_string(),
                p.producer_id.to_string(),
                p.producer_epoch.to_string(),
                p.coordinator_epoch.to_string(),
                p.current_txn_start_offset.to_string(),
                p.last_timestamp.to_string(),
                ((now - p.last_timestamp) / 60_000).to_string(),
            ]
        })
        .collect();
    emit(&table(
        &[
            "Topic",
            "Partition",
            "ProducerId",
            "ProducerEpoch",
            "CoordinatorEpoch",
            "StartOffset",
            "LastTimestamp",
            "Duration(min)",
        ],
        &rows,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_pad_each_cell_and_end_it_with_a_tab() {
        let rows = vec![vec!["txn-committed".to_string(), "1".to_string()]];
        assert_eq!(
            table(&["TransactionalId", "Coordinator"], &rows),
            "TransactionalId\tCoordinator\t\ntxn-committed  \t1          \t\n"
        );
    }
}
