//! The server's only contact points with the core codecs: coordinator records (for the log) and
//! the bodies of API keys 88/89 (for the wire). Kept in one place so the rest of the server does
//! not care how they are spelled.

use crate::protocol::{
    StreamsGroupDescribeRequest, StreamsGroupDescribeResponse, StreamsGroupHeartbeatRequest,
    StreamsGroupHeartbeatResponse,
};
use crate::records::Record;

/// Records -> batch body; fails for a record Kafka's layout cannot represent.
pub fn encode_records(records: &[Record]) -> Result<Vec<u8>, String> {
    crate::records::codec::encode_batch(records).map_err(|e| e.to_string())
}

/// Batch body -> records.
pub fn decode_records(body: &[u8]) -> Result<Vec<Record>, String> {
    crate::records::codec::decode_batch(body).map_err(|e| e.to_string())
}

pub fn decode_heartbeat_request(
    body: &[u8],
    version: i16,
) -> Result<StreamsGroupHeartbeatRequest, String> {
    StreamsGroupHeartbeatRequest::decode(body, version).map_err(|e| e.to_string())
}

pub fn encode_heartbeat_response(
    r: &StreamsGroupHeartbeatResponse,
    version: i16,
) -> Result<Vec<u8>, String> {
    r.encode(version).map_err(|e| e.to_string())
}

pub fn decode_describe_request(
    body: &[u8],
    version: i16,
) -> Result<StreamsGroupDescribeRequest, String> {
    StreamsGroupDescribeRequest::decode(body, version).map_err(|e| e.to_string())
}

pub fn encode_describe_response(
    r: &StreamsGroupDescribeResponse,
    version: i16,
) -> Result<Vec<u8>, String> {
    r.encode(version).map_err(|e| e.to_string())
}

pub fn encode_heartbeat_request(
    r: &StreamsGroupHeartbeatRequest,
    version: i16,
) -> Result<Vec<u8>, String> {
    r.encode(version).map_err(|e| e.to_string())
}

pub fn decode_heartbeat_response(
    body: &[u8],
    version: i16,
) -> Result<StreamsGroupHeartbeatResponse, String> {
    StreamsGroupHeartbeatResponse::decode(body, version).map_err(|e| e.to_string())
}

pub fn encode_describe_request(
    r: &StreamsGroupDescribeRequest,
    version: i16,
) -> Result<Vec<u8>, String> {
    r.encode(version).map_err(|e| e.to_string())
}

pub fn decode_describe_response(
    body: &[u8],
    version: i16,
) -> Result<StreamsGroupDescribeResponse, String> {
    StreamsGroupDescribeResponse::decode(body, version).map_err(|e| e.to_string())
}
