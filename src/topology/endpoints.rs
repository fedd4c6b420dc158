//! Topic partitions of a task set, for interactive-query endpoint information (spec §3.12, Kafka's
//! `EndpointToPartitionsManager`).

use crate::util::map::BTreeSet;

use super::{ConfiguredSubtopology, MetadataImage};
use crate::util::sort;

/// The topic partitions behind `partitions` (task ids of one subtopology).
///
/// For each topic in (source topics ∪ repartition source topics) of the configured subtopology, in
/// topic name order: the task ids that are `< ` that topic's partition count, ascending. The count
/// comes from the metadata image, or, for a repartition topic that does not exist yet, from its
/// configured count. Topics with no such partition are omitted.
///
/// Degrades gracefully where Java throws: a topic whose count is unknown is skipped, and negative
/// task ids are never mapped to partitions.
pub fn partitions_for_tasks(
    subtopology: &ConfiguredSubtopology,
    partitions: &BTreeSet<i32>,
    metadata: &MetadataImage,
) -> Vec<(String, Vec<i32>)> {
    let topics: BTreeSet<&String> = sort::collect_set(
        subtopology
            .source_topics
            .iter()
            .chain(subtopology.repartition_source_topics.keys()),
    );
    topics
        .into_iter()
        .filter_map(|topic| {
            let count = metadata.partitions(topic).or_else(|| {
                subtopology
                    .repartition_source_topics
                    .get(topic)
                    .map(|t| t.partitions)
            })?;
            let mapped: Vec<i32> = partitions
                .iter()
                .copied()
                .filter(|&p| p >= 0 && p < count)
                .collect();
            (!mapped.is_empty()).then(|| (topic.clone(), mapped))
        })
        .collect()
}
