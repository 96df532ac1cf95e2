//! Creating, growing and deleting topics: partition directories made in a staging directory
//! and renamed into place, the topic's metadata written last on create and removed first on
//! delete (see the parent module's docs for why), and the topic's change board kept with it.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use super::{LogDir, MAX_FILE_NAME, TOPICS_DIR, TopicMeta, sync_dir};
use crate::kafka::topic_name;
use crate::kafka::uuid::random_uuid_string;
use crate::local::board::Slot;
use crate::local::error::{IoContext, LocalError, Result};
use crate::local::lock::LockMode;
use crate::local::partition::PARTITION_METADATA;
use crate::local::partition::PartitionLog;

impl LogDir {
    /// Creates a topic. Configs must already be validated; names are validated here.
    pub fn create_topic(
        &self,
        name: &str,
        partitions: u32,
        configs: BTreeMap<String, String>,
    ) -> Result<TopicMeta> {
        topic_name::validate(name).map_err(LocalError::Invalid)?;
        if partitions == 0 {
            return Err(LocalError::Invalid(
                "The partitions must be greater than 0".into(),
            ));
        }
        let _lock = self.lock(LockMode::Exclusive)?;
        if self.topic(name)?.is_some() {
            return Err(LocalError::TopicExists(name.to_string()));
        }
        let existing = self.topic_names()?;
        topic_name::check_collision(name, existing.iter().map(String::as_str))
            .map_err(LocalError::Invalid)?;
        let meta = TopicMeta {
            name: name.to_string(),
            id: random_uuid_string(),
            partitions,
            configs,
        };
        self.create_partition_dirs(&meta, 0)?;
        Slot::new(self.board_path(&meta), partitions - 1).record(0);
        self.write_meta(&meta)?;
        Ok(meta)
    }

    /// Creates partition directories `from..meta.partitions`, clearing orphans of a crashed create.
    fn create_partition_dirs(&self, meta: &TopicMeta, from: u32) -> Result<()> {
        // Most of the time goes to the kernel making files in distinct directories, which runs
        // in parallel: one thread per core, each making every n-th partition.
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|t| {
                    let share = (from + t as u32..meta.partitions).step_by(threads);
                    scope.spawn(move || self.create_staged(meta, share))
                })
                .collect();
            workers
                .into_iter()
                .try_for_each(|w| w.join().expect("a partition-making thread panicked"))
        })?;
        // One flush of the file system makes every new partition durable before the topic's
        // metadata names them (one fsync per file and directory made 100,000 partitions take
        // minutes).
        let root = fs::File::open(&self.root)
            .context(|| format!("cannot open {}", self.root.display()))?;
        rustix::fs::syncfs(&root).map_err(|e| {
            LocalError::io(format!("cannot sync {}", self.root.display()), e.into())
        })?;
        sync_dir(&self.root)
    }

    /// Creates `partitions` of a topic, each in a small staging directory of this call's own
    /// and renamed into the log dir, so that a partition directory is never seen half made and
    /// the log dir's own (large) directory changes once per partition.
    fn create_staged(&self, meta: &TopicMeta, partitions: impl Iterator<Item = u32>) -> Result<()> {
        let staging = self
            .root
            .join(format!(".partition-{:016x}.tmp", rand::random::<u64>()));
        fs::create_dir(&staging).context(|| format!("cannot create {}", staging.display()))?;
        for p in partitions {
            self.create_partition_dir(meta, p, &staging)?;
        }
        fs::remove_dir(&staging).context(|| format!("cannot remove {}", staging.display()))
    }

    /// Creates one partition directory in `staging`, then renames it into place.
    fn create_partition_dir(&self, meta: &TopicMeta, p: u32, staging: &Path) -> Result<()> {
        let dir = self.partition_dir(&meta.name, p);
        // Short, so that a 249-character topic name never makes it too long.
        let tmp = staging.join(p.to_string());
        PartitionLog::create_unsynced(&tmp)?;
        let metadata = tmp.join(PARTITION_METADATA);
        fs::write(&metadata, format!("version: 0\ntopic_id: {}\n", meta.id))
            .context(|| format!("cannot write {}", metadata.display()))?;
        let rename = || fs::rename(&tmp, &dir);
        // An orphan of a create that crashed is replaced (renaming over it fails unless it is
        // empty; trying first saves a stat per partition when there is none).
        let renamed = match rename() {
            Err(_) if dir.exists() => {
                fs::remove_dir_all(&dir)
                    .context(|| format!("cannot remove orphan directory {}", dir.display()))?;
                rename()
            }
            other => other,
        };
        renamed.context(|| format!("cannot rename {} to {}", tmp.display(), dir.display()))
    }

    /// Raises a topic's partition count (increase only).
    pub fn add_partitions(&self, name: &str, count: u32) -> Result<()> {
        let _lock = self.lock(LockMode::Exclusive)?;
        let mut meta = self.require_topic(name)?;
        if count < meta.partitions {
            return Err(LocalError::Invalid(format!(
                "The topic {name} currently has {} partition(s); {count} would not be an increase.",
                meta.partitions
            )));
        }
        if count == meta.partitions {
            return Err(LocalError::Invalid(format!(
                "Topic already has {count} partition(s)."
            )));
        }
        let from = meta.partitions;
        meta.partitions = count;
        self.create_partition_dirs(&meta, from)?;
        Slot::new(self.board_path(&meta), count - 1).record(0);
        self.write_meta(&meta)
    }

    /// Deletes a topic: its metadata first (atomic), then its partition directories, then the
    /// groups' committed offsets for it.
    pub fn delete_topic(&self, name: &str) -> Result<()> {
        self.delete_topic_files(name)?;
        // After the log dir's lock is released: group locks are never taken under it.
        self.groups().forget_topic(name)
    }

    fn delete_topic_files(&self, name: &str) -> Result<()> {
        // Under the lock, the topic goes (its metadata, then its directories renamed aside);
        // the files are removed after, so that other commands on the directory do not wait
        // for the removal of a large topic's thousands of files.
        let doomed = {
            let _lock = self.lock(LockMode::Exclusive)?;
            let meta = self.require_topic(name)?;
            let path = self.meta_path(name);
            fs::remove_file(&path).context(|| format!("cannot remove {}", path.display()))?;
            sync_dir(&self.root.join(TOPICS_DIR))?;
            // A hint only; a board left behind by a failure here names an id no topic has.
            let _ = fs::remove_file(self.board_path(&meta));
            let mut doomed = Vec::with_capacity(meta.partitions as usize);
            for p in 0..meta.partitions {
                let dir = self.partition_dir(name, p);
                let aside = self.root.join(delete_dir_name(name, p));
                match fs::rename(&dir, &aside) {
                    Ok(()) => doomed.push(aside),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => {
                        return Err(LocalError::io(
                            format!("cannot remove {}", dir.display()),
                            e,
                        ));
                    }
                }
            }
            sync_dir(&self.root)?;
            doomed
        };
        // The topic is gone already: a directory that cannot be removed now is one the next
        // command to take the lock clears as stale, not a failed delete (which would also skip
        // forgetting the groups' offsets for it).
        for dir in doomed {
            if let Err(e) = remove_tree(&dir) {
                crate::local::warnings::push(format!(
                    "WARN: {e}; it is removed by the next command that changes topics"
                ));
            }
        }
        Ok(())
    }
}

/// Removes a directory renamed for deletion, which the next command to take the log dir's
/// lock may be removing at the same time (stale directories are cleared then): what the
/// other removed is not an error.
pub(super) fn remove_tree(dir: &Path) -> Result<()> {
    let mut tries = 0;
    loop {
        match fs::remove_dir_all(dir) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(_) if tries < 3 && dir.exists() => tries += 1,
            Err(e) => {
                return Err(LocalError::io(
                    format!("cannot remove {}", dir.display()),
                    e,
                ));
            }
        }
    }
}

/// The name a partition directory is renamed to before it is removed, as Kafka names it:
/// `<topic>-<partition>.<32 hex digits>-delete`, with the topic cut short to fit in a file name.
fn delete_dir_name(topic: &str, partition: u32) -> String {
    let suffix = format!("-{partition}.{:032x}-delete", rand::random::<u128>());
    let keep = topic.len().min(MAX_FILE_NAME - suffix.len());
    // Topic names are ASCII, so any byte boundary is a character boundary.
    format!("{}{suffix}", &topic[..keep])
}
