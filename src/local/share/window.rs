//! One share partition's in-flight window (Kafka's `SharePartition`), without I/O: the
//! share-partition start offset (SPSO: every offset below it is done) and the state of each
//! offset from there to the first offset never delivered, with its delivery count and, while
//! acquired, its member and lock deadline.
//!
//! Records move AVAILABLE -> ACQUIRED (delivered to one member, count + 1) -> ACKNOWLEDGED
//! (accepted) or ARCHIVED (rejected, a gap) or AVAILABLE again (released, or the lock expired,
//! or the member went away), except that a record given back after its last allowed delivery
//! is archived. The window never holds more offsets than the group's max record locks.
//!
//! The file form (`WindowFile`) keeps runs of equal entries, so a window of thousands of
//! offsets in a few states is a few lines of JSON.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::kafka::share::{AcknowledgeType, Acquired, RecordState};

/// One offset of the window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub state: RecordState,
    /// How many times the record was delivered.
    pub delivery_count: i16,
    /// The member that holds it (ACQUIRED only).
    pub member: Option<String>,
    /// When its lock expires, in ms since the epoch (ACQUIRED only).
    pub lock_until_ms: i64,
}

impl Entry {
    fn available(delivery_count: i16) -> Entry {
        Entry {
            state: RecordState::Available,
            delivery_count,
            member: None,
            lock_until_ms: 0,
        }
    }

    fn terminal(state: RecordState, delivery_count: i16) -> Entry {
        Entry {
            state,
            delivery_count,
            member: None,
            lock_until_ms: 0,
        }
    }

    fn held_by(&self, member: &str) -> bool {
        self.state == RecordState::Acquired && self.member.as_deref() == Some(member)
    }

    /// Gives an acquired record back: available again, or archived after its last delivery.
    fn release(&mut self, delivery_limit: i16) {
        *self = if self.delivery_count >= delivery_limit {
            Entry::terminal(RecordState::Archived, self.delivery_count)
        } else {
            Entry::available(self.delivery_count)
        };
    }
}

/// Why an acknowledgement was refused (nothing of it was applied).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidRecordState {
    pub offset: i64,
}

/// A share partition's window.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ShareWindow {
    /// The SPSO; -1 until the group first reads the partition (then `share.auto.offset.reset`
    /// places it).
    start_offset: i64,
    /// `entries[i]` is offset `start_offset + i`.
    entries: VecDeque<Entry>,
}

impl ShareWindow {
    /// A partition the group has not read yet.
    pub fn uninitialized() -> ShareWindow {
        ShareWindow {
            start_offset: -1,
            entries: VecDeque::new(),
        }
    }

    /// A window starting at `offset` with nothing in flight (a reset's new start).
    pub fn starting_at(offset: i64) -> ShareWindow {
        ShareWindow {
            start_offset: offset,
            entries: VecDeque::new(),
        }
    }

    /// The SPSO, or -1 while uninitialized.
    pub fn start_offset(&self) -> i64 {
        self.start_offset
    }

    pub fn is_initialized(&self) -> bool {
        self.start_offset >= 0
    }

    /// The first offset never delivered (Kafka's SPEO + 1).
    pub fn next_offset(&self) -> i64 {
        self.start_offset + self.entries.len() as i64
    }

    /// Records in the window that are done (Kafka's delivery complete count, which the lag
    /// leaves out).
    pub fn delivery_complete_count(&self) -> i64 {
        self.entries
            .iter()
            .filter(|e| e.state.is_terminal())
            .count() as i64
    }

    /// The entry of `offset`, if it is in the window.
    pub fn entry(&self, offset: i64) -> Option<&Entry> {
        let i = usize::try_from(offset.checked_sub(self.start_offset)?).ok()?;
        self.entries.get(i)
    }

    /// Keeps the window within the log: a start below the log start (retention, deleted
    /// records) moves up to it, the offsets passed over counting as done; a start past the log
    /// end (the topic was emptied and written again) goes back to the end.
    pub fn fit_to_log(&mut self, log_start: i64, log_end: i64) {
        if !self.is_initialized() {
            return;
        }
        while self.start_offset < log_start {
            self.entries.pop_front();
            self.start_offset += 1;
            if self.entries.is_empty() {
                self.start_offset = log_start;
            }
        }
        if self.next_offset() > log_end {
            self.entries.clear();
            self.start_offset = self.start_offset.min(log_end);
        }
    }

    /// Places an uninitialized window at `offset`.
    pub fn initialize(&mut self, offset: i64) {
        if !self.is_initialized() {
            self.start_offset = offset;
            self.entries.clear();
        }
    }

    /// Releases every acquired record whose lock expired by `now_ms` or whose member `gone`
    /// says went away. Returns how many were released.
    pub fn release_expired(
        &mut self,
        now_ms: i64,
        delivery_limit: i16,
        mut gone: impl FnMut(&str) -> bool,
    ) -> usize {
        let mut released = 0;
        for entry in self.entries.iter_mut() {
            if entry.state != RecordState::Acquired {
                continue;
            }
            let member_gone = entry.member.as_deref().is_none_or(&mut gone);
            if entry.lock_until_ms <= now_ms || member_gone {
                entry.release(delivery_limit);
                released += 1;
            }
        }
        released
    }

    /// Releases every record `member` holds (it is closing). Returns how many.
    pub fn release_member(&mut self, member: &str, delivery_limit: i16) -> usize {
        let mut released = 0;
        for entry in self.entries.iter_mut().filter(|e| e.held_by(member)) {
            entry.release(delivery_limit);
            released += 1;
        }
        released
    }

    /// Applies `kind` to offsets `first..=last`, which `member` must hold; offsets below the
    /// window are done already and ignored. All or nothing.
    pub fn acknowledge(
        &mut self,
        member: &str,
        first: i64,
        last: i64,
        kind: AcknowledgeType,
        delivery_limit: i16,
    ) -> Result<(), InvalidRecordState> {
        let from = first.max(self.start_offset);
        if from > last {
            return Ok(());
        }
        for offset in from..=last {
            if !self.entry(offset).is_some_and(|e| e.held_by(member)) {
                return Err(InvalidRecordState { offset });
            }
        }
        let start = (from - self.start_offset) as usize;
        let end = (last - self.start_offset) as usize;
        for entry in self.entries.range_mut(start..=end) {
            match kind {
                AcknowledgeType::Accept => {
                    *entry = Entry::terminal(RecordState::Acknowledged, entry.delivery_count)
                }
                AcknowledgeType::Reject | AcknowledgeType::Gap => {
                    *entry = Entry::terminal(RecordState::Archived, entry.delivery_count)
                }
                AcknowledgeType::Release => entry.release(delivery_limit),
            }
        }
        Ok(())
    }

    /// Delivers up to `max_records` offsets to `member`, locked until `lock_until_ms`: first
    /// records given back (lowest offsets first), then new offsets below `log_end`, as far as
    /// `max_locks` offsets in flight allow. Returns the offsets, in runs of equal delivery
    /// count.
    pub fn acquire(
        &mut self,
        member: &str,
        lock_until_ms: i64,
        max_records: usize,
        log_end: i64,
        max_locks: usize,
    ) -> Vec<Acquired> {
        let mut acquired: Vec<Acquired> = Vec::new();
        let take = |offset: i64, entry: &mut Entry, acquired: &mut Vec<Acquired>| {
            entry.state = RecordState::Acquired;
            entry.delivery_count = entry.delivery_count.saturating_add(1);
            entry.member = Some(member.to_string());
            entry.lock_until_ms = lock_until_ms;
            match acquired.last_mut() {
                Some(run)
                    if run.last + 1 == offset && run.delivery_count == entry.delivery_count =>
                {
                    run.last = offset
                }
                _ => acquired.push(Acquired {
                    first: offset,
                    last: offset,
                    delivery_count: entry.delivery_count,
                }),
            }
        };
        let mut count = 0;
        let start = self.start_offset;
        for (i, entry) in self.entries.iter_mut().enumerate() {
            if count == max_records {
                return acquired;
            }
            if entry.state == RecordState::Available {
                take(start + i as i64, entry, &mut acquired);
                count += 1;
            }
        }
        while count < max_records && self.next_offset() < log_end && self.entries.len() < max_locks
        {
            let offset = self.next_offset();
            let mut entry = Entry::available(0);
            take(offset, &mut entry, &mut acquired);
            self.entries.push_back(entry);
            count += 1;
        }
        acquired
    }

    /// Moves the SPSO past every leading offset that is done.
    pub fn advance(&mut self) {
        while self.entries.front().is_some_and(|e| e.state.is_terminal()) {
            self.entries.pop_front();
            self.start_offset += 1;
        }
    }

    /// The members holding records, each once.
    pub fn holders(&self) -> Vec<&str> {
        let mut holders: Vec<&str> = self
            .entries
            .iter()
            .filter(|e| e.state == RecordState::Acquired)
            .filter_map(|e| e.member.as_deref())
            .collect();
        holders.sort_unstable();
        holders.dedup();
        holders
    }

    /// The file form.
    pub fn to_file(&self) -> WindowFile {
        let mut runs: Vec<Run> = Vec::new();
        for (i, entry) in self.entries.iter().enumerate() {
            let offset = self.start_offset + i as i64;
            match runs.last_mut() {
                Some(run) if run.last + 1 == offset && run.same(entry) => run.last = offset,
                _ => runs.push(Run {
                    first: offset,
                    last: offset,
                    state: entry.state.code(),
                    delivery_count: entry.delivery_count,
                    member: entry.member.clone(),
                    lock_until_ms: entry.lock_until_ms,
                }),
            }
        }
        WindowFile {
            start_offset: self.start_offset,
            runs,
        }
    }

    /// The window of a file; `None` when the file does not describe one (runs out of order,
    /// not contiguous from the start, unknown states, or more than `max_entries` offsets).
    pub fn from_file(file: &WindowFile, max_entries: usize) -> Option<ShareWindow> {
        let mut window = ShareWindow {
            start_offset: file.start_offset,
            entries: VecDeque::new(),
        };
        if file.start_offset < -1 || (file.start_offset == -1 && !file.runs.is_empty()) {
            return None;
        }
        for run in &file.runs {
            let state = RecordState::from_code(run.state)?;
            if run.first != window.next_offset() || run.last < run.first {
                return None;
            }
            let len = usize::try_from(run.last - run.first + 1).ok()?;
            if window.entries.len() + len > max_entries {
                return None;
            }
            let entry = Entry {
                state,
                delivery_count: run.delivery_count,
                member: run
                    .member
                    .clone()
                    .filter(|_| state == RecordState::Acquired),
                lock_until_ms: run.lock_until_ms,
            };
            window.entries.extend(std::iter::repeat_n(entry, len));
        }
        Some(window)
    }
}

/// A window as it is stored: the SPSO and runs of equal entries.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowFile {
    pub start_offset: i64,
    pub runs: Vec<Run>,
}

/// Offsets `first..=last` in one state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Run {
    pub first: i64,
    pub last: i64,
    /// Kafka's state code.
    pub state: i8,
    pub delivery_count: i16,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member: Option<String>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub lock_until_ms: i64,
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

impl Run {
    fn same(&self, entry: &Entry) -> bool {
        self.state == entry.state.code()
            && self.delivery_count == entry.delivery_count
            && self.member == entry.member
            && self.lock_until_ms == entry.lock_until_ms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: i16 = 5;

    fn window_at(start: i64) -> ShareWindow {
        let mut w = ShareWindow::uninitialized();
        w.initialize(start);
        w
    }

    #[test]
    fn members_never_share_a_record_and_acceptance_moves_the_start() {
        let mut w = window_at(10);
        let a = w.acquire("a", 1_000, 3, 20, 100);
        assert_eq!(
            a,
            vec![Acquired {
                first: 10,
                last: 12,
                delivery_count: 1
            }]
        );
        let b = w.acquire("b", 1_000, 100, 20, 100);
        assert_eq!((b[0].first, b[0].last), (13, 19));
        assert_eq!(w.next_offset(), 20);
        assert!(
            w.acknowledge("b", 10, 10, AcknowledgeType::Accept, LIMIT)
                .is_err()
        );
        w.acknowledge("a", 10, 11, AcknowledgeType::Accept, LIMIT)
            .unwrap();
        w.advance();
        assert_eq!(w.start_offset(), 12);
        assert_eq!(w.holders(), vec!["a", "b"]);
    }

    #[test]
    fn released_and_expired_records_return_until_the_limit_archives_them() {
        let mut w = window_at(0);
        for delivery in 1..=LIMIT {
            let got = w.acquire("a", 100, 10, 1, 100);
            assert_eq!(got[0].delivery_count, delivery);
            w.acknowledge("a", 0, 0, AcknowledgeType::Release, LIMIT)
                .unwrap();
        }
        assert_eq!(w.entry(0).unwrap().state, RecordState::Archived);
        w.advance();
        assert_eq!(w.start_offset(), 1);

        let mut w = window_at(0);
        w.acquire("a", 100, 10, 2, 100);
        assert_eq!(w.release_expired(99, LIMIT, |_| false), 0);
        assert_eq!(w.release_expired(100, LIMIT, |_| false), 2);
        let again = w.acquire("b", 500, 10, 2, 100);
        assert_eq!(
            (again[0].first, again[0].last, again[0].delivery_count),
            (0, 1, 2)
        );
        assert_eq!(w.release_expired(0, LIMIT, |m| m == "b"), 2);
    }

    #[test]
    fn the_in_flight_limit_and_the_log_bound_what_is_acquired() {
        let mut w = window_at(0);
        assert_eq!(w.acquire("a", 1, 1000, 1000, 100)[0].last, 99);
        assert!(w.acquire("b", 1, 1000, 1000, 100).is_empty());
        w.acknowledge("a", 0, 49, AcknowledgeType::Reject, LIMIT)
            .unwrap();
        w.advance();
        assert_eq!(
            w.acquire("b", 1, 1000, 1000, 100)[0],
            Acquired {
                first: 100,
                last: 149,
                delivery_count: 1
            }
        );
        w.fit_to_log(120, 1000);
        assert_eq!(w.start_offset(), 120);
        assert_eq!(w.next_offset(), 150);
    }

    #[test]
    fn the_file_form_round_trips_and_bad_files_are_refused() {
        let mut w = window_at(5);
        w.acquire("a", 77, 4, 100, 100);
        w.acknowledge("a", 5, 6, AcknowledgeType::Accept, LIMIT)
            .unwrap();
        let file = w.to_file();
        assert_eq!(file.runs.len(), 2);
        assert_eq!(ShareWindow::from_file(&file, 100), Some(w.clone()));
        assert_eq!(ShareWindow::from_file(&file, 3), None);
        let mut bad = file.clone();
        bad.runs[1].first += 1;
        assert_eq!(ShareWindow::from_file(&bad, 100), None);
        let mut bad = file;
        bad.runs[0].state = 3;
        assert_eq!(ShareWindow::from_file(&bad, 100), None);
    }
}
