//! KIP-1331 topology description carried by `StreamsGroupDescribeResponse` v1+
//! (`DescribedGroup.TopologyDescription`).
//!
//! Schema (the `TopologyDescription` common struct of `StreamsGroupTopologyDescriptionUpdate`,
//! API key 93, which the describe response returns as stored):
//!
//! ```text
//! TopologyDescription            { Subtopologies []TopologyDescriptionSubtopology,
//!                                  GlobalStores  []TopologyDescriptionGlobalStore }
//! TopologyDescriptionSubtopology { SubtopologyId string, Nodes []TopologyDescriptionNode }
//! TopologyDescriptionNode        { Name string, NodeType int8 (1 SOURCE, 2 PROCESSOR, 3 SINK),
//!                                  SourceTopics []string, SinkTopic string (nullable),
//!                                  Stores []string, Successors []string }
//! TopologyDescriptionGlobalStore { Source TopologyDescriptionNode,
//!                                  Processor TopologyDescriptionNode }
//! ```
//!
//! [`TopologyDescription`] keeps the struct's bytes opaque (`raw`, everything after the nullable
//! marker, tagged fields included) so that a description round-trips byte for byte. The codec
//! still parses those bytes to find where the struct ends and to validate them;
//! [`TopologyDescription::decode_content`] and [`TopologyDescription::from_content`] convert
//! between `raw` and the structured [`TopologyDescriptionContent`].

use serde::{Deserialize, Serialize};

use super::CodecError;
use crate::protocol::messages::{TopologyDescription, UnknownTaggedFields};
use crate::wire::{Codec, Reader, Writer};

/// Structured form of a KIP-1331 topology description.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TopologyDescriptionContent {
    /// The subtopologies.
    pub subtopologies: Vec<TopologyDescriptionSubtopology>,
    /// Global state stores.
    pub global_stores: Vec<TopologyDescriptionGlobalStore>,
    /// Tagged fields this codec does not know, kept so that re-encoding preserves them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

/// One subtopology of a topology description.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TopologyDescriptionSubtopology {
    /// The subtopology id.
    pub subtopology_id: String,
    /// Its processor nodes.
    pub nodes: Vec<TopologyDescriptionNode>,
    /// Tagged fields this codec does not know, kept so that re-encoding preserves them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

/// One node (source, processor or sink) of a topology description.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TopologyDescriptionNode {
    /// The node's name.
    pub name: String,
    /// 1 = SOURCE, 2 = PROCESSOR, 3 = SINK.
    pub node_type: i8,
    /// Topics a source node reads.
    pub source_topics: Vec<String>,
    /// The topic a sink node writes.
    pub sink_topic: Option<String>,
    /// State stores a processor uses.
    pub stores: Vec<String>,
    /// Names of the nodes it forwards to.
    pub successors: Vec<String>,
    /// Tagged fields this codec does not know, kept so that re-encoding preserves them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

/// A global state store: its source node and the processor that fills the store.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TopologyDescriptionGlobalStore {
    /// The source node.
    pub source: TopologyDescriptionNode,
    /// The processor node.
    pub processor: TopologyDescriptionNode,
    /// Tagged fields this codec does not know, kept so that re-encoding preserves them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

impl Codec for TopologyDescriptionNode {
    fn encode(&self, w: &mut Writer, _version: i16) -> Result<(), CodecError> {
        w.compact_string("Name", &self.name)?;
        w.i8(self.node_type);
        w.compact_strings("SourceTopics", &self.source_topics)?;
        w.compact_nullable_string("SinkTopic", self.sink_topic.as_deref())?;
        w.compact_strings("Stores", &self.stores)?;
        w.compact_strings("Successors", &self.successors)?;
        w.tagged_fields(&self.unknown_tagged_fields)
    }

    fn decode(r: &mut Reader<'_>, _version: i16) -> Result<Self, CodecError> {
        Ok(Self {
            name: r.compact_string("Name")?,
            node_type: r.i8("NodeType")?,
            source_topics: r.compact_array("SourceTopics", |r| r.compact_string(""))?,
            sink_topic: r.compact_nullable_string("SinkTopic")?,
            stores: r.compact_array("Stores", |r| r.compact_string(""))?,
            successors: r.compact_array("Successors", |r| r.compact_string(""))?,
            unknown_tagged_fields: r.tagged_fields()?,
        })
    }
}

impl Codec for TopologyDescriptionSubtopology {
    fn encode(&self, w: &mut Writer, version: i16) -> Result<(), CodecError> {
        w.compact_string("SubtopologyId", &self.subtopology_id)?;
        w.compact_structs("Nodes", &self.nodes, version)?;
        w.tagged_fields(&self.unknown_tagged_fields)
    }

    fn decode(r: &mut Reader<'_>, version: i16) -> Result<Self, CodecError> {
        Ok(Self {
            subtopology_id: r.compact_string("SubtopologyId")?,
            nodes: r.compact_structs("Nodes", version)?,
            unknown_tagged_fields: r.tagged_fields()?,
        })
    }
}

impl Codec for TopologyDescriptionGlobalStore {
    fn encode(&self, w: &mut Writer, version: i16) -> Result<(), CodecError> {
        w.struct_field("Source", &self.source, version)?;
        w.struct_field("Processor", &self.processor, version)?;
        w.tagged_fields(&self.unknown_tagged_fields)
    }

    fn decode(r: &mut Reader<'_>, version: i16) -> Result<Self, CodecError> {
        Ok(Self {
            source: r.struct_field("Source", version)?,
            processor: r.struct_field("Processor", version)?,
            unknown_tagged_fields: r.tagged_fields()?,
        })
    }
}

impl Codec for TopologyDescriptionContent {
    fn encode(&self, w: &mut Writer, version: i16) -> Result<(), CodecError> {
        w.compact_structs("Subtopologies", &self.subtopologies, version)?;
        w.compact_structs("GlobalStores", &self.global_stores, version)?;
        w.tagged_fields(&self.unknown_tagged_fields)
    }

    fn decode(r: &mut Reader<'_>, version: i16) -> Result<Self, CodecError> {
        Ok(Self {
            subtopologies: r.compact_structs("Subtopologies", version)?,
            global_stores: r.compact_structs("GlobalStores", version)?,
            unknown_tagged_fields: r.tagged_fields()?,
        })
    }
}

/// The struct has no versioned fields; it is always read and written as "version 0".
const CONTENT_VERSION: i16 = 0;
const ROOT: &str = "TopologyDescription";

impl TopologyDescription {
    /// Parses `raw` into its structured form. `raw` must hold exactly one struct.
    pub fn decode_content(&self) -> Result<TopologyDescriptionContent, CodecError> {
        let mut r = Reader::new(&self.raw, ROOT);
        let content = TopologyDescriptionContent::decode(&mut r, CONTENT_VERSION)?;
        match r.remaining() {
            0 => Ok(content),
            count => Err(CodecError::TrailingBytes {
                message: ROOT,
                count,
            }),
        }
    }

    /// Encodes a structured description into its wire bytes.
    pub fn from_content(content: &TopologyDescriptionContent) -> Result<Self, CodecError> {
        let mut w = Writer::new(ROOT);
        content.encode(&mut w, CONTENT_VERSION)?;
        Ok(Self {
            raw: w.into_bytes(),
        })
    }
}

/// Reads a description in place (after its nullable marker), validating it and keeping its bytes.
pub(crate) fn read_raw(r: &mut Reader<'_>) -> Result<TopologyDescription, CodecError> {
    let mark = r.mark();
    TopologyDescriptionContent::decode(r, CONTENT_VERSION)?;
    Ok(TopologyDescription {
        raw: r.consumed_since(mark).to_vec(),
    })
}

/// Writes a description's bytes (after its nullable marker), refusing bytes that are not exactly
/// one well-formed struct.
pub(crate) fn write_raw(
    w: &mut Writer,
    description: &TopologyDescription,
) -> Result<(), CodecError> {
    if let Err(e) = description.decode_content() {
        return Err(CodecError::InvalidValue {
            path: w.path_of(""),
            reason: format!("raw bytes are not a valid TopologyDescription: {e}"),
        });
    }
    w.raw(&description.raw);
    Ok(())
}
