//! One TCP connection to one broker: connect with a timeout, TLS if configured, ApiVersions
//! first, SASL if configured, then requests, each answered within `request.timeout.ms`.
//!
//! [`Connection::send`] is one request and its answer. The producer pipelines instead: it
//! writes several requests with [`Connection::submit`] and reads their answers in the same
//! order with [`Connection::receive`] (a broker answers one connection's requests in order).
//! After a timeout or an I/O error the connection is poisoned and refuses further requests,
//! since the unread remains of a late answer would be taken for the next response.

use std::net::SocketAddr;
use std::time::Duration;

use bytes::{Buf, Bytes, BytesMut};
use kafka_protocol::messages::ApiVersionsRequest;
use kafka_protocol::protocol::StrBytes;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::security::Security;
use super::tls::{self, Stream};
use crate::remote::error::{RemoteError, Result};
use crate::wire::api::Api;
use crate::wire::frame::{self, FrameError};
use crate::wire::versions::{self, BrokerVersions};

/// Client settings, named and defaulted as Kafka's admin client names them.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// `client.id`, sent in every request header (the broker logs and quotas use it).
    pub client_id: String,
    /// `request.timeout.ms`: how long one request may wait for its answer (Kafka: 30 s).
    pub request_timeout: Duration,
    /// `socket.connection.setup.timeout.ms`: how long one TCP connect may take (Kafka: 10 s).
    pub connect_timeout: Duration,
    /// The largest response frame accepted. Kafka's own `socket.request.max.bytes` default:
    /// larger is a misread length (a TLS or HTTP server), not a Kafka answer.
    pub max_response_bytes: usize,
    /// `security.protocol` and the `sasl.*` and `ssl.*` properties (secrets hidden in Debug).
    pub security: Security,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            client_id: "kafkit".to_string(),
            request_timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            max_response_bytes: 100 << 20,
            security: Security::default(),
        }
    }
}

impl ClientConfig {
    /// Applies one client property; properties kafkit does not use are accepted and ignored,
    /// as Kafka's clients ignore unknown ones.
    pub fn set(&mut self, name: &str, value: &str) -> Result<()> {
        let millis = || {
            value
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|ms| *ms > 0)
                .map(Duration::from_millis)
                .ok_or_else(|| RemoteError::InvalidConfig {
                    name: name.to_string(),
                    value: value.to_string(),
                    reason: "expected a positive number of milliseconds".to_string(),
                })
        };
        match name {
            "client.id" => self.client_id = value.trim().to_string(),
            "request.timeout.ms" => self.request_timeout = millis()?,
            "socket.connection.setup.timeout.ms" => self.connect_timeout = millis()?,
            _ => self.security.set(name, value)?,
        }
        Ok(())
    }
}

/// The part of a failed connection attempt that goes into the one-line "cannot connect" message.
#[derive(Debug)]
pub enum ConnectFailure {
    /// TCP never connected: a short reason such as "connection refused".
    Unreachable(String),
    /// TCP connected but the handshake failed: the full error.
    Handshake(RemoteError),
}

/// A connected broker with its negotiated versions.
#[derive(Debug)]
pub struct Connection {
    addr: String,
    stream: Stream,
    versions: BrokerVersions,
    next_correlation_id: i32,
    poisoned: bool,
    config: ClientConfig,
    /// Bytes read and not yet returned as a frame. Reads go through it so that one cut off by
    /// a timeout loses nothing: an answer may be waited for in slices
    /// ([`Connection::receive_within`]).
    inbox: BytesMut,
}

/// How much a read asks for while a frame's length is not known yet.
const READ_CHUNK: usize = 8192;

impl Connection {
    /// Connects to `socket` (named `addr` in messages, and the name TLS verifies), then runs the
    /// TLS handshake, ApiVersions and SASL authentication as configured.
    /// `connect_timeout` bounds the TCP connect (a bootstrap attempt may get less than
    /// `config.connect_timeout`, without that shortening every later connection).
    pub async fn open(
        addr: &str,
        socket: SocketAddr,
        config: &ClientConfig,
        connect_timeout: Duration,
    ) -> std::result::Result<Connection, ConnectFailure> {
        // Settings are checked before connecting: a bad one is not a broker's fault.
        let security = config
            .security
            .prepare()
            .map_err(ConnectFailure::Handshake)?;
        let tcp = match tokio::time::timeout(connect_timeout, TcpStream::connect(socket)).await {
            Err(_) => {
                return Err(ConnectFailure::Unreachable(format!(
                    "no answer within {} ms",
                    connect_timeout.as_millis()
                )));
            }
            Ok(Err(e)) => return Err(ConnectFailure::Unreachable(connect_reason(&e))),
            Ok(Ok(stream)) => stream,
        };
        // Requests are small and answered one at a time: Nagle would only add latency.
        tcp.set_nodelay(true).ok();
        let stream = match &security.tls {
            Some(tls) => tls::connect(tcp, addr, tls.clone(), config.request_timeout)
                .await
                .map_err(ConnectFailure::Handshake)?,
            None => Stream::Plain(tcp),
        };
        let mut conn = Connection {
            addr: addr.to_string(),
            stream,
            versions: BrokerVersions::default(),
            next_correlation_id: 0,
            poisoned: false,
            config: config.clone(),
            inbox: BytesMut::new(),
        };
        conn.handshake().await.map_err(|e| {
            ConnectFailure::Handshake(tls::explain_late(e, config.security.protocol))
        })?;
        if let Some(credentials) = &security.sasl {
            super::sasl::authenticate(&mut conn, credentials)
                .await
                .map_err(|e| {
                    ConnectFailure::Handshake(tls::explain_late(e, config.security.protocol))
                })?;
        }
        Ok(conn)
    }

    /// False once a failure left the connection unusable (see the module docs).
    pub fn is_usable(&self) -> bool {
        !self.poisoned
    }

    /// The address this connection was opened with, for messages.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// The API versions the broker advertised when the connection opened.
    pub fn broker_versions(&self) -> &BrokerVersions {
        &self.versions
    }

    /// `request.timeout.ms` of this connection.
    pub fn request_timeout(&self) -> Duration {
        self.config.request_timeout
    }

    /// The version of `R` to send on this connection: `min(ours, broker's)`.
    pub fn version<R: Api>(&self) -> Result<i16> {
        self.versions.pick::<R>().ok_or_else(|| {
            let ours = versions::ours::<R>();
            RemoteError::UnsupportedVersion {
                addr: self.addr.clone(),
                api: R::NAME,
                broker: match self.versions.get(R::KEY) {
                    Some(r) => format!("v{}-{}", r.min, r.max),
                    None => "none".to_string(),
                },
                ours: format!("v{}-{}", ours.min, ours.max),
            }
        })
    }

    /// Sends `request` at `version` and decodes the answer.
    pub async fn send<R: Api>(&mut self, request: &R, version: i16) -> Result<R::Response> {
        let (frame, id) = self.round_trip(request, version).await?;
        self.decode::<R>(frame, version, id)
    }

    /// The settings this connection was opened with.
    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// Sends `request` at `version` when no answer will come (Produce with acks=0): the write
    /// completes within the request timeout, and nothing is read.
    pub async fn send_without_response<R: Api>(&mut self, request: &R, version: i16) -> Result<()> {
        self.write_request(request, version).await.map(|_| ())
    }

    /// Writes `request` at `version` without waiting for its answer, and returns its
    /// correlation id: read the answers with [`Connection::receive`], in the order written.
    pub async fn submit<R: Api>(&mut self, request: &R, version: i16) -> Result<i32> {
        self.write_request(request, version).await
    }

    /// Reads and decodes the next answer, which must be that of request `id` (the oldest
    /// submitted and not yet received), within the request timeout.
    pub async fn receive<R: Api>(&mut self, version: i16, id: i32) -> Result<R::Response> {
        let frame = self.read_frame(R::NAME).await?;
        self.decode::<R>(frame, version, id)
    }

    /// [`Connection::receive`] waiting at most `wait` (zero: only what has arrived): `None`
    /// when the answer is not all there yet. What did arrive is kept for the next read, and
    /// the connection stays usable.
    pub async fn receive_within<R: Api>(
        &mut self,
        version: i16,
        id: i32,
        wait: Duration,
    ) -> Result<Option<R::Response>> {
        match self.frame_within(R::NAME, wait).await? {
            Some(frame) => self.decode::<R>(frame, version, id).map(Some),
            None => Ok(None),
        }
    }

    /// ApiVersions at our highest version; if the broker is older it answers
    /// UNSUPPORTED_VERSION in the v0 layout with its own range, and we retry once at that.
    async fn handshake(&mut self) -> Result<()> {
        let ours = versions::ours::<ApiVersionsRequest>();
        let mut version = ours.max;
        for _ in 0..2 {
            let mut request = ApiVersionsRequest::default();
            if version >= 3 {
                request = request
                    .with_client_software_name(StrBytes::from_static_str("kafkit"))
                    .with_client_software_version(StrBytes::from_static_str(env!(
                        "CARGO_PKG_VERSION"
                    )));
            }
            let (frame, id) = self.round_trip(&request, version).await?;
            if frame::api_versions_error_code(&frame) == Some(35) {
                let answer = self.decode::<ApiVersionsRequest>(frame, 0, id)?;
                let broker_max = answer
                    .api_keys
                    .iter()
                    .find(|k| k.api_key == ApiVersionsRequest::KEY)
                    .map(|k| k.max_version);
                match broker_max.filter(|max| *max < version && *max >= ours.min) {
                    Some(max) => {
                        version = max;
                        continue;
                    }
                    None => return Err(RemoteError::broker(35, None)),
                }
            }
            let answer = self.decode::<ApiVersionsRequest>(frame, version, id)?;
            if answer.error_code != 0 {
                return Err(RemoteError::broker(answer.error_code, None));
            }
            self.versions = BrokerVersions::new(
                answer
                    .api_keys
                    .iter()
                    .map(|k| (k.api_key, k.min_version, k.max_version)),
            );
            return Ok(());
        }
        Err(self.protocol(
            ApiVersionsRequest::NAME,
            "UNSUPPORTED_VERSION twice".to_string(),
        ))
    }

    /// Writes one request and reads its response frame, within the request timeout.
    async fn round_trip<R: Api>(&mut self, request: &R, version: i16) -> Result<(Bytes, i32)> {
        let id = self.write_request(request, version).await?;
        Ok((self.read_frame(R::NAME).await?, id))
    }

    /// Encodes and writes one request within the request timeout; its correlation id.
    async fn write_request<R: Api>(&mut self, request: &R, version: i16) -> Result<i32> {
        let api = R::NAME;
        if self.poisoned {
            return Err(RemoteError::Closed {
                addr: self.addr.clone(),
                api,
            });
        }
        let id = self.next_correlation_id;
        self.next_correlation_id = self.next_correlation_id.wrapping_add(1);
        let out =
            frame::encode_request(request, version, id, &self.config.client_id).map_err(|e| {
                RemoteError::Encode {
                    api,
                    version,
                    reason: match e {
                        FrameError::Encode(r) | FrameError::Malformed(r) => r,
                        FrameError::TooLarge(n) => format!("{n} bytes"),
                    },
                }
            })?;
        let timeout = self.config.request_timeout;
        let err = match tokio::time::timeout(timeout, self.stream.write_all(&out)).await {
            Ok(Ok(())) => return Ok(id),
            Err(_) => RemoteError::Timeout {
                addr: self.addr.clone(),
                api,
                timeout_ms: timeout.as_millis(),
            },
            Ok(Err(e)) if is_closed(&e) => RemoteError::Closed {
                addr: self.addr.clone(),
                api,
            },
            Ok(Err(e)) => RemoteError::Io {
                addr: self.addr.clone(),
                api,
                source: e,
            },
        };
        self.poisoned = true;
        Err(err)
    }

    /// Reads the next response frame within the request timeout.
    async fn read_frame(&mut self, api: &'static str) -> Result<Bytes> {
        let timeout = self.config.request_timeout;
        match self.frame_within(api, timeout).await? {
            Some(frame) => Ok(frame),
            None => {
                // The answer is late: its remains would be taken for the next one.
                self.poisoned = true;
                Err(RemoteError::Timeout {
                    addr: self.addr.clone(),
                    api,
                    timeout_ms: timeout.as_millis(),
                })
            }
        }
    }

    /// Reads the next response frame, waiting at most `wait`; `None` when it has not all
    /// arrived by then (what did stays in `inbox`).
    async fn frame_within(&mut self, api: &'static str, wait: Duration) -> Result<Option<Bytes>> {
        if self.poisoned {
            return Err(RemoteError::Closed {
                addr: self.addr.clone(),
                api,
            });
        }
        let limit = self.config.max_response_bytes;
        let result =
            tokio::time::timeout(wait, next_frame(&mut self.stream, &mut self.inbox, limit)).await;
        let addr = || self.addr.clone();
        let err = match result {
            Ok(Ok(frame)) => return Ok(Some(frame)),
            Err(_) => return Ok(None),
            Ok(Err(ReadError::Oversize(Oversize(FrameError::TooLarge(size))))) => {
                RemoteError::FrameTooLarge {
                    addr: addr(),
                    api,
                    size,
                    limit,
                }
            }
            Ok(Err(ReadError::Oversize(Oversize(other)))) => {
                self.protocol(api, format!("{other:?}"))
            }
            Ok(Err(ReadError::Io(e))) if is_closed(&e) => RemoteError::Closed { addr: addr(), api },
            Ok(Err(ReadError::Io(e))) => RemoteError::Io {
                addr: addr(),
                api,
                source: e,
            },
        };
        self.poisoned = true;
        Err(err)
    }

    fn decode<R: Api>(&mut self, frame: Bytes, version: i16, id: i32) -> Result<R::Response> {
        frame::decode_response::<R>(frame, version, id).map_err(|e| {
            // A response we cannot parse leaves us unsure where the next one starts.
            self.poisoned = true;
            self.protocol(
                R::NAME,
                match e {
                    FrameError::Malformed(r) | FrameError::Encode(r) => r,
                    FrameError::TooLarge(n) => format!("{n} bytes"),
                },
            )
        })
    }

    fn protocol(&self, api: &'static str, reason: String) -> RemoteError {
        RemoteError::Protocol {
            addr: self.addr.clone(),
            api,
            reason,
        }
    }
}

/// Reads from `stream` into `inbox` until it holds a whole frame (size prefix and body), and
/// returns the body. Cancel-safe: `read_buf` takes nothing from the stream unless it returns,
/// and what it took stays in `inbox`.
async fn next_frame(
    stream: &mut Stream,
    inbox: &mut BytesMut,
    limit: usize,
) -> std::result::Result<Bytes, ReadError> {
    loop {
        if inbox.len() >= 4 {
            let prefix = [inbox[0], inbox[1], inbox[2], inbox[3]];
            let size = frame::check_size(prefix, limit).map_err(Oversize)?;
            if inbox.len() >= 4 + size {
                inbox.advance(4);
                return Ok(inbox.split_to(size).freeze());
            }
            inbox.reserve(4 + size - inbox.len());
        } else {
            inbox.reserve(READ_CHUNK);
        }
        if stream.read_buf(inbox).await? == 0 {
            return Err(ReadError::Io(std::io::ErrorKind::UnexpectedEof.into()));
        }
    }
}

/// An oversize frame, carried through the I/O future.
struct Oversize(FrameError);

enum ReadError {
    Io(std::io::Error),
    Oversize(Oversize),
}

impl From<std::io::Error> for ReadError {
    fn from(e: std::io::Error) -> Self {
        ReadError::Io(e)
    }
}

impl From<Oversize> for ReadError {
    fn from(e: Oversize) -> Self {
        ReadError::Oversize(e)
    }
}

fn is_closed(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(
        e.kind(),
        UnexpectedEof | ConnectionReset | ConnectionAborted | BrokenPipe
    )
}

/// A short reason for a failed TCP connect, as it reads in "cannot connect to A (reason)".
fn connect_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::ConnectionRefused => "connection refused".to_string(),
        std::io::ErrorKind::TimedOut => "connection timed out".to_string(),
        _ => e.to_string(),
    }
}

/// Opens a connection to broker `id` at the `host:port` that Metadata gave for it, trying each
/// address the name resolves to (shared by the producer and the fetcher).
pub async fn connect_broker(
    id: i32,
    host: &str,
    port: i32,
    config: &ClientConfig,
) -> Result<Connection> {
    let name = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    let Some(port) = u16::try_from(port).ok().filter(|p| *p > 0) else {
        return Err(RemoteError::Protocol {
            addr: name,
            api: "Metadata",
            reason: format!("broker {id} is advertised with an invalid port"),
        });
    };
    let resolved = tokio::time::timeout(
        config.connect_timeout,
        tokio::net::lookup_host((host, port)),
    )
    .await;
    let mut reason = match &resolved {
        Ok(Ok(_)) => format!("{host} resolves to no address"),
        Ok(Err(e)) => format!("cannot resolve {host}: {e}"),
        Err(_) => format!("cannot resolve {host}: timed out"),
    };
    if let Ok(Ok(addrs)) = resolved {
        for socket in addrs {
            match Connection::open(&name, socket, config, config.connect_timeout).await {
                Ok(conn) => return Ok(conn),
                Err(ConnectFailure::Unreachable(r)) => reason = r,
                Err(ConnectFailure::Handshake(e)) => return Err(e),
            }
        }
    }
    Err(RemoteError::Connect {
        attempts: format!("broker {id} at {name} ({reason})"),
    })
}
