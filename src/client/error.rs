//! [`ClientError`]: the one error type of the client API, whichever backend answered.

use kafka_protocol::ResponseError;

pub use crate::local::LocalError;
pub use crate::remote::RemoteError;

/// Why a client call failed. Its text is one line, as the tools print it.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// Refused with one of Kafka's error kinds, by a broker or by the embedded log acting as
    /// one; `message` is the text Kafka's tools print for it.
    #[error("{message}")]
    Kafka {
        kind: ResponseError,
        message: String,
    },
    /// A record refused before it was sent: too large, or naming a partition the topic does
    /// not have.
    #[error("{message}")]
    InvalidRecord {
        kind: ResponseError,
        message: String,
    },
    /// Encoding or decoding a record batch failed (a codec error, a damaged batch).
    #[error(transparent)]
    Batch(#[from] crate::record::RecordError),
    /// The embedded log failed: I/O, damaged files, locks.
    #[error(transparent)]
    Local(LocalError),
    /// Talking to the cluster failed: connection, protocol, security.
    #[error(transparent)]
    Remote(RemoteError),
    /// An error with what was being done when it happened (`cannot write to partition t-0`);
    /// the cause keeps its own kind.
    #[error("{context}: {source}")]
    Context {
        context: String,
        #[source]
        source: Box<ClientError>,
    },
    /// A cluster-only call on the embedded log, which has no broker (API versions, say).
    #[error(
        "the embedded log has no broker to ask; give --bootstrap-server host:port to ask a cluster's brokers"
    )]
    NoBroker,
    /// No `--log-dir` and no environment variable says where the embedded log lives.
    #[error(
        "cannot find a home for the embedded log: set --log-dir, KAFKIT_LOG_DIR, XDG_DATA_HOME or HOME"
    )]
    NoLogDir,
}

impl ClientError {
    /// A refusal of the given kind with Kafka's message.
    pub fn kafka(kind: ResponseError, message: impl Into<String>) -> ClientError {
        ClientError::Kafka {
            kind,
            message: message.into(),
        }
    }

    /// The error a Kafka error code stands for, with the broker's message when it sent one
    /// (else Kafka's description of the code).
    pub fn from_code(code: i16, message: Option<&str>) -> ClientError {
        RemoteError::broker(code, message).into()
    }

    /// Wraps this error with what was being done.
    pub fn context(self, context: impl Into<String>) -> ClientError {
        ClientError::Context {
            context: context.into(),
            source: Box::new(self),
        }
    }

    /// Kafka's error kind, when the request was refused with one.
    pub fn kind(&self) -> Option<ResponseError> {
        match self {
            ClientError::Kafka { kind, .. } | ClientError::InvalidRecord { kind, .. } => {
                Some(*kind)
            }
            ClientError::Local(e) => e.kind(),
            ClientError::Context { source, .. } => source.kind(),
            _ => None,
        }
    }

    /// Whether the cluster could not be reached (refused, closed, timed out): it may answer
    /// again in a moment, unlike a refusal or a bad setting.
    pub fn is_connection(&self) -> bool {
        match self {
            ClientError::Remote(e) => e.is_connection(),
            ClientError::Context { source, .. } => source.is_connection(),
            _ => false,
        }
    }

    /// For a connection failure, what happened in a few words, without the hints meant for a
    /// first connection.
    pub fn connection_summary(&self) -> Option<String> {
        match self {
            ClientError::Remote(e) => e.connection_summary(),
            _ => None,
        }
    }
}

impl From<LocalError> for ClientError {
    fn from(e: LocalError) -> Self {
        match e {
            // The same refusal as a cluster's, so that both backends report it alike.
            LocalError::Kafka { kind, message } => ClientError::Kafka { kind, message },
            LocalError::Context { context, source } => ClientError::Context {
                context,
                source: Box::new(ClientError::from(*source)),
            },
            LocalError::Batch(e) => ClientError::Batch(e),
            other => ClientError::Local(other),
        }
    }
}

impl From<RemoteError> for ClientError {
    fn from(e: RemoteError) -> Self {
        match e {
            RemoteError::Broker { code, message } => match ResponseError::try_from_code(code) {
                Some(kind) => ClientError::Kafka { kind, message },
                None => ClientError::Remote(RemoteError::Broker { code, message }),
            },
            other => ClientError::Remote(other),
        }
    }
}

/// Result alias for the client API.
pub type Result<T, E = ClientError> = std::result::Result<T, E>;
