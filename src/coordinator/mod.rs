//! The group coordinator state machine: streams groups (spec §2-§4, §6, §8), classic groups
//! (docs/classic-protocol.md) and committed offsets.
//!
//! Public contract (the server and the simulation code against it):
//! * `Coordinator::new(CoordinatorConfig)`
//! * streams groups: `streams_group_heartbeat(now, &RequestContext,
//!   &StreamsGroupHeartbeatRequest) -> Outcome<StreamsGroupHeartbeatResponse>`,
//!   `streams_group_describe(&StreamsGroupDescribeRequest, api_version) ->
//!   StreamsGroupDescribeResponse`
//! * classic groups: `classic_join(now, &RequestContext, &JoinGroupRequest, RequestToken)` and
//!   `classic_sync(now, &SyncGroupRequest, RequestToken)` (both `-> Outcome<()>`: the answer comes
//!   later through `take_completed() -> Vec<Completed>`), `classic_heartbeat(now,
//!   &HeartbeatRequest) -> Outcome<ErrorCode>`, `classic_leave(now, &LeaveGroupRequest) ->
//!   Outcome<LeaveGroupResponse>`, `describe_groups(&[String], api_version) ->
//!   Vec<DescribedClassicGroup>`
//! * every group: `list_groups(states_filter: &[String], types_filter: &[String]) ->
//!   Vec<ListedGroup>`, `delete_groups(now, &[String]) -> Outcome<Vec<(String, ErrorCode)>>`
//! * offsets: `offset_commit(now, &OffsetCommitInput) -> Outcome<OffsetCommitResult>`,
//!   `offset_fetch(&OffsetFetchInput) -> Result<Vec<FetchedOffset>, ApiError>`,
//!   `offset_delete(now, group_id, &[(String, Vec<i32>)]) -> Outcome<OffsetDeleteResponse>`
//! * `set_metadata(MetadataImage)`: topic changes (the caller owns the topic registry)
//! * `next_timer() -> Option<(Millis, TimerKey)>` (`next_deadline()` without the key),
//!   `fire_due_timers(now) -> Vec<Outcome<()>>`
//! * `replay(&Record) -> Result<(), ReplayError>` and `on_loaded(now) -> Vec<TimerChange>`
//!
//! An operation applies all of its records or none: if one could not be stored as it is or
//! could not replay, the operation answers UNKNOWN_SERVER_ERROR and changes nothing.

use serde::{Deserialize, Serialize};

use crate::records::Record;
use crate::topology::InternalTopic;
use crate::types::Millis;

/// Who sent a request (spec §3.4 step C: client id and host come from the request context).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RequestContext {
    /// The client id of the request.
    pub client_id: String,
    /// Java format, e.g. `/127.0.0.1`.
    pub client_host: String,
    /// The request's API version (status 6 only for v1+).
    pub api_version: i16,
}

/// A timer, by Kafka's key (spec §3.13).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "kind")]
#[non_exhaustive]
pub enum TimerKey {
    /// A member's session: it expires unless the member heartbeats (§3.13).
    SessionTimeout {
        /// The group.
        group_id: String,
        /// The member.
        member_id: String,
    },
    /// A member's deadline to revoke tasks after a rebalance.
    RebalanceTimeout {
        /// The group.
        group_id: String,
        /// The member.
        member_id: String,
    },
    /// The delay before a new group's first assignment.
    InitialRebalance {
        /// The group.
        group_id: String,
    },
    /// A classic member's session (Kafka's `heartbeat-{group}-{member}`).
    ClassicHeartbeat {
        /// The group.
        group_id: String,
        /// The member.
        member_id: String,
    },
    /// The end of a classic group's join phase (`join-{group}`).
    ClassicJoin {
        /// The group.
        group_id: String,
    },
    /// The deadline for a classic group's SyncGroups (`sync-{group}`; tag: the generation).
    ClassicSync {
        /// The group.
        group_id: String,
    },
    /// A consumer group's regular expressions to resolve against the topics (Kafka's
    /// asynchronous `{group}-regex` task, docs/consumer-protocol.md §K3.9), due at once.
    ConsumerRegex {
        /// The group.
        group_id: String,
    },
    /// A classic-protocol member of a consumer group told to rejoin must send JoinGroup in
    /// time (Kafka's `join-{group}-{member}`, docs/consumer-protocol.md §K11.3).
    ConsumerClassicJoin {
        /// The group.
        group_id: String,
        /// The member.
        member_id: String,
    },
    /// A classic-protocol member of a consumer group that joined must send SyncGroup in time
    /// (Kafka's `sync-{group}-{member}`, docs/consumer-protocol.md §K11.3).
    ConsumerClassicSync {
        /// The group.
        group_id: String,
        /// The member.
        member_id: String,
    },
}

impl TimerKey {
    /// The classic group whose timer this is (a member's session, the end of the join phase,
    /// the SyncGroup deadline); `None` for the timers of other group types.
    pub fn classic_group(&self) -> Option<&str> {
        match self {
            TimerKey::ClassicHeartbeat { group_id, .. }
            | TimerKey::ClassicJoin { group_id }
            | TimerKey::ClassicSync { group_id } => Some(group_id),
            _ => None,
        }
    }
}

/// A change to the timer table, returned by every operation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op")]
#[non_exhaustive]
pub enum TimerChange {
    /// Arm (or re-arm) a timer.
    Schedule {
        /// The timer.
        key: TimerKey,
        /// When it fires.
        deadline: Millis,
    },
    /// Disarm a timer.
    Cancel {
        /// The timer.
        key: TimerKey,
    },
}

/// What an operation produced: the response, the records it wrote (already applied), the timer
/// changes (already applied to the table) and internal topics the caller should create.
///
/// `#[must_use]`: dropping an outcome drops records that are already applied, so the state
/// would no longer match the log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[must_use = "the records are already applied: persist them (and apply the timer changes)"]
pub struct Outcome<R> {
    /// The response to send.
    pub response: R,
    /// The records written, in order: persist them before sending the response.
    pub records: Vec<Record>,
    /// The timer changes made.
    pub timers: Vec<TimerChange>,
    /// Internal topics the caller should create (as a broker auto-creates them).
    pub topics_to_create: Vec<InternalTopic>,
}

pub(crate) mod classic;
pub(crate) mod consumer;
mod describe;
pub(crate) mod draft;
pub(crate) mod group;
mod heartbeat;
pub(crate) mod limits;
mod offload;
mod offsets;
mod reconcile;
mod registry;
mod replay;
mod target;
mod timers;

use crate::util::map::BTreeMap;

use crate::config::CoordinatorConfig;
use crate::topology::MetadataImage;

pub use classic::{ClassicReply, Completed, RequestToken};
pub use describe::ListedGroup;
pub use draft::{
    Dialect, DraftHeartbeatRequest, DraftHeartbeatResponse, DraftInitializeRequest,
    DraftInitializeResponse, topology_id,
};
pub use group::{GroupState, StreamsGroup, StreamsMember};
pub use offsets::{
    FetchedOffset, GroupOffsets, OffsetCommitInput, OffsetCommitPartition, OffsetCommitResult,
    OffsetCommitTopic, OffsetFetchInput,
};
pub use replay::ReplayError;
pub use target::{AssignmentJob, AssignmentResult};

impl<R> Outcome<R> {
    fn new(response: R) -> Outcome<R> {
        Outcome {
            response,
            records: Vec::new(),
            timers: Vec::new(),
            topics_to_create: Vec::new(),
        }
    }
}

/// The coordinator: every group, the committed offsets, the timer table and the topic view.
///
/// Sans-IO: each operation takes `now` and returns an [`Outcome`]. Records in an outcome have
/// already been applied through [`Coordinator::replay`], the same path a restart takes.
#[derive(Debug, Clone)]
pub struct Coordinator {
    config: CoordinatorConfig,
    groups: registry::GroupRegistry,
    offsets: offsets::OffsetsTable,
    timers: timers::Timers,
    metadata: MetadataImage,
    /// Topic ids given from outside (a real broker's, for comparisons); the others are derived
    /// from the name ([`crate::assignor::consumer::TopicId::from_name`]).
    topic_ids: BTreeMap<String, crate::assignor::consumer::TopicId>,
    metadata_versions: MetadataVersions,
    classic: classic::ClassicRuntime,
    offload: offload::Offload,
}

/// Versions of the topic view (Kafka's metadata image offsets): regular expressions remember the
/// version they were resolved against and are resolved again once a topic was created after it
/// (docs/consumer-protocol.md §K3.9).
#[derive(Debug, Clone, Copy, Default)]
struct MetadataVersions {
    /// Bumped by every change of the view.
    current: i64,
    /// The version of the last change that created a topic.
    last_with_new_topics: i64,
}

impl Coordinator {
    /// An empty coordinator: no groups, no topics.
    pub fn new(config: CoordinatorConfig) -> Coordinator {
        Coordinator {
            config,
            groups: registry::GroupRegistry::default(),
            offsets: offsets::OffsetsTable::default(),
            timers: timers::Timers::default(),
            metadata: MetadataImage::default(),
            topic_ids: BTreeMap::new(),
            metadata_versions: MetadataVersions::default(),
            classic: classic::ClassicRuntime::default(),
            offload: offload::Offload::default(),
        }
    }

    /// The configuration in force.
    pub fn config(&self) -> &CoordinatorConfig {
        &self.config
    }

    /// Replace the configuration (group-level overrides included).
    pub fn set_config(&mut self, config: CoordinatorConfig) {
        self.config = config;
    }

    /// Use these ids for these topics instead of ids derived from their names (consumer groups
    /// see topics by id, and Kafka's assignors iterate topics in the hash order of their ids: a
    /// comparison with a real broker needs the broker's ids).
    pub fn set_topic_ids(&mut self, ids: BTreeMap<String, crate::assignor::consumer::TopicId>) {
        self.topic_ids = ids;
    }

    /// Give the next member that joins without a member id this id instead of a derived one
    /// (`None` takes back an id not used yet). Kafka draws such ids at random and its assignors
    /// order members by their hash: a replay that compares with a real broker needs the
    /// broker's ids. Not reachable from the wire.
    pub fn supply_member_id(&mut self, id: Option<String>) {
        self.classic.supplied_member_id = id;
    }

    /// The id of a topic: the one given by [`Self::set_topic_ids`], else derived from its name.
    pub fn topic_id(&self, name: &str) -> crate::assignor::consumer::TopicId {
        consumer::topic_id_of(&self.topic_ids, name)
    }

    /// The topic view the coordinator works with.
    pub fn metadata(&self) -> &MetadataImage {
        &self.metadata
    }

    /// Replace the topic view. Groups whose required topics were created, changed or deleted
    /// recompute their metadata hash and topology on their next heartbeat (spec §3.8).
    pub fn set_metadata(&mut self, image: MetadataImage) {
        let mut changed: Vec<&String> = Vec::new();
        for (t, n) in &image.topics {
            if self.metadata.topics.get(t) != Some(n) {
                changed.push(t);
            }
        }
        for t in self.metadata.topics.keys() {
            if !image.topics.contains_key(t) {
                changed.push(t);
            }
        }
        if !changed.is_empty() {
            self.metadata_versions.current += 1;
            if image
                .topics
                .keys()
                .any(|t| !self.metadata.topics.contains_key(t))
            {
                self.metadata_versions.last_with_new_topics = self.metadata_versions.current;
            }
            for g in self.groups.all_streams_mut() {
                let Some(topology) = &g.topology else {
                    continue;
                };
                let required = topology.required_topics();
                if changed.iter().any(|t| required.contains(*t)) {
                    g.metadata_refresh_deadline = (Millis(0), 0);
                }
            }
            // Consumer groups subscribed to a changed topic refresh on their next heartbeat
            // (docs/consumer-protocol.md §K3.6).
            for g in self.groups.all_consumer_mut() {
                let topics = g.subscribed_topics_with(None, None);
                if changed.iter().any(|t| topics.contains(*t)) {
                    g.metadata_refresh_deadline = (Millis(0), 0);
                }
            }
        }
        self.metadata = image;
    }

    /// A streams group, for reading.
    pub fn group(&self, group_id: &str) -> Option<&StreamsGroup> {
        self.groups.streams(group_id)
    }

    /// Every streams group.
    pub fn groups(&self) -> impl Iterator<Item = &StreamsGroup> {
        self.groups.all_streams()
    }

    /// Group ids, sorted.
    pub fn group_ids(&self) -> Vec<String> {
        self.groups.ids().cloned().collect()
    }

    /// The committed offsets of a group.
    pub fn offsets(&self, group_id: &str) -> Option<&GroupOffsets> {
        self.offsets.get(group_id)
    }

    /// Per committed (topic, partition): the highest offset any group committed for it, in no
    /// particular order.
    pub fn offset_floors(&self) -> Vec<((String, i32), i64)> {
        let mut floors: rustc_hash::FxHashMap<(&str, i32), i64> = Default::default();
        for (_, offsets) in self.offsets.unordered() {
            for (topic, partition, v) in offsets.iter() {
                let floor = floors.entry((topic, partition)).or_insert(v.offset);
                *floor = (*floor).max(v.offset);
            }
        }
        floors
            .into_iter()
            .map(|((t, p), offset)| ((t.to_string(), p), offset))
            .collect()
    }

    /// Earliest armed timer.
    #[must_use]
    pub fn next_timer(&self) -> Option<(Millis, TimerKey)> {
        self.timers.next()
    }

    /// The earliest timer deadline (what a driver sleeps until), without copying its key.
    #[must_use]
    pub fn next_deadline(&self) -> Option<Millis> {
        self.timers.next_deadline()
    }

    /// Deadline of one timer, if armed.
    #[must_use]
    pub fn timer_deadline(&self, key: &TimerKey) -> Option<Millis> {
        self.timers.deadline(key)
    }

    /// Every armed timer key.
    #[must_use]
    pub fn timer_keys(&self) -> Vec<TimerKey> {
        self.timers.keys().cloned().collect()
    }

    /// Fire every timer due at `now`, in deadline order.
    #[must_use = "the fired timers' records are already applied: persist them"]
    pub fn fire_due_timers(&mut self, now: Millis) -> Vec<Outcome<()>> {
        let mut out = Vec::new();
        while let Some((key, tag)) = self.timers.pop_due(now) {
            out.push(self.fire(now, key, tag));
        }
        out
    }

    /// Fire the first timer due at `now`, if any: its key and what it did. One step of
    /// [`Coordinator::fire_due_timers`], for a caller that looks at a group after each timer
    /// (the server's live view notes each classic group's rebalance phases).
    #[must_use = "the fired timer's records are already applied: persist them"]
    pub fn fire_next_due(&mut self, now: Millis) -> Option<(TimerKey, Outcome<()>)> {
        let (key, tag) = self.timers.pop_due(now)?;
        Some((key.clone(), self.fire(now, key, tag)))
    }

    /// Arm the timers as Kafka does after loading (spec §3.13): a session timeout for every
    /// member, a rebalance timeout for members in `UNREVOKED_TASKS`.
    #[must_use = "the re-armed timers must reach the caller's timer view"]
    pub fn on_loaded(&mut self, now: Millis) -> Vec<TimerChange> {
        let mut changes = Vec::new();
        let mut arm = Vec::new();
        for g in self.groups.all_streams_mut() {
            g.configured_topology = None;
            g.metadata_refresh_deadline = (Millis(0), 0);
            let session = self.config.for_group(&g.group_id).session_timeout_ms;
            for m in g.members.values() {
                arm.push((
                    TimerKey::SessionTimeout {
                        group_id: g.group_id.clone(),
                        member_id: m.member_id.clone(),
                    },
                    now.plus(session as i64),
                    0,
                ));
                if m.state == crate::records::MemberState::UnrevokedTasks {
                    arm.push((
                        TimerKey::RebalanceTimeout {
                            group_id: g.group_id.clone(),
                            member_id: m.member_id.clone(),
                        },
                        now.plus(m.rebalance_timeout_ms.max(0) as i64),
                        m.member_epoch,
                    ));
                }
            }
        }
        for (k, d, tag) in arm {
            changes.push(self.timers.schedule(k, d, tag));
        }
        changes.extend(self.classic_on_loaded(now));
        changes.extend(self.consumer_on_loaded(now));
        changes
    }

    /// Stable hex hash of the persistent state: equal for a live coordinator and one rebuilt by
    /// replaying its records.
    pub fn state_hash(&self) -> String {
        let groups: Vec<_> = self
            .groups
            .all_streams()
            .map(StreamsGroup::persistent_view)
            .collect();
        let offsets = self.offsets.sorted_rows();
        // Classic groups: the last GroupMetadata value written (docs/classic-protocol.md §C7); a
        // group never written (created over committed offsets) is not persistent state.
        let classic: Vec<_> = self
            .groups
            .all_classic()
            .filter_map(|g| Some((&g.group_id, g.persisted.as_ref()?)))
            .collect();
        let consumer: Vec<_> = self
            .groups
            .all_consumer()
            .map(consumer::ConsumerGroup::persistent_view)
            .collect();
        let json = if classic.is_empty() && consumer.is_empty() {
            serde_json::to_vec(&(groups, offsets))
        } else if consumer.is_empty() {
            serde_json::to_vec(&(groups, offsets, classic))
        } else {
            serde_json::to_vec(&(groups, offsets, classic, consumer))
        }
        .unwrap_or_default();
        format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&json))
    }

    fn timer_schedule(&mut self, out: &mut Vec<TimerChange>, key: TimerKey, at: Millis, tag: i32) {
        out.push(self.timers.schedule(key, at, tag));
    }

    fn timer_cancel(&mut self, out: &mut Vec<TimerChange>, key: &TimerKey) {
        if let Some(c) = self.timers.cancel(key) {
            out.push(c);
        }
    }
}
