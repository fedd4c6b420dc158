//! Throwaway certificates for tests and trials (`groupcoord dev certs --out DIR`): a CA, a
//! server certificate for `localhost` / `127.0.0.1` (and an extra host name), and a client
//! certificate `CN=client,OU=test,O=groupcoord`, all signed by the CA. Generated with rcgen at
//! run time: nothing is downloaded and no key is checked in.

use std::path::Path;

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};

/// PEM texts of one generated set.
pub struct CertSet {
    /// The CA certificate (trust store of both sides).
    pub ca_cert: String,
    /// The server certificate.
    pub server_cert: String,
    /// The server's PKCS#8 private key.
    pub server_key: String,
    /// The client certificate.
    pub client_cert: String,
    /// The client's PKCS#8 private key.
    pub client_key: String,
}

/// Generate a set; the server certificate names `localhost`, `127.0.0.1` and `host`.
pub fn generate(host: &str) -> Result<CertSet, String> {
    let e = |e: rcgen::Error| e.to_string();
    let ca_key = KeyPair::generate().map_err(e)?;
    let mut ca = CertificateParams::new(Vec::<String>::new()).map_err(e)?;
    ca.distinguished_name = DistinguishedName::new();
    ca.distinguished_name
        .push(DnType::CommonName, "groupcoord test CA");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca_cert = ca.self_signed(&ca_key).map_err(e)?;

    let mut names = vec!["localhost".to_string(), "127.0.0.1".to_string()];
    if !names.iter().any(|n| n == host) {
        names.push(host.to_string());
    }
    let server_key = KeyPair::generate().map_err(e)?;
    let mut server = CertificateParams::new(names).map_err(e)?;
    server.distinguished_name = DistinguishedName::new();
    server.distinguished_name.push(DnType::CommonName, host);
    server.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let server_cert = server
        .signed_by(&server_key, &ca_cert, &ca_key)
        .map_err(e)?;

    let client_key = KeyPair::generate().map_err(e)?;
    let mut client = CertificateParams::new(Vec::<String>::new()).map_err(e)?;
    // `new` starts the name with a placeholder CN; start from an empty one so the order is ours.
    client.distinguished_name = DistinguishedName::new();
    // Pushed in reverse of the RFC 2253 text, which lists the last RDN first.
    client
        .distinguished_name
        .push(DnType::OrganizationName, "groupcoord");
    client
        .distinguished_name
        .push(DnType::OrganizationalUnitName, "test");
    client.distinguished_name.push(DnType::CommonName, "client");
    client.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    let client_cert = client
        .signed_by(&client_key, &ca_cert, &ca_key)
        .map_err(e)?;
    Ok(CertSet {
        ca_cert: ca_cert.pem(),
        server_cert: server_cert.pem(),
        server_key: server_key.serialize_pem(),
        client_cert: client_cert.pem(),
        client_key: client_key.serialize_pem(),
    })
}

/// Write a set into `dir`: `ca.pem`, `server.pem` (key + certificate: Kafka's
/// `ssl.keystore.location` with `ssl.keystore.type=PEM`), `server.crt`, `server.key`,
/// `client.crt`, `client.key` and `client-keystore.pem` (key + certificate, for Java clients).
pub fn write(dir: &Path, host: &str) -> Result<Vec<String>, String> {
    let set = generate(host)?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let files = [
        ("ca.pem", set.ca_cert.clone()),
        (
            "server.pem",
            format!("{}{}", set.server_key, set.server_cert),
        ),
        ("server.crt", set.server_cert.clone()),
        ("server.key", set.server_key.clone()),
        ("client.crt", set.client_cert.clone()),
        ("client.key", set.client_key.clone()),
        (
            "client-keystore.pem",
            format!("{}{}", set.client_key, set.client_cert),
        ),
    ];
    let mut written = Vec::new();
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        written.push(path.display().to_string());
    }
    Ok(written)
}
