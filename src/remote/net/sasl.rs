//! SASL authentication of a new connection, in Kafka's order: after ApiVersions, SaslHandshake
//! (v1: the tokens that follow are framed as SaslAuthenticate requests), then SaslAuthenticate
//! once for PLAIN or twice for SCRAM-SHA-256/512.
//!
//! GSSAPI (Kerberos) and OAUTHBEARER are not supported. Messages name the broker and never the
//! password.

use bytes::Bytes;
use kafka_protocol::messages::{SaslAuthenticateRequest, SaslHandshakeRequest};
use kafka_protocol::protocol::StrBytes;

use super::connection::Connection;
use super::jaas;
use super::scram::{Hash, Scram};
use super::security::{Secret, Security};
use crate::remote::error::{RemoteError, Result};

/// SASL_AUTHENTICATION_FAILED.
const AUTHENTICATION_FAILED: i16 = 58;
/// UNSUPPORTED_SASL_MECHANISM.
const UNSUPPORTED_MECHANISM: i16 = 33;
/// ILLEGAL_SASL_STATE: what a listener without SASL answers to SaslHandshake.
const ILLEGAL_STATE: i16 = 34;

/// The SASL mechanisms kafkit speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mechanism {
    Plain,
    Scram(Hash),
}

impl Mechanism {
    /// Kafka's name for it.
    pub fn name(self) -> &'static str {
        match self {
            Mechanism::Plain => "PLAIN",
            Mechanism::Scram(Hash::Sha256) => "SCRAM-SHA-256",
            Mechanism::Scram(Hash::Sha512) => "SCRAM-SHA-512",
        }
    }
}

/// A mechanism and the user's name and password from `sasl.jaas.config`.
#[derive(Debug, Clone)]
pub struct Credentials {
    pub mechanism: Mechanism,
    pub username: String,
    password: Secret,
}

impl Credentials {
    /// From `sasl.mechanism` and `sasl.jaas.config`.
    pub fn from_security(security: &Security) -> Result<Credentials> {
        let supported = "use PLAIN or SCRAM-SHA-256/512";
        let mechanism = match security.sasl_mechanism.as_deref() {
            None => {
                return Err(RemoteError::Security(format!(
                    "security.protocol {} needs sasl.mechanism: Kafka's default, GSSAPI/Kerberos, is not supported; {supported}",
                    security.protocol.name()
                )));
            }
            Some(m) => match m.to_ascii_uppercase().as_str() {
                "PLAIN" => Mechanism::Plain,
                "SCRAM-SHA-256" => Mechanism::Scram(Hash::Sha256),
                "SCRAM-SHA-512" => Mechanism::Scram(Hash::Sha512),
                "GSSAPI" => {
                    return Err(RemoteError::Security(format!(
                        "sasl.mechanism GSSAPI: GSSAPI/Kerberos is not supported; {supported}"
                    )));
                }
                other => {
                    return Err(RemoteError::Security(format!(
                        "sasl.mechanism {other} is not supported; {supported}"
                    )));
                }
            },
        };
        let example = match mechanism {
            Mechanism::Plain => "org.apache.kafka.common.security.plain.PlainLoginModule",
            Mechanism::Scram(_) => "org.apache.kafka.common.security.scram.ScramLoginModule",
        };
        let fix = format!("set it as {example} required username=\"...\" password=\"...\";");
        let text = security.sasl_jaas_config.as_ref().ok_or_else(|| {
            RemoteError::Security(format!(
                "sasl.mechanism {} needs credentials in sasl.jaas.config; {fix}",
                mechanism.name()
            ))
        })?;
        let entry = jaas::parse(text.expose()).map_err(|why| {
            RemoteError::Security(format!("invalid sasl.jaas.config: {why}; {fix}"))
        })?;
        let missing = |option: &str| {
            RemoteError::Security(format!("sasl.jaas.config has no {option} option; {fix}"))
        };
        let username = entry
            .option("username")
            .ok_or_else(|| missing("username"))?;
        let password = entry
            .option("password")
            .ok_or_else(|| missing("password"))?;
        Ok(Credentials {
            mechanism,
            username: username.to_string(),
            password: Secret::new(password.to_string()),
        })
    }
}

/// Authenticates `conn` (ApiVersions done) with `credentials`.
pub async fn authenticate(conn: &mut Connection, credentials: &Credentials) -> Result<()> {
    let mechanism = credentials.mechanism;
    let version = conn.version::<SaslHandshakeRequest>()?;
    if version < 1 {
        return Err(RemoteError::UnsupportedVersion {
            addr: conn.addr().to_string(),
            api: "SaslHandshake",
            broker: "v0".to_string(),
            ours: "v1".to_string(),
        });
    }
    let request =
        SaslHandshakeRequest::default().with_mechanism(StrBytes::from_static_str(mechanism.name()));
    let answer = conn.send(&request, version).await?;
    match answer.error_code {
        0 => {}
        UNSUPPORTED_MECHANISM => {
            let offered: Vec<&str> = answer.mechanisms.iter().map(|m| m.as_str()).collect();
            return Err(failed(
                conn,
                format!(
                    "the broker does not enable SASL mechanism {} (it offers: {}); set sasl.mechanism to one of those",
                    mechanism.name(),
                    offered.join(", ")
                ),
            ));
        }
        ILLEGAL_STATE => {
            return Err(failed(
                conn,
                "this listener does not use SASL; connect to the broker's SASL_PLAINTEXT or SASL_SSL listener, or set security.protocol to match this one"
                    .to_string(),
            ));
        }
        code => return Err(RemoteError::broker(code, None)),
    }
    match mechanism {
        Mechanism::Plain => {
            // RFC 4616: authzid NUL authcid NUL passwd, with an empty authzid.
            let token = format!(
                "\0{}\0{}",
                credentials.username,
                credentials.password.expose()
            );
            exchange(conn, token.into_bytes()).await?;
        }
        Mechanism::Scram(hash) => {
            let mut scram = Scram::new(
                hash,
                &credentials.username,
                credentials.password.expose(),
                &Scram::nonce(),
            );
            let server_first = exchange(conn, scram.client_first().into_bytes()).await?;
            let client_final = scram
                .client_final(&String::from_utf8_lossy(&server_first))
                .map_err(|why| failed(conn, why))?;
            let server_final = exchange(conn, client_final.into_bytes()).await?;
            scram
                .verify_server_final(&String::from_utf8_lossy(&server_final))
                .map_err(|why| failed(conn, why))?;
        }
    }
    Ok(())
}

/// One SaslAuthenticate round: our token out, the broker's back.
async fn exchange(conn: &mut Connection, token: Vec<u8>) -> Result<Bytes> {
    let version = conn.version::<SaslAuthenticateRequest>()?;
    let request = SaslAuthenticateRequest::default().with_auth_bytes(Bytes::from(token));
    let answer = conn.send(&request, version).await?;
    match answer.error_code {
        0 => Ok(answer.auth_bytes),
        code => {
            let message = answer
                .error_message
                .as_ref()
                .map(|m| m.to_string())
                .filter(|m| !m.is_empty())
                .unwrap_or_else(|| RemoteError::broker(code, None).to_string());
            let hint = match code {
                AUTHENTICATION_FAILED => " (check sasl.jaas.config username and password)",
                _ => "",
            };
            Err(failed(conn, format!("{message}{hint}")))
        }
    }
}

fn failed(conn: &Connection, message: String) -> RemoteError {
    RemoteError::Authentication {
        addr: conn.addr().to_string(),
        message,
    }
}
