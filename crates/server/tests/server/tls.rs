//! TLS (`--tls-port`): commands over TLS beside the plain listener, client
//! certificates required, optional or not asked for, and clear errors for
//! bad certificate files. Certificates are made here (rcgen), a CA and
//! what it signs.

use std::sync::Arc;

use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use slsm_server::tls::{AuthClients, TlsOptions};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::common::{self, Server};

struct Pki {
    dir: tempfile::TempDir,
    ca: rcgen::Certificate,
    ca_key: rcgen::KeyPair,
}

impl Pki {
    fn new() -> Pki {
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let ca = params.self_signed(&ca_key).unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("ca.crt"), ca.pem()).unwrap();
        Pki { dir, ca, ca_key }
    }

    /// A certificate for `name` signed by the CA, and its key (DER).
    fn issue(
        &self,
        name: &str,
    ) -> (
        CertificateDer<'static>,
        PrivateKeyDer<'static>,
        String,
        String,
    ) {
        let params = rcgen::CertificateParams::new(vec![name.to_string()]).unwrap();
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.ca, &self.ca_key).unwrap();
        let der_key = PrivateKeyDer::try_from(key.serialize_der()).unwrap();
        (cert.der().clone(), der_key, cert.pem(), key.serialize_pem())
    }

    /// Server options for a TLS listener on any free port.
    fn server_options(&self, ca: bool, auth: AuthClients) -> TlsOptions {
        let (_, _, cert, key) = self.issue("localhost");
        let p = self.dir.path();
        std::fs::write(p.join("server.crt"), cert).unwrap();
        std::fs::write(p.join("server.key"), key).unwrap();
        TlsOptions {
            port: 0,
            cert_file: p.join("server.crt"),
            key_file: p.join("server.key"),
            ca_cert_file: ca.then(|| p.join("ca.crt")),
            auth_clients: auth,
        }
    }

    fn client(&self, with_cert: bool) -> tokio_rustls::TlsConnector {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(self.ca.der().clone()).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots);
        let config = match with_cert {
            true => {
                let (cert, key, _, _) = self.issue("client");
                builder.with_client_auth_cert(vec![cert], key).unwrap()
            }
            false => builder.with_no_client_auth(),
        };
        tokio_rustls::TlsConnector::from(Arc::new(config))
    }
}

/// Sends `requests` over TLS and reads the replies until they have
/// `want`'s length; the error if the connection fails first.
fn over_tls(
    s: &Server,
    connector: tokio_rustls::TlsConnector,
    requests: &[&[&str]],
    want: &str,
) -> Result<String, String> {
    let addr = s.tls_addr.expect("a TLS listener");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let tcp = tokio::net::TcpStream::connect(addr)
            .await
            .map_err(|e| e.to_string())?;
        let name = ServerName::try_from("localhost").unwrap();
        let mut tls = connector
            .connect(name, tcp)
            .await
            .map_err(|e| e.to_string())?;
        let bytes: Vec<u8> = requests.iter().flat_map(|r| common::request(r)).collect();
        tls.write_all(&bytes).await.map_err(|e| e.to_string())?;
        let mut got = vec![0u8; want.len()];
        let read =
            tokio::time::timeout(std::time::Duration::from_secs(10), tls.read_exact(&mut got));
        match read.await {
            Ok(Ok(_)) => Ok(String::from_utf8_lossy(&got).into_owned()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err("timed out".into()),
        }
    })
}

#[test]
fn commands_run_over_tls_beside_the_plain_listener() {
    let pki = Pki::new();
    let opts = pki.server_options(false, AuthClients::No);
    let s = Server::start_with(|o| o.tls = Some(opts));
    let want = "+OK\r\n$5\r\nhello\r\n";
    let got = over_tls(
        &s,
        pki.client(false),
        &[&["SET", "k", "hello"], &["GET", "k"]],
        want,
    );
    assert_eq!(got.as_deref(), Ok(want));
    // The plain listener serves the same data.
    let mut c = s.conn();
    assert_eq!(
        redis::cmd("GET").arg("k").query::<String>(&mut c).unwrap(),
        "hello"
    );
    // A large reply crosses many TLS records.
    let big = "x".repeat(300_000);
    let set = over_tls(&s, pki.client(false), &[&["SET", "big", &big]], "+OK\r\n");
    assert_eq!(set.as_deref(), Ok("+OK\r\n"));
    let want = format!("${}\r\n{big}\r\n", big.len());
    let got = over_tls(&s, pki.client(false), &[&["GET", "big"]], &want);
    assert!(got.as_deref() == Ok(want.as_str()), "large reply over TLS");
}

#[test]
fn client_certificates_required_or_optional() {
    let pki = Pki::new();
    let required = pki.server_options(true, AuthClients::Yes);
    let s = Server::start_with(|o| o.tls = Some(required));
    let ping: &[&[&str]] = &[&["PING"]];
    assert_eq!(
        over_tls(&s, pki.client(true), ping, "+PONG\r\n").as_deref(),
        Ok("+PONG\r\n")
    );
    let refused = over_tls(&s, pki.client(false), ping, "+PONG\r\n");
    assert!(
        refused.is_err(),
        "a client without a certificate is refused: {refused:?}"
    );
    drop(s);
    let optional = pki.server_options(true, AuthClients::Optional);
    let s = Server::start_with(|o| o.tls = Some(optional));
    assert_eq!(
        over_tls(&s, pki.client(false), ping, "+PONG\r\n").as_deref(),
        Ok("+PONG\r\n")
    );
    assert_eq!(
        over_tls(&s, pki.client(true), ping, "+PONG\r\n").as_deref(),
        Ok("+PONG\r\n")
    );
}

#[test]
fn bad_certificate_files_are_refused_at_start_with_the_file_named() {
    let pki = Pki::new();
    let tls = pki.server_options(false, AuthClients::No);
    std::fs::write(&tls.key_file, "not a key").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut opts = slsm_server::ServerOptions::new(dir.path().join("db"));
    opts.bind = "127.0.0.1:0".parse().unwrap();
    opts.tls = Some(tls.clone());
    let rt = tokio::runtime::Runtime::new().unwrap();
    let e = rt.block_on(slsm_server::start(opts.clone())).err().unwrap();
    assert!(e.contains("server.key"), "{e}");
    let mut tls = pki.server_options(false, AuthClients::No);
    tls.cert_file = pki.dir.path().join("missing.crt");
    opts.tls = Some(tls);
    let e = rt.block_on(slsm_server::start(opts)).err().unwrap();
    assert!(e.contains("missing.crt"), "{e}");
}
