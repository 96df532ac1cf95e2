//! `--output json` and `--input json`: a lossless consume → produce round trip.

use crate::common;

use common::{Kafkit, json_records};
use serde_json::Value;

const P: &str = "kafka-console-producer";
const C: &str = "kafka-console-consumer";

fn dump(k: &Kafkit, topic: &str, n: usize) -> Vec<Value> {
    json_records(k.consume(topic, n, &["--output", "json"]).as_bytes())
}

#[test]
fn round_trip_copies_a_topic_losslessly() {
    let k = Kafkit::new();
    k.ok(
        "kafka-topics",
        &["--create", "--topic", "src", "--partitions", "3"],
        None,
    );
    // Explicit timestamps within the default retention (7 days), or retention would remove them.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let (hour_ago, day_ago) = (now - 3_600_000, now - 86_400_000);
    let input = [
        r#"{"value":"plain"}"#.to_string(),
        format!(r#"{{"key":{{"base64":"/wAB"}},"value":{{"base64":"gIE="}},"partition":2,"timestamp":{hour_ago}}}"#),
        r#"{"key":"","value":null,"partition":1,"headers":[["h","1"],["h","2"],["n",null],["b",{"base64":"/w=="}]]}"#.to_string(),
        format!(r#"{{"key":null,"value":"","partition":1,"timestamp":{day_ago}}}"#),
        r#"{"value":"tab\tnew\nline \"q\" café","topic":"ignored","offset":99,"partition":0}"#.to_string(),
    ]
    .map(|l| l + "\n")
    .concat();
    k.produce("src", &["--input", "json"], input.as_bytes());
    let original = dump(&k, "src", 5);
    assert_eq!(original.len(), 5);
    let by_value = |v: &Value| original.iter().find(|r| &r["value"] == v).cloned().unwrap();
    let bin = by_value(&serde_json::json!({"base64": "gIE="}));
    assert_eq!(bin["key"], serde_json::json!({"base64": "/wAB"}));
    assert_eq!(
        (bin["partition"].as_i64(), bin["timestamp"].as_i64()),
        (Some(2), Some(hour_ago))
    );
    let nulls = by_value(&Value::Null);
    assert_eq!(nulls["key"], "", "empty key is not null");
    assert_eq!(
        nulls["headers"],
        serde_json::json!([["h", "1"], ["h", "2"], ["n", null], ["b", {"base64": "/w=="}]])
    );
    let empty = by_value(&serde_json::json!(""));
    assert_eq!(
        (empty["key"].clone(), empty["timestamp"].as_i64()),
        (Value::Null, Some(day_ago))
    );
    assert_eq!(
        by_value(&serde_json::json!("tab\tnew\nline \"q\" café"))["partition"],
        0
    );
    for r in &original {
        assert_eq!(r["topic"], "src");
        assert_eq!(r["timestampType"], "CreateTime");
    }

    // consume --output json | produce --input json: the copy is identical but for the topic.
    let dumped = k.consume("src", 5, &["--output", "json"]);
    // The copy needs as many partitions as the source (an auto-created topic has 1).
    let k2 = Kafkit::new();
    k2.ok(
        "kafka-topics",
        &["--create", "--topic", "copy", "--partitions", "3"],
        None,
    );
    k2.produce("copy", &["--input", "json"], dumped.as_bytes());
    let copied = dump(&k2, "copy", 5);
    for (a, b) in original.iter().zip(&copied) {
        let mut a = a.clone();
        a["topic"] = "copy".into();
        assert_eq!(&a, b);
    }
}

#[test]
fn malformed_json_line_stops_with_its_number() {
    let k = Kafkit::new();
    let input =
        b"{\"value\":\"one\"}\n{\"value\":\"two\"}\n{\"value\":\nnot json\n{\"value\":\"after\"}\n";
    let err = k.fails(P, &["--topic", "j", "--input", "json"], Some(input), 1);
    assert!(err.contains("line 3"), "{err}");
    let out = k.ok(
        C,
        &["--topic", "j", "--from-beginning", "--timeout-ms", "300"],
        None,
    );
    assert_eq!(
        out, "one\ntwo\n",
        "lines before the bad one are written, nothing after"
    );
    let err = k.fails(
        P,
        &["--topic", "j", "--input", "json"],
        Some(b"{\"key\":\"k\"}\n"),
        1,
    );
    assert!(err.contains("line 1") && err.contains("\"value\""), "{err}");
    let err = k.fails(
        P,
        &["--topic", "j", "--input", "json"],
        Some(b"{\"value\":\"v\",\"partition\":7}\n"),
        1,
    );
    assert!(err.contains("partition 7"), "{err}");
    let err = k.fails(P, &["--topic", "j", "--input", "yaml"], Some(b"x\n"), 2);
    assert!(err.contains("--input yaml"), "{err}");
}

/// What Kafka's producer would refuse is refused, naming the line: a negative timestamp other
/// than -1 (none) and a field given twice (issue 11, item 9).
#[test]
fn json_input_refuses_negative_timestamps_and_repeated_fields() {
    let k = Kafkit::new();
    let cases: [(&[u8], &str); 3] = [
        (
            b"{\"value\":\"a\"}\n{\"value\":\"b\",\"timestamp\":-5}\n",
            "line 2: timestamp must be a non-negative integer",
        ),
        (
            b"{\"value\":\"a\",\"value\":\"b\"}\n",
            "line 1: field \"value\" is given twice",
        ),
        (
            b"{\"key\":\"k\",\"value\":\"v\",\"key\":\"j\"}\n",
            "line 1: field \"key\" is given twice",
        ),
    ];
    for (input, message) in cases {
        let err = k.fails(P, &["--topic", "d", "--input", "json"], Some(input), 1);
        assert!(err.contains(message), "{err}");
    }
    // -1 is no timestamp: the producer stamps the record with the time it was read.
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    k.produce(
        "stamped",
        &["--input", "json"],
        b"{\"value\":\"v\",\"timestamp\":-1}\n",
    );
    let records = dump(&k, "stamped", 1);
    assert!(
        records[0]["timestamp"].as_i64().unwrap() >= before,
        "{records:?}"
    );
}
