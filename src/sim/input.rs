//! The simulation's inputs (scenario spec, actions) read from JSON by hand, for the wasm module.
//!
//! Same format, defaults and (in serde's wording) error messages as the serde derives in
//! `api.rs`, which the native code keeps using; the tests below hold the two readers together.
//! Structs are built with full struct literals, so a new field fails to compile here until it is
//! read. Unknown fields are ignored, as serde does.

use crate::protocol::{CopartitionGroup, KeyValue, Subtopology, TopicInfo, Topology};
use crate::util::json::{Json, JsonError, parse};
use crate::util::map::BTreeMap;
use crate::wire::RawTaggedField;

use super::api::ACTION_NAMES;
use super::{Action, BreakIt, ClassicSpec, GroupType, ProcessSpec, ScenarioSpec, TimedAction};

type R<T> = Result<T, JsonError>;

/// A `ScenarioSpec` from JSON text.
pub(crate) fn scenario_spec(text: &str) -> R<ScenarioSpec> {
    ScenarioSpec::from_json(&parse(text)?)
}

/// A `TimedAction[]` from JSON text.
pub(crate) fn timed_actions(text: &str) -> R<Vec<TimedAction>> {
    Vec::from_json(&parse(text)?)
}

/// An `Action` from JSON text.
pub(crate) fn action(text: &str) -> R<Action> {
    Action::from_json(&parse(text)?)
}

trait FromJson: Sized {
    /// serde's name of what is expected, for "invalid type" messages.
    const EXPECTED: &'static str;
    fn from_json(v: &Json) -> R<Self>;
}

fn invalid<T: FromJson>(v: &Json) -> JsonError {
    JsonError::new(format!(
        "invalid type: {}, expected {}",
        v.kind(),
        T::EXPECTED
    ))
}

/// The members of an object, or serde's "invalid type" error.
fn object<'a, T: FromJson>(v: &'a Json) -> R<Obj<'a>> {
    match v {
        Json::Obj(m) => Ok(Obj(m)),
        _ => Err(invalid::<T>(v)),
    }
}

struct Obj<'a>(&'a [(String, Json)]);

impl Obj<'_> {
    fn get(&self, key: &str) -> Option<&Json> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// A field, with its name in the error.
    fn field<T: FromJson>(&self, key: &str) -> Option<R<T>> {
        self.get(key).map(|v| {
            T::from_json(v).map_err(|e| JsonError::new(format!("{} (field `{key}`)", e.msg)))
        })
    }

    /// A field without `#[serde(default)]`.
    fn req<T: FromJson>(&self, key: &str) -> R<T> {
        self.field(key)
            .unwrap_or_else(|| Err(JsonError::new(format!("missing field `{key}`"))))
    }

    /// A field with a default.
    fn or<T: FromJson>(&self, key: &str, default: T) -> R<T> {
        self.field(key).unwrap_or(Ok(default))
    }

    /// An `Option` field (missing or null = `None`).
    fn opt<T: FromJson>(&self, key: &str) -> R<Option<T>> {
        self.or(key, None)
    }

    /// The `unknown_tagged_fields` of a protocol struct.
    fn tagged(&self) -> R<Vec<RawTaggedField>> {
        self.or("unknown_tagged_fields", Vec::new())
    }
}

macro_rules! ints {
    ($($t:ty),*) => {$(
        impl FromJson for $t {
            const EXPECTED: &'static str = stringify!($t);
            fn from_json(v: &Json) -> R<$t> {
                match v {
                    Json::Num(n) => n.parse().map_err(|_| {
                        let what = if v.kind() == "integer" { "invalid value" } else { "invalid type" };
                        JsonError::new(format!("{what}: {} `{n}`, expected {}", v.kind(), Self::EXPECTED))
                    }),
                    _ => Err(invalid::<$t>(v)),
                }
            }
        }
    )*};
}
ints!(u8, i16, i32, u32, i64, u64);

impl FromJson for bool {
    const EXPECTED: &'static str = "a boolean";
    fn from_json(v: &Json) -> R<bool> {
        match v {
            Json::Bool(b) => Ok(*b),
            _ => Err(invalid::<bool>(v)),
        }
    }
}

impl FromJson for String {
    const EXPECTED: &'static str = "a string";
    fn from_json(v: &Json) -> R<String> {
        match v {
            Json::Str(s) => Ok(s.clone()),
            _ => Err(invalid::<String>(v)),
        }
    }
}

impl<T: FromJson> FromJson for Option<T> {
    const EXPECTED: &'static str = T::EXPECTED;
    fn from_json(v: &Json) -> R<Option<T>> {
        match v {
            Json::Null => Ok(None),
            _ => T::from_json(v).map(Some),
        }
    }
}

impl<T: FromJson> FromJson for Vec<T> {
    const EXPECTED: &'static str = "a sequence";
    fn from_json(v: &Json) -> R<Vec<T>> {
        match v {
            Json::Arr(items) => items.iter().map(T::from_json).collect(),
            _ => Err(invalid::<Vec<T>>(v)),
        }
    }
}

impl<V: FromJson> FromJson for BTreeMap<String, V> {
    const EXPECTED: &'static str = "a map";
    fn from_json(v: &Json) -> R<BTreeMap<String, V>> {
        let o = object::<Self>(v)?;
        let mut m = BTreeMap::new();
        for (k, v) in o.0 {
            m.insert(k.clone(), V::from_json(v)?);
        }
        Ok(m)
    }
}

impl FromJson for (i64, i64) {
    const EXPECTED: &'static str = "a tuple of size 2";
    fn from_json(v: &Json) -> R<(i64, i64)> {
        match v {
            Json::Arr(items) if items.len() == 2 => {
                Ok((i64::from_json(&items[0])?, i64::from_json(&items[1])?))
            }
            Json::Arr(items) => Err(JsonError::new(format!(
                "invalid length {}, expected a tuple of size 2",
                items.len()
            ))),
            _ => Err(invalid::<Self>(v)),
        }
    }
}

impl FromJson for RawTaggedField {
    const EXPECTED: &'static str = "struct RawTaggedField";
    fn from_json(v: &Json) -> R<Self> {
        let o = object::<Self>(v)?;
        Ok(RawTaggedField {
            tag: o.req("tag")?,
            data: o.req("data")?,
        })
    }
}

impl FromJson for KeyValue {
    const EXPECTED: &'static str = "struct KeyValue";
    fn from_json(v: &Json) -> R<Self> {
        let o = object::<Self>(v)?;
        Ok(KeyValue {
            key: o.req("key")?,
            value: o.req("value")?,
            unknown_tagged_fields: o.tagged()?,
        })
    }
}

impl FromJson for TopicInfo {
    const EXPECTED: &'static str = "struct TopicInfo";
    fn from_json(v: &Json) -> R<Self> {
        let o = object::<Self>(v)?;
        Ok(TopicInfo {
            name: o.req("name")?,
            partitions: o.req("partitions")?,
            replication_factor: o.req("replication_factor")?,
            topic_configs: o.req("topic_configs")?,
            unknown_tagged_fields: o.tagged()?,
        })
    }
}

impl FromJson for CopartitionGroup {
    const EXPECTED: &'static str = "struct CopartitionGroup";
    fn from_json(v: &Json) -> R<Self> {
        let o = object::<Self>(v)?;
        Ok(CopartitionGroup {
            source_topics: o.req("source_topics")?,
            source_topic_regex: o.req("source_topic_regex")?,
            repartition_source_topics: o.req("repartition_source_topics")?,
            unknown_tagged_fields: o.tagged()?,
        })
    }
}

impl FromJson for Subtopology {
    const EXPECTED: &'static str = "struct Subtopology";
    fn from_json(v: &Json) -> R<Self> {
        let o = object::<Self>(v)?;
        Ok(Subtopology {
            subtopology_id: o.req("subtopology_id")?,
            source_topics: o.req("source_topics")?,
            source_topic_regex: o.req("source_topic_regex")?,
            state_changelog_topics: o.req("state_changelog_topics")?,
            repartition_sink_topics: o.req("repartition_sink_topics")?,
            repartition_source_topics: o.req("repartition_source_topics")?,
            copartition_groups: o.req("copartition_groups")?,
            unknown_tagged_fields: o.tagged()?,
        })
    }
}

impl FromJson for Topology {
    const EXPECTED: &'static str = "struct Topology";
    fn from_json(v: &Json) -> R<Self> {
        let o = object::<Self>(v)?;
        Ok(Topology {
            epoch: o.req("epoch")?,
            subtopologies: o.req("subtopologies")?,
            unknown_tagged_fields: o.tagged()?,
        })
    }
}

impl FromJson for ProcessSpec {
    const EXPECTED: &'static str = "struct ProcessSpec";
    fn from_json(v: &Json) -> R<Self> {
        let o = object::<Self>(v)?;
        Ok(ProcessSpec {
            process_id: o.req("process_id")?,
            threads: o.or("threads", 1)?,
            rack: o.opt("rack")?,
            client_tags: o.or("client_tags", BTreeMap::new())?,
            static_members: o.or("static_members", false)?,
            start_at_ms: o.or("start_at_ms", 0)?,
        })
    }
}

impl FromJson for crate::coordinator::Dialect {
    const EXPECTED: &'static str = "enum Dialect";
    fn from_json(v: &Json) -> R<Self> {
        use crate::coordinator::Dialect;
        match String::from_json(v)
            .map_err(|_| invalid::<Self>(v))?
            .as_str()
        {
            "shipped" => Ok(Dialect::Shipped),
            "draft" => Ok(Dialect::Draft),
            other => Err(JsonError::new(format!(
                "unknown variant `{other}`, expected `shipped` or `draft`"
            ))),
        }
    }
}

impl FromJson for GroupType {
    const EXPECTED: &'static str = "enum GroupType";
    fn from_json(v: &Json) -> R<Self> {
        match String::from_json(v)
            .map_err(|_| invalid::<Self>(v))?
            .as_str()
        {
            "streams" => Ok(GroupType::Streams),
            "classic" => Ok(GroupType::Classic),
            "consumer" => Ok(GroupType::Consumer),
            other => Err(JsonError::new(format!(
                "unknown variant `{other}`, expected one of `streams`, `classic`, `consumer`"
            ))),
        }
    }
}

impl FromJson for ClassicSpec {
    const EXPECTED: &'static str = "struct ClassicSpec";
    fn from_json(v: &Json) -> R<Self> {
        let o = object::<Self>(v)?;
        let d = ClassicSpec::default();
        Ok(ClassicSpec {
            assignors: o.or("assignors", d.assignors)?,
            subscription: o.or("subscription", d.subscription)?,
            session_timeout_ms: o.or("session_timeout_ms", d.session_timeout_ms)?,
            heartbeat_interval_ms: o.or("heartbeat_interval_ms", d.heartbeat_interval_ms)?,
            max_poll_interval_ms: o.or("max_poll_interval_ms", d.max_poll_interval_ms)?,
        })
    }
}

impl FromJson for BreakIt {
    const EXPECTED: &'static str = "struct BreakIt";
    fn from_json(v: &Json) -> R<Self> {
        let o = object::<Self>(v)?;
        Ok(BreakIt {
            double_assign: o.or("double_assign", false)?,
            skip_revocation: o.or("skip_revocation", false)?,
            no_fencing: o.or("no_fencing", false)?,
            drop_records_on_restart: o.or("drop_records_on_restart", false)?,
        })
    }
}

impl FromJson for ScenarioSpec {
    const EXPECTED: &'static str = "struct ScenarioSpec";
    fn from_json(v: &Json) -> R<Self> {
        let o = object::<Self>(v)?;
        Ok(ScenarioSpec {
            name: o.req("name")?,
            description: o.or("description", String::new())?,
            seed: o.req("seed")?,
            group_id: o.req("group_id")?,
            topics: o.req("topics")?,
            topology: o.or("topology", Topology::default())?,
            processes: o.req("processes")?,
            configs: o.or("configs", BTreeMap::new())?,
            latency_ms: o.or("latency_ms", (0, 0))?,
            auto_create_internal_topics: o.or("auto_create_internal_topics", true)?,
            group_type: o.or("group_type", GroupType::default())?,
            classic: o.or("classic", ClassicSpec::default())?,
            break_it: o.or("break_it", BreakIt::default())?,
            dialect: o.or("dialect", Default::default())?,
        })
    }
}

impl FromJson for Action {
    const EXPECTED: &'static str = "internally tagged enum Action";
    fn from_json(v: &Json) -> R<Self> {
        let o = object::<Self>(v)?;
        let name: String = o.req("action")?;
        let member = || o.req("member");
        Ok(match name.as_str() {
            "add_member" => Action::AddMember {
                process_id: o.req("process_id")?,
            },
            "add_process" => Action::AddProcess {
                process: o.req("process")?,
            },
            "crash_member" => Action::CrashMember { member: member()? },
            "leave_member" => Action::LeaveMember { member: member()? },
            "static_bounce" => Action::StaticBounce {
                member: member()?,
                down_ms: o.req("down_ms")?,
            },
            "cut_network" => Action::CutNetwork { member: member()? },
            "heal_network" => Action::HealNetwork { member: member()? },
            "restart_coordinator" => Action::RestartCoordinator,
            "bump_topology_epoch" => Action::BumpTopologyEpoch,
            "add_partitions" => Action::AddPartitions {
                topic: o.req("topic")?,
                partitions: o.req("partitions")?,
            },
            "create_topic" => Action::CreateTopic {
                topic: o.req("topic")?,
                partitions: o.req("partitions")?,
            },
            "request_shutdown" => Action::RequestShutdown { member: member()? },
            "set_standby_replicas" => Action::SetStandbyReplicas {
                replicas: o.req("replicas")?,
            },
            "set_assignor" => Action::SetAssignor {
                name: o.req("name")?,
            },
            "restart_member" => Action::RestartMember { member: member()? },
            "stall_member" => Action::StallMember {
                member: member()?,
                ms: o.req("ms")?,
            },
            "set_message_loss" => Action::SetMessageLoss {
                percent: o.req("percent")?,
            },
            other => {
                let mut msg = format!("unknown variant `{other}`, expected one of ");
                for (i, n) in ACTION_NAMES.iter().enumerate() {
                    if i > 0 {
                        msg.push_str(", ");
                    }
                    msg.push('`');
                    msg.push_str(n);
                    msg.push('`');
                }
                return Err(JsonError::new(msg));
            }
        })
    }
}

impl FromJson for TimedAction {
    const EXPECTED: &'static str = "struct TimedAction";
    fn from_json(v: &Json) -> R<Self> {
        let o = object::<Self>(v)?;
        Ok(TimedAction {
            at_ms: o.req("at_ms")?,
            action: Action::from_json(v)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::presets;

    #[test]
    fn every_preset_reads_back_as_serde_wrote_it() {
        for (spec, actions) in presets() {
            let json = serde_json::to_string(&spec).unwrap();
            assert_eq!(scenario_spec(&json).unwrap(), spec, "{}", spec.name);
            let json = serde_json::to_string(&actions).unwrap();
            assert_eq!(timed_actions(&json).unwrap(), actions, "{}", spec.name);
        }
    }

    #[test]
    fn every_field_and_default_agrees_with_serde() {
        let (mut spec, _) = presets().remove(0);
        spec.break_it.drop_records_on_restart = true;
        spec.break_it.no_fencing = true;
        spec.group_type = GroupType::Consumer;
        spec.classic.assignors = vec!["sticky".into()];
        spec.classic.session_timeout_ms = 7;
        spec.latency_ms = (3, 9);
        spec.auto_create_internal_topics = false;
        spec.configs.insert("a".into(), "b".into());
        spec.processes[0].rack = Some("r1".into());
        spec.processes[0].client_tags.insert("z".into(), "1".into());
        spec.processes[0].static_members = true;
        spec.processes[0].start_at_ms = 5;
        spec.topology.unknown_tagged_fields.push(RawTaggedField {
            tag: 9,
            data: vec![1, 255],
        });
        let json = serde_json::to_string(&spec).unwrap();
        assert_eq!(scenario_spec(&json).unwrap(), spec);
        // Minimal specs: defaults filled in the same way.
        for json in [
            r#"{"name":"n","seed":1,"group_id":"g","topics":{"t":2},"processes":[{"process_id":"p"}]}"#,
            r#"{"name":"n","seed":1,"group_id":"g","topics":{},"processes":[],"classic":{},"break_it":{"no_fencing":true},"group_type":"classic"}"#,
            r#"{"name":"n","seed":1,"group_id":"g","topics":{},"processes":[],"topology":{"epoch":2,"subtopologies":[{"subtopology_id":"0","source_topics":["a"],"source_topic_regex":[],"state_changelog_topics":[{"name":"c","partitions":0,"replication_factor":1,"topic_configs":[{"key":"k","value":"v"}]}],"repartition_sink_topics":[],"repartition_source_topics":[],"copartition_groups":[{"source_topics":[0],"source_topic_regex":[],"repartition_source_topics":[]}]}]}}"#,
        ] {
            let ours = scenario_spec(json).unwrap();
            let theirs: ScenarioSpec = serde_json::from_str(json).unwrap();
            assert_eq!(ours, theirs, "{json}");
        }
    }

    #[test]
    fn every_action_agrees_with_serde() {
        for name in ACTION_NAMES {
            let json = format!(
                r#"{{"action":"{name}","at_ms":12,"process_id":"p","process":{{"process_id":"q","threads":2}},"member":"m","down_ms":1,"topic":"t","partitions":2,"replicas":1,"name":"n","percent":3,"ms":4}}"#
            );
            let theirs: TimedAction = serde_json::from_str(&json).unwrap();
            assert_eq!(action(&json).unwrap(), theirs.action, "{name}");
            assert_eq!(timed_actions(&format!("[{json}]")).unwrap(), vec![theirs]);
        }
    }

    #[test]
    fn errors_name_the_problem_as_serde_does() {
        let err = |s: &str| action(s).unwrap_err().to_string();
        assert!(err(r#"{"action":"crash_member"}"#).starts_with("missing field `member`"));
        assert!(err(r#"{"member":"m1"}"#).starts_with("missing field `action`"));
        assert!(
            err(r#"{"action":"fly_to_moon"}"#)
                .starts_with("unknown variant `fly_to_moon`, expected one of `add_member`, ")
        );
        assert!(
            timed_actions(r#"[{"action":"restart_coordinator"}]"#)
                .unwrap_err()
                .to_string()
                .starts_with("missing field `at_ms`")
        );
        assert_eq!(
            action(r#"{"topic":"x","action":"bump_topology_epoch","extra":[1]}"#).unwrap(),
            Action::BumpTopologyEpoch
        );
        let spec = |s: &str| scenario_spec(s).unwrap_err().to_string();
        assert!(spec(r#"{"seed":"#).contains("EOF"));
        assert!(spec("[]").starts_with("invalid type: sequence, expected struct ScenarioSpec"));
        let m = spec(r#"{"name":"n","seed":-1,"group_id":"g","topics":{},"processes":[]}"#);
        assert!(
            m.starts_with("invalid value: integer `-1`, expected u64"),
            "{m}"
        );
        assert!(m.contains("`seed`"), "{m}");
        let m = spec(r#"{"name":"n","seed":1.5,"group_id":"g","topics":{},"processes":[]}"#);
        assert!(m.starts_with("invalid type: floating point `1.5`"), "{m}");
        let m = spec(
            r#"{"name":"n","seed":1,"group_id":"g","topics":{},"processes":[],"group_type":"x"}"#,
        );
        assert!(m.starts_with("unknown variant `x`"), "{m}");
    }
}
