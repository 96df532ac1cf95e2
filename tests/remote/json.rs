//! The lossless JSON round trip and time-bounded reads against a real Kafka 4.3.1 broker:
//! `kafka-console-consumer --output json | kafka-console-producer --input json`.
//!
//! The `served` test binary also runs this module against our own `kafka-server-start`, with
//! the same oracles (see `tests/served/main.rs`).

use crate::common::broker::{self, create_topic};
use crate::common::json_records;

/// Every record of `topic` up to its end, as JSON lines; `extra` replaces `--from-beginning`.
fn dump(topic: &str, extra: &[&str]) -> Vec<u8> {
    let start: &[&str] = if extra.is_empty() {
        &["--from-beginning"]
    } else {
        extra
    };
    let out = broker::kafkit("kafka-console-consumer")
        .args(["--topic", topic, "--until-end", "--output", "json"])
        .args(start)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn json_round_trip_and_time_bounds_on_a_cluster() {
    if broker::try_bootstrap().is_none() {
        return;
    }
    let (src, copy) = (
        broker::unique_topic("json-src"),
        broker::unique_topic("json-copy"),
    );
    create_topic(&src, 3);
    create_topic(&copy, 3);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let (hour_ago, day_ago) = (now - 3_600_000, now - 86_400_000);
    let input = [
        format!(r#"{{"value":"old","partition":0,"timestamp":{day_ago}}}"#),
        format!(r#"{{"key":{{"base64":"/wAB"}},"value":{{"base64":"gIE="}},"partition":2,"timestamp":{hour_ago}}}"#),
        r#"{"key":"","value":null,"partition":1,"headers":[["h","1"],["h","2"],["n",null],["b",{"base64":"/w=="}]]}"#.to_string(),
        format!(r#"{{"key":null,"value":"","partition":1,"timestamp":{hour_ago}}}"#),
        r#"{"value":"tab\tnew\nline \"q\" café","partition":0}"#.to_string(),
    ]
    .map(|l| l + "\n")
    .concat();
    let out = broker::kafkit("kafka-console-producer")
        .args(["--topic", &src, "--input", "json"])
        .write_stdin(input)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let original = dump(&src, &[]);
    let parsed = json_records(&original);
    assert_eq!(parsed.len(), 5, "{}", String::from_utf8_lossy(&original));
    let nulls = parsed.iter().find(|r| r["value"].is_null()).unwrap();
    assert_eq!(nulls["key"], "", "empty key is not null");
    assert_eq!(
        nulls["headers"],
        serde_json::json!([["h", "1"], ["h", "2"], ["n", null], ["b", {"base64": "/w=="}]])
    );
    let bin = parsed
        .iter()
        .find(|r| r["value"] == serde_json::json!({"base64": "gIE="}))
        .unwrap();
    assert_eq!(
        (bin["partition"].as_i64(), bin["timestamp"].as_i64()),
        (Some(2), Some(hour_ago))
    );

    // Copy through the JSON pipe: identical but for the topic.
    let out = broker::kafkit("kafka-console-producer")
        .args(["--topic", &copy, "--input", "json"])
        .write_stdin(original.clone())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let copied = json_records(&dump(&copy, &[]));
    assert_eq!(copied.len(), 5);
    for (a, b) in parsed.iter().zip(&copied) {
        let mut a = a.clone();
        a["topic"] = copy.clone().into();
        assert_eq!(&a, b);
    }

    // Time bounds: from two hours ago skips the day-old record; until half an hour ago stops
    // before the records written now.
    let recent = json_records(&dump(&src, &["--from-time", "-2h"]));
    assert_eq!(recent.len(), 4);
    assert!(recent.iter().all(|r| r["value"] != "old"));
    let out = broker::kafkit("kafka-console-consumer")
        .args([
            "--topic",
            &src,
            "--from-beginning",
            "--until-time",
            "-30m",
            "--output",
            "json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let until = json_records(&out.stdout);
    let mut values: Vec<String> = until.iter().map(|r| r["value"].to_string()).collect();
    values.sort();
    assert_eq!(values, [r#""old""#, r#"{"base64":"gIE="}"#]);
}
