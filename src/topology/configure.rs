//! Topic configuration (Kafka's `InternalTopicManager`, spec §3.7) and the metadata hash (§3.8).
//!
//! [`configure_topics`] runs the steps of §3.7 in order:
//!
//! 1. every declared source topic must exist (`MISSING_SOURCE_TOPICS`);
//! 2. partition counts are decided for the internal topics: repartition topics by fix-point
//!    inference ([`super::repartition`]), then copartition groups are enforced
//!    ([`super::copartition`]), then changelog topics take the largest input partition count;
//! 3. configured subtopologies are built;
//! 4. internal topics that exist must have the computed count (`INCORRECTLY_PARTITIONED_TOPICS`);
//! 5. the others are reported as `MISSING_INTERNAL_TOPICS` and handed out to be created.
//!
//! Statuses 1-3 are *issues* (the heartbeat succeeds and reports them); a topology that can never
//! work is an [`InvalidTopology`] (`STREAMS_INVALID_TOPOLOGY`).
//!
//! Partition-count lookups always prefer the metadata image; the decided count of an internal
//! topic is only used while that topic does not exist.
//!
//! ## Where this is stricter or more defined than Java
//!
//! * Duplicate subtopology ids make Java fail with an internal error when it builds its map of
//!   subtopologies; here they are an [`InvalidTopology`] (`Duplicate subtopology id X in the
//!   topology.`).
//! * A copartition group index outside its subtopology's list (Java: an
//!   `IndexOutOfBoundsException`, i.e. an internal error) is an [`InvalidTopology`] too, checked
//!   before anything else, whatever the metadata. Indices into `source_topic_regex` are ignored, as
//!   in Java (regex subscriptions are rejected by request validation, §3.2).
//! * Unreachable-in-practice "no partition count" states that Java reports as
//!   `IllegalStateException` are returned as [`InvalidTopology`] instead of panicking.
//! * Duplicate topic names inside one subtopology list, and duplicate topic config keys, do not
//!   fail (Java's `Collectors.toMap` would): the last declaration wins.
//! * Subtopologies are processed in the order Java's `HashMap<String, _>` iterates them (see
//!   [`java_hash_map_order`]), because the repartition fix-point can depend on that order. Within a
//!   subtopology, declaration order is kept. Where Java iterates a hash *set* of topics (which
//!   existing internal topic is reported first, which copartition member fails first), topics are
//!   taken in name order.

use crate::util::map::{BTreeMap, BTreeSet};

use xxhash_rust::xxh3::Xxh3Default;

use super::{
    ConfiguredSubtopology, ConfiguredTopology, InternalTopic, InvalidTopology, MetadataImage,
    StreamsTopology, Subtopology, TopicConfigurationIssue, TopicInfo, copartition, repartition,
};
use crate::protocol::status_code;
use crate::util::sort;

/// Why configuration stopped early: a reportable issue or an invalid topology.
#[derive(Debug)]
pub(super) enum Stop {
    Issue(TopicConfigurationIssue),
    Invalid(InvalidTopology),
}

impl Stop {
    pub(super) fn issue(status_code: i8, detail: impl Into<String>) -> Stop {
        Stop::Issue(TopicConfigurationIssue {
            status_code,
            detail: detail.into(),
        })
    }

    pub(super) fn invalid(message: impl Into<String>) -> Stop {
        Stop::Invalid(InvalidTopology {
            message: message.into(),
        })
    }
}

/// Internal topic name -> decided partition count.
pub(super) type Decided = BTreeMap<String, i32>;

/// The partition count of `topic`: from the metadata image if the topic exists, else the decided
/// count, else unknown.
pub(super) fn partition_count(
    metadata: &MetadataImage,
    decided: &Decided,
    topic: &str,
) -> Option<i32> {
    metadata
        .partitions(topic)
        .or_else(|| decided.get(topic).copied())
}

/// Java's `Map.toString` of a sorted map: `{a=3, b=6}`.
pub(super) fn java_map_string(map: &BTreeMap<String, i32>) -> String {
    let entries: Vec<String> = map.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{{{}}}", entries.join(", "))
}

/// Java's `Collection.toString`: `[a, b]`.
pub(super) fn java_list_string<'a>(items: impl IntoIterator<Item = &'a String>) -> String {
    let items: Vec<&str> = items.into_iter().map(String::as_str).collect();
    format!("[{}]", items.join(", "))
}

/// Up to three names joined by `, `, then ` and N additional topics` (Kafka's `summarizeTopics`).
pub fn summarize_topics<'a>(topics: impl IntoIterator<Item = &'a String>) -> String {
    let topics: Vec<&str> = topics.into_iter().map(String::as_str).collect();
    if topics.is_empty() {
        return "<none>".to_string();
    }
    let shown = topics
        .iter()
        .take(3)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if topics.len() > 3 {
        format!("{shown} and {} additional topics", topics.len() - 3)
    } else {
        shown
    }
}

/// The order in which Java iterates a `HashMap<String, _>` filled with `ids` in list order
/// (default capacity 16, load factor 0.75): by bucket index of the spread `String.hashCode`, ties
/// in insertion order. Exact except for buckets Java turns into trees (8+ colliding ids with 64+
/// buckets), which real topologies never reach. `ids` must be distinct.
pub fn java_hash_map_order(ids: &[&str]) -> Vec<usize> {
    let mut capacity: usize = 16;
    while ids.len() > capacity / 4 * 3 {
        capacity *= 2;
    }
    let bucket = |id: &str| {
        let h = id
            .encode_utf16()
            .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)));
        let spread = (h as u32) ^ ((h as u32) >> 16);
        spread as usize & (capacity - 1)
    };
    let mut order: Vec<usize> = (0..ids.len()).collect();
    sort::by_key(&mut order, |&i| bucket(ids[i]));
    order
}

/// The subtopologies in processing order; duplicate ids are an invalid topology.
fn processing_order(topology: &StreamsTopology) -> Result<Vec<&Subtopology>, InvalidTopology> {
    let mut seen = BTreeSet::new();
    for s in &topology.subtopologies {
        if !seen.insert(s.subtopology_id.as_str()) {
            return Err(InvalidTopology {
                message: format!(
                    "Duplicate subtopology id {} in the topology.",
                    s.subtopology_id
                ),
            });
        }
    }
    let ids: Vec<&str> = topology
        .subtopologies
        .iter()
        .map(|s| s.subtopology_id.as_str())
        .collect();
    Ok(java_hash_map_order(&ids)
        .into_iter()
        .map(|i| &topology.subtopologies[i])
        .collect())
}

/// Resolve a subtopology's copartition groups to topic-name sets (source topics and repartition
/// source topics by index; regex indices are ignored). An index out of range is invalid.
fn copartition_groups(subtopology: &Subtopology) -> Result<Vec<BTreeSet<String>>, InvalidTopology> {
    fn resolve<'a, T>(
        subtopology: &Subtopology,
        list: &'a [T],
        kind: &str,
        index: i16,
    ) -> Result<&'a T, InvalidTopology> {
        usize::try_from(index)
            .ok()
            .and_then(|i| list.get(i))
            .ok_or_else(|| InvalidTopology {
                message: format!(
                    "Copartition group of subtopology {} refers to {kind} index {index}, but the \
                 subtopology has {} {kind}s.",
                    subtopology.subtopology_id,
                    list.len()
                ),
            })
    }
    subtopology
        .copartition_groups
        .iter()
        .map(|group| {
            let mut topics = BTreeSet::new();
            for &i in &group.source_topics {
                topics.insert(
                    resolve(subtopology, &subtopology.source_topics, "source topic", i)?.clone(),
                );
            }
            for &i in &group.repartition_source_topics {
                let info = resolve(
                    subtopology,
                    &subtopology.repartition_source_topics,
                    "repartition source topic",
                    i,
                )?;
                topics.insert(info.name.clone());
            }
            Ok(topics)
        })
        .collect()
}

/// Resolve a declared topology against the topic metadata (spec §3.7).
///
/// `Ok` carries the configured topology, possibly with a [`TopicConfigurationIssue`]
/// (`MISSING_SOURCE_TOPICS` / `INCORRECTLY_PARTITIONED_TOPICS`: no subtopologies, nothing to create;
/// `MISSING_INTERNAL_TOPICS`: subtopologies present and `internal_topics_to_create` filled).
/// `Err` means the heartbeat fails with `STREAMS_INVALID_TOPOLOGY`. `metadata_hash` is
/// [`metadata_hash`] over the topology's required topics. Never panics.
pub fn configure_topics(
    topology: &StreamsTopology,
    metadata: &MetadataImage,
) -> Result<ConfiguredTopology, InvalidTopology> {
    let metadata_hash = metadata_hash(&topology.required_topics(), metadata);
    let order = processing_order(topology)?;
    let groups = order
        .iter()
        .map(|s| copartition_groups(s))
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .flatten()
        .collect::<Vec<_>>();

    let result = |subtopologies, internal_topics_to_create, issue| ConfiguredTopology {
        topology_epoch: topology.epoch,
        metadata_hash,
        subtopologies,
        internal_topics_to_create,
        issue,
    };

    match configure(topology, &order, &groups, metadata) {
        Ok((subtopologies, to_create)) => {
            let issue = (!to_create.is_empty()).then(|| TopicConfigurationIssue {
                status_code: status_code::MISSING_INTERNAL_TOPICS,
                detail: format!(
                    "Internal topics are missing: {}",
                    summarize_topics(to_create.keys())
                ),
            });
            Ok(result(Some(subtopologies), to_create, issue))
        }
        Err(Stop::Issue(issue)) => Ok(result(None, BTreeMap::new(), Some(issue))),
        Err(Stop::Invalid(invalid)) => Err(invalid),
    }
}

type Configured = (
    BTreeMap<String, ConfiguredSubtopology>,
    BTreeMap<String, InternalTopic>,
);

fn configure(
    topology: &StreamsTopology,
    order: &[&Subtopology],
    groups: &[BTreeSet<String>],
    metadata: &MetadataImage,
) -> Result<Configured, Stop> {
    check_source_topics(topology, metadata)?;

    let mut decided = repartition::decide_partition_counts(order, metadata)?;
    copartition::enforce_all(order, groups, metadata, &mut decided)?;
    decide_changelog_counts(order, metadata, &mut decided)?;

    let mut subtopologies = BTreeMap::new();
    for s in order {
        subtopologies.insert(
            s.subtopology_id.clone(),
            configure_subtopology(s, metadata, &decided)?,
        );
    }
    let to_create = internal_topics_to_create(&subtopologies, metadata)?;
    Ok((subtopologies, to_create))
}

/// Step 1: every declared source topic must exist.
fn check_source_topics(topology: &StreamsTopology, metadata: &MetadataImage) -> Result<(), Stop> {
    let missing: BTreeSet<&String> = sort::collect_set(
        topology
            .subtopologies
            .iter()
            .flat_map(|s| &s.source_topics)
            .filter(|t| metadata.partitions(t).is_none()),
    );
    if missing.is_empty() {
        Ok(())
    } else {
        Err(Stop::issue(
            status_code::MISSING_SOURCE_TOPICS,
            format!("Source topics {} are missing.", summarize_topics(missing)),
        ))
    }
}

/// The source topics, then the repartition source topics of a subtopology.
pub(super) fn input_topics(s: &Subtopology) -> impl Iterator<Item = &String> {
    s.source_topics
        .iter()
        .chain(s.repartition_source_topics.iter().map(|t| &t.name))
}

/// The largest partition count over a subtopology's input topics; `None` if it has none.
fn max_input_partitions(
    s: &Subtopology,
    metadata: &MetadataImage,
    decided: &Decided,
) -> Result<Option<i32>, Stop> {
    let mut max = None;
    for topic in input_topics(s) {
        let count = partition_count(metadata, decided, topic)
            .ok_or_else(|| Stop::invalid(format!("No partition count for source topic {topic}")))?;
        max = Some(max.map_or(count, |m: i32| m.max(count)));
    }
    Ok(max)
}

/// Step 2c: every changelog topic gets the largest input partition count of its subtopology.
fn decide_changelog_counts(
    order: &[&Subtopology],
    metadata: &MetadataImage,
    decided: &mut Decided,
) -> Result<(), Stop> {
    let mut changelogs = Decided::new();
    for s in order {
        let max = max_input_partitions(s, metadata, decided)?.ok_or_else(|| {
            Stop::invalid(format!(
                "No source topics found for subtopology {}",
                s.subtopology_id
            ))
        })?;
        for t in &s.state_changelog_topics {
            changelogs.insert(t.name.clone(), max);
        }
    }
    decided.extend(changelogs);
    Ok(())
}

/// Step 3: declared non-zero partitions win, else the decided count.
fn configure_subtopology(
    s: &Subtopology,
    metadata: &MetadataImage,
    decided: &Decided,
) -> Result<ConfiguredSubtopology, Stop> {
    let number_of_tasks = max_input_partitions(s, metadata, decided)?.ok_or_else(|| {
        Stop::invalid(format!(
            "No source topics found for subtopology {}",
            s.subtopology_id
        ))
    })?;
    let internal = |topics: &[TopicInfo]| -> Result<BTreeMap<String, InternalTopic>, Stop> {
        sort::try_collect_map(topics.iter().map(|t| {
            let partitions = if t.partitions != 0 {
                t.partitions
            } else {
                decided.get(&t.name).copied().ok_or_else(|| {
                    Stop::invalid(format!(
                        "Number of partitions must be set for topic {}",
                        t.name
                    ))
                })?
            };
            let topic = InternalTopic {
                name: t.name.clone(),
                partitions,
                replication_factor: (t.replication_factor != 0).then_some(t.replication_factor),
                configs: sort::collect_map(
                    t.topic_configs
                        .iter()
                        .map(|kv| (kv.key.clone(), kv.value.clone())),
                ),
            };
            Ok((t.name.clone(), topic))
        }))
    };
    Ok(ConfiguredSubtopology {
        number_of_tasks,
        source_topics: sort::collect_set(s.source_topics.iter().cloned()),
        repartition_sink_topics: sort::collect_set(s.repartition_sink_topics.iter().cloned()),
        repartition_source_topics: internal(&s.repartition_source_topics)?,
        state_changelog_topics: internal(&s.state_changelog_topics)?,
    })
}

/// Steps 4-5: the configured internal topics that do not exist yet; an existing one must have the
/// computed partition count.
///
/// Every configured occurrence of an existing topic is checked (Java checks only the last one per
/// name, which matters only when two subtopologies configure the same topic differently); the
/// first mismatch by topic name is reported. A missing topic configured twice is created as the
/// subtopology with the greatest id configures it, as in Java.
fn internal_topics_to_create(
    subtopologies: &BTreeMap<String, ConfiguredSubtopology>,
    metadata: &MetadataImage,
) -> Result<BTreeMap<String, InternalTopic>, Stop> {
    let mut to_create = BTreeMap::new();
    let mut existing = Vec::new();
    for s in subtopologies.values() {
        for t in s
            .repartition_source_topics
            .values()
            .chain(s.state_changelog_topics.values())
        {
            match metadata.partitions(&t.name) {
                None => {
                    to_create.insert(t.name.clone(), t.clone());
                }
                Some(found) => existing.push((&t.name, t.partitions, found)),
            }
        }
    }
    sort::by_key(&mut existing, |&(name, _, _)| name);
    if let Some((name, expected, found)) = existing
        .into_iter()
        .find(|&(_, expected, found)| expected != found)
    {
        return Err(Stop::issue(
            status_code::INCORRECTLY_PARTITIONED_TOPICS,
            format!(
                "Existing topic {name} has different number of partitions: expected {expected}, found {found}"
            ),
        ));
    }
    Ok(to_create)
}

/// Hash of one topic (our stand-in for Java's topic hash, spec §3.8): XXH3-64 over the magic byte
/// 0, the UTF-8 topic name and the partition count (int32, big-endian).
pub fn topic_hash(topic: &str, partitions: i32) -> u64 {
    let mut h = Xxh3Default::new();
    h.update(&[0]);
    h.update(topic.as_bytes());
    h.update(&partitions.to_be_bytes());
    h.digest()
}

/// Hash over the required topics that exist in the image (spec §3.8); 0 when none exist.
///
/// XXH3-64 over the `topic_hash` of each existing required topic (int64, big-endian) in topic
/// name order. Missing topics are skipped. Stable across runs, platforms and versions of this crate,
/// but **not bit-compatible with Java**: the image carries neither topic ids nor replica racks, so
/// they are left out of the topic hash. It only needs to change when a required topic is created,
/// deleted or resized, which it does.
pub fn metadata_hash(required_topics: &BTreeSet<String>, metadata: &MetadataImage) -> i64 {
    let mut group = Xxh3Default::new();
    let mut any = false;
    for topic in required_topics {
        if let Some(partitions) = metadata.partitions(topic) {
            group.update(&topic_hash(topic, partitions).to_be_bytes());
            any = true;
        }
    }
    if any { group.digest() as i64 } else { 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn summarize_topics_shows_at_most_three() {
        assert_eq!(summarize_topics(&names(&[])), "<none>");
        assert_eq!(summarize_topics(&names(&["a"])), "a");
        assert_eq!(summarize_topics(&names(&["a", "b", "c"])), "a, b, c");
        assert_eq!(
            summarize_topics(&names(&["a", "b", "c", "d"])),
            "a, b, c and 1 additional topics"
        );
        assert_eq!(
            summarize_topics(&names(&["a", "b", "c", "d", "e"])),
            "a, b, c and 2 additional topics"
        );
    }

    #[test]
    fn java_collection_strings() {
        // `new TreeMap<>(Map.of("b", 6, "a", 3))` and `new TreeSet<>(Set.of("b", "a"))` print as
        // below (checked with OpenJDK 17).
        let map: BTreeMap<String, i32> = [("b".to_string(), 6), ("a".to_string(), 3)].into();
        assert_eq!(java_map_string(&map), "{a=3, b=6}");
        assert_eq!(java_map_string(&BTreeMap::new()), "{}");
        assert_eq!(java_list_string(&names(&["a", "b"])), "[a, b]");
    }

    /// Expected orders printed by OpenJDK 17 for `ids.stream().collect(Collectors.toMap(x -> x, x
    /// -> 0)).keySet()`.
    #[test]
    fn java_hash_map_order_matches_openjdk() {
        let numeric = |n: usize| (0..n).map(|i| i.to_string()).collect::<Vec<_>>();
        let order_of = |ids: &[String]| {
            let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
            java_hash_map_order(&refs)
                .into_iter()
                .map(|i| ids[i].clone())
                .collect::<Vec<_>>()
        };
        let expect = |s: &str| s.split(", ").map(str::to_string).collect::<Vec<_>>();
        assert_eq!(
            order_of(&numeric(11)),
            expect("0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10")
        );
        assert_eq!(
            order_of(&numeric(12)),
            expect("0, 11, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10")
        );
        assert_eq!(
            order_of(&numeric(13)),
            expect("11, 12, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10")
        );
        assert_eq!(
            order_of(&numeric(30)),
            expect(
                "22, 23, 24, 25, 26, 27, 28, 29, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 0, 1, 2, 3, \
                 4, 5, 6, 7, 8, 9, 20, 21"
            )
        );
        assert_eq!(
            order_of(&names(&[
                "sub-b", "x", "sub-a", "äöü", "😀", "0_1", "zz", "A"
            ])),
            expect("zz, A, 0_1, x, 😀, äöü, sub-b, sub-a")
        );
        assert!(java_hash_map_order(&[]).is_empty());
    }

    #[test]
    fn topic_hash_covers_name_and_count() {
        assert_eq!(topic_hash("a", 3), topic_hash("a", 3));
        assert_ne!(topic_hash("a", 3), topic_hash("a", 4));
        assert_ne!(topic_hash("a", 3), topic_hash("b", 3));
        // The magic byte, the name bytes and the big-endian count, streamed.
        let mut bytes = vec![0u8];
        bytes.extend_from_slice(b"topic");
        bytes.extend_from_slice(&7i32.to_be_bytes());
        assert_eq!(topic_hash("topic", 7), xxhash_rust::xxh3::xxh3_64(&bytes));
    }

    #[test]
    fn metadata_hash_is_xxh3_over_topic_hashes_in_name_order() {
        let metadata = MetadataImage {
            topics: [("b".to_string(), 2), ("a".to_string(), 1)].into(),
        };
        let required: BTreeSet<String> = names(&["b", "a", "missing"]).into_iter().collect();
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&topic_hash("a", 1).to_be_bytes());
        bytes.extend_from_slice(&topic_hash("b", 2).to_be_bytes());
        assert_eq!(
            metadata_hash(&required, &metadata),
            xxhash_rust::xxh3::xxh3_64(&bytes) as i64
        );
    }

    #[test]
    fn out_of_range_copartition_indices_are_invalid() {
        let mut s = Subtopology {
            subtopology_id: "0".into(),
            source_topics: names(&["a"]),
            ..Default::default()
        };
        s.copartition_groups = vec![super::super::CopartitionGroup {
            source_topics: vec![0],
            ..Default::default()
        }];
        assert!(copartition_groups(&s).is_ok());
        for bad in [1, -1, i16::MIN, i16::MAX] {
            s.copartition_groups[0].source_topics = vec![bad];
            assert!(copartition_groups(&s).is_err(), "index {bad}");
        }
        s.copartition_groups[0].source_topics = vec![];
        s.copartition_groups[0].repartition_source_topics = vec![0];
        assert_eq!(
            copartition_groups(&s).unwrap_err().message,
            "Copartition group of subtopology 0 refers to repartition source topic index 0, but the \
             subtopology has 0 repartition source topics."
        );
        // Regex indices are ignored.
        s.copartition_groups[0].repartition_source_topics = vec![];
        s.copartition_groups[0].source_topic_regex = vec![5];
        assert_eq!(copartition_groups(&s).unwrap(), vec![BTreeSet::new()]);
    }
}
