//! Dumping a `.log` segment or a `.checkpoint` KRaft snapshot: one line per batch, and with
//! deep iteration one line per record (control records decoded, contents through the chosen
//! parser), then the count of bytes at the end that are not a whole batch.

use super::batch::{Fields, RecordView, for_each_record, is_valid};
use super::control;
use super::file_records::{FileBatch, FileRecords};
use super::java::{self, JavaError, optional_long, utf8_lossy};
use super::parsers::MessageParser;
use super::{Findings, Out, Stop};

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
        return Err(legacy_batch(batch).into());
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

/// Message sets of the formats before 0.11 (magic 0 and 1): Kafka 4 writes none and kafkit
/// does not read them.
fn legacy_batch(batch: &FileBatch<'_>) -> JavaError {
    JavaError::kafka(format!(
        "kafkit's kafka-dump-log cannot read the magic v{} message set at position {}: only \
         record batches (magic v2, Kafka 0.11 and later) are supported",
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
