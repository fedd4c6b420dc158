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
use super::wire::{Reader, WireStruct, Writer};
use crate::protocol::messages::{TopologyDescription, UnknownTaggedFields};

/// Structured form of a KIP-1331 topology description.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TopologyDescriptionContent {
    pub subtopologies: Vec<TopologyDescriptionSubtopology>,
    pub global_stores: Vec<TopologyDescriptionGlobalStore>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TopologyDescriptionSubtopology {
    pub subtopology_id: String,
    pub nodes: Vec<TopologyDescriptionNode>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TopologyDescriptionNode {
    pub name: String,
    /// 1 = SOURCE, 2 = PROCESSOR, 3 = SINK.
    pub node_type: i8,
    pub source_topics: Vec<String>,
    pub sink_topic: Option<String>,
    pub stores: Vec<String>,
    pub successors: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TopologyDescriptionGlobalStore {
    pub source: TopologyDescriptionNode,
    pub processor: TopologyDescriptionNode,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

impl WireStruct for TopologyDescriptionNode {
    fn write(&self, w: &mut Writer, _version: i16) -> Result<(), CodecError> {
        w.string("Name", &self.name)?;
        w.i8(self.node_type);
        w.strings("SourceTopics", &self.source_topics)?;
        w.nullable_string("SinkTopic", self.sink_topic.as_deref())?;
        w.strings("Stores", &self.stores)?;
        w.strings("Successors", &self.successors)?;
        w.tagged_fields(&self.unknown_tagged_fields)
    }

    fn read(r: &mut Reader<'_>, _version: i16) -> Result<Self, CodecError> {
        Ok(Self {
            name: r.string("Name")?,
            node_type: r.i8("NodeType")?,
            source_topics: r.array("SourceTopics", |r| r.string(""))?,
            sink_topic: r.nullable_string("SinkTopic")?,
            stores: r.array("Stores", |r| r.string(""))?,
            successors: r.array("Successors", |r| r.string(""))?,
            unknown_tagged_fields: r.tagged_fields()?,
        })
    }
}

impl WireStruct for TopologyDescriptionSubtopology {
    fn write(&self, w: &mut Writer, version: i16) -> Result<(), CodecError> {
        w.string("SubtopologyId", &self.subtopology_id)?;
        w.structs("Nodes", &self.nodes, version)?;
        w.tagged_fields(&self.unknown_tagged_fields)
    }

    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self, CodecError> {
        Ok(Self {
            subtopology_id: r.string("SubtopologyId")?,
            nodes: r.structs("Nodes", version)?,
            unknown_tagged_fields: r.tagged_fields()?,
        })
    }
}

impl WireStruct for TopologyDescriptionGlobalStore {
    fn write(&self, w: &mut Writer, version: i16) -> Result<(), CodecError> {
        w.struct_field("Source", &self.source, version)?;
        w.struct_field("Processor", &self.processor, version)?;
        w.tagged_fields(&self.unknown_tagged_fields)
    }

    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self, CodecError> {
        Ok(Self {
            source: r.struct_field("Source", version)?,
            processor: r.struct_field("Processor", version)?,
            unknown_tagged_fields: r.tagged_fields()?,
        })
    }
}

impl WireStruct for TopologyDescriptionContent {
    fn write(&self, w: &mut Writer, version: i16) -> Result<(), CodecError> {
        w.structs("Subtopologies", &self.subtopologies, version)?;
        w.structs("GlobalStores", &self.global_stores, version)?;
        w.tagged_fields(&self.unknown_tagged_fields)
    }

    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self, CodecError> {
        Ok(Self {
            subtopologies: r.structs("Subtopologies", version)?,
            global_stores: r.structs("GlobalStores", version)?,
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
        let content = TopologyDescriptionContent::read(&mut r, CONTENT_VERSION)?;
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
        content.write(&mut w, CONTENT_VERSION)?;
        Ok(Self {
            raw: w.into_bytes(),
        })
    }
}

/// Reads a description in place (after its nullable marker), validating it and keeping its bytes.
pub(crate) fn read_raw(r: &mut Reader<'_>) -> Result<TopologyDescription, CodecError> {
    let mark = r.mark();
    TopologyDescriptionContent::read(r, CONTENT_VERSION)?;
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
