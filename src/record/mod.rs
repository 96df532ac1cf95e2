//! Kafka records and RecordBatch v2: the unit shared by the local log and the wire.
//!
//! A producer builds batch bytes once with [`BatchBuilder`]; the local log stores those bytes as
//! they are (patching only the base offset and leader epoch, which the CRC does not cover); a
//! consumer reads them back with [`decode_batch`] or [`for_each_record`].

pub mod batch;
pub mod compression;
pub mod reader;
pub mod rewrite;
pub mod varint;

pub use batch::{
    BATCH_OVERHEAD, BatchBuilder, BatchHeader, BatchIter, LOG_OVERHEAD, RecordRef, decode_batch,
    encode_batch, encode_marker, for_each_record, for_each_record_crc, next_sequence,
    set_base_offset, set_log_append_time, set_partition_leader_epoch, verify_crc,
};
pub use compression::Compression;
pub use reader::{RawHeaders, RawRecord, RecordReader, RecordSource};
pub use rewrite::{BatchRewriter, empty_batch, rewrite_batch};

/// One record header: Kafka header keys are strings, values may be null.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Header {
    pub key: String,
    pub value: Option<Vec<u8>>,
}

/// An owned record with its absolute offset and timestamp.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Record {
    pub offset: i64,
    pub timestamp: i64,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub headers: Vec<Header>,
}

/// How a batch's timestamps were set (attribute bit 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimestampType {
    CreateTime,
    LogAppendTime,
}

impl TimestampType {
    /// The name Kafka prints (`CreateTime`, `LogAppendTime`).
    pub fn name(self) -> &'static str {
        match self {
            TimestampType::CreateTime => "CreateTime",
            TimestampType::LogAppendTime => "LogAppendTime",
        }
    }
}

/// Why bytes could not be read or written as a record batch.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RecordError {
    #[error("record batch is truncated: need {needed} bytes, have {available}")]
    Truncated { needed: usize, available: usize },
    #[error("record batch has invalid size {0}")]
    InvalidSize(i64),
    #[error("unsupported record batch magic {0} (only v2 is supported)")]
    UnsupportedMagic(i8),
    #[error("record batch CRC mismatch: stored {stored:#010x}, computed {computed:#010x}")]
    CrcMismatch { stored: u32, computed: u32 },
    #[error("unknown compression codec id {0}")]
    UnknownCodec(i16),
    #[error("corrupt record: {0}")]
    Corrupt(String),
    /// A record that does not parse, with Kafka's `InvalidRecordException` message.
    #[error("invalid record: {0}")]
    Invalid(String),
    #[error("{codec} compression failed: {message}")]
    Compression {
        codec: &'static str,
        message: String,
    },
}
