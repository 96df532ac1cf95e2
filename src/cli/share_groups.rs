//! `kafka-share-groups` (Kafka's `ShareGroupCommand`) on the embedded log or a cluster: list,
//! describe (offsets, members, state), reset start offsets, delete share groups and their
//! offsets, with Kafka 4.3.1's options, checks, messages and tables.
//!
//! Differences from Kafka (as `kafka-consumer-groups`): errors go to stderr after `Error: ` and
//! exit 1 (Kafka prints them on stdout and exits 0); usage errors are one line, exit 2.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::process::ExitCode;

use clap::{Arg, ArgAction, ArgMatches, Command};

use super::exceptions;
use super::groups::{TopicArg, parse_datetime, parse_topic_arg};
use super::{CliError, connection_args, emit, open_client, run_tool, usage};
use crate::client::Client;
use crate::client::offsets::OffsetSpec;
use crate::client::share_groups::{ShareGroupDescription, ShareOffset};
use crate::kafka::TopicPartition;

const ABOUT: &str = "This tool helps to list, describe, reset and delete share groups.";
/// The states `--list --state` takes, as Kafka lists them.
const STATES: [&str; 3] = ["Dead", "Empty", "Stable"];

fn flag(name: &'static str, help: &'static str) -> Arg {
    crate::cli::flag_option(name, help, "Options", ArgAction::SetTrue)
}

fn value(name: &'static str, value_name: &'static str, help: &'static str) -> Arg {
    crate::cli::value_option(name, value_name, help, "Options")
}

/// The clap definition of `kafka-share-groups`.
pub fn command() -> Command {
    let cmd = Command::new("kafka-share-groups")
        .about(ABOUT)
        .arg(flag("list", "List all share groups."))
        .arg(flag("describe", "Describe share group, members and offset information."))
        .arg(flag("delete", "Delete share group."))
        .arg(flag("reset-offsets", "Reset offsets of share group. Supports one share group at the time, and instances must be inactive. --dry-run plans, --execute resets; one of --to-datetime, --to-earliest, --to-latest; --all-topics or --topic."))
        .arg(flag("delete-offsets", "Delete offsets of share group. Supports one share group at the time, and multiple topics."))
        .arg(value("group", "share group", "The share group we wish to act on (repeatable for --describe and --delete).").action(ArgAction::Append))
        .arg(flag("all-groups", "Apply to all share groups."))
        .arg(value("topic", "topic", "The topic whose offset information should be deleted or included in the reset offset process: 'topic' or 'topic:0,1,2' (repeatable).").action(ArgAction::Append))
        .arg(flag("all-topics", "Consider all topics assigned to a share group in the 'reset-offsets' process."))
        .arg(flag("members", "Describe members of the group (with --describe)."))
        .arg(flag("offsets", "Describe the group's partitions with their offset information (with --describe; the default)."))
        .arg(
            value("state", "String", "With --describe: the state of the group. With --list: the state of all groups, optionally only these (Empty, Stable, Dead).")
                .num_args(0..=1)
                .value_parser(crate::cli::Suggest(&STATES)),
        )
        .arg(flag("verbose", "Provide additional information, if any, when describing the group."))
        .arg(value("timeout", "Long: timeout (ms)", "The timeout that can be set for some use cases (ignored on the embedded log).").value_parser(clap::value_parser!(i64)).allow_negative_numbers(true))
        .arg(value("to-datetime", "String: datetime", "Reset offsets to offset from datetime. Format: 'YYYY-MM-DDThh:mm:ss.sss'."))
        .arg(flag("to-earliest", "Reset offsets to earliest offset."))
        .arg(flag("to-latest", "Reset offsets to latest offset."))
        .arg(flag("dry-run", "Only show results without executing changes on share groups."))
        .arg(flag("execute", "Execute operation."))
        .arg(crate::cli::admin_config_arg("command config property file", "Property file containing configs to be passed to Admin Client."));
    connection_args(cmd)
}

/// Entry point of the `kafka-share-groups` binary.
pub fn main() -> ExitCode {
    run_tool(command(), "Error: ", run)
}

/// What a run does, as its options say.
enum Action {
    List {
        states: Option<Vec<String>>,
    },
    Describe {
        groups: Groups,
        view: View,
        verbose: bool,
    },
    Delete {
        groups: Groups,
    },
    Reset {
        group: String,
        scope: Scope,
        to: ResetTo,
        execute: bool,
    },
    DeleteOffsets {
        group: String,
        topics: Vec<String>,
    },
}

/// `--group G...` or `--all-groups`.
enum Groups {
    Named(Vec<String>),
    All,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum View {
    Offsets,
    Members,
    State,
}

/// `--all-topics` or the `--topic` values.
enum Scope {
    AllTopics,
    Topics(Vec<TopicArg>),
}

#[derive(Clone, Copy)]
enum ResetTo {
    Earliest,
    Latest,
    Time(i64),
}

/// Kafka's option checks, in its order, with its messages.
fn action(m: &ArgMatches) -> Result<Action, CliError> {
    let has = |id: &str| match m.get_raw(id) {
        Some(_) => m.value_source(id) == Some(clap::parser::ValueSource::CommandLine),
        None => false,
    };
    let actions = [
        "list",
        "describe",
        "delete",
        "reset-offsets",
        "delete-offsets",
    ];
    if actions.iter().filter(|a| has(a)).count() != 1 {
        return usage(
            "Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets.",
        );
    }
    let groups: Vec<String> = m
        .get_many::<String>("group")
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    let topics: Vec<String> = m
        .get_many::<String>("topic")
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    let all_groups = has("all-groups");
    let pick_groups = |action: &str| -> Result<Groups, CliError> {
        if all_groups && !groups.is_empty() {
            return usage("Option \"[group]\" can't be used with option \"[all-groups]\"");
        }
        if all_groups {
            Ok(Groups::All)
        } else if groups.is_empty() {
            usage(format!(
                "Option [{action}] takes one of these options: [all-groups], [group]"
            ))
        } else {
            Ok(Groups::Named(groups.clone()))
        }
    };
    if has("list") {
        if !groups.is_empty() {
            return usage("Option \"[group]\" can't be used with option \"[list]\"");
        }
        for option in [
            "members",
            "verbose",
            "offsets",
            "topic",
            "all-topics",
            "all-groups",
        ] {
            if has(option) {
                return usage(format!(
                    "Option [list] does not take the option: [{option}]"
                ));
            }
        }
        let states = if has("state") {
            let given = m
                .get_one::<String>("state")
                .map(String::as_str)
                .unwrap_or("");
            let mut states = Vec::new();
            for s in given.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                match STATES.iter().find(|v| v.eq_ignore_ascii_case(s)) {
                    Some(v) => states.push(v.to_string()),
                    None => {
                        return usage(format!(
                            "Invalid state list '{given}'. Valid states are: {}",
                            STATES.join(", ")
                        ));
                    }
                }
            }
            Some(states)
        } else {
            None
        };
        return Ok(Action::List { states });
    }
    if has("describe") {
        let groups = pick_groups("describe")?;
        let views = [
            ("members", View::Members),
            ("offsets", View::Offsets),
            ("state", View::State),
        ];
        let chosen: Vec<View> = views
            .iter()
            .filter(|(id, _)| has(id))
            .map(|(_, v)| *v)
            .collect();
        if chosen.len() > 1 {
            return usage(
                "Option [describe] takes at most one of these options: [members], [offsets], [state]",
            );
        }
        if has("state") && m.get_one::<String>("state").is_some() {
            return usage("Option [describe] does not take a value for [state]");
        }
        return Ok(Action::Describe {
            groups,
            view: chosen.first().copied().unwrap_or(View::Offsets),
            verbose: has("verbose"),
        });
    }
    if has("delete") {
        if has("topic") {
            return usage("Option [delete] does not take the option: [topic]");
        }
        if all_groups && !groups.is_empty() {
            return usage("Option [delete] takes either [group] or [all-groups], not both.");
        }
        if !all_groups && groups.is_empty() {
            return usage("Option [delete] takes the options [group] or [all-groups]");
        }
        return Ok(Action::Delete {
            groups: pick_groups("delete")?,
        });
    }
    if has("delete-offsets") {
        if groups.is_empty() || topics.is_empty() {
            return usage("Option [delete-offsets] takes the following options: [group], [topic]");
        }
        let [group] = groups.as_slice() else {
            return usage("Found multiple arguments for option group, but you asked for only one");
        };
        return Ok(Action::DeleteOffsets {
            group: group.clone(),
            topics,
        });
    }
    // --reset-offsets
    if has("dry-run") && has("execute") {
        return usage("Option [reset-offsets] only accepts one of [execute] and [dry-run]");
    }
    if !has("dry-run") && !has("execute") {
        return usage("Option [reset-offsets] takes the option: [execute] or [dry-run]");
    }
    let [group] = groups.as_slice() else {
        if groups.is_empty() {
            return usage("Option [reset-offsets] takes the option: [group]");
        }
        return usage("Found multiple arguments for option group, but you asked for only one");
    };
    if !has("all-topics") && topics.is_empty() {
        return usage("Option [reset-offsets] takes one of these options: [all-topics], [topic]");
    }
    let specs = ["to-datetime", "to-earliest", "to-latest"];
    let given: Vec<&str> = specs.iter().copied().filter(|s| has(s)).collect();
    match given.as_slice() {
        [] => {
            return usage(
                "Option [reset-offsets] takes one of these options: [to-datetime], [to-earliest], [to-latest]",
            );
        }
        [_] => {}
        [a, b, ..] => {
            return usage(format!(
                "Option \"[{a}]\" can't be used with option \"[{b}]\""
            ));
        }
    }
    let to = match given[0] {
        "to-earliest" => ResetTo::Earliest,
        "to-latest" => ResetTo::Latest,
        _ => {
            let text = m.get_one::<String>("to-datetime").expect("given");
            ResetTo::Time(parse_datetime(text).map_err(|e| {
                CliError::Runtime(anyhow::anyhow!(
                    "Executing share group command failed due to {e}"
                ))
            })?)
        }
    };
    let scope = if has("all-topics") {
        Scope::AllTopics
    } else {
        Scope::Topics(
            topics
                .iter()
                .map(|t| parse_topic_arg(t))
                .collect::<Result<_, _>>()?,
        )
    };
    Ok(Action::Reset {
        group: group.clone(),
        scope,
        to,
        execute: has("execute"),
    })
}

fn run(m: &ArgMatches) -> Result<(), CliError> {
    let action = action(m)?;
    let mut command_config = super::command_config(m)?;
    if let Some(ms) = m.get_one::<i64>("timeout").filter(|ms| **ms > 0) {
        command_config
            .get_or_insert_with(Default::default)
            .insert("request.timeout.ms".to_string(), ms.to_string());
    }
    let mut client = open_client(m, command_config.as_ref())?;
    match action {
        Action::List { states } => list(&mut client, states),
        Action::Describe {
            groups,
            view,
            verbose,
        } => describe(&mut client, groups, view, verbose),
        Action::Delete { groups } => delete(&mut client, groups),
        Action::Reset {
            group,
            scope,
            to,
            execute,
        } => reset(&mut client, &group, scope, to, execute),
        Action::DeleteOffsets { group, topics } => delete_offsets(&mut client, &group, &topics),
    }
}

/// Kafka's generic runtime failure.
fn failed(msg: impl std::fmt::Display) -> CliError {
    CliError::Runtime(anyhow::anyhow!(
        "Executing share group command failed due to {msg}"
    ))
}

fn client_failed(e: crate::client::ClientError) -> CliError {
    failed(exceptions::of_error(&e))
}

/// Left-justifies `s` in `width` columns and a space (Java's `%-Ns `).
fn col(out: &mut String, s: &str, width: usize) {
    let _ = write!(out, "{s:<width$} ");
}

fn width(min: usize, values: impl Iterator<Item = usize>) -> usize {
    values.fold(min, usize::max)
}

fn list(client: &mut Client, states: Option<Vec<String>>) -> Result<(), CliError> {
    let groups = client.list_share_groups().map_err(client_failed)?;
    let Some(states) = states else {
        let mut out = String::new();
        for (id, _) in &groups {
            let _ = writeln!(out, "{id}");
        }
        return emit(&out);
    };
    let shown: Vec<&(String, String)> = groups
        .iter()
        .filter(|(_, s)| states.is_empty() || states.contains(s))
        .collect();
    let w = width(15, shown.iter().map(|(id, _)| id.len()));
    let mut out = String::new();
    col(&mut out, "GROUP", w);
    out.push_str("STATE\n");
    for (id, state) in shown {
        col(&mut out, id, w);
        let _ = writeln!(out, "{state}");
    }
    emit(&out)
}

fn group_ids(client: &mut Client, groups: Groups) -> Result<Vec<String>, CliError> {
    Ok(match groups {
        Groups::Named(ids) => ids,
        Groups::All => client
            .list_share_groups()
            .map_err(client_failed)?
            .into_iter()
            .map(|(id, _)| id)
            .collect(),
    })
}

fn describe(
    client: &mut Client,
    groups: Groups,
    view: View,
    verbose: bool,
) -> Result<(), CliError> {
    for group in group_ids(client, groups)? {
        let described = client.describe_share_group(&group).map_err(client_failed)?;
        let Some(d) = described else {
            return Err(failed(format!(
                "org.apache.kafka.common.errors.GroupIdNotFoundException: Group {group} not found."
            )));
        };
        match view {
            View::Offsets => {
                let offsets = client.share_group_offsets(&group).map_err(client_failed)?;
                emit(&offsets_table(&group, &offsets, verbose))?;
            }
            View::Members => {
                if d.members.is_empty() {
                    eprintln!("\nShare group '{group}' has no active members.");
                } else {
                    emit(&members_table(&d, verbose))?;
                }
            }
            View::State => {
                emit(&state_table(&d, verbose))?;
                if d.members.is_empty() {
                    eprintln!("\nShare group '{group}' has no active members.");
                }
            }
        }
    }
    Ok(())
}

fn offsets_table(
    group: &str,
    offsets: &BTreeMap<TopicPartition, ShareOffset>,
    verbose: bool,
) -> String {
    if offsets.is_empty() {
        return format!("\nShare group '{group}' has no offset information.\n");
    }
    let gw = width(15, std::iter::once(group.len()));
    let tw = width(15, offsets.keys().map(|(t, _)| t.len()));
    let mut out = String::from("\n");
    col(&mut out, "GROUP", gw);
    col(&mut out, "TOPIC", tw);
    col(&mut out, "PARTITION", 10);
    if verbose {
        col(&mut out, "LEADER-EPOCH", 13);
    }
    col(&mut out, "START-OFFSET", 13);
    out.push_str("LAG\n");
    let dash = |v: Option<i64>| v.map_or_else(|| "-".to_string(), |v| v.to_string());
    for ((topic, partition), o) in offsets {
        col(&mut out, group, gw);
        col(&mut out, topic, tw);
        col(&mut out, &partition.to_string(), 10);
        if verbose {
            col(&mut out, &dash(o.leader_epoch.map(i64::from)), 13);
        }
        col(&mut out, &dash(o.start_offset), 13);
        let _ = writeln!(out, "{}", dash(o.lag));
    }
    out
}

fn members_table(d: &ShareGroupDescription, verbose: bool) -> String {
    let gw = width(15, std::iter::once(d.group_id.len()));
    let iw = width(15, d.members.iter().map(|m| m.member_id.len()));
    let hw = width(15, d.members.iter().map(|m| m.host.len()));
    let cw = width(15, d.members.iter().map(|m| m.client_id.len()));
    let mut out = String::from("\n");
    col(&mut out, "GROUP", gw);
    col(&mut out, "CONSUMER-ID", iw);
    col(&mut out, "HOST", hw);
    col(&mut out, "CLIENT-ID", cw);
    col(&mut out, "#PARTITIONS", 12);
    if verbose {
        col(&mut out, "MEMBER-EPOCH", 13);
    }
    out.push_str("ASSIGNMENT\n");
    for m in &d.members {
        col(&mut out, &d.group_id, gw);
        col(&mut out, &m.member_id, iw);
        col(&mut out, &m.host, hw);
        col(&mut out, &m.client_id, cw);
        let count: usize = m.assignment.values().map(Vec::len).sum();
        col(&mut out, &count.to_string(), 12);
        if verbose {
            col(&mut out, &m.member_epoch.to_string(), 13);
        }
        let assignment: Vec<String> = m
            .assignment
            .iter()
            .map(|(t, ps)| {
                let ps: Vec<String> = ps.iter().map(i32::to_string).collect();
                format!("{t}:{}", ps.join(","))
            })
            .collect();
        let _ = writeln!(out, "{}", assignment.join(";"));
    }
    out
}

fn state_table(d: &ShareGroupDescription, verbose: bool) -> String {
    let (host, port, id) = &d.coordinator;
    // The embedded log has no address: its directory stands for the coordinator.
    let coordinator = if *port < 0 {
        format!("{host}  ({id})")
    } else {
        format!("{host}:{port}  ({id})")
    };
    let gw = width(15, std::iter::once(d.group_id.len()));
    let cw = width(25, std::iter::once(coordinator.len()));
    let mut out = String::from("\n");
    col(&mut out, "GROUP", gw);
    col(&mut out, "COORDINATOR (ID)", cw);
    col(&mut out, "STATE", 15);
    if verbose {
        col(&mut out, "GROUP-EPOCH", 12);
        col(&mut out, "ASSIGNMENT-EPOCH", 17);
    }
    out.push_str("#MEMBERS\n");
    col(&mut out, &d.group_id, gw);
    col(&mut out, &coordinator, cw);
    col(&mut out, &d.state, 15);
    if verbose {
        col(&mut out, &d.group_epoch.to_string(), 12);
        col(&mut out, &d.assignment_epoch.to_string(), 17);
    }
    let _ = writeln!(out, "{}", d.members.len());
    out
}

fn quoted(ids: &[String]) -> String {
    ids.iter()
        .map(|g| format!("'{g}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn delete(client: &mut Client, groups: Groups) -> Result<(), CliError> {
    let ids = group_ids(client, groups)?;
    let shares: BTreeSet<String> = client
        .list_share_groups()
        .map_err(client_failed)?
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    let mut deleted = Vec::new();
    let mut failures = Vec::new();
    for id in ids {
        // Kafka's tool asks which groups are share groups first.
        let result = if shares.contains(&id) {
            client
                .delete_share_group(&id)
                .map_err(|e| exceptions::of_error(&e))
        } else {
            Err(format!(
                "java.lang.IllegalArgumentException: Group '{id}' is not a share group."
            ))
        };
        match result {
            Ok(()) => deleted.push(id),
            Err(why) => failures.push(format!("* Group '{id}' could not be deleted due to: {why}")),
        }
    }
    if failures.is_empty() {
        return emit(&format!(
            "Deletion of requested share groups ({}) was successful.\n",
            quoted(&deleted)
        ));
    }
    if !deleted.is_empty() {
        emit(&format!(
            "These share groups were deleted successfully: {}\n",
            quoted(&deleted)
        ))?;
    }
    Err(anyhow::anyhow!(
        "Deletion of some share groups failed:\n{}",
        failures.join("\n")
    )
    .into())
}

fn reset(
    client: &mut Client,
    group: &str,
    scope: Scope,
    to: ResetTo,
    execute: bool,
) -> Result<(), CliError> {
    if let Some(d) = client.describe_share_group(group).map_err(client_failed)?
        && !d.members.is_empty()
    {
        return Err(CliError::Runtime(anyhow::anyhow!(
            "Share group '{group}' is not empty."
        )));
    }
    let partitions: BTreeSet<TopicPartition> = match scope {
        Scope::AllTopics => client
            .share_group_offsets(group)
            .map_err(client_failed)?
            .into_keys()
            .collect(),
        Scope::Topics(args) => {
            let mut out = BTreeSet::new();
            for arg in args {
                match arg {
                    TopicArg::Partitions(tps) => out.extend(tps),
                    TopicArg::Whole(topic) => {
                        let described = client
                            .describe_topics(std::slice::from_ref(&topic), 2000)
                            .map_err(|_| {
                                failed("This server does not host this topic-partition.")
                            })?;
                        for t in described {
                            out.extend(t.partitions.iter().map(|p| (t.name.clone(), p.partition)));
                        }
                    }
                }
            }
            out
        }
    };
    let spec = match to {
        ResetTo::Earliest => OffsetSpec::Earliest,
        ResetTo::Latest => OffsetSpec::Latest,
        ResetTo::Time(ms) => OffsetSpec::Timestamp(ms),
    };
    let tps: Vec<TopicPartition> = partitions.into_iter().collect();
    let found = client.list_offsets(&tps, spec).map_err(client_failed)?;
    let mut plan: BTreeMap<TopicPartition, i64> = BTreeMap::new();
    for (tp, offset) in found {
        let offset = match offset {
            Ok(Some(o)) => o,
            // No record at or after the time: the end, as Kafka's tool falls back.
            Ok(None) => match client.list_offsets(std::slice::from_ref(&tp), OffsetSpec::Latest) {
                Ok(mut m) => m.remove(&tp).and_then(|r| r.ok().flatten()).unwrap_or(0),
                Err(e) => return Err(client_failed(e)),
            },
            Err(_) => return Err(failed("This server does not host this topic-partition.")),
        };
        plan.insert(tp, offset);
    }
    if execute {
        let outcome = client
            .reset_share_group_offsets(group, &plan)
            .map_err(client_failed)?;
        if let Some((tp, Some(why))) = outcome.iter().find(|(_, e)| e.is_some()) {
            return Err(failed(format!("{why} ({}-{})", tp.0, tp.1)));
        }
    }
    let gw = width(15, std::iter::once(group.len()));
    let tw = width(15, plan.keys().map(|(t, _)| t.len()));
    let mut out = String::from("\n");
    col(&mut out, "GROUP", gw);
    col(&mut out, "TOPIC", tw);
    col(&mut out, "PARTITION", 10);
    out.push_str("NEW-OFFSET\n");
    for ((topic, partition), offset) in &plan {
        col(&mut out, group, gw);
        col(&mut out, topic, tw);
        col(&mut out, &partition.to_string(), 10);
        let _ = writeln!(out, "{offset}");
    }
    emit(&out)
}

fn delete_offsets(client: &mut Client, group: &str, topics: &[String]) -> Result<(), CliError> {
    let outcome = client
        .delete_share_group_offsets(group, topics)
        .map_err(client_failed)?;
    if let Some(error) = &outcome.error {
        return Err(CliError::Runtime(anyhow::anyhow!("{error}")));
    }
    let tw = width(15, outcome.topics.iter().map(|(t, _)| t.len()));
    let mut out = String::from("\n");
    col(&mut out, "TOPIC", tw);
    out.push_str("STATUS\n");
    for (topic, error) in &outcome.topics {
        col(&mut out, topic, tw);
        match error {
            None => out.push_str("Successful\n"),
            Some(why) => {
                let _ = writeln!(out, "Error: {why}");
            }
        }
    }
    emit(&out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_is_valid() {
        command().debug_assert();
    }
}
