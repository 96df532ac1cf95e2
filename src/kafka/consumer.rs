//! Consumer vocabulary shared by the client and the cluster backend: Kafka's
//! `isolation.level` and `group.protocol`. Plain enums, so that the client's consumer settings
//! name them without reaching into a backend.

/// `isolation.level`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    ReadUncommitted,
    ReadCommitted,
}

impl Isolation {
    /// Its code on the wire (Fetch and ListOffsets requests).
    pub fn code(self) -> i8 {
        match self {
            Isolation::ReadUncommitted => 0,
            Isolation::ReadCommitted => 1,
        }
    }
}

/// Kafka's `group.protocol`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum GroupProtocol {
    /// JoinGroup/SyncGroup/Heartbeat, the assignment computed by the group's leader.
    #[default]
    Classic,
    /// KIP-848's ConsumerGroupHeartbeat, the assignment computed by the coordinator.
    Consumer,
}
