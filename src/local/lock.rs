//! Advisory `flock` locks on permanent lock files, with a deadline.
//!
//! Locks belong to the open file description, so they die with the process (`kill -9` never
//! leaves a stale lock). Lock files are created once and never removed or renamed.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::error::{LocalError, Result};

/// How long to wait for a lock before giving up with a clear error.
pub const LOCK_TIMEOUT: Duration = Duration::from_secs(30);

/// Shared (readers, producers per flush) or exclusive (writers, metadata changes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockMode {
    Shared,
    Exclusive,
}

/// A held lock; released on drop.
#[derive(Debug)]
pub struct FileLock {
    /// `None`: a shared lock where the lock file is missing and cannot be created (a read-only
    /// log dir, which no one can write to anyway).
    file: Option<File>,
    path: PathBuf,
}

impl FileLock {
    /// Takes the lock on `path` (created if missing), waiting up to [`LOCK_TIMEOUT`].
    pub fn acquire(path: &Path, mode: LockMode) -> Result<FileLock> {
        Self::acquire_within(path, mode, LOCK_TIMEOUT)
    }

    /// Takes the lock, waiting up to `timeout`.
    pub fn acquire_within(path: &Path, mode: LockMode, timeout: Duration) -> Result<FileLock> {
        Self::acquire_waiting(path, mode, timeout, || Ok(()))
    }

    /// [`FileLock::acquire_within`], calling `waiting` between attempts while the lock is
    /// taken (a group member heartbeats there); its error ends the wait.
    pub fn acquire_waiting(
        path: &Path,
        mode: LockMode,
        timeout: Duration,
        mut waiting: impl FnMut() -> Result<()>,
    ) -> Result<FileLock> {
        let Some(file) = open_lock_file(path, mode)? else {
            return Ok(FileLock {
                file: None,
                path: path.to_path_buf(),
            });
        };
        let start = Instant::now();
        let mut pause = Duration::from_micros(200);
        loop {
            let attempt = match mode {
                LockMode::Shared => file.try_lock_shared(),
                LockMode::Exclusive => file.try_lock(),
            };
            match attempt {
                Ok(()) => {
                    return Ok(FileLock {
                        file: Some(file),
                        path: path.to_path_buf(),
                    });
                }
                Err(TryLockError::WouldBlock) => {
                    if start.elapsed() >= timeout {
                        return Err(LocalError::LockTimeout {
                            path: path.to_path_buf(),
                            waited_ms: start.elapsed().as_millis() as u64,
                        });
                    }
                    waiting()?;
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(20));
                }
                Err(TryLockError::Error(e)) => {
                    return Err(LocalError::io(format!("cannot lock {}", path.display()), e));
                }
            }
        }
    }

    /// Takes the lock only if it is free right now.
    pub fn try_acquire(path: &Path, mode: LockMode) -> Result<Option<FileLock>> {
        match Self::acquire_within(path, mode, Duration::ZERO) {
            Ok(lock) => Ok(Some(lock)),
            Err(LocalError::LockTimeout { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        if let Some(file) = &self.file {
            let _ = file.unlock();
        }
    }
}

/// Opens the lock file. Shared locks (readers) open it read-only, since `flock` does not need
/// write access, so a read-only mount or another user's log dir can be read; where the file is
/// missing and cannot be created there, a reader goes without (`None`): nothing can write.
/// Exclusive locks (writers) open it read-write, creating it on first use.
fn open_lock_file(path: &Path, mode: LockMode) -> Result<Option<File>> {
    let context = || format!("cannot open lock file {}", path.display());
    if mode == LockMode::Shared {
        match File::open(path) {
            Ok(file) => return Ok(Some(file)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(LocalError::io(context(), e)),
        }
    }
    let created = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path);
    match created {
        Ok(file) => Ok(Some(file)),
        Err(e) if mode == LockMode::Shared && super::error::is_read_only(&e) => Ok(None),
        Err(e) => Err(LocalError::io(context(), e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exclusive_excludes_and_shared_shares() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".lock");
        let a = FileLock::acquire(&path, LockMode::Shared).unwrap();
        let b = FileLock::try_acquire(&path, LockMode::Shared).unwrap();
        assert!(b.is_some());
        assert!(
            FileLock::try_acquire(&path, LockMode::Exclusive)
                .unwrap()
                .is_none()
        );
        drop((a, b));
        let x = FileLock::try_acquire(&path, LockMode::Exclusive).unwrap();
        assert!(x.is_some());
        let err = FileLock::acquire_within(&path, LockMode::Shared, Duration::from_millis(30));
        assert!(matches!(err, Err(LocalError::LockTimeout { .. })));
    }
}
