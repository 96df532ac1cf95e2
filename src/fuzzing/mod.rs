//! Entry points for the fuzz targets in `fuzz/`, compiled only with the `fuzzing` feature and
//! not part of kafkit's API. Each takes the fuzzer's bytes and feeds them to code that reads
//! untrusted input, the way kafkit itself calls that code. Any panic is a finding: one inside
//! kafkit is the bug being looked for, and the assertions here check properties the code must
//! keep (round trips, agreement between two readers of the same bytes) where that is cheap.
//!
//! - [`record_batch`]: the RecordBatch v2 decoder, with every codec.
//! - [`produce_batches`]: the server's checks of a Produce request's records: what it accepts,
//!   the consumer reads.
//! - [`response_frame`]: response frames as the remote client decodes them, and the record
//!   batches of a Fetch response as the consumer walks them.
//! - [`command_config`]: `--command-config` properties files and `sasl.jaas.config`.
//! - [`json_input`]: the producer's `--input json` lines.
//! - [`reset_plan`]: `--from-file` reset plans of `kafka-consumer-groups`.
//! - [`segment_recovery`]: a partition's segment, index and checkpoint files holding arbitrary
//!   bytes, read by a consumer and recovered by a writer.
//!
//! The first bytes of an input often choose a mode or a setting (see each function), so that
//! one target reaches several entry points and the fuzzer can steer between them.

mod config;
mod frames;
mod json;
mod plan;
mod record;
mod segment;

use std::path::{Path, PathBuf};

pub use config::command_config;
pub use frames::{response_apis, response_frame};
pub use json::json_input;
pub use plan::reset_plan;
pub use record::{produce_batches, record_batch};
pub use segment::segment_recovery;

/// Reads an input front to back; past its end every read gives zeros (or nothing), so any
/// input is a valid one.
pub(crate) struct Input<'a> {
    data: &'a [u8],
}

impl<'a> Input<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Input { data }
    }

    pub fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    pub fn bytes<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        for b in &mut out {
            *b = self.byte();
        }
        out
    }

    pub fn i16(&mut self) -> i16 {
        i16::from_be_bytes(self.bytes())
    }

    pub fn i32(&mut self) -> i32 {
        i32::from_be_bytes(self.bytes())
    }

    pub fn i64(&mut self) -> i64 {
        i64::from_be_bytes(self.bytes())
    }

    /// The next `n` bytes, or fewer at the end.
    pub fn take(&mut self, n: usize) -> &'a [u8] {
        let (head, rest) = self.data.split_at(n.min(self.data.len()));
        self.data = rest;
        head
    }

    /// Everything not read yet.
    pub fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.data)
    }
}

/// A directory of this process's own for targets that need files: under `/dev/shm` when there
/// is one (the targets fsync, which costs nothing there), else the temporary directory. Left
/// behind by a fuzzer that exits, so directories of processes that no longer run are removed
/// first.
pub(crate) fn scratch_dir(what: &str) -> PathBuf {
    let shm = Path::new("/dev/shm");
    let parent = if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    let prefix = "kafkit-fuzz-";
    if let Ok(entries) = std::fs::read_dir(&parent) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let pid = name
                .strip_prefix(prefix)
                .and_then(|rest| rest.split('-').next());
            if let Some(pid) = pid
                && !Path::new("/proc").join(pid).exists()
            {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
    let dir = parent.join(format!("{prefix}{}-{what}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory for the fuzz target");
    dir
}
