//! IQ endpoint information (spec §3.12). (Placeholder; being written on branch `topo`.)

use std::collections::BTreeSet;

use super::{ConfiguredSubtopology, MetadataImage};

/// Topics of the subtopology and the task ids that are valid partitions of each.
pub fn partitions_for_tasks(
    subtopology: &ConfiguredSubtopology,
    partitions: &BTreeSet<i32>,
    metadata: &MetadataImage,
) -> Vec<(String, Vec<i32>)> {
    let mut topics: BTreeSet<&String> = subtopology.source_topics.iter().collect();
    topics.extend(subtopology.repartition_source_topics.keys());
    let mut out = Vec::new();
    for t in topics {
        let count = metadata
            .partitions(t)
            .or_else(|| subtopology.repartition_source_topics.get(t).map(|i| i.partitions))
            .unwrap_or(0);
        let ps: Vec<i32> = partitions.iter().copied().filter(|p| *p < count).collect();
        if !ps.is_empty() {
            out.push((t.clone(), ps));
        }
    }
    out
}
