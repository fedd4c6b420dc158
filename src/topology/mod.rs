//! Streams topologies (spec §3.6) and their configuration against topic metadata (§3.7, §3.8).
//!
//! [`StreamsTopology`] is what members declare and what record 23 stores, list order preserved.
//! [`configure_topics`] resolves it against a [`MetadataImage`] the caller supplies (topic ->
//! partition count) into a [`ConfiguredTopology`]: task counts per subtopology, internal topic
//! partition counts, and the internal topics still to create (an output, so the server can create
//! them and the explorer can show them).

mod configure;
mod copartition;
pub(crate) mod endpoints;
mod repartition;

use crate::util::map::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::protocol;

pub use configure::{configure_topics, metadata_hash};
pub use endpoints::partitions_for_tasks;

/// A topic config entry or client tag, in declaration order.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct KeyValue {
    /// The key.
    pub key: String,
    /// The value.
    pub value: String,
}

/// An internal topic as declared by a member.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TopicInfo {
    /// The topic name.
    pub name: String,
    /// 0 = not enforced.
    pub partitions: i32,
    /// 0 = broker default.
    pub replication_factor: i16,
    /// Configs to create the topic with.
    pub topic_configs: Vec<KeyValue>,
}

/// Indices into the enclosing subtopology's lists.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct CopartitionGroup {
    /// Indexes into `source_topics`.
    pub source_topics: Vec<i16>,
    /// Indexes into `source_topic_regex` (ignored, as in Kafka).
    pub source_topic_regex: Vec<i16>,
    /// Indexes into `repartition_source_topics`.
    pub repartition_source_topics: Vec<i16>,
}

/// One subtopology as declared.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Subtopology {
    /// The subtopology id.
    pub subtopology_id: String,
    /// Input topics.
    pub source_topics: Vec<String>,
    /// Input topic patterns (a topology with any is rejected, §3.2).
    pub source_topic_regex: Vec<String>,
    /// Changelog topics of its state stores.
    pub state_changelog_topics: Vec<TopicInfo>,
    /// Repartition topics it writes.
    pub repartition_sink_topics: Vec<String>,
    /// Repartition topics it reads.
    pub repartition_source_topics: Vec<TopicInfo>,
    /// Groups of topics that must be co-partitioned.
    pub copartition_groups: Vec<CopartitionGroup>,
}

/// A topology as declared by members and stored in record 23.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct StreamsTopology {
    /// The topology epoch.
    pub epoch: i32,
    /// The subtopologies, in the order the member sent them.
    pub subtopologies: Vec<Subtopology>,
}

impl StreamsTopology {
    /// Converted 1:1 from the heartbeat request (list order preserved; unknown tags dropped).
    pub fn from_request(t: &protocol::Topology) -> StreamsTopology {
        fn kv(v: &[protocol::KeyValue]) -> Vec<KeyValue> {
            v.iter()
                .map(|k| KeyValue {
                    key: k.key.clone(),
                    value: k.value.clone(),
                })
                .collect()
        }
        fn topic(v: &[protocol::TopicInfo]) -> Vec<TopicInfo> {
            v.iter()
                .map(|t| TopicInfo {
                    name: t.name.clone(),
                    partitions: t.partitions,
                    replication_factor: t.replication_factor,
                    topic_configs: kv(&t.topic_configs),
                })
                .collect()
        }
        StreamsTopology {
            epoch: t.epoch,
            subtopologies: t
                .subtopologies
                .iter()
                .map(|s| Subtopology {
                    subtopology_id: s.subtopology_id.clone(),
                    source_topics: s.source_topics.clone(),
                    source_topic_regex: s.source_topic_regex.clone(),
                    state_changelog_topics: topic(&s.state_changelog_topics),
                    repartition_sink_topics: s.repartition_sink_topics.clone(),
                    repartition_source_topics: topic(&s.repartition_source_topics),
                    copartition_groups: s
                        .copartition_groups
                        .iter()
                        .map(|g| CopartitionGroup {
                            source_topics: g.source_topics.clone(),
                            source_topic_regex: g.source_topic_regex.clone(),
                            repartition_source_topics: g.repartition_source_topics.clone(),
                        })
                        .collect(),
                })
                .collect(),
        }
    }

    /// A subtopology by id.
    pub fn subtopology(&self, id: &str) -> Option<&Subtopology> {
        self.subtopologies.iter().find(|s| s.subtopology_id == id)
    }

    /// Source topics, repartition source topics and changelog topics (spec §3.6), sorted.
    pub fn required_topics(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for s in &self.subtopologies {
            out.extend(s.source_topics.iter().cloned());
            out.extend(s.repartition_source_topics.iter().map(|t| t.name.clone()));
            out.extend(s.state_changelog_topics.iter().map(|t| t.name.clone()));
        }
        out
    }

    /// Source and repartition source topic -> subtopology (for offset-commit validation).
    pub fn source_topic_map(&self) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        for s in &self.subtopologies {
            for t in &s.source_topics {
                out.insert(t.clone(), s.subtopology_id.clone());
            }
            for t in &s.repartition_source_topics {
                out.insert(t.name.clone(), s.subtopology_id.clone());
            }
        }
        out
    }
}

/// What the coordinator knows of the cluster's topics: name -> partition count.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct MetadataImage {
    /// Topic name -> partition count.
    pub topics: BTreeMap<String, i32>,
}

impl MetadataImage {
    /// A topic's partition count, if the topic exists.
    pub fn partitions(&self, topic: &str) -> Option<i32> {
        self.topics.get(topic).copied()
    }
}

/// An internal topic resolved to a partition count (spec §3.6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InternalTopic {
    /// The topic name.
    pub name: String,
    /// Its partition count.
    pub partitions: i32,
    /// `None` = broker default.
    pub replication_factor: Option<i16>,
    /// Configs to create it with.
    pub configs: BTreeMap<String, String>,
}

/// A subtopology resolved against the metadata.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfiguredSubtopology {
    /// Max partition count over source and repartition source topics (> 0).
    pub number_of_tasks: i32,
    /// Input topics.
    pub source_topics: BTreeSet<String>,
    /// Repartition topics it writes.
    pub repartition_sink_topics: BTreeSet<String>,
    /// Repartition topics it reads, resolved.
    pub repartition_source_topics: BTreeMap<String, InternalTopic>,
    /// Changelog topics, resolved (one partition per task).
    pub state_changelog_topics: BTreeMap<String, InternalTopic>,
}

impl ConfiguredSubtopology {
    /// Stateful = has at least one changelog topic (spec §5.2).
    pub fn is_stateful(&self) -> bool {
        !self.state_changelog_topics.is_empty()
    }
}

/// A topology problem that is reported as a heartbeat status, not an error (spec §3.7).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopicConfigurationIssue {
    /// One of `MISSING_SOURCE_TOPICS`, `INCORRECTLY_PARTITIONED_TOPICS`, `MISSING_INTERNAL_TOPICS`.
    pub status_code: i8,
    /// What is wrong, in Kafka's words.
    pub detail: String,
}

/// The result of topic configuration (spec §3.6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfiguredTopology {
    /// The topology epoch this was computed for.
    pub topology_epoch: i32,
    /// The metadata hash this was computed with (§3.8).
    pub metadata_hash: i64,
    /// Present unless `issue` is present; present also with `MISSING_INTERNAL_TOPICS`.
    pub subtopologies: Option<BTreeMap<String, ConfiguredSubtopology>>,
    /// Internal topics that do not exist yet and must be created, by name.
    pub internal_topics_to_create: BTreeMap<String, InternalTopic>,
    /// Why the topology cannot be used yet (a heartbeat status), if so.
    pub issue: Option<TopicConfigurationIssue>,
}

impl ConfiguredTopology {
    /// Ready = no configuration issue.
    pub fn is_ready(&self) -> bool {
        self.issue.is_none()
    }
}

/// The topology cannot work at all: the heartbeat fails with `STREAMS_INVALID_TOPOLOGY` (130).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[error("{message}")]
pub struct InvalidTopology {
    /// Kafka's error message.
    pub message: String,
}
