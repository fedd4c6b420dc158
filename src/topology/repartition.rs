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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::TopicInfo;

    fn sub(id: &str, sources: &[&str], rep_sources: &[(&str, i32)], sinks: &[&str]) -> Subtopology {
        Subtopology {
            subtopology_id: id.into(),
            source_topics: sources.iter().map(|s| s.to_string()).collect(),
            repartition_source_topics: rep_sources
                .iter()
                .map(|(n, p)| TopicInfo {
                    name: n.to_string(),
                    partitions: *p,
                    replication_factor: 0,
                    topic_configs: vec![],
                })
                .collect(),
            repartition_sink_topics: sinks.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    fn metadata(topics: &[(&str, i32)]) -> MetadataImage {
        MetadataImage {
            topics: topics.iter().map(|(n, p)| (n.to_string(), *p)).collect(),
        }
    }

    #[test]
    fn chains_resolve_over_several_rounds() {
        // Visited downstream-first, so each round resolves one more hop.
        let c = sub("c", &[], &[("r2", 0)], &["r3"]);
        let b = sub("b", &[], &[("r1", 0)], &["r2"]);
        let a = sub("a", &["in"], &[], &["r1"]);
        let counts = decide_partition_counts(&[&c, &b, &a], &metadata(&[("in", 5)])).unwrap();
        assert_eq!(
            counts,
            [("r1".into(), 5), ("r2".into(), 5), ("r3".into(), 5)].into()
        );
    }

    #[test]
    fn sink_count_is_max_of_known_inputs_at_visit_time() {
        // `x` reads `e` (2) and `r1`, which `y` writes from `s` (8).
        let x = sub("x", &["e"], &[("r1", 0)], &["r2"]);
        let y = sub("y", &["s"], &[], &["r1"]);
        let md = metadata(&[("e", 2), ("s", 8)]);
        assert_eq!(decide_partition_counts(&[&y, &x], &md).unwrap()["r2"], 8);
        assert_eq!(decide_partition_counts(&[&x, &y], &md).unwrap()["r2"], 2);
    }

    #[test]
    fn declared_counts_are_kept_and_feed_inference() {
        let a = sub("a", &["in"], &[], &["r1"]);
        let b = sub("b", &[], &[("r1", 9)], &["r2"]);
        let counts = decide_partition_counts(&[&a, &b], &metadata(&[("in", 2)])).unwrap();
        assert_eq!(counts, [("r1".into(), 9), ("r2".into(), 9)].into());
    }

    #[test]
    fn loops_and_unwritten_sources_fail() {
        let a = sub("a", &[], &[("r1", 0)], &["r2"]);
        let b = sub("b", &[], &[("r2", 0)], &["r1"]);
        let Err(Stop::Invalid(e)) = decide_partition_counts(&[&a, &b], &metadata(&[])) else {
            panic!()
        };
        assert_eq!(e.message, UNRESOLVABLE_LOOP);
        let c = sub("c", &["in"], &[("never", 0)], &[]);
        let Err(Stop::Invalid(e)) = decide_partition_counts(&[&c], &metadata(&[("in", 1)])) else {
            panic!()
        };
        assert_eq!(e.message, NEVER_A_SINK);
    }
}
