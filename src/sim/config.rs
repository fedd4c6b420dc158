//! Scenario configs: Kafka broker keys (spec §7) applied onto [`CoordinatorConfig::default`],
//! plus a few `sim.*` keys that shape the simulated clients.

use std::collections::BTreeMap;

use crate::config::CoordinatorConfig;

use super::SimError;

/// Client-side knobs of the simulation (not broker configs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimKnobs {
    /// `sim.rebalance.timeout.ms`: the rebalance timeout members send on join (Kafka Streams'
    /// `max.poll.interval.ms`). Default 30000.
    pub rebalance_timeout_ms: i32,
    /// `sim.request.timeout.ms`: a heartbeat without a response after this long has failed.
    /// Default 5000.
    pub request_timeout_ms: i64,
    /// `sim.retry.backoff.ms`: wait after a failed heartbeat. Default 500.
    pub retry_backoff_ms: i64,
    /// `sim.topic.creation.delay.ms`: delay of an internal topic creation. Default 200.
    pub topic_creation_delay_ms: i64,
}

impl Default for SimKnobs {
    fn default() -> Self {
        SimKnobs {
            rebalance_timeout_ms: 30_000,
            request_timeout_ms: 5_000,
            retry_backoff_ms: 500,
            topic_creation_delay_ms: 200,
        }
    }
}

fn bad(key: &str, value: &str, reason: impl Into<String>) -> SimError {
    SimError::Config {
        key: key.to_string(),
        value: value.to_string(),
        reason: reason.into(),
    }
}

fn int(key: &str, value: &str, min: i64) -> Result<i64, SimError> {
    let v: i64 = value
        .trim()
        .parse()
        .map_err(|_| bad(key, value, "not an integer"))?;
    if v < min {
        return Err(bad(key, value, format!("must be >= {min}")));
    }
    Ok(v)
}

fn int32(key: &str, value: &str, min: i64) -> Result<i32, SimError> {
    let v = int(key, value, min)?;
    i32::try_from(v).map_err(|_| bad(key, value, "out of int range"))
}

fn list(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// Build the coordinator config and the client knobs from scenario configs.
pub fn build_config(
    configs: &BTreeMap<String, String>,
) -> Result<(CoordinatorConfig, SimKnobs), SimError> {
    let mut c = CoordinatorConfig::default();
    let mut k = SimKnobs::default();
    for (key, value) in configs {
        let v = value.as_str();
        match key.as_str() {
            "group.streams.session.timeout.ms" => c.session_timeout_ms = int32(key, v, 1)?,
            "group.streams.min.session.timeout.ms" => c.min_session_timeout_ms = int32(key, v, 1)?,
            "group.streams.max.session.timeout.ms" => c.max_session_timeout_ms = int32(key, v, 1)?,
            "group.streams.heartbeat.interval.ms" => c.heartbeat_interval_ms = int32(key, v, 1)?,
            "group.streams.min.heartbeat.interval.ms" => {
                c.min_heartbeat_interval_ms = int32(key, v, 1)?
            }
            "group.streams.max.heartbeat.interval.ms" => {
                c.max_heartbeat_interval_ms = int32(key, v, 1)?
            }
            "group.streams.max.size" => c.max_size = int32(key, v, 1)?,
            "group.streams.num.standby.replicas" => c.num_standby_replicas = int32(key, v, 0)?,
            "group.streams.max.standby.replicas" => c.max_standby_replicas = int32(key, v, 0)?,
            "group.streams.initial.rebalance.delay.ms" => {
                c.initial_rebalance_delay_ms = int32(key, v, 0)?
            }
            "group.streams.assignment.interval.ms" => c.assignment_interval_ms = int32(key, v, 0)?,
            "group.streams.min.assignment.interval.ms" => {
                c.min_assignment_interval_ms = int32(key, v, 0)?
            }
            "group.streams.max.assignment.interval.ms" => {
                c.max_assignment_interval_ms = int32(key, v, 0)?
            }
            "group.streams.assignors" => {
                let l = list(v);
                if l.is_empty() {
                    return Err(bad(key, v, "must not be empty"));
                }
                for a in &l {
                    if crate::assignor::builtin(a).is_none() {
                        return Err(bad(key, v, format!("unknown assignor {a}")));
                    }
                }
                c.assignors = l;
            }
            "group.streams.rack.aware.assignment.tags" => c.rack_aware_assignment_tags = list(v),
            "group.streams.assignor.offload.enable" => {
                c.assignor_offload_enable = match v.trim() {
                    "true" => true,
                    "false" => false,
                    _ => return Err(bad(key, v, "must be true or false")),
                }
            }
            "group.streams.task.offset.interval.ms" => {
                c.task_offset_interval_ms = int32(key, v, 1)?
            }
            "group.streams.min.task.offset.interval.ms" => {
                c.min_task_offset_interval_ms = int32(key, v, 1)?
            }
            "group.streams.num.warmup.replicas" => c.num_warmup_replicas = int32(key, v, 0)?,
            "group.streams.max.warmup.replicas" => c.max_warmup_replicas = int32(key, v, 0)?,
            "group.streams.acceptable.recovery.lag" => c.acceptable_recovery_lag = int(key, v, 0)?,
            "sim.rebalance.timeout.ms" => k.rebalance_timeout_ms = int32(key, v, 1)?,
            "sim.request.timeout.ms" => k.request_timeout_ms = int(key, v, 1)?,
            "sim.retry.backoff.ms" => k.retry_backoff_ms = int(key, v, 0)?,
            "sim.topic.creation.delay.ms" => k.topic_creation_delay_ms = int(key, v, 0)?,
            _ => return Err(bad(key, v, "unknown config key")),
        }
    }
    // Cross-checks of spec §7.
    let check = |ok: bool, key: &str, reason: &str| -> Result<(), SimError> {
        if ok {
            Ok(())
        } else {
            let value = configs.get(key).cloned().unwrap_or_default();
            Err(bad(key, &value, reason))
        }
    };
    check(
        c.min_session_timeout_ms <= c.session_timeout_ms
            && c.session_timeout_ms <= c.max_session_timeout_ms,
        "group.streams.session.timeout.ms",
        "must be within [min, max] session timeout",
    )?;
    check(
        c.min_heartbeat_interval_ms <= c.heartbeat_interval_ms
            && c.heartbeat_interval_ms <= c.max_heartbeat_interval_ms,
        "group.streams.heartbeat.interval.ms",
        "must be within [min, max] heartbeat interval",
    )?;
    check(
        c.heartbeat_interval_ms < c.session_timeout_ms,
        "group.streams.heartbeat.interval.ms",
        "must be smaller than the session timeout",
    )?;
    check(
        c.num_standby_replicas <= c.max_standby_replicas,
        "group.streams.num.standby.replicas",
        "must be <= group.streams.max.standby.replicas",
    )?;
    check(
        c.min_assignment_interval_ms <= c.assignment_interval_ms
            && c.assignment_interval_ms <= c.max_assignment_interval_ms,
        "group.streams.assignment.interval.ms",
        "must be within [min, max] assignment interval",
    )?;
    check(
        c.num_warmup_replicas <= c.max_warmup_replicas,
        "group.streams.num.warmup.replicas",
        "must be <= group.streams.max.warmup.replicas",
    )?;
    Ok((c, k))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_key_and_value_are_named() {
        let mut m = BTreeMap::new();
        m.insert("group.streams.nope".to_string(), "1".to_string());
        let e = build_config(&m).unwrap_err().to_string();
        assert!(e.contains("group.streams.nope"), "{e}");
        let mut m = BTreeMap::new();
        m.insert(
            "group.streams.heartbeat.interval.ms".to_string(),
            "x".to_string(),
        );
        let e = build_config(&m).unwrap_err().to_string();
        assert!(e.contains("heartbeat.interval") && e.contains("x"), "{e}");
    }

    #[test]
    fn keys_apply() {
        let mut m = BTreeMap::new();
        m.insert(
            "group.streams.num.standby.replicas".to_string(),
            "1".to_string(),
        );
        m.insert("sim.rebalance.timeout.ms".to_string(), "1000".to_string());
        let (c, k) = build_config(&m).unwrap();
        assert_eq!(c.num_standby_replicas, 1);
        assert_eq!(k.rebalance_timeout_ms, 1000);
    }
}
