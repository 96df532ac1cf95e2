//! The iteration order of Java's `java.util.HashMap<String, _>`, in which Kafka's tools print
//! some collections (a describe's config overrides, kafka-dump-log's per-file summaries): by
//! bucket of the final table, then by how keys were added within a bucket.

/// How the keys went into the map, which decides their order within a bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Added {
    /// `put`: a new key goes to the tail of its bucket (first added first).
    Put,
    /// `computeIfAbsent`: a new key goes to the head of its bucket (last added first).
    ComputeIfAbsent,
}

/// `String.hashCode()`: over UTF-16 code units, wrapping.
pub fn string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// The order in which a `HashMap` that had `keys` added (distinct, in that order) iterates
/// them, as indexes into `keys`: by bucket of the final table (16 buckets, doubling whenever
/// the map grows past three quarters; a resize keeps the order within a bucket), then as
/// `added` puts them in a bucket.
pub fn hash_map_order<S: AsRef<str>>(keys: &[S], added: Added) -> Vec<usize> {
    let mut capacity = 16usize;
    while keys.len() > capacity * 3 / 4 {
        capacity *= 2;
    }
    let bucket = |s: &str| {
        let h = string_hash(s);
        ((h ^ ((h as u32) >> 16) as i32) as u32 as usize) & (capacity - 1)
    };
    let mut order: Vec<usize> = (0..keys.len()).collect();
    match added {
        Added::Put => order.sort_by_key(|&i| (bucket(keys[i].as_ref()), i)),
        Added::ComputeIfAbsent => {
            order.sort_by_key(|&i| (bucket(keys[i].as_ref()), std::cmp::Reverse(i)));
        }
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn put_keeps_the_first_added_first_within_a_bucket() {
        // "Aa" and "BB" share a hash code, so a bucket.
        assert_eq!(hash_map_order(&["BB", "Aa"], Added::Put), vec![0, 1]);
        assert_eq!(
            hash_map_order(&["BB", "Aa"], Added::ComputeIfAbsent),
            vec![1, 0]
        );
    }

    #[test]
    fn the_table_grows_with_the_keys() {
        // What Java's kafka-topics printed for these overrides among a topic's ~40 configs
        // (a 64-bucket table), whatever order the broker sent them in.
        let mut keys: Vec<String> = (0..40).map(|i| format!("filler-{i}")).collect();
        keys.extend(
            [
                "cleanup.policy",
                "max.message.bytes",
                "min.insync.replicas",
                "retention.ms",
            ]
            .map(String::from),
        );
        let ours: Vec<&str> = hash_map_order(&keys, Added::Put)
            .into_iter()
            .map(|i| keys[i].as_str())
            .filter(|k| !k.starts_with("filler-"))
            .collect();
        assert_eq!(
            ours,
            [
                "min.insync.replicas",
                "cleanup.policy",
                "retention.ms",
                "max.message.bytes"
            ]
        );
    }
}
