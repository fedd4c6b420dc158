//! Codec of API keys 88 (StreamsGroupHeartbeat) and 89 (StreamsGroupDescribe), versions 0-1,
//! pinned to the Kafka 4.4 schemas (spec §1), plus request header v2 / response header v1.
//!
//! Pure and `no I/O`: bytes in, message out (and back). Bodies only; the header has its own
//! functions ([`RequestHeader`], [`encode_response_header_v1`], [`peek_api_key_version`]).
//!
//! ```text
//! let body = request.encode(1)?;                       // Vec<u8>
//! let same = StreamsGroupHeartbeatRequest::decode(&body, 1)?;
//! ```
//!
//! # Wire rules
//!
//! Both keys are flexible from v0: compact strings and arrays (unsigned varint `length + 1`,
//! 0 = null), nullable structs preceded by an int8 marker (-1 = null, 1 = present), and a
//! tagged-field section (varint count, then `tag, size, bytes` in strictly ascending tag order)
//! closing every struct. Tagged fields this codec does not know are kept in the struct's
//! `unknown_tagged_fields` and written back, merged in tag order with known ones (there are none
//! in these schemas today).
//!
//! Decoding follows Kafka's generated readers where they are lenient (any non-zero byte is a
//! `true` bool, any negative marker is a null struct) and is stricter where Kafka would silently
//! accept garbage: invalid UTF-8, a varint longer than 5 bytes or above `u32::MAX`, and duplicate
//! or decreasing tags are errors. A decode must consume every byte of its input.
//!
//! # Version differences
//!
//! | Message | Field | v0 | v1 | Encoding a non-default value where absent |
//! |---|---|---|---|---|
//! | heartbeat response | `AcceptableRecoveryLagLegacy` int32 | yes | no | error |
//! | heartbeat response | `AcceptableRecoveryLag` int64 (default -1) | no | yes | skipped (ignorable) |
//! | heartbeat response | `TopologyDescriptionRequired` bool | no | yes | error |
//! | describe request | `IncludeTopologyDescription` bool | no | yes | error |
//! | describe response group | `TopologyDescription` nullable struct | no | yes | error |
//! | describe response group | `TopologyDescriptionStatus` int8 | no | yes | error |
//! | describe response group | `AssignorName` nullable string | no | yes | skipped (ignorable) |
//!
//! A field absent at the decoded version gets its schema default. The heartbeat request is
//! identical in both versions.

mod common;
mod describe;
mod header;
mod heartbeat;
mod topology_description;

pub use header::{
    RequestHeader, decode_response_header_v1, encode_response_header_v1, peek_api_key_version,
};
pub use topology_description::{
    TopologyDescriptionContent, TopologyDescriptionGlobalStore, TopologyDescriptionNode,
    TopologyDescriptionSubtopology,
};

use crate::wire::{Codec, Reader, Writer};

/// Lowest version of both keys this codec speaks.
pub const STREAMS_MIN_VERSION: i16 = 0;

/// Why bytes could not be decoded or a message could not be encoded: the wire layer's error,
/// whose `path` names the field from the message down, e.g.
/// `StreamsGroupHeartbeatRequest.Topology.Subtopologies[0].SourceTopics[2]`.
pub use crate::wire::WireError as CodecError;

fn check_version(message: &'static str, version: i16) -> Result<(), CodecError> {
    if (STREAMS_MIN_VERSION..=super::STREAMS_MAX_VERSION).contains(&version) {
        Ok(())
    } else {
        Err(CodecError::UnsupportedVersion {
            message,
            version,
            min: STREAMS_MIN_VERSION,
            max: super::STREAMS_MAX_VERSION,
        })
    }
}

/// Encodes a top-level message body.
fn encode_message<T: Codec>(
    msg: &T,
    name: &'static str,
    version: i16,
) -> Result<Vec<u8>, CodecError> {
    check_version(name, version)?;
    let mut w = Writer::new(name);
    msg.encode(&mut w, version)?;
    Ok(w.into_bytes())
}

/// Decodes a top-level message body that must span all of `bytes`.
fn decode_message<T: Codec>(
    bytes: &[u8],
    name: &'static str,
    version: i16,
) -> Result<T, CodecError> {
    check_version(name, version)?;
    let mut r = Reader::new(bytes, name);
    let msg = T::decode(&mut r, version)?;
    r.finish()?;
    Ok(msg)
}

/// Implements the public `encode`/`decode` pair of a top-level message.
macro_rules! message_api {
    ($ty:ty, $name:literal) => {
        impl $ty {
            /// Encodes the message body (no header) at `version`.
            pub fn encode(&self, version: i16) -> Result<Vec<u8>, CodecError> {
                encode_message(self, $name, version)
            }

            /// Decodes a message body (no header) of `version`; `bytes` must hold exactly one
            /// message.
            pub fn decode(bytes: &[u8], version: i16) -> Result<Self, CodecError> {
                decode_message(bytes, $name, version)
            }
        }
    };
}

use crate::protocol::messages::{
    StreamsGroupDescribeRequest, StreamsGroupDescribeResponse, StreamsGroupHeartbeatRequest,
    StreamsGroupHeartbeatResponse,
};

message_api!(StreamsGroupHeartbeatRequest, "StreamsGroupHeartbeatRequest");
message_api!(
    StreamsGroupHeartbeatResponse,
    "StreamsGroupHeartbeatResponse"
);
message_api!(StreamsGroupDescribeRequest, "StreamsGroupDescribeRequest");
message_api!(StreamsGroupDescribeResponse, "StreamsGroupDescribeResponse");
