//! Kafka's default partitioner: murmur2 of the key (identical to Java's `Utils.murmur2`), and a
//! sticky partition for records without a key (KIP-480/KIP-794: keep one partition until a
//! batch's worth of bytes went to it, then pick another at random).

/// Java's `Utils.murmur2` (seed 0x9747b28c), as a signed 32-bit value.
pub fn murmur2(data: &[u8]) -> i32 {
    const M: u32 = 0x5bd1_e995;
    const R: u32 = 24;
    let mut h: u32 = 0x9747_b28c ^ data.len() as u32;
    let mut chunks = data.chunks_exact(4);
    for c in &mut chunks {
        let mut k = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M);
        h ^= k;
    }
    let tail = chunks.remainder();
    if tail.len() >= 3 {
        h ^= (tail[2] as u32) << 16;
    }
    if tail.len() >= 2 {
        h ^= (tail[1] as u32) << 8;
    }
    if !tail.is_empty() {
        h ^= tail[0] as u32;
        h = h.wrapping_mul(M);
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^= h >> 15;
    h as i32
}

/// The partition Kafka's default partitioner picks for a keyed record.
pub fn partition_for_key(key: &[u8], partitions: u32) -> u32 {
    ((murmur2(key) & 0x7fff_ffff) as u32) % partitions.max(1)
}

/// Picks partitions for a stream of records, sticky for null keys.
#[derive(Debug)]
pub struct Partitioner {
    partitions: u32,
    sticky: Option<u32>,
    sticky_bytes: usize,
    batch_size: usize,
}

impl Partitioner {
    /// `batch_size` is how many bytes go to one sticky partition before switching.
    pub fn new(partitions: u32, batch_size: usize) -> Self {
        Partitioner {
            partitions: partitions.max(1),
            sticky: None,
            sticky_bytes: 0,
            batch_size: batch_size.max(1),
        }
    }

    /// The partition for a record with this key and size in bytes.
    pub fn partition(&mut self, key: Option<&[u8]>, size: usize) -> u32 {
        if let Some(key) = key {
            return partition_for_key(key, self.partitions);
        }
        let current = match self.sticky {
            Some(p) if self.sticky_bytes < self.batch_size => p,
            previous => {
                let mut next = rand::random_range(0..self.partitions);
                if self.partitions > 1 && Some(next) == previous {
                    next = (next + 1) % self.partitions;
                }
                self.sticky = Some(next);
                self.sticky_bytes = 0;
                next
            }
        };
        self.sticky_bytes += size;
        current
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sticky_partition_moves_after_a_batch() {
        let mut p = Partitioner::new(4, 100);
        let first = p.partition(None, 60);
        assert_eq!(p.partition(None, 60), first);
        let next = p.partition(None, 10);
        assert_ne!(next, first);
        assert_eq!(p.partition(Some(b"a"), 1), partition_for_key(b"a", 4));
    }

    #[test]
    fn single_partition_is_always_zero() {
        let mut p = Partitioner::new(1, 1);
        for _ in 0..10 {
            assert_eq!(p.partition(None, 5), 0);
        }
    }
}
