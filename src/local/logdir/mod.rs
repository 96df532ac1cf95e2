//! The log directory: its location, format marker, topic metadata and the root lock.
//!
//! Layout (partition directories are Kafka's own):
//!
//! ```text
//! <root>/kafkit-format              format marker, "kafkit-log-format=1"
//! <root>/.lock                      permanent; LOCK_EX for metadata changes, LOCK_SH per producer flush
//! <root>/config.properties          optional log-dir settings (auto.create.topics.enable, num.partitions)
//! <root>/topics/<topic>.properties  topic id, partition count and config overrides (`<topic>.p`
//!                                   for names too long for that suffix: over 244 characters)
//! <root>/topics/<topic id>.ends     the topic's change board, a hint for idle readers (`board`)
//! <root>/<topic>-<partition>/       Kafka's segment files, indexes, partition.metadata
//! ```
//!
//! A topic exists exactly when its metadata file exists: creation writes it last (tmp, fsync,
//! rename) and deletion removes it first, so a crash in between leaves only orphan partition
//! directories, which the next create of that name clears.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

mod lifecycle;

use super::board::{Slot, board_path};
use super::cleaner::{CleanerConfig, CompactionConfig, Outcome};
use super::error::{IoContext, LocalError, Result};
use super::lock::{FileLock, LockMode};
use super::partition::{PARTITION_METADATA, PartitionConfig, PartitionLog};
use super::segment::{LOG_SUFFIX, segment_path};
use crate::kafka::repair::PartitionRepair;
use crate::kafka::{topic_config, topic_name};

const FORMAT_FILE: &str = "kafkit-format";
const FORMAT_LINE: &str = "kafkit-log-format=1";
const TOPICS_DIR: &str = "topics";
const CONFIG_FILE: &str = "config.properties";
/// The node id the embedded log reports as leader and only replica.
pub const LOCAL_NODE_ID: i32 = 0;
/// The lock `kafka-server-start` holds while it serves the directory.
pub const SERVER_LOCK: &str = ".server.lock";

/// A topic's metadata as stored in `topics/<name>.properties`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopicMeta {
    pub name: String,
    /// 22-character URL-safe base64, as Kafka prints topic ids.
    pub id: String,
    pub partitions: u32,
    /// Config overrides given at creation (only non-default entries).
    pub configs: BTreeMap<String, String>,
}

impl TopicMeta {
    /// The partition settings that follow from this topic's configs.
    ///
    /// Time and size retention apply only when `cleanup.policy` holds `delete` (`compact`
    /// alone, or an empty policy, keeps everything but what the cleaner removes), and a
    /// compacted topic rolls its segments at least every `max.compaction.lag.ms`, as Kafka's
    /// do, so that the cleaner can reach them.
    pub fn partition_config(&self) -> PartitionConfig {
        let get = |name| topic_config::effective_i64(&self.configs, name);
        let policy = self.cleanup_policy();
        let deletes = policy.iter().any(|p| p == "delete");
        let mut segment_ms = get("segment.ms");
        if policy.iter().any(|p| p == "compact") {
            segment_ms = segment_ms.min(get("max.compaction.lag.ms"));
        }
        PartitionConfig {
            segment_bytes: topic_config::effective_segment_bytes(&self.configs).max(1) as u64,
            segment_ms,
            retention_ms: if deletes { get("retention.ms") } else { -1 },
            retention_bytes: if deletes { get("retention.bytes") } else { -1 },
            index_interval_bytes: get("index.interval.bytes").max(0) as u64,
            segment_index_bytes: get("segment.index.bytes").max(8) as u64,
            log_append_time: topic_config::effective(&self.configs, "message.timestamp.type")
                == "LogAppendTime",
        }
    }

    /// `cleanup.policy`: `delete`, `compact`, both, or none.
    pub fn cleanup_policy(&self) -> Vec<String> {
        topic_config::effective_list(&self.configs, "cleanup.policy")
    }

    /// Whether the cleaner compacts this topic (its `cleanup.policy` holds `compact`): its
    /// records must have keys.
    pub fn is_compacted(&self) -> bool {
        self.cleanup_policy().iter().any(|p| p == "compact")
    }

    /// The cleaner's settings for this topic, when it is compacted.
    pub fn compaction_config(&self) -> Option<CompactionConfig> {
        if !self.is_compacted() {
            return None;
        }
        let get = |name| topic_config::effective_i64(&self.configs, name);
        Some(CompactionConfig {
            min_cleanable_dirty_ratio: topic_config::effective_f64(
                &self.configs,
                "min.cleanable.dirty.ratio",
            ),
            min_compaction_lag_ms: get("min.compaction.lag.ms"),
            max_compaction_lag_ms: get("max.compaction.lag.ms"),
            delete_retention_ms: get("delete.retention.ms"),
            partition: self.partition_config(),
        })
    }

    /// `max.message.bytes`: the largest record batch the topic accepts.
    pub fn max_message_bytes(&self) -> usize {
        topic_config::effective_i64(&self.configs, "max.message.bytes").max(0) as usize
    }
}

/// The largest log a cleaning with a time budget takes on (a producer's exit): about what a
/// round gets through in 100 ms.
pub const BUDGETED_LOG_BYTES: u64 = 32 << 20;

/// An open log directory.
#[derive(Debug, Clone)]
pub struct LogDir {
    root: PathBuf,
}

impl LogDir {
    /// Opens `root`. A directory that does not exist yet is created (silently, with its format
    /// marker) only by the first command that writes, so a command that fails or only reads
    /// leaves nothing behind.
    ///
    /// Refuses a directory that holds a Kafka broker's data (`meta.properties`) or anything
    /// else that is not an empty directory or a kafkit log directory.
    pub fn open(root: &Path) -> Result<LogDir> {
        let marker = root.join(FORMAT_FILE);
        if root.exists() && !root.is_dir() {
            return Err(LocalError::Invalid(format!(
                "{} is not a directory; give --log-dir (or KAFKIT_LOG_DIR) a directory",
                root.display()
            )));
        }
        if root.join("meta.properties").exists() {
            return Err(LocalError::Invalid(format!(
                "{} holds a Kafka broker's data (meta.properties); kafkit will not use it as its log directory. Choose another directory with --log-dir or KAFKIT_LOG_DIR",
                root.display()
            )));
        }
        match fs::read_to_string(&marker) {
            Ok(text) => {
                if text.trim() != FORMAT_LINE {
                    return Err(LocalError::Invalid(format!(
                        "{} has an unknown format marker {:?}; it was written by another version of kafkit. Use that version, or another --log-dir",
                        marker.display(),
                        text.trim()
                    )));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Self::check_new(root)?,
            Err(e) => {
                return Err(LocalError::io(
                    format!("cannot read {}", marker.display()),
                    e,
                ));
            }
        }
        Ok(LogDir {
            root: root.to_path_buf(),
        })
    }

    /// Whether the directory is a log directory yet: a new one holds no topics, and a command
    /// that only reads or fails need not make it one.
    pub fn is_formatted(&self) -> bool {
        self.root.join(FORMAT_FILE).exists()
    }

    /// Refuses, before anything is written, a new log directory that could not become one.
    fn check_new(root: &Path) -> Result<()> {
        if root.is_file() {
            return Err(LocalError::Invalid(format!(
                "log directory {} is a file, not a directory; choose another --log-dir",
                root.display()
            )));
        }
        if root.exists()
            && let Some(name) = Self::foreign_entry(root)?
        {
            return Err(Self::not_a_log_dir(root, &name));
        }
        Ok(())
    }

    /// Turns a new or empty directory into a log directory, if it is not one yet. Concurrent
    /// first uses serialize on the log-dir lock, so exactly one of them writes the marker.
    pub(crate) fn initialize(root: &Path) -> Result<()> {
        let marker = root.join(FORMAT_FILE);
        if marker.exists() {
            return Ok(());
        }
        // Refuse a directory with other content before creating anything in it.
        Self::check_new(root)?;
        fs::create_dir_all(root)
            .context(|| format!("cannot create log directory {}", root.display()))?;
        let _lock = FileLock::acquire(&root.join(".lock"), LockMode::Exclusive)?;
        if marker.exists() {
            return Ok(());
        }
        if let Some(name) = Self::foreign_entry(root)? {
            return Err(Self::not_a_log_dir(root, &name));
        }
        fs::create_dir_all(root.join(TOPICS_DIR))
            .context(|| format!("cannot create {}", root.join(TOPICS_DIR).display()))?;
        write_atomically(&marker, format!("{FORMAT_LINE}\n").as_bytes())
    }

    /// The first entry of `root` that a new log directory may not contain.
    fn foreign_entry(root: &Path) -> Result<Option<String>> {
        let entries = fs::read_dir(root).context(|| format!("cannot read {}", root.display()))?;
        for entry in entries {
            let entry = entry.context(|| format!("cannot read {}", root.display()))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            // A concurrent first use may be writing the marker (through a temporary file).
            // config.properties may be written before the first use, to set its defaults.
            let ours = name == ".lock"
                || name == TOPICS_DIR
                || name == CONFIG_FILE
                || name.starts_with(FORMAT_FILE)
                || is_temporary_file(&name);
            if !ours {
                return Ok(Some(name));
            }
        }
        Ok(None)
    }

    fn not_a_log_dir(root: &Path, entry: &str) -> LocalError {
        LocalError::Invalid(format!(
            "{} is not empty (it holds {entry:?}) and is not a kafkit log directory (no {FORMAT_FILE} file); choose an empty or new directory with --log-dir",
            root.display()
        ))
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Takes the log-dir lock: exclusive for metadata changes, shared while writing data. The
    /// first lock of a new log directory creates it. Holding the lock exclusively, nothing else
    /// creates or deletes a topic, so the temporaries a killed create or delete left are
    /// removed then.
    pub fn lock(&self, mode: LockMode) -> Result<FileLock> {
        Self::initialize(&self.root)?;
        let lock = FileLock::acquire(&self.root.join(".lock"), mode)?;
        if mode == LockMode::Exclusive {
            self.remove_stale_temporaries()?;
        }
        Ok(lock)
    }

    /// Removes what a create or delete killed partway left: temporary partition directories,
    /// partition directories renamed for deletion, and temporary metadata files.
    fn remove_stale_temporaries(&self) -> Result<()> {
        for name in entry_names(&self.root)? {
            if is_stale_partition_dir(&name) && !self.is_live_partition_dir(&name)? {
                lifecycle::remove_tree(&self.root.join(&name))?;
            }
        }
        let topics = self.root.join(TOPICS_DIR);
        for name in entry_names(&topics)? {
            if name.ends_with(".tmp")
                || (name.contains(".tmp-") && topic_of_meta_file(&name).is_none())
            {
                let path = topics.join(&name);
                fs::remove_file(&path).context(|| format!("cannot remove {}", path.display()))?;
            }
        }
        Ok(())
    }

    /// Whether `name` is `<topic>-<partition>` of an existing topic.
    fn is_live_partition_dir(&self, name: &str) -> Result<bool> {
        let Some((topic, partition)) = name.rsplit_once('-') else {
            return Ok(false);
        };
        let Ok(partition) = partition.parse::<u32>() else {
            return Ok(false);
        };
        Ok(self.topic(topic)?.is_some_and(|t| partition < t.partitions))
    }

    /// A log-dir setting from `config.properties`, if set.
    pub fn setting(&self, name: &str) -> Result<Option<String>> {
        Ok(self.settings()?.remove(name))
    }

    /// Every log-dir setting of `config.properties`, sorted by name. The first read in a
    /// process warns about keys the embedded log does not read (a misspelt `num.partition`
    /// would otherwise be ignored without a word).
    pub fn settings(&self) -> Result<BTreeMap<String, String>> {
        let settings = parse_properties(&self.settings_text()?);
        static WARNED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        let unknown: Vec<&str> = settings
            .keys()
            .map(String::as_str)
            .filter(|key| !super::configs::is_setting(key))
            .collect();
        if !unknown.is_empty() && !WARNED.swap(true, std::sync::atomic::Ordering::Relaxed) {
            super::warnings::push(format!(
                "{} holds {} that the embedded log does not read, and ignores; it reads only auto.create.topics.enable and num.partitions",
                self.root.join(CONFIG_FILE).display(),
                unknown
                    .iter()
                    .map(|k| format!("'{k}'"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        Ok(settings)
    }

    /// The text of `config.properties`; empty when there is none.
    fn settings_text(&self) -> Result<String> {
        let path = self.root.join(CONFIG_FILE);
        match fs::read_to_string(&path) {
            Ok(text) => Ok(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
            Err(e) => Err(LocalError::io(format!("cannot read {}", path.display()), e)),
        }
    }

    /// Sets (`Some`) or removes (`None`) settings in `config.properties`, rewritten atomically
    /// under the log-dir lock. Other lines, comments included, are kept as they are; a file
    /// with a line that is not `key=value` (which the settings' reader would not see either)
    /// is refused rather than rewritten around it.
    pub fn alter_settings(&self, changes: &[(String, Option<String>)]) -> Result<()> {
        for (key, value) in changes {
            refuse_line_breaks(key, value.as_deref().unwrap_or(""))?;
        }
        let _lock = self.lock(LockMode::Exclusive)?;
        let path = self.root.join(CONFIG_FILE);
        let mut text = String::new();
        let mut pending: BTreeMap<&str, Option<&str>> = changes
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_deref()))
            .collect();
        for (number, line) in self.settings_text()?.lines().enumerate() {
            let trimmed = line.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with('!') {
                text.push_str(line);
                text.push('\n');
                continue;
            }
            let Some((key, _)) = trimmed.split_once('=') else {
                return Err(LocalError::Invalid(format!(
                    "line {} of {} is not key=value, so the file cannot be rewritten around it; fix it by hand",
                    number + 1,
                    path.display()
                )));
            };
            match pending.remove(key.trim()) {
                None => text.push_str(line),
                Some(Some(value)) => text.push_str(&format!("{}={value}", key.trim())),
                Some(None) => continue,
            }
            text.push('\n');
        }
        for (key, value) in pending {
            if let Some(value) = value {
                text.push_str(&format!("{key}={value}\n"));
            }
        }
        write_atomically(&path, text.as_bytes())
    }

    /// Whether producing to a missing topic creates it (`auto.create.topics.enable`, default true).
    pub fn auto_create_topics(&self) -> Result<bool> {
        Ok(self
            .setting("auto.create.topics.enable")?
            .is_none_or(|v| !v.trim().eq_ignore_ascii_case("false")))
    }

    /// A topic's metadata, creating the topic when it is missing and the log dir allows it
    /// (`auto.create.topics.enable`, with `num.partitions`), as a broker does for producers
    /// and consumers; `None` when it is missing and may not be created.
    pub fn topic_or_auto_create(&self, name: &str) -> Result<Option<TopicMeta>> {
        if let Some(meta) = self.topic(name)? {
            return Ok(Some(meta));
        }
        if !self.auto_create_topics()? {
            return Ok(None);
        }
        match self.create_topic(name, self.default_partitions()?, Default::default()) {
            Ok(meta) => Ok(Some(meta)),
            // Another process created it first.
            Err(LocalError::TopicExists(_)) => self.topic(name),
            Err(e) => Err(e),
        }
    }

    /// Partitions of a topic created without a count (`num.partitions`, default 1, as Kafka's
    /// broker): by `kafka-topics --create` and by a producer auto-creating its topic.
    pub fn default_partitions(&self) -> Result<u32> {
        match self.setting("num.partitions")? {
            None => Ok(1),
            Some(v) => v
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|p| *p > 0)
                .ok_or_else(|| {
                    LocalError::Invalid(format!(
                        "num.partitions={v} in {} is not a positive integer; fix or remove it",
                        self.root.join(CONFIG_FILE).display()
                    ))
                }),
        }
    }

    fn meta_path(&self, name: &str) -> PathBuf {
        self.root.join(TOPICS_DIR).join(meta_file_name(name))
    }

    /// Every topic name, sorted.
    pub fn topic_names(&self) -> Result<Vec<String>> {
        let mut names: Vec<String> = entry_names(&self.root.join(TOPICS_DIR))?
            .iter()
            .filter_map(|file| topic_of_meta_file(file))
            .map(str::to_string)
            .collect();
        names.sort();
        Ok(names)
    }

    /// A topic's metadata, or `None` if it does not exist.
    pub fn topic(&self, name: &str) -> Result<Option<TopicMeta>> {
        if topic_name::validate(name).is_err() {
            return Ok(None);
        }
        let path = self.meta_path(name);
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(LocalError::io(format!("cannot read {}", path.display()), e)),
        };
        let damaged = |what: &str| {
            LocalError::Invalid(format!(
                "topic metadata file {} is damaged ({what}); restore it or delete the topic",
                path.display()
            ))
        };
        let mut props = parse_properties(&text);
        let id = props
            .remove("topic.id")
            .ok_or_else(|| damaged("no topic.id"))?;
        let partitions = props
            .remove("partitions")
            .and_then(|p| p.parse::<u32>().ok())
            .filter(|&p| p > 0)
            .ok_or_else(|| damaged("no valid partitions"))?;
        let configs = props
            .into_iter()
            .filter_map(|(k, v)| k.strip_prefix("config.").map(|k| (k.to_string(), v)))
            .collect();
        Ok(Some(TopicMeta {
            name: name.to_string(),
            id,
            partitions,
            configs,
        }))
    }

    /// A topic's metadata, or [`LocalError::UnknownTopic`].
    pub fn require_topic(&self, name: &str) -> Result<TopicMeta> {
        self.topic(name)?
            .ok_or_else(|| LocalError::UnknownTopic(name.to_string()))
    }

    fn partition_dir(&self, topic: &str, partition: u32) -> PathBuf {
        self.root.join(format!("{topic}-{partition}"))
    }

    /// Opens one partition's log, after checking that its directory belongs to the topic (its
    /// `partition.metadata` names the topic's id): a directory left by another topic of the
    /// same name, or copied in from elsewhere, is refused rather than served.
    pub fn partition(&self, topic: &str, partition: u32) -> Result<PartitionLog> {
        match self.topic(topic)? {
            Some(meta) => self.partition_of(&meta, partition),
            // Deleted meanwhile: opening fails or reads nothing, as for any vanished topic.
            None => PartitionLog::open(&self.partition_dir(topic, partition)),
        }
    }

    /// [`LogDir::partition`] of a topic whose metadata the caller has just read (a consumer
    /// opening thousands of partitions reads it once, not once per partition).
    pub fn partition_of(&self, meta: &TopicMeta, partition: u32) -> Result<PartitionLog> {
        let dir = self.partition_dir(&meta.name, partition);
        let log = PartitionLog::open(&dir)?;
        if let Some(owner) = partition_owner(&dir)?
            && owner != meta.id
        {
            let topic = &meta.name;
            return Err(LocalError::Invalid(format!(
                "{} names topic id {owner}, but topic '{topic}' has id {}: the directory belongs to another topic; move it away, restore the topic's own, or adopt it with kafka-topics --repair --topic {topic}",
                dir.join(PARTITION_METADATA).display(),
                meta.id
            )));
        }
        Ok(log.with_board(Slot::new(self.board_path(meta), partition)))
    }

    /// The topic's change board (see [`super::board`]).
    pub fn board_path(&self, meta: &TopicMeta) -> PathBuf {
        board_path(&self.root.join(TOPICS_DIR), &meta.id)
    }

    /// Whether partition `p` of `topic` provably holds no records, from one `stat`: its first
    /// segment is its only one (an empty segment never rolls) and is empty. The cleaner may
    /// leave an empty first segment before others, so a compacted partition (one with a
    /// cleaner checkpoint, a second `stat`) is not judged this way. `false` when that cannot
    /// be told this way (open the partition to know).
    pub fn partition_is_empty(&self, topic: &str, partition: u32) -> bool {
        let dir = self.partition_dir(topic, partition);
        let first = segment_path(&dir, 0, LOG_SUFFIX);
        fs::metadata(first).is_ok_and(|m| m.is_file() && m.len() == 0)
            && !crate::local::segment::may_have_gaps(&dir)
    }

    /// Repairs every partition of a topic (`kafka-topics --repair`): a partition directory
    /// whose `partition.metadata` names another topic id is adopted (its file rewritten), and
    /// each log is cut back before its first damage (see [`PartitionLog::repair`]).
    pub fn repair_topic(&self, name: &str) -> Result<Vec<PartitionRepair>> {
        // Shared: keeps the topic from being deleted meanwhile; each partition locks itself.
        let _lock = self.lock(LockMode::Shared)?;
        let meta = self.require_topic(name)?;
        let config = meta.partition_config();
        (0..meta.partitions)
            .map(|partition| {
                let dir = self.partition_dir(name, partition);
                let log = PartitionLog::open(&dir)?;
                let owner = partition_owner(&dir)?;
                let adopted_from = owner.as_ref().filter(|owner| **owner != meta.id).cloned();
                let metadata_restored = owner.is_none();
                if adopted_from.is_some() || metadata_restored {
                    let text = format!("version: 0\ntopic_id: {}\n", meta.id);
                    write_atomically(&dir.join(PARTITION_METADATA), text.as_bytes())?;
                }
                let report = log.repair(&config)?;
                if let Some(cut) = &report.cut {
                    // Readers past the cut learn of it from the board, as of any new end.
                    Slot::new(self.board_path(&meta), partition).record(cut.offset);
                }
                Ok(PartitionRepair {
                    partition,
                    adopted_from,
                    metadata_restored,
                    report,
                })
            })
            .collect()
    }

    fn write_meta(&self, meta: &TopicMeta) -> Result<()> {
        let mut text = format!(
            "# kafkit topic metadata\ntopic.id={}\npartitions={}\n",
            meta.id, meta.partitions
        );
        for (k, v) in &meta.configs {
            refuse_line_breaks(k, v)?;
            text.push_str(&format!("config.{k}={v}\n"));
        }
        fs::create_dir_all(self.root.join(TOPICS_DIR))
            .context(|| format!("cannot create {}", self.root.join(TOPICS_DIR).display()))?;
        write_atomically(&self.meta_path(&meta.name), text.as_bytes())
    }

    /// Applies the topic's `retention.ms` and `retention.bytes` to every partition now. Admin
    /// commands call this, so retention happens even when nobody writes (there is no daemon).
    /// A partition that fails (damaged, say) does not keep the others from being trimmed; the
    /// first failure is returned after all were tried. A query (`wait_for_writers` false)
    /// skips a partition that a writer holds right now: that writer applies retention itself.
    pub fn apply_retention(&self, meta: &TopicMeta, wait_for_writers: bool) -> Result<()> {
        let config = meta.partition_config();
        let _lock = self.lock(LockMode::Shared)?;
        let mut first_failure = None;
        for p in 0..meta.partitions {
            let applied = self.partition(&meta.name, p).and_then(|log| {
                if wait_for_writers {
                    log.apply_retention(&config)
                } else {
                    log.apply_retention_if_idle(&config)
                }
            });
            if let Err(e) = applied {
                first_failure.get_or_insert(e);
            }
        }
        first_failure.map_or(Ok(()), Err)
    }

    /// Cleans the given partitions of a compacted topic once each, where they are dirty
    /// enough (see [`crate::local::cleaner`]), giving each at most `budget` (a round not done
    /// by then leaves its partition as it was), and then only to logs of at most
    /// [`BUDGETED_LOG_BYTES`] (larger ones would never be done in time). Does nothing for a
    /// topic that is not compacted. Returns the partitions left dirty for want of time or
    /// because they are too large. A partition that fails does not keep the others from being
    /// cleaned; the first failure is returned after all were tried.
    pub fn clean_partitions(
        &self,
        meta: &TopicMeta,
        partitions: impl IntoIterator<Item = u32>,
        budget: Option<std::time::Duration>,
    ) -> Result<Vec<u32>> {
        let Some(config) = meta.compaction_config() else {
            return Ok(Vec::new());
        };
        let mut first_failure = None;
        let mut left = Vec::new();
        for p in partitions {
            let cleaner = match budget {
                None => CleanerConfig::default(),
                // A small log, a small map: what fits the budget.
                Some(budget) => CleanerConfig {
                    deadline: Some(std::time::Instant::now() + budget),
                    max_log_bytes: Some(BUDGETED_LOG_BYTES),
                    dedupe_buffer_size: 16 << 20,
                    ..CleanerConfig::default()
                },
            };
            match self.clean_partition(meta, &config, p, &cleaner) {
                Ok(Outcome::TooLarge | Outcome::OutOfTime) => left.push(p),
                Ok(_) => {}
                Err(e) => {
                    first_failure.get_or_insert(e);
                }
            }
        }
        first_failure.map_or(Ok(left), Err)
    }

    /// One cleaning round over one partition of a compacted topic. It holds no log-dir lock
    /// (a round may take long, and creating or deleting topics must not wait for it): a topic
    /// deleted meanwhile fails the round, or, created again, makes it find other segments and
    /// give up; either way nothing is swapped.
    pub fn clean_partition(
        &self,
        meta: &TopicMeta,
        config: &CompactionConfig,
        partition: u32,
        cleaner: &CleanerConfig,
    ) -> Result<Outcome> {
        let log = self.partition_of(meta, partition)?;
        crate::local::cleaner::clean(&log, config, cleaner, crate::local::cleaner::now_ms())
    }

    /// Changes a topic's config overrides with `change`, which may refuse (nothing is written
    /// then); the new metadata is written atomically under the log-dir lock.
    pub fn alter_topic_configs(
        &self,
        name: &str,
        change: impl FnOnce(&mut BTreeMap<String, String>) -> std::result::Result<(), String>,
    ) -> Result<TopicMeta> {
        let _lock = self.lock(LockMode::Exclusive)?;
        let mut meta = self.require_topic(name)?;
        change(&mut meta.configs).map_err(LocalError::Invalid)?;
        self.write_meta(&meta)?;
        Ok(meta)
    }

    /// The consumer groups stored in this log dir (`<root>/groups`).
    pub fn groups(&self) -> super::group::GroupStore {
        super::group::GroupStore::new(&self.root)
    }
}

/// Settings and configs are stored one `key=value` per line: a line break in either would
/// split the entry and damage the file.
fn refuse_line_breaks(key: &str, value: &str) -> Result<()> {
    if key.contains(['\n', '\r']) || value.contains(['\n', '\r']) {
        return Err(LocalError::Invalid(format!(
            "the value of {key} contains a line break, which a config cannot hold"
        )));
    }
    Ok(())
}

/// Parses simple `key=value` lines (comments with `#` or `!`).
fn parse_properties(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with('!'))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

/// The topic id a partition directory's `partition.metadata` names (Kafka's format: a
/// `version: 0` and a `topic_id: <id>` line), if it has one.
fn partition_owner(dir: &Path) -> Result<Option<String>> {
    let path = dir.join(PARTITION_METADATA);
    match fs::read_to_string(&path) {
        Ok(text) => Ok(text
            .lines()
            .find_map(|l| l.strip_prefix("topic_id:"))
            .map(|id| id.trim().to_string())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(LocalError::io(format!("cannot read {}", path.display()), e)),
    }
}

/// Writes a small file atomically: tmp, fsync, rename, fsync of the directory.
pub(crate) fn write_atomically(path: &Path, data: &[u8]) -> Result<()> {
    // A short temporary name: the final name may already be as long as a name can be.
    let tmp = path.with_file_name(format!(".{:016x}{TMP_SUFFIX}", rand::random::<u64>()));
    let write = || -> std::io::Result<()> {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(data)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    };
    if let Err(e) = write() {
        let _ = fs::remove_file(&tmp);
        return Err(LocalError::io(
            format!("cannot write {}", path.display()),
            e,
        ));
    }
    sync_dir(path.parent().unwrap_or(Path::new(".")))
}

/// The suffix of [`write_atomically`]'s temporary files.
const TMP_SUFFIX: &str = ".tmp";

/// Whether `name` is one of [`write_atomically`]'s temporary files: `.<16 hex digits>.tmp`.
fn is_temporary_file(name: &str) -> bool {
    name.strip_prefix('.')
        .and_then(|n| n.strip_suffix(TMP_SUFFIX))
        .is_some_and(|hex| hex.len() == 16 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The names in a directory that are UTF-8 (none of ours is not); none if it does not exist.
fn entry_names(dir: &Path) -> Result<Vec<String>> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(LocalError::io(format!("cannot read {}", dir.display()), e)),
    };
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.context(|| format!("cannot read {}", dir.display()))?;
        if let Ok(name) = entry.file_name().into_string() {
            names.push(name);
        }
    }
    Ok(names)
}

/// Whether a log-dir entry is named as a temporary partition directory: ours
/// (`.partition-<hex>.tmp`), an older kafkit's (`<topic>-<p>.tmp-<digits>`), or one renamed
/// for deletion (`<topic>-<p>.<hex>-delete`). Only the older form can also be a live
/// partition's name (of a topic called `x.tmp`, say): callers check that.
fn is_stale_partition_dir(name: &str) -> bool {
    let old_tmp = name
        .rsplit_once(".tmp-")
        .is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    (name.starts_with(".partition-") && name.ends_with(".tmp"))
        || name.ends_with("-delete")
        || old_tmp
}

/// The suffix of a topic's metadata file, and the shorter one for names too long for it.
const META_SUFFIX: &str = ".properties";
const LONG_META_SUFFIX: &str = ".p";

/// The metadata file of topic `name`: `<name>.properties`, or `<name>.p` when that would pass
/// the 255-byte limit of a file name (Kafka allows 249-character topic names). The suffixes
/// cannot be mistaken for each other: `.properties` does not end in `.p`.
fn meta_file_name(name: &str) -> String {
    if name.len() + META_SUFFIX.len() <= MAX_FILE_NAME {
        format!("{name}{META_SUFFIX}")
    } else {
        format!("{name}{LONG_META_SUFFIX}")
    }
}

/// The topic whose metadata file this is, if it is one.
fn topic_of_meta_file(file: &str) -> Option<&str> {
    file.strip_suffix(META_SUFFIX)
        .or_else(|| file.strip_suffix(LONG_META_SUFFIX))
        .filter(|name| meta_file_name(name) == file)
}

/// The longest file name Linux file systems take, in bytes.
const MAX_FILE_NAME: usize = 255;

/// fsyncs a directory so that creates, renames and unlinks in it are durable.
pub(crate) fn sync_dir(dir: &Path) -> Result<()> {
    fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .context(|| format!("cannot sync directory {}", dir.display()))
}
