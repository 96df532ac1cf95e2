//! Connections to brokers: TCP with timeouts, TLS, SASL, and the ApiVersions exchange that
//! opens every connection. Built on [`crate::wire`]; knows nothing of what is sent.
//!
//! - [`connection`]: one broker connection: connect timeout, ApiVersions, request timeout.
//! - [`security`]: `security.protocol` and the `sasl.*`/`ssl.*` settings, secrets hidden.
//! - [`tls`]: TLS with rustls from PEM stores, and the connection's plain-or-TLS stream.
//! - [`sasl`]: SaslHandshake and SaslAuthenticate with PLAIN or SCRAM ([`scram`]), credentials
//!   from `sasl.jaas.config` ([`jaas`]).

pub(crate) mod connection;
pub(crate) mod jaas;
pub(crate) mod sasl;
pub(crate) mod scram;
pub(crate) mod security;
pub(crate) mod tls;
