//! Swapping cleaned segments in for the segments they replace, crash-safely (Kafka's
//! `LocalLog.replaceSegments`), and finishing or rolling back a swap that a crash interrupted.
//!
//! The cleaner writes each new segment as `<base>.log.cleaned` (with `.index.cleaned` and
//! `.timeindex.cleaned`) without the partition lock. Under the exclusive lock it then:
//!
//! 1. checks that the segments it read are still there, unchanged (else it gives up);
//! 2. writes the `cleaner-checkpoint` if there is none yet (it marks a log with gaps, which
//!    must be known before the first gap appears) and the `cleaner-swap` marker, which names
//!    the offset where the replaced segments end and the new segments' bases;
//! 3. renames every `.cleaned` file to `.swap`, highest base first, and fsyncs the directory;
//! 4. deletes the replaced segments whose base no new segment takes;
//! 5. renames every `.swap` file to its final name (the `.log` last), fsyncs the directory and
//!    removes the marker.
//!
//! Whoever takes the partition lock next and finds the marker settles the swap: while any
//! `.cleaned` file is left, step 3 did not finish and nothing old was touched, so the new files
//! go (roll back); otherwise steps 4 and 5 are done again (roll forward). Readers never see a
//! mix: the swap happens under the exclusive lock, and a reader holding an old file keeps
//! reading it (files are unlinked or renamed over, never rewritten), while one that opens a
//! replaced name sees another inode and takes a new snapshot.

use std::collections::BTreeSet;
use std::io::ErrorKind;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::checkpoint::{read_cleaner_checkpoint, write_cleaner_checkpoint};
use super::{PartitionLog, SegmentInfo};
use crate::local::error::{IoContext, LocalError, Result};
use crate::local::lock::LockMode;
use crate::local::logdir::write_atomically;
use crate::local::segment::{
    INDEX_SUFFIX, LOG_SUFFIX, TIMEINDEX_SUFFIX, list_segments, remove_segment_files, segment_path,
    sync_dir,
};

/// Suffix of a cleaned segment's files while they are written.
pub(crate) const CLEANED_SUFFIX: &str = ".cleaned";
/// Suffix of a cleaned segment's files between the two renames of a swap.
const SWAP_SUFFIX: &str = ".swap";
/// Present from before the first `.swap` rename until after the last final rename.
pub(crate) const SWAP_MARKER: &str = "cleaner-swap";

/// A segment's three files, indexes first: the `.log` is renamed last, so a segment whose
/// `.log` has its new name has its new indexes too.
const SUFFIXES: [&str; 3] = [INDEX_SUFFIX, TIMEINDEX_SUFFIX, LOG_SUFFIX];

/// What a cleaning round swaps in.
#[derive(Debug)]
pub(crate) struct Replacement {
    /// The segments replaced, as the cleaner's snapshot saw them: the log's first segments.
    pub old: Vec<SegmentInfo>,
    /// The base of the first segment kept: where the replaced segments end.
    pub end: i64,
    /// The bases of the new segments, written as `<base>.log.cleaned` and its indexes.
    pub new: Vec<i64>,
    /// The cleaner checkpoint to write first if the log has none.
    pub first_dirty: i64,
}

/// `<dir>/<20-digit base><suffix><extra>`.
fn with_extra(dir: &Path, base: i64, suffix: &str, extra: &str) -> PathBuf {
    let mut path = segment_path(dir, base, suffix).into_os_string();
    path.push(extra);
    PathBuf::from(path)
}

/// The path of a cleaned segment file the cleaner writes.
pub(crate) fn cleaned_path(dir: &Path, base: i64, suffix: &str) -> PathBuf {
    with_extra(dir, base, suffix, CLEANED_SUFFIX)
}

/// Whether a swap was interrupted (its marker is there).
pub(crate) fn interrupted(dir: &Path) -> bool {
    dir.join(SWAP_MARKER).exists()
}

fn rename(from: &Path, to: &Path) -> Result<()> {
    std::fs::rename(from, to).context(|| {
        format!(
            "cannot rename {} to {}",
            from.display(),
            to.file_name().unwrap_or_default().to_string_lossy()
        )
    })
}

fn remove_if_there(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != ErrorKind::NotFound => Err(LocalError::io(
            format!("cannot delete {}", path.display()),
            e,
        )),
        _ => Ok(()),
    }
}

/// Files in `dir` whose names end with `extra`.
fn files_ending(dir: &Path, extra: &str) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).context(|| format!("cannot list {}", dir.display()))? {
        let entry = entry.context(|| format!("cannot list {}", dir.display()))?;
        if entry
            .file_name()
            .to_str()
            .is_some_and(|n| n.ends_with(extra))
        {
            found.push(entry.path());
        }
    }
    Ok(found)
}

/// Deletes the cleaned files a cleaner left (it gave up, or was killed while writing them).
pub(crate) fn remove_cleaned(dir: &Path) -> Result<()> {
    for path in files_ending(dir, CLEANED_SUFFIX)? {
        remove_if_there(&path)?;
    }
    Ok(())
}

/// The marker's text: the end of the replaced segments, then the new bases, one per line.
fn marker_text(end: i64, new: &[i64]) -> String {
    let mut text = format!("0\n{end}\n{}\n", new.len());
    for base in new {
        text.push_str(&format!("{base}\n"));
    }
    text
}

fn parse_marker(text: &str) -> Option<(i64, BTreeSet<i64>)> {
    let mut lines = text.lines();
    if lines.next()? != "0" {
        return None;
    }
    let end = lines.next()?.parse().ok()?;
    let count: usize = lines.next()?.parse().ok()?;
    let new: BTreeSet<i64> = lines.map(|l| l.parse().ok()).collect::<Option<_>>()?;
    (new.len() == count).then_some((end, new))
}

/// Lets a swap do its file operations one by one: all of them, except in the tests that stop
/// it where a crash could (after any number of them) and check what the next lock makes of it.
type Step<'a> = &'a mut dyn FnMut() -> Result<()>;

/// Steps 4 and 5: the replaced segments go and the new ones take their final names.
fn roll_forward(dir: &Path, end: i64, new: &BTreeSet<i64>, step: Step<'_>) -> Result<()> {
    let bases = list_segments(dir)?;
    // The last segment is the active one, never replaced (a guard against a wrong marker).
    let last = bases.last().copied();
    for base in bases {
        if base < end && !new.contains(&base) && Some(base) != last {
            step()?;
            remove_segment_files(dir, base)?;
        }
    }
    for &base in new {
        for suffix in SUFFIXES {
            let from = with_extra(dir, base, suffix, SWAP_SUFFIX);
            if from.exists() {
                step()?;
                rename(&from, &segment_path(dir, base, suffix))?;
            }
        }
    }
    sync_dir(dir)?;
    step()?;
    remove_if_there(&dir.join(SWAP_MARKER))
}

/// Settles an interrupted swap; call under the exclusive partition lock.
pub(super) fn finish_interrupted(dir: &Path) -> Result<()> {
    let marker = dir.join(SWAP_MARKER);
    let text =
        std::fs::read_to_string(&marker).context(|| format!("cannot read {}", marker.display()))?;
    let Some((end, new)) = parse_marker(&text).filter(|(end, new)| new.iter().all(|b| b < end))
    else {
        return Err(LocalError::Invalid(format!(
            "{} is damaged; a cleaning of this partition was interrupted and cannot be finished (restore the partition from a copy)",
            marker.display()
        )));
    };
    if files_ending(dir, CLEANED_SUFFIX)?.is_empty() {
        return roll_forward(dir, end, &new, &mut || Ok(()));
    }
    // Step 3 did not finish: nothing old was touched, and the new files go.
    for path in files_ending(dir, SWAP_SUFFIX)?
        .into_iter()
        .chain(files_ending(dir, CLEANED_SUFFIX)?)
    {
        remove_if_there(&path)?;
    }
    sync_dir(dir)?;
    remove_if_there(&marker)
}

impl PartitionLog {
    /// Swaps the cleaned segments of `r` in, under the exclusive lock. `false` (and the cleaned
    /// files deleted) when the log changed since the cleaner read it: retention, DeleteRecords
    /// or a repair removed or cut one of its segments.
    pub(crate) fn replace_segments(&self, r: &Replacement) -> Result<bool> {
        #[cfg(test)]
        return self.replace_segments_stepwise(r, &mut || {
            let left = tests::STEPS_LEFT.get();
            if left == 0 {
                return Err(LocalError::Invalid("stopped as by a crash".into()));
            }
            tests::STEPS_LEFT.set(left - 1);
            Ok(())
        });
        #[cfg(not(test))]
        self.replace_segments_stepwise(r, &mut || Ok(()))
    }

    fn replace_segments_stepwise(&self, r: &Replacement, step: Step<'_>) -> Result<bool> {
        let _lock = self.lock(LockMode::Exclusive)?;
        if !self.still_holds(r)? {
            remove_cleaned(&self.dir)?;
            return Ok(false);
        }
        if read_cleaner_checkpoint(&self.dir)?.is_none() {
            write_cleaner_checkpoint(&self.dir, r.first_dirty)?;
        }
        step()?;
        write_atomically(
            &self.dir.join(SWAP_MARKER),
            marker_text(r.end, &r.new).as_bytes(),
        )?;
        for &base in r.new.iter().rev() {
            for suffix in SUFFIXES {
                step()?;
                rename(
                    &cleaned_path(&self.dir, base, suffix),
                    &with_extra(&self.dir, base, suffix, SWAP_SUFFIX),
                )?;
            }
        }
        sync_dir(&self.dir)?;
        roll_forward(&self.dir, r.end, &r.new.iter().copied().collect(), step)?;
        Ok(true)
    }

    /// Whether the log still starts with the segments `r` replaces, each the same file at
    /// the same size, followed by a segment at `r.end`.
    fn still_holds(&self, r: &Replacement) -> Result<bool> {
        let Some(first) = r.old.first() else {
            return Ok(false);
        };
        // Segments wholly below the log start (left by an interrupted retention pass) are
        // not in a snapshot; they go with the swap.
        let mut bases = self.segment_bases()?;
        bases.retain(|&b| b >= first.base_offset);
        let n = r.old.len();
        if bases.len() <= n || bases[n] != r.end {
            return Ok(false);
        }
        for (seg, &base) in r.old.iter().zip(&bases) {
            if seg.base_offset != base {
                return Ok(false);
            }
            let path = segment_path(&self.dir, base, LOG_SUFFIX);
            match std::fs::metadata(&path) {
                Ok(m) if m.ino() == seg.inode && m.len() == seg.size => {}
                Ok(_) => return Ok(false),
                Err(e) if e.kind() == ErrorKind::NotFound => return Ok(false),
                Err(e) => return Err(LocalError::io(format!("cannot stat {}", path.display()), e)),
            }
        }
        Ok(true)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    thread_local! {
        /// How many more file operations this thread's swaps may do before they stop as a
        /// crash would stop them.
        pub(crate) static STEPS_LEFT: std::cell::Cell<usize> = const { std::cell::Cell::new(usize::MAX) };
    }

    #[test]
    fn the_marker_round_trips_and_refuses_damage() {
        let text = marker_text(40, &[0, 20]);
        assert_eq!(parse_marker(&text), Some((40, BTreeSet::from([0, 20]))));
        assert_eq!(parse_marker("0\n40\n2\n0\n"), None);
        assert_eq!(parse_marker("1\n40\n0\n"), None);
        assert_eq!(parse_marker("0\nx\n0\n"), None);
    }
}
