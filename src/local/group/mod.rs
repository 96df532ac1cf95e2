//! Consumer groups on the embedded log: committed offsets and group membership, with no
//! coordinator process (the kernel's `flock` is the coordinator).
//!
//! - [`store`]: [`GroupStore`], the on-disk layout, committed offsets, list, describe, reset and
//!   delete.
//! - [`member`]: [`Member`], one live member of a group: join, heartbeat, failure detection,
//!   rebalancing, commits, leave.
//! - Kafka's range assignment is `crate::assignor`, shared with groups on a cluster.
//!
//! # Layout
//!
//! ```text
//! <log dir>/groups/<encoded group id>/
//!     .lock                         permanent group lock (LOCK_EX for every change)
//!     offsets                       committed offsets, Kafka's CheckpointFile text format
//!     generation                    counter bumped on every membership or ownership change
//!     members/<encoded id>.member   held LOCK_EX by the live member; immutable JSON (client id,
//!                                   host, session timeout); its mtime is the heartbeat
//!     members/<encoded id>.state    JSON (subscription, owned partitions), replaced atomically
//!                                   under the group lock by its member
//! ```
//!
//! # Protocol
//!
//! - A member joins under the group lock: it writes its `.state`, creates its `.member` file under
//!   a temporary name, locks it, renames it into place and bumps the generation. The locked file
//!   is never renamed or replaced afterwards, because that would drop the lock.
//! - A `.member` file whose lock can be taken belongs to a dead process; one whose mtime is older
//!   than its session timeout belongs to a hung one. Either is removed (with its `.state`) only
//!   under the group lock, and the generation is bumped.
//! - Every member computes the same range assignment from the sorted live members and their
//!   published subscriptions. Ownership is published in `.state` under the group lock: a member
//!   releases a partition (committing it first) before another may claim it, and claims one only
//!   when no other live member's `.state` lists it. Both happen under the group lock, so no two
//!   live members ever own the same partition.
//! - A commit takes the group lock and first checks that the member's `.member` file still exists:
//!   an evicted member is fenced and commits nothing.
//! - Between changes a poll reads only the small `generation` file; every heartbeat interval it
//!   also refreshes its own mtime and checks the other members for death or hang.
//!
//! `.member` and `.state` files are not fsynced: after a machine crash every member is dead anyway.
//! Offsets are written with tmp file, fsync, rename and directory fsync.
//!
//! # Using a member (the consumer's loop)
//!
//! 1. [`GroupStore::join`], then call [`Member::poll`] before every fetch, passing the current
//!    subscription and the next offset of each owned partition (only records already printed).
//! 2. Apply the returned [`AssignmentChange`]: drop `revoked` partitions, then start `acquired`
//!    ones at the committed offset (or per `auto.offset.reset` when `None`).
//! 3. Fetch only from [`Member::owned`] partitions; [`Member::commit`] periodically (auto-commit)
//!    and [`Member::leave`] on exit (including Ctrl-C).
//! 4. After an error from `poll`, stop consuming: the member's view may be out of date.
//!
//! As in Kafka, a member evicted while stopped may still hold records it fetched before it was
//! stopped; it learns of the eviction at its next poll (which is why the loop polls before each
//! fetch), and its commits are refused from the moment it was evicted.

pub mod member;
pub mod store;

use std::collections::BTreeMap;

pub use member::{Member, MemberConfig};
pub use store::GroupStore;

/// A topic name and a partition number.
pub use crate::kafka::TopicPartition;

/// The assignor name the embedded log reports, as Kafka's `RangeAssignor` does.
pub const RANGE_PROTOCOL: &str = "range";

pub use crate::kafka::groups::{
    AssignmentChange, CommittedOffset, GROUP_SUBSCRIBED_TO_TOPIC, GroupState,
};

/// One live member, as `--describe --members` shows it.
#[derive(Clone, Debug)]
pub struct MemberDescription {
    /// `<client-id>-<uuid v4>`, as Kafka forms consumer ids.
    pub member_id: String,
    /// The consumer's `client.id`.
    pub client_id: String,
    /// The name of the machine the member runs on.
    pub host: String,
    /// The topics it subscribes to, sorted.
    pub subscribed_topics: Vec<String>,
    /// The partitions it currently owns, sorted.
    pub assignment: Vec<TopicPartition>,
    /// The partitions the range assignment gives it, sorted; differs from `assignment` while the
    /// group is rebalancing.
    pub target_assignment: Vec<TopicPartition>,
}

/// A networked member of `kafka-server-start`'s group, published by the server's stand-in
/// member so that the `--log-dir` tools describe the real members, not the stand-in.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ServedMember {
    pub member_id: String,
    pub client_id: String,
    /// The client's address without the leading `/` Kafka shows (the tools print it).
    pub host: String,
    /// The topics it subscribes to, sorted.
    pub subscribed_topics: Vec<String>,
    /// The partitions the group gave it, sorted (empty while a classic group rebalances).
    pub assignment: Vec<TopicPartition>,
}

impl From<ServedMember> for MemberDescription {
    fn from(m: ServedMember) -> MemberDescription {
        MemberDescription {
            member_id: m.member_id,
            client_id: m.client_id,
            host: m.host,
            subscribed_topics: m.subscribed_topics,
            target_assignment: m.assignment.clone(),
            assignment: m.assignment,
        }
    }
}

/// A group as `kafka-consumer-groups --describe` needs it.
#[derive(Clone, Debug)]
pub struct GroupDescription {
    /// The group id, as given.
    pub group_id: String,
    /// Empty, Stable or PreparingRebalance.
    pub state: GroupState,
    /// The assignor: always [`RANGE_PROTOCOL`].
    pub protocol: &'static str,
    /// Live members, sorted by member id.
    pub members: Vec<MemberDescription>,
    /// Committed offsets.
    pub offsets: BTreeMap<TopicPartition, CommittedOffset>,
}

/// Encodes a group or member id as a single safe file name: bytes outside `[A-Za-z0-9._-]`, `%`
/// and a leading `.` (hidden files, `.` and `..`) become `%XX`.
pub(crate) fn encode_name(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    for (i, b) in id.bytes().enumerate() {
        let plain = b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || (b == b'.' && i > 0);
        if plain {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Reverses [`encode_name`]; `None` for names it did not produce.
pub(crate) fn decode_name(name: &str) -> Option<String> {
    let bytes = name.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = name.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    let id = String::from_utf8(out).ok()?;
    (encode_name(&id) == name).then_some(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_safe() {
        for id in [
            "g",
            "my.group",
            "a/b",
            "with space",
            "ünïcødé-グループ",
            ".",
            "..",
            ".hidden",
            "100%",
            "tab\there",
            "-",
        ] {
            let enc = encode_name(id);
            assert!(
                !enc.contains('/') && !enc.starts_with('.') && !enc.is_empty(),
                "{enc}"
            );
            assert!(enc.bytes().all(|b| b.is_ascii_graphic()), "{enc}");
            assert_eq!(decode_name(&enc).as_deref(), Some(id), "{enc}");
        }
        assert_eq!(encode_name("my.group"), "my.group");
        assert_eq!(encode_name("a/b"), "a%2Fb");
        assert_eq!(
            decode_name("a%2fb"),
            None,
            "only the canonical spelling decodes"
        );
        assert_eq!(decode_name("a%2"), None);
        assert_eq!(decode_name(".lock"), None);
    }
}
