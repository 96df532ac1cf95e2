//! `--describe`: the offsets view (default, `--offsets`), `--members` and `--state`, each with
//! `--verbose`, in Kafka's formats and column widths. Groups are printed sorted by id; a group
//! that does not exist fails the whole command before anything is printed, as in Kafka 4.3.

use std::collections::BTreeSet;

use super::logs::Logs;
use super::{Opts, emit, failed, pad};
use crate::cli::CliError;
use crate::local::LogDir;
use crate::local::group::{GroupDescription, GroupState, MemberDescription, TopicPartition};
use crate::local::logdir::LOCAL_NODE_ID;

/// Kafka's `MISSING_COLUMN_VALUE`.
const MISSING: &str = "-";

pub(super) fn run(dir: &LogDir, o: &Opts) -> Result<(), CliError> {
    let groups = describe_all(dir, o)?;
    let verbose = o.has("verbose");
    let mut logs = Logs::new(dir);
    for d in &groups {
        if o.has("members") {
            members_view(d, verbose)?;
        } else if o.has("state") {
            state_view(dir, d, verbose)?;
        } else {
            offsets_view(&mut logs, d, verbose)?;
        }
    }
    Ok(())
}

/// The groups named by `--group` (or every group with `--all-groups`), sorted and described;
/// Kafka's `GroupIdNotFoundException` if one does not exist.
fn describe_all(dir: &LogDir, o: &Opts) -> Result<Vec<GroupDescription>, CliError> {
    let store = dir.groups();
    let all = o.has("all-groups");
    let ids: BTreeSet<String> = if all {
        store.list()?.into_iter().collect()
    } else {
        o.groups().into_iter().map(str::to_string).collect()
    };
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        match store.describe(&id)? {
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
fn state_notice(d: &GroupDescription, rows: usize) -> bool {
    match d.state {
        GroupState::Empty => eprintln!("\nConsumer group '{}' has no active members.", d.group_id),
        GroupState::PreparingRebalance => {
            eprintln!("\nWarning: Consumer group '{}' is rebalancing.", d.group_id)
        }
        GroupState::Dead => eprintln!("Error: Consumer group '{}' does not exist.", d.group_id),
        GroupState::Stable => {}
    }
    d.state != GroupState::Dead && rows > 0
}

/// Kafka prints hosts as `InetAddress.toString()`, `/<address>`; the embedded log has the
/// machine's name instead of an address.
fn host(m: &MemberDescription) -> String {
    format!("/{}", m.host)
}

/// One row of the offsets view.
struct OffsetRow<'a> {
    tp: &'a TopicPartition,
    owner: Option<&'a MemberDescription>,
    end: Option<i64>,
}

/// Members with partitions (most partitions first), then committed partitions nobody owns;
/// each block sorted by topic and partition.
fn offset_rows<'a>(
    logs: &mut Logs,
    d: &'a GroupDescription,
) -> Result<Vec<OffsetRow<'a>>, CliError> {
    let mut owners: Vec<&MemberDescription> = d
        .members
        .iter()
        .filter(|m| !m.assignment.is_empty())
        .collect();
    owners.sort_by_key(|m| std::cmp::Reverse(m.assignment.len()));
    let mut rows: Vec<(&TopicPartition, Option<&MemberDescription>)> = Vec::new();
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
    rows.into_iter()
        .map(|(tp, owner)| {
            let end = logs.end(&(tp.0.clone(), i64::from(tp.1)))?;
            Ok(OffsetRow { tp, owner, end })
        })
        .collect()
}

fn offsets_view(logs: &mut Logs, d: &GroupDescription, verbose: bool) -> Result<(), CliError> {
    let rows = offset_rows(logs, d)?;
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

fn offset_cells(d: &GroupDescription, r: &OffsetRow, verbose: bool) -> Vec<String> {
    let committed = d.offsets.get(r.tp);
    let opt = |v: Option<i64>| v.map_or(MISSING.to_string(), |v| v.to_string());
    let current = committed.map(|c| c.offset);
    let lag = match (current, r.end) {
        (Some(c), Some(e)) if c != -1 => Some(e.saturating_sub(c)),
        _ => None,
    };
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
    let mut parts: Vec<(String, Vec<u32>)> = Vec::new();
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
            let ps: Vec<String> = ps.iter().map(u32::to_string).collect();
            format!("{t}:{}", ps.join(","))
        })
        .collect::<Vec<_>>()
        .join(";")
}

fn members_view(d: &GroupDescription, verbose: bool) -> Result<(), CliError> {
    state_notice(d, d.members.len());
    let rows: Vec<Vec<String>> = d
        .members
        .iter()
        .map(|m| {
            let mut row = vec![
                d.group_id.clone(),
                m.member_id.clone(),
                host(m),
                m.client_id.clone(),
                m.assignment.len().to_string(),
            ];
            if verbose {
                // Epochs and targets are Kafka's `-` for classic groups.
                row.extend([
                    MISSING.to_string(),
                    assignment_text(&m.assignment),
                    MISSING.to_string(),
                    MISSING.to_string(),
                ]);
            }
            row
        })
        .collect();
    let col_max =
        |i: usize, min: usize| rows.iter().map(|r| r[i].len()).max().unwrap_or(0).max(min);
    let mut widths = vec![
        col_max(0, 15),
        col_max(1, 15),
        col_max(2, 15),
        col_max(3, 15),
        15,
    ];
    let mut header = vec!["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS"];
    if verbose {
        widths.extend([15, col_max(6, 20), 15, col_max(8, 20)]);
        header.extend([
            "CURRENT-EPOCH",
            "CURRENT-ASSIGNMENT",
            "TARGET-EPOCH",
            "TARGET-ASSIGNMENT",
        ]);
    }
    let header: Vec<String> = header.into_iter().map(String::from).collect();
    let mut text = format!("\n{}\n", members_line(&header, &widths));
    for row in &rows {
        text.push_str(&members_line(row, &widths));
        text.push('\n');
    }
    text.push('\n');
    emit(&text)
}

/// Kafka's members format: every column padded, with a space after #PARTITIONS and none at the
/// very end.
fn members_line(fields: &[String], widths: &[usize]) -> String {
    let (base, extra) = fields.split_at(5.min(fields.len()));
    let mut line = join_padded(base, &widths[..base.len()]);
    line.push(' ');
    if !extra.is_empty() {
        line.push_str(&join_padded(extra, &widths[5..]));
    }
    line
}

fn state_view(dir: &LogDir, d: &GroupDescription, verbose: bool) -> Result<(), CliError> {
    state_notice(d, 1);
    let coordinator = format!("{}  ({LOCAL_NODE_ID})", dir.root().display());
    let strategy = if d.members.is_empty() {
        MISSING
    } else {
        d.protocol
    };
    let mut header = vec!["GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE"];
    let mut row = vec![
        d.group_id.clone(),
        coordinator.clone(),
        strategy.to_string(),
        d.state.name().to_string(),
    ];
    let mut widths = vec![d.group_id.len().max(15), coordinator.len().max(25), 20, 20];
    if verbose {
        header.extend(["GROUP-EPOCH", "TARGET-ASSIGNMENT-EPOCH"]);
        row.extend([MISSING.to_string(), MISSING.to_string()]);
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
