//! Where a consumer's records come from: the embedded log, read partition by partition, or a
//! cluster, fetched from the leaders once per round. The engine in [`super`] sees one
//! interface.

use std::collections::{BTreeMap, HashMap};

use super::local::{LocalLog, LocalPartition};
use super::{Fetched, Tp};
use crate::client::{Result, topic_name};
use crate::remote::ConsumerClient;

/// The consumer's backend.
#[derive(Debug)]
pub(super) enum Source {
    Local(Box<LocalLog>),
    Remote(Box<ConsumerClient>),
}

/// How one assigned partition is read.
#[derive(Debug)]
pub(super) enum Reader {
    Local(LocalPartition),
    /// Fetched from its leader, with the others, once per round.
    Remote,
}

/// A partition opened for reading: its reader, start and end offsets, and the first offset
/// at or after the `from_time` asked for (the end when there is none).
pub(super) struct Opened {
    pub reader: Reader,
    pub start: i64,
    pub end: i64,
    pub at_time: Option<i64>,
}

impl Source {
    /// The partition counts of the named topics that exist, or of every non-internal topic.
    /// With `auto_create`, missing named topics are created where the embedded log or the
    /// broker allows it (`auto.create.topics.enable`), as Java's consumer has them created.
    pub fn topics(
        &mut self,
        names: Option<&[String]>,
        auto_create: bool,
    ) -> Result<BTreeMap<String, u32>> {
        match self {
            Source::Remote(c) => Ok(c.topics(names, auto_create)?),
            Source::Local(local) => {
                let dir = &local.dir;
                let all;
                let names = match names {
                    Some(n) => n,
                    None => {
                        all = dir
                            .topic_names()?
                            .into_iter()
                            .filter(|n| !topic_name::is_internal(n))
                            .collect::<Vec<_>>();
                        &all
                    }
                };
                let mut out = BTreeMap::new();
                let mut metas = Vec::new();
                for n in names {
                    let meta = if auto_create {
                        dir.topic_or_auto_create(n)?
                    } else {
                        dir.topic(n)?
                    };
                    if let Some(meta) = meta {
                        out.insert(n.clone(), meta.partitions);
                        metas.push(meta);
                    }
                }
                for meta in &metas {
                    local.remember(meta)?;
                }
                Ok(out)
            }
        }
    }

    /// How many partitions a topic the consumer has created gets, where that is known: the
    /// embedded log's `num.partitions` when its `auto.create.topics.enable` is on (a broker
    /// applies its own; `None` also when nothing would be created).
    pub fn auto_created_partitions(&self) -> Result<Option<u32>> {
        match self {
            Source::Local(local) if local.dir.auto_create_topics()? => {
                Ok(Some(local.dir.default_partitions()?))
            }
            _ => Ok(None),
        }
    }

    /// Whether `topic` exists (the embedded log; a cluster's fetch says so itself).
    pub fn has_topic(&self, topic: &str) -> Result<bool> {
        match self {
            Source::Local(local) => Ok(local.dir.topic(topic)?.is_some()),
            Source::Remote(_) => Ok(true),
        }
    }

    /// Where the records are, for the missing-topic warning.
    pub fn place(&self) -> String {
        match self {
            Source::Local(local) => local.dir.root().display().to_string(),
            Source::Remote(c) => format!("the cluster at {}", c.addr()),
        }
    }

    /// Opens partition `p` of `topic` for reading.
    pub fn open(&mut self, topic: &str, p: u32, from_time: Option<i64>) -> Result<Opened> {
        match self {
            Source::Local(local) => Ok(local.open(topic, p, from_time)?),
            Source::Remote(c) => {
                let tp = (topic.to_string(), p as i32);
                let (start, end) = c.bounds(&tp)?;
                let at_time = match from_time {
                    Some(t) => Some(c.list_offset(&tp, t)?.unwrap_or(end)),
                    None => None,
                };
                Ok(Opened {
                    reader: Reader::Remote,
                    start,
                    end,
                    at_time,
                })
            }
        }
    }

    /// A cluster's answers for one round, one Fetch per leader for all the positions; the
    /// embedded log is read partition by partition instead (empty).
    pub fn fetch_round(&mut self, positions: &[(Tp, i64)]) -> Result<HashMap<Tp, Fetched>> {
        match self {
            Source::Remote(c) => Ok(c.fetch(positions)?),
            Source::Local(_) => Ok(HashMap::new()),
        }
    }

    /// A cluster partition's start and end, after its position fell out of range.
    pub fn bounds(&mut self, tp: &Tp) -> Result<(i64, i64)> {
        match self {
            Source::Remote(c) => Ok(c.bounds(tp)?),
            Source::Local(_) => unreachable!("the embedded log's bounds come from snapshots"),
        }
    }
}
