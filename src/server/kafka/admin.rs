//! DescribeConfigs (32) and IncrementalAlterConfigs (44) for BROKER, TOPIC and GROUP resources,
//! so `kafka-configs` and `kafka-topics --describe` work.
//!
//! * GROUP: the group overrides Kafka 4.4 defines for streams and consumer groups
//!   (`streams.num.standby.replicas`, `consumer.session.timeout.ms`, ...), validated against the
//!   broker bounds with Kafka's messages, logged ([`LogEntry::GroupConfigs`]) and applied to the
//!   running group at once: the coordinator reads them on every heartbeat, so a streams group
//!   whose standby count changed computes a new target assignment on its next heartbeat, as in
//!   Kafka. Share-group and dead-letter-queue keys are refused (no share groups here).
//! * BROKER (`""` or `"0"`): the broker keys groupcoord honours, read-only (no dynamic broker
//!   configs).
//! * TOPIC: Kafka's topic defaults, read-only (groupcoord keeps no per-topic configs).
//!
//! Authorization: DESCRIBE_CONFIGS / ALTER_CONFIGS on the cluster, the topic or the group.

use std::collections::BTreeMap;

use kafka_protocol::messages::describe_configs_response::{
    DescribeConfigsResourceResult, DescribeConfigsResult, DescribeConfigsSynonym,
};
use kafka_protocol::messages::incremental_alter_configs_response::AlterConfigsResourceResponse;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;

use crate::config::GroupConfig;
use crate::config_keys::apply_group_key;
use crate::error::ErrorCode;
use crate::server::acl::Operation;
use crate::server::peer::Peer;
use crate::server::storage::log::{GroupConfigChange, LogEntry};
use crate::types::Millis;

use super::State;

/// `ConfigResource.Type` codes.
const TOPIC: i8 = 2;
const BROKER: i8 = 4;
const GROUP: i8 = 32;

/// `ConfigSource` codes.
const STATIC_BROKER_CONFIG: i8 = 4;
const DEFAULT_CONFIG: i8 = 5;
const GROUP_CONFIG: i8 = 8;

/// `ConfigType` codes.
const BOOLEAN: i8 = 1;
const STRING: i8 = 2;
const INT: i8 = 3;
const LONG: i8 = 5;
const LIST: i8 = 7;

/// The longest config value stored (the log's int16 string length).
const MAX_VALUE: usize = i16::MAX as usize;

fn s(v: impl Into<String>) -> StrBytes {
    StrBytes::from_string(v.into())
}

/// One group config key: name, type, internal (not listed by DescribeConfigs), lowest value.
struct GroupKey {
    name: &'static str,
    kind: i8,
    internal: bool,
    at_least: i64,
}

const fn key(name: &'static str, kind: i8, internal: bool, at_least: i64) -> GroupKey {
    GroupKey {
        name,
        kind,
        internal,
        at_least,
    }
}

/// Kafka 4.4's `GroupConfig` keys of the group types groupcoord serves.
const GROUP_KEYS: &[GroupKey] = &[
    key("consumer.session.timeout.ms", INT, false, 1),
    key("consumer.heartbeat.interval.ms", INT, false, 1),
    key("consumer.assignment.interval.ms", INT, false, 0),
    key("consumer.assignor.offload.enable", BOOLEAN, true, 0),
    key("streams.session.timeout.ms", INT, false, 1),
    key("streams.heartbeat.interval.ms", INT, false, 1),
    key("streams.num.standby.replicas", INT, false, 0),
    key("streams.initial.rebalance.delay.ms", INT, false, 0),
    key("streams.assignment.interval.ms", INT, false, 0),
    key("streams.assignor.offload.enable", BOOLEAN, true, 0),
    key("streams.task.offset.interval.ms", INT, true, 1),
    key("streams.num.warmup.replicas", INT, true, 0),
    key("streams.rack.aware.assignment.tags", LIST, false, 0),
    key("streams.acceptable.recovery.lag", LONG, true, 0),
    key("streams.assignor.name", STRING, false, 0),
];

/// A config as DescribeConfigs shows it: name, value, source, type, read-only.
type ShownConfig = (String, Option<String>, i8, i8, bool);

fn invalid(msg: impl Into<String>) -> (ErrorCode, String) {
    (ErrorCode::INVALID_CONFIG, msg.into())
}

impl State {
    /// The values in force for a group: (key, value, overridden).
    fn group_config_values(&self, group: &str) -> Vec<(&'static str, Option<String>, bool)> {
        let c = self.coord.config();
        let eff = c.for_group(group);
        let consumer = c.consumer_timings(group);
        let dynamic = self.group_configs.get(group);
        let file = c.group_overrides.get(group);
        GROUP_KEYS
            .iter()
            .filter(|k| !k.internal)
            .map(|k| {
                let value = match k.name {
                    "consumer.session.timeout.ms" => Some(consumer.session_timeout_ms.to_string()),
                    "consumer.heartbeat.interval.ms" => {
                        Some(consumer.heartbeat_interval_ms.to_string())
                    }
                    "consumer.assignment.interval.ms" => {
                        Some(consumer.assignment_interval_ms.to_string())
                    }
                    "streams.session.timeout.ms" => Some(eff.session_timeout_ms.to_string()),
                    "streams.heartbeat.interval.ms" => Some(eff.heartbeat_interval_ms.to_string()),
                    "streams.num.standby.replicas" => Some(eff.num_standby_replicas.to_string()),
                    "streams.initial.rebalance.delay.ms" => {
                        Some(eff.initial_rebalance_delay_ms.to_string())
                    }
                    "streams.assignment.interval.ms" => {
                        Some(eff.assignment_interval_ms.to_string())
                    }
                    "streams.rack.aware.assignment.tags" => {
                        Some(eff.rack_aware_assignment_tags.join(","))
                    }
                    "streams.assignor.name" => file
                        .and_then(|f| f.assignor_name.clone())
                        .or_else(|| dynamic.and_then(|d| d.get(k.name).cloned())),
                    _ => None,
                };
                let set = dynamic.is_some_and(|d| d.contains_key(k.name));
                let value = if set && k.name.starts_with("consumer.") {
                    dynamic.and_then(|d| d.get(k.name).cloned())
                } else {
                    value
                };
                (k.name, value, set)
            })
            .collect()
    }

    /// The broker keys shown for the BROKER resource: (key, value, type, default?).
    fn broker_config_values(&self) -> Vec<(&'static str, String, i8, bool)> {
        let c = self.coord.config();
        let d = crate::config::CoordinatorConfig::default();
        let t = &self.topic_defaults;
        let a = &self.authorizer;
        let int = |k, v: i32, dv: i32| (k, v.to_string(), INT, v == dv);
        vec![
            (
                "auto.create.topics.enable",
                t.auto_create_topics_enable.to_string(),
                BOOLEAN,
                t.auto_create_topics_enable,
            ),
            int("num.partitions", t.num_partitions, 1),
            (
                "authorizer.class.name",
                if a.enabled {
                    crate::config_keys::AUTHORIZER_CLASSES[0].to_string()
                } else {
                    String::new()
                },
                STRING,
                !a.enabled,
            ),
            int(
                "group.streams.session.timeout.ms",
                c.session_timeout_ms,
                d.session_timeout_ms,
            ),
            int(
                "group.streams.heartbeat.interval.ms",
                c.heartbeat_interval_ms,
                d.heartbeat_interval_ms,
            ),
            int(
                "group.streams.num.standby.replicas",
                c.num_standby_replicas,
                d.num_standby_replicas,
            ),
            int(
                "group.streams.max.standby.replicas",
                c.max_standby_replicas,
                d.max_standby_replicas,
            ),
            int(
                "group.streams.initial.rebalance.delay.ms",
                c.initial_rebalance_delay_ms,
                d.initial_rebalance_delay_ms,
            ),
            int(
                "group.min.session.timeout.ms",
                c.classic.min_session_timeout_ms,
                d.classic.min_session_timeout_ms,
            ),
            int(
                "group.max.session.timeout.ms",
                c.classic.max_session_timeout_ms,
                d.classic.max_session_timeout_ms,
            ),
            int(
                "group.initial.rebalance.delay.ms",
                c.classic.initial_rebalance_delay_ms,
                d.classic.initial_rebalance_delay_ms,
            ),
            int(
                "offset.metadata.max.bytes",
                c.offset_metadata_max_bytes,
                d.offset_metadata_max_bytes,
            ),
        ]
    }

    pub(super) fn describe_configs(
        &self,
        peer: &Peer,
        v: i16,
        r: &DescribeConfigsRequest,
    ) -> DescribeConfigsResponse {
        let mut resp = DescribeConfigsResponse::default();
        for res in &r.resources {
            let name = res.resource_name.to_string();
            let mut out = DescribeConfigsResult::default();
            out.resource_type = res.resource_type;
            out.resource_name = res.resource_name.clone();
            // Null or empty: every config (Kafka's ConfigHelper).
            let wanted = |k: &str| {
                res.configuration_keys
                    .as_ref()
                    .is_none_or(|ks| ks.is_empty() || ks.iter().any(|x| x.as_str() == k))
            };
            // (name, value, source, type, read-only)
            let entries: Result<Vec<ShownConfig>, (ErrorCode, String)> = match res.resource_type {
                GROUP => {
                    if !self.allowed(
                        peer,
                        Operation::DescribeConfigs,
                        crate::server::acl::ResourceType::Group,
                        &name,
                    ) {
                        Err((
                            ErrorCode::GROUP_AUTHORIZATION_FAILED,
                            "Group authorization failed.".into(),
                        ))
                    } else {
                        Ok(self
                            .group_config_values(&name)
                            .into_iter()
                            .map(|(k, v, set)| {
                                let kind = GROUP_KEYS
                                    .iter()
                                    .find(|g| g.name == k)
                                    .map_or(STRING, |g| g.kind);
                                let source = if set { GROUP_CONFIG } else { DEFAULT_CONFIG };
                                (k.to_string(), v, source, kind, false)
                            })
                            .collect())
                    }
                }
                BROKER => {
                    if !self.cluster_allowed(peer, Operation::DescribeConfigs) {
                        Err((
                            ErrorCode::CLUSTER_AUTHORIZATION_FAILED,
                            "Cluster authorization failed.".into(),
                        ))
                    } else if !name.is_empty() && name != "0" {
                        Err((
                            ErrorCode::INVALID_REQUEST,
                            format!(
                                "Unexpected broker id, expected 0 or empty string, but received {name}"
                            ),
                        ))
                    } else {
                        Ok(self
                            .broker_config_values()
                            .into_iter()
                            .map(|(k, v, kind, default)| {
                                let source = if default {
                                    DEFAULT_CONFIG
                                } else {
                                    STATIC_BROKER_CONFIG
                                };
                                (k.to_string(), Some(v), source, kind, true)
                            })
                            .collect())
                    }
                }
                TOPIC => {
                    if !self.topic_allowed(peer, Operation::DescribeConfigs, &name) {
                        Err((
                            ErrorCode::TOPIC_AUTHORIZATION_FAILED,
                            "Topic authorization failed.".into(),
                        ))
                    } else if !self.topics.contains_key(&name) {
                        Err((
                            ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
                            format!("The topic '{name}' does not exist."),
                        ))
                    } else {
                        Ok(TOPIC_DEFAULTS
                            .iter()
                            .map(|(k, v, kind)| {
                                (
                                    k.to_string(),
                                    Some(v.to_string()),
                                    DEFAULT_CONFIG,
                                    *kind,
                                    false,
                                )
                            })
                            .collect())
                    }
                }
                t => Err((
                    ErrorCode::INVALID_REQUEST,
                    format!("Unsupported resource type {t}"),
                )),
            };
            match entries {
                Err((code, msg)) => {
                    out.error_code = code.0;
                    out.error_message = Some(s(msg));
                }
                Ok(list) => {
                    out.configs = list
                        .into_iter()
                        .filter(|(k, ..)| wanted(k))
                        .map(|(k, value, source, kind, read_only)| {
                            let mut c = DescribeConfigsResourceResult::default();
                            c.name = s(k.clone());
                            c.value = value.clone().map(s);
                            c.read_only = read_only;
                            c.config_source = source;
                            if v >= 3 {
                                c.config_type = kind;
                            }
                            if r.include_synonyms {
                                let mut syn = DescribeConfigsSynonym::default();
                                syn.name = s(k);
                                syn.value = value.map(s);
                                syn.source = source;
                                c.synonyms = vec![syn];
                            }
                            c
                        })
                        .collect();
                }
            }
            resp.results.push(out);
        }
        resp
    }

    pub(super) fn incremental_alter_configs(
        &mut self,
        _now: Millis,
        peer: &Peer,
        r: &IncrementalAlterConfigsRequest,
        entries: &mut Vec<LogEntry>,
    ) -> IncrementalAlterConfigsResponse {
        let mut resp = IncrementalAlterConfigsResponse::default();
        let mut changes: Vec<GroupConfigChange> = Vec::new();
        for res in &r.resources {
            let name = res.resource_name.to_string();
            let mut out = AlterConfigsResourceResponse::default();
            out.resource_type = res.resource_type;
            out.resource_name = res.resource_name.clone();
            let result = match res.resource_type {
                GROUP => {
                    if !self.allowed(
                        peer,
                        Operation::AlterConfigs,
                        crate::server::acl::ResourceType::Group,
                        &name,
                    ) {
                        Err((
                            ErrorCode::GROUP_AUTHORIZATION_FAILED,
                            "Group authorization failed.".into(),
                        ))
                    } else {
                        self.alter_group(&name, res).map(|c| {
                            if !r.validate_only {
                                self.apply_group_configs(&c);
                                changes.extend(c);
                            }
                        })
                    }
                }
                BROKER => {
                    if !self.cluster_allowed(peer, Operation::AlterConfigs) {
                        Err((
                            ErrorCode::CLUSTER_AUTHORIZATION_FAILED,
                            "Cluster authorization failed.".into(),
                        ))
                    } else {
                        Err((
                            ErrorCode::INVALID_REQUEST,
                            "groupcoord has no dynamic broker configs: set them in the \
                             properties file (--config / --set) and restart"
                                .into(),
                        ))
                    }
                }
                TOPIC => {
                    if !self.topic_allowed(peer, Operation::AlterConfigs, &name) {
                        Err((
                            ErrorCode::TOPIC_AUTHORIZATION_FAILED,
                            "Topic authorization failed.".into(),
                        ))
                    } else if !self.topics.contains_key(&name) {
                        Err((
                            ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
                            format!("The topic '{name}' does not exist."),
                        ))
                    } else {
                        Err(invalid("groupcoord keeps no per-topic configs"))
                    }
                }
                t => Err((
                    ErrorCode::INVALID_REQUEST,
                    format!("Unsupported resource type {t}"),
                )),
            };
            if let Err((code, msg)) = result {
                out.error_code = code.0;
                out.error_message = Some(s(msg));
            }
            resp.responses.push(out);
        }
        if !changes.is_empty() {
            entries.push(LogEntry::GroupConfigs(changes));
        }
        resp
    }

    /// Validate an alter of one group's configs (Kafka's `GroupConfig.validate` over the
    /// group's whole new config) and return the changes.
    fn alter_group(
        &self,
        group: &str,
        res: &incremental_alter_configs_request::AlterConfigsResource,
    ) -> Result<Vec<GroupConfigChange>, (ErrorCode, String)> {
        if group.is_empty() {
            return Err((
                ErrorCode::INVALID_REQUEST,
                "Group name must not be empty".into(),
            ));
        }
        let mut seen = std::collections::BTreeSet::new();
        if !res.configs.iter().all(|c| seen.insert(c.name.as_str())) {
            return Err((
                ErrorCode::INVALID_REQUEST,
                "Error due to duplicate config keys".into(),
            ));
        }
        let current = self.group_configs.get(group).cloned().unwrap_or_default();
        if current.is_empty() {
            // Configs of groups that do not exist yet are kept too: bounded like groups.
            let limits = self.coord.config().limits;
            if let Err(e) = limits.check_new_group(self.group_configs.len()) {
                return Err((e.code, e.message.unwrap_or_default()));
            }
        }
        let mut new = current.clone();
        for c in &res.configs {
            let k = c.name.as_str();
            let Some(def) = GROUP_KEYS.iter().find(|g| g.name == k) else {
                return Err(invalid(format!("Unknown group config name: {k}")));
            };
            let value = c.value.as_ref().map(|v| v.to_string());
            if value.as_ref().is_some_and(|v| v.len() > MAX_VALUE) {
                return Err(invalid(format!(
                    "The value of {k} is longer than {MAX_VALUE} bytes"
                )));
            }
            match c.config_operation {
                0 => match value {
                    Some(v) => {
                        new.insert(k.to_string(), v);
                    }
                    None => {
                        new.remove(k);
                    }
                },
                1 => {
                    new.remove(k);
                }
                op @ (2 | 3) => {
                    if def.kind != LIST {
                        let what = if op == 2 { "append" } else { "subtract" };
                        return Err(invalid(format!(
                            "Config value {what} is not allowed for config key: {k}"
                        )));
                    }
                    let mut list: Vec<String> =
                        new.get(k).map(|v| split_list(v)).unwrap_or_default();
                    for item in split_list(value.as_deref().unwrap_or("")) {
                        if op == 2 {
                            if !list.contains(&item) {
                                list.push(item);
                            }
                        } else {
                            list.retain(|x| *x != item);
                        }
                    }
                    new.insert(k.to_string(), list.join(","));
                }
                op => {
                    return Err((
                        ErrorCode::INVALID_REQUEST,
                        format!("Unknown alter config operation {op}"),
                    ));
                }
            }
        }
        self.validate_group_config(group, &new)?;
        let mut out = Vec::new();
        for (k, v) in &new {
            if current.get(k) != Some(v) {
                out.push(GroupConfigChange {
                    group: group.to_string(),
                    key: k.clone(),
                    value: Some(v.clone()),
                });
            }
        }
        for k in current.keys().filter(|k| !new.contains_key(*k)) {
            out.push(GroupConfigChange {
                group: group.to_string(),
                key: k.clone(),
                value: None,
            });
        }
        Ok(out)
    }

    /// Kafka's checks of a group's new config: types, lower bounds, the broker ranges, session
    /// above heartbeat.
    fn validate_group_config(
        &self,
        group: &str,
        new: &BTreeMap<String, String>,
    ) -> Result<(), (ErrorCode, String)> {
        let c = self.coord.config();
        let mut ints: BTreeMap<&str, i64> = BTreeMap::new();
        for (k, v) in new {
            let Some(def) = GROUP_KEYS.iter().find(|g| g.name == k) else {
                return Err(invalid(format!("Unknown group config name: {k}")));
            };
            let bad =
                |what: &str| invalid(format!("Invalid value {v} for configuration {k}: {what}"));
            match def.kind {
                INT | LONG => {
                    let n: i64 = if def.kind == INT {
                        v.trim()
                            .parse::<i32>()
                            .map(i64::from)
                            .map_err(|_| bad("Not a number of type INT"))?
                    } else {
                        v.trim()
                            .parse::<i64>()
                            .map_err(|_| bad("Not a number of type LONG"))?
                    };
                    if n < def.at_least {
                        return Err(bad(&format!("Value must be at least {}", def.at_least)));
                    }
                    ints.insert(def.name, n);
                }
                BOOLEAN
                    if !v.trim().eq_ignore_ascii_case("true")
                        && !v.trim().eq_ignore_ascii_case("false") =>
                {
                    return Err(bad("Expected value to be either true or false"));
                }
                LIST => {
                    let tags = split_list(v);
                    let unique: std::collections::BTreeSet<&String> = tags.iter().collect();
                    if unique.len() != tags.len() {
                        return Err(invalid(
                            "streams.rack.aware.assignment.tags must not contain duplicate tag keys.",
                        ));
                    }
                }
                _ => {}
            }
        }
        let range = |k: &str, lo: i32, hi: i32| match ints.get(k) {
            Some(&n) if n < i64::from(lo) || n > i64::from(hi) => Err(invalid(format!(
                "{k} must be in the range {lo} to {hi} inclusive."
            ))),
            _ => Ok(()),
        };
        let max = |k: &str, hi: i32| match ints.get(k) {
            Some(&n) if n > i64::from(hi) => {
                Err(invalid(format!("{k} must be less than or equal to {hi}")))
            }
            _ => Ok(()),
        };
        range(
            "consumer.heartbeat.interval.ms",
            c.consumer.min_heartbeat_interval_ms,
            c.consumer.max_heartbeat_interval_ms,
        )?;
        range(
            "consumer.session.timeout.ms",
            c.consumer.min_session_timeout_ms,
            c.consumer.max_session_timeout_ms,
        )?;
        range(
            "consumer.assignment.interval.ms",
            c.consumer.min_assignment_interval_ms,
            c.consumer.max_assignment_interval_ms,
        )?;
        range(
            "streams.heartbeat.interval.ms",
            c.min_heartbeat_interval_ms,
            c.max_heartbeat_interval_ms,
        )?;
        range(
            "streams.session.timeout.ms",
            c.min_session_timeout_ms,
            c.max_session_timeout_ms,
        )?;
        max("streams.num.standby.replicas", c.max_standby_replicas)?;
        range(
            "streams.assignment.interval.ms",
            c.min_assignment_interval_ms,
            c.max_assignment_interval_ms,
        )?;
        if let Some(&n) = ints.get("streams.task.offset.interval.ms")
            && n < i64::from(c.min_task_offset_interval_ms)
        {
            return Err(invalid(format!(
                "streams.task.offset.interval.ms must be greater than or equal to {}",
                c.min_task_offset_interval_ms
            )));
        }
        max("streams.num.warmup.replicas", c.max_warmup_replicas)?;
        if let Some(name) = new.get("streams.assignor.name")
            && !c.assignors.contains(name)
        {
            return Err(invalid(format!(
                "streams.assignor.name '{name}' is not a registered task assignor. Registered \
                 assignors are: [{}].",
                c.assignors.join(", ")
            )));
        }
        let session_above = |sk: &str, sd: i32, hk: &str, hd: i32| {
            if !ints.contains_key(sk) && !ints.contains_key(hk) {
                return Ok(());
            }
            let session = ints.get(sk).copied().unwrap_or(i64::from(sd));
            let heartbeat = ints.get(hk).copied().unwrap_or(i64::from(hd));
            if session <= heartbeat {
                return Err(invalid(format!("{sk} must be greater than {hk}")));
            }
            Ok(())
        };
        session_above(
            "consumer.session.timeout.ms",
            c.consumer.session_timeout_ms,
            "consumer.heartbeat.interval.ms",
            c.consumer.heartbeat_interval_ms,
        )?;
        session_above(
            "streams.session.timeout.ms",
            c.session_timeout_ms,
            "streams.heartbeat.interval.ms",
            c.heartbeat_interval_ms,
        )?;
        // The overrides must also build (assignor names, tags), as the replay will.
        self.overrides_of(group, new).map(|_| ())
    }

    /// The coordinator's overrides of `group`: the properties file's, then the dynamic ones.
    fn overrides_of(
        &self,
        group: &str,
        dynamic: &BTreeMap<String, String>,
    ) -> Result<GroupConfig, (ErrorCode, String)> {
        let mut g = self
            .static_group_overrides
            .get(group)
            .cloned()
            .unwrap_or_default();
        for (k, v) in dynamic {
            apply_group_key(&mut g, k, k, v).map_err(|e| invalid(e.message))?;
        }
        Ok(g)
    }

    /// Apply new or replayed group config changes to the stored configs and the coordinator.
    fn apply_group_configs(&mut self, changes: &[GroupConfigChange]) {
        let mut touched = std::collections::BTreeSet::new();
        for c in changes {
            let group = self.group_configs.entry(c.group.clone()).or_default();
            match &c.value {
                Some(v) => {
                    group.insert(c.key.clone(), v.clone());
                }
                None => {
                    group.remove(&c.key);
                }
            }
            touched.insert(c.group.clone());
        }
        let mut config = self.coord.config().clone();
        for g in touched {
            let dynamic = self.group_configs.get(&g).cloned().unwrap_or_default();
            if dynamic.is_empty() {
                self.group_configs.remove(&g);
            }
            match self.overrides_of(&g, &dynamic) {
                Ok(o) if o == GroupConfig::default() => {
                    config.group_overrides.remove(&g);
                }
                Ok(o) => {
                    config.group_overrides.insert(g, o);
                }
                Err((_, e)) => tracing::warn!(group = %g, "group config not applied: {e}"),
            }
        }
        self.coord.set_config(config);
    }

    /// Group config changes read back from the log.
    pub fn replay_group_configs(&mut self, changes: &[GroupConfigChange]) -> Result<(), String> {
        for c in changes {
            if !GROUP_KEYS.iter().any(|g| g.name == c.key) {
                return Err(format!("unknown group config key {}", c.key));
            }
        }
        self.apply_group_configs(changes);
        Ok(())
    }
}

fn split_list(v: &str) -> Vec<String> {
    let t = v.trim();
    if t.is_empty() {
        return Vec::new();
    }
    t.split(',').map(|x| x.trim().to_string()).collect()
}

/// Kafka's topic defaults (the few a client usually asks about): (key, value, type).
const TOPIC_DEFAULTS: &[(&str, &str, i8)] = &[
    ("cleanup.policy", "delete", LIST),
    ("compression.type", "producer", STRING),
    ("max.message.bytes", "1048588", INT),
    ("min.insync.replicas", "1", INT),
    ("retention.bytes", "-1", LONG),
    ("retention.ms", "604800000", LONG),
    ("segment.bytes", "1073741824", INT),
];
