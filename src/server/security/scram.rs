//! SCRAM-SHA-256 / SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka's `ScramSaslServer` speaks it:
//! the credentials (salt, StoredKey, ServerKey, iterations: never a password), the store the
//! log replays into, and the server side of one exchange. The primitives are RustCrypto's
//! (`hmac`, `sha2`, `pbkdf2`); nothing here is hand-rolled crypto.

use std::collections::BTreeMap;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256, Sha512};

use crate::security_config::Mechanism;

/// Kafka's lowest iteration count for both SCRAM mechanisms (`ScramMechanism.minIterations`).
pub const MIN_ITERATIONS: i32 = 4096;
/// Kafka's highest iteration count for a credential (`ScramControlManager.MAX_ITERATIONS`).
pub const MAX_ITERATIONS: i32 = 16384;
/// Longest user name / salt / key accepted from a peer or the log (bytes).
pub const MAX_FIELD: usize = 1024;

/// The two SCRAM hashes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ScramHash {
    /// SCRAM-SHA-256, Kafka's mechanism type 1.
    Sha256,
    /// SCRAM-SHA-512, Kafka's mechanism type 2.
    Sha512,
}

impl ScramHash {
    /// Kafka's `ScramMechanism` type byte (AlterUserScramCredentials, the log).
    pub fn type_id(self) -> i8 {
        match self {
            ScramHash::Sha256 => 1,
            ScramHash::Sha512 => 2,
        }
    }

    /// The mechanism of a type byte.
    pub fn from_type_id(t: i8) -> Option<ScramHash> {
        match t {
            1 => Some(ScramHash::Sha256),
            2 => Some(ScramHash::Sha512),
            _ => None,
        }
    }

    /// The SASL mechanism name.
    pub fn mechanism_name(self) -> &'static str {
        match self {
            ScramHash::Sha256 => "SCRAM-SHA-256",
            ScramHash::Sha512 => "SCRAM-SHA-512",
        }
    }

    /// The SCRAM hash of a SASL mechanism, if it is one.
    pub fn of(m: Mechanism) -> Option<ScramHash> {
        match m {
            Mechanism::ScramSha256 => Some(ScramHash::Sha256),
            Mechanism::ScramSha512 => Some(ScramHash::Sha512),
            Mechanism::Plain => None,
        }
    }

    /// `mechanism_name` parsed back.
    pub fn from_name(name: &str) -> Option<ScramHash> {
        ScramHash::of(Mechanism::from_name(name)?)
    }

    fn hmac(self, key: &[u8], data: &[u8]) -> Vec<u8> {
        match self {
            ScramHash::Sha256 => {
                let mut m = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key");
                m.update(data);
                m.finalize().into_bytes().to_vec()
            }
            ScramHash::Sha512 => {
                let mut m = Hmac::<Sha512>::new_from_slice(key).expect("HMAC takes any key");
                m.update(data);
                m.finalize().into_bytes().to_vec()
            }
        }
    }

    fn hash(self, data: &[u8]) -> Vec<u8> {
        match self {
            ScramHash::Sha256 => Sha256::digest(data).to_vec(),
            ScramHash::Sha512 => Sha512::digest(data).to_vec(),
        }
    }

    /// `Hi(password, salt, iterations)`: PBKDF2 with HMAC of this hash.
    pub fn salted_password(self, password: &[u8], salt: &[u8], iterations: u32) -> Vec<u8> {
        match self {
            ScramHash::Sha256 => {
                let mut out = [0u8; 32];
                pbkdf2::pbkdf2_hmac::<Sha256>(password, salt, iterations, &mut out);
                out.to_vec()
            }
            ScramHash::Sha512 => {
                let mut out = [0u8; 64];
                pbkdf2::pbkdf2_hmac::<Sha512>(password, salt, iterations, &mut out);
                out.to_vec()
            }
        }
    }
}

/// What the server keeps for one user and mechanism.
#[derive(Clone, PartialEq, Eq)]
pub struct ScramCredential {
    /// The salt.
    pub salt: Vec<u8>,
    /// `H(HMAC(SaltedPassword, "Client Key"))`.
    pub stored_key: Vec<u8>,
    /// `HMAC(SaltedPassword, "Server Key")`.
    pub server_key: Vec<u8>,
    /// PBKDF2 iterations.
    pub iterations: i32,
}

impl std::fmt::Debug for ScramCredential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // As Kafka's ScramCredentialValue: nothing secret in logs.
        write!(
            f,
            "ScramCredential([hidden], iterations={})",
            self.iterations
        )
    }
}

impl ScramCredential {
    /// The credential of a salted password (what AlterUserScramCredentials sends).
    pub fn from_salted(hash: ScramHash, salt: &[u8], salted: &[u8], iterations: i32) -> Self {
        let client_key = hash.hmac(salted, b"Client Key");
        ScramCredential {
            salt: salt.to_vec(),
            stored_key: hash.hash(&client_key),
            server_key: hash.hmac(salted, b"Server Key"),
            iterations,
        }
    }

    /// The credential of a password with a fresh random salt (`storage format --add-scram`).
    pub fn from_password(hash: ScramHash, password: &str, iterations: i32) -> Self {
        let salt: [u8; 32] = rand::random();
        let salted = hash.salted_password(password.as_bytes(), &salt, iterations.max(1) as u32);
        ScramCredential::from_salted(hash, &salt, &salted, iterations)
    }
}

/// Every SCRAM credential, by user and mechanism (replayed from the log).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScramCredentials {
    map: BTreeMap<(String, ScramHash), ScramCredential>,
}

impl ScramCredentials {
    /// The credential of `user` for `hash`.
    pub fn get(&self, user: &str, hash: ScramHash) -> Option<&ScramCredential> {
        self.map.get(&(user.to_string(), hash))
    }

    /// Insert or replace.
    pub fn upsert(&mut self, user: &str, hash: ScramHash, c: ScramCredential) {
        self.map.insert((user.to_string(), hash), c);
    }

    /// Remove; whether it existed.
    pub fn remove(&mut self, user: &str, hash: ScramHash) -> bool {
        self.map.remove(&(user.to_string(), hash)).is_some()
    }

    /// Every (user, mechanism, credential), ordered by user then mechanism.
    pub fn iter(&self) -> impl Iterator<Item = (&str, ScramHash, &ScramCredential)> {
        self.map.iter().map(|((u, h), c)| (u.as_str(), *h, c))
    }

    /// Number of credentials.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// No credential at all.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

/// Why an exchange failed. `Generic` failures get Kafka's generic message (they may involve the
/// existence of the user); `Message` ones are sent as they are, as Kafka does for its
/// `SaslAuthenticationException`s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScramError {
    /// Bad credentials or a malformed message: "Authentication failed during authentication due
    /// to invalid credentials with SASL mechanism ...".
    Generic(String),
    /// A message the client may see.
    Message(String),
}

/// Where a server exchange is.
enum Step {
    ClientFirst,
    ClientFinal {
        client_first_bare: String,
        server_first: String,
        nonce: String,
        credential: ScramCredential,
        user: String,
    },
    Done,
}

/// The server side of one SCRAM exchange.
pub struct ScramServer {
    hash: ScramHash,
    step: Step,
    server_nonce: String,
}

/// `saslname` to user name (`=2C` is `,`, `=3D` is `=`; any other `=` is invalid).
fn decode_saslname(s: &str) -> Result<String, ScramError> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('=') {
        out.push_str(&rest[..i]);
        match rest.get(i + 1..i + 3) {
            Some("2C") => out.push(','),
            Some("3D") => out.push('='),
            _ => return Err(ScramError::Generic("invalid username encoding".into())),
        }
        rest = &rest[i + 3..];
    }
    out.push_str(rest);
    Ok(out)
}

impl ScramServer {
    /// A new exchange; `server_nonce` is random printable text (see [`random_nonce`]).
    pub fn new(hash: ScramHash, server_nonce: String) -> ScramServer {
        ScramServer {
            hash,
            step: Step::ClientFirst,
            server_nonce,
        }
    }

    /// Whether the exchange completed successfully.
    pub fn is_complete(&self) -> bool {
        matches!(self.step, Step::Done)
    }

    /// Handle one client message; returns the server's answer and, once complete, the
    /// authenticated user name.
    pub fn step(
        &mut self,
        msg: &[u8],
        lookup: impl FnOnce(&str) -> Option<ScramCredential>,
    ) -> Result<(Vec<u8>, Option<String>), ScramError> {
        let text = std::str::from_utf8(msg)
            .map_err(|_| ScramError::Generic("message is not UTF-8".into()))?;
        match std::mem::replace(&mut self.step, Step::Done) {
            Step::ClientFirst => {
                // gs2-header "n,," or "n,a=authzid," (channel binding is not supported, as in
                // Kafka), then client-first-message-bare "n=user,r=nonce[,ext...]".
                let rest = text
                    .strip_prefix("n,")
                    .ok_or_else(|| ScramError::Generic("invalid client first message".into()))?;
                let (authzid, bare) = rest
                    .split_once(',')
                    .ok_or_else(|| ScramError::Generic("invalid client first message".into()))?;
                let authzid = match authzid {
                    "" => "",
                    a => a.strip_prefix("a=").ok_or_else(|| {
                        ScramError::Generic("invalid client first message".into())
                    })?,
                };
                let mut parts = bare.split(',');
                let user = parts
                    .next()
                    .and_then(|p| p.strip_prefix("n="))
                    .ok_or_else(|| ScramError::Generic("invalid client first message".into()))?;
                let nonce = parts
                    .next()
                    .and_then(|p| p.strip_prefix("r="))
                    .ok_or_else(|| ScramError::Generic("invalid client first message".into()))?;
                if nonce.is_empty() || nonce.contains(',') {
                    return Err(ScramError::Generic("invalid client nonce".into()));
                }
                let user = decode_saslname(user)?;
                let credential = lookup(&user).ok_or_else(|| {
                    ScramError::Generic("Authentication failed: Invalid user credentials".into())
                })?;
                if !authzid.is_empty() && decode_saslname(authzid)? != user {
                    return Err(ScramError::Message(
                        "Authentication failed: Client requested an authorization id that is \
                         different from username"
                            .into(),
                    ));
                }
                if credential.iterations < MIN_ITERATIONS {
                    return Err(ScramError::Generic(format!(
                        "Iterations {} is less than the minimum {MIN_ITERATIONS}",
                        credential.iterations
                    )));
                }
                let full_nonce = format!("{nonce}{}", self.server_nonce);
                let server_first = format!(
                    "r={full_nonce},s={},i={}",
                    B64.encode(&credential.salt),
                    credential.iterations
                );
                self.step = Step::ClientFinal {
                    client_first_bare: bare.to_string(),
                    server_first: server_first.clone(),
                    nonce: full_nonce,
                    credential,
                    user,
                };
                Ok((server_first.into_bytes(), None))
            }
            Step::ClientFinal {
                client_first_bare,
                server_first,
                nonce,
                credential,
                user,
            } => {
                let (without_proof, proof) = text
                    .rsplit_once(",p=")
                    .ok_or_else(|| ScramError::Generic("invalid client final message".into()))?;
                let mut parts = without_proof.split(',');
                let channel = parts.next().and_then(|p| p.strip_prefix("c="));
                let got_nonce = parts.next().and_then(|p| p.strip_prefix("r="));
                if channel.is_none() {
                    return Err(ScramError::Generic("invalid client final message".into()));
                }
                if got_nonce != Some(nonce.as_str()) {
                    return Err(ScramError::Generic(
                        "Invalid client nonce in the final client message.".into(),
                    ));
                }
                let proof = B64
                    .decode(proof)
                    .map_err(|_| ScramError::Generic("invalid client proof".into()))?;
                let auth_message = format!("{client_first_bare},{server_first},{without_proof}");
                let client_signature = self
                    .hash
                    .hmac(&credential.stored_key, auth_message.as_bytes());
                if proof.len() != client_signature.len() {
                    return Err(ScramError::Generic("Invalid client credentials".into()));
                }
                let client_key: Vec<u8> = proof
                    .iter()
                    .zip(&client_signature)
                    .map(|(a, b)| a ^ b)
                    .collect();
                let computed = self.hash.hash(&client_key);
                // Constant time, as MessageDigest.isEqual.
                let diff = computed
                    .iter()
                    .zip(&credential.stored_key)
                    .fold(0u8, |acc, (a, b)| acc | (a ^ b));
                if diff != 0 || computed.len() != credential.stored_key.len() {
                    return Err(ScramError::Generic("Invalid client credentials".into()));
                }
                let server_signature = self
                    .hash
                    .hmac(&credential.server_key, auth_message.as_bytes());
                self.step = Step::Done;
                Ok((
                    format!("v={}", B64.encode(server_signature)).into_bytes(),
                    Some(user),
                ))
            }
            Step::Done => Err(ScramError::Message(
                "Unexpected challenge in Sasl server state COMPLETE".into(),
            )),
        }
    }
}

/// A random nonce of printable characters (Kafka's `secureRandomString`: base-36 digits).
pub fn random_nonce() -> String {
    use rand::Rng;
    const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut rng = rand::thread_rng();
    (0..32)
        .map(|_| DIGITS[rng.gen_range(0..DIGITS.len())] as char)
        .collect()
}

/// The client side, for tests and the `groupcoord` tools: client-first, then client-final
/// from the server-first; checks the server's signature.
pub struct ScramClient {
    hash: ScramHash,
    user: String,
    password: String,
    nonce: String,
    client_first_bare: String,
    server_signature: Vec<u8>,
}

impl ScramClient {
    /// A client for `user` / `password` with client nonce `nonce`.
    pub fn new(hash: ScramHash, user: &str, password: &str, nonce: &str) -> ScramClient {
        let name = user.replace('=', "=3D").replace(',', "=2C");
        ScramClient {
            hash,
            user: user.to_string(),
            password: password.to_string(),
            nonce: nonce.to_string(),
            client_first_bare: format!("n={name},r={nonce}"),
            server_signature: Vec::new(),
        }
    }

    /// The first message.
    pub fn first(&self) -> Vec<u8> {
        format!("n,,{}", self.client_first_bare).into_bytes()
    }

    /// The final message for `server_first`.
    pub fn finish(&mut self, server_first: &[u8]) -> Result<Vec<u8>, String> {
        let sf = std::str::from_utf8(server_first).map_err(|e| e.to_string())?;
        let mut r = None;
        let mut s = None;
        let mut i = None;
        for p in sf.split(',') {
            if let Some(v) = p.strip_prefix("r=") {
                r = Some(v);
            } else if let Some(v) = p.strip_prefix("s=") {
                s = Some(v);
            } else if let Some(v) = p.strip_prefix("i=") {
                i = Some(v);
            }
        }
        let (r, s, i) = match (r, s, i) {
            (Some(r), Some(s), Some(i)) => (r, s, i),
            _ => return Err(format!("bad server first message `{sf}`")),
        };
        if !r.starts_with(&self.nonce) {
            return Err("server nonce does not extend ours".into());
        }
        let salt = B64.decode(s).map_err(|e| e.to_string())?;
        let iterations: u32 = i.parse().map_err(|_| "bad iterations".to_string())?;
        let salted = self
            .hash
            .salted_password(self.password.as_bytes(), &salt, iterations);
        let client_key = self.hash.hmac(&salted, b"Client Key");
        let stored_key = self.hash.hash(&client_key);
        let without_proof = format!("c=biws,r={r}");
        let auth = format!("{},{sf},{without_proof}", self.client_first_bare);
        let signature = self.hash.hmac(&stored_key, auth.as_bytes());
        let proof: Vec<u8> = client_key
            .iter()
            .zip(&signature)
            .map(|(a, b)| a ^ b)
            .collect();
        let server_key = self.hash.hmac(&salted, b"Server Key");
        self.server_signature = self.hash.hmac(&server_key, auth.as_bytes());
        Ok(format!("{without_proof},p={}", B64.encode(proof)).into_bytes())
    }

    /// Whether the server's final message proves it knows the credential.
    pub fn verify(&self, server_final: &[u8]) -> bool {
        let expected = format!("v={}", B64.encode(&self.server_signature));
        server_final == expected.as_bytes()
    }

    /// The user name.
    pub fn user(&self) -> &str {
        &self.user
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 7677 section 3: user "user", password "pencil", SCRAM-SHA-256.
    #[test]
    fn rfc7677_sha256_exchange() {
        let salt = B64.decode("W22ZaJ0SNY7soEsUEjb6gQ==").unwrap();
        let salted = ScramHash::Sha256.salted_password(b"pencil", &salt, 4096);
        let credential = ScramCredential::from_salted(ScramHash::Sha256, &salt, &salted, 4096);
        let mut server = ScramServer::new(
            ScramHash::Sha256,
            "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0".to_string(),
        );
        let (first, user) = server
            .step(b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO", |u| {
                (u == "user").then(|| credential.clone())
            })
            .unwrap();
        assert_eq!(user, None);
        assert_eq!(
            first,
            b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
        );
        let (last, user) = server
            .step(
                b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
                |_| None,
            )
            .unwrap();
        assert_eq!(last, b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=");
        assert_eq!(user.as_deref(), Some("user"));
        assert!(server.is_complete());
    }

    /// RFC 5802 section 5 (SHA-1) is not a Kafka mechanism; its PBKDF2 shape is checked through
    /// RFC 7677's vector above. SHA-512: our client and server agree, and a wrong password fails.
    #[test]
    fn sha512_round_trip_and_wrong_password() {
        let c = ScramCredential::from_password(ScramHash::Sha512, "admin-secret", 4096);
        for (password, ok) in [("admin-secret", true), ("wrong", false)] {
            let mut client = ScramClient::new(ScramHash::Sha512, "ad,m=in", password, "abc");
            let mut server = ScramServer::new(ScramHash::Sha512, random_nonce());
            let (sf, _) = server
                .step(&client.first(), |u| {
                    assert_eq!(u, "ad,m=in");
                    Some(c.clone())
                })
                .unwrap();
            let cf = client.finish(&sf).unwrap();
            match server.step(&cf, |_| None) {
                Ok((fin, user)) => {
                    assert!(ok);
                    assert!(client.verify(&fin));
                    assert_eq!(user.as_deref(), Some("ad,m=in"));
                }
                Err(e) => {
                    assert!(!ok);
                    assert_eq!(e, ScramError::Generic("Invalid client credentials".into()));
                }
            }
        }
    }

    #[test]
    fn unknown_user_and_malformed_messages_fail() {
        let mut s = ScramServer::new(ScramHash::Sha256, "x".into());
        assert!(matches!(
            s.step(b"n,,n=nobody,r=abc", |_| None),
            Err(ScramError::Generic(_))
        ));
        for bad in [
            &b"y,,n=u,r=a"[..],
            b"n,,r=a",
            b"n,,n=u",
            b"n,,n=u=XY,r=a",
            b"\xff",
        ] {
            let mut s = ScramServer::new(ScramHash::Sha256, "x".into());
            let c = ScramCredential::from_password(ScramHash::Sha256, "p", 4096);
            assert!(s.step(bad, |_| Some(c.clone())).is_err(), "{bad:?}");
        }
        // A credential below Kafka's minimum iterations is refused.
        let weak = ScramCredential::from_password(ScramHash::Sha256, "p", 10);
        let mut s = ScramServer::new(ScramHash::Sha256, "x".into());
        assert!(s.step(b"n,,n=u,r=a", |_| Some(weak)).is_err());
    }

    #[test]
    fn final_message_with_another_nonce_is_refused() {
        let c = ScramCredential::from_password(ScramHash::Sha256, "p", 4096);
        let mut s = ScramServer::new(ScramHash::Sha256, "srv".into());
        s.step(b"n,,n=u,r=cli", |_| Some(c.clone())).unwrap();
        let e = s.step(b"c=biws,r=cliOTHER,p=AAAA", |_| None).unwrap_err();
        assert_eq!(
            e,
            ScramError::Generic("Invalid client nonce in the final client message.".into())
        );
    }
}
