//! TLS for the SSL and SASL_SSL protocols, with rustls (ring provider): the trust and key stores
//! from Kafka's `ssl.*` properties (PEM only), the handshake, and one-line explanations of its
//! failures that say which property to set.
//!
//! Also the connection's transport, [`Stream`]: plain TCP or TLS over TCP.

use std::io;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

use super::security::{Protocol, Security};
use crate::remote::error::{RemoteError, Result};

/// A broker connection's byte stream.
pub enum Stream {
    Plain(TcpStream),
    Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Stream::Plain(_) => "Stream::Plain",
            Stream::Tls(_) => "Stream::Tls",
        })
    }
}

// TLS keeps written bytes in rustls until the socket takes them, and `write_all` may finish with
// the tail of a request still there (the socket was full). The connection writes a request and
// then reads, without flushing as a TCP stream needs none, so TLS reads and writes first flush
// what is pending: a request always leaves before its answer is awaited.
impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Tls(s) => {
                std::task::ready!(Pin::new(&mut **s).poll_flush(cx))?;
                Pin::new(&mut **s).poll_read(cx, buf)
            }
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Tls(s) => {
                std::task::ready!(Pin::new(&mut **s).poll_flush(cx))?;
                let written = std::task::ready!(Pin::new(&mut **s).poll_write(cx, buf))?;
                // Best effort now; whatever the socket did not take goes at the next call.
                if let Poll::Ready(Err(e)) = Pin::new(&mut **s).poll_flush(cx) {
                    return Poll::Ready(Err(e));
                }
                Poll::Ready(Ok(written))
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_flush(cx),
            Stream::Tls(s) => Pin::new(&mut **s).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Tls(s) => Pin::new(&mut **s).poll_shutdown(cx),
        }
    }
}

/// The rustls configuration from the `ssl.*` properties.
pub fn client_config(security: &Security) -> Result<Arc<rustls::ClientConfig>> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let roots = Arc::new(trust_anchors(security)?);
    let verifier = WebPkiServerVerifier::builder_with_provider(roots, provider.clone())
        .build()
        .map_err(|e| RemoteError::Security(format!("cannot use the trust store: {e}")))?;
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| RemoteError::Security(format!("cannot set up TLS: {e}")))?;
    let builder = if security.verify_hostname {
        builder.with_webpki_verifier(verifier)
    } else {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AnyHostname(verifier)))
    };
    let config = match client_identity(security)? {
        Some((chain, key)) => builder.with_client_auth_cert(chain, key).map_err(|e| {
            RemoteError::Security(format!(
                "the client key does not fit its certificate chain (ssl.keystore.*): {e}"
            ))
        })?,
        None => builder.with_no_client_auth(),
    };
    Ok(Arc::new(config))
}

/// The CAs to trust: the PEM trust store, else the Mozilla roots that webpki-roots ships.
fn trust_anchors(security: &Security) -> Result<RootCertStore> {
    let mut roots = RootCertStore::empty();
    let (property, pem) = match (
        &security.truststore_certificates,
        &security.truststore_location,
    ) {
        (Some(inline), _) => ("ssl.truststore.certificates", inline.as_bytes().to_vec()),
        (None, Some(path)) => {
            let pem = read_store(path, "ssl.truststore.location")?;
            check_pem_type(
                security.truststore_type.as_deref(),
                &pem,
                path,
                "ssl.truststore",
                "keytool -exportcert -rfc -keystore FILE -alias ALIAS -file ca.pem (JKS), or openssl pkcs12 -in FILE -nokeys -out ca.pem (PKCS12)",
            )?;
            ("ssl.truststore.location", pem)
        }
        (None, None) => {
            roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
            return Ok(roots);
        }
    };
    let certs = certificates(&pem, property)?;
    let (_added, ignored) = roots.add_parsable_certificates(certs);
    if roots.is_empty() || ignored > 0 {
        return Err(RemoteError::Security(format!(
            "{property}: {ignored} certificate(s) could not be used as trust anchors"
        )));
    }
    Ok(roots)
}

/// The client's certificate chain and key for mutual TLS, if a key store is given.
fn client_identity(
    security: &Security,
) -> Result<Option<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)>> {
    let (key_pem, key_property, chain_pem, chain_property) = match (
        &security.keystore_key,
        &security.keystore_certificate_chain,
        &security.keystore_location,
    ) {
        (Some(key), Some(chain), _) => (
            key.expose().as_bytes().to_vec(),
            "ssl.keystore.key",
            chain.as_bytes().to_vec(),
            "ssl.keystore.certificate.chain",
        ),
        (Some(_), None, _) | (None, Some(_), _) => {
            return Err(RemoteError::Security(
                "ssl.keystore.key and ssl.keystore.certificate.chain go together: set both, or ssl.keystore.location instead".to_string(),
            ));
        }
        (None, None, Some(path)) => {
            let pem = read_store(path, "ssl.keystore.location")?;
            check_pem_type(
                security.keystore_type.as_deref(),
                &pem,
                path,
                "ssl.keystore",
                "openssl pkcs12 -in FILE -nodes -out client.pem (PKCS12; a JKS store first: keytool -importkeystore -srckeystore FILE -destkeystore client.p12 -deststoretype PKCS12)",
            )?;
            (
                pem.clone(),
                "ssl.keystore.location",
                pem,
                "ssl.keystore.location",
            )
        }
        (None, None, None) => return Ok(None),
    };
    if String::from_utf8_lossy(&key_pem).contains("ENCRYPTED PRIVATE KEY") {
        return Err(RemoteError::Security(format!(
            "the private key in {key_property} is encrypted, which kafkit does not read (ssl.key.password is not supported); decrypt it with openssl pkey -in FILE -out key.pem and use that"
        )));
    }
    let key = PrivateKeyDer::from_pem_slice(&key_pem).map_err(|_| {
        RemoteError::Security(format!(
            "{key_property} holds no PEM private key (-----BEGIN PRIVATE KEY-----)"
        ))
    })?;
    let chain = certificates(&chain_pem, chain_property)?;
    Ok(Some((chain, key)))
}

/// Reads a store file; a missing or unreadable one is a configuration error naming the path.
fn read_store(path: &Path, property: &str) -> Result<Vec<u8>> {
    crate::files::read_limited(path, crate::files::CONFIG_FILE_LIMIT).map_err(|e| {
        RemoteError::Security(format!("cannot read {property} {}: {e}", path.display()))
    })
}

/// Refuses JKS and PKCS12 stores (kafkit reads PEM only) with the command that converts them.
/// With no type given (Kafka's default is JKS) a file that is PEM text is taken as PEM.
fn check_pem_type(
    store_type: Option<&str>,
    content: &[u8],
    path: &Path,
    prefix: &str,
    convert: &str,
) -> Result<()> {
    let is_pem = String::from_utf8_lossy(content).contains("-----BEGIN ");
    let kind = match store_type.map(str::to_ascii_uppercase) {
        Some(t) if t == "PEM" => return Ok(()),
        None if is_pem => return Ok(()),
        None => "JKS (Kafka's default type)".to_string(),
        Some(t) if t == "JKS" || t == "PKCS12" => t,
        Some(other) => {
            return Err(RemoteError::Security(format!(
                "{prefix}.type {other} is not supported; kafkit reads PEM stores ({prefix}.type=PEM)"
            )));
        }
    };
    Err(RemoteError::Security(format!(
        "{prefix}.location {} is a {kind} store; kafkit reads PEM stores only: convert it with {convert}, then set {prefix}.type=PEM and {prefix}.location to the PEM file",
        path.display()
    )))
}

/// The certificates in PEM text; none at all is an error.
fn certificates(pem: &[u8], property: &str) -> Result<Vec<CertificateDer<'static>>> {
    let certs: Vec<_> = CertificateDer::pem_slice_iter(pem)
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| RemoteError::Security(format!("{property}: unreadable PEM: {e}")))?;
    if certs.is_empty() {
        return Err(RemoteError::Security(format!(
            "{property} holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
        )));
    }
    Ok(certs)
}

/// Checks the chain as usual but accepts any host name: `ssl.endpoint.identification.algorithm`
/// set empty. webpki checks the chain before the name, so a name error means the chain is good.
#[derive(Debug)]
struct AnyHostname(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for AnyHostname {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// The TLS handshake over `tcp` with the broker named `addr` (`host:port`, IPv6 in brackets),
/// within `timeout`.
pub async fn connect(
    tcp: TcpStream,
    addr: &str,
    config: Arc<rustls::ClientConfig>,
    timeout: Duration,
) -> Result<Stream> {
    let host = addr
        .rsplit_once(':')
        .map_or(addr, |(h, _)| h)
        .trim_start_matches('[')
        .trim_end_matches(']');
    let name = ServerName::try_from(host.to_string()).map_err(|_| RemoteError::Tls {
        addr: addr.to_string(),
        reason: format!("{host} is not a valid TLS server name"),
    })?;
    let connector = tokio_rustls::TlsConnector::from(config);
    match tokio::time::timeout(timeout, connector.connect(name, tcp)).await {
        Ok(Ok(stream)) => Ok(Stream::Tls(Box::new(stream))),
        Ok(Err(e)) => Err(RemoteError::Tls {
            addr: addr.to_string(),
            reason: explain(&e, host),
        }),
        Err(_) => Err(RemoteError::Tls {
            addr: addr.to_string(),
            reason: format!(
                "no TLS answer within {} ms; is it the broker's SSL or SASL_SSL listener?",
                timeout.as_millis()
            ),
        }),
    }
}

/// What went wrong in the handshake, and which property fixes it.
fn explain(e: &io::Error, host: &str) -> String {
    let Some(tls) = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) else {
        return match e.kind() {
            io::ErrorKind::UnexpectedEof
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe => {
                "the broker closed the connection; is it a TLS listener? security.protocol SSL and SASL_SSL need the broker's SSL or SASL_SSL listener".to_string()
            }
            _ => e.to_string(),
        };
    };
    match tls {
        rustls::Error::InvalidCertificate(
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
        ) => format!(
            "the broker's certificate is not valid for the name {host} ({tls}); connect by a name or address the certificate holds, or set ssl.endpoint.identification.algorithm= (empty) to skip host name verification"
        ),
        rustls::Error::InvalidCertificate(
            CertificateError::UnknownIssuer
            | CertificateError::BadSignature
            | CertificateError::UnhandledCriticalExtension,
        ) => format!(
            "the broker's certificate is not trusted ({tls}); set ssl.truststore.location to the PEM file of the CA that signed it"
        ),
        rustls::Error::InvalidCertificate(_) => {
            format!("the broker's certificate was rejected ({tls})")
        }
        rustls::Error::AlertReceived(_) => alert_hint(tls),
        rustls::Error::InvalidMessage(_) | rustls::Error::InappropriateMessage { .. } => format!(
            "the broker did not answer in TLS ({tls}); is it the broker's SSL or SASL_SSL listener?"
        ),
        other => other.to_string(),
    }
}

/// A TLS alert from the broker: usually its verdict on our client certificate.
fn alert_hint(tls: &rustls::Error) -> String {
    format!(
        "the broker refused the connection ({tls}); if its listener requires client certificates (ssl.client.auth), set ssl.keystore.location to a PEM file with a key and a certificate its CA signed"
    )
}

/// Explains handshake failures that only the security settings explain. With TLS 1.3 the broker
/// checks our certificate after the client's side of the handshake is done, so its refusal
/// arrives as the answer to ApiVersions: that becomes a TLS error. Without TLS, an answer that
/// starts like a TLS record (an alert or handshake, version 3.x) means a TLS listener.
pub fn explain_late(err: RemoteError, protocol: Protocol) -> RemoteError {
    match err {
        RemoteError::Io { addr, api, source } if protocol.tls() => {
            match source
                .get_ref()
                .and_then(|i| i.downcast_ref::<rustls::Error>())
            {
                Some(tls @ rustls::Error::AlertReceived(_)) => RemoteError::Tls {
                    addr,
                    reason: alert_hint(tls),
                },
                _ => RemoteError::Io { addr, api, source },
            }
        }
        RemoteError::FrameTooLarge { addr, size, .. }
            if !protocol.tls() && matches!(size >> 24, 0x15 | 0x16) && (size >> 16) & 0xff == 3 =>
        {
            RemoteError::Security(format!(
                "{addr} answered in TLS: it is an SSL or SASL_SSL listener; set security.protocol to SSL or SASL_SSL (and ssl.truststore.location to the PEM file of its CA)"
            ))
        }
        other => other,
    }
}
