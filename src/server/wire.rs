//! Kafka wire framing: request headers, request decoding, response encoding, the ApiVersions
//! table. `kafka-protocol` handles every key it knows; keys 88/89 go through the core's codec.
//! The request header is parsed here (the crate's header decoder rejects key 88).

use bytes::{BufMut, Bytes, BytesMut};
use kafka_protocol::messages::api_versions_response::{
    ApiVersion, FinalizedFeatureKey, SupportedFeatureKey,
};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};

use crate::coordinator::classic::RequestToken;
use crate::protocol::{
    StreamsGroupDescribeRequest, StreamsGroupDescribeResponse, StreamsGroupHeartbeatRequest,
    StreamsGroupHeartbeatResponse,
};

use super::codec88;

macro_rules! kafka_enums {
    ($($name:ident($req:ident, $resp:ident) = $key:expr),* $(,)?) => {
        /// The kafka-protocol requests this server serves.
        #[derive(Debug)]
        pub enum RequestKind { $($name($req)),* }
        /// Their responses (plus ApiVersions).
        #[derive(Debug)]
        pub enum ResponseKind { ApiVersions(ApiVersionsResponse), $($name($resp)),* }

        impl RequestKind {
            pub fn decode(key: i16, body: &mut Bytes, version: i16) -> Result<RequestKind, String> {
                match key {
                    $($key => $req::decode(body, version).map(RequestKind::$name).map_err(|e| format!("{e:#}")),)*
                    _ => Err(format!("key {key} is not served")),
                }
            }
            pub fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<(), String> {
                match self { $(RequestKind::$name(r) => r.encode(buf, version).map_err(|e| format!("{e:#}")),)* }
            }
        }

        impl ResponseKind {
            pub fn decode(key: i16, body: &mut Bytes, version: i16) -> Result<ResponseKind, String> {
                match key {
                    18 => ApiVersionsResponse::decode(body, version).map(ResponseKind::ApiVersions).map_err(|e| format!("{e:#}")),
                    $($key => $resp::decode(body, version).map(ResponseKind::$name).map_err(|e| format!("{e:#}")),)*
                    _ => Err(format!("key {key} is not served")),
                }
            }
            pub fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<(), String> {
                match self {
                    ResponseKind::ApiVersions(r) => r.encode(buf, version).map_err(|e| format!("{e:#}")),
                    $(ResponseKind::$name(r) => r.encode(buf, version).map_err(|e| format!("{e:#}")),)*
                }
            }
        }
    };
}

kafka_enums! {
    Produce(ProduceRequest, ProduceResponse) = 0,
    Fetch(FetchRequest, FetchResponse) = 1,
    ListOffsets(ListOffsetsRequest, ListOffsetsResponse) = 2,
    Metadata(MetadataRequest, MetadataResponse) = 3,
    OffsetCommit(OffsetCommitRequest, OffsetCommitResponse) = 8,
    OffsetFetch(OffsetFetchRequest, OffsetFetchResponse) = 9,
    FindCoordinator(FindCoordinatorRequest, FindCoordinatorResponse) = 10,
    JoinGroup(JoinGroupRequest, JoinGroupResponse) = 11,
    Heartbeat(HeartbeatRequest, HeartbeatResponse) = 12,
    LeaveGroup(LeaveGroupRequest, LeaveGroupResponse) = 13,
    SyncGroup(SyncGroupRequest, SyncGroupResponse) = 14,
    DescribeGroups(DescribeGroupsRequest, DescribeGroupsResponse) = 15,
    ListGroups(ListGroupsRequest, ListGroupsResponse) = 16,
    CreateTopics(CreateTopicsRequest, CreateTopicsResponse) = 19,
    DeleteTopics(DeleteTopicsRequest, DeleteTopicsResponse) = 20,
    DeleteRecords(DeleteRecordsRequest, DeleteRecordsResponse) = 21,
    InitProducerId(InitProducerIdRequest, InitProducerIdResponse) = 22,
    OffsetForLeaderEpoch(OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse) = 23,
    DeleteGroups(DeleteGroupsRequest, DeleteGroupsResponse) = 42,
    OffsetDelete(OffsetDeleteRequest, OffsetDeleteResponse) = 47,
}

pub const HEARTBEAT_KEY: i16 = 88;
pub const DESCRIBE_KEY: i16 = 89;
pub const UNSUPPORTED_VERSION: i16 = 35;

/// Every key this server serves, with its version range (Kafka 4.4's ranges; versions Kafka 4.0
/// removed under KIP-896 are not served, as on a real 4.x broker).
pub const SUPPORTED: &[(i16, i16, i16)] = &[
    (0, 3, 12), // Produce (data_plane; 13 needs topic ids, which Metadata does not carry)
    (1, 4, 17), // Fetch (data_plane)
    (2, 1, 10), // ListOffsets
    (3, 0, 12), // Metadata
    (8, 2, 9),  // OffsetCommit
    (9, 1, 9),  // OffsetFetch
    (10, 0, 6), // FindCoordinator
    (11, 2, 9), // JoinGroup (v0-1 removed in 4.0, KIP-896)
    (12, 0, 4), // Heartbeat
    (13, 0, 5), // LeaveGroup
    (14, 0, 5), // SyncGroup
    (15, 0, 6), // DescribeGroups
    (16, 0, 5), // ListGroups
    (18, 0, 4), // ApiVersions
    (19, 2, 7), // CreateTopics
    (20, 1, 6), // DeleteTopics
    (21, 0, 2), // DeleteRecords (data_plane)
    (22, 0, 5), // InitProducerId (data_plane; idempotent producers only)
    (23, 2, 4), // OffsetForLeaderEpoch (data_plane)
    (42, 0, 2), // DeleteGroups
    (47, 0, 0), // OffsetDelete
    (HEARTBEAT_KEY, 0, 1),
    (DESCRIBE_KEY, 0, 1),
];

/// The served range of a key.
pub fn supported(key: i16, streams_enabled: bool) -> Option<(i16, i16)> {
    if !streams_enabled && (key == HEARTBEAT_KEY || key == DESCRIBE_KEY) {
        return None;
    }
    SUPPORTED
        .iter()
        .find(|(k, _, _)| *k == key)
        .map(|(_, lo, hi)| (*lo, *hi))
}

/// A parsed request header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub api_key: i16,
    pub api_version: i16,
    pub correlation_id: i32,
    pub client_id: Option<String>,
}

/// A decoded request body. (Moved, not stored: the size difference of variants is fine.)
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Req {
    ApiVersions(ApiVersionsRequest),
    Kafka(RequestKind),
    Heartbeat(StreamsGroupHeartbeatRequest),
    Describe(StreamsGroupDescribeRequest),
}

/// A response body.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Resp {
    Kafka(ResponseKind),
    Heartbeat(StreamsGroupHeartbeatResponse),
    Describe(StreamsGroupDescribeResponse),
    /// A JoinGroup or SyncGroup answered later (completed by another member's request or a
    /// timer): the owner parks the request under this token until
    /// [`State::take_answers`](super::kafka::State::take_answers) yields its answer. Never encoded.
    Deferred(RequestToken),
}

/// Whether a request's answer may be deferred (JoinGroup and SyncGroup).
pub fn may_defer(req: &Req) -> bool {
    matches!(
        req,
        Req::Kafka(RequestKind::JoinGroup(_) | RequestKind::SyncGroup(_))
    )
}

/// What a frame decodes to.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Decoded {
    Request(Header, Req),
    /// ApiVersions of a version we do not serve: answer v0 + error 35 + the full table.
    ApiVersionsUnsupported(Header),
    /// Nothing valid can be framed back: close the connection.
    Close(String),
}

fn request_header_version(key: i16, version: i16) -> i16 {
    if key == HEARTBEAT_KEY || key == DESCRIBE_KEY {
        return 2;
    }
    match ApiKey::try_from(key) {
        Ok(k) => k.request_header_version(version),
        Err(_) => 1,
    }
}

fn response_header_version(key: i16, version: i16) -> i16 {
    if key == HEARTBEAT_KEY || key == DESCRIBE_KEY {
        return 1;
    }
    if key == 18 {
        return 0;
    }
    match ApiKey::try_from(key) {
        Ok(k) => k.response_header_version(version),
        Err(_) => 0,
    }
}

struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], String> {
        if self.buf.len() - self.pos < n {
            return Err("request header truncated".into());
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    fn i16(&mut self) -> Result<i16, String> {
        Ok(i16::from_be_bytes(self.take(2)?.try_into().unwrap()))
    }
    fn i32(&mut self) -> Result<i32, String> {
        Ok(i32::from_be_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn uvarint(&mut self) -> Result<u32, String> {
        let mut v: u32 = 0;
        for i in 0..5 {
            let b = self.take(1)?[0];
            v |= ((b & 0x7f) as u32) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("varint too long".into())
    }
}

/// Parse the request header of a frame; returns the header and the body offset.
pub fn parse_header(frame: &[u8]) -> Result<(Header, usize), String> {
    let mut c = Cursor { buf: frame, pos: 0 };
    let api_key = c.i16()?;
    let api_version = c.i16()?;
    let correlation_id = c.i32()?;
    let hv = request_header_version(api_key, api_version);
    let client_id = if hv >= 1 {
        let len = c.i16()?;
        if len < -1 {
            return Err("negative client id length".into());
        }
        if len == -1 {
            None
        } else {
            let b = c.take(len as usize)?;
            Some(String::from_utf8_lossy(b).into_owned())
        }
    } else {
        None
    };
    if hv >= 2 {
        let n = c.uvarint()?;
        for _ in 0..n {
            let _tag = c.uvarint()?;
            let size = c.uvarint()? as usize;
            c.take(size)?;
        }
    }
    Ok((
        Header {
            api_key,
            api_version,
            correlation_id,
            client_id,
        },
        c.pos,
    ))
}

/// Decode one frame (without its length prefix).
pub fn decode_frame(frame: Bytes, streams_enabled: bool) -> Decoded {
    if frame.len() < 8 {
        return Decoded::Close(format!(
            "frame of {} bytes is shorter than a request header",
            frame.len()
        ));
    }
    let key = i16::from_be_bytes([frame[0], frame[1]]);
    let version = i16::from_be_bytes([frame[2], frame[3]]);
    let correlation_id = i32::from_be_bytes([frame[4], frame[5], frame[6], frame[7]]);
    let Some((lo, hi)) = supported(key, streams_enabled) else {
        return Decoded::Close(format!("unsupported API key {key} (version {version})"));
    };
    if key == 18 && !(lo..=hi).contains(&version) {
        return Decoded::ApiVersionsUnsupported(Header {
            api_key: key,
            api_version: version,
            correlation_id,
            client_id: None,
        });
    }
    if !(lo..=hi).contains(&version) {
        return Decoded::Close(format!("unsupported version {version} of API key {key}"));
    }
    let (header, off) = match parse_header(&frame) {
        Ok(h) => h,
        Err(e) => return Decoded::Close(e),
    };
    let mut body = frame.slice(off..);
    let req = match key {
        HEARTBEAT_KEY => codec88::decode_heartbeat_request(&body, version).map(Req::Heartbeat),
        DESCRIBE_KEY => codec88::decode_describe_request(&body, version).map(Req::Describe),
        18 => ApiVersionsRequest::decode(&mut body, version)
            .map(Req::ApiVersions)
            .map_err(|e| e.to_string()),
        _ => RequestKind::decode(key, &mut body, version).map(Req::Kafka),
    };
    match req {
        Ok(r) => Decoded::Request(header, r),
        Err(e) => Decoded::Close(format!("malformed request (key {key} v{version}): {e}")),
    }
}

/// Encode a response frame, length prefix included.
pub fn encode_response(h: &Header, resp: &Resp) -> Result<Bytes, String> {
    let mut buf = BytesMut::with_capacity(128);
    encode_response_into(h, resp, &mut buf)?;
    Ok(buf.freeze())
}

/// Append a response frame (length prefix included) to `buf`.
pub fn encode_response_into(h: &Header, resp: &Resp, buf: &mut BytesMut) -> Result<(), String> {
    let start = buf.len();
    buf.put_u32(0);
    buf.put_i32(h.correlation_id);
    if response_header_version(h.api_key, h.api_version) >= 1 {
        buf.put_u8(0);
    }
    let r = match resp {
        Resp::Kafka(r) => r.encode(buf, h.api_version),
        Resp::Heartbeat(r) => {
            codec88::encode_heartbeat_response(r, h.api_version).map(|b| buf.put_slice(&b))
        }
        Resp::Describe(r) => {
            codec88::encode_describe_response(r, h.api_version).map(|b| buf.put_slice(&b))
        }
        Resp::Deferred(t) => Err(format!("deferred answer {} was never completed", t.0)),
    };
    if let Err(e) = r {
        buf.truncate(start);
        return Err(e);
    }
    let len = (buf.len() - start - 4) as u32;
    buf[start..start + 4].copy_from_slice(&len.to_be_bytes());
    Ok(())
}

/// The ApiVersions response (`error` 0 or 35).
pub fn api_versions_response(
    error: i16,
    version: i16,
    streams_enabled: bool,
) -> ApiVersionsResponse {
    let mut r = ApiVersionsResponse::default();
    r.error_code = error;
    r.api_keys = SUPPORTED
        .iter()
        .filter(|(k, _, _)| supported(*k, streams_enabled).is_some())
        .map(|(k, lo, hi)| {
            let mut v = ApiVersion::default();
            v.api_key = *k;
            v.min_version = *lo;
            v.max_version = *hi;
            v
        })
        .collect();
    if version >= 3 && error == 0 {
        let level = if streams_enabled { 1 } else { 0 };
        let mut sf = SupportedFeatureKey::default();
        sf.name = StrBytes::from_static_str("streams.version");
        sf.min_version = 0;
        sf.max_version = 1;
        r.supported_features = vec![sf];
        if level > 0 {
            let mut ff = FinalizedFeatureKey::default();
            ff.name = StrBytes::from_static_str("streams.version");
            ff.min_version_level = level;
            ff.max_version_level = level;
            r.finalized_features = vec![ff];
            r.finalized_features_epoch = 1;
        }
    }
    r
}

/// The ApiVersions answer to an unsupported ApiVersions version: v0 body, error 35, full table.
pub fn api_versions_unsupported_frame(correlation_id: i32, streams_enabled: bool) -> Bytes {
    let h = Header {
        api_key: 18,
        api_version: 0,
        correlation_id,
        client_id: None,
    };
    let r = api_versions_response(UNSUPPORTED_VERSION, 0, streams_enabled);
    encode_response(&h, &Resp::Kafka(ResponseKind::ApiVersions(r))).expect("v0 encodes")
}

/// Encode a request frame (length prefix included): for tests, the bench and the demo client.
pub fn encode_request(h: &Header, req: &Req) -> Result<Bytes, String> {
    let mut buf = BytesMut::with_capacity(128);
    buf.put_u32(0);
    buf.put_i16(h.api_key);
    buf.put_i16(h.api_version);
    buf.put_i32(h.correlation_id);
    let hv = request_header_version(h.api_key, h.api_version);
    if hv >= 1 {
        match &h.client_id {
            Some(c) => {
                buf.put_i16(c.len() as i16);
                buf.put_slice(c.as_bytes());
            }
            None => buf.put_i16(-1),
        }
    }
    if hv >= 2 {
        buf.put_u8(0);
    }
    match req {
        Req::ApiVersions(r) => r
            .encode(&mut buf, h.api_version)
            .map_err(|e| format!("{e:#}"))?,
        Req::Kafka(r) => r.encode(&mut buf, h.api_version)?,
        Req::Heartbeat(r) => buf.put_slice(&codec88::encode_heartbeat_request(r, h.api_version)?),
        Req::Describe(r) => buf.put_slice(&codec88::encode_describe_request(r, h.api_version)?),
    }
    let len = (buf.len() - 4) as u32;
    buf[0..4].copy_from_slice(&len.to_be_bytes());
    Ok(buf.freeze())
}

/// Split a response frame (without length prefix) into correlation id and body, given the
/// request it answers.
pub fn split_response(
    api_key: i16,
    api_version: i16,
    frame: &[u8],
) -> Result<(i32, &[u8]), String> {
    if frame.len() < 4 {
        return Err("response shorter than its header".into());
    }
    let corr = i32::from_be_bytes(frame[0..4].try_into().unwrap());
    let mut off = 4;
    if response_header_version(api_key, api_version) >= 1 {
        // Tagged fields: we only ever see an empty set.
        if frame.len() < 5 {
            return Err("response header truncated".into());
        }
        let n = frame[4];
        if n != 0 {
            return Err("unexpected tagged fields in response header".into());
        }
        off = 5;
    }
    Ok((corr, &frame[off..]))
}

/// Decode a response body of a kafka-protocol key.
pub fn decode_kafka_response(
    api_key: i16,
    api_version: i16,
    body: &[u8],
) -> Result<ResponseKind, String> {
    let mut b = Bytes::copy_from_slice(body);
    ResponseKind::decode(api_key, &mut b, api_version)
}
