//! Request header v2 and response header v1, the headers of flexible APIs such as keys 88/89.
//!
//! "Frame" below means the bytes of one request or response *after* the 4-byte size prefix.
//!
//! ```text
//! RequestHeader v2  => RequestApiKey int16, RequestApiVersion int16, CorrelationId int32,
//!                      ClientId nullable string (int16 length, NOT compact), TaggedFields
//! ResponseHeader v1 => CorrelationId int32, TaggedFields
//! ```

use serde::{Deserialize, Serialize};

use super::CodecError;
use crate::protocol::messages::UnknownTaggedFields;
use crate::wire::{Reader, Writer};

/// Request header v2.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RequestHeader {
    /// The API key of the request.
    pub api_key: i16,
    /// Its version.
    pub api_version: i16,
    /// Echoed in the response, so that the client can match it.
    pub correlation_id: i32,
    /// Classic (int16-length) nullable string, even in this flexible header.
    pub client_id: Option<String>,
    /// Tagged fields this codec does not know, kept so that re-encoding preserves them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

const REQUEST_HEADER: &str = "RequestHeader";

impl RequestHeader {
    /// Decodes a request header v2 at the start of `frame` (the bytes after the 4-byte size
    /// prefix) and returns it with its length in bytes; the body starts at that offset.
    pub fn decode(frame: &[u8]) -> Result<(Self, usize), CodecError> {
        Self::decode_version(frame, 2)
    }

    /// Decodes a request header of `header_version` (0: no client id; 1: + `ClientId`; 2: +
    /// tagged fields), as [`RequestHeader::decode`]. Every API's header is one of these; which
    /// one depends on the API key and version. The client id must be UTF-8 and a varint at most
    /// 5 bytes, as everywhere in the wire layer.
    pub fn decode_version(frame: &[u8], header_version: i16) -> Result<(Self, usize), CodecError> {
        let mut r = Reader::new(frame, REQUEST_HEADER);
        let header = Self {
            api_key: r.i16("RequestApiKey")?,
            api_version: r.i16("RequestApiVersion")?,
            correlation_id: r.i32("CorrelationId")?,
            client_id: if header_version >= 1 {
                r.nullable_string("ClientId")?
            } else {
                None
            },
            unknown_tagged_fields: if header_version >= 2 {
                r.tagged_fields()?
            } else {
                Vec::new()
            },
        };
        Ok((header, frame.len() - r.remaining()))
    }

    /// Encodes the header (v2).
    pub fn encode(&self) -> Result<Vec<u8>, CodecError> {
        self.encode_version(2)
    }

    /// Encodes the header at `header_version` (see [`RequestHeader::decode_version`]); fields
    /// the version lacks are left out.
    pub fn encode_version(&self, header_version: i16) -> Result<Vec<u8>, CodecError> {
        let mut w = Writer::new(REQUEST_HEADER);
        w.i16(self.api_key);
        w.i16(self.api_version);
        w.i32(self.correlation_id);
        if header_version >= 1 {
            w.nullable_string("ClientId", self.client_id.as_deref())?;
        }
        if header_version >= 2 {
            w.tagged_fields(&self.unknown_tagged_fields)?;
        }
        Ok(w.into_bytes())
    }
}

/// Response header v1 with no tagged fields: the correlation id and an empty tagged-field section.
pub fn encode_response_header_v1(correlation_id: i32) -> Vec<u8> {
    let mut w = Writer::new("ResponseHeader");
    w.i32(correlation_id);
    w.uvarint(0); // no tagged fields
    w.into_bytes()
}

/// Decodes a response header v1 at the start of `frame`: its correlation id and its length in
/// bytes (tagged fields in it are skipped).
pub fn decode_response_header_v1(frame: &[u8]) -> Result<(i32, usize), CodecError> {
    let mut r = Reader::new(frame, "ResponseHeader");
    let correlation_id = r.i32("CorrelationId")?;
    r.tagged_fields()?;
    Ok((correlation_id, frame.len() - r.remaining()))
}

/// `(api_key, api_version)` of a request frame (the bytes after the 4-byte size prefix), read
/// without decoding anything else; `None` if the frame is shorter than 4 bytes. Works for every
/// request header version.
pub fn peek_api_key_version(frame: &[u8]) -> Option<(i16, i16)> {
    let mut r = Reader::new(frame, REQUEST_HEADER);
    Some((
        r.i16("RequestApiKey").ok()?,
        r.i16("RequestApiVersion").ok()?,
    ))
}
