//! Output that was written but not yet read: a commit covers only what the reader took.
//!
//! The console consumer grows its stdout pipe to about 1 MiB (`cli::pipe`), so write(2) takes
//! tens of thousands of records that the reader may never read (`| head -5` exits after its
//! first read). Counting those as delivered would commit records nobody saw. With a probe of
//! the bytes still unread ([`Consumer::commit_only_what_is_read`]), the engine keeps each
//! written record's position here until the reader has taken the bytes up to its end, and
//! only then moves what a commit covers.
//!
//! Positions are kept at the granularity of [`BLOCK`] bytes of output per partition: within
//! one block only the last record's position is kept, so that a pipe full of short lines
//! costs hundreds of entries, not a million. A reader that stopped inside a block has the
//! block's earlier records committed by the next block's end at the latest; the commit stays
//! behind what was read, never ahead of it.
//!
//! [`Consumer::commit_only_what_is_read`]: super::Consumer::commit_only_what_is_read

use std::collections::VecDeque;

/// Output bytes within which one position per partition is kept.
const BLOCK: u64 = 4096;

/// Bytes of written output that the reader has not taken yet (a pipe's `FIONREAD`).
pub type UnreadProbe = Box<dyn FnMut() -> u64 + Send>;

/// Written records' positions, in output order, until their bytes are read.
pub(super) struct Unread {
    probe: UnreadProbe,
    /// Bytes written so far (accepted by write(2)).
    written: u64,
    pending: VecDeque<Pending>,
}

impl std::fmt::Debug for Unread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Unread")
            .field("written", &self.written)
            .field("pending", &self.pending.len())
            .finish()
    }
}

/// Once the reader has taken `end` bytes of all output, partition `assigned` (an index into
/// the consumer's assignment) is delivered up to `next`.
struct Pending {
    end: u64,
    assigned: usize,
    next: i64,
}

impl Unread {
    pub fn new(probe: UnreadProbe) -> Self {
        Unread {
            probe,
            written: 0,
            pending: VecDeque::new(),
        }
    }

    /// A position that the last round's written output reaches at its byte `end_in_round`.
    pub fn written(&mut self, end_in_round: usize, assigned: usize, next: i64) {
        let end = self.written + end_in_round as u64;
        if let Some(last) = self.pending.back_mut()
            && last.assigned == assigned
            && last.end / BLOCK == end / BLOCK
        {
            // The same block: the later position is the one to keep (see the module docs).
            last.end = end;
            last.next = next;
            return;
        }
        self.pending.push_back(Pending {
            end,
            assigned,
            next,
        });
    }

    /// The last round's output is settled: `accepted` bytes of it were written.
    pub fn round_written(&mut self, accepted: usize) {
        self.written += accepted as u64;
    }

    /// Hands `deliver` every position whose bytes the reader has taken, in order.
    pub fn take_read(&mut self, mut deliver: impl FnMut(usize, i64)) {
        if self.pending.is_empty() {
            return;
        }
        let read = self.written.saturating_sub((self.probe)());
        while let Some(p) = self.pending.front()
            && p.end <= read
        {
            deliver(p.assigned, p.next);
            self.pending.pop_front();
        }
    }

    /// Bytes written that the reader has not taken yet.
    pub fn unread(&mut self) -> u64 {
        (self.probe)()
    }

    /// The assignment lost some partitions: `new_index[i]` is where partition `i` went, or
    /// `None` if it is gone (its unread records are then not committed by this member).
    pub fn reindex(&mut self, new_index: &[Option<usize>]) {
        self.pending
            .retain_mut(|p| match new_index.get(p.assigned).copied().flatten() {
                Some(i) => {
                    p.assigned = i;
                    true
                }
                None => false,
            });
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};

    use super::*;

    fn with_unread() -> (Unread, Arc<AtomicU64>) {
        let unread = Arc::new(AtomicU64::new(0));
        let probe = unread.clone();
        (
            Unread::new(Box::new(move || probe.load(Ordering::Relaxed))),
            unread,
        )
    }

    fn taken(u: &mut Unread) -> Vec<(usize, i64)> {
        let mut out = Vec::new();
        u.take_read(|i, next| out.push((i, next)));
        out
    }

    #[test]
    fn positions_move_only_as_far_as_the_reader_took() {
        let (mut u, unread) = with_unread();
        // Two partitions, records of 3000 bytes each, alternating.
        for (k, end) in (3000..=12_000).step_by(3000).enumerate() {
            u.written(end, k % 2, k as i64 + 1);
        }
        u.round_written(12_000);
        unread.store(12_000, Ordering::Relaxed);
        assert_eq!(taken(&mut u), []);
        unread.store(12_000 - 6000, Ordering::Relaxed);
        assert_eq!(taken(&mut u), [(0, 1), (1, 2)]);
        unread.store(0, Ordering::Relaxed);
        assert_eq!(taken(&mut u), [(0, 3), (1, 4)]);
        assert_eq!(u.unread(), 0);
    }

    #[test]
    fn short_records_keep_one_position_per_block_and_stay_behind() {
        let (mut u, unread) = with_unread();
        // 10,000 lines of 8 bytes of one partition: 20 blocks, 20 entries.
        for line in 1..=10_000 {
            u.written(line * 8, 0, line as i64);
        }
        u.round_written(80_000);
        assert_eq!(u.pending.len(), 80_000usize.div_ceil(BLOCK as usize));
        // The reader took 5000 bytes (625 lines): the first block's last line (511) is committed.
        unread.store(75_000, Ordering::Relaxed);
        assert_eq!(taken(&mut u), [(0, 511)]);
    }

    #[test]
    fn a_partition_that_is_gone_is_dropped_and_the_others_move() {
        let (mut u, unread) = with_unread();
        u.written(5000, 0, 10);
        u.written(10_000, 1, 20);
        u.written(15_000, 2, 30);
        u.round_written(15_000);
        u.reindex(&[Some(0), None, Some(1)]);
        unread.store(0, Ordering::Relaxed);
        assert_eq!(taken(&mut u), [(0, 10), (1, 30)]);
    }
}
