//! Scenario configs: Kafka broker keys (spec §7) applied onto [`CoordinatorConfig::default`],
//! plus a few `sim.*` keys that shape the simulated clients.

use crate::util::map::BTreeMap;

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

/// Build the coordinator config and the client knobs from scenario configs: `sim.*` keys here,
/// every other key through [`crate::config_keys::build`] (Kafka broker keys and group overrides,
/// validated as Kafka does).
pub fn build_config(
    configs: &BTreeMap<String, String>,
) -> Result<(CoordinatorConfig, SimKnobs), SimError> {
    let mut k = SimKnobs::default();
    let mut broker = BTreeMap::new();
    for (key, value) in configs {
        let v = value.as_str();
        match key.as_str() {
            "sim.rebalance.timeout.ms" => k.rebalance_timeout_ms = int32(key, v, 1)?,
            "sim.request.timeout.ms" => k.request_timeout_ms = int(key, v, 1)?,
            "sim.retry.backoff.ms" => k.retry_backoff_ms = int(key, v, 0)?,
            "sim.topic.creation.delay.ms" => k.topic_creation_delay_ms = int(key, v, 0)?,
            _ if key.starts_with("sim.") => return Err(bad(key, v, "unknown config key")),
            _ => {
                broker.insert(key.clone(), value.clone());
            }
        }
    }
    let parsed = crate::config_keys::build(&broker).map_err(|e| {
        let value = configs.get(&e.key).cloned().unwrap_or_default();
        bad(&e.key, &value, e.message)
    })?;
    Ok((parsed.coordinator, k))
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
