//! What `kafka-transactions` shows and does, as Kafka's Admin client describes it: listed and
//! described transactions, a partition's active producers, and the markers that abort a
//! transaction on one partition.

/// One transactional id, as ListTransactions lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransactionListing {
    pub transactional_id: String,
    /// The broker that coordinates it.
    pub coordinator: i32,
    pub producer_id: i64,
    /// Kafka's state name (`Ongoing`, `CompleteCommit`, ...).
    pub state: String,
}

/// What ListTransactions keeps.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TransactionFilter {
    /// Only transactions open at least this long (ms); -1 for all.
    pub duration_ms: i64,
    /// Only ids that this Java regular expression matches whole.
    pub pattern: Option<String>,
    /// Only these producer ids (empty: all).
    pub producer_ids: Vec<i64>,
}

/// One transactional id, as DescribeTransactions describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransactionDescription {
    pub coordinator: i32,
    pub transactional_id: String,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub state: String,
    pub timeout_ms: i32,
    /// When the open (or last) transaction began; -1 for none.
    pub start_ms: i64,
    /// The partitions of the open transaction.
    pub partitions: Vec<(String, i32)>,
}

/// An active producer of a partition, as DescribeProducers describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProducerDescription {
    pub producer_id: i64,
    pub producer_epoch: i32,
    /// -1 until a marker of its came.
    pub coordinator_epoch: i32,
    pub last_sequence: i32,
    pub last_timestamp: i64,
    /// Where its open transaction begins on the partition; -1 for none.
    pub current_txn_start_offset: i64,
}

/// An ABORT marker for one producer's open transaction on one partition (Kafka's
/// `AbortTransactionSpec`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AbortSpec {
    pub topic: String,
    pub partition: i32,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub coordinator_epoch: i32,
}
