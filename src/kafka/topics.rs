//! Topics as Kafka's admin client lists, describes, creates and grows them.

/// A topic as a listing names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicListing {
    pub name: String,
    /// Kafka's own topics (`__consumer_offsets`, ...).
    pub internal: bool,
}

/// A topic with its partitions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicDescription {
    pub name: String,
    /// The topic id as Kafka prints it: URL-safe base64 without padding (22 characters).
    pub id: String,
    /// Sorted by partition.
    pub partitions: Vec<PartitionDescription>,
}

/// One partition: where its replicas are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionDescription {
    pub partition: i32,
    /// `None` when the partition has no leader.
    pub leader: Option<i32>,
    pub replicas: Vec<i32>,
    pub isr: Vec<i32>,
    /// Eligible leader replicas (KIP-966); `None` when the answer did not carry them (Kafka's
    /// tool then prints `N/A`).
    pub elr: Option<Vec<i32>>,
    /// Last known eligible leader replicas; `None` as for `elr`.
    pub last_known_elr: Option<Vec<i32>>,
}

/// A topic to create. `None` leaves the choice to the cluster (`num.partitions`,
/// `default.replication.factor`), as Kafka's admin client does by sending -1.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewTopic {
    pub name: String,
    pub partitions: Option<i32>,
    pub replication_factor: Option<i16>,
    /// Replica broker ids per partition, in partition order; when given, the counts are unset.
    pub assignments: Vec<Vec<i32>>,
    pub configs: Vec<(String, String)>,
}

/// A partition count increase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionIncrease {
    pub name: String,
    /// The new total partition count.
    pub count: i32,
    /// Replica broker ids of each new partition; `None` lets the cluster place them.
    pub assignments: Option<Vec<Vec<i32>>>,
}
