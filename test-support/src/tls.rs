//! Certificates made at test time (rcgen): a CA, a server certificate for
//! 127.0.0.1 and localhost, and client certificates signed by that CA or by
//! another, written as PEM files for servers and clients alike.

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose,
};
use std::path::{Path, PathBuf};

/// The PEM files of one test's certificates.
pub struct Certs {
    pub ca: PathBuf,
    pub server_cert: PathBuf,
    pub server_key: PathBuf,
    pub client_cert: PathBuf,
    pub client_key: PathBuf,
    /// A client certificate from a CA the server does not trust.
    pub rogue_cert: PathBuf,
    pub rogue_key: PathBuf,
}

fn ca(name: &str) -> (rcgen::Certificate, KeyPair) {
    let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
    p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    p.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    p.distinguished_name.push(DnType::CommonName, name);
    let key = KeyPair::generate().unwrap();
    (p.self_signed(&key).unwrap(), key)
}

fn leaf(
    names: &[&str],
    usage: ExtendedKeyUsagePurpose,
    ca: &(rcgen::Certificate, KeyPair),
) -> (String, String) {
    let mut p =
        CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
    p.distinguished_name.push(DnType::CommonName, names[0]);
    p.extended_key_usages = vec![usage];
    // OpenSSL (Python's `ssl`) finds the issuer by this.
    p.use_authority_key_identifier_extension = true;
    let key = KeyPair::generate().unwrap();
    let cert = p.signed_by(&key, &ca.0, &ca.1).unwrap();
    (cert.pem(), key.serialize_pem())
}

/// Makes the certificates in `dir`.
pub fn make(dir: &Path) -> Certs {
    let root = ca("intpath test CA");
    let rogue = ca("someone else's CA");
    let (server_cert, server_key) = leaf(
        &["127.0.0.1", "localhost"],
        ExtendedKeyUsagePurpose::ServerAuth,
        &root,
    );
    let (client_cert, client_key) = leaf(&["client"], ExtendedKeyUsagePurpose::ClientAuth, &root);
    let (rogue_cert, rogue_key) = leaf(&["rogue"], ExtendedKeyUsagePurpose::ClientAuth, &rogue);
    let write = |name: &str, pem: &str| {
        let p = dir.join(name);
        std::fs::write(&p, pem).unwrap();
        p
    };
    Certs {
        ca: write("ca.pem", &root.0.pem()),
        server_cert: write("server.pem", &server_cert),
        server_key: write("server.key", &server_key),
        client_cert: write("client.pem", &client_cert),
        client_key: write("client.key", &client_key),
        rogue_cert: write("rogue.pem", &rogue_cert),
        rogue_key: write("rogue.key", &rogue_key),
    }
}
