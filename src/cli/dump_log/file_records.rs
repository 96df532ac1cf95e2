//! A segment file read as Kafka's `FileRecords` and `FileLogInputStream` read it: slices of
//! the file, batches framed by their offset and length fields alone, and each batch's header
//! and body loaded only when a field needs them, so that damage is met (and reported) at the
//! same point as in Kafka's tool.
//!
//! Read-only: files are opened for reading, never locked, never written.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::rc::Rc;

use super::java::{CORRUPT_RECORD, JavaError, open_error};
use crate::record::{BATCH_OVERHEAD, LOG_OVERHEAD};

/// Bytes up to and including the magic byte: what framing a batch reads.
const HEADER_SIZE_UP_TO_MAGIC: i32 = 17;
/// The smallest length field a batch of any format may have (`RECORD_OVERHEAD_V0`).
const MIN_LENGTH: i32 = 14;

/// A view of `[start, start + size)` of a segment file, as `FileRecords` keeps it.
pub struct FileRecords {
    /// Shared by the file's slices (one open file, as Kafka's slices share one channel).
    file: Rc<File>,
    /// `java.io.File.toString()` of the path.
    display: Rc<str>,
    start: i32,
    end: i32,
    size: i32,
    is_slice: bool,
}

impl FileRecords {
    /// `FileRecords.open(file, false)`: the whole file, which must fit in an `int`.
    pub fn open(display: &str) -> Result<FileRecords, JavaError> {
        let file = File::open(display).map_err(|e| open_error(display, &e))?;
        let len = file.metadata().map_err(|e| open_error(display, &e))?.len();
        if len > i32::MAX as u64 {
            return Err(JavaError::kafka(format!(
                "The size of segment {display} ({len}) is larger than the maximum allowed segment \
                 size of {}",
                i32::MAX
            )));
        }
        Ok(FileRecords {
            file: Rc::new(file),
            display: display.into(),
            start: 0,
            end: i32::MAX,
            size: len as i32,
            is_slice: false,
        })
    }

    pub fn size(&self) -> i32 {
        self.size
    }

    /// `FileRecords.slice(position, size)`, with Kafka's checks and messages.
    pub fn slice(&self, position: i32, size: i32) -> Result<FileRecords, JavaError> {
        if position < 0 {
            return Err(JavaError::illegal_argument(format!(
                "Invalid position: {position} in read from {self}"
            )));
        }
        if position > self.size {
            return Err(JavaError::illegal_argument(format!(
                "Slice from position {position} exceeds end position of {self}"
            )));
        }
        if size < 0 {
            return Err(JavaError::illegal_argument(format!(
                "Invalid size: {size} in read from {self}"
            )));
        }
        // As in Java's int arithmetic: an end past the file, or one that overflows, is the
        // file's end.
        let mut end = self.start.wrapping_add(position).wrapping_add(size);
        if end < 0 || end > self.start + self.size {
            end = self.start + self.size;
        }
        let start = self.start + position;
        Ok(FileRecords {
            file: Rc::clone(&self.file),
            display: Rc::clone(&self.display),
            start,
            end,
            size: end - start,
            is_slice: true,
        })
    }

    /// Reads `buf.len()` bytes at absolute file position `at`; how many were read before the
    /// end of the file.
    fn read_at(&self, buf: &mut [u8], at: i64) -> Result<usize, JavaError> {
        let mut done = 0;
        while done < buf.len() {
            match self.file.read_at(&mut buf[done..], at as u64 + done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(super::java::io_exception(&e)),
            }
        }
        Ok(done)
    }

    /// The batches of the view, framed as `FileLogInputStream` frames them.
    pub fn frames(&self) -> Frames<'_> {
        let end = if self.is_slice { self.end } else { self.size };
        Frames {
            records: self,
            position: self.start,
            end,
        }
    }
}

impl std::fmt::Display for FileRecords {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "FileRecords(size={}, file={}, start={}, end={})",
            self.size, self.display, self.start, self.end
        )
    }
}

/// Walks the batch frames of a view.
pub struct Frames<'a> {
    records: &'a FileRecords,
    position: i32,
    end: i32,
}

impl<'a> Frames<'a> {
    /// The next batch; `None` when fewer than a batch's framing bytes are left, or the batch
    /// runs past the end. A length field below any format's minimum is an error.
    pub fn next_batch(&mut self) -> Result<Option<FileBatch<'a>>, JavaError> {
        if i64::from(self.position) >= i64::from(self.end) - i64::from(HEADER_SIZE_UP_TO_MAGIC) {
            return Ok(None);
        }
        let mut head = [0u8; HEADER_SIZE_UP_TO_MAGIC as usize];
        // Kafka's batch iterator wraps a read error in a KafkaException.
        let got = self
            .records
            .read_at(&mut head, i64::from(self.position))
            .map_err(|e| JavaError::kafka(format!("{}: {}", e.class, e.message_or_null())))?;
        if got < head.len() {
            return Ok(None);
        }
        let offset = i64::from_be_bytes(head[0..8].try_into().expect("8 bytes"));
        let size = i32::from_be_bytes(head[8..12].try_into().expect("4 bytes"));
        if size < MIN_LENGTH {
            return Err(JavaError::new(
                CORRUPT_RECORD,
                format!(
                    "Found record size {size} smaller than minimum record overhead ({MIN_LENGTH}) \
                     in file {}.",
                    self.records.display
                ),
            ));
        }
        let end = i64::from(self.end) - LOG_OVERHEAD as i64 - i64::from(size);
        if i64::from(self.position) > end {
            return Ok(None);
        }
        let batch = FileBatch {
            records: self.records,
            position: self.position,
            offset,
            length: size,
            magic: head[16] as i8,
            header: None,
            full: None,
        };
        self.position += batch.size_in_bytes();
        Ok(Some(batch))
    }
}

/// One batch of a segment, its bytes loaded on demand (`FileChannelRecordBatch`).
pub struct FileBatch<'a> {
    records: &'a FileRecords,
    /// Absolute position in the file.
    pub position: i32,
    /// The base offset field, as framing read it.
    pub offset: i64,
    /// The length field.
    pub length: i32,
    pub magic: i8,
    header: Option<Vec<u8>>,
    full: Option<Vec<u8>>,
}

impl FileBatch<'_> {
    /// The batch's size, framing included.
    pub fn size_in_bytes(&self) -> i32 {
        LOG_OVERHEAD as i32 + self.length
    }

    /// Reads `size` bytes from the batch's position: an error (a read error, or the end of the
    /// file first) is Kafka's, which names the `FileRecords`; its cause is not on that line.
    fn load(&self, size: usize) -> Result<Vec<u8>, JavaError> {
        let mut buf = vec![0u8; size];
        let got = self.records.read_at(&mut buf, i64::from(self.position));
        if got.is_err() || got.is_ok_and(|got| got < size) {
            return Err(JavaError::kafka(format!(
                "Failed to load record batch at position {} from {}",
                self.position, self.records
            )));
        }
        Ok(buf)
    }

    /// The header's bytes (`loadBatchHeader`): the whole batch if it was loaded, else the
    /// first 61 bytes from its position, whatever its length says.
    pub fn header(&mut self) -> Result<&[u8], JavaError> {
        self.prefix(BATCH_OVERHEAD)
    }

    /// The first `size` bytes of a pre-0.11 message set (its header), or the whole of it if
    /// loaded.
    pub fn legacy_header(&mut self, size: usize) -> Result<&[u8], JavaError> {
        self.prefix(size)
    }

    /// The whole batch if it was loaded, else its first `size` bytes (loaded again when a
    /// shorter prefix was loaded before).
    fn prefix(&mut self, size: usize) -> Result<&[u8], JavaError> {
        if self.full.is_none() && self.header.as_ref().is_none_or(|h| h.len() < size) {
            self.header = Some(self.load(size)?);
        }
        Ok(self
            .full
            .as_deref()
            .or(self.header.as_deref())
            .expect("loaded above"))
    }

    /// The whole batch (`loadFullBatch`).
    pub fn full(&mut self) -> Result<&[u8], JavaError> {
        if self.full.is_none() {
            self.header = None;
            let size = self.size_in_bytes() as usize;
            self.full = Some(self.load(size)?);
        }
        Ok(self.full.as_deref().expect("loaded"))
    }
}
