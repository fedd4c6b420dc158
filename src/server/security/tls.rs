//! TLS for SSL and SASL_SSL listeners through rustls (ring provider): the server config built
//! from Kafka's PEM key store and trust store keys, and the principal of a client certificate
//! as Kafka's default principal builder names it (`User:` + the subject's RFC 2253 distinguished
//! name, e.g. `User:CN=client,O=groupcoord`).

use std::sync::Arc;

use rustls::ServerConfig;
use rustls::server::WebPkiClientVerifier;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use crate::security_config::{ClientAuth, PemSource, TlsSettings};

/// Largest PEM file read (a key store or trust store is a few KiB).
const MAX_PEM: u64 = 4 * 1024 * 1024;

fn read(src: &PemSource) -> Result<String, String> {
    match src {
        PemSource::Inline(text) => Ok(text.clone()),
        PemSource::File(path) => {
            let meta = std::fs::metadata(path).map_err(|e| format!("cannot read {path}: {e}"))?;
            if meta.len() > MAX_PEM {
                return Err(format!("{path} is larger than {MAX_PEM} bytes"));
            }
            std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))
        }
    }
}

fn describe(src: &PemSource) -> String {
    match src {
        PemSource::File(p) => p.clone(),
        PemSource::Inline(_) => "the inline PEM value".into(),
    }
}

/// The rustls server configuration of a listener.
pub fn server_config(t: &TlsSettings) -> Result<Arc<ServerConfig>, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let key_pem = read(&t.key)?;
    if key_pem.contains("ENCRYPTED PRIVATE KEY") || key_pem.contains("Proc-Type: 4,ENCRYPTED") {
        return Err(format!(
            "{}: encrypted private keys (ssl.key.password) are not supported yet; store the key \
             unencrypted (openssl pkcs8 -topk8 -nocrypt) and protect the file instead",
            describe(&t.key)
        ));
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes())
        .map_err(|e| format!("{}: no usable private key ({e})", describe(&t.key)))?;
    let chain_src = t.chain.as_ref().unwrap_or(&t.key);
    let chain_pem = match &t.chain {
        Some(c) => read(c)?,
        None => key_pem.clone(),
    };
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(chain_pem.as_bytes())
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{}: bad certificate ({e})", describe(chain_src)))?;
    if certs.is_empty() {
        return Err(format!(
            "{}: no certificate (the key store needs the certificate chain)",
            describe(chain_src)
        ));
    }
    let mut versions: Vec<&'static rustls::SupportedProtocolVersion> = Vec::new();
    if t.protocols.iter().any(|p| p == "TLSv1.3") {
        versions.push(&rustls::version::TLS13);
    }
    if t.protocols.iter().any(|p| p == "TLSv1.2") {
        versions.push(&rustls::version::TLS12);
    }
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&versions)
        .map_err(|e| e.to_string())?;
    let builder = match t.client_auth {
        ClientAuth::None => builder.with_no_client_auth(),
        auth => {
            let src = t
                .truststore
                .as_ref()
                .ok_or("ssl.client.auth needs a trust store")?;
            let pem = read(src)?;
            let mut roots = rustls::RootCertStore::empty();
            for c in CertificateDer::pem_slice_iter(pem.as_bytes()) {
                let c = c.map_err(|e| format!("{}: bad certificate ({e})", describe(src)))?;
                roots
                    .add(c)
                    .map_err(|e| format!("{}: unusable CA certificate ({e})", describe(src)))?;
            }
            if roots.is_empty() {
                return Err(format!("{}: no CA certificate", describe(src)));
            }
            let v = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider);
            let v = if auth == ClientAuth::Requested {
                v.allow_unauthenticated()
            } else {
                v
            };
            builder.with_client_cert_verifier(v.build().map_err(|e| e.to_string())?)
        }
    };
    let config = builder
        .with_single_cert(certs, key)
        .map_err(|e| format!("{}: {e}", describe(&t.key)))?;
    Ok(Arc::new(config))
}

/// The subject of a DER certificate as RFC 2253 text (Java's `X500Principal.getName()`): RDNs
/// in reverse order, `,` between them, `+` inside a multi-valued RDN, special characters
/// escaped.
pub fn subject_dn(der: &[u8]) -> Result<String, String> {
    use x509_parser::prelude::*;
    let (_, cert) = X509Certificate::from_der(der).map_err(|e| e.to_string())?;
    let mut rdns: Vec<String> = Vec::new();
    for rdn in cert.subject().iter() {
        let parts: Vec<String> = rdn
            .iter()
            .map(|atv| {
                let oid = atv.attr_type().to_id_string();
                let key = match oid.as_str() {
                    "2.5.4.3" => "CN".to_string(),
                    "2.5.4.11" => "OU".to_string(),
                    "2.5.4.10" => "O".to_string(),
                    "2.5.4.7" => "L".to_string(),
                    "2.5.4.8" => "ST".to_string(),
                    "2.5.4.6" => "C".to_string(),
                    "2.5.4.9" => "STREET".to_string(),
                    "0.9.2342.19200300.100.1.25" => "DC".to_string(),
                    "0.9.2342.19200300.100.1.1" => "UID".to_string(),
                    other => other.to_string(),
                };
                let value = match atv.as_str() {
                    Ok(v) => escape_rfc2253(v),
                    Err(_) => {
                        let hex: String = atv
                            .attr_value()
                            .data
                            .iter()
                            .map(|b| format!("{b:02x}"))
                            .collect();
                        format!("#{hex}")
                    }
                };
                format!("{key}={value}")
            })
            .collect();
        rdns.push(parts.join("+"));
    }
    rdns.reverse();
    Ok(rdns.join(","))
}

fn escape_rfc2253(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    let n = v.chars().count();
    for (i, c) in v.chars().enumerate() {
        let special = matches!(c, ',' | '+' | '"' | '\\' | '<' | '>' | ';')
            || (i == 0 && (c == '#' || c == ' '))
            || (i + 1 == n && c == ' ');
        if special {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::security::certs;

    #[test]
    fn client_certificate_names_the_principal_like_kafka() {
        let set = certs::generate("localhost").unwrap();
        let der = CertificateDer::from_pem_slice(set.client_cert.as_bytes()).unwrap();
        assert_eq!(subject_dn(&der).unwrap(), "CN=client,OU=test,O=groupcoord");
        assert_eq!(escape_rfc2253(" a,b+c "), "\\ a\\,b\\+c\\ ");
    }

    #[test]
    fn server_config_from_pem_and_errors() {
        let set = certs::generate("localhost").unwrap();
        let mut t = TlsSettings {
            key: PemSource::Inline(format!("{}{}", set.server_key, set.server_cert)),
            chain: None,
            key_password: None,
            truststore: Some(PemSource::Inline(set.ca_cert.clone())),
            client_auth: ClientAuth::Required,
            protocols: vec!["TLSv1.2".into(), "TLSv1.3".into()],
        };
        assert!(server_config(&t).is_ok());
        t.key = PemSource::Inline(set.server_key.clone());
        assert!(server_config(&t).unwrap_err().contains("no certificate"));
        t.chain = Some(PemSource::Inline(set.server_cert.clone()));
        assert!(server_config(&t).is_ok());
        t.key = PemSource::Inline(
            "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAA==\n-----END ENCRYPTED PRIVATE KEY-----\n"
                .into(),
        );
        assert!(server_config(&t).unwrap_err().contains("encrypted"));
        t.key = PemSource::File("/nonexistent/key.pem".into());
        assert!(server_config(&t).unwrap_err().contains("cannot read"));
    }
}
