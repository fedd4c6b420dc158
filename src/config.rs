//! Coordinator configuration: Kafka's broker keys with their defaults and bounds, and the
//! group-level overrides (spec §7).

use crate::util::map::BTreeMap;

use serde::{Deserialize, Serialize};

pub use crate::coordinator::limits::Limits;

/// Broker-level configs of the streams group coordinator (`GroupCoordinatorConfig`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoordinatorConfig {
    /// `group.streams.session.timeout.ms`: a member that does not heartbeat for this long is
    /// fenced.
    pub session_timeout_ms: i32,
    /// `group.streams.min.session.timeout.ms`: lower bound of the group-level override.
    pub min_session_timeout_ms: i32,
    /// `group.streams.max.session.timeout.ms`: upper bound of the group-level override.
    pub max_session_timeout_ms: i32,
    /// `group.streams.heartbeat.interval.ms`: how often members heartbeat.
    pub heartbeat_interval_ms: i32,
    /// `group.streams.min.heartbeat.interval.ms`: lower bound of the override.
    pub min_heartbeat_interval_ms: i32,
    /// `group.streams.max.heartbeat.interval.ms`: upper bound of the override.
    pub max_heartbeat_interval_ms: i32,
    /// `group.streams.max.size`: members per group.
    pub max_size: i32,
    /// `group.streams.num.standby.replicas`: standby tasks per stateful task.
    pub num_standby_replicas: i32,
    /// `group.streams.max.standby.replicas`: upper bound of the override.
    pub max_standby_replicas: i32,
    /// `group.streams.initial.rebalance.delay.ms`: how long a new group waits before its first
    /// assignment.
    pub initial_rebalance_delay_ms: i32,
    /// `group.streams.assignment.interval.ms`: the least time between two assignments of a group.
    pub assignment_interval_ms: i32,
    /// `group.streams.min.assignment.interval.ms`: lower bound of the override.
    pub min_assignment_interval_ms: i32,
    /// `group.streams.max.assignment.interval.ms`: upper bound of the override.
    pub max_assignment_interval_ms: i32,
    /// First entry is the default.
    /// `group.streams.assignors`: the assignors groups may choose.
    pub assignors: Vec<String>,
    /// `group.streams.rack.aware.assignment.tags`: client tags standbys are spread over.
    pub rack_aware_assignment_tags: Vec<String>,
    /// `group.streams.assignor.offload.enable`: accepted for compatibility; the core assigns
    /// inline.
    pub assignor_offload_enable: bool,
    /// `group.streams.task.offset.interval.ms`: how often members report task offsets.
    pub task_offset_interval_ms: i32,
    /// `group.streams.min.task.offset.interval.ms`: lower bound of the override.
    pub min_task_offset_interval_ms: i32,
    /// `group.streams.num.warmup.replicas`: the warm-up budget (Kafka 4.4 places none; the
    /// `sticky-warmups` assignor does).
    pub num_warmup_replicas: i32,
    /// `group.streams.max.warmup.replicas`: upper bound of the override.
    pub max_warmup_replicas: i32,
    /// `group.streams.acceptable.recovery.lag`: a process within this lag counts as caught up.
    pub acceptable_recovery_lag: i64,
    /// `offset.metadata.max.bytes`: the longest offset commit metadata accepted, counted as Kafka
    /// counts it (in UTF-16 code units of the Java string).
    #[serde(default = "default_offset_metadata_max_bytes")]
    pub offset_metadata_max_bytes: i32,
    /// `group.coordinator.rebalance.protocols` contains `streams`.
    pub streams_enabled: bool,
    /// Group-level overrides (`streams.*` keys), by group id.
    pub group_overrides: BTreeMap<String, GroupConfig>,
    /// Classic group keys (`group.min|max.session.timeout.ms`, `group.max.size`, ...).
    #[serde(default)]
    pub classic: ClassicConfig,
    /// Bounds on what clients can make the coordinator store (`groupcoord.max.*`).
    #[serde(default)]
    pub limits: Limits,
    /// KIP-848 consumer group keys (`group.consumer.*`).
    #[serde(default)]
    pub consumer: ConsumerConfig,
}

/// Broker configs of KIP-848 consumer groups (`group.consumer.*`, docs/consumer-protocol.md §K8).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ConsumerConfig {
    /// `group.coordinator.rebalance.protocols` contains `consumer`.
    pub enabled: bool,
    /// `group.consumer.session.timeout.ms`.
    pub session_timeout_ms: i32,
    /// `group.consumer.min.session.timeout.ms`.
    pub min_session_timeout_ms: i32,
    /// `group.consumer.max.session.timeout.ms`.
    pub max_session_timeout_ms: i32,
    /// `group.consumer.heartbeat.interval.ms`.
    pub heartbeat_interval_ms: i32,
    /// `group.consumer.min.heartbeat.interval.ms`.
    pub min_heartbeat_interval_ms: i32,
    /// `group.consumer.max.heartbeat.interval.ms`.
    pub max_heartbeat_interval_ms: i32,
    /// `group.consumer.max.size`: members per group.
    pub max_size: i32,
    /// `group.consumer.assignors`: the first is the default.
    pub assignors: Vec<String>,
    /// `group.consumer.assignment.interval.ms`.
    pub assignment_interval_ms: i32,
    /// `group.consumer.min.assignment.interval.ms`.
    pub min_assignment_interval_ms: i32,
    /// `group.consumer.max.assignment.interval.ms`.
    pub max_assignment_interval_ms: i32,
    /// `group.consumer.regex.refresh.interval.ms`: how often a group's regular expressions are
    /// resolved again even when no topic was created (docs/consumer-protocol.md §K3.9).
    pub regex_refresh_interval_ms: i32,
    /// `group.consumer.migration.policy` (docs/consumer-protocol.md §K11).
    pub migration_policy: MigrationPolicy,
}

/// `group.consumer.migration.policy`: which online conversions between a live classic group and
/// a live consumer group are allowed (docs/consumer-protocol.md §K11). Empty groups convert
/// whatever the policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MigrationPolicy {
    /// Both directions (Kafka 4.4's default).
    #[default]
    Bidirectional,
    /// Classic to consumer only.
    Upgrade,
    /// Consumer to classic only.
    Downgrade,
    /// Neither; classic members may not join a live consumer group.
    Disabled,
}

impl MigrationPolicy {
    /// Kafka's `isUpgradeEnabled`.
    pub fn upgrade_enabled(self) -> bool {
        matches!(
            self,
            MigrationPolicy::Bidirectional | MigrationPolicy::Upgrade
        )
    }

    /// Kafka's `isDowngradeEnabled`.
    pub fn downgrade_enabled(self) -> bool {
        matches!(
            self,
            MigrationPolicy::Bidirectional | MigrationPolicy::Downgrade
        )
    }

    /// The policy a config value names (case-insensitive, as Kafka parses it).
    pub fn parse(value: &str) -> Option<MigrationPolicy> {
        match value.trim().to_ascii_lowercase().as_str() {
            "bidirectional" => Some(MigrationPolicy::Bidirectional),
            "upgrade" => Some(MigrationPolicy::Upgrade),
            "downgrade" => Some(MigrationPolicy::Downgrade),
            "disabled" => Some(MigrationPolicy::Disabled),
            _ => None,
        }
    }
}

impl Default for ConsumerConfig {
    fn default() -> Self {
        ConsumerConfig {
            enabled: true,
            session_timeout_ms: 45_000,
            min_session_timeout_ms: 45_000,
            max_session_timeout_ms: 60_000,
            heartbeat_interval_ms: 5_000,
            min_heartbeat_interval_ms: 5_000,
            max_heartbeat_interval_ms: 15_000,
            max_size: i32::MAX,
            assignors: crate::assignor::consumer::DEFAULT_ASSIGNORS
                .iter()
                .map(|s| s.to_string())
                .collect(),
            assignment_interval_ms: 1_000,
            min_assignment_interval_ms: 0,
            max_assignment_interval_ms: 15_000,
            regex_refresh_interval_ms: 600_000,
            migration_policy: MigrationPolicy::Bidirectional,
        }
    }
}

/// Broker configs of classic groups (Kafka's `GroupCoordinatorConfig` classic keys). Kafka
/// validates none of them against each other; only `group.max.size` must be at least 1.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassicConfig {
    /// `group.min.session.timeout.ms`: JoinGroup below it gets INVALID_SESSION_TIMEOUT.
    pub min_session_timeout_ms: i32,
    /// `group.max.session.timeout.ms`: JoinGroup above it gets INVALID_SESSION_TIMEOUT.
    pub max_session_timeout_ms: i32,
    /// `group.initial.rebalance.delay.ms`: how long a new (Empty) group waits for more members.
    pub initial_rebalance_delay_ms: i32,
    /// `group.max.size`.
    pub max_size: i32,
    /// How long a new member may take to rejoin before it is dropped (Kafka's constant
    /// `CLASSIC_GROUP_NEW_MEMBER_JOIN_TIMEOUT_MS`, not a config key).
    pub new_member_join_timeout_ms: i32,
}

impl Default for ClassicConfig {
    fn default() -> Self {
        ClassicConfig {
            min_session_timeout_ms: 6_000,
            max_session_timeout_ms: 1_800_000,
            initial_rebalance_delay_ms: 3_000,
            max_size: i32::MAX,
            new_member_join_timeout_ms: 300_000,
        }
    }
}

impl Default for CoordinatorConfig {
    fn default() -> Self {
        CoordinatorConfig {
            session_timeout_ms: 45_000,
            min_session_timeout_ms: 45_000,
            max_session_timeout_ms: 60_000,
            heartbeat_interval_ms: 5_000,
            min_heartbeat_interval_ms: 5_000,
            max_heartbeat_interval_ms: 15_000,
            max_size: i32::MAX,
            num_standby_replicas: 0,
            max_standby_replicas: 2,
            initial_rebalance_delay_ms: 3_000,
            assignment_interval_ms: 1_000,
            min_assignment_interval_ms: 0,
            max_assignment_interval_ms: 15_000,
            assignors: vec!["sticky".to_string()],
            rack_aware_assignment_tags: Vec::new(),
            assignor_offload_enable: true,
            task_offset_interval_ms: 60_000,
            min_task_offset_interval_ms: 15_000,
            num_warmup_replicas: 2,
            max_warmup_replicas: 20,
            acceptable_recovery_lag: 10_000,
            offset_metadata_max_bytes: default_offset_metadata_max_bytes(),
            streams_enabled: true,
            group_overrides: BTreeMap::new(),
            classic: ClassicConfig::default(),
            limits: Default::default(),
            consumer: ConsumerConfig::default(),
        }
    }
}

fn default_offset_metadata_max_bytes() -> i32 {
    4096
}

/// Group-level overrides (`GroupConfig`); `None` = use the broker value.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GroupConfig {
    /// `streams.session.timeout.ms`.
    pub session_timeout_ms: Option<i32>,
    /// `streams.heartbeat.interval.ms`.
    pub heartbeat_interval_ms: Option<i32>,
    /// `streams.num.standby.replicas`.
    pub num_standby_replicas: Option<i32>,
    /// `streams.initial.rebalance.delay.ms`.
    pub initial_rebalance_delay_ms: Option<i32>,
    /// `streams.assignment.interval.ms`.
    pub assignment_interval_ms: Option<i32>,
    /// `streams.assignor.name`.
    pub assignor_name: Option<String>,
    /// `streams.rack.aware.assignment.tags`.
    pub rack_aware_assignment_tags: Option<Vec<String>>,
    /// `streams.task.offset.interval.ms`.
    pub task_offset_interval_ms: Option<i32>,
    /// `streams.num.warmup.replicas`.
    pub num_warmup_replicas: Option<i32>,
    /// `streams.acceptable.recovery.lag`.
    pub acceptable_recovery_lag: Option<i64>,
    /// `consumer.session.timeout.ms` (docs/consumer-protocol.md §K8.1).
    #[serde(default)]
    pub consumer_session_timeout_ms: Option<i32>,
    /// `consumer.heartbeat.interval.ms` (docs/consumer-protocol.md §K8.1).
    #[serde(default)]
    pub consumer_heartbeat_interval_ms: Option<i32>,
    /// `consumer.assignment.interval.ms` (docs/consumer-protocol.md §K8.1).
    #[serde(default)]
    pub consumer_assignment_interval_ms: Option<i32>,
}

/// The timings in force for one consumer group: its `consumer.*` overrides clamped to the
/// broker's `group.consumer.min|max.*` bounds, else the broker values (Kafka's
/// `GroupConfig.evaluate`, docs/consumer-protocol.md §K8.1). Read on every heartbeat, so it is
/// `Copy` and built without allocating.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConsumerGroupTimings {
    /// Session timeout in ms.
    pub session_timeout_ms: i32,
    /// Heartbeat interval in ms.
    pub heartbeat_interval_ms: i32,
    /// Least time between two target assignments, in ms.
    pub assignment_interval_ms: i32,
}

/// The values in force for one group: overrides clamped to the broker bounds (spec §7).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EffectiveGroupConfig {
    /// Session timeout in ms.
    pub session_timeout_ms: i32,
    /// Heartbeat interval in ms.
    pub heartbeat_interval_ms: i32,
    /// Standby replicas per stateful task.
    pub num_standby_replicas: i32,
    /// Initial rebalance delay in ms.
    pub initial_rebalance_delay_ms: i32,
    /// Least time between two assignments, in ms.
    pub assignment_interval_ms: i32,
    /// The assignor's name.
    pub assignor_name: String,
    /// Client tags standbys are spread over.
    pub rack_aware_assignment_tags: Vec<String>,
    /// Task offset reporting interval in ms.
    pub task_offset_interval_ms: i32,
    /// Warm-up replicas.
    pub num_warmup_replicas: i32,
    /// Lag within which a process counts as caught up.
    pub acceptable_recovery_lag: i64,
}

impl CoordinatorConfig {
    /// The effective configs of a group.
    pub fn for_group(&self, group_id: &str) -> EffectiveGroupConfig {
        let o = self.group_overrides.get(group_id);
        let clamp = |v: i32, lo: i32, hi: i32| v.max(lo).min(hi.max(lo));
        let assignor_name = o
            .and_then(|o| o.assignor_name.as_ref())
            .filter(|n| self.assignors.iter().any(|a| a == *n))
            .or(self.assignors.first())
            .map_or_else(|| "sticky".into(), String::clone);
        EffectiveGroupConfig {
            session_timeout_ms: o
                .and_then(|o| o.session_timeout_ms)
                .map(|v| clamp(v, self.min_session_timeout_ms, self.max_session_timeout_ms))
                .unwrap_or(self.session_timeout_ms),
            heartbeat_interval_ms: o
                .and_then(|o| o.heartbeat_interval_ms)
                .map(|v| {
                    clamp(
                        v,
                        self.min_heartbeat_interval_ms,
                        self.max_heartbeat_interval_ms,
                    )
                })
                .unwrap_or(self.heartbeat_interval_ms),
            num_standby_replicas: o
                .and_then(|o| o.num_standby_replicas)
                .map(|v| clamp(v, 0, self.max_standby_replicas))
                .unwrap_or(self.num_standby_replicas),
            initial_rebalance_delay_ms: o
                .and_then(|o| o.initial_rebalance_delay_ms)
                .map(|v| v.max(0))
                .unwrap_or(self.initial_rebalance_delay_ms),
            assignment_interval_ms: o
                .and_then(|o| o.assignment_interval_ms)
                .map(|v| {
                    clamp(
                        v,
                        self.min_assignment_interval_ms,
                        self.max_assignment_interval_ms,
                    )
                })
                .unwrap_or(self.assignment_interval_ms),
            assignor_name,
            rack_aware_assignment_tags: o
                .and_then(|o| o.rack_aware_assignment_tags.clone())
                .unwrap_or_else(|| self.rack_aware_assignment_tags.clone()),
            task_offset_interval_ms: o
                .and_then(|o| o.task_offset_interval_ms)
                .map(|v| v.max(self.min_task_offset_interval_ms))
                .unwrap_or(self.task_offset_interval_ms),
            num_warmup_replicas: o
                .and_then(|o| o.num_warmup_replicas)
                .map(|v| clamp(v, 0, self.max_warmup_replicas))
                .unwrap_or(self.num_warmup_replicas),
            acceptable_recovery_lag: o
                .and_then(|o| o.acceptable_recovery_lag)
                .map(|v| v.max(0))
                .unwrap_or(self.acceptable_recovery_lag),
        }
    }
}

impl CoordinatorConfig {
    /// The consumer-group timings of a group (docs/consumer-protocol.md §K8.1).
    pub fn consumer_timings(&self, group_id: &str) -> ConsumerGroupTimings {
        let c = &self.consumer;
        let o = self.group_overrides.get(group_id);
        // Kafka compares with the minimum first (it matters only when the bounds cross).
        let clamp = |v: Option<i32>, default: i32, lo: i32, hi: i32| match v {
            None => default,
            Some(v) if v < lo => lo,
            Some(v) => v.min(hi),
        };
        ConsumerGroupTimings {
            session_timeout_ms: clamp(
                o.and_then(|o| o.consumer_session_timeout_ms),
                c.session_timeout_ms,
                c.min_session_timeout_ms,
                c.max_session_timeout_ms,
            ),
            heartbeat_interval_ms: clamp(
                o.and_then(|o| o.consumer_heartbeat_interval_ms),
                c.heartbeat_interval_ms,
                c.min_heartbeat_interval_ms,
                c.max_heartbeat_interval_ms,
            ),
            assignment_interval_ms: clamp(
                o.and_then(|o| o.consumer_assignment_interval_ms),
                c.assignment_interval_ms,
                c.min_assignment_interval_ms,
                c.max_assignment_interval_ms,
            ),
        }
    }
}

impl EffectiveGroupConfig {
    /// Whether `stored` equals [`Self::assignment_configs_map`], without building the map (this
    /// runs on every heartbeat).
    pub fn assignment_configs_match(&self, stored: &BTreeMap<String, String>) -> bool {
        let standby_ok = stored
            .get("num.standby.replicas")
            .is_some_and(|v| v.parse::<i32>().ok() == Some(self.num_standby_replicas));
        let tags = &self.rack_aware_assignment_tags;
        let tags_ok = match stored.get("rack.aware.assignment.tags") {
            None => tags.is_empty(),
            Some(v) => !tags.is_empty() && v.split(',').eq(tags.iter().map(String::as_str)),
        };
        let expected_len = 1 + usize::from(!tags.is_empty());
        standby_ok && tags_ok && stored.len() == expected_len
    }

    /// The epoch-relevant assignment configs (spec §3.9), sorted by key.
    pub fn assignment_configs_map(&self) -> BTreeMap<String, String> {
        let mut m = BTreeMap::new();
        m.insert(
            "num.standby.replicas".to_string(),
            self.num_standby_replicas.to_string(),
        );
        if !self.rack_aware_assignment_tags.is_empty() {
            m.insert(
                "rack.aware.assignment.tags".to_string(),
                self.rack_aware_assignment_tags.join(","),
            );
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Consumer overrides are clamped to the broker bounds, min first (Kafka's
    /// `GroupConfig.evaluate`), and other groups keep the broker values
    /// (docs/consumer-protocol.md §K8.1).
    #[test]
    fn consumer_timings_clamp_overrides_to_the_broker_bounds() {
        let mut c = CoordinatorConfig::default();
        assert_eq!(
            c.consumer_timings("g"),
            ConsumerGroupTimings {
                session_timeout_ms: 45_000,
                heartbeat_interval_ms: 5_000,
                assignment_interval_ms: 1_000,
            }
        );
        c.group_overrides.insert(
            "g".into(),
            GroupConfig {
                consumer_session_timeout_ms: Some(90_000),
                consumer_heartbeat_interval_ms: Some(1_000),
                consumer_assignment_interval_ms: Some(7_000),
                ..Default::default()
            },
        );
        let t = c.consumer_timings("g");
        assert_eq!(t.session_timeout_ms, 60_000);
        assert_eq!(t.heartbeat_interval_ms, 5_000);
        assert_eq!(t.assignment_interval_ms, 7_000);
        assert_eq!(c.consumer_timings("other").session_timeout_ms, 45_000);
        // Crossed bounds: checked against the minimum first, as in Kafka.
        c.consumer.min_session_timeout_ms = 70_000;
        assert_eq!(c.consumer_timings("g").session_timeout_ms, 60_000);
        if let Some(o) = c.group_overrides.get_mut("g") {
            o.consumer_session_timeout_ms = Some(50_000);
        }
        assert_eq!(c.consumer_timings("g").session_timeout_ms, 70_000);
    }

    /// The allocation-free comparison agrees with building the map (spec §3.9).
    #[test]
    fn assignment_configs_match_agrees_with_the_map() {
        let base = CoordinatorConfig::default().for_group("g");
        let with_tags = EffectiveGroupConfig {
            rack_aware_assignment_tags: vec!["zone".into(), "rack".into()],
            num_standby_replicas: 1,
            ..base.clone()
        };
        let configs = [base.clone(), with_tags.clone()];
        for a in &configs {
            for b in &configs {
                let stored = b.assignment_configs_map();
                assert_eq!(
                    a.assignment_configs_match(&stored),
                    a.assignment_configs_map() == stored
                );
            }
            assert!(!a.assignment_configs_match(&BTreeMap::new()));
        }
        let mut extra = base.assignment_configs_map();
        extra.insert("x".into(), "y".into());
        assert!(!base.assignment_configs_match(&extra));
    }
}
