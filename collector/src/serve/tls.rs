//! TLS on every listener (rustls): the server's certificate chain and key
//! from PEM files and, when a CA is given, client certificates required and
//! checked against it (mutual TLS), so that only holders of a certificate
//! that CA signed can send spans or scrape.

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where a listener's certificate, key and (optional) client CA are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// The server's certificate chain (PEM), leaf first.
    pub cert: PathBuf,
    /// Its private key (PEM: PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
    /// CA certificates (PEM) that client certificates must chain to; without
    /// it, clients are not asked for one.
    pub client_ca: Option<PathBuf>,
}

#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("{0}: cannot read certificates: {1}")]
    Certs(PathBuf, String),
    #[error("{0}: holds no certificate")]
    NoCert(PathBuf),
    #[error("{0}: cannot read a private key: {1}")]
    Key(PathBuf, String),
    #[error("TLS settings: {0}")]
    Config(String),
}

/// A rustls server configuration for `files`, offering HTTP/2 and HTTP/1.1.
pub fn server_config(files: &TlsFiles) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Config(e.to_string()))?;
    let builder = match &files.client_ca {
        None => builder.with_no_client_auth(),
        Some(ca) => {
            let mut roots = rustls::RootCertStore::empty();
            for c in certs(ca)? {
                roots
                    .add(c)
                    .map_err(|e| TlsError::Certs(ca.clone(), e.to_string()))?;
            }
            let verifier =
                rustls::server::WebPkiClientVerifier::builder_with_provider(roots.into(), provider)
                    .build()
                    .map_err(|e| TlsError::Config(e.to_string()))?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let key = PrivateKeyDer::from_pem_file(&files.key)
        .map_err(|e| TlsError::Key(files.key.clone(), e.to_string()))?;
    let mut cfg = builder
        .with_single_cert(certs(&files.cert)?, key)
        .map_err(|e| TlsError::Config(e.to_string()))?;
    cfg.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(cfg))
}

fn certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| TlsError::Certs(path.to_owned(), e.to_string()))?;
    match certs.is_empty() {
        true => Err(TlsError::NoCert(path.to_owned())),
        false => Ok(certs),
    }
}
