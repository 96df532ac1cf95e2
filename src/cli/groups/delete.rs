//! `--delete` (whole groups) and `--delete-offsets` (some partitions' committed offsets), with
//! Kafka's messages and table. Both refuse groups with live members, as Kafka's coordinator
//! does; any failure exits 1 after the results that did succeed are printed.

use std::collections::{BTreeMap, BTreeSet};

use super::exceptions::{self, exception};
use super::reset::{TopicArg, parse_topic_arg};

use super::options::GroupsOptions;
use super::{emit, pad};
use crate::cli::{CliError, usage};
use crate::client::groups::{GroupAdmin, OffsetDeletion, TopicPartition};

/// UNKNOWN_TOPIC_OR_PARTITION.
const UNKNOWN_TOPIC_OR_PARTITION: i16 = 3;

fn quoted_list(groups: &[String]) -> String {
    groups
        .iter()
        .map(|g| format!("'{g}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn delete_groups(src: &mut GroupAdmin, o: &GroupsOptions) -> Result<(), CliError> {
    let ids: BTreeSet<String> = if o.all_groups {
        src.group_ids()?.into_iter().collect()
    } else {
        o.groups.iter().cloned().collect()
    };
    let mut deleted = Vec::new();
    let mut failed = Vec::new();
    for id in ids {
        let why = match src.delete_group(&id)? {
            Ok(()) => {
                deleted.push(id);
                continue;
            }
            Err(why) => exceptions::refusal(&why),
        };
        failed.push(format!("* Group '{id}' could not be deleted due to: {why}"));
    }
    if failed.is_empty() {
        return emit(&format!(
            "Deletion of requested consumer groups ({}) was successful.\n",
            quoted_list(&deleted)
        ));
    }
    if !deleted.is_empty() {
        emit(&format!(
            "These consumer groups were deleted successfully: {}\n",
            quoted_list(&deleted)
        ))?;
    }
    Err(anyhow::anyhow!(
        "Deletion of some consumer groups failed:\n{}",
        failed.join("\n")
    )
    .into())
}

/// Per-partition outcome: `None` for success, else the exception text. Partition -1 stands for
/// a topic that could not be described (printed as `-`).
type Outcomes = BTreeMap<TopicPartition, Option<String>>;

pub(super) fn delete_offsets(src: &mut GroupAdmin, o: &GroupsOptions) -> Result<(), CliError> {
    let group = match o.groups.as_slice() {
        [one] => one.clone(),
        _ => return usage("Found multiple arguments for option group, but you asked for only one"),
    };
    let mut outcomes = Outcomes::new();
    let mut requested = BTreeSet::new();
    for arg in &o.topics {
        match parse_topic_arg(arg)? {
            TopicArg::Partitions(tps) => requested.extend(tps),
            TopicArg::Whole(topic) => match src.partitions(&topic)? {
                Some(n) => requested.extend((0..n as i32).map(|p| (topic.clone(), p))),
                None => {
                    outcomes.insert((topic, -1), Some(exception(UNKNOWN_TOPIC_OR_PARTITION)));
                }
            },
        }
    }
    let mut valid: Vec<TopicPartition> = Vec::new();
    for tp in requested {
        if src.exists(&tp)? {
            valid.push(tp);
        } else {
            outcomes.insert(tp, Some(exception(UNKNOWN_TOPIC_OR_PARTITION)));
        }
    }
    let top = match src.delete_offsets(&group, &valid)? {
        OffsetDeletion::Done(results) => {
            for (tp, r) in results {
                outcomes.insert(tp, r.err().map(|r| exceptions::refusal(&r)));
            }
            None
        }
        OffsetDeletion::Failed(code) => {
            for tp in valid {
                outcomes.insert(tp, Some(exception(code)));
            }
            Some(exceptions::message(code))
        }
    };
    // A topic that could not be described (partition -1) is shown but, as in Kafka, is not a
    // partition-level error of the request.
    let partition_error = outcomes
        .iter()
        .any(|((_, p), outcome)| *p >= 0 && outcome.is_some());
    if top.is_none() && !partition_error {
        emit(&format!(
            "Request succeeded for deleting offsets from group {group}.\n"
        ))?;
    }
    emit(&table(&outcomes))?;
    match top {
        Some(msg) => Err(anyhow::anyhow!(msg).into()),
        None if partition_error => Err(anyhow::anyhow!(
            "Encountered some partition-level error, see the follow-up details."
        )
        .into()),
        None => Ok(()),
    }
}

/// Kafka's `%n%-Ts %-10s %-15s` table, rows sorted by the string topic + partition.
fn table(outcomes: &Outcomes) -> String {
    let tw = outcomes
        .keys()
        .map(|(t, _)| t.len())
        .max()
        .unwrap_or(0)
        .max(15);
    let mut rows: Vec<(&TopicPartition, &Option<String>)> = outcomes.iter().collect();
    rows.sort_by_key(|((t, p), _)| format!("{t}{p}"));
    let line =
        |t: &str, p: &str, s: &str| format!("\n{} {} {}", pad(t, tw), pad(p, 10), pad(s, 15));
    let mut text = line("TOPIC", "PARTITION", "STATUS");
    for ((topic, p), outcome) in rows {
        let p = if *p < 0 {
            "-".to_string()
        } else {
            p.to_string()
        };
        let status = match outcome {
            None => "Successful".to_string(),
            Some(e) => format!("Error: {e}"),
        };
        text.push_str(&line(topic, &p, &status));
    }
    text.push('\n');
    text
}
