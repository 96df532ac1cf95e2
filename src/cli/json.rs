//! kafkit's lossless JSON record format (`--output json` on the consumer, `--input json` on the
//! producer): one object per line,
//!
//! ```text
//! {"topic":"t","partition":0,"offset":5,"timestamp":1700000000000,"timestampType":"CreateTime",
//!  "key":...,"value":...,"headers":[["h","v"],...]}
//! ```
//!
//! A key, value or header value is `null`, a JSON string when its bytes are valid UTF-8, or
//! `{"base64":"..."}` otherwise, so any bytes survive a consume-produce round trip.

use std::io::Write;

use base64::Engine;
use serde_json::Value;

use crate::record::{RecordRef, TimestampType};

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// Appends `s` as a JSON string literal.
fn push_str(out: &mut Vec<u8>, s: &str) {
    // serde_json's string escaping into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, s);
}

fn push_bytes(out: &mut Vec<u8>, bytes: Option<&[u8]>) {
    match bytes {
        None => out.extend_from_slice(b"null"),
        Some(b) => match std::str::from_utf8(b) {
            Ok(s) => push_str(out, s),
            Err(_) => {
                out.extend_from_slice(b"{\"base64\":\"");
                out.extend_from_slice(B64.encode(b).as_bytes());
                out.extend_from_slice(b"\"}");
            }
        },
    }
}

/// Appends one record as a JSON line (with its `\n`).
pub fn write_record(
    topic: &str,
    partition: i32,
    ts_type: TimestampType,
    r: &RecordRef<'_>,
    out: &mut Vec<u8>,
) {
    out.extend_from_slice(b"{\"topic\":");
    push_str(out, topic);
    // Straight into the buffer: no String per record. Writing to a Vec cannot fail.
    let _ = write!(
        out,
        ",\"partition\":{partition},\"offset\":{},\"timestamp\":{},\"timestampType\":\"{}\",\"key\":",
        r.offset,
        r.timestamp,
        ts_type.name()
    );
    push_bytes(out, r.key);
    out.extend_from_slice(b",\"value\":");
    push_bytes(out, r.value);
    out.extend_from_slice(b",\"headers\":[");
    for (i, (k, v)) in r.headers.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.push(b'[');
        push_str(out, k);
        out.push(b',');
        push_bytes(out, *v);
        out.push(b']');
    }
    out.extend_from_slice(b"]}\n");
}

/// A record read from a JSON line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonRecord {
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub headers: Vec<(String, Option<Vec<u8>>)>,
    pub timestamp: Option<i64>,
    pub partition: Option<u32>,
}

fn bytes_field(v: &Value, what: &str) -> Result<Option<Vec<u8>>, String> {
    match v {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s.clone().into_bytes())),
        Value::Object(o) if o.len() == 1 && o.contains_key("base64") => match &o["base64"] {
            Value::String(b) => B64
                .decode(b)
                .map(Some)
                .map_err(|e| format!("{what} has invalid base64: {e}")),
            _ => Err(format!("{what}.base64 must be a string")),
        },
        _ => Err(format!(
            "{what} must be null, a string or {{\"base64\": \"...\"}}"
        )),
    }
}

/// A JSON object whose fields are each given once: a repeated field is an error, where
/// serde_json would keep the last one silently.
struct UniqueFields(serde_json::Map<String, Value>);

impl<'de> serde::Deserialize<'de> for UniqueFields {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Fields;
        impl<'de> serde::de::Visitor<'de> for Fields {
            type Value = UniqueFields;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<UniqueFields, A::Error> {
                let mut fields = serde_json::Map::new();
                while let Some(key) = map.next_key::<String>()? {
                    if fields.contains_key(&key) {
                        return Err(serde::de::Error::custom(format!(
                            "field \"{key}\" is given twice"
                        )));
                    }
                    fields.insert(key, map.next_value()?);
                }
                Ok(UniqueFields(fields))
            }
        }
        d.deserialize_map(Fields)
    }
}

/// Parses one JSON line; errors say which field is wrong.
pub fn parse_record(line: &[u8]) -> Result<JsonRecord, String> {
    let obj = match serde_json::from_slice::<UniqueFields>(line) {
        Ok(UniqueFields(obj)) => obj,
        // Without serde's "at line 1 column N": the input line is one JSON text, and the
        // caller names the line of the input.
        Err(e) if e.is_data() => {
            let text = e.to_string();
            let position = format!(" at line {} column {}", e.line(), e.column());
            return Err(text.strip_suffix(&position).unwrap_or(&text).to_string());
        }
        Err(e) => return Err(format!("not valid JSON: {e}")),
    };
    let get = |k: &str| obj.get(k).unwrap_or(&Value::Null);
    if !obj.contains_key("value") {
        return Err("missing field \"value\" (use null for a null value)".into());
    }
    let headers = match get("headers") {
        Value::Null => Vec::new(),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, h)| header(h, i))
            .collect::<Result<_, _>>()?,
        _ => return Err("headers must be an array of [key, value] pairs".into()),
    };
    // -1 is Kafka's "no timestamp" (the producer stamps the record); other negatives are
    // refused, as Java's ProducerRecord refuses them.
    let timestamp = match get("timestamp") {
        Value::Null => None,
        v => match v.as_i64() {
            Some(-1) => None,
            Some(ts) if ts >= 0 => Some(ts),
            _ => {
                return Err(format!(
                    "timestamp must be a non-negative integer (ms) or -1 for none, got {v}"
                ));
            }
        },
    };
    let partition = match get("partition") {
        Value::Null => None,
        v => Some(
            v.as_u64()
                .and_then(|p| u32::try_from(p).ok())
                .ok_or_else(|| format!("partition must be a non-negative integer, got {v}"))?,
        ),
    };
    Ok(JsonRecord {
        key: bytes_field(get("key"), "key")?,
        value: bytes_field(get("value"), "value")?,
        headers,
        timestamp,
        partition,
    })
}

fn header(h: &Value, i: usize) -> Result<(String, Option<Vec<u8>>), String> {
    let bad = || format!("headers[{i}] must be a [key, value] pair with a string key");
    let Value::Array(pair) = h else {
        return Err(bad());
    };
    match pair.as_slice() {
        [Value::String(k), v] => Ok((k.clone(), bytes_field(v, &format!("headers[{i}] value"))?)),
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_every_byte() {
        let r = RecordRef {
            offset: 5,
            timestamp: 1_700_000_000_000,
            key: Some(&[0xff, 0x00, 0x61]),
            value: Some(b"caf\xc3\xa9 \"quoted\"\n"),
            headers: vec![
                ("h", Some(&b"v"[..])),
                ("h", None),
                ("bin", Some(&[0x80][..])),
            ],
        };
        let mut out = Vec::new();
        write_record("t", 2, TimestampType::CreateTime, &r, &mut out);
        assert!(out.ends_with(b"\n"));
        let text = String::from_utf8(out.clone()).unwrap();
        assert!(text.starts_with(r#"{"topic":"t","partition":2,"offset":5,"timestamp":1700000000000,"timestampType":"CreateTime","key":{"base64":"/wBh"},"value":"café \"quoted\"\n""#), "{text}");
        let back = parse_record(&out[..out.len() - 1]).unwrap();
        assert_eq!(back.key.as_deref(), r.key);
        assert_eq!(back.value.as_deref(), r.value);
        assert_eq!(back.timestamp, Some(r.timestamp));
        assert_eq!(back.partition, Some(2));
        assert_eq!(
            back.headers,
            vec![
                ("h".into(), Some(b"v".to_vec())),
                ("h".into(), None),
                ("bin".into(), Some(vec![0x80]))
            ]
        );
    }

    #[test]
    fn null_versus_empty_and_errors() {
        let r = parse_record(br#"{"value":"","key":null}"#).unwrap();
        assert_eq!((r.key, r.value), (None, Some(Vec::new())));
        assert!(
            parse_record(br#"{"key":"k"}"#)
                .unwrap_err()
                .contains("missing field \"value\"")
        );
        assert!(
            parse_record(b"nope")
                .unwrap_err()
                .contains("not valid JSON")
        );
        assert!(
            parse_record(br#"{"value":1}"#)
                .unwrap_err()
                .contains("value must be")
        );
        assert!(
            parse_record(br#"{"value":"v","headers":[["k"]]}"#)
                .unwrap_err()
                .contains("headers[0]")
        );
        assert!(
            parse_record(br#"{"value":"v","partition":-1}"#)
                .unwrap_err()
                .contains("partition")
        );
        assert!(
            parse_record(br#"{"value":{"base64":"!!"}}"#)
                .unwrap_err()
                .contains("base64")
        );
    }
}
