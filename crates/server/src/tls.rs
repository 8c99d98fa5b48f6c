//! TLS connections (`slsm serve --tls-port`), with rustls: a second
//! listener beside the plain one (Redis's `tls-port` beside `port`), its
//! connections served exactly as plain ones once the handshake is done
//! (`conn::handle` over a [`Socket`]). The certificate and key are PEM
//! files (`--tls-cert-file`, `--tls-key-file`); with `--tls-ca-cert-file`
//! clients present certificates signed by that CA: required, optional or
//! not asked for (`--tls-auth-clients yes|optional|no`, Redis's options
//! and its default `yes`).
//!
//! Owns the acceptor (read-only once built) and the TLS accept loop; a
//! handshake that does not finish within [`HANDSHAKE_TIMEOUT`] is dropped,
//! so a client that connects and sends nothing holds no task for long.

use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;

/// The longest a client may take to finish its handshake.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Whether clients must present a certificate (`--tls-auth-clients`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthClients {
    Yes,
    Optional,
    No,
}

impl AuthClients {
    pub fn parse(s: &str) -> Option<AuthClients> {
        match s {
            "yes" => Some(AuthClients::Yes),
            "optional" => Some(AuthClients::Optional),
            "no" => Some(AuthClients::No),
            _ => None,
        }
    }
}

/// How to serve TLS.
#[derive(Clone, Debug)]
pub struct TlsOptions {
    /// The port, on the plain listener's address (0: any free one).
    pub port: u16,
    pub cert_file: PathBuf,
    pub key_file: PathBuf,
    pub ca_cert_file: Option<PathBuf>,
    pub auth_clients: AuthClients,
}

fn certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs: Result<Vec<_>, _> = CertificateDer::pem_file_iter(path)
        .map_err(|e| format!("cannot read certificates from {}: {e}", path.display()))?
        .collect();
    let certs = certs.map_err(|e| format!("bad certificate in {}: {e}", path.display()))?;
    match certs.is_empty() {
        true => Err(format!("no certificate in {}", path.display())),
        false => Ok(certs),
    }
}

/// The acceptor for `o`; a clear error for a missing or bad file.
pub fn acceptor(o: &TlsOptions) -> Result<TlsAcceptor, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?;
    let builder = match (&o.ca_cert_file, o.auth_clients) {
        (Some(ca), auth) if auth != AuthClients::No => {
            let mut roots = rustls::RootCertStore::empty();
            for cert in certificates(ca)? {
                roots
                    .add(cert)
                    .map_err(|e| format!("bad CA certificate in {}: {e}", ca.display()))?;
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider);
            let verifier = match auth {
                AuthClients::Optional => verifier.allow_unauthenticated(),
                _ => verifier,
            };
            let verifier = verifier
                .build()
                .map_err(|e| format!("TLS client verifier: {e}"))?;
            builder.with_client_cert_verifier(verifier)
        }
        (None, AuthClients::Yes) => {
            return Err(
                "--tls-auth-clients yes needs --tls-ca-cert-file (or use optional/no)".into(),
            )
        }
        _ => builder.with_no_client_auth(),
    };
    let key = PrivateKeyDer::from_pem_file(&o.key_file).map_err(|e| {
        format!(
            "cannot read a private key from {}: {e}",
            o.key_file.display()
        )
    })?;
    let config = builder
        .with_single_cert(certificates(&o.cert_file)?, key)
        .map_err(|e| format!("TLS certificate and key: {e}"))?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// A client's connection: plain TCP or TLS over it.
pub enum Socket {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

impl Socket {
    pub fn tcp(&self) -> &TcpStream {
        match self {
            Socket::Plain(s) => s,
            Socket::Tls(s) => s.get_ref().0,
        }
    }

    /// Writes what fits without waiting (plain TCP); a TLS socket says
    /// `WouldBlock`, and the caller writes it the waiting way.
    pub fn try_write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Socket::Plain(s) => s.try_write(buf),
            Socket::Tls(_) => Err(io::ErrorKind::WouldBlock.into()),
        }
    }
}

impl AsyncRead for Socket {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Socket::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Socket::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Socket {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Socket::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Socket::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Socket::Plain(s) => Pin::new(s).poll_flush(cx),
            Socket::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Socket::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Socket::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}
