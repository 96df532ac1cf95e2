//! The partition assignors, in one place for every group kafkit runs:
//!
//! - [`range`], Kafka's `RangeAssignor`: on the embedded log every member computes it on its
//!   own from the same inputs, so all members agree without a coordinator; on a cluster the
//!   group leader computes it for everyone; `kafka-server-start` computes it for a consumer
//!   protocol (KIP-848) group that asks for `range`. Per topic, the members subscribed to it
//!   are sorted by member id and the partitions are split into contiguous ranges: each gets
//!   `partitions / members`, and the first `partitions % members` members get one more.
//! - [`uniform`], the server-side default of the consumer protocol: as even as the
//!   subscriptions allow, each member keeping what it had where it can.

use std::collections::{BTreeMap, BTreeSet};

use crate::kafka::TopicPartition;

/// Assigns partitions to members.
///
/// `partitions_per_topic`: topic -> partition count; topics missing from it are skipped.
/// `subscriptions`: member id -> subscribed topics. Every member gets an entry in the result
/// (possibly empty), with its partitions sorted by topic and partition.
pub fn range(
    partitions_per_topic: &BTreeMap<String, u32>,
    subscriptions: &BTreeMap<String, BTreeSet<String>>,
) -> BTreeMap<String, Vec<TopicPartition>> {
    let mut result: BTreeMap<String, Vec<TopicPartition>> = subscriptions
        .keys()
        .map(|member| (member.clone(), Vec::new()))
        .collect();
    for (topic, &count) in partitions_per_topic {
        // BTreeMap iteration gives the members already sorted by id, as Kafka sorts them.
        let members: Vec<&String> = subscriptions
            .iter()
            .filter(|(_, topics)| topics.contains(topic))
            .map(|(member, _)| member)
            .collect();
        if members.is_empty() {
            continue;
        }
        let n = members.len() as u32;
        let (per_member, extra) = (count / n, count % n);
        for (i, member) in members.into_iter().enumerate() {
            let i = i as u32;
            let start = per_member * i + i.min(extra);
            let len = per_member + u32::from(i < extra);
            if let Some(assigned) = result.get_mut(member) {
                assigned.extend((start..start + len).map(|p| (topic.clone(), p as i32)));
            }
        }
    }
    for assigned in result.values_mut() {
        assigned.sort();
    }
    result
}

/// Assigns partitions as evenly as the subscriptions allow, each member keeping partitions of
/// `previous` (its last assignment) where its quota allows, so that few partitions move.
/// Arguments and result as [`range`].
pub fn uniform(
    partitions_per_topic: &BTreeMap<String, u32>,
    subscriptions: &BTreeMap<String, BTreeSet<String>>,
    previous: &BTreeMap<String, BTreeSet<TopicPartition>>,
) -> BTreeMap<String, Vec<TopicPartition>> {
    let members: Vec<&String> = subscriptions.keys().collect();
    if members.is_empty() {
        return BTreeMap::new();
    }
    let mut out: BTreeMap<String, BTreeSet<TopicPartition>> = subscriptions
        .keys()
        .map(|id| (id.clone(), BTreeSet::new()))
        .collect();
    let mut free: BTreeSet<TopicPartition> = partitions_per_topic
        .iter()
        .flat_map(|(t, &n)| (0..n).map(move |p| (t.clone(), p as i32)))
        .collect();
    let eligible = |id: &str, tp: &TopicPartition| subscriptions[id].contains(&tp.0);
    // Quotas: the members that had the most get the remainder first, so fewer partitions move.
    let (base, extra) = (free.len() / members.len(), free.len() % members.len());
    let mut by_previous = members.clone();
    by_previous.sort_by_key(|id| std::cmp::Reverse(previous.get(*id).map_or(0, BTreeSet::len)));
    let quota: BTreeMap<&String, usize> = by_previous
        .iter()
        .enumerate()
        .map(|(i, id)| (*id, base + usize::from(i < extra)))
        .collect();
    for id in &members {
        for tp in previous.get(*id).into_iter().flatten() {
            if out[*id].len() < quota[id] && free.contains(tp) && eligible(id, tp) {
                free.remove(tp);
                out.get_mut(*id).expect("a member").insert(tp.clone());
            }
        }
    }
    // The rest, each to the eligible member with the fewest (lowest id on a tie).
    for tp in free {
        let least = members
            .iter()
            .filter(|id| eligible(id, &tp))
            .min_by_key(|id| (out[**id].len() >= quota[**id], out[**id].len()));
        if let Some(id) = least {
            out.get_mut(*id).expect("a member").insert(tp);
        }
    }
    out.into_iter()
        .map(|(id, tps)| (id, tps.into_iter().collect()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(list: &[(&str, u32)]) -> BTreeMap<String, u32> {
        list.iter().map(|(t, n)| (t.to_string(), *n)).collect()
    }

    fn subs(list: &[(&str, &[&str])]) -> BTreeMap<String, BTreeSet<String>> {
        list.iter()
            .map(|(m, ts)| (m.to_string(), ts.iter().map(|t| t.to_string()).collect()))
            .collect()
    }

    fn tps(list: &[(&str, i32)]) -> Vec<TopicPartition> {
        list.iter().map(|(t, p)| (t.to_string(), *p)).collect()
    }

    // The cases below follow Kafka's RangeAssignorTest.

    #[test]
    fn one_consumer_no_topic() {
        let out = range(&counts(&[]), &subs(&[("c", &[])]));
        assert_eq!(out["c"], tps(&[]));
    }

    #[test]
    fn one_consumer_nonexistent_topic() {
        let out = range(&counts(&[]), &subs(&[("c", &["t"])]));
        assert_eq!(out["c"], tps(&[]));
    }

    #[test]
    fn one_consumer_one_topic() {
        let out = range(&counts(&[("t", 3)]), &subs(&[("c", &["t"])]));
        assert_eq!(out["c"], tps(&[("t", 0), ("t", 1), ("t", 2)]));
    }

    #[test]
    fn only_assigns_partitions_from_subscribed_topics() {
        let out = range(&counts(&[("t", 3), ("other", 3)]), &subs(&[("c", &["t"])]));
        assert_eq!(out["c"], tps(&[("t", 0), ("t", 1), ("t", 2)]));
    }

    #[test]
    fn one_consumer_multiple_topics() {
        let out = range(
            &counts(&[("t1", 1), ("t2", 2)]),
            &subs(&[("c", &["t1", "t2"])]),
        );
        assert_eq!(out["c"], tps(&[("t1", 0), ("t2", 0), ("t2", 1)]));
    }

    #[test]
    fn two_consumers_one_topic_one_partition() {
        let out = range(
            &counts(&[("t", 1)]),
            &subs(&[("c1", &["t"]), ("c2", &["t"])]),
        );
        assert_eq!(out["c1"], tps(&[("t", 0)]));
        assert_eq!(out["c2"], tps(&[]));
    }

    #[test]
    fn two_consumers_one_topic_two_partitions() {
        let out = range(
            &counts(&[("t", 2)]),
            &subs(&[("c1", &["t"]), ("c2", &["t"])]),
        );
        assert_eq!(out["c1"], tps(&[("t", 0)]));
        assert_eq!(out["c2"], tps(&[("t", 1)]));
    }

    #[test]
    fn multiple_consumers_mixed_topics() {
        let out = range(
            &counts(&[("t1", 3), ("t2", 2)]),
            &subs(&[("c1", &["t1"]), ("c2", &["t1", "t2"]), ("c3", &["t1"])]),
        );
        assert_eq!(out["c1"], tps(&[("t1", 0)]));
        assert_eq!(out["c2"], tps(&[("t1", 1), ("t2", 0), ("t2", 1)]));
        assert_eq!(out["c3"], tps(&[("t1", 2)]));
    }

    #[test]
    fn two_consumers_two_topics_six_partitions() {
        let out = range(
            &counts(&[("t1", 3), ("t2", 3)]),
            &subs(&[("c1", &["t1", "t2"]), ("c2", &["t1", "t2"])]),
        );
        assert_eq!(
            out["c1"],
            tps(&[("t1", 0), ("t1", 1), ("t2", 0), ("t2", 1)])
        );
        assert_eq!(out["c2"], tps(&[("t1", 2), ("t2", 2)]));
    }

    #[test]
    fn members_are_ordered_by_id_and_first_ones_get_the_extra() {
        let out = range(
            &counts(&[("t", 7)]),
            &subs(&[("b", &["t"]), ("a", &["t"]), ("c", &["t"])]),
        );
        assert_eq!(out["a"], tps(&[("t", 0), ("t", 1), ("t", 2)]));
        assert_eq!(out["b"], tps(&[("t", 3), ("t", 4)]));
        assert_eq!(out["c"], tps(&[("t", 5), ("t", 6)]));
    }

    #[test]
    fn every_partition_assigned_exactly_once() {
        for members in 1..6u32 {
            for parts in 0..12u32 {
                let ids: Vec<String> = (0..members).map(|m| format!("m{m}")).collect();
                let s: BTreeMap<String, BTreeSet<String>> = ids
                    .iter()
                    .map(|m| (m.clone(), BTreeSet::from(["t".to_string()])))
                    .collect();
                let out = range(&counts(&[("t", parts)]), &s);
                let mut all: Vec<i32> = out.values().flatten().map(|(_, p)| *p).collect();
                all.sort();
                assert_eq!(all, (0..parts as i32).collect::<Vec<_>>());
                let sizes: Vec<usize> = out.values().map(Vec::len).collect();
                assert!(sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1);
            }
        }
    }

    #[test]
    fn range_splits_in_runs_and_uniform_keeps_what_it_can() {
        let subscriptions = subs(&[("a", &["t"]), ("b", &["t"])]);
        let previous = BTreeMap::from([(
            "b".to_string(),
            tps(&[("t", 0), ("t", 1), ("t", 2), ("t", 3), ("t", 4)])
                .into_iter()
                .collect(),
        )]);
        let range = range(&counts(&[("t", 5)]), &subscriptions);
        assert_eq!(
            (range["a"].clone(), range["b"].clone()),
            (
                tps(&[("t", 0), ("t", 1), ("t", 2)]),
                tps(&[("t", 3), ("t", 4)])
            )
        );
        let out = uniform(&counts(&[("t", 5)]), &subscriptions, &previous);
        assert_eq!((out["a"].len(), out["b"].len()), (2, 3));
        assert_eq!(out["b"], tps(&[("t", 0), ("t", 1), ("t", 2)]));
    }
}
