//! Control records as Kafka's tool describes them: the key's type (`ControlRecordType`), then a
//! transaction marker's epoch or the JSON of the KRaft control messages.

use super::batch::RecordView;
use super::java::{INVALID_RECORD, JavaError};
use super::schema::{self, control as messages};

/// What follows a control record's metadata on its line.
pub fn describe(record: &RecordView<'_>) -> Result<String, JavaError> {
    let type_id = type_id(record.key)?;
    Ok(match type_id {
        0 | 1 => {
            let epoch = end_txn_marker_epoch(record.value)?;
            let name = if type_id == 0 { "ABORT" } else { "COMMIT" };
            format!(" endTxnMarker: {name} coordinatorEpoch: {epoch}")
        }
        2 => format!(
            " LeaderChange: {}",
            message_json(&messages::LEADER_CHANGE_MESSAGE, record)?
        ),
        3 => format!(
            " SnapshotHeader {}",
            message_json(&messages::SNAPSHOT_HEADER_RECORD, record)?
        ),
        4 => format!(
            " SnapshotFooter {}",
            message_json(&messages::SNAPSHOT_FOOTER_RECORD, record)?
        ),
        5 => format!(
            " KRaftVersion {}",
            message_json(&messages::KRAFT_VERSION_RECORD, record)?
        ),
        6 => format!(
            " KRaftVoters {}",
            message_json(&messages::VOTERS_RECORD, record)?
        ),
        other => format!(" controlType: UNKNOWN({other})"),
    })
}

/// `ControlRecordType.parseTypeId`: int16 version (a negative one is corruption, a newer one
/// is read as 0), int16 type.
fn type_id(key: Option<&[u8]>) -> Result<i16, JavaError> {
    let Some(key) = key else {
        return Err(JavaError::new(
            "java.lang.NullPointerException",
            "Cannot invoke \"java.nio.ByteBuffer.duplicate()\" because \"key\" is null",
        ));
    };
    if key.len() < 4 {
        return Err(JavaError::new(
            INVALID_RECORD,
            format!(
                "Invalid value size found for control record key. Must have at least 4 bytes, but \
                 found only {}",
                key.len()
            ),
        ));
    }
    let version = i16::from_be_bytes([key[0], key[1]]);
    if version < 0 {
        return Err(JavaError::new(
            INVALID_RECORD,
            format!(
                "Invalid version found for control record: {version}. May indicate data corruption"
            ),
        ));
    }
    Ok(i16::from_be_bytes([key[2], key[3]]))
}

/// `EndTransactionMarker.deserializeValue`: int16 version, int32 coordinator epoch.
fn end_txn_marker_epoch(value: Option<&[u8]>) -> Result<i32, JavaError> {
    let underflow = || JavaError::bare("java.nio.BufferUnderflowException");
    let Some(value) = value else {
        return Err(JavaError::new(
            "java.lang.NullPointerException",
            "Cannot invoke \"java.nio.ByteBuffer.getShort()\" because \"value\" is null",
        ));
    };
    let version = value.get(..2).ok_or_else(underflow)?;
    let version = i16::from_be_bytes([version[0], version[1]]);
    if version < 0 {
        return Err(JavaError::new(
            INVALID_RECORD,
            format!(
                "Invalid version found for end transaction marker: {version}. May indicate data \
                 corruption"
            ),
        ));
    }
    let epoch = value.get(2..6).ok_or_else(underflow)?;
    Ok(i32::from_be_bytes(epoch.try_into().expect("4 bytes")))
}

/// A KRaft control message's JSON: the value read as version 0 of `message`, written for the
/// version its own `version` field names, as Kafka's tool does.
fn message_json(message: &schema::Message, record: &RecordView<'_>) -> Result<String, JavaError> {
    let value = record.value.unwrap_or_default();
    let data = schema::read(message, value, 0)?;
    let version = schema::int_field(message, &data, "version").unwrap_or(0);
    Ok(schema::to_json(message, &data, version as i16))
}
