//! Consumer-group vocabulary shared by the backends, the server and the tools: Kafka's group
//! states, committed offsets, what a poll changed in a member's assignment, and Kafka's own
//! messages.

use std::fmt;

use super::TopicPartition;

/// A consumer group's state, as Kafka's `GroupState` names it: the text brokers send in
/// ListGroups and DescribeGroups and the tools print. One enum for the embedded log (which is
/// only ever Empty, Stable or PreparingRebalance), the server's coordinator (the classic states
/// and KIP-848's) and what a cluster reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GroupState {
    /// A name Kafka's admin client does not know (or none at all): it parses such text to
    /// `UNKNOWN` and the tool prints `Unknown`, so ours does too.
    Unknown,
    /// Members are (re)joining: a classic rebalance, or on the embedded log members still
    /// releasing or claiming partitions.
    PreparingRebalance,
    /// Classic: every member joined, the leader's assignment (SyncGroup) is awaited.
    CompletingRebalance,
    /// Every member owns its assignment.
    Stable,
    /// A group that does not exist (deleted, or never was).
    Dead,
    /// No live members; the group exists for its committed offsets.
    Empty,
    /// KIP-848: the group epoch moved past the target assignment's, a new target is computed.
    Assigning,
    /// KIP-848: members are moving to the target assignment.
    Reconciling,
}

impl GroupState {
    /// The states `kafka-consumer-groups --list --state` accepts (those of classic and
    /// consumer groups), in the order Kafka's "Valid states are" message lists them: every
    /// state but `Unknown`.
    pub const LISTABLE: [GroupState; 7] = [
        GroupState::PreparingRebalance,
        GroupState::CompletingRebalance,
        GroupState::Stable,
        GroupState::Dead,
        GroupState::Empty,
        GroupState::Assigning,
        GroupState::Reconciling,
    ];

    /// The names of [`GroupState::LISTABLE`], for completions and messages.
    pub const LISTABLE_NAMES: [&'static str; 7] = {
        let mut names = [""; 7];
        let mut i = 0;
        while i < names.len() {
            names[i] = GroupState::LISTABLE[i].name();
            i += 1;
        }
        names
    };

    /// Kafka's name for the state.
    pub const fn name(self) -> &'static str {
        match self {
            GroupState::Unknown => "Unknown",
            GroupState::PreparingRebalance => "PreparingRebalance",
            GroupState::CompletingRebalance => "CompletingRebalance",
            GroupState::Stable => "Stable",
            GroupState::Dead => "Dead",
            GroupState::Empty => "Empty",
            GroupState::Assigning => "Assigning",
            GroupState::Reconciling => "Reconciling",
        }
    }

    /// Kafka's `GroupState.parse`: the name in any case; [`GroupState::Unknown`] for any other
    /// text (as Kafka's admin client reads a broker's state, and its tool a `--state` list).
    pub fn parse(text: &str) -> GroupState {
        // Every name but `Unknown`'s, which parses to `Unknown` all the same.
        GroupState::LISTABLE
            .into_iter()
            .find(|s| s.name().eq_ignore_ascii_case(text))
            .unwrap_or(GroupState::Unknown)
    }

    /// Whether members are moving partitions (a classic or a KIP-848 rebalance), the states
    /// for which Kafka's `--describe` warns that the group is rebalancing.
    pub fn is_rebalancing(self) -> bool {
        matches!(
            self,
            GroupState::PreparingRebalance
                | GroupState::CompletingRebalance
                | GroupState::Assigning
                | GroupState::Reconciling
        )
    }
}

impl fmt::Display for GroupState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Kafka's message for `GROUP_SUBSCRIBED_TO_TOPIC`.
pub const GROUP_SUBSCRIBED_TO_TOPIC: &str = "Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it.";

/// A committed offset of one partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommittedOffset {
    /// The next offset the group will consume.
    pub offset: i64,
    /// The leader epoch of the committed record, when known.
    pub leader_epoch: Option<i32>,
}

/// What a poll changed in the partitions a group member owns. Apply `revoked` first, then
/// `acquired` (after fencing, a partition can be in both).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AssignmentChange {
    /// Newly owned partitions and the group's committed offset for each (`None`: nothing
    /// committed, apply `auto.offset.reset`).
    pub acquired: Vec<(TopicPartition, Option<i64>)>,
    /// Partitions no longer owned. Unless `fenced`, their positions were committed first (on a
    /// cluster, when auto-commit is on).
    pub revoked: Vec<TopicPartition>,
    /// The member had been evicted: everything it owned was revoked without a commit, and it
    /// rejoined.
    pub fenced: bool,
}

impl AssignmentChange {
    /// True if nothing changed.
    pub fn is_empty(&self) -> bool {
        self.acquired.is_empty() && self.revoked.is_empty() && !self.fenced
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_names_are_kafkas() {
        assert_eq!(
            GroupState::PreparingRebalance.to_string(),
            "PreparingRebalance"
        );
        assert_eq!(GroupState::Empty.name(), "Empty");
        assert_eq!(GroupState::Stable.name(), "Stable");
        assert_eq!(GroupState::Dead.name(), "Dead");
        assert_eq!(
            GroupState::LISTABLE_NAMES.join(", "),
            "PreparingRebalance, CompletingRebalance, Stable, Dead, Empty, Assigning, Reconciling"
        );
    }

    #[test]
    fn states_parse_in_any_case() {
        for state in GroupState::LISTABLE {
            assert_eq!(GroupState::parse(state.name()), state);
            assert_eq!(GroupState::parse(&state.name().to_uppercase()), state);
            assert_eq!(GroupState::parse(&state.name().to_lowercase()), state);
        }
        assert_eq!(GroupState::parse("unknown"), GroupState::Unknown);
        assert_eq!(GroupState::parse("NotReady"), GroupState::Unknown);
        assert_eq!(GroupState::parse(""), GroupState::Unknown);
        assert_eq!(GroupState::parse(" Stable"), GroupState::Unknown);
    }
}
