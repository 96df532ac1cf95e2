//! Dumping a `.log` segment or a `.checkpoint` KRaft snapshot: one line per batch, and with
//! deep iteration one line per record (control records decoded, contents through the chosen
//! parser), then the count of bytes at the end that are not a whole batch.

use super::batch::{Fields, RecordView, for_each_record, is_valid};
use super::control;
use super::file_records::{FileBatch, FileRecords};
use super::java::{self, JavaError, optional_long, utf8_lossy};
use super::parsers::MessageParser;
use super::{Findings, Out, Stop};
use crate::record::Compression;

/// What the options ask of a log dump.
pub struct LogOptions<'a> {
    pub print_contents: bool,
    pub deep_iteration: bool,
    pub skip_record_metadata: bool,
    pub max_bytes: i32,
    pub parser: &'a MessageParser,
}

/// Dumps the segment or snapshot at `display` (named `name`).
pub fn dump(
    display: &str,
    name: &str,
    opts: &LogOptions<'_>,
    out: &mut Out,
    findings: &mut Findings,
) -> Result<(), Stop> {
    if name.ends_with(".log") {
        let start = java::base_offset(name)?;
        out.line(&format!("Log starting offset: {start}"))?;
    } else if name == "bootstrap.checkpoint" {
        out.line("KRaft bootstrap snapshot")?;
    } else {
        let (offset, epoch) = snapshot_id(name)?;
        out.line(&format!("Snapshot end offset: {offset}, epoch: {epoch}"))?;
    }
    let records = FileRecords::open(display)?.slice(0, opts.max_bytes)?;
    let absolute = java::absolute(display);
    let mut valid_bytes = 0i64;
    let mut last_offset = -1i64;
    let mut frames = records.frames();
    while let Some(mut batch) = frames.next_batch()? {
        print_batch(&mut batch, valid_bytes, out)?;
        if opts.deep_iteration {
            print_records(
                &mut batch,
                &mut last_offset,
                opts,
                out,
                &mut |prev, next| findings.non_consecutive(&absolute, prev, next),
            )?;
        }
        valid_bytes += i64::from(batch.size_in_bytes());
    }
    let trailing = i64::from(records.size()) - valid_bytes;
    if trailing > 0 && opts.max_bytes == i32::MAX {
        out.line(&format!(
            "Found {trailing} invalid bytes at the end of {name}"
        ))?;
    }
    Ok(())
}

/// `<20-digit end offset>-<10-digit epoch>.checkpoint`, read as Kafka's `Snapshots.parse`
/// reads it; a name it cannot read ends the tool as it ends Kafka's.
fn snapshot_id(name: &str) -> Result<(i64, i32), JavaError> {
    let part = |begin: usize, end: usize| {
        name.get(begin..end).ok_or_else(|| {
            JavaError::new(
                "java.lang.StringIndexOutOfBoundsException",
                format!(
                    "begin {begin}, end {end}, length {}",
                    name.encode_utf16().count()
                ),
            )
        })
    };
    let offset = java::parse_long(part(0, 20)?)?;
    let epoch_text = part(21, 31)?;
    let epoch = java::parse_long(epoch_text)
        .ok()
        .and_then(|e| i32::try_from(e).ok())
        .ok_or_else(|| {
            JavaError::new(
                "java.lang.NumberFormatException",
                format!("For input string: \"{epoch_text}\""),
            )
        })?;
    Ok((offset, epoch))
}

/// The batch line, its fields read in Kafka's order: a field that cannot be read ends the tool
/// where Kafka's would, with the first part of the line already printed.
fn print_batch(batch: &mut FileBatch<'_>, position: i64, out: &mut Out) -> Result<(), Stop> {
    if batch.magic < 2 {
        return print_legacy_batch(batch, position, out);
    }
    let base_offset = batch.offset;
    let f = Fields::of(batch.header()?)?;
    let h = f.header();
    out.print(&format!(
        "baseOffset: {base_offset} lastOffset: {} count: {} baseSequence: {} lastSequence: {} \
         producerId: {} producerEpoch: {} partitionLeaderEpoch: {} isTransactional: {} \
         isControl: {} deleteHorizonMs: {}",
        f.last_offset(),
        h.records_count,
        h.base_sequence,
        f.last_sequence(),
        h.producer_id,
        h.producer_epoch,
        h.partition_leader_epoch,
        f.is_transactional(),
        f.is_control(),
        optional_long(f.delete_horizon_ms()),
    ))?;
    let (timestamp_type, max_timestamp, crc) = (f.timestamp_type(), h.max_timestamp, h.crc);
    let codec = f.compression()?.name();
    let valid = is_valid(batch.full()?);
    out.line(&format!(
        " position: {position} {timestamp_type}: {max_timestamp} size: {} magic: {} \
         compresscodec: {codec} crc: {crc} isvalid: {valid}",
        batch.size_in_bytes(),
        batch.magic,
    ))?;
    Ok(())
}

/// The line of a message set of the formats before 0.11 (magic 0 and 1): its one (wrapper)
/// message's offset, timestamp, codec and CRC-32.
fn print_legacy_batch(batch: &mut FileBatch<'_>, position: i64, out: &mut Out) -> Result<(), Stop> {
    let magic = batch.magic;
    // The message after the offset and size: crc, magic, attributes, [timestamp,] key length.
    let header_size = 12 + 4 + 1 + 1 + if magic == 0 { 0 } else { 8 } + 4;
    let message = &batch.legacy_header(header_size)?[12..];
    let attributes = message[5];
    let (timestamp_type, timestamp) = if magic == 0 {
        ("NoTimestampType", -1)
    } else {
        let timestamp = i64::from_be_bytes(message[6..14].try_into().expect("8 bytes"));
        let kind = if attributes & 0x08 == 0 {
            "CreateTime"
        } else {
            "LogAppendTime"
        };
        (kind, timestamp)
    };
    let crc = u32::from_be_bytes(message[..4].try_into().expect("4 bytes"));
    let id = i16::from(attributes & 0x07);
    let codec = Compression::from_id(id)
        .map_err(|_| JavaError::illegal_argument(format!("Unknown compression type id: {id}")))?
        .name();
    let full = &batch.full()?[12..];
    let valid = full.len() >= 14 && {
        let mut sum = flate2::Crc::new();
        sum.update(&full[4..]);
        sum.sum() == crc
    };
    out.line(&format!(
        "offset: {} position: {position} {timestamp_type}: {timestamp} size: {} magic: {magic} \
         compresscodec: {codec} crc: {crc} isvalid: {valid}",
        batch.offset,
        batch.size_in_bytes(),
    ))?;
    Ok(())
}

/// Records of the formats before 0.11: kafkit does not read them (Kafka 4 writes none).
fn legacy_records(batch: &FileBatch<'_>) -> Stop {
    Stop::Unreadable(format!(
        "the magic v{} message set at position {} predates Kafka 0.11: kafkit's kafka-dump-log \
         shows its batch line but not its records; use Kafka's own kafka-dump-log for those",
        batch.magic, batch.position
    ))
}

/// The record lines of a batch.
fn print_records(
    batch: &mut FileBatch<'_>,
    last_offset: &mut i64,
    opts: &LogOptions<'_>,
    out: &mut Out,
    non_consecutive: &mut dyn FnMut(i64, i64),
) -> Result<(), Stop> {
    if batch.magic < 2 {
        return Err(legacy_records(batch));
    }
    for_each_record(batch, |fields, record| {
        print_record(fields, &record, last_offset, opts, out, non_consecutive)
    })
}

fn print_record(
    fields: &Fields,
    record: &RecordView<'_>,
    last_offset: &mut i64,
    opts: &LogOptions<'_>,
    out: &mut Out,
    non_consecutive: &mut dyn FnMut(i64, i64),
) -> Result<(), Stop> {
    if record.offset != last_offset.wrapping_add(1) {
        non_consecutive(*last_offset, record.offset);
    }
    *last_offset = record.offset;
    if !opts.skip_record_metadata {
        let header_keys: Vec<String> = record.headers.iter().map(|(k, _)| utf8_lossy(k)).collect();
        out.print(&format!(
            "| offset: {} {}: {} keySize: {} valueSize: {} sequence: {} headerKeys: [{}]",
            record.offset,
            fields.timestamp_type(),
            record.timestamp,
            record.key_size(),
            record.value_size(),
            record.sequence,
            header_keys.join(","),
        ))?;
        if fields.is_control() {
            out.print(&control::describe(record)?)?;
        }
    }
    if opts.print_contents && !fields.is_control() {
        let mut prefix = if opts.skip_record_metadata { "| " } else { " " };
        let (key, value) = opts.parser.parse(record)?;
        if let Some(key) = key {
            out.print(&format!("{prefix}key: {key}"))?;
            prefix = " ";
        }
        if let Some(value) = value {
            out.print(&format!("{prefix}payload: {value}"))?;
        }
    }
    out.line("")?;
    Ok(())
}
