//! Consumer-group vocabulary shared by the backends: committed offsets, what a poll changed
//! in a member's assignment, and Kafka's own messages.

/// A topic and partition.
pub type TopicPartition = (String, u32);

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
