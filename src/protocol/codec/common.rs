//! Structs shared by both keys (identical wire shape wherever they appear), all versions 0+.

use super::CodecError;
use crate::protocol::messages::{Endpoint, KeyValue, TaskIds, TaskOffset, TopicInfo};
use crate::wire::{Codec, Reader, Writer};

/// `KeyValue { Key string, Value string }`.
impl Codec for KeyValue {
    fn encode(&self, w: &mut Writer, _version: i16) -> Result<(), CodecError> {
        w.compact_string("Key", &self.key)?;
        w.compact_string("Value", &self.value)?;
        w.tagged_fields(&self.unknown_tagged_fields)
    }

    fn decode(r: &mut Reader<'_>, _version: i16) -> Result<Self, CodecError> {
        Ok(Self {
            key: r.compact_string("Key")?,
            value: r.compact_string("Value")?,
            unknown_tagged_fields: r.tagged_fields()?,
        })
    }
}

/// `TopicInfo { Name string, Partitions int32, ReplicationFactor int16, TopicConfigs []KeyValue }`.
impl Codec for TopicInfo {
    fn encode(&self, w: &mut Writer, version: i16) -> Result<(), CodecError> {
        w.compact_string("Name", &self.name)?;
        w.i32(self.partitions);
        w.i16(self.replication_factor);
        w.compact_structs("TopicConfigs", &self.topic_configs, version)?;
        w.tagged_fields(&self.unknown_tagged_fields)
    }

    fn decode(r: &mut Reader<'_>, version: i16) -> Result<Self, CodecError> {
        Ok(Self {
            name: r.compact_string("Name")?,
            partitions: r.i32("Partitions")?,
            replication_factor: r.i16("ReplicationFactor")?,
            topic_configs: r.compact_structs("TopicConfigs", version)?,
            unknown_tagged_fields: r.tagged_fields()?,
        })
    }
}

/// `Endpoint { Host string, Port uint16 }`.
impl Codec for Endpoint {
    fn encode(&self, w: &mut Writer, _version: i16) -> Result<(), CodecError> {
        w.compact_string("Host", &self.host)?;
        w.u16(self.port);
        w.tagged_fields(&self.unknown_tagged_fields)
    }

    fn decode(r: &mut Reader<'_>, _version: i16) -> Result<Self, CodecError> {
        Ok(Self {
            host: r.compact_string("Host")?,
            port: r.u16("Port")?,
            unknown_tagged_fields: r.tagged_fields()?,
        })
    }
}

/// `TaskOffset { SubtopologyId string, Partition int32, Offset int64 }`.
impl Codec for TaskOffset {
    fn encode(&self, w: &mut Writer, _version: i16) -> Result<(), CodecError> {
        w.compact_string("SubtopologyId", &self.subtopology_id)?;
        w.i32(self.partition);
        w.i64(self.offset);
        w.tagged_fields(&self.unknown_tagged_fields)
    }

    fn decode(r: &mut Reader<'_>, _version: i16) -> Result<Self, CodecError> {
        Ok(Self {
            subtopology_id: r.compact_string("SubtopologyId")?,
            partition: r.i32("Partition")?,
            offset: r.i64("Offset")?,
            unknown_tagged_fields: r.tagged_fields()?,
        })
    }
}

/// `TaskIds { SubtopologyId string, Partitions []int32 }`.
impl Codec for TaskIds {
    fn encode(&self, w: &mut Writer, _version: i16) -> Result<(), CodecError> {
        w.compact_string("SubtopologyId", &self.subtopology_id)?;
        w.compact_array("Partitions", &self.partitions, |w, p| {
            w.i32(*p);
            Ok(())
        })?;
        w.tagged_fields(&self.unknown_tagged_fields)
    }

    fn decode(r: &mut Reader<'_>, _version: i16) -> Result<Self, CodecError> {
        Ok(Self {
            subtopology_id: r.compact_string("SubtopologyId")?,
            partitions: r.compact_array("Partitions", |r| r.i32(""))?,
            unknown_tagged_fields: r.tagged_fields()?,
        })
    }
}
