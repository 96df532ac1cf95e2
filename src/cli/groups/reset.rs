//! `--reset-offsets`: scopes (`--all-topics`, `--topic t`, `--topic t:0,2`, or the plan file),
//! the eight scenarios with Kafka's clamping and warnings, dry run or `--execute`, and the
//! NEW-OFFSET table or `--export` CSV.
//!
//! Unlike Kafka, which resets group after group, every group's plan is computed and checked
//! first: any error (an active group, a missing partition, a bad date or CSV line) changes no
//! committed offset. Rows are sorted by group, topic and partition (Kafka: hash-map order).
//!
//! `--output json` prints the plan, dry run or executed, as
//! `{"groups":[{"group":"g","partitions":[{"topic":"t","partition":0,"newOffset":0}]}],
//! "executed":false}`; `--output table` as a GROUP / TOPIC / PARTITION / NEW-OFFSET table.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::exceptions::exception;
use super::options::GroupsOptions;
use super::options::{SCENARIOS, Scenario};
use super::output::{self, Format};
use super::plan_file::{self, Plans};
use super::time::{millis_before_now, parse_datetime, parse_duration};
use super::{emit, failed, java_split, pad, tp_name};
use crate::cli::progress::{self, Counter};
use crate::cli::{CliError, usage};
use crate::client::groups::{CommittedOffset, GroupAdmin, GroupState, TopicPartition};

/// A group's committed offsets.
type Committed = BTreeMap<TopicPartition, CommittedOffset>;

/// Kafka's message for a topic (without partitions) that does not exist.
const UNKNOWN_TOPIC: &str = "org.apache.kafka.common.errors.UnknownTopicOrPartitionException: This server does not host this topic-partition.";

pub(super) fn run(src: &mut GroupAdmin, o: &GroupsOptions) -> Result<(), CliError> {
    let ids: BTreeSet<String> = if o.all_groups {
        src.group_ids()?.into_iter().collect()
    } else {
        o.groups.iter().cloned().collect()
    };
    let mut planner = Planner { o, src, file: None };
    let mut plans = Plans::new();
    let mut errors = Vec::new();
    for id in ids {
        let described = planner.src.describe(&id)?;
        let state = described.as_ref().map_or(GroupState::Dead, |d| d.state);
        if !matches!(state, GroupState::Empty | GroupState::Dead) {
            errors.push(format!(
                "Assignments can only be reset if the group '{id}' is inactive, but the current state is {state}."
            ));
            continue;
        }
        let committed = described.map(|d| d.offsets).unwrap_or_default();
        match planner.plan(&id, &committed)? {
            Some(plan) => {
                plans.insert(id, plan);
            }
            None => errors.push(format!("No reset plan for group {id} found")),
        }
    }
    if let Some(last) = errors.pop() {
        for e in errors {
            eprintln!("Error: {e}");
        }
        return Err(anyhow::anyhow!(last).into());
    }
    let executed = o.execute;
    if executed {
        execute(planner.src, &plans, progress::wanted(o.no_progress))?;
    }
    if o.format == Format::Json {
        return output::json(&plan_doc(&plans, executed));
    }
    if o.format == Format::Table {
        return emit(&plan_table(&plans));
    }
    if o.export {
        emit(&format!(
            "{}\n",
            plan_file::export(&plans, o.groups.len() == 1)
        ))
    } else {
        emit(&table(&plans))
    }
}

/// Writes each group's plan (the store refuses a group that gained live members meanwhile).
fn execute(src: &mut GroupAdmin, plans: &Plans, show_progress: bool) -> Result<(), CliError> {
    let total = plans.values().map(|p| p.len() as u64).sum();
    let counter = Counter::new(show_progress, total, "partitions");
    counter.stage("committed");
    for (group, plan) in plans {
        if plan.is_empty() {
            continue;
        }
        if let Some(((t, p), code)) = src.reset_offsets(group, plan)? {
            return Err(failed(format!(
                "{} (committing the offset of {t}-{p} for group {group})",
                exception(code)
            )));
        }
        counter.add(plan.len() as u64);
    }
    Ok(())
}

/// Kafka's `printOffsetsToReset`: `%n%-Gs %-Ts %-10s %s`, then a final newline.
fn table(plans: &Plans) -> String {
    let gw = plans.keys().map(String::len).max().unwrap_or(0).max(15);
    let tw = plans
        .values()
        .flat_map(|p| p.keys().map(|(t, _)| t.len()))
        .max()
        .unwrap_or(0)
        .max(15);
    let line = |g: &str, t: &str, p: &str, o: &str| {
        format!("\n{} {} {} {o}", pad(g, gw), pad(t, tw), pad(p, 10))
    };
    let mut text = String::new();
    if !plans.is_empty() {
        text.push_str(&line("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"));
    }
    for (group, plan) in plans {
        for ((topic, partition), offset) in plan {
            text.push_str(&line(
                group,
                topic,
                &partition.to_string(),
                &offset.to_string(),
            ));
        }
    }
    text.push('\n');
    text
}

/// `--reset-offsets --output json`.
#[derive(Serialize)]
struct PlanDoc<'a> {
    groups: Vec<GroupPlan<'a>>,
    executed: bool,
}

#[derive(Serialize)]
struct GroupPlan<'a> {
    group: &'a str,
    partitions: Vec<NewOffset<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct NewOffset<'a> {
    topic: &'a str,
    partition: i32,
    new_offset: i64,
}

fn plan_doc(plans: &Plans, executed: bool) -> PlanDoc<'_> {
    PlanDoc {
        groups: plans
            .iter()
            .map(|(group, plan)| GroupPlan {
                group,
                partitions: plan
                    .iter()
                    .map(|((topic, partition), offset)| NewOffset {
                        topic,
                        partition: *partition,
                        new_offset: *offset,
                    })
                    .collect(),
            })
            .collect(),
        executed,
    }
}

/// The plan as a comfy-table.
fn plan_table(plans: &Plans) -> String {
    let mut t = output::table(&["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"], &[2, 3]);
    for (group, plan) in plans {
        for ((topic, partition), offset) in plan {
            t.add_row(vec![
                group.clone(),
                topic.clone(),
                partition.to_string(),
                offset.to_string(),
            ]);
        }
    }
    output::render(&t)
}

/// A `--topic` value: `t` or `t:0,2`.
pub(crate) enum TopicArg {
    Whole(String),
    Partitions(Vec<TopicPartition>),
}

/// Parses a `--topic` value with Kafka's messages (usage errors).
pub(crate) fn parse_topic_arg(arg: &str) -> Result<TopicArg, CliError> {
    if !arg.contains(':') {
        return Ok(TopicArg::Whole(arg.to_string()));
    }
    let parts = java_split(arg, ':');
    let [topic, partitions] = parts.as_slice() else {
        return usage(format!(
            "Invalid topic arg '{arg}', expected topic name and partitions"
        ));
    };
    java_split(partitions, ',')
        .into_iter()
        .map(|p| match p.parse::<i32>() {
            Ok(n) => Ok((topic.to_string(), n)),
            Err(_) => usage(format!(
                "Invalid partition '{p}' specified in topic arg '{arg}''"
            )),
        })
        .collect::<Result<_, _>>()
        .map(TopicArg::Partitions)
}

/// Kafka's check before any reset: `The partitions "t-5,t-6" do not exist` unless every
/// partition exists, then `The partitions "t-0" have no leader` unless each has a leader (on a
/// cluster whose replicas of it are all down, its offsets cannot be read).
fn require_valid(src: &mut GroupAdmin, tps: &BTreeSet<TopicPartition>) -> Result<(), CliError> {
    let mut missing = Vec::new();
    for tp in tps {
        if !src.exists(tp)? {
            missing.push(tp_name(tp));
        }
    }
    if !missing.is_empty() {
        return Err(failed(format!(
            "The partitions \"{}\" do not exist",
            missing.join(",")
        )));
    }
    let mut leaderless = Vec::new();
    for tp in tps {
        if !src.has_leader(tp)? {
            leaderless.push(tp_name(tp));
        }
    }
    if !leaderless.is_empty() {
        return Err(failed(format!(
            "The partitions \"{}\" have no leader",
            leaderless.join(",")
        )));
    }
    Ok(())
}

fn committed_offset(committed: &Committed, tp: &TopicPartition) -> Option<i64> {
    committed.get(tp).map(|c| c.offset)
}

/// Where a scenario other than `--from-file` moves each partition.
#[derive(Clone, Copy)]
enum Target {
    Offset(i64),
    Earliest,
    Latest,
    Shift(i64),
    /// The first offset at or after this time (ms).
    Time(i64),
    Current,
}

/// Computes new offsets for one group at a time; caches the plan file.
struct Planner<'s, 'a, 'o> {
    o: &'o GroupsOptions,
    src: &'s mut GroupAdmin<'a>,
    file: Option<Plans>,
}

impl Planner<'_, '_, '_> {
    /// The group's new offsets; `None` if `--from-file` has no rows for it.
    fn plan(
        &mut self,
        group: &str,
        committed: &Committed,
    ) -> Result<Option<BTreeMap<TopicPartition, i64>>, CliError> {
        let scope = self.scope(committed)?;
        require_valid(self.src, &scope)?;
        let o = self.o;
        // On a cluster each partition may cost a ListOffsets round trip: show how far along.
        let counter = Counter::new(
            progress::wanted(o.no_progress),
            scope.len() as u64,
            "partitions",
        );
        counter.stage("planned");
        let Some(scenario) = &o.scenario else {
            let list: Vec<String> = SCENARIOS.iter().map(|(s, _)| format!("[{s}]")).collect();
            return usage(format!(
                "Option '[reset-offsets]' requires one of the following scenarios: [{}]",
                list.join(", ")
            ));
        };
        let target = match scenario {
            Scenario::FromFile(path) => return self.plan_from_file(group, path),
            Scenario::ToOffset(n) => Target::Offset(*n),
            Scenario::ToEarliest => Target::Earliest,
            Scenario::ToLatest => Target::Latest,
            Scenario::ShiftBy(n) => Target::Shift(*n),
            Scenario::ToCurrent => Target::Current,
            Scenario::ToDatetime(text) => Target::Time(parse_datetime(text).map_err(failed)?),
            Scenario::ByDuration(text) => {
                Target::Time(millis_before_now(parse_duration(text).map_err(failed)?))
            }
        };
        let mut plan = BTreeMap::new();
        for tp in scope {
            let v = self.new_offset(&tp, target, committed)?;
            plan.insert(tp, v);
            counter.add(1);
        }
        Ok(Some(plan))
    }

    /// One partition's new offset.
    fn new_offset(
        &mut self,
        tp: &TopicPartition,
        target: Target,
        committed: &Committed,
    ) -> Result<i64, CliError> {
        match target {
            Target::Offset(n) => self.clamp(tp, n),
            Target::Earliest => self.bound(tp, true),
            Target::Latest => self.bound(tp, false),
            Target::Shift(n) => match committed_offset(committed, tp) {
                Some(current) => self.clamp(tp, current.saturating_add(n)),
                // The group's state, not the command line, is at fault: a runtime error (Kafka
                // exits 1 too, after its usage text).
                None => Err(anyhow::anyhow!(
                    "Cannot shift offset for partition {} since there is no current committed offset",
                    tp_name(tp)
                )
                .into()),
            },
            Target::Time(ts) => self.offset_for_time(tp, ts),
            Target::Current => match committed_offset(committed, tp) {
                Some(c) => Ok(c),
                None => self.bound(tp, false),
            },
        }
    }

    /// The partitions to reset: `--all-topics` (the committed ones), `--topic`, or none with
    /// `--from-file`.
    fn scope(&mut self, committed: &Committed) -> Result<BTreeSet<TopicPartition>, CliError> {
        let o = self.o;
        if o.all_topics {
            return Ok(committed.keys().cloned().collect());
        }
        if o.topics.is_empty() {
            if matches!(o.scenario, Some(Scenario::FromFile(_))) {
                return Ok(BTreeSet::new());
            }
            return usage("One of the reset scopes should be defined: --all-topics, --topic.");
        }
        let mut scope = BTreeSet::new();
        for arg in &o.topics {
            match parse_topic_arg(arg)? {
                TopicArg::Partitions(tps) => scope.extend(tps),
                TopicArg::Whole(topic) => {
                    let Some(n) = self.src.partitions(&topic)? else {
                        return Err(failed(format!("{UNKNOWN_TOPIC} (--topic {topic})")));
                    };
                    scope.extend((0..n as i32).map(|p| (topic.clone(), p)));
                }
            }
        }
        Ok(scope)
    }

    /// The log start (`earliest`) or end, with Kafka's usage error if it cannot be found.
    fn bound(&mut self, tp: &TopicPartition, earliest: bool) -> Result<i64, CliError> {
        let v = if earliest {
            self.src.start(tp)?
        } else {
            self.src.end(tp)?
        };
        let which = if earliest { "starting" } else { "ending" };
        v.map_or_else(
            || {
                usage(format!(
                    "Error getting {which} offset of topic partition: {}",
                    tp_name(tp)
                ))
            },
            Ok,
        )
    }

    /// Kafka's `checkOffsetsRange`: `n` clamped into [log start, log end], with its warnings.
    fn clamp(&mut self, tp: &TopicPartition, n: i64) -> Result<i64, CliError> {
        let end = self.bound(tp, false)?;
        if n > end {
            eprintln!(
                "WARN: New offset ({n}) is higher than latest offset for topic partition {}. Value will be set to {end}",
                tp_name(tp)
            );
            return Ok(end);
        }
        let start = self.bound(tp, true)?;
        if n < start {
            eprintln!(
                "WARN: New offset ({n}) is lower than earliest offset for topic partition {}. Value will be set to {start}",
                tp_name(tp)
            );
            return Ok(start);
        }
        Ok(n)
    }

    /// The first offset at or after `ts`, else (with Kafka's warning) the log end.
    fn offset_for_time(&mut self, tp: &TopicPartition, ts: i64) -> Result<i64, CliError> {
        if let Some(offset) = self.src.offset_for_time(tp, ts)? {
            return Ok(offset);
        }
        eprintln!(
            "Warn: Partition {} from topic {} is empty. Falling back to latest known offset.",
            tp.1, tp.0
        );
        self.bound(tp, false)
    }

    /// `--from-file`: the group's rows, checked to exist and clamped like `--to-offset`.
    fn plan_from_file(
        &mut self,
        group: &str,
        path: &str,
    ) -> Result<Option<BTreeMap<TopicPartition, i64>>, CliError> {
        let requested = match self.file_plans(path)?.get(group) {
            Some(plan) => plan.clone(),
            None => return Ok(None),
        };
        require_valid(self.src, &requested.keys().cloned().collect())?;
        let mut plan = BTreeMap::new();
        for (tp, n) in requested {
            let v = self.clamp(&tp, n)?;
            plan.insert(tp, v);
        }
        Ok(Some(plan))
    }

    fn file_plans(&mut self, path: &str) -> Result<&Plans, CliError> {
        if self.file.is_none() {
            let text = crate::files::read_limited(path.as_ref(), crate::files::CONFIG_FILE_LIMIT)
                .map_err(|e| failed(format!("cannot read reset plan file {path}: {e}")))?;
            let single = match self.o.groups.as_slice() {
                [one] => Some(one.as_str()),
                _ => None,
            };
            let plans = plan_file::parse(&String::from_utf8_lossy(&text), single)
                .map_err(|why| failed(format!("bad reset plan file {path}: {why}")))?;
            self.file = Some(plans);
        }
        Ok(self.file.get_or_insert_with(Plans::new))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage_msg(r: Result<TopicArg, CliError>) -> String {
        match r {
            Err(CliError::Usage(m)) => m,
            _ => panic!("expected a usage error"),
        }
    }

    #[test]
    fn topic_args_parse_like_kafka() {
        assert!(matches!(parse_topic_arg("t"), Ok(TopicArg::Whole(t)) if t == "t"));
        let Ok(TopicArg::Partitions(tps)) = parse_topic_arg("t:0,2") else {
            panic!()
        };
        assert_eq!(tps, vec![("t".to_string(), 0), ("t".to_string(), 2)]);
        assert_eq!(
            usage_msg(parse_topic_arg("t:")),
            "Invalid topic arg 't:', expected topic name and partitions"
        );
        assert_eq!(
            usage_msg(parse_topic_arg("t:0:1")),
            "Invalid topic arg 't:0:1', expected topic name and partitions"
        );
        assert_eq!(
            usage_msg(parse_topic_arg("t:x")),
            "Invalid partition 'x' specified in topic arg 't:x''"
        );
    }

    #[test]
    fn table_is_kafkas() {
        let plans = Plans::from([("g".to_string(), BTreeMap::from([(("t".to_string(), 0), 5)]))]);
        assert_eq!(
            table(&plans),
            format!(
                "\n{:<15} {:<15} {:<10} NEW-OFFSET\n{:<15} {:<15} {:<10} 5\n",
                "GROUP", "TOPIC", "PARTITION", "g", "t", "0"
            )
        );
        assert_eq!(table(&Plans::new()), "\n");
    }
}
