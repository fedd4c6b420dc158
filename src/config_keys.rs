//! Kafka broker config keys -> [`CoordinatorConfig`] (spec §7), plus the few socket-server keys
//! the native server honours. Pure: no I/O; the caller reads the file.
//!
//! Input is a Kafka-style properties text ([`parse_properties`]) and/or `key=value` overrides; the
//! result is validated key by key (type, bounds) and then across keys (min <= value <= max, ...)
//! exactly as `GroupCoordinatorConfig` does. Every error names the offending key.
//!
//! Group-level overrides (Kafka's `GroupConfig`, normally set with IncrementalAlterConfigs on the
//! GROUP resource) are given as `group.<groupId>.<groupKey>`, e.g.
//! `group.my-app.streams.num.standby.replicas=1`. The group key is matched as a suffix, so a group
//! id may contain dots. Overrides are validated like Kafka validates an alter (out-of-range values
//! are rejected; at evaluation they are clamped to the broker bounds by `CoordinatorConfig::for_group`).

use crate::util::map::BTreeMap;
use std::fmt;

use crate::assignor::BUILTIN_ASSIGNORS;
use crate::config::{CoordinatorConfig, GroupConfig};

/// A configuration problem; `key` names the offending key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The offending key.
    pub key: String,
    /// What is wrong with it.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid config `{}`: {}", self.key, self.message)
    }
}

impl std::error::Error for ConfigError {}

fn err(key: &str, message: impl Into<String>) -> ConfigError {
    ConfigError {
        key: key.to_string(),
        message: message.into(),
    }
}

/// Socket-server keys of a Kafka broker that the native server honours.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerKeys {
    /// `socket.request.max.bytes` (default 104857600).
    pub socket_request_max_bytes: i32,
    /// `connections.max.idle.ms` (default 600000).
    pub connections_max_idle_ms: i64,
    /// `max.connections`. Kafka's default is 2147483647; groupcoord's is [`DEFAULT_MAX_CONNECTIONS`]
    /// so that a flood of clients meets a refusal before the process runs out of file
    /// descriptors or memory.
    pub max_connections: i32,
    /// `max.connections.per.ip` (Kafka's default, 2147483647: only `max.connections` applies).
    pub max_connections_per_ip: i32,
    /// `queued.max.request.bytes`: request bytes all connections together may hold (received
    /// and not yet answered) before the server stops reading sockets. Kafka's default is -1
    /// (unbounded); groupcoord's is [`DEFAULT_QUEUED_MAX_REQUEST_BYTES`]. `<= 0` = unbounded; a
    /// positive value must be at least `socket.request.max.bytes`, as in Kafka.
    pub queued_max_request_bytes: i64,
    /// `authorizer.class.name`, `super.users`, `allow.everyone.if.no.acl.found`.
    pub authorizer: AuthorizerKeys,
    /// `auto.create.topics.enable`, `num.partitions`.
    pub topic_defaults: TopicDefaults,
    /// `group.coordinator.threads`: owner threads the groups are sharded over (by coordinator
    /// partition). groupcoord's default is 1 (one owner, one log: see docs/sharding.md);
    /// Kafka's is 4.
    pub coordinator_threads: usize,
    /// `groupcoord.migrate.owners` (groupcoord's own, default false): start on a data directory
    /// written with another owner count by moving its groups to `coordinator_threads` owners
    /// (docs/sharding.md, "Changing the owner count"); false refuses such a directory.
    pub migrate_owners: bool,
}

/// The most owner threads: one per coordinator partition (Kafka's default
/// `offsets.topic.num.partitions`).
pub const MAX_COORDINATOR_THREADS: i32 = 50;

/// groupcoord's default `max.connections`.
pub const DEFAULT_MAX_CONNECTIONS: i32 = 4096;

/// groupcoord's default `queued.max.request.bytes` (256 MiB).
pub const DEFAULT_QUEUED_MAX_REQUEST_BYTES: i64 = 256 * 1024 * 1024;

impl Default for ServerKeys {
    fn default() -> Self {
        ServerKeys {
            socket_request_max_bytes: 100 * 1024 * 1024,
            connections_max_idle_ms: 600_000,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_connections_per_ip: i32::MAX,
            queued_max_request_bytes: DEFAULT_QUEUED_MAX_REQUEST_BYTES,
            authorizer: AuthorizerKeys::default(),
            topic_defaults: TopicDefaults::default(),
            coordinator_threads: 1,
            migrate_owners: false,
        }
    }
}

// ---- Authorization and topic defaults (Kafka's keys) ----

/// The `authorizer.class.name` values that turn Kafka's ACL authorizer on.
pub const AUTHORIZER_CLASSES: &[&str] = &[
    "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "kafka.security.authorizer.AclAuthorizer",
];

/// Authorizer keys of a Kafka broker.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AuthorizerKeys {
    /// `authorizer.class.name`: empty (Kafka's default: no authorizer) or one of
    /// [`AUTHORIZER_CLASSES`].
    pub class_name: String,
    /// `super.users`: principals allowed everything (`User:admin;User:bob`).
    pub super_users: Vec<String>,
    /// `allow.everyone.if.no.acl.found` (default false): a resource without any ACL is open.
    pub allow_everyone_if_no_acl_found: bool,
}

impl AuthorizerKeys {
    /// Whether requests are authorized at all.
    pub fn enabled(&self) -> bool {
        !self.class_name.is_empty()
    }
}

/// Topic creation defaults of a Kafka broker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicDefaults {
    /// `auto.create.topics.enable` (Kafka's default true): Metadata (when the request allows
    /// it) and Produce create unknown topics.
    pub auto_create_topics_enable: bool,
    /// `num.partitions` (default 1): partitions of auto-created topics and of CreateTopics
    /// requests that leave the count to the broker.
    pub num_partitions: i32,
}

impl Default for TopicDefaults {
    fn default() -> Self {
        TopicDefaults {
            auto_create_topics_enable: true,
            num_partitions: 1,
        }
    }
}

/// Authorizer and topic-default keys.
pub const AUTHORIZER_KEYS: &[&str] = &[
    "authorizer.class.name",
    "super.users",
    "allow.everyone.if.no.acl.found",
    "auto.create.topics.enable",
    "num.partitions",
];

/// Apply one of [`AUTHORIZER_KEYS`]; `None` when `k` is not one of them.
fn apply_authorizer_key(s: &mut ServerKeys, k: &str, v: &str) -> Option<Result<(), ConfigError>> {
    let r = match k {
        "authorizer.class.name" => {
            let name = v.trim();
            if name.is_empty() || AUTHORIZER_CLASSES.contains(&name) {
                s.authorizer.class_name = name.to_string();
                Ok(())
            } else {
                Err(err(
                    k,
                    format!(
                        "unknown authorizer `{name}` (supported: {}; custom classes cannot be loaded)",
                        AUTHORIZER_CLASSES.join(", ")
                    ),
                ))
            }
        }
        "super.users" => {
            s.authorizer.super_users = v
                .split(';')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(str::to_string)
                .collect();
            match s.authorizer.super_users.iter().find(|p| !p.contains(':')) {
                Some(p) => Err(err(k, format!("`{p}` is not a principal (Type:name)"))),
                None => Ok(()),
            }
        }
        "allow.everyone.if.no.acl.found" => {
            parse_bool(k, v).map(|b| s.authorizer.allow_everyone_if_no_acl_found = b)
        }
        "auto.create.topics.enable" => {
            parse_bool(k, v).map(|b| s.topic_defaults.auto_create_topics_enable = b)
        }
        "num.partitions" => parse_int(k, v)
            .and_then(|n| at_least(k, n, 1))
            .map(|n| s.topic_defaults.num_partitions = n),
        _ => return None,
    };
    Some(r)
}

/// Everything a properties file configures.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ParsedConfig {
    /// The coordinator's configuration.
    pub coordinator: CoordinatorConfig,
    /// The socket server's keys.
    pub server: ServerKeys,
    /// Listeners, TLS, SASL, `log.dirs`, `num.partitions` and the Kafka keys that do not apply
    /// ([`crate::security_config`]); filled by [`build_all`].
    pub listeners: crate::security_config::ListenersConfig,
}

/// The broker keys of spec §7 (plus `group.coordinator.rebalance.protocols` and
/// `offset.metadata.max.bytes`).
pub const COORDINATOR_KEYS: &[&str] = &[
    "group.streams.session.timeout.ms",
    "group.streams.min.session.timeout.ms",
    "group.streams.max.session.timeout.ms",
    "group.streams.heartbeat.interval.ms",
    "group.streams.min.heartbeat.interval.ms",
    "group.streams.max.heartbeat.interval.ms",
    "group.streams.max.size",
    "group.streams.num.standby.replicas",
    "group.streams.max.standby.replicas",
    "group.streams.initial.rebalance.delay.ms",
    "group.streams.assignment.interval.ms",
    "group.streams.min.assignment.interval.ms",
    "group.streams.max.assignment.interval.ms",
    "group.streams.assignors",
    "group.streams.rack.aware.assignment.tags",
    "group.streams.assignor.offload.enable",
    "group.streams.task.offset.interval.ms",
    "group.streams.min.task.offset.interval.ms",
    "group.streams.num.warmup.replicas",
    "group.streams.max.warmup.replicas",
    "group.streams.acceptable.recovery.lag",
    "group.streams.topology.description.plugin.class",
    "group.coordinator.rebalance.protocols",
    "offset.metadata.max.bytes",
    "group.min.session.timeout.ms",
    "group.max.session.timeout.ms",
    "group.initial.rebalance.delay.ms",
    "group.max.size",
    "group.consumer.session.timeout.ms",
    "group.consumer.min.session.timeout.ms",
    "group.consumer.max.session.timeout.ms",
    "group.consumer.heartbeat.interval.ms",
    "group.consumer.min.heartbeat.interval.ms",
    "group.consumer.max.heartbeat.interval.ms",
    "group.consumer.max.size",
    "group.consumer.assignors",
    "group.consumer.assignment.interval.ms",
    "group.consumer.min.assignment.interval.ms",
    "group.consumer.max.assignment.interval.ms",
    "group.consumer.migration.policy",
    "group.consumer.regex.refresh.interval.ms",
    "group.consumer.assignor.offload.enable",
];

/// Socket-server keys.
pub const SERVER_KEYS: &[&str] = &[
    "socket.request.max.bytes",
    "connections.max.idle.ms",
    "max.connections",
    "max.connections.per.ip",
    "queued.max.request.bytes",
    "group.coordinator.threads",
    "groupcoord.migrate.owners",
];

/// Group-level override keys (`GroupConfig`).
pub const GROUP_KEYS: &[&str] = &[
    "streams.session.timeout.ms",
    "streams.heartbeat.interval.ms",
    "streams.num.standby.replicas",
    "streams.initial.rebalance.delay.ms",
    "streams.assignment.interval.ms",
    "streams.assignor.name",
    "streams.rack.aware.assignment.tags",
    "streams.assignor.offload.enable",
    "streams.task.offset.interval.ms",
    "streams.num.warmup.replicas",
    "streams.acceptable.recovery.lag",
    "consumer.session.timeout.ms",
    "consumer.heartbeat.interval.ms",
    "consumer.assignment.interval.ms",
    "consumer.assignor.offload.enable",
];

/// Parse a Java properties text: `#`/`!` comments, `key=value`, `key: value` or `key value`,
/// surrounding whitespace trimmed, trailing `\` continues a line. Later keys win.
pub fn parse_properties(text: &str) -> Result<BTreeMap<String, String>, ConfigError> {
    let mut out = BTreeMap::new();
    let mut logical = String::new();
    for (lineno, raw) in text.lines().enumerate() {
        let line = raw.trim_start();
        if logical.is_empty() && (line.is_empty() || line.starts_with('#') || line.starts_with('!'))
        {
            continue;
        }
        // Line continuation: an odd number of trailing backslashes.
        let trailing = line.chars().rev().take_while(|c| *c == '\\').count();
        if trailing % 2 == 1 {
            logical.push_str(&line[..line.len() - 1]);
            continue;
        }
        logical.push_str(line);
        let entry = std::mem::take(&mut logical);
        let entry = entry.trim();
        let sep = entry
            .find(['=', ':'])
            .or_else(|| entry.find(char::is_whitespace));
        let (k, v) = match sep {
            Some(i) => (entry[..i].trim(), entry[i + 1..].trim()),
            None => (entry, ""),
        };
        if k.is_empty() {
            return Err(err(
                "<properties>",
                format!("line {}: missing key in `{}`", lineno + 1, raw.trim()),
            ));
        }
        out.insert(k.to_string(), v.to_string());
    }
    Ok(out)
}

/// Parse one `--set key=value` argument.
pub fn parse_assignment(s: &str) -> Result<(String, String), ConfigError> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.trim().to_string())),
        _ => Err(err(s, "expected key=value")),
    }
}

fn parse_int(key: &str, v: &str) -> Result<i32, ConfigError> {
    v.trim()
        .parse::<i32>()
        .map_err(|_| err(key, format!("expected an int, got `{v}`")))
}

fn parse_long(key: &str, v: &str) -> Result<i64, ConfigError> {
    v.trim()
        .parse::<i64>()
        .map_err(|_| err(key, format!("expected a long, got `{v}`")))
}

fn parse_bool(key: &str, v: &str) -> Result<bool, ConfigError> {
    match v.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(err(key, format!("expected a boolean, got `{v}`"))),
    }
}

fn parse_list(v: &str) -> Vec<String> {
    if v.trim().is_empty() {
        return Vec::new();
    }
    v.split(',').map(|s| s.trim().to_string()).collect()
}

fn at_least<T: PartialOrd + fmt::Display + Copy>(
    key: &str,
    v: T,
    min: T,
) -> Result<T, ConfigError> {
    if v < min {
        Err(err(key, format!("value {v} must be at least {min}")))
    } else {
        Ok(v)
    }
}

fn unique_non_empty(key: &str, list: &[String]) -> Result<(), ConfigError> {
    let mut seen = crate::util::map::BTreeSet::new();
    for e in list {
        if e.is_empty() {
            return Err(err(key, "empty entries are not allowed"));
        }
        if !seen.insert(e) {
            return Err(err(key, format!("duplicate entry `{e}`")));
        }
    }
    Ok(())
}

/// Built-in assignor name for a configured name or Kafka class name.
fn assignor_name(key: &str, name: &str) -> Result<String, ConfigError> {
    if BUILTIN_ASSIGNORS.contains(&name) {
        return Ok(name.to_string());
    }
    match name {
        "org.apache.kafka.coordinator.group.streams.assignor.StickyTaskAssignor" => {
            Ok("sticky".into())
        }
        "org.apache.kafka.coordinator.group.streams.assignor.MockAssignor" => Ok("mock".into()),
        _ => Err(err(
            key,
            format!(
                "unknown assignor `{name}` (built-ins: {}; custom classes cannot be loaded)",
                BUILTIN_ASSIGNORS.join(", ")
            ),
        )),
    }
}

/// Split `group.<groupId>.<groupKey>` into (groupId, groupKey).
fn split_group_key(key: &str) -> Option<(&str, &'static str)> {
    let rest = key.strip_prefix("group.")?;
    for gk in GROUP_KEYS {
        if let Some(id) = rest.strip_suffix(gk).and_then(|p| p.strip_suffix('.'))
            && !id.is_empty()
        {
            return Some((id, gk));
        }
    }
    None
}

/// Build and validate the whole configuration from key/value pairs (file first, then `--set`
/// overrides already merged by the caller). Unknown keys are errors.
pub fn build(entries: &BTreeMap<String, String>) -> Result<ParsedConfig, ConfigError> {
    let mut c = CoordinatorConfig::default();
    let mut s = ServerKeys::default();
    let mut groups: BTreeMap<String, GroupConfig> = BTreeMap::new();
    for (key, v) in entries {
        let k = key.as_str();
        match k {
            "group.min.session.timeout.ms" => c.classic.min_session_timeout_ms = parse_int(k, v)?,
            "group.max.session.timeout.ms" => c.classic.max_session_timeout_ms = parse_int(k, v)?,
            "group.initial.rebalance.delay.ms" => {
                c.classic.initial_rebalance_delay_ms = parse_int(k, v)?
            }
            "group.max.size" => c.classic.max_size = at_least(k, parse_int(k, v)?, 1)?,
            "group.streams.session.timeout.ms" => {
                c.session_timeout_ms = at_least(k, parse_int(k, v)?, 1)?
            }
            "group.streams.min.session.timeout.ms" => {
                c.min_session_timeout_ms = at_least(k, parse_int(k, v)?, 1)?
            }
            "group.streams.max.session.timeout.ms" => {
                c.max_session_timeout_ms = at_least(k, parse_int(k, v)?, 1)?
            }
            "group.streams.heartbeat.interval.ms" => {
                c.heartbeat_interval_ms = at_least(k, parse_int(k, v)?, 1)?
            }
            "group.streams.min.heartbeat.interval.ms" => {
                c.min_heartbeat_interval_ms = at_least(k, parse_int(k, v)?, 1)?
            }
            "group.streams.max.heartbeat.interval.ms" => {
                c.max_heartbeat_interval_ms = at_least(k, parse_int(k, v)?, 1)?
            }
            "group.streams.max.size" => c.max_size = at_least(k, parse_int(k, v)?, 1)?,
            "group.streams.num.standby.replicas" => {
                c.num_standby_replicas = at_least(k, parse_int(k, v)?, 0)?
            }
            "group.streams.max.standby.replicas" => {
                c.max_standby_replicas = at_least(k, parse_int(k, v)?, 0)?
            }
            "group.streams.initial.rebalance.delay.ms" => {
                c.initial_rebalance_delay_ms = at_least(k, parse_int(k, v)?, 0)?
            }
            "group.streams.assignment.interval.ms" => {
                c.assignment_interval_ms = at_least(k, parse_int(k, v)?, 0)?
            }
            "group.streams.min.assignment.interval.ms" => {
                c.min_assignment_interval_ms = at_least(k, parse_int(k, v)?, 0)?
            }
            "group.streams.max.assignment.interval.ms" => {
                c.max_assignment_interval_ms = at_least(k, parse_int(k, v)?, 0)?
            }
            "group.consumer.session.timeout.ms" => {
                c.consumer.session_timeout_ms = at_least(k, parse_int(k, v)?, 1)?
            }
            "group.consumer.min.session.timeout.ms" => {
                c.consumer.min_session_timeout_ms = at_least(k, parse_int(k, v)?, 1)?
            }
            "group.consumer.max.session.timeout.ms" => {
                c.consumer.max_session_timeout_ms = at_least(k, parse_int(k, v)?, 1)?
            }
            "group.consumer.heartbeat.interval.ms" => {
                c.consumer.heartbeat_interval_ms = at_least(k, parse_int(k, v)?, 1)?
            }
            "group.consumer.min.heartbeat.interval.ms" => {
                c.consumer.min_heartbeat_interval_ms = at_least(k, parse_int(k, v)?, 1)?
            }
            "group.consumer.max.heartbeat.interval.ms" => {
                c.consumer.max_heartbeat_interval_ms = at_least(k, parse_int(k, v)?, 1)?
            }
            "group.consumer.max.size" => c.consumer.max_size = at_least(k, parse_int(k, v)?, 1)?,
            "group.consumer.assignment.interval.ms" => {
                c.consumer.assignment_interval_ms = at_least(k, parse_int(k, v)?, 0)?
            }
            "group.consumer.min.assignment.interval.ms" => {
                c.consumer.min_assignment_interval_ms = at_least(k, parse_int(k, v)?, 0)?
            }
            "group.consumer.max.assignment.interval.ms" => {
                c.consumer.max_assignment_interval_ms = at_least(k, parse_int(k, v)?, 0)?
            }
            "group.consumer.regex.refresh.interval.ms" => {
                c.consumer.regex_refresh_interval_ms = at_least(k, parse_int(k, v)?, 1)?
            }
            // groupcoord computes a target assignment inside the heartbeat that needs it, which
            // is Kafka's behaviour with offloading disabled; enabling it is refused.
            "group.consumer.assignor.offload.enable" => {
                if !v.trim().eq_ignore_ascii_case("false") {
                    return Err(err(
                        k,
                        "assignor offloading is not supported: only `false` is accepted",
                    ));
                }
            }
            "group.consumer.assignors" => {
                let list = parse_list(v);
                unique_non_empty(k, &list)?;
                for name in &list {
                    if crate::assignor::consumer::builtin_assignor(name).is_none() {
                        return Err(err(
                            k,
                            format!(
                                "unknown consumer group assignor `{name}` (groupcoord has \
                                 uniform and range)"
                            ),
                        ));
                    }
                }
                if list.is_empty() {
                    return Err(err(k, "at least one assignor is required"));
                }
                c.consumer.assignors = list;
            }
            "group.consumer.migration.policy" => {
                c.consumer.migration_policy =
                    crate::config::MigrationPolicy::parse(v).ok_or_else(|| {
                        err(
                            k,
                            "expected one of bidirectional, upgrade, downgrade, disabled",
                        )
                    })?;
            }
            "group.streams.assignors" => {
                let list = parse_list(v);
                if list.is_empty() {
                    return Err(err(k, "at least one assignor is required"));
                }
                unique_non_empty(k, &list)?;
                let names = list
                    .iter()
                    .map(|n| assignor_name(k, n))
                    .collect::<Result<Vec<_>, _>>()?;
                unique_non_empty(k, &names)?;
                c.assignors = names;
            }
            "group.streams.rack.aware.assignment.tags" => {
                let list = parse_list(v);
                unique_non_empty(k, &list)?;
                c.rack_aware_assignment_tags = list;
            }
            "group.streams.assignor.offload.enable" => {
                c.assignor_offload_enable = parse_bool(k, v)?
            }
            "group.streams.task.offset.interval.ms" => {
                c.task_offset_interval_ms = at_least(k, parse_int(k, v)?, 1)?
            }
            "group.streams.min.task.offset.interval.ms" => {
                c.min_task_offset_interval_ms = at_least(k, parse_int(k, v)?, 1)?
            }
            "group.streams.num.warmup.replicas" => {
                c.num_warmup_replicas = at_least(k, parse_int(k, v)?, 0)?
            }
            "group.streams.max.warmup.replicas" => {
                c.max_warmup_replicas = at_least(k, parse_int(k, v)?, 0)?
            }
            "group.streams.acceptable.recovery.lag" => {
                c.acceptable_recovery_lag = at_least(k, parse_long(k, v)?, 0)?
            }
            "group.streams.topology.description.plugin.class" => {
                if !v.trim().is_empty() && v.trim() != "null" {
                    return Err(err(
                        k,
                        "topology description plugins (KIP-1331) are not supported by groupcoord",
                    ));
                }
            }
            "group.coordinator.rebalance.protocols" => {
                let list = parse_list(v);
                unique_non_empty(k, &list)?;
                for p in &list {
                    if !["classic", "consumer", "streams", "share"].contains(&p.as_str()) {
                        return Err(err(k, format!("unknown rebalance protocol `{p}`")));
                    }
                }
                if !list.iter().any(|p| p == "classic") {
                    return Err(err(k, "the classic rebalance protocol must be enabled"));
                }
                c.streams_enabled = list.iter().any(|p| p == "streams");
                c.consumer.enabled = list.iter().any(|p| p == "consumer");
            }
            // Kafka defines it with no validator: any int (a negative one refuses all metadata).
            "offset.metadata.max.bytes" => c.offset_metadata_max_bytes = parse_int(k, v)?,
            "socket.request.max.bytes" => {
                s.socket_request_max_bytes = at_least(k, parse_int(k, v)?, 1)?
            }
            "connections.max.idle.ms" => s.connections_max_idle_ms = parse_long(k, v)?,
            "max.connections" => s.max_connections = at_least(k, parse_int(k, v)?, 0)?,
            "max.connections.per.ip" => {
                s.max_connections_per_ip = at_least(k, parse_int(k, v)?, 0)?
            }
            "queued.max.request.bytes" => s.queued_max_request_bytes = parse_long(k, v)?,
            "group.coordinator.threads" => {
                let n = at_least(k, parse_int(k, v)?, 1)?;
                if n > MAX_COORDINATOR_THREADS {
                    return Err(err(
                        k,
                        format!(
                            "must be at most {MAX_COORDINATOR_THREADS} (one owner per coordinator partition)"
                        ),
                    ));
                }
                s.coordinator_threads = n as usize;
            }
            "groupcoord.migrate.owners" => s.migrate_owners = parse_bool(k, v)?,
            _ if k.starts_with("groupcoord.max.") => {
                let n = parse_int(k, v)?;
                match c.limits.set(k, n) {
                    Some(r) => r.map_err(|m| err(k, m))?,
                    None => return Err(err(k, "unknown config key")),
                }
            }
            _ if AUTHORIZER_KEYS.contains(&k) => {
                if let Some(r) = apply_authorizer_key(&mut s, k, v) {
                    r?;
                }
            }
            _ => {
                let Some((gid, gk)) = split_group_key(k) else {
                    // Listeners, TLS, SASL and Kafka keys that do not apply: security_config.
                    if crate::security_config::accepts(k) {
                        continue;
                    }
                    return Err(err(k, "unknown config key"));
                };
                let g = groups.entry(gid.to_string()).or_default();
                apply_group_key(g, k, gk, v)?;
            }
        }
    }
    validate(&c)?;
    // Kafka's KafkaConfig rule: a request as large as allowed must fit in the queue.
    if s.queued_max_request_bytes > 0
        && s.queued_max_request_bytes < i64::from(s.socket_request_max_bytes)
    {
        return Err(err(
            "queued.max.request.bytes",
            format!(
                "value {} must be larger than socket.request.max.bytes ({})",
                s.queued_max_request_bytes, s.socket_request_max_bytes
            ),
        ));
    }
    for (gid, g) in &groups {
        validate_group(&c, gid, g)?;
    }
    c.group_overrides = groups;
    Ok(ParsedConfig {
        coordinator: c,
        server: s,
        listeners: Default::default(),
    })
}

// ---- Listeners and security (issue 16, authentication half) ---------------------------------

/// [`build`] plus the listener and security keys, reporting every bad key at once (start-up
/// names all of them, not one per start). A key [`build`] refuses is reported and left out
/// while the others are checked again, so each invalid or misspelled key appears once.
pub fn build_all(entries: &BTreeMap<String, String>) -> Result<ParsedConfig, Vec<ConfigError>> {
    let mut errors = Vec::new();
    let mut left = entries.clone();
    let parsed = loop {
        match build(&left) {
            Ok(p) => break Some(p),
            Err(e) => {
                let known = left.remove(&e.key).is_some();
                errors.push(e);
                if !known {
                    // A cross-key rule on a key that was not given: nothing left to drop.
                    break None;
                }
            }
        }
    };
    let listeners = match crate::security_config::build(entries) {
        Ok(l) => Some(l),
        Err(mut e) => {
            errors.append(&mut e);
            None
        }
    };
    match (parsed, listeners) {
        (Some(mut p), Some(l)) if errors.is_empty() => {
            p.listeners = l;
            Ok(p)
        }
        _ => Err(errors),
    }
}

/// Apply one group-level key (`gk`, named `k` in errors) to an override set.
pub(crate) fn apply_group_key(
    g: &mut GroupConfig,
    k: &str,
    gk: &str,
    v: &str,
) -> Result<(), ConfigError> {
    match gk {
        "streams.session.timeout.ms" => g.session_timeout_ms = Some(parse_int(k, v)?),
        "streams.heartbeat.interval.ms" => g.heartbeat_interval_ms = Some(parse_int(k, v)?),
        "streams.num.standby.replicas" => g.num_standby_replicas = Some(parse_int(k, v)?),
        "streams.initial.rebalance.delay.ms" => {
            g.initial_rebalance_delay_ms = Some(at_least(k, parse_int(k, v)?, 0)?)
        }
        "streams.assignment.interval.ms" => g.assignment_interval_ms = Some(parse_int(k, v)?),
        "streams.assignor.name" => g.assignor_name = Some(assignor_name(k, v.trim())?),
        "streams.rack.aware.assignment.tags" => {
            let list = parse_list(v);
            unique_non_empty(k, &list)?;
            g.rack_aware_assignment_tags = Some(list);
        }
        // Declared by Kafka, not used by streams groups yet: accepted and ignored.
        "streams.assignor.offload.enable" => {
            parse_bool(k, v)?;
        }
        "streams.task.offset.interval.ms" => g.task_offset_interval_ms = Some(parse_int(k, v)?),
        "streams.num.warmup.replicas" => g.num_warmup_replicas = Some(parse_int(k, v)?),
        "streams.acceptable.recovery.lag" => {
            g.acceptable_recovery_lag = Some(at_least(k, parse_long(k, v)?, 0)?)
        }
        "consumer.session.timeout.ms" => g.consumer_session_timeout_ms = Some(parse_int(k, v)?),
        "consumer.heartbeat.interval.ms" => {
            g.consumer_heartbeat_interval_ms = Some(parse_int(k, v)?)
        }
        "consumer.assignment.interval.ms" => {
            g.consumer_assignment_interval_ms = Some(parse_int(k, v)?)
        }
        // The core assigns inline: accepted and ignored, as for streams.
        "consumer.assignor.offload.enable" => {
            parse_bool(k, v)?;
        }
        _ => return Err(err(k, "unknown group config key")),
    }
    Ok(())
}

fn range(
    key: &str,
    v: i32,
    lo: i32,
    hi: i32,
    lo_key: &str,
    hi_key: &str,
) -> Result<(), ConfigError> {
    if v < lo {
        return Err(err(
            key,
            format!("value {v} must be at least {lo_key} ({lo})"),
        ));
    }
    if v > hi {
        return Err(err(
            key,
            format!("value {v} must be at most {hi_key} ({hi})"),
        ));
    }
    Ok(())
}

/// Kafka's `Utils.require` checks of the `group.consumer.*` keys.
fn validate_consumer(c: &crate::config::ConsumerConfig) -> Result<(), ConfigError> {
    let p = "group.consumer.";
    for (what, v, lo, hi) in [
        (
            "session.timeout.ms",
            c.session_timeout_ms,
            c.min_session_timeout_ms,
            c.max_session_timeout_ms,
        ),
        (
            "heartbeat.interval.ms",
            c.heartbeat_interval_ms,
            c.min_heartbeat_interval_ms,
            c.max_heartbeat_interval_ms,
        ),
        (
            "assignment.interval.ms",
            c.assignment_interval_ms,
            c.min_assignment_interval_ms,
            c.max_assignment_interval_ms,
        ),
    ] {
        if hi < lo {
            return Err(err(
                &format!("{p}max.{what}"),
                format!("must be greater than or equal to {p}min.{what}"),
            ));
        }
        range(
            &format!("{p}{what}"),
            v,
            lo,
            hi,
            &format!("{p}min.{what}"),
            &format!("{p}max.{what}"),
        )?;
    }
    if c.heartbeat_interval_ms >= c.session_timeout_ms {
        return Err(err(
            "group.consumer.heartbeat.interval.ms",
            "must be less than group.consumer.session.timeout.ms",
        ));
    }
    Ok(())
}

/// Cross-key validation of `GroupCoordinatorConfig`.
pub fn validate(c: &CoordinatorConfig) -> Result<(), ConfigError> {
    validate_consumer(&c.consumer)?;
    if c.max_session_timeout_ms < c.min_session_timeout_ms {
        return Err(err(
            "group.streams.max.session.timeout.ms",
            "must be greater than or equal to group.streams.min.session.timeout.ms",
        ));
    }
    range(
        "group.streams.session.timeout.ms",
        c.session_timeout_ms,
        c.min_session_timeout_ms,
        c.max_session_timeout_ms,
        "group.streams.min.session.timeout.ms",
        "group.streams.max.session.timeout.ms",
    )?;
    if c.max_heartbeat_interval_ms < c.min_heartbeat_interval_ms {
        return Err(err(
            "group.streams.max.heartbeat.interval.ms",
            "must be greater than or equal to group.streams.min.heartbeat.interval.ms",
        ));
    }
    range(
        "group.streams.heartbeat.interval.ms",
        c.heartbeat_interval_ms,
        c.min_heartbeat_interval_ms,
        c.max_heartbeat_interval_ms,
        "group.streams.min.heartbeat.interval.ms",
        "group.streams.max.heartbeat.interval.ms",
    )?;
    if c.heartbeat_interval_ms >= c.session_timeout_ms {
        return Err(err(
            "group.streams.heartbeat.interval.ms",
            "must be less than group.streams.session.timeout.ms",
        ));
    }
    if c.num_standby_replicas > c.max_standby_replicas {
        return Err(err(
            "group.streams.num.standby.replicas",
            "must be less than or equal to group.streams.max.standby.replicas",
        ));
    }
    if c.max_assignment_interval_ms < c.min_assignment_interval_ms {
        return Err(err(
            "group.streams.max.assignment.interval.ms",
            "must be greater than or equal to group.streams.min.assignment.interval.ms",
        ));
    }
    range(
        "group.streams.assignment.interval.ms",
        c.assignment_interval_ms,
        c.min_assignment_interval_ms,
        c.max_assignment_interval_ms,
        "group.streams.min.assignment.interval.ms",
        "group.streams.max.assignment.interval.ms",
    )?;
    if c.task_offset_interval_ms < c.min_task_offset_interval_ms {
        return Err(err(
            "group.streams.task.offset.interval.ms",
            "must be greater than or equal to group.streams.min.task.offset.interval.ms",
        ));
    }
    if c.num_warmup_replicas > c.max_warmup_replicas {
        return Err(err(
            "group.streams.num.warmup.replicas",
            "must be less than or equal to group.streams.max.warmup.replicas",
        ));
    }
    Ok(())
}

/// Validation of a group override as Kafka applies it on IncrementalAlterConfigs.
fn validate_group(c: &CoordinatorConfig, gid: &str, g: &GroupConfig) -> Result<(), ConfigError> {
    let key = |k: &str| format!("group.{gid}.{k}");
    if let Some(v) = g.session_timeout_ms {
        let k = key("streams.session.timeout.ms");
        range(
            &k,
            v,
            c.min_session_timeout_ms,
            c.max_session_timeout_ms,
            "the broker min",
            "the broker max",
        )?;
    }
    if let Some(v) = g.heartbeat_interval_ms {
        let k = key("streams.heartbeat.interval.ms");
        range(
            &k,
            v,
            c.min_heartbeat_interval_ms,
            c.max_heartbeat_interval_ms,
            "the broker min",
            "the broker max",
        )?;
    }
    let session = c.for_group(gid).session_timeout_ms;
    let hb = g.heartbeat_interval_ms.unwrap_or(c.heartbeat_interval_ms);
    if hb >= g.session_timeout_ms.unwrap_or(session) {
        return Err(err(
            &key("streams.heartbeat.interval.ms"),
            "must be less than the session timeout",
        ));
    }
    if let Some(v) = g.num_standby_replicas {
        range(
            &key("streams.num.standby.replicas"),
            v,
            0,
            c.max_standby_replicas,
            "0",
            "group.streams.max.standby.replicas",
        )?;
    }
    if let Some(v) = g.assignment_interval_ms {
        range(
            &key("streams.assignment.interval.ms"),
            v,
            c.min_assignment_interval_ms,
            c.max_assignment_interval_ms,
            "group.streams.min.assignment.interval.ms",
            "group.streams.max.assignment.interval.ms",
        )?;
    }
    if let Some(v) = g.task_offset_interval_ms {
        range(
            &key("streams.task.offset.interval.ms"),
            v,
            c.min_task_offset_interval_ms,
            i32::MAX,
            "group.streams.min.task.offset.interval.ms",
            "max int",
        )?;
    }
    if let Some(v) = g.num_warmup_replicas {
        range(
            &key("streams.num.warmup.replicas"),
            v,
            0,
            c.max_warmup_replicas,
            "0",
            "group.streams.max.warmup.replicas",
        )?;
    }
    if let Some(name) = &g.assignor_name
        && !c.assignors.contains(name)
    {
        return Err(err(
            &key("streams.assignor.name"),
            format!("assignor `{name}` is not in group.streams.assignors"),
        ));
    }
    validate_consumer_group(&c.consumer, gid, g)
}

/// The `consumer.*` overrides of a group against the `group.consumer.*` bounds (Kafka's
/// `GroupConfig.validate`, docs/consumer-protocol.md §K8.1).
fn validate_consumer_group(
    c: &crate::config::ConsumerConfig,
    gid: &str,
    g: &GroupConfig,
) -> Result<(), ConfigError> {
    let key = |k: &str| format!("group.{gid}.consumer.{k}");
    for (k, v, lo, hi) in [
        (
            "session.timeout.ms",
            g.consumer_session_timeout_ms,
            c.min_session_timeout_ms,
            c.max_session_timeout_ms,
        ),
        (
            "heartbeat.interval.ms",
            g.consumer_heartbeat_interval_ms,
            c.min_heartbeat_interval_ms,
            c.max_heartbeat_interval_ms,
        ),
        (
            "assignment.interval.ms",
            g.consumer_assignment_interval_ms,
            c.min_assignment_interval_ms,
            c.max_assignment_interval_ms,
        ),
    ] {
        if let Some(v) = v {
            range(
                &key(k),
                v,
                lo,
                hi,
                &format!("group.consumer.min.{k}"),
                &format!("group.consumer.max.{k}"),
            )?;
        }
    }
    if g.consumer_session_timeout_ms.is_some() || g.consumer_heartbeat_interval_ms.is_some() {
        let session = g
            .consumer_session_timeout_ms
            .unwrap_or(c.session_timeout_ms);
        let hb = g
            .consumer_heartbeat_interval_ms
            .unwrap_or(c.heartbeat_interval_ms);
        if session <= hb {
            return Err(err(
                &key("session.timeout.ms"),
                "must be greater than consumer.heartbeat.interval.ms",
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(pairs: &[(&str, &str)]) -> Result<ParsedConfig, ConfigError> {
        build(
            &pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    #[test]
    fn properties_syntax() {
        let p = parse_properties(
            "# comment\n! other\n  a.b = 1 \nc: two\nd three\ne=\\\n  cont\nempty=\n",
        )
        .unwrap();
        assert_eq!(p["a.b"], "1");
        assert_eq!(p["c"], "two");
        assert_eq!(p["d"], "three");
        assert_eq!(p["e"], "cont");
        assert_eq!(p["empty"], "");
    }

    #[test]
    fn consumer_migration_policy() {
        use crate::config::MigrationPolicy;
        let policy = |v: &str| {
            b(&[("group.consumer.migration.policy", v)])
                .map(|c| c.coordinator.consumer.migration_policy)
        };
        assert_eq!(
            b(&[]).unwrap().coordinator.consumer.migration_policy,
            MigrationPolicy::Bidirectional
        );
        assert_eq!(policy(" UPGRADE ").unwrap(), MigrationPolicy::Upgrade);
        assert_eq!(policy("downgrade").unwrap(), MigrationPolicy::Downgrade);
        assert_eq!(policy("Disabled").unwrap(), MigrationPolicy::Disabled);
        assert!(policy("both").is_err());
        assert!(MigrationPolicy::Upgrade.upgrade_enabled());
        assert!(!MigrationPolicy::Upgrade.downgrade_enabled());
        assert!(!MigrationPolicy::Disabled.upgrade_enabled());
    }

    #[test]
    fn defaults_and_values() {
        let c = b(&[]).unwrap();
        assert_eq!(c.coordinator, CoordinatorConfig::default());
        let c = b(&[
            ("group.streams.session.timeout.ms", "50000"),
            ("group.streams.num.standby.replicas", "1"),
            ("group.streams.assignors", "sticky, sticky-rack-aware, mock"),
            ("group.streams.rack.aware.assignment.tags", "zone,rack"),
            ("group.streams.acceptable.recovery.lag", "123456789012"),
            ("socket.request.max.bytes", "1000"),
            ("offset.metadata.max.bytes", "-1"),
        ])
        .unwrap();
        assert_eq!(c.coordinator.offset_metadata_max_bytes, -1);
        assert_eq!(b(&[]).unwrap().coordinator.offset_metadata_max_bytes, 4096);
        assert_eq!(c.coordinator.session_timeout_ms, 50_000);
        assert_eq!(c.coordinator.num_standby_replicas, 1);
        assert_eq!(
            c.coordinator.assignors,
            vec!["sticky", "sticky-rack-aware", "mock"]
        );
        assert_eq!(
            c.coordinator.rack_aware_assignment_tags,
            vec!["zone", "rack"]
        );
        assert_eq!(c.coordinator.acceptable_recovery_lag, 123_456_789_012);
        assert_eq!(c.server.socket_request_max_bytes, 1000);
    }

    #[test]
    fn errors_name_the_key() {
        let cases: &[(&[(&str, &str)], &str)] = &[
            (&[("no.such.key", "1")], "no.such.key"),
            (
                &[("offset.metadata.max.bytes", "4k")],
                "offset.metadata.max.bytes",
            ),
            (
                &[("group.streams.session.timeout.ms", "abc")],
                "group.streams.session.timeout.ms",
            ),
            (
                &[("group.streams.session.timeout.ms", "0")],
                "group.streams.session.timeout.ms",
            ),
            (
                &[("group.streams.session.timeout.ms", "70000")],
                "group.streams.session.timeout.ms",
            ),
            (
                &[("group.streams.max.session.timeout.ms", "100")],
                "group.streams.max.session.timeout.ms",
            ),
            (
                &[("group.streams.num.standby.replicas", "3")],
                "group.streams.num.standby.replicas",
            ),
            (
                &[("group.streams.assignors", "")],
                "group.streams.assignors",
            ),
            (
                &[("group.streams.assignors", "sticky,sticky")],
                "group.streams.assignors",
            ),
            (
                &[("group.streams.assignors", "com.Foo")],
                "group.streams.assignors",
            ),
            (
                &[("group.streams.rack.aware.assignment.tags", "a,,b")],
                "group.streams.rack.aware.assignment.tags",
            ),
            (
                &[("group.streams.assignor.offload.enable", "yes")],
                "group.streams.assignor.offload.enable",
            ),
            (
                &[("group.streams.task.offset.interval.ms", "1000")],
                "group.streams.task.offset.interval.ms",
            ),
            (
                &[("group.streams.num.warmup.replicas", "21")],
                "group.streams.num.warmup.replicas",
            ),
            (
                &[("group.streams.acceptable.recovery.lag", "-1")],
                "group.streams.acceptable.recovery.lag",
            ),
            (
                &[
                    ("group.streams.min.heartbeat.interval.ms", "1000"),
                    ("group.streams.max.heartbeat.interval.ms", "60000"),
                    ("group.streams.heartbeat.interval.ms", "50000"),
                ],
                "group.streams.heartbeat.interval.ms",
            ),
            (
                &[("group.coordinator.rebalance.protocols", "consumer,streams")],
                "group.coordinator.rebalance.protocols",
            ),
            (
                &[("group.app.streams.num.standby.replicas", "5")],
                "group.app.streams.num.standby.replicas",
            ),
            (
                &[("group.app.streams.session.timeout.ms", "1")],
                "group.app.streams.session.timeout.ms",
            ),
        ];
        for (pairs, key) in cases {
            let e = b(pairs).unwrap_err();
            assert_eq!(&e.key, key, "{pairs:?}: {e}");
        }
    }

    #[test]
    fn group_overrides() {
        let c = b(&[
            ("group.my.app.streams.num.standby.replicas", "1"),
            ("group.streams.streams.session.timeout.ms", "50000"),
            ("group.coordinator.rebalance.protocols", "classic,consumer"),
        ])
        .unwrap()
        .coordinator;
        assert_eq!(c.group_overrides["my.app"].num_standby_replicas, Some(1));
        assert_eq!(
            c.group_overrides["streams"].session_timeout_ms,
            Some(50_000)
        );
        assert_eq!(c.for_group("my.app").num_standby_replicas, 1);
        assert!(!c.streams_enabled);
    }

    /// `group.<id>.consumer.*` overrides, checked against the `group.consumer.*` bounds
    /// (docs/consumer-protocol.md §K8.1); the broker key of the same name is not an override.
    #[test]
    fn consumer_group_overrides() {
        let c = b(&[
            ("group.app.consumer.heartbeat.interval.ms", "8000"),
            ("group.app.consumer.assignor.offload.enable", "false"),
            ("group.consumer.session.timeout.ms", "50000"),
        ])
        .unwrap()
        .coordinator;
        assert_eq!(
            c.group_overrides["app"].consumer_heartbeat_interval_ms,
            Some(8000)
        );
        assert_eq!(c.consumer.session_timeout_ms, 50_000);
        assert!(!c.group_overrides.contains_key("consumer"));
        let t = c.consumer_timings("app");
        assert_eq!(
            (t.session_timeout_ms, t.heartbeat_interval_ms),
            (50_000, 8000)
        );
        let e = b(&[("group.app.consumer.heartbeat.interval.ms", "1000")]).unwrap_err();
        assert!(
            e.to_string()
                .contains("group.consumer.min.heartbeat.interval.ms"),
            "{e}"
        );
        let e = b(&[
            ("group.consumer.min.heartbeat.interval.ms", "1000"),
            ("group.consumer.max.heartbeat.interval.ms", "60000"),
            ("group.app.consumer.heartbeat.interval.ms", "50000"),
            ("group.app.consumer.session.timeout.ms", "45000"),
        ])
        .unwrap_err();
        assert!(e.to_string().contains("must be greater than"), "{e}");
    }

    #[test]
    fn authorizer_and_topic_default_keys() {
        let d = b(&[]).unwrap().server;
        assert!(!d.authorizer.enabled());
        assert!(d.topic_defaults.auto_create_topics_enable);
        assert_eq!(d.topic_defaults.num_partitions, 1);
        let c = b(&[
            (
                "authorizer.class.name",
                "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            ),
            ("super.users", "User:admin; User:bob;"),
            ("allow.everyone.if.no.acl.found", "true"),
            ("auto.create.topics.enable", "false"),
            ("num.partitions", "3"),
        ])
        .unwrap()
        .server;
        assert!(c.authorizer.enabled());
        assert_eq!(c.authorizer.super_users, ["User:admin", "User:bob"]);
        assert!(c.authorizer.allow_everyone_if_no_acl_found);
        assert!(!c.topic_defaults.auto_create_topics_enable);
        assert_eq!(c.topic_defaults.num_partitions, 3);
        assert!(
            !d.migrate_owners,
            "a different owner count is refused by default"
        );
        let m = b(&[("groupcoord.migrate.owners", "true")]).unwrap().server;
        assert!(m.migrate_owners);
        for (k, v) in [
            ("authorizer.class.name", "com.example.MyAuthorizer"),
            ("super.users", "admin"),
            ("allow.everyone.if.no.acl.found", "maybe"),
            ("num.partitions", "0"),
            ("groupcoord.migrate.owners", "yes"),
        ] {
            assert_eq!(b(&[(k, v)]).unwrap_err().key, k);
        }
    }

    /// docs/classic-protocol.md §C8: Kafka's defaults; only `group.max.size` has a bound.
    #[test]
    fn classic_keys() {
        let c = b(&[]).unwrap().coordinator.classic;
        assert_eq!(
            (c.min_session_timeout_ms, c.max_session_timeout_ms),
            (6_000, 1_800_000)
        );
        assert_eq!(
            (c.initial_rebalance_delay_ms, c.max_size),
            (3_000, i32::MAX)
        );
        let c = b(&[
            ("group.min.session.timeout.ms", "1000"),
            ("group.max.session.timeout.ms", "500"),
            ("group.initial.rebalance.delay.ms", "0"),
            ("group.max.size", "3"),
        ])
        .unwrap()
        .coordinator
        .classic;
        assert_eq!(
            (c.min_session_timeout_ms, c.max_session_timeout_ms),
            (1_000, 500)
        );
        assert_eq!((c.initial_rebalance_delay_ms, c.max_size), (0, 3));
        let e = b(&[("group.max.size", "0")]).unwrap_err();
        assert_eq!(e.key, "group.max.size");
        assert!(b(&[("group.min.session.timeout.ms", "x")]).is_err());
    }
}
