//! The embedded log's error type: every variant names the file or value and what to do.

use std::path::PathBuf;

use kafka_protocol::ResponseError;

/// Why an operation on the embedded log failed.
#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "corrupt record batch in {} at byte {position}: {reason}; nothing was changed: restore the file from a copy, or run kafka-topics --repair --topic {} to cut the partition back to before it (what follows is kept aside in *.damaged files)",
        path.display(),
        topic_of(path)
    )]
    Corrupt {
        path: PathBuf,
        position: u64,
        reason: String,
    },
    #[error("Topic '{0}' already exists.")]
    TopicExists(String),
    #[error("Topic '{0}' does not exist as expected")]
    UnknownTopic(String),
    #[error("{0}")]
    Invalid(String),
    /// A read or timestamp lookup asked for an offset the log does not hold (below the log start
    /// offset after retention, or past the log end). `log_end` is exclusive.
    #[error(
        "offset {offset} is out of range: the partition holds offsets {log_start} (log start) up to {log_end} (log end)"
    )]
    OffsetOutOfRange {
        offset: i64,
        log_start: i64,
        log_end: i64,
    },
    #[error("timed out after {waited_ms} ms waiting for the lock on {}; another kafkit process holds it", path.display())]
    LockTimeout { path: PathBuf, waited_ms: u64 },
    /// A reset, delete or offset delete refused because the group has live members.
    #[error(
        "Assignments can only be reset if the group '{group}' is inactive, but the current state is {state}."
    )]
    GroupNotEmpty {
        /// The group id.
        group: String,
        /// Its state: Stable or PreparingRebalance.
        state: super::group::GroupState,
    },
    /// The group has neither committed offsets nor live members.
    #[error("Group {0} not found.")]
    GroupNotFound(String),
    /// The member was removed from its group (dead or past its session timeout) and must rejoin.
    #[error(
        "member '{member_id}' of group '{group}' was removed from the group after its session timeout, so it can no longer commit; it rejoins on its next poll"
    )]
    MemberFenced {
        /// The group id.
        group: String,
        /// The evicted member's id.
        member_id: String,
    },
    /// A refusal that Kafka names with an error kind (an invalid config, a topic that does
    /// not exist, a record too large), with Kafka's message: the client and the server report
    /// it as a cluster would.
    #[error("{message}")]
    Kafka {
        kind: ResponseError,
        message: String,
    },
    /// Encoding a record batch failed (a codec error).
    #[error(transparent)]
    Batch(#[from] crate::record::RecordError),
    /// An error with what was being done.
    #[error("{context}: {source}")]
    Context {
        context: String,
        #[source]
        source: Box<LocalError>,
    },
}

impl LocalError {
    /// A refusal of the given kind with Kafka's message.
    pub fn kafka(kind: ResponseError, message: impl Into<String>) -> Self {
        LocalError::Kafka {
            kind,
            message: message.into(),
        }
    }

    /// Wraps this error with what was being done.
    pub fn context(self, context: impl Into<String>) -> Self {
        LocalError::Context {
            context: context.into(),
            source: Box::new(self),
        }
    }

    /// Kafka's error kind for it, when it has one.
    pub fn kind(&self) -> Option<ResponseError> {
        match self {
            LocalError::Kafka { kind, .. } => Some(*kind),
            LocalError::TopicExists(_) => Some(ResponseError::TopicAlreadyExists),
            LocalError::UnknownTopic(_) => Some(ResponseError::UnknownTopicOrPartition),
            LocalError::OffsetOutOfRange { .. } => Some(ResponseError::OffsetOutOfRange),
            LocalError::Context { source, .. } => source.kind(),
            _ => None,
        }
    }

    /// Wraps an I/O error with what was being done, e.g. `"cannot open /x/00.log"`.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        LocalError::Io {
            context: context.into(),
            source,
        }
    }

    /// Whether this is a write refused because the log dir is read-only to us (a read-only
    /// mount, or another user's files).
    pub fn is_read_only(&self) -> bool {
        matches!(self, LocalError::Io { source, .. } if is_read_only(source))
    }
}

/// Whether an I/O error says the file system or the file cannot be written by us.
pub(crate) fn is_read_only(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::ReadOnlyFilesystem | std::io::ErrorKind::PermissionDenied
    )
}

/// Result alias for the embedded log.
pub type Result<T, E = LocalError> = std::result::Result<T, E>;

/// Adds a context message to `std::io::Result`s.
pub trait IoContext<T> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|e| LocalError::io(what(), e))
    }
}

/// The topic a partition file belongs to: its directory is `<topic>-<partition>`.
fn topic_of(path: &std::path::Path) -> String {
    let dir = path
        .parent()
        .and_then(|d| d.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match dir.rsplit_once('-') {
        Some((topic, partition)) if partition.parse::<u32>().is_ok() => topic.to_string(),
        _ => "<topic>".to_string(),
    }
}
