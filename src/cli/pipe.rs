//! Growing the pipe the consumer writes to.
//!
//! A Linux pipe holds 64 KiB by default. The consumer formats about 1 MiB per round and then
//! writes it; into a 64 KiB pipe that write waits until the reader has drained all but the
//! last 64 KiB, so decoding the next round never overlaps the reader's work and every 64 KiB
//! costs a pair of context switches. A pipe as large as a round takes the whole write at once
//! while the reader drains it in parallel.
//!
//! What write(2) accepted still counts as delivered (the consumer's commit rule): a larger pipe
//! only changes how much the kernel holds for the reader, as a larger 64 KiB pipe would.

use std::fs::File;

/// Grows `file`'s pipe buffer to `bytes` when `file` is a pipe, returning its new size.
///
/// Does nothing for anything else (a terminal, a file, a socket), and nothing where the kernel
/// refuses (an unprivileged user over `/proc/sys/fs/pipe-max-size` or the per-user pipe
/// budget): the pipe then keeps its size and everything works as before, only slower.
pub fn grow(file: &File, bytes: usize) -> Option<usize> {
    use std::os::unix::fs::FileTypeExt;
    if !file.metadata().ok()?.file_type().is_fifo() {
        return None;
    }
    set_size(file, bytes)
}

#[cfg(target_os = "linux")]
fn set_size(file: &File, bytes: usize) -> Option<usize> {
    rustix::pipe::fcntl_setpipe_size(file, bytes).ok()
}

#[cfg(not(target_os = "linux"))]
fn set_size(_file: &File, _bytes: usize) -> Option<usize> {
    None
}
