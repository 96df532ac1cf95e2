//! `--describe`: the offsets view (default, `--offsets`), `--members` and `--state`, each with
//! `--verbose`, in Kafka's formats and column widths. Groups are printed sorted by id; a group
//! that does not exist fails the whole command before anything is printed, as in Kafka 4.3.
//!
//! `--output json` prints one document for all the groups (`--verbose` changes nothing in it):
//!
//! ```text
//! offsets: {"groups":[{"group":"g","state":"Stable","partitions":[{"topic":"t","partition":0,
//!           "leaderEpoch":null,"currentOffset":5,"logEndOffset":9,"lag":4,"consumerId":"c-1",
//!           "host":"box","clientId":"c"}],"totalLag":4}]}
//! members: {"groups":[{"group":"g","state":"Stable","members":[{"consumerId":"c-1",
//!           "host":"box","clientId":"c","partitions":1,
//!           "assignment":[{"topic":"t","partition":0}]}]}]}
//! state:   {"groups":[{"group":"g","coordinator":{"id":0,"host":"/log/dir"},
//!           "assignmentStrategy":"range","state":"Stable","members":1}]}
//! ```
//!
//! Missing values (no committed offset, no owner, no strategy without members) are `null`;
//! `host` is the member's host name without the `/` Kafka's text puts before it; `totalLag` sums
//! the known lags. `--output table` prints the offsets view as one table per group with a
//! `TOTAL LAG` row per topic and one for the group, the other views as one table.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::options::{GroupsOptions, View};
use super::output::{self, Format};
use super::{emit, failed, pad};
use crate::cli::CliError;
use crate::client::groups::{Group, GroupAdmin, GroupState, Member, TopicPartition};

/// Kafka's `MISSING_COLUMN_VALUE`.
const MISSING: &str = "-";

pub(super) fn run(src: &mut GroupAdmin, o: &GroupsOptions) -> Result<(), CliError> {
    let groups = describe_all(src, o)?;
    let verbose = o.verbose;
    if o.format != Format::Text {
        return match o.view {
            View::Members => members_doc(&groups, o.format),
            View::State => state_doc(&groups, o.format),
            View::Offsets => offsets_doc(src, &groups, o.format),
        };
    }
    for d in &groups {
        match o.view {
            View::Members => members_view(d, verbose)?,
            View::State => state_view(d, verbose)?,
            View::Offsets => offsets_view(src, d, verbose)?,
        }
    }
    Ok(())
}

/// The groups named by `--group` (or every group with `--all-groups`), sorted and described;
/// Kafka's `GroupIdNotFoundException` if one does not exist.
fn describe_all(src: &mut GroupAdmin, o: &GroupsOptions) -> Result<Vec<Group>, CliError> {
    let all = o.all_groups;
    let ids: BTreeSet<String> = if all {
        src.group_ids()?.into_iter().collect()
    } else {
        o.groups.iter().cloned().collect()
    };
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        match src.describe(&id)? {
            Some(d) => out.push(d),
            None if all => {} // deleted since the listing
            None => {
                return Err(failed(format!(
                    "org.apache.kafka.common.errors.GroupIdNotFoundException: Group {id} not found."
                )));
            }
        }
    }
    Ok(out)
}

/// Kafka's `maybePrintEmptyGroupState`: the state notices on stderr; whether to print the table.
fn state_notice(d: &Group, rows: usize) -> bool {
    match d.state {
        GroupState::Empty => eprintln!("\nConsumer group '{}' has no active members.", d.group_id),
        s if s.is_rebalancing() => {
            eprintln!("\nWarning: Consumer group '{}' is rebalancing.", d.group_id)
        }
        GroupState::Dead => eprintln!("Error: Consumer group '{}' does not exist.", d.group_id),
        _ => {}
    }
    d.state != GroupState::Dead && rows > 0
}

/// Kafka prints hosts as `InetAddress.toString()`, `/<address>`; the embedded log has the
/// machine's name instead of an address.
fn host(m: &Member) -> String {
    format!("/{}", m.host)
}

/// One row of the offsets view.
struct OffsetRow<'a> {
    tp: &'a TopicPartition,
    owner: Option<&'a Member>,
    end: Option<i64>,
}

/// Members with partitions (most partitions first), then committed partitions nobody owns;
/// each block sorted by topic and partition.
fn offset_rows<'a>(src: &mut GroupAdmin, d: &'a Group) -> Result<Vec<OffsetRow<'a>>, CliError> {
    let mut owners: Vec<&Member> = d
        .members
        .iter()
        .filter(|m| !m.assignment.is_empty())
        .collect();
    owners.sort_by_key(|m| std::cmp::Reverse(m.assignment.len()));
    let mut rows: Vec<(&TopicPartition, Option<&Member>)> = Vec::new();
    let mut owned = BTreeSet::new();
    for m in owners {
        for tp in &m.assignment {
            owned.insert(tp);
            rows.push((tp, Some(m)));
        }
    }
    for tp in d.offsets.keys().filter(|tp| !owned.contains(tp)) {
        rows.push((tp, None));
    }
    let tps: Vec<TopicPartition> = rows.iter().map(|(tp, _)| (*tp).clone()).collect();
    src.load_ends(&tps)?;
    rows.into_iter()
        .map(|(tp, owner)| {
            let end = src.end(tp)?;
            Ok(OffsetRow { tp, owner, end })
        })
        .collect()
}

fn offsets_view(src: &mut GroupAdmin, d: &Group, verbose: bool) -> Result<(), CliError> {
    let rows = offset_rows(src, d)?;
    if !state_notice(d, rows.len()) {
        return Ok(());
    }
    let cells: Vec<Vec<String>> = rows.iter().map(|r| offset_cells(d, r, verbose)).collect();
    let mut header = vec!["GROUP", "TOPIC", "PARTITION"];
    if verbose {
        header.push("LEADER-EPOCH");
    }
    header.extend([
        "CURRENT-OFFSET",
        "LOG-END-OFFSET",
        "LAG",
        "CONSUMER-ID",
        "HOST",
        "CLIENT-ID",
    ]);
    let header: Vec<String> = header.into_iter().map(String::from).collect();
    let n = header.len();
    let col_max = |i: usize| cells.iter().map(|c| c[i].len()).max().unwrap_or(0).max(15);
    // GROUP, TOPIC, CONSUMER-ID and HOST fit their longest value; the others are 10 or 15 wide;
    // the last column is not padded.
    let mut widths = vec![col_max(0), col_max(1), 10];
    widths.extend(std::iter::repeat_n(15, n - 6));
    widths.extend([col_max(n - 3), col_max(n - 2), 0]);
    let mut text = String::new();
    for line in std::iter::once(&header).chain(&cells) {
        text.push('\n');
        text.push_str(&join_padded(line, &widths));
    }
    text.push('\n');
    emit(&text)
}

fn offset_cells(d: &Group, r: &OffsetRow, verbose: bool) -> Vec<String> {
    let committed = d.offsets.get(r.tp);
    let opt = |v: Option<i64>| v.map_or(MISSING.to_string(), |v| v.to_string());
    let current = committed.map(|c| c.offset);
    let lag = lag(current, r.end);
    let mut cells = vec![d.group_id.clone(), r.tp.0.clone(), r.tp.1.to_string()];
    if verbose {
        cells.push(opt(committed.and_then(|c| c.leader_epoch).map(i64::from)));
    }
    cells.extend([opt(current), opt(r.end), opt(lag)]);
    match r.owner {
        Some(m) => cells.extend([m.member_id.clone(), host(m), m.client_id.clone()]),
        None => cells.extend([MISSING, MISSING, MISSING].map(String::from)),
    }
    cells
}

/// The lag of a committed offset behind the log end, when both are known.
fn lag(current: Option<i64>, end: Option<i64>) -> Option<i64> {
    match (current, end) {
        (Some(c), Some(e)) if c != -1 => Some(e.saturating_sub(c)),
        _ => None,
    }
}

/// Fields separated by one space, each left-justified in its width (0: unpadded).
fn join_padded(fields: &[String], widths: &[usize]) -> String {
    let mut line = String::new();
    for (i, (f, w)) in fields.iter().zip(widths).enumerate() {
        if i > 0 {
            line.push(' ');
        }
        line.push_str(&pad(f, *w));
    }
    line
}

/// Kafka's assignment text: `t1:0,1;t2:3`, or `-` when empty.
fn assignment_text(tps: &[TopicPartition]) -> String {
    if tps.is_empty() {
        return MISSING.to_string();
    }
    let mut parts: Vec<(String, Vec<i32>)> = Vec::new();
    let mut sorted = tps.to_vec();
    sorted.sort();
    for (topic, p) in sorted {
        match parts.last_mut() {
            Some((t, ps)) if *t == topic => ps.push(p),
            _ => parts.push((topic, vec![p])),
        }
    }
    parts
        .iter()
        .map(|(t, ps)| {
            let ps: Vec<String> = ps.iter().map(i32::to_string).collect();
            format!("{t}:{}", ps.join(","))
        })
        .collect::<Vec<_>>()
        .join(";")
}

fn members_view(d: &Group, verbose: bool) -> Result<(), CliError> {
    state_notice(d, d.members.len());
    // GROUP-INSTANCE-ID only when some member is static, as in Kafka.
    let with_instance = d.members.iter().any(|m| m.instance_id.is_some());
    let opt = |v: Option<i32>| v.map_or(MISSING.to_string(), |v| v.to_string());
    let rows: Vec<Vec<String>> = d
        .members
        .iter()
        .map(|m| {
            let mut row = vec![d.group_id.clone(), m.member_id.clone()];
            if with_instance {
                row.push(m.instance_id.clone().unwrap_or_else(|| MISSING.to_string()));
            }
            row.extend([host(m), m.client_id.clone(), m.assignment.len().to_string()]);
            if verbose {
                // Epochs and targets are Kafka's `-` for classic groups.
                row.extend([
                    opt(m.epoch),
                    assignment_text(&m.assignment),
                    opt(m.epoch.and(d.target_epoch)),
                    m.target
                        .as_deref()
                        .map_or(MISSING.to_string(), assignment_text),
                ]);
            }
            row
        })
        .collect();
    let col_max =
        |i: usize, min: usize| rows.iter().map(|r| r[i].len()).max().unwrap_or(0).max(min);
    let mut header = vec!["GROUP", "CONSUMER-ID"];
    let mut widths = vec![col_max(0, 15), col_max(1, 15)];
    if with_instance {
        header.push("GROUP-INSTANCE-ID");
        widths.push(col_max(2, 17));
    }
    let base = header.len() + 3;
    header.extend(["HOST", "CLIENT-ID", "#PARTITIONS"]);
    widths.extend([col_max(base - 3, 15), col_max(base - 2, 15), 15]);
    if verbose {
        widths.extend([15, col_max(base + 1, 20), 15, col_max(base + 3, 20)]);
        header.extend([
            "CURRENT-EPOCH",
            "CURRENT-ASSIGNMENT",
            "TARGET-EPOCH",
            "TARGET-ASSIGNMENT",
        ]);
    }
    let header: Vec<String> = header.into_iter().map(String::from).collect();
    let mut text = format!("\n{}\n", members_line(&header, &widths, base));
    for row in &rows {
        text.push_str(&members_line(row, &widths, base));
        text.push('\n');
    }
    emit(&text)
}

/// Kafka's members format: every column padded, with a space after #PARTITIONS (the first
/// `base` columns) and none at the very end.
fn members_line(fields: &[String], widths: &[usize], base: usize) -> String {
    let (first, extra) = fields.split_at(base.min(fields.len()));
    let mut line = join_padded(first, &widths[..first.len()]);
    line.push(' ');
    if !extra.is_empty() {
        line.push_str(&join_padded(extra, &widths[base..]));
    }
    line
}

fn state_view(d: &Group, verbose: bool) -> Result<(), CliError> {
    state_notice(d, 1);
    let coordinator = format!("{}  ({})", d.coordinator.1, d.coordinator.0);
    let strategy = d.protocol.as_deref().unwrap_or(MISSING);
    let opt = |v: Option<i32>| v.map_or(MISSING.to_string(), |v| v.to_string());
    let mut header = vec!["GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE"];
    let mut row = vec![
        d.group_id.clone(),
        coordinator.clone(),
        strategy.to_string(),
        d.state.to_string(),
    ];
    let mut widths = vec![d.group_id.len().max(15), coordinator.len().max(25), 20, 20];
    if verbose {
        header.extend(["GROUP-EPOCH", "TARGET-ASSIGNMENT-EPOCH"]);
        row.extend([opt(d.group_epoch), opt(d.target_epoch)]);
        widths.extend([15, 25]);
    }
    header.push("#MEMBERS");
    row.push(d.members.len().to_string());
    widths.push(0);
    let header: Vec<String> = header.into_iter().map(String::from).collect();
    emit(&format!(
        "\n{}\n{}\n",
        join_padded(&header, &widths),
        join_padded(&row, &widths)
    ))
}

/// The groups of a `--describe --output json` document.
#[derive(Serialize)]
struct Doc<T> {
    groups: Vec<T>,
}

/// One group of the offsets view.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GroupOffsets<'a> {
    group: &'a str,
    state: &'a str,
    partitions: Vec<PartitionOffset<'a>>,
    total_lag: i64,
}

/// One partition of the offsets view.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PartitionOffset<'a> {
    topic: &'a str,
    partition: i32,
    leader_epoch: Option<i32>,
    current_offset: Option<i64>,
    log_end_offset: Option<i64>,
    lag: Option<i64>,
    consumer_id: Option<&'a str>,
    host: Option<&'a str>,
    client_id: Option<&'a str>,
}

fn partition_offset<'a>(d: &'a Group, r: &OffsetRow<'a>) -> PartitionOffset<'a> {
    let committed = d.offsets.get(r.tp);
    let current = committed.map(|c| c.offset).filter(|c| *c != -1);
    PartitionOffset {
        topic: &r.tp.0,
        partition: r.tp.1,
        leader_epoch: committed.and_then(|c| c.leader_epoch),
        current_offset: current,
        log_end_offset: r.end,
        lag: lag(current, r.end),
        consumer_id: r.owner.map(|m| m.member_id.as_str()),
        host: r.owner.map(|m| m.host.as_str()),
        client_id: r.owner.map(|m| m.client_id.as_str()),
    }
}

fn offsets_doc(src: &mut GroupAdmin, groups: &[Group], format: Format) -> Result<(), CliError> {
    let mut docs = Vec::with_capacity(groups.len());
    let mut text = String::new();
    for d in groups {
        let rows = offset_rows(src, d)?;
        let show = state_notice(d, rows.len());
        let partitions: Vec<PartitionOffset> =
            rows.iter().map(|r| partition_offset(d, r)).collect();
        let total_lag = partitions.iter().filter_map(|p| p.lag).sum();
        let doc = GroupOffsets {
            group: &d.group_id,
            state: d.state.name(),
            partitions,
            total_lag,
        };
        if format == Format::Table && show {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&offsets_table(&doc));
        }
        docs.push(doc);
    }
    match format {
        Format::Json => output::json(&Doc { groups: docs }),
        _ => emit(&text),
    }
}

/// A group's offsets table: a title line, the partitions sorted by topic and partition, a
/// `TOTAL LAG` row after each topic and one for the group.
fn offsets_table(g: &GroupOffsets) -> String {
    let mut t = output::table(
        &[
            "TOPIC",
            "PARTITION",
            "CURRENT-OFFSET",
            "LOG-END-OFFSET",
            "LAG",
            "CONSUMER-ID",
            "HOST",
            "CLIENT-ID",
        ],
        &[1, 2, 3, 4],
    );
    let mut by_topic: BTreeMap<&str, Vec<&PartitionOffset>> = BTreeMap::new();
    for p in &g.partitions {
        by_topic.entry(p.topic).or_default().push(p);
    }
    for (topic, mut parts) in by_topic {
        parts.sort_by_key(|p| p.partition);
        for p in &parts {
            t.add_row(vec![
                topic.to_string(),
                p.partition.to_string(),
                output::cell(p.current_offset),
                output::cell(p.log_end_offset),
                output::cell(p.lag),
                output::cell(p.consumer_id),
                output::cell(p.host),
                output::cell(p.client_id),
            ]);
        }
        let topic_lag: i64 = parts.iter().filter_map(|p| p.lag).sum();
        t.add_row(vec![
            topic.to_string(),
            "TOTAL LAG".to_string(),
            String::new(),
            String::new(),
            topic_lag.to_string(),
        ]);
    }
    t.add_row(vec![
        "TOTAL LAG (group)".to_string(),
        String::new(),
        String::new(),
        String::new(),
        g.total_lag.to_string(),
    ]);
    format!("GROUP {} ({})\n{}", g.group, g.state, output::render(&t))
}

/// One group of the members view.
#[derive(Serialize)]
struct GroupMembers<'a> {
    group: &'a str,
    state: &'a str,
    members: Vec<MemberDoc<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct MemberDoc<'a> {
    consumer_id: &'a str,
    host: &'a str,
    client_id: &'a str,
    partitions: usize,
    assignment: Vec<TopicPartitionDoc<'a>>,
}

#[derive(Serialize)]
struct TopicPartitionDoc<'a> {
    topic: &'a str,
    partition: i32,
}

fn members_doc(groups: &[Group], format: Format) -> Result<(), CliError> {
    let mut docs = Vec::with_capacity(groups.len());
    for d in groups {
        state_notice(d, d.members.len());
        let members = d
            .members
            .iter()
            .map(|m| {
                let mut assignment: Vec<&TopicPartition> = m.assignment.iter().collect();
                assignment.sort();
                MemberDoc {
                    consumer_id: &m.member_id,
                    host: &m.host,
                    client_id: &m.client_id,
                    partitions: m.assignment.len(),
                    assignment: assignment
                        .into_iter()
                        .map(|(topic, partition)| TopicPartitionDoc {
                            topic,
                            partition: *partition,
                        })
                        .collect(),
                }
            })
            .collect();
        docs.push(GroupMembers {
            group: &d.group_id,
            state: d.state.name(),
            members,
        });
    }
    if format == Format::Json {
        return output::json(&Doc { groups: docs });
    }
    let mut t = output::table(
        &[
            "GROUP",
            "CONSUMER-ID",
            "HOST",
            "CLIENT-ID",
            "#PARTITIONS",
            "ASSIGNMENT",
        ],
        &[4],
    );
    for g in &docs {
        for m in &g.members {
            let tps: Vec<TopicPartition> = m
                .assignment
                .iter()
                .map(|a| (a.topic.to_string(), a.partition))
                .collect();
            t.add_row(vec![
                g.group.to_string(),
                m.consumer_id.to_string(),
                m.host.to_string(),
                m.client_id.to_string(),
                m.partitions.to_string(),
                assignment_text(&tps),
            ]);
        }
    }
    emit(&output::render(&t))
}

/// One group of the state view.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GroupStateDoc<'a> {
    group: &'a str,
    coordinator: Coordinator,
    assignment_strategy: Option<&'a str>,
    state: &'a str,
    members: usize,
}

/// The group coordinator: its node id and `host:port` (the embedded log: its directory).
#[derive(Serialize)]
struct Coordinator {
    id: i32,
    host: String,
}

fn state_doc(groups: &[Group], format: Format) -> Result<(), CliError> {
    let mut docs = Vec::with_capacity(groups.len());
    for d in groups {
        state_notice(d, 1);
        docs.push(GroupStateDoc {
            group: &d.group_id,
            coordinator: Coordinator {
                id: d.coordinator.0,
                host: d.coordinator.1.clone(),
            },
            assignment_strategy: d.protocol.as_deref(),
            state: d.state.name(),
            members: d.members.len(),
        });
    }
    if format == Format::Json {
        return output::json(&Doc { groups: docs });
    }
    let mut t = output::table(
        &[
            "GROUP",
            "COORDINATOR (ID)",
            "ASSIGNMENT-STRATEGY",
            "STATE",
            "#MEMBERS",
        ],
        &[4],
    );
    for g in &docs {
        t.add_row(vec![
            g.group.to_string(),
            format!("{} ({})", g.coordinator.host, g.coordinator.id),
            output::cell(g.assignment_strategy),
            g.state.to_string(),
            g.members.to_string(),
        ]);
    }
    emit(&output::render(&t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assignment_text_is_kafkas() {
        let tp = |t: &str, p| (t.to_string(), p);
        assert_eq!(assignment_text(&[]), "-");
        assert_eq!(
            assignment_text(&[tp("t2", 3), tp("t1", 1), tp("t1", 0)]),
            "t1:0,1;t2:3"
        );
    }
}
