//! One set of records with known timestamps, and the offsets Kafka's `GetOffsetShell` prints
//! for them: produced to the embedded log by `tests/get_offsets.rs` and to the real broker by
//! `tests/remote/get_offsets.rs`, which checks these answers against the Java tool.
//!
//! Topic `a` (3 partitions): partition 0 has timestamps 1000, 3000, 2000 (the greatest at
//! offset 1), partition 1 has 5000, partition 2 has 1500 twice. Topic `b` (12 partitions): one
//! record each, partition i at 100 * (i + 1). Topic `e` (2 partitions) stays empty. The
//! timestamps are from 1970, so the topics are created with retention off.

/// The topics, their partition counts and the config they need.
pub const TOPICS: [(&str, u32); 3] = [("a", 3), ("b", 12), ("e", 2)];
pub const TOPIC_CONFIG: &str = "retention.ms=-1";

/// The producer's `--input json` lines for topic `a`, then for topic `b`.
pub fn records() -> (String, String) {
    let record =
        |p: u32, ts: u64| format!("{{\"value\":\"v\",\"partition\":{p},\"timestamp\":{ts}}}\n");
    let a = [
        (0, 1000),
        (0, 3000),
        (0, 2000),
        (1, 5000),
        (2, 1500),
        (2, 1500),
    ]
    .iter()
    .map(|(p, ts)| record(*p, *ts))
    .collect();
    let b = (0..12)
        .map(|p| record(p, 100 * (u64::from(p) + 1)))
        .collect();
    (a, b)
}

/// What Kafka's tool prints for `--time <time>` over the three topics, with `name` giving
/// each topic's real name (`a`, `b`, `e` on the embedded log).
pub fn expected(time: &str, name: impl Fn(&str) -> String) -> String {
    let lines = match time {
        // Sorted by the text "topic-partition": b-10 and b-11 come before b-2.
        "latest" => {
            "a:0:3 a:1:1 a:2:2 b:0:1 b:1:1 b:10:1 b:11:1 b:2:1 b:3:1 b:4:1 b:5:1 b:6:1 b:7:1 b:8:1 b:9:1 e:0:0 e:1:0"
        }
        "earliest" => {
            "a:0:0 a:1:0 a:2:0 b:0:0 b:1:0 b:10:0 b:11:0 b:2:0 b:3:0 b:4:0 b:5:0 b:6:0 b:7:0 b:8:0 b:9:0 e:0:0 e:1:0"
        }
        // Empty partitions have no offset; the first of two equal timestamps wins.
        "max-timestamp" => {
            "a:0:1 a:1:0 a:2:0 b:0:0 b:1:0 b:10:0 b:11:0 b:2:0 b:3:0 b:4:0 b:5:0 b:6:0 b:7:0 b:8:0 b:9:0"
        }
        "1500" => "a:0:1 a:1:0 a:2:0",
        "1100" => "a:0:1 a:1:0 a:2:0 b:10:0 b:11:0",
        "4000" => "a:1:0",
        // No record at or after the time: nothing; nothing is tiered either.
        "6000" | "latest-tiered" | "earliest-pending-upload" => "",
        other => panic!("no expectation for --time {other}"),
    };
    lines
        .split_whitespace()
        .map(|line| {
            let (topic, rest) = line.split_once(':').expect("topic:partition:offset");
            format!("{}:{rest}\n", name(topic))
        })
        .collect()
}
