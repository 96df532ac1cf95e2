//! The `--offset-json-file` format of `kafka-delete-records`:
//!
//! ```text
//! {"partitions": [{"topic": "foo", "partition": 1, "offset": 1}], "version": 1}
//! ```
//!
//! read as Kafka's `DeleteRecordsCommand` reads it (Jackson, then Kafka's `DecodeJson`), with
//! its messages: `version` is optional (1, the only one) and must be an int; each entry needs a
//! string `topic`, an int `partition` and a long `offset`; unknown fields are ignored, and so is
//! anything after the first JSON value. A value of the wrong type is echoed in the message as
//! Jackson prints it (compact JSON, doubles as Java prints them), except that an object's keys
//! come sorted (Jackson: in the file's order).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::cli::jackson::write_string;
use crate::kafka::TopicPartition;
use crate::kafka::java_number::java_double;

/// The offset to delete below, per partition.
pub type Offsets = BTreeMap<TopicPartition, i64>;

/// Reads the file's text; the error is Kafka's message.
pub fn parse(text: &str) -> Result<Offsets, String> {
    // Jackson reads blank text as a missing value, which prints as nothing; only empty text is
    // refused as not JSON.
    if !text.is_empty() && text.trim_matches([' ', '\t', '\n', '\r']).is_empty() {
        return Err("Expected JSON object, received ".to_string());
    }
    // Jackson reads one value and ignores what follows it, as serde_json does when the
    // deserializer is not asked to reach the end.
    let mut de = serde_json::Deserializer::from_str(text);
    let root = Value::deserialize(&mut de)
        .map_err(|_| "The input string is not a valid JSON".to_string())?;
    let root = object(&root)?;
    let version = match root.get("version") {
        Some(v) => int(v)?,
        None => 1,
    };
    if version != 1 {
        return Err(format!("Not supported version field value {version}"));
    }
    let partitions = root
        .get("partitions")
        .ok_or_else(|| "Missing partitions field".to_string())?;
    let Value::Array(entries) = partitions else {
        return Err(expected("JSON array", partitions));
    };
    let mut offsets: BTreeMap<TopicPartition, Vec<i64>> = BTreeMap::new();
    for entry in entries {
        let entry = object(entry)?;
        let topic = match field(entry, "topic")? {
            Value::String(s) => s.clone(),
            other => return Err(expected_value("String", other)),
        };
        let partition = int(field(entry, "partition")?)?;
        let offset = long(field(entry, "offset")?)?;
        offsets.entry((topic, partition)).or_default().push(offset);
    }
    let duplicates: Vec<String> = offsets
        .iter()
        .filter(|(_, o)| o.len() > 1)
        .map(|((t, p), _)| format!("{t}-{p}"))
        .collect();
    if !duplicates.is_empty() {
        return Err(format!(
            "Offset json file contains duplicate topic partitions: {}",
            duplicates.join(",")
        ));
    }
    Ok(offsets.into_iter().map(|(tp, o)| (tp, o[0])).collect())
}

fn object(v: &Value) -> Result<&serde_json::Map<String, Value>, String> {
    v.as_object().ok_or_else(|| expected("JSON object", v))
}

fn field<'a>(entry: &'a serde_json::Map<String, Value>, name: &str) -> Result<&'a Value, String> {
    entry
        .get(name)
        .ok_or_else(|| format!("No such field exists: `{name}`"))
}

/// Kafka's `DecodeInteger`: an integer that fits in 32 bits.
fn int(v: &Value) -> Result<i32, String> {
    v.as_i64()
        .and_then(|n| i32::try_from(n).ok())
        .ok_or_else(|| expected_value("Integer", v))
}

/// Kafka's `DecodeLong`: an integer that fits in 64 bits (not a number with a fraction or an
/// exponent, which Jackson reads as a double).
fn long(v: &Value) -> Result<i64, String> {
    v.as_i64().ok_or_else(|| expected_value("Long", v))
}

/// `JsonValue.asJsonObject`/`asJsonArray`'s message.
fn expected(what: &str, v: &Value) -> String {
    format!("Expected {what}, received {}", jackson(v))
}

/// `DecodeJson`'s message for a value of the wrong type.
fn expected_value(what: &str, v: &Value) -> String {
    format!("Expected `{what}` value, received {}", jackson(v))
}

/// A value as Jackson's `JsonNode.toString()` prints it: compact JSON, control characters
/// escaped with upper-case hex, doubles as Java's `Double.toString`.
fn jackson(v: &Value) -> String {
    let mut out = String::new();
    write_value(v, &mut out);
    out
}

fn write_value(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => out.push_str(&i.to_string()),
            (None, Some(u), _) => out.push_str(&u.to_string()),
            (None, None, Some(f)) => out.push_str(&java_double(f)),
            _ => out.push_str(&n.to_string()),
        },
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, k);
                out.push(':');
                write_value(item, out);
            }
            out.push('}');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offsets(pairs: &[(&str, i32, i64)]) -> Offsets {
        pairs
            .iter()
            .map(|(t, p, o)| ((t.to_string(), *p), *o))
            .collect()
    }

    #[test]
    fn kafkas_format_reads() {
        let text = r#"{"partitions":[{"topic":"t","partition":0,"offset":10},
            {"topic":"t","partition":1,"offset":-1,"extra":true}],"version":1}"#;
        assert_eq!(parse(text).unwrap(), offsets(&[("t", 0, 10), ("t", 1, -1)]));
        // No version is version 1; anything after the first value is ignored, as by Jackson.
        assert_eq!(
            parse(r#"{"partitions":[]} trailing"#).unwrap(),
            Offsets::new()
        );
    }

    #[test]
    fn errors_are_kafkas() {
        for (text, message) in [
            ("", "The input string is not a valid JSON"),
            (" \n", "Expected JSON object, received "),
            ("nope", "The input string is not a valid JSON"),
            ("[1,2]", "Expected JSON object, received [1,2]"),
            (r#"{"version":1}"#, "Missing partitions field"),
            (
                r#"{"partitions":[],"version":2}"#,
                "Not supported version field value 2",
            ),
            (
                r#"{"partitions":[],"version":"1"}"#,
                "Expected `Integer` value, received \"1\"",
            ),
            (
                r#"{"partitions":[],"version":null}"#,
                "Expected `Integer` value, received null",
            ),
            (
                r#"{"partitions":{"topic":"t"}}"#,
                "Expected JSON array, received {\"topic\":\"t\"}",
            ),
            (r#"{"partitions":[1]}"#, "Expected JSON object, received 1"),
            (
                r#"{"partitions":[{"partition":0,"offset":1}]}"#,
                "No such field exists: `topic`",
            ),
            (
                r#"{"partitions":[{"topic":5,"partition":0,"offset":1}]}"#,
                "Expected `String` value, received 5",
            ),
            (
                r#"{"partitions":[{"topic":"t","partition":"0","offset":1}]}"#,
                "Expected `Integer` value, received \"0\"",
            ),
            (
                r#"{"partitions":[{"topic":"t","partition":2147483648,"offset":1}]}"#,
                "Expected `Integer` value, received 2147483648",
            ),
            (
                r#"{"partitions":[{"topic":"t","partition":0,"offset":1.5}]}"#,
                "Expected `Long` value, received 1.5",
            ),
            (
                r#"{"partitions":[{"topic":"t","partition":0,"offset":9223372036854775808}]}"#,
                "Expected `Long` value, received 9223372036854775808",
            ),
            (
                r#"{"partitions":[{"topic":"t","partition":0}]}"#,
                "No such field exists: `offset`",
            ),
            (
                r#"{"partitions":[{"topic":"t\n","partition":0,"offset":[1e20,0.001,"\u0001"]}]}"#,
                "Expected `Long` value, received [1.0E20,0.001,\"\\u0001\"]",
            ),
            (
                r#"{"partitions":[{"topic":"b","partition":1,"offset":1},{"topic":"a","partition":0,"offset":1},{"topic":"b","partition":1,"offset":2},{"topic":"a","partition":0,"offset":1}]}"#,
                "Offset json file contains duplicate topic partitions: a-0,b-1",
            ),
        ] {
            assert_eq!(parse(text), Err(message.to_string()), "{text}");
        }
    }
}
