//! `kafka-server-start`: the embedded log served over the Kafka protocol, so that any Kafka
//! client (Java, librdkafka, Python, JavaScript) can use a kafkit log directory as its local
//! Kafka while the CLI tools read and write the same directory.
//!
//! One node leads every partition. Requests are decoded and responses encoded with the
//! kafka-protocol crate; the data goes through the embedded log's own code (`local`), so the
//! server and the tools share one format, one set of locks and one durability rule: a produce
//! is answered once its data is fdatasync'ed.
//!
//! - [`config`]: the broker properties the server reads; [`alloc`]: the allocator that keeps a
//!   hostile element count from aborting the process.
//! - `broker`: shared state; `connection`: one client; `dispatch`: request routing and
//!   ApiVersions; `handlers`: one module per API group; `appender`: group commit;
//!   `sequences`: idempotent producers; `groups`: the group coordinator; `cleaner`: the log
//!   cleaner's thread; `log`: stderr log lines.

pub mod alloc;
mod appender;
mod broker;
mod cleaner;
pub mod config;
mod connection;
mod dispatch;
mod groups;
pub(crate) mod handlers;
pub mod log;
mod sequences;
mod share;
pub(crate) mod txn;

use std::future::Future;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::watch;
use tokio::task::JoinSet;

pub use config::{READ_KEYS, ServerConfig};
pub use log::{Level, Logger};

use crate::local::LogDir;
use crate::local::lock::{FileLock, LockMode};
use broker::Broker;

/// The file a running server holds locked in its log directory, so that a second one is refused.
use crate::local::logdir::SERVER_LOCK;
/// How long in-flight requests get to finish after SIGINT or SIGTERM.
const DRAIN: Duration = Duration::from_secs(30);

/// Why the server could not start, in one line for the user.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct StartError(pub String);

/// Serves `log_dir` until SIGINT or SIGTERM; returns the signal's number once in-flight
/// requests are answered.
pub fn run(config: ServerConfig, log_dir: &Path, logger: Logger) -> Result<i32, StartError> {
    // Checked (not created) first, so that a refusal for any reason leaves nothing behind.
    LogDir::open(log_dir).map_err(|e| unusable(log_dir, e))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| StartError(format!("cannot start the server's threads: {e}")))?;
    runtime.block_on(async {
        let signal = signals()?;
        let listener = bind(&config).await?;
        serve(listener, log_dir, config, logger, signal).await
    })
}

/// Serves `log_dir` on `listener` until `shutdown` completes, then lets the requests in flight
/// finish (for up to 30 s) and returns what `shutdown` gave. [`run`] does this until a signal;
/// a test or an application can run it as a task. The directory is created when it is new;
/// a directory another server is serving is refused.
pub async fn serve(
    listener: TcpListener,
    log_dir: &Path,
    config: ServerConfig,
    logger: Logger,
    shutdown: impl Future<Output = i32>,
) -> Result<i32, StartError> {
    let dir = LogDir::open(log_dir).map_err(|e| unusable(log_dir, e))?;
    // Creates the directory (and its format marker) when it is new.
    drop(
        dir.lock(LockMode::Shared)
            .map_err(|e| unusable(log_dir, e))?,
    );
    let lock_path = log_dir.join(SERVER_LOCK);
    let _lock = match FileLock::try_acquire(&lock_path, LockMode::Exclusive) {
        Ok(Some(lock)) => lock,
        Ok(None) => {
            return Err(StartError(format!(
                "another kafka-server-start is serving {}; stop it first or choose another --log-dir",
                log_dir.display()
            )));
        }
        Err(e) => {
            return Err(StartError(format!(
                "cannot lock {}: {e}",
                lock_path.display()
            )));
        }
    };
    accept_until(listener, dir, config, logger, shutdown).await
}

fn unusable(log_dir: &Path, e: crate::local::LocalError) -> StartError {
    StartError(format!(
        "cannot use log directory {}: {e}",
        log_dir.display()
    ))
}

/// SIGINT or SIGTERM, as the signal's number.
fn signals() -> Result<impl Future<Output = i32>, StartError> {
    let mut interrupt = signal(SignalKind::interrupt()).map_err(|e| StartError(e.to_string()))?;
    let mut terminate = signal(SignalKind::terminate()).map_err(|e| StartError(e.to_string()))?;
    Ok(async move {
        tokio::select! {
            Some(()) = interrupt.recv() => 2,
            Some(()) = terminate.recv() => 15,
            // Both streams ended (the runtime is going away): no signal will come.
            else => std::future::pending().await,
        }
    })
}

/// Listens on the configured address.
async fn bind(config: &ServerConfig) -> Result<TcpListener, StartError> {
    let host = if config.listener.host.is_empty() {
        "0.0.0.0"
    } else {
        config.listener.host.as_str()
    };
    let wanted = format!("{host}:{}", config.listener.port);
    TcpListener::bind(&wanted).await.map_err(|e| {
        let hint = if e.kind() == std::io::ErrorKind::AddrInUse {
            "; another server listens there: stop it or choose another port with --override listeners=PLAINTEXT://127.0.0.1:PORT"
        } else {
            ""
        };
        StartError(format!("cannot listen on {wanted}: {e}{hint}"))
    })
}

/// Accepts connections until `shutdown` completes, then lets them finish.
async fn accept_until(
    listener: TcpListener,
    dir: LogDir,
    config: ServerConfig,
    logger: Logger,
    shutdown: impl Future<Output = i32>,
) -> Result<i32, StartError> {
    let bound = listener
        .local_addr()
        .map_err(|e| StartError(format!("cannot read the listening address: {e}")))?;
    let advertised = advertised_address(&config, bound);
    let broker = Arc::new(Broker::new(dir, config, advertised.clone(), logger));
    // Transactions decided before a crash are finished before any client is served.
    if let Err((_, e)) = broker.txns.recover(&broker).await {
        broker.log.warn(&format!(
            "Cannot finish the transactions decided before the last stop: {e}"
        ));
    }
    // Printed even with --quiet: scripts wait for it.
    broker.log.ready(&format!(
        "Kafka Server started: listening on PLAINTEXT://{bound}, advertised as {}, serving {} (node id {}, cluster id {})",
        host_port(&advertised.0, advertised.1),
        broker.dir.root().display(),
        broker.config.node_id,
        broker.cluster_id
    ));
    let maintenance = tokio::spawn(groups::maintain(Arc::clone(&broker)));
    let timeouts = tokio::spawn(txn::maintain(Arc::clone(&broker)));
    let cleaner = cleaner::Cleaner::start(Arc::clone(&broker));
    let (stop, stopping) = watch::channel(false);
    let mut connections = JoinSet::new();
    tokio::pin!(shutdown);
    let code = loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    connections.spawn(connection::serve(Arc::clone(&broker), stream, stopping.clone()));
                }
                // Out of file descriptors and the like: wait a moment rather than spin.
                Err(e) => {
                    broker.log.warn(&format!("Cannot accept a connection: {e}"));
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            },
            code = &mut shutdown => break code,
            // Reap finished connections so the set does not grow.
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    };
    drop(listener);
    maintenance.abort();
    timeouts.abort();
    if let Some(cleaner) = cleaner {
        let _ = tokio::task::spawn_blocking(move || cleaner.stop()).await;
    }
    broker
        .log
        .info("Shutting down: finishing the requests in flight");
    let _ = stop.send(true);
    let drained = tokio::time::timeout(DRAIN, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        broker
            .log
            .warn("Some requests did not finish in time; their clients will retry");
    }
    broker
        .log
        .info("Shut down: every acknowledged record is on disk");
    Ok(code)
}

/// `host:port`, with an IPv6 address in brackets.
fn host_port(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// What clients are told to connect to: `advertised.listeners`, else the bound address
/// (`localhost` for a listener on all interfaces).
fn advertised_address(config: &ServerConfig, bound: SocketAddr) -> (String, u16) {
    match &config.advertised {
        Some((host, port)) => {
            let host = if host.is_empty() {
                "localhost".to_string()
            } else {
                host.clone()
            };
            (host, if *port == 0 { bound.port() } else { *port })
        }
        None if bound.ip().is_unspecified() => ("localhost".to_string(), bound.port()),
        // Clients take the host as it is; an IPv6 address needs no brackets there.
        None => (bound.ip().to_string(), bound.port()),
    }
}
