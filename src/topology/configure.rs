//! Topic configuration (InternalTopicManager, spec §3.7) and the metadata hash (§3.8).
//! (Being written.)

use super::*;

/// Resolve a declared topology against the topic metadata (spec §3.7).
pub fn configure_topics(
    topology: &StreamsTopology,
    metadata: &MetadataImage,
) -> Result<ConfiguredTopology, InvalidTopology> {
    let _ = (topology, metadata);
    unimplemented!("configure_topics")
}

/// Hash over the required topics that exist in the image (spec §3.8); 0 when none exist.
pub fn metadata_hash(required_topics: &BTreeSet<String>, metadata: &MetadataImage) -> i64 {
    let _ = (required_topics, metadata);
    unimplemented!("metadata_hash")
}
