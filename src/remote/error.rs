//! The remote client's error type: every variant names the broker address and, where the user
//! can act on it, says what to do.

/// Why talking to a Kafka cluster failed.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// `--bootstrap-server` (or `bootstrap.servers`) could not be parsed.
    #[error(
        "invalid bootstrap server '{0}': expected host:port, several separated by commas (an IPv6 host in brackets: [::1]:9092)"
    )]
    InvalidBootstrap(String),
    /// A client property has a value kafkit cannot use.
    #[error("invalid value '{value}' for {name}: {reason}")]
    InvalidConfig {
        name: String,
        value: String,
        reason: String,
    },
    /// No bootstrap server could be reached; `attempts` lists each address with its reason, in
    /// the order tried, e.g. `127.0.0.1:9092 (connection refused)`.
    #[error(
        "cannot connect to {attempts}; omit --bootstrap-server to use the embedded log instead"
    )]
    Connect { attempts: String },
    /// The only bootstrap server accepted TCP but failed the handshake (timeout, hang-up, not
    /// Kafka): that error, plus the way out.
    #[error("{0}; omit --bootstrap-server to use the embedded log instead")]
    Handshake(Box<RemoteError>),
    /// The broker did not answer within `request.timeout.ms`. The connection is dropped, since a
    /// late answer would otherwise be read as the reply to the next request.
    #[error("{addr} did not answer {api} within {timeout_ms} ms (request.timeout.ms)")]
    Timeout {
        addr: String,
        api: &'static str,
        timeout_ms: u128,
    },
    /// The peer closed the connection. Kafka closes it on a request version it does not accept
    /// and on requests before SASL authentication, and a non-Kafka server closes it on our first
    /// bytes, hence the hint.
    #[error(
        "{addr} closed the connection during {api}; is it a Kafka broker's listener for this security.protocol (SASL and SSL listeners close other clients' connections), and a Kafka version kafkit supports (3.7 or later)?"
    )]
    Closed { addr: String, api: &'static str },
    /// Reading or writing the socket failed.
    #[error("{addr}: {api} failed: {source}")]
    Io {
        addr: String,
        api: &'static str,
        #[source]
        source: std::io::Error,
    },
    /// A response announced a size over the limit: usually not a Kafka listener at all (an HTTP
    /// or TLS server's first bytes read as a huge length).
    #[error(
        "{addr} sent a {size}-byte response to {api}, over the {limit}-byte limit; is it a Kafka broker's PLAINTEXT listener (not TLS or HTTP)?"
    )]
    FrameTooLarge {
        addr: String,
        api: &'static str,
        size: i64,
        limit: usize,
    },
    /// A response could not be decoded, or did not match its request.
    #[error("{addr} sent a malformed {api} response: {reason}")]
    Protocol {
        addr: String,
        api: &'static str,
        reason: String,
    },
    /// A request could not be encoded (a value out of range for the negotiated version).
    #[error("cannot encode {api} v{version}: {reason}")]
    Encode {
        api: &'static str,
        version: i16,
        reason: String,
    },
    /// The broker and kafkit share no version of an API.
    #[error(
        "{addr} does not support {api} in a version kafkit speaks (broker: {broker}, kafkit: {ours}); Kafka 3.7 or later is supported"
    )]
    UnsupportedVersion {
        addr: String,
        api: &'static str,
        broker: String,
        ours: String,
    },
    /// The security settings cannot be used (an unsupported mechanism, a missing or unreadable
    /// store, a malformed `sasl.jaas.config`); the text says which property to fix and never
    /// quotes a secret.
    #[error("{0}")]
    Security(String),
    /// The TLS handshake failed; `reason` says why and which `ssl.*` property to set.
    #[error("TLS handshake with {addr} failed: {reason}")]
    Tls { addr: String, reason: String },
    /// SASL authentication failed: the broker's message (never our credentials) and a hint.
    #[error("authentication failed at {addr}: {message}")]
    Authentication { addr: String, message: String },
    /// The broker answered with a Kafka error code; `message` is the broker's own text when it
    /// sent one, else the code's standard description. Displayed as the Java tools display it.
    #[error("{message}")]
    Broker { code: i16, message: String },
}

impl RemoteError {
    /// A broker error from a response's code and optional message.
    pub fn broker(code: i16, message: Option<&str>) -> RemoteError {
        let message = match message.filter(|m| !m.is_empty()) {
            Some(m) => m.to_string(),
            None => match (
                description(code),
                kafka_protocol::ResponseError::try_from_code(code),
            ) {
                (Some(text), _) => text.to_string(),
                (None, Some(e)) => e.to_string(),
                (None, None) => format!("error code {code}"),
            },
        };
        RemoteError::Broker { code, message }
    }

    /// Whether this is a security failure: a setting to fix or credentials refused, which no
    /// other broker of the bootstrap list would accept either.
    pub fn is_security(&self) -> bool {
        matches!(
            self,
            RemoteError::Security(_) | RemoteError::Tls { .. } | RemoteError::Authentication { .. }
        )
    }

    /// Whether the connection failed (refused, closed, timed out): the cluster may be back in a
    /// moment, unlike a refusal, a bad setting or a protocol error.
    pub fn is_connection(&self) -> bool {
        if let RemoteError::Handshake(inner) = self {
            return inner.is_connection();
        }
        matches!(
            self,
            RemoteError::Connect { .. }
                | RemoteError::Closed { .. }
                | RemoteError::Io { .. }
                | RemoteError::Timeout { .. }
        )
    }

    /// For a connection failure, what happened in a few words without the hints meant for a
    /// first connection (`127.0.0.1:9092 closed the connection`).
    pub fn connection_summary(&self) -> Option<String> {
        Some(match self {
            RemoteError::Handshake(inner) => return inner.connection_summary(),
            RemoteError::Connect { attempts } => format!("cannot connect to {attempts}"),
            RemoteError::Closed { addr, .. } => format!("{addr} closed the connection"),
            RemoteError::Io { addr, source, .. } => format!("{addr}: {source}"),
            RemoteError::Timeout {
                addr, timeout_ms, ..
            } => {
                format!("{addr} did not answer within {timeout_ms} ms")
            }
            _ => return None,
        })
    }

    /// A per-item error code of a response: `Ok` for 0, else the broker's error.
    pub fn check(code: i16, message: Option<&str>) -> Result<()> {
        match code {
            0 => Ok(()),
            code => Err(RemoteError::broker(code, message)),
        }
    }

    /// The Kafka error code when the broker refused the request.
    pub fn code(&self) -> Option<i16> {
        match self {
            RemoteError::Broker { code, .. } => Some(*code),
            _ => None,
        }
    }
}

/// Kafka's description of an error code (`Errors.java`), for the codes the tools meet most;
/// others fall back to the code's name.
fn description(code: i16) -> Option<&'static str> {
    Some(match code {
        // What a broker answers when a request hit a bug of its own (Kafka 4.3.1's coordinator
        // does, converting a classic group that is mid-rebalance for a KIP-848 member).
        -1 => "The server experienced an unexpected error when processing the request.",
        1 => "The requested offset is not within the range of offsets maintained by the server.",
        2 => {
            "This message has failed its CRC checksum, exceeds the valid size, has a null key for a compacted topic, or is otherwise corrupt."
        }
        3 => "This server does not host this topic-partition.",
        5 => {
            "There is no leader for this topic-partition as we are in the middle of a leadership election."
        }
        6 => {
            "For requests intended only for the leader, this error indicates that the broker is not the current leader. For requests intended for any replica, this error indicates that the broker is not a replica of the topic partition."
        }
        7 => "The request timed out.",
        10 => {
            "The request included a message larger than the max message size the server will accept."
        }
        18 => {
            "The request included message batch larger than the configured segment size on the server."
        }
        19 => "Messages are rejected since there are fewer in-sync replicas than required.",
        20 => "Messages are written to the log, but to fewer in-sync replicas than required.",
        21 => "Produce request specified an invalid value for required acks.",
        29 => "Topic authorization failed.",
        31 => "Cluster authorization failed.",
        32 => "The timestamp of the message is out of acceptable range.",
        35 => "The version of API is not supported.",
        45 => "The broker received an out of order sequence number.",
        47 => "Producer attempted to produce with an old epoch.",
        56 => "Disk error when trying to access log file on the disk.",
        44 => "Request parameters do not satisfy the configured policy.",
        87 => "This record has failed the validation on broker and hence will be rejected.",
        36 => "Topic with this name already exists.",
        37 => "Number of partitions is below 1.",
        38 => "Replication factor is below 1 or larger than the number of available brokers.",
        _ => return None,
    })
}

/// Result alias for the remote client.
pub type Result<T, E = RemoteError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_without_a_message_get_kafkas_words() {
        assert_eq!(
            RemoteError::broker(-1, None).to_string(),
            "The server experienced an unexpected error when processing the request."
        );
        assert_eq!(
            RemoteError::broker(19, Some("")).to_string(),
            "Messages are rejected since there are fewer in-sync replicas than required."
        );
    }
}
