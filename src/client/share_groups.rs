//! Share-group admin (`kafka-share-groups`): list, describe (state, members, start offsets and
//! lag), reset start offsets, delete groups and their offsets, the same on both backends.
//!
//! A cluster answers with ListGroups (type Share), ShareGroupDescribe,
//! DescribeShareGroupOffsets, AlterShareGroupOffsets, DeleteGroups and
//! DeleteShareGroupOffsets; the embedded log reads and changes the group's files
//! (`local::share::admin`).

use std::collections::BTreeMap;

use super::{Backend, Client, ClientError, Result};
use crate::kafka::TopicPartition;
pub use crate::kafka::share::{
    ShareGroupDescription, ShareMemberDescription, ShareOffset, ShareOffsetsDeletion,
};
use crate::local::share::admin;

impl Client {
    /// The share groups with their states (`Empty`, `Stable`), sorted by id.
    pub fn list_share_groups(&mut self) -> Result<Vec<(String, String)>> {
        match &mut self.backend {
            Backend::Local(dir) => Ok(admin::list(dir)?),
            Backend::Remote(cluster) => Ok(cluster.list_share_groups()?),
        }
    }

    /// A share group's state and members; `None` when it does not exist. A group of another
    /// type is an error (`Group g is not a share group.`).
    pub fn describe_share_group(&mut self, group: &str) -> Result<Option<ShareGroupDescription>> {
        match &mut self.backend {
            Backend::Local(dir) => Ok(admin::describe(dir, group)?),
            Backend::Remote(cluster) => Ok(cluster.describe_share_group(group)?),
        }
    }

    /// Each partition's start offset and lag for the group (empty when it has none).
    pub fn share_group_offsets(
        &mut self,
        group: &str,
    ) -> Result<BTreeMap<TopicPartition, ShareOffset>> {
        match &mut self.backend {
            Backend::Local(dir) => Ok(admin::offsets(dir, group)?),
            Backend::Remote(cluster) => Ok(cluster.share_group_offsets(group)?),
        }
    }

    /// Sets the group's start offsets of these partitions (the group must have no live
    /// member; a group that does not exist is created): each partition's error, if any.
    pub fn reset_share_group_offsets(
        &mut self,
        group: &str,
        offsets: &BTreeMap<TopicPartition, i64>,
    ) -> Result<BTreeMap<TopicPartition, Option<String>>> {
        match &mut self.backend {
            Backend::Local(dir) => {
                admin::reset(dir, group, offsets)?;
                Ok(offsets.keys().map(|tp| (tp.clone(), None)).collect())
            }
            Backend::Remote(cluster) => Ok(cluster.alter_share_group_offsets(group, offsets)?),
        }
    }

    /// Deletes a share group with its state; refused while it has live members.
    pub fn delete_share_group(&mut self, group: &str) -> Result<()> {
        match &mut self.backend {
            Backend::Local(dir) => Ok(admin::delete(dir, group)?),
            Backend::Remote(cluster) => match cluster.delete_group(group)? {
                0 => Ok(()),
                code => Err(ClientError::from_code(code, None)),
            },
        }
    }

    /// Deletes the group's state of `topics` (the group must have no live member).
    pub fn delete_share_group_offsets(
        &mut self,
        group: &str,
        topics: &[String],
    ) -> Result<ShareOffsetsDeletion> {
        match &mut self.backend {
            Backend::Local(dir) => Ok(admin::delete_offsets(dir, group, topics)?),
            Backend::Remote(cluster) => Ok(cluster.delete_share_group_offsets(group, topics)?),
        }
    }
}
