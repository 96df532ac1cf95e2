//! What `--print-data-log` prints of a record's key and value: Kafka's `Decoder` classes
//! (`StringDecoder` by default), or with a decoder option the coordinator records of
//! `__consumer_offsets`, `__transaction_state` or `__share_group_state` as JSON.

use super::batch::RecordView;
use super::java::{JavaError, utf8_lossy};
use super::schema::{
    self, Message, Value, group, group_share_streams, metadata, share, transaction,
};

/// One of Kafka's `org.apache.kafka.tools.api` decoders.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decoder {
    String,
    Integer,
    Long,
}

impl Decoder {
    /// The decoder a class name names (a class kafkit does not know: `None`).
    pub fn from_class(name: &str) -> Option<Decoder> {
        match name {
            "org.apache.kafka.tools.api.StringDecoder" => Some(Decoder::String),
            "org.apache.kafka.tools.api.IntegerDecoder" => Some(Decoder::Integer),
            "org.apache.kafka.tools.api.LongDecoder" => Some(Decoder::Long),
            _ => None,
        }
    }

    fn decode(self, bytes: &[u8]) -> Result<String, JavaError> {
        let underflow = || JavaError::bare("java.nio.BufferUnderflowException");
        Ok(match self {
            Decoder::String => utf8_lossy(bytes),
            Decoder::Integer => {
                let b = bytes.get(..4).ok_or_else(underflow)?;
                i32::from_be_bytes(b.try_into().expect("4 bytes")).to_string()
            }
            Decoder::Long => {
                let b = bytes.get(..8).ok_or_else(underflow)?;
                i64::from_be_bytes(b.try_into().expect("8 bytes")).to_string()
            }
        })
    }
}

/// Which coordinator's records a decoder option reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coordinator {
    /// `--offsets-decoder`: the group coordinator's `__consumer_offsets`.
    Group,
    /// `--transaction-log-decoder`: `__transaction_state`.
    Transaction,
    /// `--share-group-state-decoder`: `__share_group_state`.
    Share,
}

impl Coordinator {
    /// The key and value messages of record type `id`.
    fn messages(self, id: i16) -> Option<(&'static Message, &'static Message)> {
        match self {
            Coordinator::Group => group_messages(id),
            Coordinator::Transaction => (id == 0).then_some((
                &transaction::TRANSACTION_LOG_KEY,
                &transaction::TRANSACTION_LOG_VALUE,
            )),
            Coordinator::Share => match id {
                0 => Some((&share::SHARE_SNAPSHOT_KEY, &share::SHARE_SNAPSHOT_VALUE)),
                1 => Some((&share::SHARE_UPDATE_KEY, &share::SHARE_UPDATE_VALUE)),
                _ => None,
            },
        }
    }
}

/// The group coordinator's record types (Kafka 4.3's `CoordinatorRecordType`).
fn group_messages(id: i16) -> Option<(&'static Message, &'static Message)> {
    use group::*;
    use group_share_streams::*;
    Some(match id {
        0 => (&LEGACY_OFFSET_COMMIT_KEY, &LEGACY_OFFSET_COMMIT_VALUE),
        1 => (&OFFSET_COMMIT_KEY, &OFFSET_COMMIT_VALUE),
        2 => (&GROUP_METADATA_KEY, &GROUP_METADATA_VALUE),
        3 => (&CONSUMER_GROUP_METADATA_KEY, &CONSUMER_GROUP_METADATA_VALUE),
        4 => (
            &CONSUMER_GROUP_PARTITION_METADATA_KEY,
            &CONSUMER_GROUP_PARTITION_METADATA_VALUE,
        ),
        5 => (
            &CONSUMER_GROUP_MEMBER_METADATA_KEY,
            &CONSUMER_GROUP_MEMBER_METADATA_VALUE,
        ),
        6 => (
            &CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY,
            &CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE,
        ),
        7 => (
            &CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY,
            &CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE,
        ),
        8 => (
            &CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY,
            &CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE,
        ),
        10 => (
            &SHARE_GROUP_MEMBER_METADATA_KEY,
            &SHARE_GROUP_MEMBER_METADATA_VALUE,
        ),
        11 => (&SHARE_GROUP_METADATA_KEY, &SHARE_GROUP_METADATA_VALUE),
        12 => (
            &SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_KEY,
            &SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE,
        ),
        13 => (
            &SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY,
            &SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE,
        ),
        14 => (
            &SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY,
            &SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE,
        ),
        15 => (
            &SHARE_GROUP_STATE_PARTITION_METADATA_KEY,
            &SHARE_GROUP_STATE_PARTITION_METADATA_VALUE,
        ),
        16 => (
            &CONSUMER_GROUP_REGULAR_EXPRESSION_KEY,
            &CONSUMER_GROUP_REGULAR_EXPRESSION_VALUE,
        ),
        17 => (&STREAMS_GROUP_METADATA_KEY, &STREAMS_GROUP_METADATA_VALUE),
        19 => (
            &STREAMS_GROUP_MEMBER_METADATA_KEY,
            &STREAMS_GROUP_MEMBER_METADATA_VALUE,
        ),
        20 => (
            &STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA_KEY,
            &STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE,
        ),
        21 => (
            &STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY,
            &STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE,
        ),
        22 => (
            &STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY,
            &STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE,
        ),
        23 => (&STREAMS_GROUP_TOPOLOGY_KEY, &STREAMS_GROUP_TOPOLOGY_VALUE),
        _ => return None,
    })
}

/// How record contents are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MessageParser {
    Decoders {
        key: Decoder,
        value: Decoder,
    },
    Coordinator(Coordinator),
    /// `--cluster-metadata-decoder`: `__cluster_metadata` records and KRaft snapshots.
    ClusterMetadata,
}

/// A key and a value to print, each when present.
pub type Parsed = (Option<String>, Option<String>);

impl MessageParser {
    pub fn parse(&self, record: &RecordView<'_>) -> Result<Parsed, JavaError> {
        match *self {
            MessageParser::Decoders { key, value } => Ok((
                record.key.map(|k| key.decode(k)).transpose()?,
                record.value.map(|v| value.decode(v)).transpose()?,
            )),
            MessageParser::Coordinator(c) => parse_coordinator(c, record),
            MessageParser::ClusterMetadata => Ok((None, Some(parse_metadata(record)))),
        }
    }
}

/// Why a coordinator record could not be shown.
enum Failure {
    UnknownType(i16),
    Other(String),
}

fn parse_coordinator(c: Coordinator, record: &RecordView<'_>) -> Result<Parsed, JavaError> {
    let Some(key) = record.key else {
        return Err(JavaError::new(
            "java.lang.RuntimeException",
            format!(
                "Failed to decode message at offset {} using the specified decoder (message had \
                 a missing key)",
                record.offset
            ),
        ));
    };
    Ok(match deserialize(c, key, record.value) {
        Ok((key, value)) => (Some(key), Some(value)),
        Err(Failure::UnknownType(t)) => (
            Some(format!(
                "Unknown record type {t} at offset {}, skipping.",
                record.offset
            )),
            None,
        ),
        Err(Failure::Other(why)) => (
            Some(format!(
                "Error at offset {}, skipping. {why}",
                record.offset
            )),
            None,
        ),
    })
}

/// `CoordinatorRecordSerde.deserialize` and the tool's JSON: the key's int16 is the record
/// type, the value's the value's version.
fn deserialize(
    c: Coordinator,
    key: &[u8],
    value: Option<&[u8]>,
) -> Result<(String, String), Failure> {
    let version = |bytes: &[u8], name: &str| {
        bytes
            .get(..2)
            .map(|b| i16::from_be_bytes([b[0], b[1]]))
            .ok_or_else(|| Failure::Other(format!("Could not read version from {name}'s buffer.")))
    };
    let record_type = version(key, "key")?;
    let (key_message, value_message) = c
        .messages(record_type)
        .ok_or(Failure::UnknownType(record_type))?;
    let read_error = |v: i16, name: &str, e: JavaError| {
        Failure::Other(format!(
            "Could not read record with version {v} from {name}'s buffer due to: {}.",
            e.message_or_null()
        ))
    };
    // Keys have one version; Kafka passes the record type as it, which reads the same.
    let key_data =
        schema::read(key_message, &key[2..], 0).map_err(|e| read_error(record_type, "key", e))?;
    let key_json = format!(
        "{{\"type\":\"{record_type}\",\"data\":{}}}",
        schema::to_json(key_message, &key_data, 0)
    );
    let Some(value) = value else {
        return Ok((key_json, "<DELETE>".to_string()));
    };
    let value_version = version(value, "value")?;
    if !value_message.has_version(value_version) {
        return Err(Failure::Other(format!(
            "Found an unknown record version {value_version} for {record_type} type"
        )));
    }
    let mut data = schema::read(value_message, &value[2..], value_version)
        .map_err(|e| read_error(value_version, "value", e))?;
    if c == Coordinator::Group && record_type == 2 {
        expand_consumer_protocol(&mut data);
    }
    let value_json = format!(
        "{{\"version\":\"{value_version}\",\"data\":{}}}",
        schema::to_json(value_message, &data, value_version)
    );
    Ok((key_json, value_json))
}

/// A consumer group's members hold their subscription and assignment as bytes of the consumer
/// protocol; Kafka's tool shows them as JSON when they read as such (and as base64 when not).
fn expand_consumer_protocol(data: &mut Value) {
    let is_consumer = matches!(
        field(&group::GROUP_METADATA_VALUE, data, "protocolType"),
        Some(Value::Str(p)) if p == "consumer"
    );
    let members_at = group::GROUP_METADATA_VALUE
        .fields
        .iter()
        .position(|f| f.name == "members");
    let (true, Some(at), Value::Struct(slots)) = (is_consumer, members_at, data) else {
        return;
    };
    let Some(Some(Value::Array(members))) = slots.get_mut(at) else {
        return;
    };
    for member in members {
        let Value::Struct(member_slots) = member else {
            continue;
        };
        for (name, message) in [
            ("subscription", &group::CONSUMER_PROTOCOL_SUBSCRIPTION),
            ("assignment", &group::CONSUMER_PROTOCOL_ASSIGNMENT),
        ] {
            let Some(at) = group::GROUP_METADATA_VALUE__MEMBER_METADATA_FIELDS
                .iter()
                .position(|f| f.name == name)
            else {
                continue;
            };
            let Some(slot) = member_slots.get_mut(at) else {
                continue;
            };
            if let Some(Value::Bytes(bytes)) = slot
                && let Some(text) = consumer_protocol_json(message, bytes)
            {
                *slot = Some(Value::Json(text));
            }
        }
    }
}

/// The consumer-protocol bytes (int16 version, then the message) as JSON, or `None` where
/// Kafka's tool keeps the bytes: they do not read, or the version cannot be written.
fn consumer_protocol_json(message: &Message, bytes: &[u8]) -> Option<String> {
    let version = i16::from_be_bytes(bytes.get(..2)?.try_into().ok()?);
    let data = schema::read(message, &bytes[2..], version).ok()?;
    Some(schema::to_json(message, &data, version))
}

/// A top-level field of a read message, by name.
fn field<'v>(message: &Message, data: &'v Value, name: &str) -> Option<&'v Value> {
    let Value::Struct(slots) = data else {
        return None;
    };
    let at = message.fields.iter().position(|f| f.name == name)?;
    slots.get(at)?.as_ref()
}

/// The cluster metadata record types (Kafka 4.3's `MetadataRecordType`): name and message.
fn metadata_message(id: i32) -> Option<(&'static str, &'static Message)> {
    use metadata::*;
    Some(match id {
        0 => ("REGISTER_BROKER_RECORD", &REGISTER_BROKER_RECORD),
        1 => ("UNREGISTER_BROKER_RECORD", &UNREGISTER_BROKER_RECORD),
        2 => ("TOPIC_RECORD", &TOPIC_RECORD),
        3 => ("PARTITION_RECORD", &PARTITION_RECORD),
        4 => ("CONFIG_RECORD", &CONFIG_RECORD),
        5 => ("PARTITION_CHANGE_RECORD", &PARTITION_CHANGE_RECORD),
        7 => ("FENCE_BROKER_RECORD", &FENCE_BROKER_RECORD),
        8 => ("UNFENCE_BROKER_RECORD", &UNFENCE_BROKER_RECORD),
        9 => ("REMOVE_TOPIC_RECORD", &REMOVE_TOPIC_RECORD),
        10 => ("DELEGATION_TOKEN_RECORD", &DELEGATION_TOKEN_RECORD),
        11 => (
            "USER_SCRAM_CREDENTIAL_RECORD",
            &USER_SCRAM_CREDENTIAL_RECORD,
        ),
        12 => ("FEATURE_LEVEL_RECORD", &FEATURE_LEVEL_RECORD),
        14 => ("CLIENT_QUOTA_RECORD", &CLIENT_QUOTA_RECORD),
        15 => ("PRODUCER_IDS_RECORD", &PRODUCER_IDS_RECORD),
        17 => (
            "BROKER_REGISTRATION_CHANGE_RECORD",
            &BROKER_REGISTRATION_CHANGE_RECORD,
        ),
        18 => ("ACCESS_CONTROL_ENTRY_RECORD", &ACCESS_CONTROL_ENTRY_RECORD),
        19 => (
            "REMOVE_ACCESS_CONTROL_ENTRY_RECORD",
            &REMOVE_ACCESS_CONTROL_ENTRY_RECORD,
        ),
        20 => ("NO_OP_RECORD", &NO_OP_RECORD),
        21 => ("ZK_MIGRATION_STATE_RECORD", &ZK_MIGRATION_STATE_RECORD),
        22 => (
            "REMOVE_USER_SCRAM_CREDENTIAL_RECORD",
            &REMOVE_USER_SCRAM_CREDENTIAL_RECORD,
        ),
        23 => ("BEGIN_TRANSACTION_RECORD", &BEGIN_TRANSACTION_RECORD),
        24 => ("END_TRANSACTION_RECORD", &END_TRANSACTION_RECORD),
        25 => ("ABORT_TRANSACTION_RECORD", &ABORT_TRANSACTION_RECORD),
        26 => (
            "REMOVE_DELEGATION_TOKEN_RECORD",
            &REMOVE_DELEGATION_TOKEN_RECORD,
        ),
        27 => ("REGISTER_CONTROLLER_RECORD", &REGISTER_CONTROLLER_RECORD),
        28 => ("CLEAR_ELR_RECORD", &CLEAR_ELR_RECORD),
        _ => return None,
    })
}

/// A cluster metadata record's JSON, or why it could not be read (`Error at <offset>, ...`).
fn parse_metadata(record: &RecordView<'_>) -> String {
    metadata_json(record.value.unwrap_or_default())
        .unwrap_or_else(|why| format!("Error at {}, skipping. {why}", record.offset))
}

/// `MetadataRecordSerde.read`: unsigned varints for the frame version (1), the record type and
/// its version, then the record, which must take the rest of the value.
fn metadata_json(value: &[u8]) -> Result<String, String> {
    let mut at = 0;
    let mut header = |name: &str| {
        let (v, len) = schema::unsigned_varint(&value[at..])
            .map_err(|_| format!("Error while reading {name}"))?;
        if v > i32::from(i16::MAX) {
            return Err(format!("Value for {name} was too large."));
        }
        at += len;
        Ok(v)
    };
    let frame = header("frame version")?;
    if frame == 0 {
        return Err(
            "Could not deserialize metadata record with frame version 0. Note that \
                    upgrades from the preview release of KRaft in 2.8 to newer versions are not \
                    supported."
                .into(),
        );
    }
    if frame != 1 {
        return Err(format!(
            "Could not deserialize metadata record due to unknown frame version {frame}(only \
             frame version 1 is supported)"
        ));
    }
    let record_type = header("type")?;
    let version = header("version")? as i16;
    let (name, message) = metadata_message(record_type).ok_or_else(|| {
        format!(
            "org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id \
             {record_type}"
        )
    })?;
    let (data, used) = schema::read_prefix(message, &value[at..], version)
        .map_err(|_| format!("Failed to deserialize record with type {record_type}"))?;
    let left = value.len() - at - used;
    if left > 0 {
        return Err(format!(
            "Found {left} byte(s) of garbage after {record_type}"
        ));
    }
    let data = schema::to_json(message, &data, version);
    Ok(format!(
        "{{\"type\":\"{name}\",\"version\":{version},\"data\":{data}}}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record<'a>(key: Option<&'a [u8]>, value: Option<&'a [u8]>) -> RecordView<'a> {
        RecordView {
            offset: 9,
            timestamp: 0,
            sequence: -1,
            key,
            value,
            headers: Default::default(),
        }
    }

    #[test]
    fn offset_commits_read_as_kafka_prints_them() {
        let key = [&[0, 1, 0, 1][..], b"g", &[0, 1], b"t", &[0, 0, 0, 0]].concat();
        let mut value = vec![0, 3];
        value.extend(5i64.to_be_bytes());
        value.extend(0i32.to_be_bytes());
        value.extend([0, 0]);
        value.extend(7i64.to_be_bytes());
        let parser = MessageParser::Coordinator(Coordinator::Group);
        let (k, v) = parser.parse(&record(Some(&key), Some(&value))).unwrap();
        assert_eq!(
            k.unwrap(),
            r#"{"type":"1","data":{"group":"g","topic":"t","partition":0}}"#
        );
        assert_eq!(
            v.unwrap(),
            r#"{"version":"3","data":{"offset":5,"leaderEpoch":0,"metadata":"","commitTimestamp":7}}"#
        );
        let (_, tombstone) = parser.parse(&record(Some(&key), None)).unwrap();
        assert_eq!(tombstone.unwrap(), "<DELETE>");
        let (k, v) = parser.parse(&record(Some(&[0, 99]), None)).unwrap();
        assert_eq!(k.unwrap(), "Unknown record type 99 at offset 9, skipping.");
        assert_eq!(v, None);
        let (k, _) = parser.parse(&record(Some(&[0, 1, 0]), None)).unwrap();
        assert_eq!(
            k.unwrap(),
            "Error at offset 9, skipping. Could not read record with version 1 from key's \
             buffer due to: null."
        );
        assert!(parser.parse(&record(None, Some(&value))).is_err());
    }

    #[test]
    fn every_key_has_one_plain_version() {
        let all = (0..30).filter_map(group_messages).chain(
            [0, 1]
                .into_iter()
                .filter_map(|id| Coordinator::Share.messages(id)),
        );
        for (key, value) in all.chain(Coordinator::Transaction.messages(0)) {
            assert_eq!((key.versions, key.flexible), (1, 0));
            assert!(value.versions != 0);
        }
    }

    #[test]
    fn cluster_metadata_records_and_their_errors() {
        // Frame version 1, NoOpRecord (20) version 0, no fields, no tagged fields.
        assert_eq!(
            metadata_json(&[1, 20, 0, 0]).unwrap(),
            r#"{"type":"NO_OP_RECORD","version":0,"data":{}}"#
        );
        assert_eq!(
            metadata_json(&[1, 20, 0, 0, 7]).unwrap_err(),
            "Found 1 byte(s) of garbage after 20"
        );
        assert_eq!(
            metadata_json(&[1, 99, 0]).unwrap_err(),
            "org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id 99"
        );
        assert_eq!(
            metadata_json(&[]).unwrap_err(),
            "Error while reading frame version"
        );
    }
}
