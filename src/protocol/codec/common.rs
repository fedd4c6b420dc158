//! Structs shared by both keys (identical wire shape wherever they appear), all versions 0+.

use super::CodecError;
use super::wire::{Reader, WireStruct, Writer};
use crate::protocol::messages::{Endpoint, KeyValue, TaskIds, TaskOffset, TopicInfo};

/// `KeyValue { Key string, Value string }`.
impl WireStruct for KeyValue {
    fn write(&self, w: &mut Writer, _version: i16) -> Result<(), CodecError> {
        w.string("Key", &self.key)?;
        w.string("Value", &self.value)?;
        w.tagged_fields(&self.unknown_tagged_fields)
    }

    fn read(r: &mut Reader<'_>, _version: i16) -> Result<Self, CodecError> {
        Ok(Self {
            key: r.string("Key")?,
            value: r.string("Value")?,
            unknown_tagged_fields: r.tagged_fields()?,
        })
    }
}

/// `TopicInfo { Name string, Partitions int32, ReplicationFactor int16, TopicConfigs []KeyValue }`.
impl WireStruct for TopicInfo {
    fn write(&self, w: &mut Writer, version: i16) -> Result<(), CodecError> {
        w.string("Name", &self.name)?;
        w.i32(self.partitions);
        w.i16(self.replication_factor);
        w.structs("TopicConfigs", &self.topic_configs, version)?;
        w.tagged_fields(&self.unknown_tagged_fields)
    }

    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self, CodecError> {
        Ok(Self {
            name: r.string("Name")?,
            partitions: r.i32("Partitions")?,
            replication_factor: r.i16("ReplicationFactor")?,
            topic_configs: r.structs("TopicConfigs", version)?,
            unknown_tagged_fields: r.tagged_fields()?,
        })
    }
}

/// `Endpoint { Host string, Port uint16 }`.
impl WireStruct for Endpoint {
    fn write(&self, w: &mut Writer, _version: i16) -> Result<(), CodecError> {
        w.string("Host", &self.host)?;
        w.u16(self.port);
        w.tagged_fields(&self.unknown_tagged_fields)
    }

    fn read(r: &mut Reader<'_>, _version: i16) -> Result<Self, CodecError> {
        Ok(Self {
            host: r.string("Host")?,
            port: r.u16("Port")?,
            unknown_tagged_fields: r.tagged_fields()?,
        })
    }
}

/// `TaskOffset { SubtopologyId string, Partition int32, Offset int64 }`.
impl WireStruct for TaskOffset {
    fn write(&self, w: &mut Writer, _version: i16) -> Result<(), CodecError> {
        w.string("SubtopologyId", &self.subtopology_id)?;
        w.i32(self.partition);
        w.i64(self.offset);
        w.tagged_fields(&self.unknown_tagged_fields)
    }

    fn read(r: &mut Reader<'_>, _version: i16) -> Result<Self, CodecError> {
        Ok(Self {
            subtopology_id: r.string("SubtopologyId")?,
            partition: r.i32("Partition")?,
            offset: r.i64("Offset")?,
            unknown_tagged_fields: r.tagged_fields()?,
        })
    }
}

/// `TaskIds { SubtopologyId string, Partitions []int32 }`.
impl WireStruct for TaskIds {
    fn write(&self, w: &mut Writer, _version: i16) -> Result<(), CodecError> {
        w.string("SubtopologyId", &self.subtopology_id)?;
        w.array("Partitions", &self.partitions, |w, p| {
            w.i32(*p);
            Ok(())
        })?;
        w.tagged_fields(&self.unknown_tagged_fields)
    }

    fn read(r: &mut Reader<'_>, _version: i16) -> Result<Self, CodecError> {
        Ok(Self {
            subtopology_id: r.string("SubtopologyId")?,
            partitions: r.array("Partitions", |r| r.i32(""))?,
            unknown_tagged_fields: r.tagged_fields()?,
        })
    }
}
