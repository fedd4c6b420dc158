#![cfg(not(target_arch = "wasm32"))]
//! Authentication over real sockets (issue 16): listeners from Kafka's keys, SASL/SCRAM and
//! PLAIN exchanges, SCRAM credentials added over the wire and surviving a restart (through a
//! snapshot), TLS with and without client certificates, clients of the wrong protocol.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use groupcoord::config_keys;
use groupcoord::server::security::certs;
use groupcoord::server::security::scram::{ScramClient, ScramHash};
use groupcoord::server::storage::format;
use groupcoord::server::wire::{self, Header, Req, RequestKind, ResponseKind};
use groupcoord::server::{ServeOptions, ServerHandle, start};
use kafka_protocol::messages::alter_user_scram_credentials_request::ScramCredentialUpsertion;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

mod common;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gc-security-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Server options from Kafka-style properties (listeners on ephemeral ports).
fn options(dir: &std::path::Path, certs_dir: &std::path::Path) -> ServeOptions {
    let text = format!(
        "listeners=PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0\n\
         advertised.listeners=SASL_PLAINTEXT://sasl.example:0\n\
         sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512,PLAIN\n\
         listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_alice=\"alice-secret\";\n\
         ssl.keystore.type=PEM\n\
         ssl.keystore.location={c}/server.pem\n\
         ssl.truststore.type=PEM\n\
         ssl.truststore.location={c}/ca.pem\n\
         ssl.client.auth=required\n\
         log.retention.hours=168\n",
        c = certs_dir.display()
    );
    let entries = config_keys::parse_properties(&text).unwrap();
    let parsed = config_keys::build_all(&entries).unwrap();
    assert_eq!(
        parsed.listeners.ignored,
        vec!["log.retention.hours".to_string()]
    );
    let mut o = ServeOptions::new("127.0.0.1:0".parse().unwrap(), dir.to_path_buf());
    o.owners = common::test_owners();
    o.listeners = parsed.listeners.listeners;
    o.coordinator = parsed.coordinator;
    // A snapshot after every batch: credentials must survive compaction too.
    o.snapshot_bytes = 1;
    o
}

fn addr_of(h: &ServerHandle, name: &str) -> std::net::SocketAddr {
    h.listeners.iter().find(|(n, _, _)| n == name).unwrap().2
}

async fn call<S: AsyncRead + AsyncWrite + Unpin>(
    s: &mut S,
    key: ApiKey,
    version: i16,
    req: Req,
) -> Result<ResponseKind, String> {
    let h = Header {
        api_key: key as i16,
        api_version: version,
        correlation_id: 1,
        client_id: Some("security-test".into()),
    };
    let frame = wire::encode_request(&h, &req)?;
    s.write_all(&frame).await.map_err(|e| e.to_string())?;
    let mut len = [0u8; 4];
    tokio::time::timeout(Duration::from_secs(5), s.read_exact(&mut len))
        .await
        .map_err(|_| "timeout".to_string())?
        .map_err(|e| format!("closed: {e}"))?;
    let mut body = vec![0u8; u32::from_be_bytes(len) as usize];
    s.read_exact(&mut body).await.map_err(|e| e.to_string())?;
    let (_, b) = wire::split_response(key as i16, version, &body)?;
    wire::decode_kafka_response(key as i16, version, b)
}

/// Whether the server closed the connection (EOF or reset) within 5 s.
async fn closed<S: AsyncRead + Unpin>(s: &mut S) -> bool {
    let mut b = [0u8; 1];
    matches!(
        tokio::time::timeout(Duration::from_secs(5), s.read(&mut b)).await,
        Ok(Ok(0)) | Ok(Err(_))
    )
}

fn handshake(m: &str) -> Req {
    let mut r = SaslHandshakeRequest::default();
    r.mechanism = StrBytes::from_string(m.into());
    Req::Kafka(RequestKind::SaslHandshake(r))
}

fn authenticate(token: &[u8]) -> Req {
    let mut r = SaslAuthenticateRequest::default();
    r.auth_bytes = Bytes::copy_from_slice(token);
    Req::Kafka(RequestKind::SaslAuthenticate(r))
}

async fn scram_login<S: AsyncRead + AsyncWrite + Unpin>(
    s: &mut S,
    hash: ScramHash,
    user: &str,
    password: &str,
) -> Result<(), String> {
    match call(
        s,
        ApiKey::SaslHandshake,
        1,
        handshake(hash.mechanism_name()),
    )
    .await?
    {
        ResponseKind::SaslHandshake(r) if r.error_code == 0 => {}
        other => return Err(format!("handshake: {other:?}")),
    }
    let mut c = ScramClient::new(hash, user, password, "test-nonce");
    let first = match call(s, ApiKey::SaslAuthenticate, 2, authenticate(&c.first())).await? {
        ResponseKind::SaslAuthenticate(r) if r.error_code == 0 => r.auth_bytes,
        other => return Err(format!("client-first: {other:?}")),
    };
    let fin = c.finish(&first)?;
    match call(s, ApiKey::SaslAuthenticate, 2, authenticate(&fin)).await? {
        ResponseKind::SaslAuthenticate(r) if r.error_code == 0 && c.verify(&r.auth_bytes) => Ok(()),
        ResponseKind::SaslAuthenticate(r) => Err(format!(
            "{}: {}",
            r.error_code,
            r.error_message.map(|m| m.to_string()).unwrap_or_default()
        )),
        other => Err(format!("client-final: {other:?}")),
    }
}

async fn metadata_broker<S: AsyncRead + AsyncWrite + Unpin>(s: &mut S) -> (String, i32) {
    match call(
        s,
        ApiKey::Metadata,
        12,
        Req::Kafka(RequestKind::Metadata(MetadataRequest::default())),
    )
    .await
    .unwrap()
    {
        ResponseKind::Metadata(m) => (m.brokers[0].host.to_string(), m.brokers[0].port),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn scram_users_over_the_wire_survive_a_restart() {
    let dir = tmp("scram");
    certs::write(&dir.join("certs"), "localhost").unwrap();
    // `storage format` makes the directory for the server's owner count (`GC_TEST_OWNERS`).
    format::format(
        &dir.join("data"),
        common::test_owners(),
        &["SCRAM-SHA-512=[name=admin,password=admin-secret]".to_string()],
    )
    .unwrap();
    let opts = options(&dir.join("data"), &dir.join("certs"));
    let h = start(opts.clone()).await.unwrap();
    let sasl = addr_of(&h, "SASL_PLAINTEXT");

    // A request before authenticating closes the connection, as in Kafka.
    let mut s = TcpStream::connect(sasl).await.unwrap();
    let r = call(
        &mut s,
        ApiKey::Metadata,
        12,
        Req::Kafka(RequestKind::Metadata(MetadataRequest::default())),
    )
    .await;
    assert!(r.is_err(), "{r:?}");

    // The super user from `storage format` logs in; Metadata advertises this listener.
    let mut admin = TcpStream::connect(sasl).await.unwrap();
    scram_login(&mut admin, ScramHash::Sha512, "admin", "admin-secret")
        .await
        .unwrap();
    assert_eq!(
        metadata_broker(&mut admin).await,
        ("sasl.example".to_string(), sasl.port() as i32)
    );
    // SaslHandshake after authentication: ILLEGAL_SASL_STATE (34).
    match call(&mut admin, ApiKey::SaslHandshake, 1, handshake("PLAIN"))
        .await
        .unwrap()
    {
        ResponseKind::SaslHandshake(r) => assert_eq!(r.error_code, 34),
        other => panic!("{other:?}"),
    }

    // bob over the wire (the client sends the salted password, as Kafka's admin client does).
    let mut up = ScramCredentialUpsertion::default();
    up.name = StrBytes::from_static_str("bob");
    up.mechanism = ScramHash::Sha256.type_id();
    up.iterations = 4096;
    up.salt = Bytes::from_static(b"bob-salt");
    up.salted_password =
        Bytes::from(ScramHash::Sha256.salted_password(b"bob-secret", b"bob-salt", 4096));
    let mut alter = AlterUserScramCredentialsRequest::default();
    alter.upsertions = vec![up];
    match call(
        &mut admin,
        ApiKey::AlterUserScramCredentials,
        0,
        Req::Kafka(RequestKind::AlterUserScramCredentials(alter)),
    )
    .await
    .unwrap()
    {
        ResponseKind::AlterUserScramCredentials(r) => {
            assert_eq!(r.results[0].error_code, 0, "{r:?}")
        }
        other => panic!("{other:?}"),
    }
    let mut bob = TcpStream::connect(sasl).await.unwrap();
    scram_login(&mut bob, ScramHash::Sha256, "bob", "bob-secret")
        .await
        .unwrap();
    // A wrong password: Kafka's generic message, then the connection is closed.
    let mut eve = TcpStream::connect(sasl).await.unwrap();
    let e = scram_login(&mut eve, ScramHash::Sha256, "bob", "guess")
        .await
        .unwrap_err();
    assert_eq!(
        e,
        "58: Authentication failed during authentication due to invalid credentials with SASL \
         mechanism SCRAM-SHA-256"
    );
    assert!(closed(&mut eve).await);
    drop((s, admin, bob));
    h.shutdown().await;
    // The credentials are global entries: owner 0's log (the directory itself with one owner).
    let log_dir = if common::test_owners() == 1 {
        dir.join("data")
    } else {
        dir.join("data").join("shard-000")
    };
    let files: Vec<String> = std::fs::read_dir(&log_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    assert!(files.iter().any(|f| f.ends_with(".snap")), "{files:?}");

    // After a restart (replayed from the snapshot) both users still log in.
    let h = start(opts).await.unwrap();
    let sasl = addr_of(&h, "SASL_PLAINTEXT");
    for (hash, user, pw) in [
        (ScramHash::Sha256, "bob", "bob-secret"),
        (ScramHash::Sha512, "admin", "admin-secret"),
    ] {
        let mut s = TcpStream::connect(sasl).await.unwrap();
        scram_login(&mut s, hash, user, pw).await.unwrap();
    }
    // PLAIN from the JAAS line.
    let mut s = TcpStream::connect(sasl).await.unwrap();
    call(&mut s, ApiKey::SaslHandshake, 1, handshake("PLAIN"))
        .await
        .unwrap();
    match call(
        &mut s,
        ApiKey::SaslAuthenticate,
        2,
        authenticate(b"\0alice\0alice-secret"),
    )
    .await
    .unwrap()
    {
        ResponseKind::SaslAuthenticate(r) => assert_eq!(r.error_code, 0),
        other => panic!("{other:?}"),
    }
    h.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// Kafka's SASL state machine over a real socket: requests out of order close the connection,
/// with ILLEGAL_SASL_STATE in the request's own response where Kafka sends one.
#[tokio::test]
async fn sasl_requests_out_of_order_are_refused_as_kafka_does() {
    let dir = tmp("sasl-states");
    certs::write(&dir.join("certs"), "localhost").unwrap();
    let h = start(options(&dir.join("data"), &dir.join("certs")))
        .await
        .unwrap();
    let sasl = addr_of(&h, "SASL_PLAINTEXT");
    let api_versions = || Req::ApiVersions(ApiVersionsRequest::default());

    // SaslAuthenticate before SaslHandshake: closed without an answer.
    let mut s = TcpStream::connect(sasl).await.unwrap();
    let r = call(
        &mut s,
        ApiKey::SaslAuthenticate,
        2,
        authenticate(b"\0alice\0alice-secret"),
    )
    .await;
    assert!(r.is_err(), "{r:?}");

    // ApiVersions, then a second ApiVersions: closed.
    let mut s = TcpStream::connect(sasl).await.unwrap();
    match call(&mut s, ApiKey::ApiVersions, 3, api_versions()).await {
        Ok(ResponseKind::ApiVersions(r)) => assert_eq!(r.error_code, 0),
        other => panic!("{other:?}"),
    }
    assert!(
        call(&mut s, ApiKey::ApiVersions, 3, api_versions())
            .await
            .is_err()
    );

    // A second SaslHandshake, and ApiVersions, after the handshake: ILLEGAL_SASL_STATE (34) in
    // their own response, then closed.
    for (key, version, req) in [
        (ApiKey::SaslHandshake, 1, handshake("PLAIN")),
        (ApiKey::ApiVersions, 3, api_versions()),
    ] {
        let mut s = TcpStream::connect(sasl).await.unwrap();
        call(&mut s, ApiKey::SaslHandshake, 1, handshake("PLAIN"))
            .await
            .unwrap();
        let code = match call(&mut s, key, version, req).await.unwrap() {
            ResponseKind::SaslHandshake(r) => r.error_code,
            ResponseKind::ApiVersions(r) => r.error_code,
            other => panic!("{other:?}"),
        };
        assert_eq!(code, 34, "{key:?}");
        assert!(closed(&mut s).await, "{key:?}: still open");
    }

    // Metadata during authentication: closed without an answer.
    let mut s = TcpStream::connect(sasl).await.unwrap();
    call(&mut s, ApiKey::SaslHandshake, 1, handshake("PLAIN"))
        .await
        .unwrap();
    let r = call(
        &mut s,
        ApiKey::Metadata,
        12,
        Req::Kafka(RequestKind::Metadata(MetadataRequest::default())),
    )
    .await;
    assert!(r.is_err(), "{r:?}");

    // Authenticated: SaslAuthenticate again is ILLEGAL_SASL_STATE and the connection stays open.
    let mut s = TcpStream::connect(sasl).await.unwrap();
    call(&mut s, ApiKey::SaslHandshake, 1, handshake("PLAIN"))
        .await
        .unwrap();
    call(
        &mut s,
        ApiKey::SaslAuthenticate,
        2,
        authenticate(b"\0alice\0alice-secret"),
    )
    .await
    .unwrap();
    match call(
        &mut s,
        ApiKey::SaslAuthenticate,
        2,
        authenticate(b"\0alice\0alice-secret"),
    )
    .await
    .unwrap()
    {
        ResponseKind::SaslAuthenticate(r) => assert_eq!(r.error_code, 34),
        other => panic!("{other:?}"),
    }
    assert_eq!(metadata_broker(&mut s).await.1, sasl.port() as i32);

    // On a PLAINTEXT listener SaslHandshake is ILLEGAL_SASL_STATE too (KafkaApis).
    let mut s = TcpStream::connect(addr_of(&h, "PLAINTEXT")).await.unwrap();
    match call(&mut s, ApiKey::SaslHandshake, 1, handshake("PLAIN"))
        .await
        .unwrap()
    {
        ResponseKind::SaslHandshake(r) => assert_eq!(r.error_code, 34),
        other => panic!("{other:?}"),
    }
    h.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

fn tls_client(certs_dir: &std::path::Path, with_cert: bool) -> tokio_rustls::TlsConnector {
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::{CertificateDer, PrivateKeyDer};
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_file(certs_dir.join("ca.pem")).unwrap())
        .unwrap();
    let b = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots);
    let config = if with_cert {
        let chain = vec![CertificateDer::from_pem_file(certs_dir.join("client.crt")).unwrap()];
        let key = PrivateKeyDer::from_pem_file(certs_dir.join("client.key")).unwrap();
        b.with_client_auth_cert(chain, key).unwrap()
    } else {
        b.with_no_client_auth()
    };
    tokio_rustls::TlsConnector::from(Arc::new(config))
}

#[tokio::test]
async fn tls_listener_with_required_client_certificates() {
    let dir = tmp("tls");
    certs::write(&dir.join("certs"), "localhost").unwrap();
    let h = start(options(&dir.join("data"), &dir.join("certs")))
        .await
        .unwrap();
    let ssl = addr_of(&h, "SSL");
    let name = rustls_pki_types::ServerName::try_from("localhost").unwrap();

    let tcp = TcpStream::connect(ssl).await.unwrap();
    let mut s = tls_client(&dir.join("certs"), true)
        .connect(name.clone(), tcp)
        .await
        .unwrap();
    // No advertised.listeners entry for SSL: the bound address.
    assert_eq!(
        metadata_broker(&mut s).await,
        ("127.0.0.1".to_string(), ssl.port() as i32)
    );

    // Without a client certificate the handshake (or the first read) fails.
    let tcp = TcpStream::connect(ssl).await.unwrap();
    let refused = match tls_client(&dir.join("certs"), false)
        .connect(name, tcp)
        .await
    {
        Err(_) => true,
        Ok(mut s) => call(
            &mut s,
            ApiKey::ApiVersions,
            3,
            Req::ApiVersions(ApiVersionsRequest::default()),
        )
        .await
        .is_err(),
    };
    assert!(refused);

    // A plaintext Kafka client on the TLS port is closed at once.
    let mut s = TcpStream::connect(ssl).await.unwrap();
    let r = call(
        &mut s,
        ApiKey::ApiVersions,
        3,
        Req::ApiVersions(ApiVersionsRequest::default()),
    )
    .await;
    assert!(r.is_err(), "{r:?}");

    // A TLS client on the plaintext port is closed too.
    let plain = addr_of(&h, "PLAINTEXT");
    let tcp = TcpStream::connect(plain).await.unwrap();
    let r = tls_client(&dir.join("certs"), true)
        .connect(
            rustls_pki_types::ServerName::try_from("localhost").unwrap(),
            tcp,
        )
        .await;
    assert!(r.is_err());
    h.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_stock_kafka_server_properties_loads_and_typos_are_all_reported() {
    // Kafka 4.4's config/server.properties as shipped (KRaft, combined mode).
    let stock = include_str!("fixtures/kafka-4.4-server.properties");
    let entries = config_keys::parse_properties(stock).unwrap();
    let p = config_keys::build_all(&entries).unwrap();
    assert_eq!(
        p.listeners.data_dir.as_deref(),
        Some("/tmp/kraft-combined-logs")
    );
    assert_eq!(
        p.listeners.listeners.len(),
        1,
        "the controller listener is not served"
    );
    let l = &p.listeners.listeners[0];
    assert_eq!((l.bind.host.as_str(), l.bind.port), ("", 9092));
    assert_eq!(
        (l.advertised.host.as_str(), l.advertised.port),
        ("localhost", 9092)
    );
    assert_eq!(p.listeners.ignored.len(), 17, "{:?}", p.listeners.ignored);

    // Security keys groupcoord does not support are named in the one warning, not applied
    // (docs/deviations.md row 26).
    let mut with_unsupported: BTreeMap<String, String> = entries.clone();
    with_unsupported.insert("connections.max.reauth.ms".into(), "3600000".into());
    with_unsupported.insert(
        "ssl.principal.mapping.rules".into(),
        "RULE:^CN=(.*?),.*$/$1/".into(),
    );
    let p = config_keys::build_all(&with_unsupported).unwrap();
    for k in ["connections.max.reauth.ms", "ssl.principal.mapping.rules"] {
        assert!(p.listeners.ignored.iter().any(|i| i == k), "{k}");
    }

    // Misspelled and invalid keys: all reported in one go.
    let mut bad: BTreeMap<String, String> = entries.clone();
    bad.insert("log.retention.hour".into(), "1".into());
    bad.insert("group.max.sise".into(), "1".into());
    bad.insert("group.max.size".into(), "zero".into());
    bad.insert("num.partitions".into(), "-1".into());
    let errors = config_keys::build_all(&bad).unwrap_err();
    let keys: Vec<&str> = errors.iter().map(|e| e.key.as_str()).collect();
    for k in [
        "log.retention.hour",
        "group.max.sise",
        "group.max.size",
        "num.partitions",
    ] {
        assert!(keys.contains(&k), "{k} missing from {keys:?}");
    }
}
