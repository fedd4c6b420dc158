//! Listeners and authentication settings, read from a Kafka `server.properties` with Kafka's key
//! names and semantics (issue 16, the authentication half): `listeners`, `advertised.listeners`,
//! `listener.security.protocol.map`, `controller.listener.names` (those listeners are not
//! served), the `ssl.*` keys of PEM key stores and trust stores, `ssl.client.auth`,
//! `sasl.enabled.mechanisms` and the JAAS lines that hold SASL/PLAIN users, each of them also in
//! the per-listener form `listener.name.<listener>.<key>` (and
//! `listener.name.<listener>.<mechanism>.sasl.jaas.config`), which wins over the plain key.
//!
//! Also here: the list of Kafka 4.4 broker keys ([`is_kafka_key`]), so that a real Kafka
//! `server.properties` loads (keys that do not apply to groupcoord are reported once, in
//! [`ListenersConfig::ignored`]) while a misspelled key still stops start-up.
//!
//! Pure: no I/O. File names are kept as they are; the native server reads them
//! (`server::security::tls`).

use crate::util::map::BTreeMap;
use std::fmt;

use crate::config_keys::ConfigError;

/// Kafka 4.4's broker config names (generated from the kafka-server jar, see the file's header).
const KAFKA_BROKER_KEYS: &str = include_str!("kafka_broker_keys.txt");

/// Whether `key` is one of Kafka 4.4's broker config names (not counting the per-listener
/// `listener.name.<l>.` forms).
pub fn is_kafka_key(key: &str) -> bool {
    KAFKA_BROKER_KEYS
        .lines()
        .filter(|l| !l.starts_with('#'))
        .any(|l| l == key)
}

/// Kafka's security protocols.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SecurityProtocol {
    /// No TLS, no authentication.
    Plaintext,
    /// TLS; the principal comes from the client certificate when there is one.
    Ssl,
    /// SASL over plain TCP.
    SaslPlaintext,
    /// SASL over TLS.
    SaslSsl,
}

impl SecurityProtocol {
    /// Kafka's name of the protocol.
    pub fn name(self) -> &'static str {
        match self {
            SecurityProtocol::Plaintext => "PLAINTEXT",
            SecurityProtocol::Ssl => "SSL",
            SecurityProtocol::SaslPlaintext => "SASL_PLAINTEXT",
            SecurityProtocol::SaslSsl => "SASL_SSL",
        }
    }

    /// The protocol named `name` (case-insensitive, as Kafka's `SecurityProtocol.forName`).
    pub fn from_name(name: &str) -> Option<SecurityProtocol> {
        Some(match name.to_ascii_uppercase().as_str() {
            "PLAINTEXT" => SecurityProtocol::Plaintext,
            "SSL" => SecurityProtocol::Ssl,
            "SASL_PLAINTEXT" => SecurityProtocol::SaslPlaintext,
            "SASL_SSL" => SecurityProtocol::SaslSsl,
            _ => return None,
        })
    }

    /// Whether connections start with a TLS handshake.
    pub fn uses_tls(self) -> bool {
        matches!(self, SecurityProtocol::Ssl | SecurityProtocol::SaslSsl)
    }

    /// Whether clients must authenticate with SASL before any other request.
    pub fn uses_sasl(self) -> bool {
        matches!(
            self,
            SecurityProtocol::SaslPlaintext | SecurityProtocol::SaslSsl
        )
    }
}

impl fmt::Display for SecurityProtocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One `NAME://host:port` entry of `listeners` or `advertised.listeners`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The listener name, upper case as Kafka keeps it (`PLAINTEXT`, `INTERNAL`, ...).
    pub name: String,
    /// The host; empty means every interface (bind) / the machine's host name (advertise).
    pub host: String,
    /// The port (0 = ephemeral when binding).
    pub port: u16,
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') {
            write!(f, "{}://[{}]:{}", self.name, self.host, self.port)
        } else {
            write!(f, "{}://{}:{}", self.name, self.host, self.port)
        }
    }
}

/// `ssl.client.auth`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClientAuth {
    /// No client certificate is asked for (Kafka's default).
    #[default]
    None,
    /// A certificate is asked for; a client without one still connects (as `User:ANONYMOUS`).
    Requested,
    /// A client without a certificate trusted by the trust store is refused.
    Required,
}

/// Where PEM text comes from: a file or the config value itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PemSource {
    /// `ssl.keystore.location` / `ssl.truststore.location`.
    File(String),
    /// `ssl.keystore.key`, `ssl.keystore.certificate.chain`, `ssl.truststore.certificates`.
    Inline(String),
}

/// The TLS settings of one listener.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsSettings {
    /// The server's private key (PEM; PKCS#8, PKCS#1 or SEC1).
    pub key: PemSource,
    /// The server's certificate chain (PEM), when not in the same file as the key.
    pub chain: Option<PemSource>,
    /// `ssl.key.password` (for an encrypted PKCS#8 key).
    pub key_password: Option<String>,
    /// CA certificates that client certificates are checked against.
    pub truststore: Option<PemSource>,
    /// `ssl.client.auth`.
    pub client_auth: ClientAuth,
    /// `ssl.enabled.protocols` (`TLSv1.2`, `TLSv1.3`).
    pub protocols: Vec<String>,
}

/// A SASL mechanism groupcoord serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Mechanism {
    /// RFC 4616, users from the JAAS line.
    Plain,
    /// RFC 7677, credentials from AlterUserScramCredentials / `storage format --add-scram`.
    ScramSha256,
    /// SCRAM with SHA-512, credentials as for SHA-256.
    ScramSha512,
}

impl Mechanism {
    /// The mechanism's name on the wire.
    pub fn name(self) -> &'static str {
        match self {
            Mechanism::Plain => "PLAIN",
            Mechanism::ScramSha256 => "SCRAM-SHA-256",
            Mechanism::ScramSha512 => "SCRAM-SHA-512",
        }
    }

    /// The mechanism called `name` (exact, as Kafka compares mechanism names).
    pub fn from_name(name: &str) -> Option<Mechanism> {
        Some(match name {
            "PLAIN" => Mechanism::Plain,
            "SCRAM-SHA-256" => Mechanism::ScramSha256,
            "SCRAM-SHA-512" => Mechanism::ScramSha512,
            _ => return None,
        })
    }
}

/// The SASL settings of one listener.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaslSettings {
    /// `sasl.enabled.mechanisms`, in the configured order (the SaslHandshake answer lists them).
    pub mechanisms: Vec<Mechanism>,
    /// SASL/PLAIN users and passwords (`user_<name>="<password>"` of the PLAIN JAAS line).
    pub plain_users: BTreeMap<String, String>,
}

/// A listener to serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListenerConfig {
    /// Where to bind.
    pub bind: Endpoint,
    /// `listener.security.protocol.map`'s protocol for this listener.
    pub protocol: SecurityProtocol,
    /// What Metadata and FindCoordinator return to clients of this listener; `None` host when
    /// the bind host is empty or a wildcard and `advertised.listeners` does not name it (the
    /// server then advertises the machine's host name). Port 0 = the bound port.
    pub advertised: Endpoint,
    /// For SSL and SASL_SSL listeners.
    pub tls: Option<TlsSettings>,
    /// For SASL_PLAINTEXT and SASL_SSL listeners.
    pub sasl: Option<SaslSettings>,
}

/// Everything about listeners and authentication a properties file configures.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ListenersConfig {
    /// The listeners to serve, in `listeners` order; empty when `listeners` is not set.
    pub listeners: Vec<ListenerConfig>,
    /// Listeners named in `controller.listener.names` (not served).
    pub controller_listeners: Vec<String>,
    /// `log.dirs` (or `log.dir`): the data directory.
    pub data_dir: Option<String>,
    /// `num.partitions`: partitions of a topic created without a count (Kafka's default 1).
    pub num_partitions: i32,
    /// `groupcoord.http.token`: bearer token the web view requires from non-loopback clients.
    pub http_token: Option<String>,
    /// Kafka keys given that groupcoord does not apply (reported once at start-up).
    pub ignored: Vec<String>,
}

/// The keys this module reads (besides the `listener.name.` forms).
pub const LISTENER_KEYS: &[&str] = &[
    "listeners",
    "advertised.listeners",
    "listener.security.protocol.map",
    "controller.listener.names",
    "log.dirs",
    "log.dir",
    "num.partitions",
    "groupcoord.http.token",
];

/// The TLS and SASL keys read per listener (`listener.name.<l>.<key>` or plain).
pub const TLS_SASL_KEYS: &[&str] = &[
    "ssl.keystore.type",
    "ssl.keystore.location",
    "ssl.keystore.password",
    "ssl.keystore.key",
    "ssl.keystore.certificate.chain",
    "ssl.key.password",
    "ssl.truststore.type",
    "ssl.truststore.location",
    "ssl.truststore.password",
    "ssl.truststore.certificates",
    "ssl.client.auth",
    "ssl.enabled.protocols",
    "sasl.enabled.mechanisms",
    "sasl.jaas.config",
];

/// Kafka's default `listener.security.protocol.map`.
const DEFAULT_PROTOCOL_MAP: &str =
    "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT";

/// Whether `config_keys::build` should leave `key` to this module: the listener keys, the TLS
/// and SASL keys (plain or per listener) and every other Kafka broker key (ignored, reported).
pub fn accepts(key: &str) -> bool {
    LISTENER_KEYS.contains(&key) || is_kafka_key(key) || listener_scoped(key).is_some()
}

/// `listener.name.<l>.<rest>` with a `rest` that is a Kafka key, or `<mechanism>.sasl.jaas.config`.
fn listener_scoped(key: &str) -> Option<(&str, &str)> {
    let rest = key.strip_prefix("listener.name.")?;
    let (listener, suffix) = rest.split_once('.')?;
    if listener.is_empty() {
        return None;
    }
    let known = is_kafka_key(suffix)
        || suffix
            .split_once('.')
            .is_some_and(|(mech, k)| !mech.is_empty() && k == "sasl.jaas.config");
    known.then_some((listener, suffix))
}

/// Parse a `listeners` / `advertised.listeners` value (Kafka's `NAME://host:port` list; IPv6
/// hosts in brackets; an empty host is allowed).
pub fn parse_endpoints(key: &str, value: &str) -> Result<Vec<Endpoint>, ConfigError> {
    let mut out: Vec<Endpoint> = Vec::new();
    for item in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let bad = |why: &str| ConfigError {
            key: key.to_string(),
            message: format!("`{item}`: {why} (expected NAME://host:port)"),
        };
        let (name, rest) = item.split_once("://").ok_or_else(|| bad("no `://`"))?;
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(bad("invalid listener name"));
        }
        let (host, port) = if let Some(r) = rest.strip_prefix('[') {
            let (h, p) = r.split_once("]:").ok_or_else(|| bad("bad IPv6 host"))?;
            (h, p)
        } else {
            rest.rsplit_once(':').ok_or_else(|| bad("no port"))?
        };
        if host.contains(':') && !rest.starts_with('[') {
            return Err(bad("IPv6 hosts go in brackets"));
        }
        if !host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-._:%".contains(c))
        {
            return Err(bad("invalid host"));
        }
        let port: u16 = port
            .parse()
            .map_err(|_| bad("port must be a number from 0 to 65535"))?;
        let name = name.to_ascii_uppercase();
        if out.iter().any(|e| e.name == name) {
            return Err(ConfigError {
                key: key.to_string(),
                message: format!("each listener must have a different name, `{name}` is repeated"),
            });
        }
        out.push(Endpoint {
            name,
            host: host.to_string(),
            port,
        });
    }
    Ok(out)
}

/// Parse `listener.security.protocol.map` (`NAME:PROTOCOL,...`).
pub fn parse_protocol_map(value: &str) -> Result<BTreeMap<String, SecurityProtocol>, ConfigError> {
    let key = "listener.security.protocol.map";
    let mut out = BTreeMap::new();
    for item in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (name, proto) = item.split_once(':').ok_or_else(|| ConfigError {
            key: key.into(),
            message: format!("`{item}`: expected LISTENER_NAME:SECURITY_PROTOCOL"),
        })?;
        let protocol = SecurityProtocol::from_name(proto.trim()).ok_or_else(|| ConfigError {
            key: key.into(),
            message: format!(
                "`{item}`: unknown security protocol `{proto}` (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL)"
            ),
        })?;
        out.insert(name.trim().to_ascii_uppercase(), protocol);
    }
    Ok(out)
}

/// One login module entry of a JAAS configuration line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JaasEntry {
    /// The login module class, e.g. `org.apache.kafka.common.security.plain.PlainLoginModule`.
    pub module: String,
    /// `required`, `requisite`, `sufficient` or `optional`.
    pub flag: String,
    /// The options, `key="value"` or `key=value`.
    pub options: BTreeMap<String, String>,
}

/// Parse a `sasl.jaas.config` value: `Module flag key="value" ...;` (one or more entries),
/// double-quoted values with `\` escapes, as Kafka's `JaasConfig` reads it.
pub fn parse_jaas(value: &str) -> Result<Vec<JaasEntry>, String> {
    let mut tokens: Vec<(String, bool)> = Vec::new(); // (text, quoted)
    let mut chars = value.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c == ';' || c == '=' {
            chars.next();
            tokens.push((c.to_string(), false));
        } else if c == '"' {
            chars.next();
            let mut s = String::new();
            loop {
                match chars.next() {
                    None => return Err("unterminated quoted value".into()),
                    Some('"') => break,
                    Some('\\') => match chars.next() {
                        Some(e) => s.push(e),
                        None => return Err("unterminated quoted value".into()),
                    },
                    Some(ch) => s.push(ch),
                }
            }
            tokens.push((s, true));
        } else {
            let mut s = String::new();
            while let Some(&ch) = chars.peek() {
                if ch.is_whitespace() || ch == ';' || ch == '=' || ch == '"' {
                    break;
                }
                s.push(ch);
                chars.next();
            }
            tokens.push((s, false));
        }
    }
    let mut entries = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let module = match &tokens[i] {
            (m, false) if m != ";" && m != "=" => m.clone(),
            (t, _) => return Err(format!("expected a login module class, found `{t}`")),
        };
        let flag = match tokens.get(i + 1) {
            Some((f, false))
                if ["required", "requisite", "sufficient", "optional"]
                    .contains(&f.to_ascii_lowercase().as_str()) =>
            {
                f.to_ascii_lowercase()
            }
            Some((f, _)) => return Err(format!("invalid control flag `{f}` for {module}")),
            None => return Err(format!("no control flag for {module}")),
        };
        i += 2;
        let mut options = BTreeMap::new();
        loop {
            match tokens.get(i) {
                None => return Err("the JAAS entry must end with `;`".into()),
                Some((t, false)) if t == ";" => {
                    i += 1;
                    break;
                }
                Some((k, false)) if k != "=" => {
                    if tokens.get(i + 1).map(|t| t.0.as_str()) != Some("=") {
                        return Err(format!("option `{k}` has no `=value`"));
                    }
                    let Some((v, _)) = tokens.get(i + 2) else {
                        return Err(format!("option `{k}` has no value"));
                    };
                    options.insert(k.clone(), v.clone());
                    i += 3;
                }
                Some((t, _)) => return Err(format!("unexpected `{t}`")),
            }
        }
        entries.push(JaasEntry {
            module,
            flag,
            options,
        });
    }
    if entries.is_empty() {
        return Err("no login module".into());
    }
    Ok(entries)
}

/// The login module class Kafka expects for `mechanism`.
fn login_module(mechanism: Mechanism) -> &'static str {
    match mechanism {
        Mechanism::Plain => "org.apache.kafka.common.security.plain.PlainLoginModule",
        Mechanism::ScramSha256 | Mechanism::ScramSha512 => {
            "org.apache.kafka.common.security.scram.ScramLoginModule"
        }
    }
}

/// Reads keys for one listener: `listener.name.<l>.<key>` first, then `<key>`.
struct Scoped<'a> {
    entries: &'a BTreeMap<String, String>,
    prefix: String,
}

impl Scoped<'_> {
    fn get(&self, key: &str) -> Option<(String, &str)> {
        let scoped = format!("{}{key}", self.prefix);
        if let Some(v) = self.entries.get(&scoped) {
            return Some((scoped, v.as_str()));
        }
        self.entries.get(key).map(|v| (key.to_string(), v.as_str()))
    }
}

fn cerr(key: &str, message: impl Into<String>) -> ConfigError {
    ConfigError {
        key: key.to_string(),
        message: message.into(),
    }
}

/// Build the listener configuration; every problem is reported (not only the first).
pub fn build(entries: &BTreeMap<String, String>) -> Result<ListenersConfig, Vec<ConfigError>> {
    let mut errors = Vec::new();
    let mut out = ListenersConfig {
        num_partitions: 1,
        ..Default::default()
    };
    // Keys that are Kafka's but not applied here.
    let applied = |k: &str| {
        crate::config_keys::COORDINATOR_KEYS.contains(&k)
            || crate::config_keys::SERVER_KEYS.contains(&k)
            || crate::config_keys::AUTHORIZER_KEYS.contains(&k)
            || LISTENER_KEYS.contains(&k)
            || TLS_SASL_KEYS.contains(&k)
            || listener_scoped(k).is_some_and(|(_, s)| {
                TLS_SASL_KEYS.contains(&s) || s.ends_with(".sasl.jaas.config")
            })
    };
    out.ignored = entries
        .keys()
        .filter(|k| !applied(k) && (is_kafka_key(k) || listener_scoped(k).is_some()))
        .cloned()
        .collect();

    if let Some(v) = entries.get("num.partitions") {
        match v.trim().parse::<i32>() {
            Ok(n) if n >= 1 => out.num_partitions = n,
            _ => errors.push(cerr(
                "num.partitions",
                format!("`{v}` must be an int of at least 1"),
            )),
        }
    }
    let dirs = entries.get("log.dirs").or_else(|| entries.get("log.dir"));
    if let Some(d) = dirs {
        let list: Vec<&str> = d
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        match list.as_slice() {
            [one] => out.data_dir = Some(one.to_string()),
            [] => errors.push(cerr("log.dirs", "empty")),
            _ => errors.push(cerr(
                "log.dirs",
                format!(
                    "groupcoord keeps its log in one directory; `{d}` names {}",
                    list.len()
                ),
            )),
        }
    }
    if let Some(t) = entries.get("groupcoord.http.token") {
        if t.trim().len() < 16 {
            errors.push(cerr(
                "groupcoord.http.token",
                "the token must be at least 16 characters",
            ));
        } else {
            out.http_token = Some(t.trim().to_string());
        }
    }
    out.controller_listeners = entries
        .get("controller.listener.names")
        .map(|v| {
            v.split(',')
                .map(|s| s.trim().to_ascii_uppercase())
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default();

    let mut map = parse_protocol_map(DEFAULT_PROTOCOL_MAP).expect("the default map parses");
    if let Some(v) = entries.get("listener.security.protocol.map") {
        match parse_protocol_map(v) {
            Ok(m) => map = m,
            Err(e) => errors.push(e),
        }
    }
    let Some(listeners) = entries.get("listeners") else {
        if entries.contains_key("advertised.listeners") {
            errors.push(cerr(
                "advertised.listeners",
                "set without `listeners` (give both, or --listen)",
            ));
        }
        return if errors.is_empty() {
            Ok(out)
        } else {
            Err(errors)
        };
    };
    let binds = match parse_endpoints("listeners", listeners) {
        Ok(b) => b,
        Err(e) => {
            errors.push(e);
            Vec::new()
        }
    };
    let advertised = match entries.get("advertised.listeners") {
        Some(v) => match parse_endpoints("advertised.listeners", v) {
            Ok(a) => a,
            Err(e) => {
                errors.push(e);
                Vec::new()
            }
        },
        None => Vec::new(),
    };
    for a in &advertised {
        if a.host == "0.0.0.0" || a.host == "::" {
            errors.push(cerr(
                "advertised.listeners",
                format!(
                    "`{a}`: cannot use the nonroutable meta-address {}; use a routable IP address or host name",
                    a.host
                ),
            ));
        }
        if !binds.iter().any(|b| b.name == a.name) {
            errors.push(cerr(
                "advertised.listeners",
                format!(
                    "`{}` is not a listener in `listeners` ({listeners})",
                    a.name
                ),
            ));
        }
    }
    let mut ports = BTreeMap::new();
    for b in &binds {
        if out.controller_listeners.contains(&b.name) {
            continue;
        }
        if b.port != 0
            && let Some(other) = ports.insert(b.port, b.name.clone())
        {
            errors.push(cerr(
                "listeners",
                format!("{} and {other} use the same port {}", b.name, b.port),
            ));
        }
        let Some(&protocol) = map.get(&b.name) else {
            errors.push(cerr(
                "listener.security.protocol.map",
                format!(
                    "no security protocol for listener {} (add `{}:PLAINTEXT` or another protocol)",
                    b.name, b.name
                ),
            ));
            continue;
        };
        let adv = match advertised.iter().find(|a| a.name == b.name) {
            Some(a) => a.clone(),
            None => {
                if b.host == "0.0.0.0" || b.host == "::" {
                    errors.push(cerr(
                        "advertised.listeners",
                        format!(
                            "listener {} binds {} and has no advertised address: clients cannot \
                             connect to the nonroutable meta-address; set advertised.listeners",
                            b.name, b.host
                        ),
                    ));
                }
                b.clone()
            }
        };
        let scoped = Scoped {
            entries,
            prefix: format!("listener.name.{}.", b.name.to_ascii_lowercase()),
        };
        let tls = if protocol.uses_tls() {
            match tls_settings(&scoped, &b.name) {
                Ok(t) => Some(t),
                Err(mut e) => {
                    errors.append(&mut e);
                    None
                }
            }
        } else {
            None
        };
        let sasl = if protocol.uses_sasl() {
            match sasl_settings(&scoped, &b.name) {
                Ok(s) => Some(s),
                Err(mut e) => {
                    errors.append(&mut e);
                    None
                }
            }
        } else {
            None
        };
        out.listeners.push(ListenerConfig {
            bind: b.clone(),
            protocol,
            advertised: adv,
            tls,
            sasl,
        });
    }
    if out.listeners.is_empty() && errors.is_empty() {
        errors.push(cerr(
            "listeners",
            "no listener to serve (controller listeners are not served)",
        ));
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

fn tls_settings(s: &Scoped<'_>, listener: &str) -> Result<TlsSettings, Vec<ConfigError>> {
    let mut errors = Vec::new();
    for type_key in ["ssl.keystore.type", "ssl.truststore.type"] {
        if let Some((k, v)) = s.get(type_key)
            && !v.trim().eq_ignore_ascii_case("PEM")
        {
            errors.push(cerr(
                &k,
                format!("`{v}`: groupcoord reads PEM key and trust stores only (set PEM)"),
            ));
        }
    }
    let location = s.get("ssl.keystore.location");
    let inline_key = s.get("ssl.keystore.key");
    let inline_chain = s.get("ssl.keystore.certificate.chain");
    let (key, chain) = match (location, inline_key, inline_chain) {
        (Some((lk, _)), Some((ik, _)), _) => {
            errors.push(cerr(
                &ik,
                format!("give either {lk} or {ik} with ssl.keystore.certificate.chain, not both"),
            ));
            (None, None)
        }
        (Some((_, l)), None, None) => (Some(PemSource::File(l.trim().to_string())), None),
        (Some((_, l)), None, Some((_, c))) => (
            Some(PemSource::File(l.trim().to_string())),
            Some(PemSource::Inline(c.to_string())),
        ),
        (None, Some((_, k)), Some((_, c))) => (
            Some(PemSource::Inline(k.to_string())),
            Some(PemSource::Inline(c.to_string())),
        ),
        (None, Some((k, _)), None) => {
            errors.push(cerr(&k, "needs ssl.keystore.certificate.chain as well"));
            (None, None)
        }
        (None, None, _) => {
            errors.push(cerr(
                &format!(
                    "listener.name.{}.ssl.keystore.location",
                    listener.to_ascii_lowercase()
                ),
                format!(
                    "listener {listener} uses TLS and has no key store: set ssl.keystore.location \
                     (a PEM file with the private key and the certificate chain) or \
                     ssl.keystore.key and ssl.keystore.certificate.chain"
                ),
            ));
            (None, None)
        }
    };
    let truststore = match (
        s.get("ssl.truststore.location"),
        s.get("ssl.truststore.certificates"),
    ) {
        (Some((lk, _)), Some((ck, _))) => {
            errors.push(cerr(&ck, format!("give either {lk} or {ck}, not both")));
            None
        }
        (Some((_, l)), None) => Some(PemSource::File(l.trim().to_string())),
        (None, Some((_, c))) => Some(PemSource::Inline(c.to_string())),
        (None, None) => None,
    };
    let client_auth = match s.get("ssl.client.auth") {
        None => ClientAuth::None,
        Some((k, v)) => match v.trim().to_ascii_lowercase().as_str() {
            "none" => ClientAuth::None,
            "requested" => ClientAuth::Requested,
            "required" => ClientAuth::Required,
            _ => {
                errors.push(cerr(
                    &k,
                    format!("`{v}`: expected none, requested or required"),
                ));
                ClientAuth::None
            }
        },
    };
    if client_auth != ClientAuth::None && truststore.is_none() {
        errors.push(cerr(
            "ssl.truststore.location",
            format!(
                "listener {listener} has ssl.client.auth={} and no trust store to check client \
                 certificates against (ssl.truststore.location or ssl.truststore.certificates)",
                if client_auth == ClientAuth::Required {
                    "required"
                } else {
                    "requested"
                }
            ),
        ));
    }
    let protocols = match s.get("ssl.enabled.protocols") {
        None => vec!["TLSv1.2".to_string(), "TLSv1.3".to_string()],
        Some((k, v)) => {
            let list: Vec<String> = v
                .split(',')
                .map(|p| p.trim().to_string())
                .filter(|p| !p.is_empty())
                .collect();
            for p in &list {
                if p != "TLSv1.2" && p != "TLSv1.3" {
                    errors.push(cerr(
                        &k,
                        format!("`{p}`: groupcoord serves TLSv1.2 and TLSv1.3 only"),
                    ));
                }
            }
            if list.is_empty() {
                errors.push(cerr(&k, "no protocol enabled"));
            }
            list
        }
    };
    let key_password = s.get("ssl.key.password").map(|(_, v)| v.to_string());
    match (key, errors.is_empty()) {
        (Some(key), true) => Ok(TlsSettings {
            key,
            chain,
            key_password,
            truststore,
            client_auth,
            protocols,
        }),
        _ => Err(errors),
    }
}

fn sasl_settings(s: &Scoped<'_>, listener: &str) -> Result<SaslSettings, Vec<ConfigError>> {
    let mut errors = Vec::new();
    let mut mechanisms = Vec::new();
    match s.get("sasl.enabled.mechanisms") {
        None => errors.push(cerr(
            "sasl.enabled.mechanisms",
            format!(
                "listener {listener} uses SASL and Kafka's default mechanism GSSAPI (Kerberos) is \
                 not supported: set sasl.enabled.mechanisms to PLAIN, SCRAM-SHA-256 and/or SCRAM-SHA-512"
            ),
        )),
        Some((k, v)) => {
            for name in v.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                match Mechanism::from_name(name) {
                    Some(m) if !mechanisms.contains(&m) => mechanisms.push(m),
                    Some(_) => {}
                    None => errors.push(cerr(
                        &k,
                        format!(
                            "mechanism `{name}` is not supported (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)"
                        ),
                    )),
                }
            }
            if mechanisms.is_empty() && errors.is_empty() {
                errors.push(cerr(&k, format!("no SASL mechanism for listener {listener}")));
            }
        }
    }
    let mut plain_users = BTreeMap::new();
    for &m in &mechanisms {
        let scoped_jaas = format!(
            "{}{}.sasl.jaas.config",
            s.prefix,
            m.name().to_ascii_lowercase()
        );
        let jaas = match s.entries.get(&scoped_jaas) {
            Some(v) => Some((scoped_jaas.clone(), v.as_str())),
            None => s.get("sasl.jaas.config"),
        };
        let Some((k, text)) = jaas else {
            if m == Mechanism::Plain {
                errors.push(cerr(
                    &scoped_jaas,
                    format!(
                        "listener {listener} enables PLAIN and has no JAAS line with its users \
                         (org.apache.kafka.common.security.plain.PlainLoginModule required \
                         user_<name>=\"<password>\";)"
                    ),
                ));
            }
            continue;
        };
        let parsed = match parse_jaas(text) {
            Ok(p) => p,
            Err(e) => {
                errors.push(cerr(&k, e));
                continue;
            }
        };
        let module = login_module(m);
        let Some(entry) = parsed.iter().find(|e| e.module == module) else {
            // The generic sasl.jaas.config may hold another mechanism's module.
            if m == Mechanism::Plain {
                errors.push(cerr(&k, format!("no {module} entry for PLAIN")));
            }
            continue;
        };
        if m == Mechanism::Plain {
            for (opt, value) in &entry.options {
                if let Some(user) = opt.strip_prefix("user_") {
                    plain_users.insert(user.to_string(), value.clone());
                }
            }
            if plain_users.is_empty() {
                errors.push(cerr(
                    &k,
                    "the PLAIN login module names no user (user_<name>=\"<password>\")",
                ));
            }
        }
    }
    if errors.is_empty() {
        Ok(SaslSettings {
            mechanisms,
            plain_users,
        })
    } else {
        Err(errors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn endpoints_parse_as_kafka_writes_them() {
        let e = parse_endpoints(
            "listeners",
            "PLAINTEXT://:9092, ssl://localhost:9093,SASL_SSL://[::1]:9094,X://10.0.0.1:0",
        )
        .unwrap();
        assert_eq!(e[0].host, "");
        assert_eq!(e[1].name, "SSL");
        assert_eq!(e[1].host, "localhost");
        assert_eq!(e[2].host, "::1");
        assert_eq!(e[2].to_string(), "SASL_SSL://[::1]:9094");
        assert_eq!(e[3].port, 0);
        for bad in [
            "PLAINTEXT:9092",
            "PLAINTEXT://host",
            "PLAINTEXT://host:99999",
            "://h:1",
            "A://h:1,A://h:2",
            "A://::1:9092",
        ] {
            assert!(parse_endpoints("listeners", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn several_listeners_with_custom_names() {
        let c = build(&props(&[
            (
                "listeners",
                "INTERNAL://127.0.0.1:0,EXTERNAL://0.0.0.0:0,CONTROLLER://:9093",
            ),
            (
                "advertised.listeners",
                "INTERNAL://localhost:0,EXTERNAL://broker.example:19092",
            ),
            (
                "listener.security.protocol.map",
                "INTERNAL:PLAINTEXT,EXTERNAL:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
            ),
            ("controller.listener.names", "CONTROLLER"),
            (
                "listener.name.external.sasl.enabled.mechanisms",
                "SCRAM-SHA-512",
            ),
        ]))
        .unwrap();
        assert_eq!(
            c.listeners.len(),
            2,
            "the controller listener is not served"
        );
        assert_eq!(c.listeners[0].protocol, SecurityProtocol::Plaintext);
        assert_eq!(c.listeners[1].protocol, SecurityProtocol::SaslPlaintext);
        assert_eq!(c.listeners[1].advertised.host, "broker.example");
        let sasl = c.listeners[1].sasl.as_ref().unwrap();
        assert_eq!(sasl.mechanisms, vec![Mechanism::ScramSha512]);
    }

    #[test]
    fn wildcard_bind_needs_an_advertised_address() {
        let e = build(&props(&[("listeners", "PLAINTEXT://0.0.0.0:9092")])).unwrap_err();
        assert!(e[0].message.contains("nonroutable"), "{e:?}");
        let e = build(&props(&[
            ("listeners", "PLAINTEXT://:9092"),
            ("advertised.listeners", "PLAINTEXT://0.0.0.0:9092"),
        ]))
        .unwrap_err();
        assert!(e[0].message.contains("nonroutable"), "{e:?}");
        // An empty host binds every interface and advertises the machine's name.
        assert!(build(&props(&[("listeners", "PLAINTEXT://:9092")])).is_ok());
    }

    #[test]
    fn every_problem_is_reported_at_once() {
        let e = build(&props(&[
            (
                "listeners",
                "PLAINTEXT://:1,SSL://:2,SASL_SSL://:3,ODD://:4",
            ),
            ("ssl.client.auth", "sometimes"),
            ("num.partitions", "0"),
        ]))
        .unwrap_err();
        let text = format!("{e:?}");
        for needle in [
            "num.partitions",
            "ODD",
            "ssl.client.auth",
            "ssl.keystore.location",
            "GSSAPI",
        ] {
            assert!(text.contains(needle), "{needle} missing from {text}");
        }
    }

    #[test]
    fn jaas_lines_parse_like_kafka() {
        let j = parse_jaas(
            r#"org.apache.kafka.common.security.plain.PlainLoginModule required
               username="admin" password="admin-secret" user_admin="admin-secret"
               user_alice="a \"quoted\" pass;word";"#,
        )
        .unwrap();
        assert_eq!(j.len(), 1);
        assert_eq!(j[0].flag, "required");
        assert_eq!(j[0].options["user_alice"], "a \"quoted\" pass;word");
        assert_eq!(j[0].options["user_admin"], "admin-secret");
        assert!(parse_jaas("Module required a=\"b\"").is_err(), "no ;");
        assert!(parse_jaas("Module maybe;").is_err());
        assert!(parse_jaas("Module required a;").is_err());
        assert!(parse_jaas("").is_err());
    }

    #[test]
    fn plain_users_come_from_the_listener_jaas_line() {
        let c = build(&props(&[
            ("listeners", "SASL_PLAINTEXT://127.0.0.1:0"),
            ("sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-256"),
            (
                "listener.name.sasl_plaintext.plain.sasl.jaas.config",
                r#"org.apache.kafka.common.security.plain.PlainLoginModule required user_bob="pw";"#,
            ),
        ]))
        .unwrap();
        let s = c.listeners[0].sasl.as_ref().unwrap();
        assert_eq!(s.plain_users["bob"], "pw");
        assert_eq!(s.mechanisms, vec![Mechanism::Plain, Mechanism::ScramSha256]);
        let e = build(&props(&[
            ("listeners", "SASL_PLAINTEXT://127.0.0.1:0"),
            ("sasl.enabled.mechanisms", "PLAIN,GSSAPI"),
        ]))
        .unwrap_err();
        assert_eq!(e.len(), 2, "{e:?}");
    }

    #[test]
    fn tls_settings_take_the_listener_form_first() {
        let c = build(&props(&[
            ("listeners", "SSL://127.0.0.1:0"),
            ("ssl.keystore.type", "PEM"),
            ("ssl.keystore.location", "/global.pem"),
            ("listener.name.ssl.ssl.keystore.location", "/ssl.pem"),
            ("ssl.truststore.certificates", "-----BEGIN CERTIFICATE-----"),
            ("ssl.client.auth", "required"),
        ]))
        .unwrap();
        let t = c.listeners[0].tls.as_ref().unwrap();
        assert_eq!(t.key, PemSource::File("/ssl.pem".into()));
        assert_eq!(t.client_auth, ClientAuth::Required);
        let e = build(&props(&[
            ("listeners", "SSL://127.0.0.1:0"),
            ("ssl.keystore.type", "JKS"),
            ("ssl.keystore.location", "/k.jks"),
        ]))
        .unwrap_err();
        assert!(e[0].message.contains("PEM"), "{e:?}");
    }

    #[test]
    fn kafka_keys_are_known_and_listener_forms_accepted() {
        assert!(is_kafka_key("log.retention.hours"));
        assert!(is_kafka_key("process.roles"));
        assert!(!is_kafka_key("log.retention.hour"));
        assert!(accepts("listener.name.external.ssl.keystore.location"));
        assert!(accepts(
            "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config"
        ));
        assert!(!accepts("listener.name.x.ssl.keystore.locaton"));
    }
}
