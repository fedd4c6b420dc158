//! The SASL exchange of one connection on a SASL_PLAINTEXT or SASL_SSL listener, as Kafka's
//! `SaslServerAuthenticator` runs it: ApiVersions (once) and SaslHandshake (17, v0-1), then the
//! mechanism's tokens in SaslAuthenticate (36, v0-2) requests (after a v1 handshake) or as raw
//! size-prefixed tokens (after a v0 handshake). Any other request before authentication closes
//! the connection; an unsupported mechanism or failed authentication is answered with Kafka's
//! error and message and then closes it. Sans-IO: frames in, frames out.

use std::sync::{Arc, RwLock};

use bytes::{BufMut, Bytes, BytesMut};
use kafka_protocol::messages::{
    ApiKey, ApiVersionsRequest, SaslAuthenticateRequest, SaslAuthenticateResponse,
    SaslHandshakeRequest, SaslHandshakeResponse,
};
use kafka_protocol::protocol::{Decodable, StrBytes};

use super::codes as ErrorCode;
use super::scram::{ScramCredentials, ScramError, ScramHash, ScramServer, random_nonce};
use crate::security_config::{Mechanism, SaslSettings};
use crate::server::peer::Principal;
use crate::server::wire::{self, Header, Resp, ResponseKind};

/// Kafka's `sasl.server.max.receive.size` default: the largest frame accepted before a client
/// is authenticated.
pub const MAX_RECEIVE_BEFORE_AUTH: usize = 524_288;

/// What the connection does with a frame's outcome.
#[derive(Debug)]
pub enum Outcome {
    /// Write the frame and keep reading.
    Reply(Bytes),
    /// Write the frame (if any), then close the connection; `reason` is logged.
    Fail {
        /// Kafka's error response, when Kafka sends one.
        reply: Option<Bytes>,
        /// For the log line.
        reason: String,
    },
    /// Write the frame; the connection is authenticated as `principal` from now on.
    Authenticated {
        /// The last SaslAuthenticate answer (or raw token).
        reply: Bytes,
        /// `User:<name>`.
        principal: Principal,
    },
}

enum State {
    /// Kafka's HANDSHAKE_OR_VERSIONS_REQUEST: ApiVersions or SaslHandshake.
    HandshakeOrVersions,
    /// ApiVersions was answered: SaslHandshake only.
    Handshake,
    /// Mechanism chosen; `raw` after a v0 handshake (tokens without Kafka headers).
    Authenticate {
        mechanism: Mechanism,
        raw: bool,
        scram: Option<Box<ScramServer>>,
    },
    Done,
}

/// The SASL server of one connection.
pub struct Authenticator {
    state: State,
    settings: Arc<SaslSettings>,
    credentials: Arc<RwLock<ScramCredentials>>,
    streams_enabled: bool,
}

fn api_name(key: i16) -> String {
    match ApiKey::try_from(key) {
        Ok(k) => format!("{k:?}").chars().fold(String::new(), |mut s, c| {
            if c.is_uppercase() && !s.is_empty() {
                s.push('_');
            }
            s.push(c.to_ascii_uppercase());
            s
        }),
        Err(_) => format!("key {key}"),
    }
}

fn encode(h: &Header, r: ResponseKind) -> Result<Bytes, String> {
    wire::encode_response(h, &Resp::Kafka(r))
}

fn raw_frame(token: &[u8]) -> Bytes {
    let mut b = BytesMut::with_capacity(4 + token.len());
    b.put_u32(token.len() as u32);
    b.put_slice(token);
    b.freeze()
}

impl Authenticator {
    /// A new exchange for a connection of a listener with `settings`.
    pub fn new(
        settings: Arc<SaslSettings>,
        credentials: Arc<RwLock<ScramCredentials>>,
        streams_enabled: bool,
    ) -> Authenticator {
        Authenticator {
            state: State::HandshakeOrVersions,
            settings,
            credentials,
            streams_enabled,
        }
    }

    fn mechanism_names(&self) -> Vec<StrBytes> {
        self.settings
            .mechanisms
            .iter()
            .map(|m| StrBytes::from_static_str(m.name()))
            .collect()
    }

    /// Handle one frame (its body, without the size prefix).
    pub fn on_frame(&mut self, frame: Bytes) -> Outcome {
        if let State::Authenticate {
            mechanism,
            raw: true,
            ..
        } = self.state
        {
            return match self.evaluate(&frame) {
                Ok((token, None)) => Outcome::Reply(raw_frame(&token)),
                Ok((token, Some(user))) => Outcome::Authenticated {
                    reply: raw_frame(&token),
                    principal: Principal::user(&user),
                },
                Err(e) => Outcome::Fail {
                    reply: None,
                    reason: failure_message(mechanism, e),
                },
            };
        }
        let (h, off) = match wire::parse_header(&frame) {
            Ok(x) => x,
            Err(e) => {
                return Outcome::Fail {
                    reply: None,
                    reason: format!(
                        "first SASL packet is not a Kafka request ({e}); GSSAPI is not supported"
                    ),
                };
            }
        };
        let mut body = frame.slice(off..);
        let key = h.api_key;
        let supported = wire::supported(key, self.streams_enabled)
            .is_some_and(|(lo, hi)| (lo..=hi).contains(&h.api_version));
        match (&self.state, key) {
            (State::HandshakeOrVersions, 18) => {
                if !supported {
                    return Outcome::Reply(wire::api_versions_unsupported_frame(
                        h.correlation_id,
                        self.streams_enabled,
                    ));
                }
                if ApiVersionsRequest::decode(&mut body, h.api_version).is_err() {
                    return self.fail_silently("malformed ApiVersions request");
                }
                let r = wire::api_versions_response(0, h.api_version, self.streams_enabled);
                self.state = State::Handshake;
                self.reply(&h, ResponseKind::ApiVersions(r))
            }
            (State::HandshakeOrVersions | State::Handshake, 17) if supported => {
                let Ok(req) = SaslHandshakeRequest::decode(&mut body, h.api_version) else {
                    return self.fail_silently("malformed SaslHandshake request");
                };
                let mut resp = SaslHandshakeResponse::default();
                resp.mechanisms = self.mechanism_names();
                let wanted = req.mechanism.as_str();
                match Mechanism::from_name(wanted).filter(|m| self.settings.mechanisms.contains(m))
                {
                    Some(m) => {
                        self.state = State::Authenticate {
                            mechanism: m,
                            raw: h.api_version == 0,
                            scram: ScramHash::of(m)
                                .map(|hash| Box::new(ScramServer::new(hash, random_nonce()))),
                        };
                        self.reply(&h, ResponseKind::SaslHandshake(resp))
                    }
                    None => {
                        resp.error_code = ErrorCode::UNSUPPORTED_SASL_MECHANISM.0;
                        let reply = encode(&h, ResponseKind::SaslHandshake(resp)).ok();
                        self.state = State::Done;
                        Outcome::Fail {
                            reply,
                            reason: format!(
                                "Unsupported SASL mechanism {}",
                                wanted.chars().take(64).collect::<String>()
                            ),
                        }
                    }
                }
            }
            (State::Authenticate { mechanism, .. }, 36) if supported => {
                let mechanism = *mechanism;
                let Ok(req) = SaslAuthenticateRequest::decode(&mut body, h.api_version) else {
                    return self.fail_silently("malformed SaslAuthenticate request");
                };
                let mut resp = SaslAuthenticateResponse::default();
                resp.error_message = None;
                match self.evaluate(&req.auth_bytes) {
                    Ok((token, user)) => {
                        resp.auth_bytes = Bytes::from(token);
                        resp.session_lifetime_ms = 0;
                        let reply = match encode(&h, ResponseKind::SaslAuthenticate(resp)) {
                            Ok(b) => b,
                            Err(e) => return self.fail_silently(&e),
                        };
                        match user {
                            None => Outcome::Reply(reply),
                            Some(u) => Outcome::Authenticated {
                                reply,
                                principal: Principal::user(&u),
                            },
                        }
                    }
                    Err(e) => {
                        let message = failure_message(mechanism, e);
                        resp.error_code = ErrorCode::SASL_AUTHENTICATION_FAILED.0;
                        resp.error_message = Some(StrBytes::from_string(message.clone()));
                        self.state = State::Done;
                        Outcome::Fail {
                            reply: encode(&h, ResponseKind::SaslAuthenticate(resp)).ok(),
                            reason: message,
                        }
                    }
                }
            }
            (State::Authenticate { .. }, _) => {
                // Kafka answers a request it can parse with that request's own error response
                // (ILLEGAL_SASL_STATE), then closes; one of a version it does not serve is
                // closed without an answer. The answer is built here for the two requests a
                // client sends in this phase (a second SaslHandshake, ApiVersions); any other
                // is closed without one (docs/deviations.md).
                let reason = format!(
                    "Unexpected Kafka request of type {} during SASL authentication.",
                    api_name(key)
                );
                let illegal = ErrorCode::ILLEGAL_SASL_STATE.0;
                let reply = match key {
                    17 if supported => {
                        let mut r = SaslHandshakeResponse::default();
                        r.error_code = illegal;
                        encode(&h, ResponseKind::SaslHandshake(r)).ok()
                    }
                    18 if supported => {
                        let mut r = kafka_protocol::messages::ApiVersionsResponse::default();
                        r.error_code = illegal;
                        encode(&h, ResponseKind::ApiVersions(r)).ok()
                    }
                    _ => None,
                };
                self.state = State::Done;
                Outcome::Fail { reply, reason }
            }
            (State::Handshake, 18) => self.fail_silently(
                "Unexpected ApiVersions request received during SASL authentication state HANDSHAKE_REQUEST",
            ),
            _ => self.fail_silently(&format!(
                "Unexpected Kafka request of type {} during SASL handshake.",
                api_name(key)
            )),
        }
    }

    fn reply(&self, h: &Header, r: ResponseKind) -> Outcome {
        match encode(h, r) {
            Ok(b) => Outcome::Reply(b),
            Err(e) => Outcome::Fail {
                reply: None,
                reason: format!("cannot encode response: {e}"),
            },
        }
    }

    fn fail_silently(&mut self, reason: &str) -> Outcome {
        self.state = State::Done;
        Outcome::Fail {
            reply: None,
            reason: reason.to_string(),
        }
    }

    /// Run the chosen mechanism on one client token: the server's token and, once
    /// authenticated, the user.
    fn evaluate(&mut self, token: &[u8]) -> Result<(Vec<u8>, Option<String>), ScramError> {
        let State::Authenticate {
            mechanism, scram, ..
        } = &mut self.state
        else {
            return Err(ScramError::Message("no mechanism".into()));
        };
        let result = match (*mechanism, scram) {
            (Mechanism::Plain, _) => {
                plain(token, &self.settings).map(|user| (Vec::new(), Some(user)))
            }
            (m, Some(server)) => {
                let hash = ScramHash::of(m).expect("SCRAM mechanism");
                let credentials = &self.credentials;
                server.step(token, |user| {
                    credentials
                        .read()
                        .unwrap_or_else(|e| e.into_inner())
                        .get(user, hash)
                        .cloned()
                })
            }
            (_, None) => Err(ScramError::Message("no SCRAM state".into())),
        };
        match &result {
            Ok((_, Some(_))) | Err(_) => self.state = State::Done,
            Ok((_, None)) => {}
        }
        result
    }
}

/// Kafka's message for a failed exchange.
fn failure_message(mechanism: Mechanism, e: ScramError) -> String {
    match e {
        ScramError::Message(m) => m,
        // Kafka does not tell an unauthenticated client whether the user exists.
        ScramError::Generic(_) => format!(
            "Authentication failed during authentication due to invalid credentials with SASL \
             mechanism {}",
            mechanism.name()
        ),
    }
}

/// RFC 4616 `[authzid] NUL authcid NUL passwd`, checked as Kafka's `PlainSaslServer` does.
fn plain(token: &[u8], settings: &SaslSettings) -> Result<String, ScramError> {
    let text = String::from_utf8_lossy(token);
    let mut tokens: Vec<&str> = Vec::new();
    let mut rest: &str = &text;
    for _ in 0..4 {
        match rest.find('\0') {
            Some(i) => {
                tokens.push(&rest[..i]);
                rest = &rest[i + 1..];
            }
            None => {
                tokens.push(rest);
                break;
            }
        }
    }
    if tokens.len() != 3 {
        return Err(ScramError::Message(format!(
            "Invalid SASL/PLAIN response: expected 3 tokens, got {}",
            tokens.len()
        )));
    }
    let (authzid, user, password) = (tokens[0], tokens[1], tokens[2]);
    if user.is_empty() {
        return Err(ScramError::Message(
            "Authentication failed: username not specified".into(),
        ));
    }
    if password.is_empty() {
        return Err(ScramError::Message(
            "Authentication failed: password not specified".into(),
        ));
    }
    let ok = settings.plain_users.get(user).is_some_and(|expected| {
        expected.len() == password.len()
            && expected
                .bytes()
                .zip(password.bytes())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0
    });
    if !ok {
        return Err(ScramError::Message(
            "Authentication failed: Invalid username or password".into(),
        ));
    }
    if !authzid.is_empty() && authzid != user {
        return Err(ScramError::Message(
            "Authentication failed: Client requested an authorization id that is different from username".into(),
        ));
    }
    Ok(user.to_string())
}

/// The answer to SaslHandshake / SaslAuthenticate once authenticated or on a listener without
/// SASL (Kafka's `KafkaApis`: ILLEGAL_SASL_STATE).
pub fn after_authentication(h: &Header) -> Option<ResponseKind> {
    match h.api_key {
        17 => {
            let mut r = SaslHandshakeResponse::default();
            r.error_code = ErrorCode::ILLEGAL_SASL_STATE.0;
            Some(ResponseKind::SaslHandshake(r))
        }
        36 => {
            let mut r = SaslAuthenticateResponse::default();
            r.error_code = ErrorCode::ILLEGAL_SASL_STATE.0;
            r.error_message = Some(StrBytes::from_static_str(
                "SaslAuthenticate request received after successful authentication",
            ));
            Some(ResponseKind::SaslAuthenticate(r))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::security::scram::{ScramClient, ScramCredential};
    use crate::server::wire::{Req, RequestKind, encode_request};
    use std::collections::BTreeMap;

    fn auth(mechanisms: &[Mechanism]) -> Authenticator {
        let mut users = BTreeMap::new();
        users.insert("alice".to_string(), "alice-secret".to_string());
        let mut creds = ScramCredentials::default();
        creds.upsert(
            "admin",
            ScramHash::Sha512,
            ScramCredential::from_password(ScramHash::Sha512, "admin-secret", 4096),
        );
        Authenticator::new(
            Arc::new(SaslSettings {
                mechanisms: mechanisms.to_vec(),
                plain_users: users,
            }),
            Arc::new(RwLock::new(creds)),
            true,
        )
    }

    fn frame(key: i16, version: i16, req: Req) -> Bytes {
        let h = Header {
            api_key: key,
            api_version: version,
            correlation_id: 7,
            client_id: Some("t".into()),
        };
        encode_request(&h, &req).unwrap().slice(4..)
    }

    fn handshake(m: &str, v: i16) -> Bytes {
        let mut r = SaslHandshakeRequest::default();
        r.mechanism = StrBytes::from_string(m.to_string());
        frame(17, v, Req::Kafka(RequestKind::SaslHandshake(r)))
    }

    fn authenticate(token: &[u8]) -> Bytes {
        let mut r = SaslAuthenticateRequest::default();
        r.auth_bytes = Bytes::copy_from_slice(token);
        frame(36, 2, Req::Kafka(RequestKind::SaslAuthenticate(r)))
    }

    fn decode_auth(b: &Bytes) -> SaslAuthenticateResponse {
        let (_, body) = wire::split_response(36, 2, &b[4..]).unwrap();
        match wire::decode_kafka_response(36, 2, body).unwrap() {
            ResponseKind::SaslAuthenticate(r) => r,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn plain_after_api_versions_and_handshake() {
        let mut a = auth(&[Mechanism::Plain, Mechanism::ScramSha512]);
        let v = frame(18, 3, Req::ApiVersions(ApiVersionsRequest::default()));
        assert!(matches!(a.on_frame(v.clone()), Outcome::Reply(_)));
        // A second ApiVersions is a state error in Kafka: closed without answer.
        let mut b = auth(&[Mechanism::Plain]);
        b.on_frame(v.clone());
        assert!(matches!(b.on_frame(v), Outcome::Fail { reply: None, .. }));
        let Outcome::Reply(r) = a.on_frame(handshake("PLAIN", 1)) else {
            panic!()
        };
        let (_, body) = wire::split_response(17, 1, &r[4..]).unwrap();
        let ResponseKind::SaslHandshake(h) = wire::decode_kafka_response(17, 1, body).unwrap()
        else {
            panic!()
        };
        assert_eq!(h.error_code, 0);
        assert_eq!(h.mechanisms.len(), 2);
        match a.on_frame(authenticate(b"\0alice\0alice-secret")) {
            Outcome::Authenticated { principal, reply } => {
                assert_eq!(principal.to_string(), "User:alice");
                assert_eq!(decode_auth(&reply).error_code, 0);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn plain_failures_carry_kafka_messages() {
        for (token, message) in [
            (
                &b"\0alice\0wrong"[..],
                "Authentication failed: Invalid username or password",
            ),
            (
                b"\0nobody\0x",
                "Authentication failed: Invalid username or password",
            ),
            (b"\0\0x", "Authentication failed: username not specified"),
            (
                b"\0alice\0",
                "Authentication failed: password not specified",
            ),
            (
                b"alice",
                "Invalid SASL/PLAIN response: expected 3 tokens, got 1",
            ),
            (
                b"bob\0alice\0alice-secret",
                "Authentication failed: Client requested an authorization id that is different from username",
            ),
        ] {
            let mut a = auth(&[Mechanism::Plain]);
            a.on_frame(handshake("PLAIN", 1));
            match a.on_frame(authenticate(token)) {
                Outcome::Fail {
                    reply: Some(r),
                    reason,
                } => {
                    let resp = decode_auth(&r);
                    assert_eq!(resp.error_code, ErrorCode::SASL_AUTHENTICATION_FAILED.0);
                    assert_eq!(resp.error_message.as_deref(), Some(message));
                    assert_eq!(reason, message);
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn scram_sha512_exchange_and_generic_failure() {
        for (password, ok) in [("admin-secret", true), ("nope", false)] {
            let mut a = auth(&[Mechanism::ScramSha512]);
            a.on_frame(handshake("SCRAM-SHA-512", 1));
            let mut c = ScramClient::new(ScramHash::Sha512, "admin", password, "cnonce");
            let Outcome::Reply(r) = a.on_frame(authenticate(&c.first())) else {
                panic!()
            };
            let server_first = decode_auth(&r).auth_bytes;
            let fin = c.finish(&server_first).unwrap();
            match (a.on_frame(authenticate(&fin)), ok) {
                (Outcome::Authenticated { principal, reply }, true) => {
                    assert_eq!(principal.to_string(), "User:admin");
                    assert!(c.verify(&decode_auth(&reply).auth_bytes));
                }
                (Outcome::Fail { reply: Some(r), .. }, false) => {
                    assert_eq!(
                        decode_auth(&r).error_message.as_deref(),
                        Some(
                            "Authentication failed during authentication due to invalid \
                             credentials with SASL mechanism SCRAM-SHA-512"
                        )
                    );
                }
                (other, _) => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn unsupported_mechanism_and_requests_before_authentication() {
        let mut a = auth(&[Mechanism::ScramSha512]);
        match a.on_frame(handshake("PLAIN", 1)) {
            Outcome::Fail { reply: Some(r), .. } => {
                let (_, body) = wire::split_response(17, 1, &r[4..]).unwrap();
                let ResponseKind::SaslHandshake(h) =
                    wire::decode_kafka_response(17, 1, body).unwrap()
                else {
                    panic!()
                };
                assert_eq!(h.error_code, ErrorCode::UNSUPPORTED_SASL_MECHANISM.0);
                assert_eq!(h.mechanisms[0].as_str(), "SCRAM-SHA-512");
            }
            other => panic!("{other:?}"),
        }
        // Metadata before the handshake: closed without an answer.
        let mut a = auth(&[Mechanism::Plain]);
        let m = frame(3, 12, Req::Kafka(RequestKind::Metadata(Default::default())));
        match a.on_frame(m.clone()) {
            Outcome::Fail {
                reply: None,
                reason,
            } => {
                assert_eq!(
                    reason,
                    "Unexpected Kafka request of type METADATA during SASL handshake."
                )
            }
            other => panic!("{other:?}"),
        }
        // ... and after the handshake, during authentication.
        let mut a = auth(&[Mechanism::Plain]);
        a.on_frame(handshake("PLAIN", 1));
        assert!(matches!(a.on_frame(m), Outcome::Fail { .. }));
        // Garbage (not a Kafka header) first: closed.
        let mut a = auth(&[Mechanism::Plain]);
        assert!(matches!(
            a.on_frame(Bytes::from_static(&[0x60, 1])),
            Outcome::Fail { reply: None, .. }
        ));
    }

    /// The error code of a SaslHandshake or ApiVersions answer.
    fn error_of(key: i16, version: i16, reply: &Bytes) -> i16 {
        let (_, body) = wire::split_response(key, version, &reply[4..]).unwrap();
        match wire::decode_kafka_response(key, version, body).unwrap() {
            ResponseKind::SaslHandshake(r) => {
                assert!(r.mechanisms.is_empty(), "{r:?}");
                r.error_code
            }
            ResponseKind::ApiVersions(r) => {
                assert!(r.api_keys.is_empty(), "{r:?}");
                r.error_code
            }
            other => panic!("{other:?}"),
        }
    }

    /// Kafka's `SaslServerAuthenticator`, state by state: before the handshake only ApiVersions
    /// (once) and SaslHandshake; anything else closes without an answer. After a v1 handshake
    /// only SaslAuthenticate; another request it can parse gets its own error response with
    /// ILLEGAL_SASL_STATE (34), then the connection closes.
    #[test]
    fn sasl_states_as_kafka_runs_them() {
        let api_versions = |v: i16| frame(18, v, Req::ApiVersions(ApiVersionsRequest::default()));
        // A frame as a client of a newer version sends it: the version bytes of the header
        // changed (the codec has no encoder for versions it does not know).
        let with_version = |f: Bytes, v: i16| {
            let mut b = BytesMut::from(&f[..]);
            b[2..4].copy_from_slice(&v.to_be_bytes());
            b.freeze()
        };
        let expect_closed = |o: Outcome, why: &str| match o {
            Outcome::Fail {
                reply: None,
                reason,
            } => assert_eq!(reason, why),
            other => panic!("{other:?}"),
        };
        let handshake_phase =
            "Unexpected Kafka request of type SASL_AUTHENTICATE during SASL handshake.";

        // SaslAuthenticate before SaslHandshake, first or after ApiVersions: closed, no answer.
        let mut a = auth(&[Mechanism::Plain]);
        expect_closed(
            a.on_frame(authenticate(b"\0alice\0alice-secret")),
            handshake_phase,
        );
        let mut a = auth(&[Mechanism::Plain]);
        assert!(matches!(a.on_frame(api_versions(3)), Outcome::Reply(_)));
        expect_closed(
            a.on_frame(authenticate(b"\0alice\0alice-secret")),
            handshake_phase,
        );

        // An ApiVersions version not served is answered (UNSUPPORTED_VERSION) and may be retried.
        let mut a = auth(&[Mechanism::Plain]);
        assert!(matches!(
            a.on_frame(with_version(api_versions(3), 99)),
            Outcome::Reply(_)
        ));
        assert!(matches!(a.on_frame(api_versions(3)), Outcome::Reply(_)));
        assert!(matches!(
            a.on_frame(handshake("PLAIN", 1)),
            Outcome::Reply(_)
        ));

        // A SaslHandshake version not served: closed without an answer.
        let mut a = auth(&[Mechanism::Plain]);
        assert!(matches!(
            a.on_frame(with_version(handshake("PLAIN", 1), 2)),
            Outcome::Fail { reply: None, .. }
        ));

        // After a v1 handshake: a second SaslHandshake and ApiVersions get ILLEGAL_SASL_STATE
        // in their own response, then the connection closes.
        for (key, version, second) in [(17, 1, handshake("PLAIN", 1)), (18, 3, api_versions(3))] {
            let mut a = auth(&[Mechanism::Plain]);
            assert!(matches!(
                a.on_frame(handshake("PLAIN", 1)),
                Outcome::Reply(_)
            ));
            match a.on_frame(second) {
                Outcome::Fail {
                    reply: Some(r),
                    reason,
                } => {
                    assert_eq!(error_of(key, version, &r), ErrorCode::ILLEGAL_SASL_STATE.0);
                    assert!(reason.ends_with("during SASL authentication."), "{reason}");
                }
                other => panic!("{other:?}"),
            }
            // Nothing more is read from a failed exchange.
            assert!(matches!(
                a.on_frame(authenticate(b"\0alice\0alice-secret")),
                Outcome::Fail { .. }
            ));
        }

        // A SaslAuthenticate version not served during authentication: closed, no answer.
        let mut a = auth(&[Mechanism::Plain]);
        a.on_frame(handshake("PLAIN", 1));
        assert!(matches!(
            a.on_frame(with_version(authenticate(b"\0alice\0alice-secret"), 9)),
            Outcome::Fail { reply: None, .. }
        ));

        // After a v0 handshake the next frame is the mechanism's raw token, whatever it looks
        // like: a SaslAuthenticate request is not a valid PLAIN token.
        let mut a = auth(&[Mechanism::Plain]);
        a.on_frame(handshake("PLAIN", 0));
        match a.on_frame(authenticate(b"\0alice\0alice-secret")) {
            Outcome::Fail {
                reply: None,
                reason,
            } => assert!(
                reason.starts_with("Invalid SASL/PLAIN response"),
                "{reason}"
            ),
            other => panic!("{other:?}"),
        }

        // After authentication, SaslHandshake and SaslAuthenticate are answered with
        // ILLEGAL_SASL_STATE by the request handler (the connection stays open).
        let h = Header {
            api_key: 36,
            api_version: 2,
            correlation_id: 1,
            client_id: None,
        };
        match after_authentication(&h) {
            Some(ResponseKind::SaslAuthenticate(r)) => {
                assert_eq!(r.error_code, ErrorCode::ILLEGAL_SASL_STATE.0);
                assert_eq!(
                    r.error_message.as_deref(),
                    Some("SaslAuthenticate request received after successful authentication")
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn handshake_v0_takes_raw_tokens() {
        let mut a = auth(&[Mechanism::Plain]);
        assert!(matches!(
            a.on_frame(handshake("PLAIN", 0)),
            Outcome::Reply(_)
        ));
        match a.on_frame(Bytes::from_static(b"\0alice\0alice-secret")) {
            Outcome::Authenticated { reply, principal } => {
                assert_eq!(&reply[..], &[0, 0, 0, 0]);
                assert_eq!(principal.name, "alice");
            }
            other => panic!("{other:?}"),
        }
    }
}
