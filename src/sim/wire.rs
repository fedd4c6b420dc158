//! Heartbeats go through the wire codec so the message log carries the bytes the explorer shows.
//! Until the codec of API key 88 lands (`protocol::codec`), the bytes stay empty and the message
//! is passed through unchanged.

use crate::protocol::{StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse};

/// Request version the simulated clients send.
pub const HEARTBEAT_VERSION: i16 = 1;

/// Lowercase hex of some bytes.
#[allow(dead_code)] // until the codec of key 88 lands
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
    (String::new(), req.clone(), None)
}

/// Encode then decode a response, as for [`request_roundtrip`].
pub fn response_roundtrip(
    resp: &StreamsGroupHeartbeatResponse,
) -> (String, StreamsGroupHeartbeatResponse, Option<String>) {
    (String::new(), resp.clone(), None)
}
