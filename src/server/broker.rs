//! The server's shared state: the log directory it serves, its settings, and one handle per
//! partition it has touched (the partition's log, its append queue and its producers'
//! sequence state), plus the signal that wakes fetches waiting for data.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use sha2::Digest;
use tokio::sync::{Semaphore, watch};

use super::appender::AppendQueue;
use super::config::ServerConfig;
use super::groups::Coordinator;
use super::log::Logger;
use super::share::ShareGroups;
use super::txn::Transactions;
use crate::kafka::uuid::uuid_to_string;
use crate::local::group::GroupStore;
use crate::local::txn::TxnStore;
use crate::local::{LocalError, LogDir, PartitionLog, TopicMeta};

/// One partition as the server holds it between requests.
#[derive(Debug)]
pub struct ServedPartition {
    pub topic: String,
    pub partition: u32,
    /// The topic id the handle was made for: a topic deleted and made again is another handle.
    pub topic_id: String,
    pub log: PartitionLog,
    /// Produce requests waiting to be appended together (see `appender`).
    pub queue: AppendQueue,
}

/// Everything the connections share.
#[derive(Debug)]
pub struct Broker {
    pub dir: LogDir,
    pub config: ServerConfig,
    /// The host and port clients are told to connect to.
    pub advertised: (String, u16),
    /// A stable id for this log directory, in Kafka's form (22 characters of base64url).
    pub cluster_id: String,
    pub log: Logger,
    partitions: Mutex<HashMap<(String, u32), Arc<ServedPartition>>>,
    /// Bumped after every append, so fetches waiting for data look again at once.
    appended: watch::Sender<u64>,
    /// The next producer id handed out by InitProducerId.
    next_producer_id: AtomicI64,
    /// The first producer id of this run: older ones were handed out before a restart.
    first_producer_id: i64,
    /// Consumer groups: networked members, committed offsets in the log dir's group store.
    pub groups: Coordinator,
    /// Fetch data read for responses not yet written, in KiB, across every connection: a
    /// client that does not read its responses holds its part until it does or goes, and
    /// the server's memory stays bounded whatever the clients do (see `handlers::fetch`).
    pub fetch_budget: Arc<Semaphore>,
    /// The transaction coordinator.
    pub txns: Transactions,
    /// The networked members of share groups.
    pub shares: ShareGroups,
}

/// The most fetch data held for unwritten responses at once.
pub const FETCH_BUDGET_BYTES: usize = 64 * 1024 * 1024;

impl Broker {
    pub fn new(
        dir: LogDir,
        config: ServerConfig,
        advertised: (String, u16),
        log: Logger,
    ) -> Broker {
        let cluster_id = cluster_id_for(dir.root());
        let root = dir.root().to_path_buf();
        // Producer ids must not repeat across restarts (a producer that outlived a restart
        // keeps its id), so they start from the clock: 2^20 ids per millisecond of uptime.
        let first_producer_id =
            crate::local::txn::producer_ids_of_millisecond(crate::kafka::now_ms());
        Broker {
            dir,
            config,
            advertised,
            cluster_id,
            log,
            partitions: Mutex::new(HashMap::new()),
            appended: watch::channel(0).0,
            next_producer_id: AtomicI64::new(first_producer_id),
            first_producer_id,
            groups: Coordinator::new(GroupStore::new(&root)),
            fetch_budget: Arc::new(Semaphore::new(FETCH_BUDGET_BYTES / 1024)),
            txns: Transactions::new(TxnStore::new(&root)),
            shares: ShareGroups::default(),
        }
    }

    /// A topic's metadata with the broker's `log.*` defaults under its own overrides (for its
    /// partition settings; configs are described from the log directory itself).
    pub fn topic(&self, name: &str) -> Result<Option<TopicMeta>, LocalError> {
        Ok(self.dir.topic(name)?.map(|mut meta| {
            for (k, v) in &self.config.topic_defaults {
                meta.configs.entry(k.clone()).or_insert_with(|| v.clone());
            }
            meta
        }))
    }

    /// The largest batch a topic accepts: its `max.message.bytes`, else `message.max.bytes`.
    pub fn max_batch_bytes(&self, meta: &TopicMeta) -> usize {
        if meta.configs.contains_key("max.message.bytes") {
            meta.max_message_bytes()
        } else {
            self.config.message_max_bytes.max(0) as usize
        }
    }

    /// Whether a request may create a missing topic.
    pub fn auto_create_topics(&self) -> Result<bool, LocalError> {
        match self.config.auto_create_topics {
            Some(on) => Ok(on),
            None => self.dir.auto_create_topics(),
        }
    }

    /// Creates a missing topic with the default partition count, as a broker does when a
    /// client asks for it in Metadata; `None` when auto-creation is off.
    pub fn auto_create(&self, name: &str) -> Result<Option<TopicMeta>, LocalError> {
        if !self.auto_create_topics()? {
            return Ok(None);
        }
        let partitions = match self.config.num_partitions {
            Some(n) => n,
            None => self.dir.default_partitions()?,
        };
        match self.dir.create_topic(name, partitions, BTreeMap::new()) {
            Ok(_) => {
                self.log.info(&format!(
                    "Created topic {name} with {partitions} partition(s) (auto.create.topics.enable)"
                ));
                self.topic(name)
            }
            Err(LocalError::TopicExists(_)) => self.topic(name),
            Err(e) => Err(e),
        }
    }

    /// The handle of a partition of `meta`, made on first use and made again when the topic
    /// was deleted and created anew meanwhile.
    pub fn partition(
        &self,
        meta: &TopicMeta,
        partition: u32,
    ) -> Result<Arc<ServedPartition>, LocalError> {
        let key = (meta.name.clone(), partition);
        if let Some(p) = self.partitions().get(&key)
            && p.topic_id == meta.id
        {
            return Ok(Arc::clone(p));
        }
        let log = self.dir.partition(&meta.name, partition)?;
        let handle = Arc::new(ServedPartition {
            topic: meta.name.clone(),
            partition,
            topic_id: meta.id.clone(),
            log,
            queue: AppendQueue::default(),
        });
        self.partitions().insert(key, Arc::clone(&handle));
        Ok(handle)
    }

    /// Drops the cached partitions of topics that no longer exist, or exist again under
    /// another id (deleted by a tool on the directory), so that the segment files they keep
    /// open are closed and their space freed. A topic whose metadata cannot be read now is
    /// kept: dropping a live partition would lose its producers' sequence state.
    pub fn forget_deleted_topics(&self) {
        let cached: HashSet<(String, String)> = self
            .partitions()
            .values()
            .map(|p| (p.topic.clone(), p.topic_id.clone()))
            .collect();
        // The directory is read without holding the map's lock.
        let gone: HashSet<(String, String)> = cached
            .into_iter()
            .filter(|(name, id)| match self.dir.topic(name) {
                Ok(None) => true,
                Ok(Some(meta)) => meta.id != *id,
                Err(_) => false,
            })
            .collect();
        if !gone.is_empty() {
            self.partitions()
                .retain(|_, p| !gone.contains(&(p.topic.clone(), p.topic_id.clone())));
        }
    }

    /// Drops the cached partitions of `topic`, just deleted through this server.
    pub fn forget_topic(&self, topic: &str) {
        self.partitions().retain(|(name, _), _| name != topic);
    }

    fn partitions(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<(String, u32), Arc<ServedPartition>>> {
        // A panic while holding it cannot leave the map inconsistent (single inserts).
        self.partitions.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Tells waiting fetches that data was appended.
    pub fn notify_appended(&self) {
        self.appended.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// A receiver that sees the next [`Broker::notify_appended`].
    pub fn appended(&self) -> watch::Receiver<u64> {
        self.appended.subscribe()
    }

    /// Whether `producer` was handed out before this run (a producer that outlived a restart).
    pub fn is_of_an_earlier_run(&self, producer: i64) -> bool {
        (0..self.first_producer_id).contains(&producer)
    }

    /// A producer id never handed out before by this log directory's server.
    pub fn new_producer_id(&self) -> i64 {
        self.next_producer_id.fetch_add(1, Ordering::Relaxed)
    }
}

/// A cluster id derived from the log directory's path: stable across restarts, different for
/// different directories, in the form Kafka prints (16 bytes, base64url without padding).
fn cluster_id_for(root: &std::path::Path) -> String {
    let path = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let digest = sha2::Sha256::digest(path.as_os_str().as_encoded_bytes());
    // The first 16 bytes of the digest make the id, printed as Kafka prints any UUID.
    let id: [u8; 16] = digest[..16]
        .try_into()
        .expect("a SHA-256 digest has 32 bytes");
    uuid_to_string(&id)
}
