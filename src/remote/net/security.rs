//! The client's security settings under Kafka's property names: `security.protocol`, the SASL
//! mechanism and JAAS credentials, and the PEM trust and key stores for TLS.
//!
//! Settings are collected property by property (in any order) and checked as a whole by
//! [`Security::prepare`] before the first connection. Secrets (the JAAS text, inline keys, key
//! passwords) are kept in [`Secret`], whose Debug output hides them, and no error quotes them.

use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use super::sasl::Credentials;
use crate::remote::error::{RemoteError, Result};

/// A value that must never be printed.
#[derive(Clone, Default)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret value.
    pub fn new(value: String) -> Secret {
        Secret(value)
    }

    /// The value itself, for the code that needs it (never for messages).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[hidden]")
    }
}

/// `security.protocol`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Protocol {
    #[default]
    Plaintext,
    Ssl,
    SaslPlaintext,
    SaslSsl,
}

impl Protocol {
    /// Whether the connection is TLS.
    pub fn tls(self) -> bool {
        matches!(self, Protocol::Ssl | Protocol::SaslSsl)
    }

    /// Whether the client authenticates with SASL.
    pub fn sasl(self) -> bool {
        matches!(self, Protocol::SaslPlaintext | Protocol::SaslSsl)
    }

    /// Kafka's name for it.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Plaintext => "PLAINTEXT",
            Protocol::Ssl => "SSL",
            Protocol::SaslPlaintext => "SASL_PLAINTEXT",
            Protocol::SaslSsl => "SASL_SSL",
        }
    }
}

/// The security properties, as given (checked by [`Security::prepare`]).
#[derive(Clone)]
pub struct Security {
    pub protocol: Protocol,
    /// `sasl.mechanism`; Kafka's default (GSSAPI) when unset.
    pub sasl_mechanism: Option<String>,
    /// `sasl.jaas.config`: holds the password.
    pub sasl_jaas_config: Option<Secret>,
    /// `ssl.truststore.type`; Kafka's default is JKS, but a PEM file is recognised by its text.
    pub truststore_type: Option<String>,
    pub truststore_location: Option<PathBuf>,
    /// `ssl.truststore.certificates`: inline PEM certificates.
    pub truststore_certificates: Option<String>,
    pub keystore_type: Option<String>,
    /// `ssl.keystore.location`: a PEM file with the private key and the certificate chain.
    pub keystore_location: Option<PathBuf>,
    /// `ssl.keystore.key`: an inline PEM private key.
    pub keystore_key: Option<Secret>,
    /// `ssl.keystore.certificate.chain`: inline PEM certificates.
    pub keystore_certificate_chain: Option<String>,
    /// `ssl.key.password`: only meaningful for encrypted keys, which kafkit does not read.
    pub key_password: Option<Secret>,
    /// `ssl.endpoint.identification.algorithm`: `https` (default) checks that the broker's
    /// certificate names the host connected to; empty turns that check off.
    pub verify_hostname: bool,
    /// What [`Security::prepare`] made of the above, made once and shared by every connection
    /// (reading PEM files, parsing root certificates, building the TLS config); [`Security::set`]
    /// clears it.
    prepared: Arc<OnceLock<Arc<Prepared>>>,
}

impl Default for Security {
    fn default() -> Self {
        Security {
            protocol: Protocol::Plaintext,
            sasl_mechanism: None,
            sasl_jaas_config: None,
            truststore_type: None,
            truststore_location: None,
            truststore_certificates: None,
            keystore_type: None,
            keystore_location: None,
            keystore_key: None,
            keystore_certificate_chain: None,
            key_password: None,
            verify_hostname: true,
            prepared: Arc::default(),
        }
    }
}

// By hand: secrets appear only as whether they are set.
impl fmt::Debug for Security {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Security")
            .field("protocol", &self.protocol)
            .field("sasl_mechanism", &self.sasl_mechanism)
            .field("sasl_jaas_config", &self.sasl_jaas_config)
            .field("truststore_type", &self.truststore_type)
            .field("truststore_location", &self.truststore_location)
            .field(
                "truststore_certificates",
                &self.truststore_certificates.is_some(),
            )
            .field("keystore_type", &self.keystore_type)
            .field("keystore_location", &self.keystore_location)
            .field("keystore_key", &self.keystore_key)
            .field(
                "keystore_certificate_chain",
                &self.keystore_certificate_chain.is_some(),
            )
            .field("key_password", &self.key_password)
            .field("verify_hostname", &self.verify_hostname)
            .finish()
    }
}

/// What a connection needs, checked once: the TLS settings and the SASL credentials.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub tls: Option<Arc<rustls::ClientConfig>>,
    pub sasl: Option<Credentials>,
}

impl Security {
    /// Applies `name` if it is a security property; others are left alone.
    pub fn set(&mut self, name: &str, value: &str) -> Result<()> {
        self.prepared = Arc::default();
        let text = || Some(value.trim().to_string()).filter(|v| !v.is_empty());
        let path = || text().map(PathBuf::from);
        match name {
            "security.protocol" => {
                self.protocol = match value.trim().to_ascii_uppercase().as_str() {
                    "PLAINTEXT" => Protocol::Plaintext,
                    "SSL" => Protocol::Ssl,
                    "SASL_PLAINTEXT" => Protocol::SaslPlaintext,
                    "SASL_SSL" => Protocol::SaslSsl,
                    _ => {
                        return Err(RemoteError::InvalidConfig {
                            name: name.to_string(),
                            value: value.to_string(),
                            reason: "expected PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL"
                                .to_string(),
                        });
                    }
                }
            }
            "sasl.mechanism" => self.sasl_mechanism = text(),
            "sasl.jaas.config" => self.sasl_jaas_config = Some(Secret(value.to_string())),
            "ssl.truststore.type" => self.truststore_type = text(),
            "ssl.truststore.location" => self.truststore_location = path(),
            "ssl.truststore.certificates" => self.truststore_certificates = text(),
            "ssl.keystore.type" => self.keystore_type = text(),
            "ssl.keystore.location" => self.keystore_location = path(),
            "ssl.keystore.key" => self.keystore_key = text().map(Secret),
            "ssl.keystore.certificate.chain" => self.keystore_certificate_chain = text(),
            "ssl.key.password" => self.key_password = text().map(Secret),
            "ssl.endpoint.identification.algorithm" => {
                self.verify_hostname = match value.trim().to_ascii_lowercase().as_str() {
                    "" => false,
                    "https" => true,
                    _ => {
                        return Err(RemoteError::InvalidConfig {
                            name: name.to_string(),
                            value: value.to_string(),
                            reason:
                                "expected https (check the broker's host name) or nothing (do not)"
                                    .to_string(),
                        });
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Checks the settings the protocol uses and builds, once, what connections need: the TLS
    /// configuration (reading the PEM files) and the SASL credentials. Settings the protocol
    /// does not use are ignored, as Kafka's clients ignore them.
    pub fn prepare(&self) -> Result<Arc<Prepared>> {
        if let Some(prepared) = self.prepared.get() {
            return Ok(Arc::clone(prepared));
        }
        // Two connections racing here both build it; the first one kept wins, which is harmless.
        let prepared = Arc::new(self.build()?);
        Ok(Arc::clone(self.prepared.get_or_init(|| prepared)))
    }

    fn build(&self) -> Result<Prepared> {
        let tls = match self.protocol.tls() {
            true => Some(super::tls::client_config(self)?),
            false => None,
        };
        let sasl = match self.protocol.sasl() {
            true => Some(Credentials::from_security(self)?),
            false => None,
        };
        Ok(Prepared { tls, sasl })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocol_names_are_case_insensitive() {
        let mut s = Security::default();
        s.set("security.protocol", "sasl_ssl").unwrap();
        assert_eq!(s.protocol, Protocol::SaslSsl);
        s.set("security.protocol", " Ssl ").unwrap();
        assert_eq!(s.protocol, Protocol::Ssl);
        let err = s.set("security.protocol", "TLS").unwrap_err().to_string();
        assert!(err.contains("SASL_SSL"), "{err}");
    }

    #[test]
    fn hostname_verification_turns_off_with_an_empty_value() {
        let mut s = Security::default();
        assert!(s.verify_hostname);
        s.set("ssl.endpoint.identification.algorithm", "").unwrap();
        assert!(!s.verify_hostname);
        s.set("ssl.endpoint.identification.algorithm", "HTTPS")
            .unwrap();
        assert!(s.verify_hostname);
        assert!(s.set("ssl.endpoint.identification.algorithm", "x").is_err());
    }

    #[test]
    fn debug_hides_secrets() {
        let mut s = Security::default();
        s.set(
            "sasl.jaas.config",
            r#"m.M required username="u" password="hunter2";"#,
        )
        .unwrap();
        s.set("ssl.keystore.key", "-----BEGIN PRIVATE KEY-----hunter2")
            .unwrap();
        s.set("ssl.key.password", "hunter2").unwrap();
        let shown = format!("{s:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("[hidden]"));

        // And through the client settings that every connection holds.
        let mut config = crate::remote::ClientConfig::default();
        config
            .set(
                "sasl.jaas.config",
                r#"m.M required username="u" password="hunter2";"#,
            )
            .unwrap();
        config.set("ssl.keystore.key", "hunter2").unwrap();
        let shown = format!("{config:?} {config:#?}");
        assert!(!shown.contains("hunter2"), "{shown}");
    }
}
