//! Heartbeats go through the wire codec so the message log carries the bytes the explorer shows,
//! and the coordinator (and the client) see what the codec decoded.

use crate::protocol::{StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse};

/// Request version the simulated clients send.
pub const HEARTBEAT_VERSION: i16 = 1;

/// Lowercase hex of some bytes.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 0xf) as usize] as char);
    }
    s
}

/// Encode then decode a request: (hex of the body, the request as the coordinator sees it,
/// codec error if any).
pub fn request_roundtrip(
    req: &StreamsGroupHeartbeatRequest,
) -> (String, StreamsGroupHeartbeatRequest, Option<String>) {
    match req.encode(HEARTBEAT_VERSION) {
        Ok(bytes) => match StreamsGroupHeartbeatRequest::decode(&bytes, HEARTBEAT_VERSION) {
            Ok(decoded) => (hex(&bytes), decoded, None),
            Err(e) => (hex(&bytes), req.clone(), Some(format!("decode: {e}"))),
        },
        Err(e) => (String::new(), req.clone(), Some(format!("encode: {e}"))),
    }
}

/// Encode then decode a response, as for [`request_roundtrip`].
pub fn response_roundtrip(
    resp: &StreamsGroupHeartbeatResponse,
) -> (String, StreamsGroupHeartbeatResponse, Option<String>) {
    match resp.encode(HEARTBEAT_VERSION) {
        Ok(bytes) => match StreamsGroupHeartbeatResponse::decode(&bytes, HEARTBEAT_VERSION) {
            Ok(decoded) => (hex(&bytes), decoded, None),
            Err(e) => (hex(&bytes), resp.clone(), Some(format!("decode: {e}"))),
        },
        Err(e) => (String::new(), resp.clone(), Some(format!("encode: {e}"))),
    }
}
