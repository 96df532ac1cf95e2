//! The map a cleaning round builds over the dirty part of a log: each key's last offset
//! (Kafka's `SkimpyOffsetMap`). Keys are held as 16 bytes of their SHA-256, so its memory
//! depends on how many keys it holds, not on their size, and it holds at most as many as
//! `log.cleaner.dedupe.buffer.size` allows at Kafka's 24 bytes a key; a round whose dirty part
//! has more keys stops where the map filled, and the next round goes on from there.

use std::collections::HashMap;

use sha2::{Digest, Sha256};

/// Bytes Kafka counts per key: a 16-byte hash and an 8-byte offset.
pub const BYTES_PER_KEY: u64 = 24;

/// Each key's last offset, up to a number of keys.
#[derive(Debug)]
pub struct OffsetMap {
    offsets: HashMap<[u8; 16], i64>,
    capacity: usize,
    /// The last offset the map covers: records past it are not the map's to judge.
    latest_offset: i64,
}

impl OffsetMap {
    /// A map for `memory` bytes filled up to `load_factor` (Kafka's
    /// `log.cleaner.dedupe.buffer.size` per thread and `log.cleaner.io.buffer.load.factor`).
    pub fn with_memory(memory: u64, load_factor: f64) -> OffsetMap {
        let slots = memory / BYTES_PER_KEY;
        let capacity = ((slots as f64) * load_factor.clamp(0.0, 1.0)) as usize;
        OffsetMap {
            offsets: HashMap::new(),
            capacity: capacity.max(1),
            latest_offset: -1,
        }
    }

    fn hash(key: &[u8]) -> [u8; 16] {
        let digest = Sha256::digest(key);
        let mut out = [0; 16];
        out.copy_from_slice(&digest[..16]);
        out
    }

    /// Whether `key` could be put now: it is already held, or there is room for one more.
    pub fn has_room_for(&self, key: &[u8]) -> bool {
        self.offsets.len() < self.capacity || self.offsets.contains_key(&Self::hash(key))
    }

    /// Records `offset` as `key`'s last; `false` (and nothing changed) when the map is full
    /// and `key` is new.
    pub fn put(&mut self, key: &[u8], offset: i64) -> bool {
        let hash = Self::hash(key);
        if self.offsets.len() >= self.capacity && !self.offsets.contains_key(&hash) {
            return false;
        }
        self.offsets.insert(hash, offset);
        self.latest_offset = self.latest_offset.max(offset);
        true
    }

    /// `key`'s last offset, if the map holds it.
    pub fn get(&self, key: &[u8]) -> Option<i64> {
        self.offsets.get(&Self::hash(key)).copied()
    }

    /// The last offset the map covers.
    pub fn latest_offset(&self) -> i64 {
        self.latest_offset
    }

    /// Extends what the map covers to `offset` (the end of a segment it read whole, so that
    /// records there without a key count as covered too).
    pub fn cover_up_to(&mut self, offset: i64) {
        self.latest_offset = self.latest_offset.max(offset);
    }

    /// Keys held.
    pub fn len(&self) -> usize {
        self.offsets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.offsets.is_empty()
    }

    /// Whether no new key fits.
    pub fn is_full(&self) -> bool {
        self.offsets.len() >= self.capacity
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_keeps_its_last_offset() {
        let mut map = OffsetMap::with_memory(1 << 20, 0.9);
        assert!(map.put(b"a", 3));
        assert!(map.put(b"b", 4));
        assert!(map.put(b"a", 7));
        assert_eq!(map.get(b"a"), Some(7));
        assert_eq!(map.get(b"b"), Some(4));
        assert_eq!(map.get(b"c"), None);
        assert_eq!(map.latest_offset(), 7);
        assert_eq!(map.len(), 2);
    }

    #[test]
    fn a_full_map_takes_known_keys_only() {
        // 72 bytes at a load factor of 0.9: 3 slots, 2 keys.
        let mut map = OffsetMap::with_memory(72, 0.9);
        assert!(map.put(b"a", 0));
        assert!(map.put(b"b", 1));
        assert!(map.is_full());
        assert!(!map.has_room_for(b"c"));
        assert!(!map.put(b"c", 2));
        assert_eq!(map.get(b"c"), None);
        assert!(map.put(b"a", 3), "a key it holds still moves on");
        assert_eq!(map.latest_offset(), 3);
    }
}
