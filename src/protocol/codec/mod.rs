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
mod wire;

pub use header::{
    RequestHeader, decode_response_header_v1, encode_response_header_v1, peek_api_key_version,
};
pub use topology_description::{
    TopologyDescriptionContent, TopologyDescriptionGlobalStore, TopologyDescriptionNode,
    TopologyDescriptionSubtopology,
};

use wire::{Reader, WireStruct, Writer};

/// Lowest version of both keys this codec speaks.
pub const STREAMS_MIN_VERSION: i16 = 0;

/// Why bytes could not be decoded or a message could not be encoded.
///
/// `path` fields name the field being read or written, from the message down, e.g.
/// `StreamsGroupHeartbeatRequest.Topology.Subtopologies[0].SourceTopics[2]`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CodecError {
    /// The message does not exist at this version.
    #[error("{message} version {version} is not supported (supported: {min}-{max})")]
    UnsupportedVersion {
        message: &'static str,
        version: i16,
        min: i16,
        max: i16,
    },
    /// The input ended in the middle of a field.
    #[error("truncated while reading {path}: needed {needed} byte(s), {remaining} left")]
    Truncated {
        path: String,
        needed: usize,
        remaining: usize,
    },
    /// An unsigned varint longer than 5 bytes or larger than `u32::MAX`.
    #[error("malformed unsigned varint while reading {path}")]
    InvalidVarint { path: String },
    /// A string is not valid UTF-8.
    #[error("invalid UTF-8 in {path}: {detail}")]
    InvalidUtf8 { path: String, detail: String },
    /// A non-nullable string, array or struct was encoded as null.
    #[error("{path} is null but the field is not nullable")]
    UnexpectedNull { path: String },
    /// A declared string length is negative (other than null) or above 32767.
    #[error("invalid length {length} for {path}")]
    InvalidLength { path: String, length: i64 },
    /// An array (or tagged-field section) declares more elements than bytes remain.
    #[error("{path} declares {length} element(s) but only {remaining} byte(s) remain")]
    LengthExceedsRemaining {
        path: String,
        length: usize,
        remaining: usize,
    },
    /// The same tag occurs twice in a tagged-field section.
    #[error("duplicate tagged field {tag} in {path}")]
    DuplicateTaggedField { path: String, tag: u32 },
    /// Tags of a tagged-field section are not in ascending order.
    #[error("tagged field {tag} follows tagged field {previous} in {path}; tags must ascend")]
    TaggedFieldsOutOfOrder {
        path: String,
        previous: u32,
        tag: u32,
    },
    /// Bytes are left after the message was decoded.
    #[error("{count} trailing byte(s) after {message}")]
    TrailingBytes { message: &'static str, count: usize },
    /// Encoding a non-ignorable field with a non-default value at a version that lacks it
    /// (Kafka's `UnsupportedVersionException`).
    #[error(
        "cannot encode {path} at version {version}: the field does not exist at that version and its value is not the default"
    )]
    FieldNotInVersion { path: String, version: i16 },
    /// A value that cannot be encoded (e.g. a string longer than 32767 bytes).
    #[error("cannot encode {path}: {reason}")]
    InvalidValue { path: String, reason: String },
}

impl CodecError {
    /// The field path the error refers to, when it refers to one.
    pub fn path(&self) -> Option<&str> {
        match self {
            CodecError::Truncated { path, .. }
            | CodecError::InvalidVarint { path }
            | CodecError::InvalidUtf8 { path, .. }
            | CodecError::UnexpectedNull { path }
            | CodecError::InvalidLength { path, .. }
            | CodecError::LengthExceedsRemaining { path, .. }
            | CodecError::DuplicateTaggedField { path, .. }
            | CodecError::TaggedFieldsOutOfOrder { path, .. }
            | CodecError::FieldNotInVersion { path, .. }
            | CodecError::InvalidValue { path, .. } => Some(path),
            CodecError::UnsupportedVersion { .. } | CodecError::TrailingBytes { .. } => None,
        }
    }
}

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
fn encode_message<T: WireStruct>(
    msg: &T,
    name: &'static str,
    version: i16,
) -> Result<Vec<u8>, CodecError> {
    check_version(name, version)?;
    let mut w = Writer::new(name);
    msg.write(&mut w, version)?;
    Ok(w.into_bytes())
}

/// Decodes a top-level message body that must span all of `bytes`.
fn decode_message<T: WireStruct>(
    bytes: &[u8],
    name: &'static str,
    version: i16,
) -> Result<T, CodecError> {
    check_version(name, version)?;
    let mut r = Reader::new(bytes, name);
    let msg = T::read(&mut r, version)?;
    match r.remaining() {
        0 => Ok(msg),
        count => Err(CodecError::TrailingBytes {
            message: name,
            count,
        }),
    }
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

#[cfg(test)]
mod tests;
