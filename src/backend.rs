//! Picks where a tool's commands run: the embedded local log, or (later) a Kafka cluster.
//!
//! `--bootstrap-server` (or `bootstrap.servers` in the command config) selects a cluster;
//! otherwise the log directory is `--log-dir`, else `$KAFKIT_LOG_DIR`, else
//! `$XDG_DATA_HOME/kafkit` (`~/.local/share/kafkit`).

use std::path::{Path, PathBuf};

use crate::local::{LocalError, LogDir};

/// Where the commands run.
#[derive(Debug)]
pub enum Backend {
    Local(LogDir),
}

/// Why no backend could be opened.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    #[error(
        "connecting to a Kafka cluster (--bootstrap-server {0}) is not supported by this kafkit version yet; omit --bootstrap-server to use the embedded log"
    )]
    RemoteUnsupported(String),
    #[error(transparent)]
    Local(#[from] LocalError),
    #[error(
        "cannot find a home for the embedded log: set --log-dir, KAFKIT_LOG_DIR, XDG_DATA_HOME or HOME"
    )]
    NoLogDir,
}

/// The log directory to use when no `--log-dir` was given.
pub fn default_log_dir() -> Option<PathBuf> {
    let non_empty = |name| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = non_empty("KAFKIT_LOG_DIR") {
        return Some(PathBuf::from(dir));
    }
    if let Some(data) = non_empty("XDG_DATA_HOME") {
        return Some(Path::new(&data).join("kafkit"));
    }
    non_empty("HOME").map(|home| Path::new(&home).join(".local/share/kafkit"))
}

impl Backend {
    /// Opens the backend chosen by the connection options.
    pub fn open(
        bootstrap_servers: Option<&str>,
        log_dir: Option<&Path>,
    ) -> Result<Backend, BackendError> {
        if let Some(servers) = bootstrap_servers {
            return Err(BackendError::RemoteUnsupported(servers.to_string()));
        }
        let dir = match log_dir {
            Some(dir) => dir.to_path_buf(),
            None => default_log_dir().ok_or(BackendError::NoLogDir)?,
        };
        Ok(Backend::Local(LogDir::open(&dir)?))
    }
}
