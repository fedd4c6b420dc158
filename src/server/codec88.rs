//! The server's only contact points with the core codecs: coordinator records (for the log) and
//! the bodies of API keys 88/89 (for the wire). Kept in one place so the rest of the server does
//! not care how they are spelled.

use crate::protocol::{
    StreamsGroupDescribeRequest, StreamsGroupDescribeResponse, StreamsGroupHeartbeatRequest,
    StreamsGroupHeartbeatResponse,
};
use crate::records::Record;

/// Records -> batch body.
pub fn encode_records(records: &[Record]) -> Vec<u8> {
    crate::records::codec::encode_batch(records)
}

/// Batch body -> records.
pub fn decode_records(body: &[u8]) -> Result<Vec<Record>, String> {
    crate::records::codec::decode_batch(body).map_err(|e| e.to_string())
}

pub fn decode_heartbeat_request(
    _body: &[u8],
    _version: i16,
) -> Result<StreamsGroupHeartbeatRequest, String> {
    Err("codec for key 88 not available yet".into())
}

pub fn encode_heartbeat_response(_r: &StreamsGroupHeartbeatResponse, _version: i16) -> Vec<u8> {
    Vec::new()
}

pub fn decode_describe_request(
    _body: &[u8],
    _version: i16,
) -> Result<StreamsGroupDescribeRequest, String> {
    Err("codec for key 89 not available yet".into())
}

pub fn encode_describe_response(_r: &StreamsGroupDescribeResponse, _version: i16) -> Vec<u8> {
    Vec::new()
}

pub fn encode_heartbeat_request(_r: &StreamsGroupHeartbeatRequest, _version: i16) -> Vec<u8> {
    Vec::new()
}

pub fn decode_heartbeat_response(
    _body: &[u8],
    _version: i16,
) -> Result<StreamsGroupHeartbeatResponse, String> {
    Err("codec for key 88 not available yet".into())
}

pub fn encode_describe_request(_r: &StreamsGroupDescribeRequest, _version: i16) -> Vec<u8> {
    Vec::new()
}

pub fn decode_describe_response(
    _body: &[u8],
    _version: i16,
) -> Result<StreamsGroupDescribeResponse, String> {
    Err("codec for key 89 not available yet".into())
}
