//! Kafka's primitive wire types, bounds-checked, in one place: every byte groupcoord reads from
//! or writes to a peer or a log goes through [`Reader`] and [`Writer`].
//!
//! Used by the record codec (`records::codec`), the codec of API keys 88/89 (`protocol::codec`)
//! and the server's request-header parsing. The type names follow Kafka's schema types:
//!
//! | Kafka type | length prefix | null | [`Reader`] / [`Writer`] method |
//! |---|---|---|---|
//! | `int8` … `int64`, `uint16`, `uint32`, `bool`, `uuid` | — | — | `i8` … `i64`, `u16`, `u32`, `bool`, `uuid` |
//! | `varint` | zigzag, 1-5 bytes | — | `varint` (and `uvarint` for unsigned) |
//! | `string` / `nullable_string` | int16 | -1 | `string` / `nullable_string` |
//! | `compact_string` / `compact_nullable_string` | uvarint `n + 1` | 0 | `compact_string` / `compact_nullable_string` |
//! | `bytes` / `nullable_bytes` | int32 | -1 | `bytes` / `nullable_bytes` |
//! | `compact_bytes` / `compact_nullable_bytes` | uvarint `n + 1` | 0 | `compact_bytes` / `compact_nullable_bytes` |
//! | `[]T` / nullable | int32 | -1 | `array` / `nullable_array` (`array_len`, …) |
//! | compact `[]T` / nullable | uvarint `n + 1` | 0 | `compact_array` / `compact_nullable_array` |
//! | tagged fields | uvarint count, then `tag, size, bytes` | — | `tagged_fields`, `tagged_fields_with` |
//!
//! One set of rules, on both sides:
//!
//! * No input makes the reader panic, and nothing is allocated for a count the remaining bytes
//!   cannot hold: an array may declare at most one element per remaining byte, and capacity
//!   reserved up front is capped as well.
//! * Strings are UTF-8 and at most [`MAX_STRING_LEN`] bytes, as Kafka's generated code enforces.
//!   A longer string is an error when reading *and* when writing: nothing is silently cut.
//! * A varint is at most 5 bytes and fits 32 bits; anything longer or larger is an error.
//! * Tags of a tagged-field section strictly ascend; a tag the caller knows must consume exactly
//!   its declared size; unknown tags are kept verbatim ([`RawTaggedField`]).
//! * Errors name the field path from the root down, e.g.
//!   `StreamsGroupHeartbeatRequest.Topology.Subtopologies[0].SourceTopics`.
//!
//! A struct with a wire form implements [`Codec`], like quinn-proto's `coding.rs`.

mod path;
// Reader and Writer cover every primitive type of Kafka's schemas (the table above), tested in
// `tests.rs`; not every one has a user in the crate yet.
#[allow(dead_code)]
mod reader;
#[allow(dead_code)]
pub mod varint;
#[allow(dead_code)]
mod writer;

use serde::{Deserialize, Serialize};

pub use reader::Reader;
pub use writer::Writer;

/// Longest string Kafka reads or writes, in bytes (its generated code rejects anything above
/// `0x7fff`, compact or not).
pub const MAX_STRING_LEN: usize = 0x7fff;

/// A struct with a wire form at a given schema version.
pub trait Codec: Sized {
    /// Writes the struct at `version`.
    fn encode(&self, w: &mut Writer, version: i16) -> Result<(), WireError>;
    /// Reads the struct at `version`.
    fn decode(r: &mut Reader<'_>, version: i16) -> Result<Self, WireError>;
}

/// A tagged field the decoder did not know, kept verbatim so it can be written back.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct RawTaggedField {
    /// The field's tag.
    pub tag: u32,
    /// Its payload, as on the wire.
    pub data: Vec<u8>,
}

/// Unknown tagged fields of one struct, in wire order.
pub type UnknownTaggedFields = Vec<RawTaggedField>;

/// Why bytes could not be decoded or a value could not be encoded.
///
/// `path` fields name the field being read or written, from the root down, e.g.
/// `StreamsGroupHeartbeatRequest.Topology.Subtopologies[0].SourceTopics[2]`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WireError {
    /// The message does not exist at this version.
    #[error("{message} version {version} is not supported (supported: {min}-{max})")]
    UnsupportedVersion {
        /// The message (root) name.
        message: &'static str,
        /// The version asked for.
        version: i16,
        /// Lowest supported version.
        min: i16,
        /// Highest supported version.
        max: i16,
    },
    /// The input ended in the middle of a field.
    #[error("truncated while reading {path}: needed {needed} byte(s), {remaining} left")]
    Truncated {
        /// Field path.
        path: String,
        /// Bytes the field needed.
        needed: usize,
        /// Bytes that were left.
        remaining: usize,
    },
    /// An unsigned varint longer than 5 bytes or larger than `u32::MAX`.
    #[error("malformed unsigned varint while reading {path}")]
    InvalidVarint {
        /// Field path.
        path: String,
    },
    /// A string is not valid UTF-8.
    #[error("invalid UTF-8 in {path}: {detail}")]
    InvalidUtf8 {
        /// Field path.
        path: String,
        /// What the UTF-8 check reported.
        detail: String,
    },
    /// A non-nullable string, bytes, array or struct was encoded as null.
    #[error("{path} is null but the field is not nullable")]
    UnexpectedNull {
        /// Field path.
        path: String,
    },
    /// A declared length is negative (other than null) or a string length is above 32767.
    #[error("invalid length {length} for {path}")]
    InvalidLength {
        /// Field path.
        path: String,
        /// The declared length.
        length: i64,
    },
    /// An array (or tagged-field section) declares more elements than bytes remain.
    #[error("{path} declares {length} element(s) but only {remaining} byte(s) remain")]
    LengthExceedsRemaining {
        /// Field path.
        path: String,
        /// The declared element count.
        length: usize,
        /// Bytes that were left.
        remaining: usize,
    },
    /// The same tag occurs twice in a tagged-field section.
    #[error("duplicate tagged field {tag} in {path}")]
    DuplicateTaggedField {
        /// Path of the tagged-field section.
        path: String,
        /// The repeated tag.
        tag: u32,
    },
    /// Tags of a tagged-field section are not in ascending order.
    #[error("tagged field {tag} follows tagged field {previous} in {path}; tags must ascend")]
    TaggedFieldsOutOfOrder {
        /// Path of the tagged-field section.
        path: String,
        /// The tag before.
        previous: u32,
        /// The smaller tag that followed it.
        tag: u32,
    },
    /// A known tagged field whose value did not take exactly its declared size.
    #[error("tagged field {tag} in {path} declares {size} byte(s) but its value takes {used}")]
    TaggedFieldSize {
        /// Path of the tagged-field section.
        path: String,
        /// The tag.
        tag: u32,
        /// The declared size.
        size: usize,
        /// The bytes its value took.
        used: usize,
    },
    /// Bytes are left after the message (or record key or value) was decoded.
    #[error("{count} trailing byte(s) after {message}")]
    TrailingBytes {
        /// The message (root) name.
        message: &'static str,
        /// How many bytes were left.
        count: usize,
    },
    /// Encoding a non-ignorable field with a non-default value at a version that lacks it
    /// (Kafka's `UnsupportedVersionException`).
    #[error(
        "cannot encode {path} at version {version}: the field does not exist at that version and its value is not the default"
    )]
    FieldNotInVersion {
        /// Field path.
        path: String,
        /// The version being written.
        version: i16,
    },
    /// A value that cannot be encoded (e.g. a string longer than 32767 bytes).
    #[error("cannot encode {path}: {reason}")]
    InvalidValue {
        /// Field path.
        path: String,
        /// Why.
        reason: String,
    },
}

impl WireError {
    /// The field path the error refers to, when it refers to one.
    pub fn path(&self) -> Option<&str> {
        match self {
            WireError::Truncated { path, .. }
            | WireError::InvalidVarint { path }
            | WireError::InvalidUtf8 { path, .. }
            | WireError::UnexpectedNull { path }
            | WireError::InvalidLength { path, .. }
            | WireError::LengthExceedsRemaining { path, .. }
            | WireError::DuplicateTaggedField { path, .. }
            | WireError::TaggedFieldsOutOfOrder { path, .. }
            | WireError::TaggedFieldSize { path, .. }
            | WireError::FieldNotInVersion { path, .. }
            | WireError::InvalidValue { path, .. } => Some(path),
            WireError::UnsupportedVersion { .. } | WireError::TrailingBytes { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests;
