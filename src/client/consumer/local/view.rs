//! The embedded log as a consumer sees it: the log dir, and the metadata and change board of
//! each topic it looked up (see [`crate::local::board`]).
//!
//! Each round reads every subscribed topic's change board: a caught-up partition whose slot
//! still shows the end its reader saw needs no look at its files at all, so a round costs
//! O(partitions with new records), not O(partitions).

use std::collections::HashMap;

use super::partition::LocalPartition;
use crate::client::consumer::Assigned;
use crate::local::board::BoardReader;
use crate::local::{self, LocalError, LogDir, PartitionLog, TopicMeta};

/// The log dir with the topics the consumer looked up at the last metadata refresh.
#[derive(Debug)]
pub(super) struct LogView {
    pub dir: LogDir,
    /// Never shrinks, so that a partition can name its topic by index.
    topics: Vec<LocalTopic>,
    pub by_name: HashMap<String, usize>,
    /// Reads stop at each partition's last stable offset and come with its aborted
    /// transactions (`isolation.level=read_committed`).
    pub read_committed: bool,
}

#[derive(Debug)]
struct LocalTopic {
    meta: TopicMeta,
    board: BoardReader,
    /// Partition -> 1 + its index in the assignment (0: not assigned), as of the last full
    /// round.
    assigned: Vec<u32>,
}

impl LogView {
    pub fn new(dir: LogDir) -> LogView {
        LogView {
            dir,
            topics: Vec::new(),
            by_name: HashMap::new(),
            read_committed: false,
        }
    }

    /// Keeps `meta` (just read) for opening the topic's partitions, and opens its board again
    /// (the topic may have been created again, or gained its board, since).
    pub fn remember(&mut self, meta: &TopicMeta) -> local::Result<()> {
        let path = self.dir.board_path(meta);
        let board = BoardReader::open(&path)
            .map_err(|e| LocalError::io(format!("cannot open {}", path.display()), e))?;
        let topic = LocalTopic {
            meta: meta.clone(),
            board,
            assigned: Vec::new(),
        };
        match self.by_name.get(&meta.name) {
            Some(&i) => self.topics[i] = topic,
            None => {
                self.by_name.insert(meta.name.clone(), self.topics.len());
                self.topics.push(topic);
            }
        }
        Ok(())
    }

    /// Reads the boards of the topics with assigned partitions. Unless the round is `full`
    /// (it reads every partition anyway), adds to `order` the assigned partitions (by index)
    /// whose board slot moved.
    pub fn read_boards(&mut self, full: bool, order: &mut Vec<usize>) {
        for topic in &mut self.topics {
            if topic.assigned.is_empty() {
                continue;
            }
            let moved = topic.board.read();
            if !full {
                let indices = moved.filter_map(|p| topic.assigned.get(p as usize).copied());
                order.extend(indices.filter(|&i| i > 0).map(|i| i as usize - 1));
            }
        }
    }

    /// Maps each topic's partitions to their places in the assignment (`partitions` is
    /// parallel to `assigned`).
    pub fn map_assignment(&mut self, assigned: &[Assigned], partitions: &[LocalPartition]) {
        for topic in &mut self.topics {
            topic.assigned.clear();
        }
        for (i, (a, part)) in assigned.iter().zip(partitions).enumerate() {
            let Some(t) = part.topic else { continue };
            let map = &mut self.topics[t].assigned;
            let p = a.partition as usize;
            if map.len() <= p {
                map.resize(p + 1, 0);
            }
            map[p] = i as u32 + 1;
        }
    }

    /// Partition `p`'s end as its topic's board showed it at the start of the round, if it
    /// shows one.
    pub fn board_end(&self, topic: Option<usize>, p: u32) -> Option<i64> {
        self.topics[topic?].board.end(p)
    }

    pub fn open_log(&self, topic: &str, p: u32) -> local::Result<PartitionLog> {
        match self.by_name.get(topic) {
            Some(&i) => self.dir.partition_of(&self.topics[i].meta, p),
            None => self.dir.partition(topic, p),
        }
    }
}
