//! Partition counts of repartition topics (spec §3.7 step 2a, Kafka's `RepartitionTopics`).
//!
//! Declared non-zero counts are taken as they are. Every other repartition topic is written by some
//! subtopology (it is one of its repartition sink topics) and gets the largest partition count of
//! that subtopology's inputs known so far: its repartition source topics that already have a count,
//! and its source topics as they exist in the metadata image. This is repeated until every sink topic
//! has a count; a round without progress means a loop that cannot be resolved.

use super::configure::{Decided, Stop};
use super::{MetadataImage, Subtopology};

pub(super) const UNRESOLVABLE_LOOP: &str = "Failed to compute number of partitions for all repartition topics. \
     There may be loops in the topology that cannot be resolved.";
pub(super) const NEVER_A_SINK: &str = "Failed to compute number of partitions for all repartition topics, \
     because a repartition source topic is never used as a sink topic.";

/// The partition count of every repartition topic (source and sink) of the topology.
///
/// `order` is the subtopology processing order; it matters because a subtopology's sink count is
/// computed from whatever input counts are known when it is visited. Source topics must exist
/// (checked before).
pub(super) fn decide_partition_counts(
    order: &[&Subtopology],
    metadata: &MetadataImage,
) -> Result<Decided, Stop> {
    let mut counts = Decided::new();
    for s in order {
        for t in &s.repartition_source_topics {
            if t.partitions != 0 {
                counts.insert(t.name.clone(), t.partitions);
            }
        }
    }

    loop {
        let mut needed = false;
        let mut progress = false;
        for s in order {
            for sink in &s.repartition_sink_topics {
                if counts.contains_key(sink) {
                    continue;
                }
                match max_known_input(s, &counts, metadata) {
                    Some(n) => {
                        counts.insert(sink.clone(), n);
                        progress = true;
                    }
                    None => needed = true,
                }
            }
        }
        if !needed {
            break;
        }
        if !progress {
            return Err(Stop::invalid(UNRESOLVABLE_LOOP));
        }
    }

    let all_known = order
        .iter()
        .flat_map(|s| &s.repartition_source_topics)
        .all(|t| counts.contains_key(&t.name));
    if all_known {
        Ok(counts)
    } else {
        Err(Stop::invalid(NEVER_A_SINK))
    }
}

/// Max over the subtopology's repartition source topics with a count and its existing source topics.
fn max_known_input(s: &Subtopology, counts: &Decided, metadata: &MetadataImage) -> Option<i32> {
    let repartition = s
        .repartition_source_topics
        .iter()
        .filter_map(|t| counts.get(&t.name).copied());
    let external = s
        .source_topics
        .iter()
        .filter_map(|t| metadata.partitions(t));
    repartition.chain(external).max()
}
