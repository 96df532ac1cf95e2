//! Growing the pipe the consumer writes to.
//!
//! A Linux pipe holds 64 KiB by default. The consumer formats about 1 MiB per round and then
//! writes it; into a 64 KiB pipe that write waits until the reader has drained all but the
//! last 64 KiB, so decoding the next round never overlaps the reader's work and every 64 KiB
//! costs a pair of context switches. A pipe as large as a round takes the whole write at once
//! while the reader drains it in parallel.
//!
//! A larger pipe also holds more that the reader may never read: `| head -5` exits after its
//! first read, leaving up to a megabyte of records in the pipe. So a group consumer commits only
//! what the reader took: the bytes written less those still in the pipe ([`unread`]).
//!
//! A larger pipe also holds more of a short topic's output at once: `| head -1` may exit while
//! everything is already written, and the consumer, caught up, has no write left to fail. So an
//! idle consumer asks whether its pipe's reader is gone ([`reader_gone`]).

use std::fs::File;

/// Grows `file`'s pipe buffer to at least `bytes` when `file` is a pipe, returning its size.
///
/// Does nothing for anything else (a terminal, a file, a socket), and nothing where the kernel
/// refuses (an unprivileged user over `/proc/sys/fs/pipe-max-size` or the per-user pipe
/// budget): the pipe then keeps its size and everything works as before, only slower.
pub fn grow(file: &File, bytes: usize) -> Option<usize> {
    if !is_pipe(file) {
        return None;
    }
    set_size(file, bytes)
}

/// Bytes written into the pipe `file` that its reader has not taken yet (`FIONREAD`, which a
/// pipe answers on either end, also after its reader has gone; 0 if it fails). Only for a
/// pipe ([`is_pipe`]): elsewhere `FIONREAD` means something else (a terminal's typed input).
/// Called once per consumer round, so it makes the one system call and no other.
pub fn unread(file: &File) -> u64 {
    rustix::io::ioctl_fionread(file).unwrap_or(0)
}

/// Whether `file` is a pipe (a FIFO).
pub fn is_pipe(file: &File) -> bool {
    use std::os::unix::fs::FileTypeExt;
    file.metadata().is_ok_and(|m| m.file_type().is_fifo())
}

/// The capacity of the pipe `file`, if the kernel says.
pub fn size(file: &File) -> Option<usize> {
    rustix::pipe::fcntl_getpipe_size(file).ok()
}

/// Waits up to `wait` for room in the pipe `file` of `size` bytes; returns how many bytes a
/// write may take without blocking, `None` if there is no room yet. A blocking write larger
/// than the room waits in the kernel, where Ctrl-C cannot reach the consumer's loop (the
/// handler's flag is set, the write restarts), so the caller writes at most this much.
///
/// Poll's POLLOUT means a free page at least (one `PIPE_BUF` write never blocks); past that
/// the room is the size less the unread bytes. A closed reader counts as room: the write then
/// fails with `EPIPE`, as it should.
pub fn room(file: &File, size: usize, wait: std::time::Duration) -> Option<usize> {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let mut fds = [PollFd::new(file, PollFlags::OUT)];
    let timeout = Timespec {
        tv_sec: wait.as_secs() as i64,
        tv_nsec: i64::from(wait.subsec_nanos()),
    };
    match poll(&mut fds, Some(&timeout)) {
        // A signal (Ctrl-C) ended the wait: no room is known, and the caller looks at it.
        Ok(0) | Err(rustix::io::Errno::INTR) => None,
        // Any other failed poll says nothing: let the write find out.
        _ => Some((size.saturating_sub(unread(file) as usize)).max(PIPE_BUF)),
    }
}

/// Standard output without Rust's buffer, for a consumer's records: the file, whether it is a
/// pipe, and the pipe's size once grown to `bytes` where the kernel allows ([`grow`]).
pub fn stdout_for_records(bytes: usize) -> std::io::Result<(File, bool, Option<usize>)> {
    use std::os::fd::AsFd;
    let stdout = File::from(std::io::stdout().as_fd().try_clone_to_owned()?);
    let is_pipe = is_pipe(&stdout);
    let size = grow(&stdout, bytes).or_else(|| is_pipe.then(|| size(&stdout)).flatten());
    Ok((stdout, is_pipe, size))
}

/// Writes `data` to `out` (standard output without Rust's buffer), returning how many bytes
/// `write(2)` accepted and how the writing ended.
///
/// Into a pipe of `pipe_size` bytes each write takes at most the pipe's room ([`room`]), so
/// that a reader that stopped reading never holds the writer inside write(2): Ctrl-C
/// (`interrupted`) stops the writing with an `Interrupted` error.
pub fn write_interruptibly(
    out: &mut File,
    pipe_size: Option<usize>,
    data: &[u8],
    interrupted: impl Fn() -> bool,
) -> (usize, std::io::Result<()>) {
    use std::io::Write;
    const WRITE_POLL: std::time::Duration = std::time::Duration::from_millis(100);
    let mut accepted = 0;
    let result = loop {
        if accepted == data.len() {
            break Ok(());
        }
        let mut end = data.len();
        if let Some(size) = pipe_size {
            match room(out, size, WRITE_POLL) {
                Some(room) => end = end.min(accepted + room),
                None if interrupted() => break Err(std::io::ErrorKind::Interrupted.into()),
                None => continue,
            }
        }
        match out.write(&data[accepted..end]) {
            Ok(0) => break Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => accepted += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => break Err(e),
        }
    };
    (accepted, result)
}

/// The most a pipe write takes whole once poll says there is room.
const PIPE_BUF: usize = 4096;

/// Whether `file` is a pipe whose reading end is closed: the next write would fail with
/// `EPIPE` (poll reports `POLLERR`). False for anything else and when poll fails.
pub fn reader_gone(file: &File) -> bool {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let mut fds = [PollFd::new(file, PollFlags::OUT)];
    let now = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    poll(&mut fds, Some(&now)).is_ok() && fds[0].revents().contains(PollFlags::ERR)
}

#[cfg(target_os = "linux")]
fn set_size(file: &File, bytes: usize) -> Option<usize> {
    // Never shrink a pipe someone made larger.
    match rustix::pipe::fcntl_getpipe_size(file) {
        Ok(size) if size >= bytes => Some(size),
        _ => rustix::pipe::fcntl_setpipe_size(file, bytes).ok(),
    }
}

#[cfg(not(target_os = "linux"))]
fn set_size(_file: &File, _bytes: usize) -> Option<usize> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_a_pipe_and_leaves_other_files_alone() {
        let (_reader, writer) = std::io::pipe().unwrap();
        let writer = File::from(std::os::fd::OwnedFd::from(writer));
        if cfg!(target_os = "linux") {
            assert!(grow(&writer, 256 * 1024).is_some_and(|size| size >= 256 * 1024));
            // Never shrinks it.
            assert!(grow(&writer, 4096).is_some_and(|size| size >= 256 * 1024));
        }
        let file = tempfile::tempfile().unwrap();
        assert_eq!(grow(&file, 256 * 1024), None);
    }

    #[test]
    fn counts_what_the_reader_has_not_taken() {
        use std::io::{Read, Write};
        let (mut reader, writer) = std::io::pipe().unwrap();
        let mut writer = File::from(std::os::fd::OwnedFd::from(writer));
        writer.write_all(&[7; 1000]).unwrap();
        assert_eq!(unread(&writer), 1000);
        reader.read_exact(&mut [0; 300]).unwrap();
        assert_eq!(unread(&writer), 700);
        // Still known once the reader is gone.
        drop(reader);
        assert_eq!(unread(&writer), 700);
        assert!(is_pipe(&writer));
        assert!(!is_pipe(&tempfile::tempfile().unwrap()));
        // (A new empty file has nothing past its position either.)
        assert_eq!(unread(&tempfile::tempfile().unwrap()), 0);
    }

    #[test]
    fn room_is_what_a_write_can_take_without_blocking() {
        use std::io::{Read, Write};
        use std::time::Duration;
        let (mut reader, writer) = std::io::pipe().unwrap();
        let mut writer = File::from(std::os::fd::OwnedFd::from(writer));
        let size = size(&writer).unwrap();
        assert_eq!(room(&writer, size, Duration::ZERO), Some(size));
        writer.write_all(&vec![1; size]).unwrap();
        // Full: no room, and the wait ends.
        assert_eq!(room(&writer, size, Duration::from_millis(10)), None);
        reader.read_exact(&mut vec![0; 8192]).unwrap();
        assert_eq!(room(&writer, size, Duration::ZERO), Some(8192));
    }

    #[test]
    fn sees_the_reader_go() {
        let (reader, writer) = std::io::pipe().unwrap();
        let writer = File::from(std::os::fd::OwnedFd::from(writer));
        assert!(!reader_gone(&writer));
        drop(reader);
        assert!(reader_gone(&writer));
        assert!(!reader_gone(&tempfile::tempfile().unwrap()));
    }
}
