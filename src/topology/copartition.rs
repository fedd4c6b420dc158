//! Copartitioning (spec §3.7 step 2b, Kafka's `CopartitionedTopicsEnforcer`).
//!
//! The topics of a copartition group must have the same partition count. Members that are
//! repartition source topics of the topology are *repartition members*: *fixed* if some declaration
//! of them has a non-zero partition count, *flexible* otherwise. The others are external topics.
//!
//! * All members are repartition topics: if the topology has any fixed repartition topic, all fixed
//!   repartition topics **of the whole topology** must have the same current count (a quirk kept
//!   from Java: not only those of this group), and that count is used; else the largest current
//!   count of the group's members is used (0 is an invalid topology).
//! * Otherwise the external members must agree, and their count is used.
//!
//! Every repartition member is then set to the chosen count; a fixed one whose current count
//! differs is incorrectly partitioned. "Current count" is the lookup of §3.7 (metadata image first,
//! then the decided count), as in Java; for a fixed topic that does not exist yet, that is its
//! declared count.

use crate::util::map::{BTreeMap, BTreeSet};

use super::configure::{Decided, Stop, java_list_string, java_map_string, partition_count};
use super::{MetadataImage, Subtopology};
use crate::protocol::status_code;

/// Enforce every copartition group in turn; counts chosen for a group are visible to later ones.
pub(super) fn enforce_all(
    order: &[&Subtopology],
    groups: &[BTreeSet<String>],
    metadata: &MetadataImage,
    decided: &mut Decided,
) -> Result<(), Stop> {
    let mut fixed = BTreeSet::new();
    let mut flexible = BTreeSet::new();
    for t in order.iter().flat_map(|s| &s.repartition_source_topics) {
        if t.partitions != 0 {
            fixed.insert(t.name.clone());
        } else {
            flexible.insert(t.name.clone());
        }
    }
    for group in groups {
        let chosen = enforce(group, &fixed, &flexible, metadata, decided)?;
        decided.extend(chosen);
    }
    Ok(())
}

fn count_of(topic: &str, metadata: &MetadataImage, decided: &Decided) -> Result<i32, Stop> {
    partition_count(metadata, decided, topic).ok_or_else(|| {
        Stop::invalid(format!(
            "Number of partitions is not set for topic: {topic}"
        ))
    })
}

fn not_same(topics: &BTreeMap<String, i32>) -> Stop {
    Stop::issue(
        status_code::INCORRECTLY_PARTITIONED_TOPICS,
        format!(
            "Following topics do not have the same number of partitions: [{}]",
            java_map_string(topics)
        ),
    )
}

/// One group: returns the counts chosen for its repartition members.
fn enforce(
    group: &BTreeSet<String>,
    fixed: &BTreeSet<String>,
    flexible: &BTreeSet<String>,
    metadata: &MetadataImage,
    decided: &Decided,
) -> Result<Decided, Stop> {
    if group.is_empty() {
        return Ok(Decided::new());
    }
    let mut repartition = BTreeMap::new();
    let mut external = BTreeMap::new();
    for topic in group {
        let count = count_of(topic, metadata, decided)?;
        if fixed.contains(topic) || flexible.contains(topic) {
            repartition.insert(topic.clone(), count);
        } else {
            external.insert(topic.clone(), count);
        }
    }

    let chosen = if external.is_empty() {
        if let Some(first) = fixed.first() {
            let first = count_of(first, metadata, decided)?;
            for topic in fixed {
                if count_of(topic, metadata, decided)? != first {
                    return Err(not_same(&repartition));
                }
            }
            first
        } else {
            let max = repartition.values().copied().fold(0, i32::max);
            if max == 0 {
                return Err(Stop::invalid(format!(
                    "All topics in the copartition group had undefined partition number: {}",
                    java_list_string(repartition.keys())
                )));
            }
            max
        }
    } else {
        let mut counts = external.values();
        let first = counts.next().copied().unwrap_or_default();
        if counts.any(|&c| c != first) {
            return Err(not_same(&external));
        }
        first
    };

    let mut out = Decided::new();
    for (topic, &current) in &repartition {
        if fixed.contains(topic) && current != chosen {
            return Err(Stop::issue(
                status_code::INCORRECTLY_PARTITIONED_TOPICS,
                format!(
                    "Number of partitions [{current}] of repartition topic [{topic}] doesn't match number of \
                     partitions [{chosen}] of the source topic."
                ),
            ));
        }
        out.insert(topic.clone(), chosen);
    }
    Ok(out)
}
