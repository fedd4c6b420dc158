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
use crate::error::ErrorCode;
use crate::protocol::{
    RequestHeader, STREAMS_GROUP_DESCRIBE_KEY, STREAMS_GROUP_HEARTBEAT_KEY, STREAMS_MAX_VERSION,
    STREAMS_MIN_VERSION, StreamsGroupDescribeRequest, StreamsGroupDescribeResponse,
    StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse, decode_response_header_v1,
};

use super::codec88;
use crate::wire::Reader;

macro_rules! kafka_enums {
    ($($name:ident($req:ident, $resp:ident)),* $(,)?) => {
        /// The kafka-protocol requests this server serves (each variant is named after its
        /// [`ApiKey`]).
        #[derive(Debug)]
        pub enum RequestKind { $(#[doc = concat!("A ", stringify!($name), " request.")] $name($req)),* }
        /// Their responses (plus ApiVersions).
        #[derive(Debug)]
        pub enum ResponseKind {
            /// An ApiVersions response.
            ApiVersions(ApiVersionsResponse),
            $(#[doc = concat!("A ", stringify!($name), " response.")] $name($resp)),*
        }

        impl RequestKind {
            /// Decode the body of a request with api key `key` at `version`.
            pub fn decode(key: i16, body: &mut Bytes, version: i16) -> Result<RequestKind, String> {
                match key {
                    $(k if k == ApiKey::$name as i16 => $req::decode(body, version).map(RequestKind::$name).map_err(|e| format!("{e:#}")),)*
                    _ => Err(format!("key {key} is not served")),
                }
            }
            /// Append the body at `version` to `buf`.
            pub fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<(), String> {
                match self { $(RequestKind::$name(r) => r.encode(buf, version).map_err(|e| format!("{e:#}")),)* }
            }
        }

        impl ResponseKind {
            /// Decode the body of a response with api key `key` at `version`.
            pub fn decode(key: i16, body: &mut Bytes, version: i16) -> Result<ResponseKind, String> {
                match key {
                    k if k == API_VERSIONS_KEY => ApiVersionsResponse::decode(body, version).map(ResponseKind::ApiVersions).map_err(|e| format!("{e:#}")),
                    $(k if k == ApiKey::$name as i16 => $resp::decode(body, version).map(ResponseKind::$name).map_err(|e| format!("{e:#}")),)*
                    _ => Err(format!("key {key} is not served")),
                }
            }
            /// Append the body at `version` to `buf`.
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
    Produce(ProduceRequest, ProduceResponse),
    Fetch(FetchRequest, FetchResponse),
    ListOffsets(ListOffsetsRequest, ListOffsetsResponse),
    Metadata(MetadataRequest, MetadataResponse),
    OffsetCommit(OffsetCommitRequest, OffsetCommitResponse),
    OffsetFetch(OffsetFetchRequest, OffsetFetchResponse),
    FindCoordinator(FindCoordinatorRequest, FindCoordinatorResponse),
    JoinGroup(JoinGroupRequest, JoinGroupResponse),
    Heartbeat(HeartbeatRequest, HeartbeatResponse),
    LeaveGroup(LeaveGroupRequest, LeaveGroupResponse),
    SyncGroup(SyncGroupRequest, SyncGroupResponse),
    DescribeGroups(DescribeGroupsRequest, DescribeGroupsResponse),
    ListGroups(ListGroupsRequest, ListGroupsResponse),
    CreateTopics(CreateTopicsRequest, CreateTopicsResponse),
    DeleteTopics(DeleteTopicsRequest, DeleteTopicsResponse),
    DeleteRecords(DeleteRecordsRequest, DeleteRecordsResponse),
    InitProducerId(InitProducerIdRequest, InitProducerIdResponse),
    OffsetForLeaderEpoch(OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse),
    DeleteGroups(DeleteGroupsRequest, DeleteGroupsResponse),
    OffsetDelete(OffsetDeleteRequest, OffsetDeleteResponse),
    DescribeAcls(DescribeAclsRequest, DescribeAclsResponse),
    CreateAcls(CreateAclsRequest, CreateAclsResponse),
    DeleteAcls(DeleteAclsRequest, DeleteAclsResponse),
    DescribeConfigs(DescribeConfigsRequest, DescribeConfigsResponse),
    IncrementalAlterConfigs(IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse),
    ConsumerGroupHeartbeat(ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse),
    ConsumerGroupDescribe(ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse),
    SaslHandshake(SaslHandshakeRequest, SaslHandshakeResponse),
    SaslAuthenticate(SaslAuthenticateRequest, SaslAuthenticateResponse),
    DescribeUserScramCredentials(DescribeUserScramCredentialsRequest, DescribeUserScramCredentialsResponse),
    AlterUserScramCredentials(AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse),
}

const API_VERSIONS_KEY: i16 = ApiKey::ApiVersions as i16;

/// The one table of served API keys and their version ranges (Kafka 4.4's ranges; versions
/// Kafka 4.0 removed under KIP-896 are not served, as on a real 4.x broker). Keys 88/89 take
/// their range from the core's codec.
pub const SUPPORTED: &[(i16, i16, i16)] = &[
    (ApiKey::Produce as i16, 3, 12), // data_plane; 13 needs topic ids, which Metadata lacks
    (ApiKey::Fetch as i16, 4, 17),   // data_plane
    (ApiKey::ListOffsets as i16, 1, 10),
    (ApiKey::Metadata as i16, 0, 12),
    (ApiKey::OffsetCommit as i16, 2, 9),
    (ApiKey::OffsetFetch as i16, 1, 9),
    (ApiKey::FindCoordinator as i16, 0, 6),
    (ApiKey::JoinGroup as i16, 2, 9), // v0-1 removed in Kafka 4.0 (KIP-896)
    (ApiKey::Heartbeat as i16, 0, 4),
    (ApiKey::LeaveGroup as i16, 0, 5),
    (ApiKey::SyncGroup as i16, 0, 5),
    (ApiKey::DescribeGroups as i16, 0, 6),
    (ApiKey::ListGroups as i16, 0, 5),
    (API_VERSIONS_KEY, 0, 4),
    (ApiKey::CreateTopics as i16, 2, 7),
    (ApiKey::DeleteTopics as i16, 1, 6),
    (ApiKey::DeleteRecords as i16, 0, 2),        // data_plane
    (ApiKey::InitProducerId as i16, 0, 5),       // data_plane; idempotent producers only
    (ApiKey::OffsetForLeaderEpoch as i16, 2, 4), // data_plane
    (ApiKey::DeleteGroups as i16, 0, 2),
    (ApiKey::OffsetDelete as i16, 0, 0),
    // v0-1 of the ACL keys and DescribeConfigs v0 were removed in Kafka 4.0 (KIP-896).
    (ApiKey::DescribeAcls as i16, 2, 3),
    (ApiKey::CreateAcls as i16, 2, 3),
    (ApiKey::DeleteAcls as i16, 2, 3),
    (ApiKey::DescribeConfigs as i16, 1, 4),
    (ApiKey::IncrementalAlterConfigs as i16, 0, 1),
    (ApiKey::ConsumerGroupHeartbeat as i16, 0, 1), // docs/consumer-protocol.md §K1
    (ApiKey::ConsumerGroupDescribe as i16, 0, 1),
    // Authentication (issue 16): answered by the connection's SASL exchange.
    (ApiKey::SaslHandshake as i16, 0, 1),
    (ApiKey::SaslAuthenticate as i16, 0, 2),
    (ApiKey::DescribeUserScramCredentials as i16, 0, 0),
    (ApiKey::AlterUserScramCredentials as i16, 0, 0),
    (
        STREAMS_GROUP_HEARTBEAT_KEY,
        STREAMS_MIN_VERSION,
        STREAMS_MAX_VERSION,
    ),
    (
        STREAMS_GROUP_DESCRIBE_KEY,
        STREAMS_MIN_VERSION,
        STREAMS_MAX_VERSION,
    ),
];

fn is_streams_key(key: i16) -> bool {
    key == STREAMS_GROUP_HEARTBEAT_KEY || key == STREAMS_GROUP_DESCRIBE_KEY
}

/// The served range of a key.
pub(crate) fn supported(key: i16, streams_enabled: bool) -> Option<(i16, i16)> {
    if !streams_enabled && is_streams_key(key) {
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
    /// The request's api key.
    pub api_key: i16,
    /// Its version.
    pub api_version: i16,
    /// Echoed in the response.
    pub correlation_id: i32,
    /// The client's id, if it sent one.
    pub client_id: Option<String>,
}

/// A decoded request body. (Moved, not stored: the size difference of variants is fine.)
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Req {
    /// ApiVersions (answered by the connection itself).
    ApiVersions(ApiVersionsRequest),
    /// Any other key served through kafka-protocol.
    Kafka(RequestKind),
    /// StreamsGroupHeartbeat (key 88, the core's codec).
    Heartbeat(StreamsGroupHeartbeatRequest),
    /// StreamsGroupDescribe (key 89, the core's codec).
    Describe(StreamsGroupDescribeRequest),
}

/// A response body.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Resp {
    /// A response of a key served through kafka-protocol.
    Kafka(ResponseKind),
    /// A StreamsGroupHeartbeat response.
    Heartbeat(StreamsGroupHeartbeatResponse),
    /// A StreamsGroupDescribe response.
    Describe(StreamsGroupDescribeResponse),
    /// A JoinGroup or SyncGroup answered later (completed by another member's request or a
    /// timer): the owner parks the request under this token until
    /// [`State::take_answers`](super::kafka::State::take_answers) yields its answer. Never encoded.
    Deferred(RequestToken),
}

/// Whether a request's answer may be deferred (JoinGroup and SyncGroup).
pub(crate) fn may_defer(req: &Req) -> bool {
    matches!(
        req,
        Req::Kafka(RequestKind::JoinGroup(_) | RequestKind::SyncGroup(_))
    )
}

/// What a frame decodes to.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Decoded {
    /// A request the server handles.
    Request(Header, Req),
    /// ApiVersions of a version we do not serve: answer v0 + error 35 + the full table.
    ApiVersionsUnsupported(Header),
    /// Nothing valid can be framed back: close the connection.
    Close(String),
}

fn request_header_version(key: i16, version: i16) -> i16 {
    if is_streams_key(key) {
        return 2;
    }
    match ApiKey::try_from(key) {
        Ok(k) => k.request_header_version(version),
        Err(_) => 1,
    }
}

fn response_header_version(key: i16, version: i16) -> i16 {
    if is_streams_key(key) {
        return 1;
    }
    if key == API_VERSIONS_KEY {
        // Always v0, so that a client on any version can read the error.
        return 0;
    }
    match ApiKey::try_from(key) {
        Ok(k) => k.response_header_version(version),
        Err(_) => 0,
    }
}

/// Parse the request header of a frame (after the size prefix); returns the header and the
/// body offset. The header version follows from the key and version; decoding is the core's
/// strict [`RequestHeader`] codec: a malformed varint or a client id that is not UTF-8 is an
/// error, not something to guess around.
pub(crate) fn parse_header(frame: &[u8]) -> Result<(Header, usize), String> {
    let (api_key, api_version) = crate::protocol::peek_api_key_version(frame)
        .ok_or_else(|| "request header truncated".to_owned())?;
    let header_version = request_header_version(api_key, api_version);
    let (h, body_offset) =
        RequestHeader::decode_version(frame, header_version).map_err(|e| e.to_string())?;
    Ok((
        Header {
            api_key: h.api_key,
            api_version: h.api_version,
            correlation_id: h.correlation_id,
            client_id: h.client_id,
        },
        body_offset,
    ))
}

/// Decode one frame (without its length prefix).
pub fn decode_frame(frame: Bytes, streams_enabled: bool) -> Decoded {
    // Header v0 is the part every header starts with: key, version, correlation id.
    let Ok((prefix, _)) = RequestHeader::decode_version(&frame, 0) else {
        return Decoded::Close(format!(
            "frame of {} bytes is shorter than a request header",
            frame.len()
        ));
    };
    let (key, version, correlation_id) =
        (prefix.api_key, prefix.api_version, prefix.correlation_id);
    let Some((lo, hi)) = supported(key, streams_enabled) else {
        return Decoded::Close(format!("unsupported API key {key} (version {version})"));
    };
    if key == API_VERSIONS_KEY && !(lo..=hi).contains(&version) {
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
    if let Err(e) = super::kafka::prevalidate::check_body(key, version, &frame[off..]) {
        return Decoded::Close(format!("malformed request (key {key} v{version}): {e}"));
    }
    let mut body = frame.slice(off..);
    let req = match key {
        STREAMS_GROUP_HEARTBEAT_KEY => {
            codec88::decode_heartbeat_request(&body, version).map(Req::Heartbeat)
        }
        STREAMS_GROUP_DESCRIBE_KEY => {
            codec88::decode_describe_request(&body, version).map(Req::Describe)
        }
        API_VERSIONS_KEY => ApiVersionsRequest::decode(&mut body, version)
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
pub(crate) fn encode_response_into(
    h: &Header,
    resp: &Resp,
    buf: &mut BytesMut,
) -> Result<(), String> {
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
pub(crate) fn api_versions_response(
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
pub(crate) fn api_versions_unsupported_frame(correlation_id: i32, streams_enabled: bool) -> Bytes {
    let h = Header {
        api_key: API_VERSIONS_KEY,
        api_version: 0,
        correlation_id,
        client_id: None,
    };
    let r = api_versions_response(ErrorCode::UNSUPPORTED_VERSION.0, 0, streams_enabled);
    encode_response(&h, &Resp::Kafka(ResponseKind::ApiVersions(r))).expect("v0 encodes")
}

/// The request header of `h`, at the header version its key and version use.
pub fn encode_request_header(h: &Header) -> Result<Vec<u8>, String> {
    let header = RequestHeader {
        api_key: h.api_key,
        api_version: h.api_version,
        correlation_id: h.correlation_id,
        client_id: h.client_id.clone(),
        unknown_tagged_fields: Vec::new(),
    };
    header
        .encode_version(request_header_version(h.api_key, h.api_version))
        .map_err(|e| e.to_string())
}

/// Encode a request frame (length prefix included): for tests, the bench and the demo client.
pub fn encode_request(h: &Header, req: &Req) -> Result<Bytes, String> {
    let mut buf = BytesMut::with_capacity(128);
    buf.put_u32(0);
    buf.put_slice(&encode_request_header(h)?);
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
    if response_header_version(api_key, api_version) >= 1 {
        let (corr, len) = decode_response_header_v1(frame).map_err(|e| e.to_string())?;
        return Ok((corr, &frame[len..]));
    }
    let mut r = Reader::new(frame, "ResponseHeader");
    let corr = r.i32("CorrelationId").map_err(|e| e.to_string())?;
    Ok((corr, &frame[4..]))
}

/// Decode a response body (after its header, see [`Header`]) of a key served through
/// kafka-protocol: the inverse of the server's response encoding, for clients and tests.
pub fn decode_kafka_response(
    api_key: i16,
    api_version: i16,
    body: &[u8],
) -> Result<ResponseKind, String> {
    let mut b = Bytes::copy_from_slice(body);
    ResponseKind::decode(api_key, &mut b, api_version)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Key 88 v1 (request header v2): key, version, correlation id, then `rest`.
    fn header_v2(rest: &[u8]) -> Vec<u8> {
        let mut frame = vec![0, 88, 0, 1, 0, 0, 0, 7];
        frame.extend_from_slice(rest);
        frame
    }

    #[test]
    fn header_round_trips_through_the_shared_codec() {
        let metadata = || Req::Kafka(RequestKind::Metadata(MetadataRequest::default()));
        let requests = [
            (
                88,
                1,
                Req::Heartbeat(StreamsGroupHeartbeatRequest::default()),
            ),
            (3, 0, metadata()),
            (3, 12, metadata()),
            (18, 3, Req::ApiVersions(ApiVersionsRequest::default())),
        ];
        for (key, version, req) in requests {
            let h = Header {
                api_key: key,
                api_version: version,
                correlation_id: 42,
                client_id: Some("client-é".into()),
            };
            let frame = encode_request(&h, &req).unwrap();
            let (parsed, offset) = parse_header(&frame[4..]).unwrap();
            assert_eq!(parsed, h, "key {key} v{version}");
            assert!(offset <= frame.len() - 4);
        }
    }

    #[test]
    fn overflowing_varint_in_the_header_is_an_error() {
        // Client id "c", then a tagged-field count whose fifth byte carries bits beyond 32 (it
        // would wrap to 0 if the overflow were ignored).
        let frame = header_v2(&[0, 1, b'c', 0x80, 0x80, 0x80, 0x80, 0x10]);
        let e = parse_header(&frame).unwrap_err();
        assert!(e.contains("varint"), "{e}");
        // Six bytes for a count of 0.
        let frame = header_v2(&[0, 1, b'c', 0x80, 0x80, 0x80, 0x80, 0x80, 0x00]);
        let e = parse_header(&frame).unwrap_err();
        assert!(e.contains("varint"), "{e}");
        // A well-formed count of 0 is fine.
        let frame = header_v2(&[0, 1, b'c', 0x00]);
        assert_eq!(parse_header(&frame).unwrap().1, frame.len());
    }

    #[test]
    fn client_id_that_is_not_utf8_is_an_error() {
        // Header v2 (key 88) and header v1 (Metadata v0).
        let v2 = header_v2(&[0, 2, 0xc3, 0x28, 0x00]);
        let v1 = [0, 3, 0, 0, 0, 0, 0, 1, 0, 1, 0xff];
        for frame in [&v2[..], &v1[..]] {
            let e = parse_header(frame).unwrap_err();
            assert!(e.contains("UTF-8") && e.contains("ClientId"), "{e}");
        }
    }

    #[test]
    fn malformed_headers_are_errors_naming_the_field() {
        // Negative client id length other than -1.
        let e = parse_header(&header_v2(&[0xff, 0xfe, 0x00])).unwrap_err();
        assert!(e.contains("ClientId"), "{e}");
        // Client id longer than the frame.
        let e = parse_header(&header_v2(&[0x00, 0x05, b'a'])).unwrap_err();
        assert!(e.contains("truncated") && e.contains("ClientId"), "{e}");
        // Tagged-field count larger than the bytes left.
        let e = parse_header(&header_v2(&[0xff, 0xff, 0x05, 0x00])).unwrap_err();
        assert!(e.contains("TaggedFields"), "{e}");
        assert!(parse_header(&[0, 88]).is_err());
    }

    #[test]
    fn streams_keys_take_their_range_from_the_core_codec() {
        for key in [STREAMS_GROUP_HEARTBEAT_KEY, STREAMS_GROUP_DESCRIBE_KEY] {
            assert_eq!(
                supported(key, true),
                Some((STREAMS_MIN_VERSION, STREAMS_MAX_VERSION))
            );
            assert_eq!(supported(key, false), None);
        }
        let mut keys: Vec<i16> = SUPPORTED.iter().map(|(k, _, _)| *k).collect();
        keys.dedup();
        assert_eq!(keys.len(), SUPPORTED.len(), "every key once");
    }
}
