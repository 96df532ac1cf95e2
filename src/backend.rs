//! Picks where a tool's commands run: the embedded local log, or a Kafka cluster.
//!
//! `--bootstrap-server` (or `bootstrap.servers` in the command config) selects a cluster;
//! otherwise the log directory is `--log-dir`, else `$KAFKIT_LOG_DIR`, else
//! `$XDG_DATA_HOME/kafkit` (`~/.local/share/kafkit`).

use std::path::{Path, PathBuf};

use crate::local::{LocalError, LogDir};
use crate::remote::{ClientConfig, Cluster, RemoteError};

/// Where the commands run.
#[derive(Debug)]
pub enum Backend {
    /// The embedded log in a directory.
    Local(LogDir),
    /// A Kafka cluster, connected to one of its bootstrap servers. Boxed: the client with its
    /// runtime is far larger than a log dir handle.
    Remote(Box<Cluster>),
}

/// Why no backend could be opened.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    #[error(transparent)]
    Remote(#[from] RemoteError),
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
    /// Opens the backend chosen by the connection options; with bootstrap servers, connects to
    /// the first that answers, using `config` (from the tool's client properties).
    pub fn open(
        bootstrap_servers: Option<&str>,
        log_dir: Option<&Path>,
        config: ClientConfig,
    ) -> Result<Backend, BackendError> {
        if let Some(servers) = bootstrap_servers {
            return Ok(Backend::Remote(Box::new(Cluster::connect(
                servers, config,
            )?)));
        }
        let dir = match log_dir {
            Some(dir) => dir.to_path_buf(),
            None => default_log_dir().ok_or(BackendError::NoLogDir)?,
        };
        Ok(Backend::Local(LogDir::open(&dir)?))
    }
}
