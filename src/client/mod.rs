//! The client API the tools use, the same on the embedded log and on a Kafka cluster.
//!
//! [`Client::open`] picks the backend: a cluster when bootstrap servers are given, otherwise
//! the embedded log in a directory. Each operation is written once per backend (in `local`
//! and `remote`, private to the crate) and dispatched here, so the tools never know where the
//! data lives.
//!
//! - [`brokers`]: a cluster's brokers and the API versions each supports.
//! - [`configs`]: entity configs (topics, brokers, broker defaults, groups) with their sources,
//!   for `kafka-configs`.
//! - [`consumer`]: the consumer engine: assignment, fetching, offset reset, commits, and group
//!   membership on either backend.
//! - [`groups`]: consumer-group admin: list, describe, reset offsets, delete.
//! - [`offsets`]: partition offsets: earliest, latest, max timestamp, by time.
//! - [`producer`]: the producer: one accumulator, batches handed to either backend.
//! - [`records`]: deleting records below an offset (DeleteRecords).
//! - [`share`]: the share consumer: share groups (KIP-932), Kafka's queues;
//!   [`share_groups`]: share-group admin.
//! - [`topics`]: topic admin: list, describe, configs, create, add partitions, delete.
//! - [`transactions`]: transaction admin: list, describe, producers, abort, fence.
//! - [`topic_name`], [`topic_config`]: Kafka's topic-name rules and topic configs;
//!   [`topic_pattern`]: topic patterns in Java's regex syntax.
//! - [`error`]: [`ClientError`], one error type with Kafka's error kinds.

pub mod brokers;
pub mod configs;
pub mod consumer;
pub mod error;
pub mod groups;
pub mod offsets;
pub mod producer;
pub mod records;
pub mod share;
pub mod share_groups;
pub mod topic_pattern;
pub mod topics;
pub mod transactions;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use crate::kafka::{topic_config, topic_name};
pub use error::{ClientError, Result};
pub use producer::{BatchSettings, BatchStats, Producer, ProducerRecord, ProducerSettings};
pub use topic_pattern::TopicPattern;
pub use topics::{
    ConfigChange, ConfigEntry, NewTopic, PartitionDescription, PartitionIncrease,
    TopicConfigChanges, TopicDescription, TopicListing, TopicOutcome,
};

use crate::local::LogDir;
use crate::remote::{ClientConfig, Cluster};

/// Where a client connects, as the tools' connection options give it.
#[derive(Debug, Clone, Default)]
pub struct ConnectOptions {
    /// `host:port[,host:port]`: a cluster. `None`: the embedded log.
    pub bootstrap_servers: Option<String>,
    /// The embedded log's directory; `None`: `$KAFKIT_LOG_DIR`, else `$XDG_DATA_HOME/kafkit`,
    /// else `~/.local/share/kafkit`.
    pub log_dir: Option<PathBuf>,
    /// Kafka client properties (`request.timeout.ms`, `security.protocol`, ...). A cluster
    /// uses them; the embedded log has nothing to configure.
    pub properties: BTreeMap<String, String>,
}

/// The backend behind a [`Client`]: each operation of the client API dispatches on it.
#[derive(Debug)]
enum Backend {
    /// The embedded log in a directory.
    Local(LogDir),
    /// A Kafka cluster, connected to one of its bootstrap servers. Boxed: the client with its
    /// runtime is far larger than a log dir handle.
    Remote(Box<Cluster>),
}

/// The warnings the backends raised since the last call (the embedded log cutting back a torn
/// tail), oldest first, for the tool to print.
pub fn drain_warnings() -> Vec<String> {
    crate::local::warnings::drain()
}

/// The log directory to use when no `--log-dir` was given: `$KAFKIT_LOG_DIR`, else
/// `$XDG_DATA_HOME/kafkit`, else `~/.local/share/kafkit`.
pub fn default_log_dir() -> Option<PathBuf> {
    let non_empty = |name| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = non_empty("KAFKIT_LOG_DIR") {
        return Some(PathBuf::from(dir));
    }
    if let Some(data) = non_empty("XDG_DATA_HOME") {
        return Some(Path::new(&data).join("kafkit"));
    }
    non_empty("HOME").map(|home| Path::new(&home).join(".local/share/kafkit"))
}

/// A connection to the embedded log or to a cluster.
#[derive(Debug)]
pub struct Client {
    backend: Backend,
}

impl Client {
    /// Opens the backend the options name: connects to the first bootstrap server that
    /// answers, or opens (creating it if new) the log directory.
    pub fn open(options: &ConnectOptions) -> Result<Client> {
        let backend = match &options.bootstrap_servers {
            Some(servers) => {
                let mut config = ClientConfig::default();
                for (name, value) in &options.properties {
                    config.set(name, value)?;
                }
                Backend::Remote(Box::new(Cluster::connect(servers, config)?))
            }
            None => {
                let dir = match &options.log_dir {
                    Some(dir) => dir.clone(),
                    None => default_log_dir().ok_or(ClientError::NoLogDir)?,
                };
                Backend::Local(LogDir::open(&dir)?)
            }
        };
        Ok(Client { backend })
    }
}
