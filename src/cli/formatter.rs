//! Kafka's console-consumer formatters: `DefaultMessageFormatter` with its properties and the
//! common deserializers, `LoggingMessageFormatter` (prints the same) and `NoOpMessageFormatter`.

use std::io::Write;

use crate::kafka::java_number::{java_double, java_float};
use crate::record::{RecordRef, TimestampType};

use super::properties::{Properties, is_true};

/// Kafka's built-in deserializers, by class name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Deserializer {
    String,
    Long,
    Integer,
    Short,
    Double,
    Float,
    Uuid,
    ByteArray,
    Bytes,
    Void,
}

impl Deserializer {
    /// Accepts the full class name (`org.apache.kafka.common.serialization.LongDeserializer`)
    /// or the simple one (`LongDeserializer`).
    pub fn from_class(class: &str) -> Result<Deserializer, String> {
        let simple = class.trim().rsplit('.').next().unwrap_or("");
        Ok(match simple {
            "StringDeserializer" => Deserializer::String,
            "LongDeserializer" => Deserializer::Long,
            "IntegerDeserializer" => Deserializer::Integer,
            "ShortDeserializer" => Deserializer::Short,
            "DoubleDeserializer" => Deserializer::Double,
            "FloatDeserializer" => Deserializer::Float,
            "UUIDDeserializer" => Deserializer::Uuid,
            "ByteArrayDeserializer" => Deserializer::ByteArray,
            "BytesDeserializer" | "ByteBufferDeserializer" => Deserializer::Bytes,
            "VoidDeserializer" => Deserializer::Void,
            _ => {
                return Err(format!(
                    "unknown deserializer class '{class}'; kafkit supports String, Long, Integer, Short, Double, Float, UUID, ByteArray, Bytes and Void deserializers (org.apache.kafka.common.serialization.*)"
                ));
            }
        })
    }

    /// What Kafka's formatter prints: the deserialized object's `toString()`.
    fn render(self, data: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        let fixed = |n: usize, name: &str| -> Result<(), String> {
            if data.len() != n {
                Err(format!("Size of data received by {name} is not {n}"))
            } else {
                Ok(())
            }
        };
        match self {
            // Java decodes the bytes as UTF-8, each malformed sequence becoming U+FFFD (no copy
            // when they are valid).
            Deserializer::String => out.extend_from_slice(String::from_utf8_lossy(data).as_bytes()),
            Deserializer::ByteArray => out.extend_from_slice(data),
            Deserializer::Long => {
                fixed(8, "LongDeserializer")?;
                write!(out, "{}", i64::from_be_bytes(data.try_into().expect("8"))).ok();
            }
            Deserializer::Integer => {
                fixed(4, "IntegerDeserializer")?;
                write!(out, "{}", i32::from_be_bytes(data.try_into().expect("4"))).ok();
            }
            Deserializer::Short => {
                fixed(2, "ShortDeserializer")?;
                write!(out, "{}", i16::from_be_bytes(data.try_into().expect("2"))).ok();
            }
            Deserializer::Double => {
                fixed(8, "Deserializer")?;
                let v = f64::from_be_bytes(data.try_into().expect("8"));
                out.extend_from_slice(java_double(v).as_bytes());
            }
            Deserializer::Float => {
                fixed(4, "Deserializer")?;
                let v = f32::from_be_bytes(data.try_into().expect("4"));
                out.extend_from_slice(java_float(v).as_bytes());
            }
            Deserializer::Uuid => {
                let text = std::str::from_utf8(data)
                    .ok()
                    .filter(|t| is_uuid(t))
                    .ok_or_else(|| "Error parsing data into UUID".to_string())?;
                out.extend_from_slice(text.to_ascii_lowercase().as_bytes());
            }
            Deserializer::Bytes => {
                // Kafka's Bytes.toString(): printable ASCII as is, everything else as \xNN.
                for &b in data {
                    if (b' '..=b'~').contains(&b) {
                        out.push(b);
                    } else {
                        write!(out, "\\x{b:02X}").ok();
                    }
                }
            }
            Deserializer::Void => {
                return Err("Data of VoidDeserializer should be null".into());
            }
        }
        Ok(())
    }
}

fn is_uuid(t: &str) -> bool {
    let parts: Vec<&str> = t.split('-').collect();
    parts.len() == 5
        && parts
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(p, n)| p.len() == n && p.chars().all(|c| c.is_ascii_hexdigit()))
}

/// Which formatter `--formatter` selected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormatterKind {
    Default,
    NoOp,
}

impl FormatterKind {
    /// Kafka's formatter class names (full or simple).
    pub fn from_class(class: &str) -> Result<FormatterKind, String> {
        match class.trim().rsplit('.').next().unwrap_or("") {
            "DefaultMessageFormatter" | "LoggingMessageFormatter" => Ok(FormatterKind::Default),
            "NoOpMessageFormatter" => Ok(FormatterKind::NoOp),
            _ => Err(format!(
                "unknown formatter class '{class}'; kafkit has DefaultMessageFormatter, LoggingMessageFormatter and NoOpMessageFormatter (org.apache.kafka.tools.consumer.*)"
            )),
        }
    }
}

/// The configured formatter.
#[derive(Debug, Clone)]
pub struct Formatter {
    kind: FormatterKind,
    print_timestamp: bool,
    print_partition: bool,
    print_offset: bool,
    print_delivery: bool,
    print_epoch: bool,
    print_headers: bool,
    print_key: bool,
    print_value: bool,
    key_separator: Vec<u8>,
    line_separator: Vec<u8>,
    headers_separator: Vec<u8>,
    null_literal: Vec<u8>,
    key_deserializer: Option<Deserializer>,
    value_deserializer: Option<Deserializer>,
    headers_deserializer: Option<Deserializer>,
    /// Only the value is printed, as it is (the default): each record is its value and the
    /// line separator, with nothing else to decide.
    value_only: bool,
}

impl Formatter {
    /// Builds a formatter from `--formatter` and its properties.
    pub fn new(kind: FormatterKind, props: &Properties) -> Result<Formatter, String> {
        let get = |k: &str, d: &str| {
            props
                .get(k)
                .cloned()
                .unwrap_or_else(|| d.into())
                .into_bytes()
        };
        let deser = |k: &str| {
            props
                .get(k)
                .map(|c| Deserializer::from_class(c))
                .transpose()
        };
        let mut formatter = Formatter {
            kind,
            print_timestamp: is_true(props, "print.timestamp"),
            print_partition: is_true(props, "print.partition"),
            print_offset: is_true(props, "print.offset"),
            print_delivery: is_true(props, "print.delivery"),
            print_epoch: is_true(props, "print.epoch"),
            print_headers: is_true(props, "print.headers"),
            print_key: is_true(props, "print.key"),
            print_value: props
                .get("print.value")
                .is_none_or(|_| is_true(props, "print.value")),
            key_separator: get("key.separator", "\t"),
            line_separator: get("line.separator", "\n"),
            headers_separator: get("headers.separator", ","),
            null_literal: get("null.literal", "null"),
            key_deserializer: deser("key.deserializer")?,
            value_deserializer: deser("value.deserializer")?,
            headers_deserializer: deser("headers.deserializer")?,
            value_only: false,
        };
        formatter.value_only = formatter.kind != FormatterKind::NoOp
            && formatter.print_value
            && !(formatter.print_timestamp
                || formatter.print_partition
                || formatter.print_offset
                || formatter.print_delivery
                || formatter.print_epoch
                || formatter.print_headers
                || formatter.print_key)
            && matches!(
                formatter.value_deserializer,
                None | Some(Deserializer::ByteArray)
            );
        Ok(formatter)
    }

    fn field(
        &self,
        data: Option<&[u8]>,
        deser: Option<Deserializer>,
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        // Kafka applies the deserializer to the null literal too.
        let bytes = data.unwrap_or(&self.null_literal);
        match deser {
            Some(Deserializer::Void) if data.is_none() => out.extend_from_slice(&self.null_literal),
            Some(d) => d.render(bytes, out)?,
            None => out.extend_from_slice(bytes),
        }
        Ok(())
    }

    /// Appends one record's text to `out`; on error `out` is left as it was.
    pub fn format(
        &self,
        partition: i32,
        ts_type: TimestampType,
        record: &RecordRef<'_>,
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        self.format_delivered(partition, ts_type, record, None, out)
    }

    /// [`Formatter::format`] of a record a share group delivered for the `delivery`th time
    /// (`print.delivery` prints it; `None`: `NOT_PRESENT`, as for a consumer group's record).
    pub fn format_delivered(
        &self,
        partition: i32,
        ts_type: TimestampType,
        record: &RecordRef<'_>,
        delivery: Option<i16>,
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        if self.value_only {
            out.extend_from_slice(record.value.unwrap_or(&self.null_literal));
            out.extend_from_slice(&self.line_separator);
            return Ok(());
        }
        if self.kind == FormatterKind::NoOp {
            return Ok(());
        }
        let start = out.len();
        let result = self.format_fields(partition, ts_type, record, delivery, out);
        if result.is_err() {
            out.truncate(start);
        }
        result
    }

    fn format_fields(
        &self,
        partition: i32,
        ts_type: TimestampType,
        r: &RecordRef<'_>,
        delivery: Option<i16>,
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        let fields = [
            self.print_timestamp,
            self.print_partition,
            self.print_offset,
            self.print_delivery,
            self.print_epoch,
            self.print_headers,
            self.print_key,
            self.print_value,
        ];
        let count = fields.iter().filter(|f| **f).count();
        let mut written = 0;
        let mut sep = |out: &mut Vec<u8>| {
            written += 1;
            out.extend_from_slice(if written < count {
                &self.key_separator
            } else {
                &self.line_separator
            });
        };
        if self.print_timestamp {
            write!(out, "{}:{}", ts_type.name(), r.timestamp).ok();
            sep(out);
        }
        if self.print_partition {
            write!(out, "Partition:{partition}").ok();
            sep(out);
        }
        if self.print_offset {
            write!(out, "Offset:{}", r.offset).ok();
            sep(out);
        }
        if self.print_delivery {
            match delivery {
                Some(n) => write!(out, "Delivery:{n}").ok(),
                None => out.write_all(b"Delivery:NOT_PRESENT").ok(),
            };
            sep(out);
        }
        if self.print_epoch {
            out.extend_from_slice(b"Epoch:NOT_PRESENT");
            sep(out);
        }
        if self.print_headers {
            if r.headers.is_empty() {
                out.extend_from_slice(b"NO_HEADERS");
            }
            for (i, (k, v)) in r.headers.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(&self.headers_separator);
                }
                out.extend_from_slice(k.as_bytes());
                out.push(b':');
                self.field(*v, self.headers_deserializer, out)?;
            }
            sep(out);
        }
        if self.print_key {
            self.field(r.key, self.key_deserializer, out)?;
            sep(out);
        }
        if self.print_value {
            self.field(r.value, self.value_deserializer, out)?;
            sep(out);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record<'a>(key: Option<&'a [u8]>, value: Option<&'a [u8]>) -> RecordRef<'a> {
        RecordRef {
            offset: 5,
            timestamp: 123,
            key,
            value,
            headers: vec![("h1", Some(&b"v1"[..]))],
        }
    }

    fn fmt(props: &[(&str, &str)], r: &RecordRef<'_>) -> Result<String, String> {
        let props = props
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let f = Formatter::new(FormatterKind::Default, &props)?;
        let mut out = Vec::new();
        f.format(0, TimestampType::CreateTime, r, &mut out)?;
        Ok(String::from_utf8(out).unwrap())
    }

    #[test]
    fn default_is_value_and_newline() {
        assert_eq!(fmt(&[], &record(None, Some(b"v"))).unwrap(), "v\n");
        assert_eq!(fmt(&[], &record(None, None)).unwrap(), "null\n");
    }

    #[test]
    fn every_field_in_kafka_order() {
        let all = [
            ("print.timestamp", "true"),
            ("print.partition", "true"),
            ("print.offset", "true"),
            ("print.delivery", "true"),
            ("print.epoch", "true"),
            ("print.headers", "true"),
            ("print.key", "true"),
        ];
        assert_eq!(
            fmt(&all, &record(Some(b"key"), Some(b"value"))).unwrap(),
            "CreateTime:123\tPartition:0\tOffset:5\tDelivery:NOT_PRESENT\tEpoch:NOT_PRESENT\th1:v1\tkey\tvalue\n"
        );
        assert_eq!(
            fmt(&[("print.value", "false")], &record(None, Some(b"v"))).unwrap(),
            ""
        );
    }

    #[test]
    fn deserializers() {
        let long = 42i64.to_be_bytes();
        let props = [(
            "value.deserializer",
            "org.apache.kafka.common.serialization.LongDeserializer",
        )];
        assert_eq!(fmt(&props, &record(None, Some(&long))).unwrap(), "42\n");
        assert_eq!(
            fmt(&props, &record(None, Some(b"abc"))).unwrap_err(),
            "Size of data received by LongDeserializer is not 8"
        );
        let bytes = [("value.deserializer", "BytesDeserializer")];
        assert_eq!(
            fmt(&bytes, &record(None, Some(b"a\x00"))).unwrap(),
            "a\\x00\n"
        );
        assert!(Deserializer::from_class("com.example.Foo").is_err());
        // A StringDeserializer decodes UTF-8 as Java does: malformed bytes become U+FFFD, on
        // the value-only path too; without one the bytes pass as they are.
        let string = [(
            "value.deserializer",
            "org.apache.kafka.common.serialization.StringDeserializer",
        )];
        assert_eq!(
            fmt(&string, &record(None, Some(b"a\xffb"))).unwrap(),
            "a\u{fffd}b\n"
        );
        let with_key = [string[0], ("print.key", "true")];
        assert_eq!(
            fmt(&with_key, &record(Some(b"k"), Some(b"\xff"))).unwrap(),
            "k\t\u{fffd}\n"
        );
    }
}
