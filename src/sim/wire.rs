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

// ---------------------------------------------------------------------------------------------
// Classic group messages: JoinGroup v9, SyncGroup v5, Heartbeat v4, LeaveGroup v5 (all flexible),
// written with the project's wire primitives (smaller in wasm than the `kafka-protocol` crate's
// codecs for every version); the tests check them against `kafka-protocol`.
// ---------------------------------------------------------------------------------------------

use crate::error::ErrorCode;
use crate::protocol::classic::{
    HeartbeatRequest, JoinGroupRequest, JoinGroupResponse, JoinGroupResponseMember, JoinProtocol,
    LeaveGroupRequest, LeaveGroupResponse, LeavingMember, LeftMember, SyncGroupRequest,
    SyncGroupResponse,
};
use crate::wire::{Reader, WireError, Writer};

/// A compact array of structs read by `f` (a function pointer: one instantiation for all).
fn items<T>(
    r: &mut Reader<'_>,
    name: &'static str,
    f: fn(&mut Reader<'_>) -> Result<T, WireError>,
) -> Result<Vec<T>, WireError> {
    let n = r.compact_array_len(name)?;
    let mut out = Vec::with_capacity(n.min(64));
    for _ in 0..n {
        out.push(f(r)?);
        r.skip_tagged_fields()?;
    }
    Ok(out)
}

fn join_protocol(r: &mut Reader<'_>) -> Result<JoinProtocol, WireError> {
    Ok(JoinProtocol {
        name: r.compact_string("Name")?,
        metadata: r.compact_bytes("Metadata")?.to_vec(),
    })
}

fn sync_assignment(r: &mut Reader<'_>) -> Result<(String, Vec<u8>), WireError> {
    Ok((
        r.compact_string("MemberId")?,
        r.compact_bytes("Assignment")?.to_vec(),
    ))
}

fn leaving_member(r: &mut Reader<'_>) -> Result<LeavingMember, WireError> {
    Ok(LeavingMember {
        member_id: r.compact_string("MemberId")?,
        group_instance_id: r.compact_nullable_string("GroupInstanceId")?,
        reason: r.compact_nullable_string("Reason")?,
    })
}

fn join_member(r: &mut Reader<'_>) -> Result<JoinGroupResponseMember, WireError> {
    Ok(JoinGroupResponseMember {
        member_id: r.compact_string("MemberId")?,
        group_instance_id: r.compact_nullable_string("GroupInstanceId")?,
        metadata: r.compact_bytes("Metadata")?.to_vec(),
    })
}

fn left_member(r: &mut Reader<'_>) -> Result<LeftMember, WireError> {
    Ok(LeftMember {
        member_id: r.compact_string("MemberId")?,
        group_instance_id: r.compact_nullable_string("GroupInstanceId")?,
        error_code: ErrorCode(r.i16("ErrorCode")?),
    })
}

/// A classic request as a simulated consumer sends it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(untagged)]
pub(crate) enum ClassicRequest {
    Join(JoinGroupRequest),
    Sync(SyncGroupRequest),
    Heartbeat(HeartbeatRequest),
    Leave(LeaveGroupRequest),
}

/// The coordinator's answer to a [`ClassicRequest`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(untagged)]
pub(crate) enum ClassicResponse {
    Join(JoinGroupResponse),
    Sync(SyncGroupResponse),
    Heartbeat { error_code: ErrorCode },
    Leave(LeaveGroupResponse),
}

impl ClassicRequest {
    /// The API name and the version the simulated consumers use.
    pub fn api(&self) -> (&'static str, i16) {
        match self {
            ClassicRequest::Join(_) => ("JoinGroup", 9),
            ClassicRequest::Sync(_) => ("SyncGroup", 5),
            ClassicRequest::Heartbeat(_) => ("Heartbeat", 4),
            ClassicRequest::Leave(_) => ("LeaveGroup", 5),
        }
    }

    fn encode(&self) -> Result<Vec<u8>, WireError> {
        let mut w = Writer::new(self.api().0);
        match self {
            ClassicRequest::Join(r) => {
                w.compact_string("GroupId", &r.group_id)?;
                w.i32(r.session_timeout_ms);
                w.i32(r.rebalance_timeout_ms);
                w.compact_string("MemberId", &r.member_id)?;
                w.compact_nullable_string("GroupInstanceId", r.group_instance_id.as_deref())?;
                w.compact_string("ProtocolType", &r.protocol_type)?;
                w.uvarint(r.protocols.len() as u32 + 1);
                for p in &r.protocols {
                    w.compact_string("Name", &p.name)?;
                    w.compact_bytes("Metadata", &p.metadata)?;
                    w.no_tagged_fields();
                }
                w.compact_nullable_string("Reason", r.reason.as_deref())?;
            }
            ClassicRequest::Sync(r) => {
                w.compact_string("GroupId", &r.group_id)?;
                w.i32(r.generation_id);
                w.compact_string("MemberId", &r.member_id)?;
                w.compact_nullable_string("GroupInstanceId", r.group_instance_id.as_deref())?;
                w.compact_nullable_string("ProtocolType", r.protocol_type.as_deref())?;
                w.compact_nullable_string("ProtocolName", r.protocol_name.as_deref())?;
                w.uvarint(r.assignments.len() as u32 + 1);
                for (m, a) in &r.assignments {
                    w.compact_string("MemberId", m)?;
                    w.compact_bytes("Assignment", a)?;
                    w.no_tagged_fields();
                }
            }
            ClassicRequest::Heartbeat(r) => {
                w.compact_string("GroupId", &r.group_id)?;
                w.i32(r.generation_id);
                w.compact_string("MemberId", &r.member_id)?;
                w.compact_nullable_string("GroupInstanceId", r.group_instance_id.as_deref())?;
            }
            ClassicRequest::Leave(r) => {
                w.compact_string("GroupId", &r.group_id)?;
                w.uvarint(r.members.len() as u32 + 1);
                for m in &r.members {
                    w.compact_string("MemberId", &m.member_id)?;
                    w.compact_nullable_string("GroupInstanceId", m.group_instance_id.as_deref())?;
                    w.compact_nullable_string("Reason", m.reason.as_deref())?;
                    w.no_tagged_fields();
                }
            }
        }
        w.no_tagged_fields();
        Ok(w.into_bytes())
    }

    /// Reads `bytes` as the same API as `self` (the request header names the API).
    fn decode_like(&self, bytes: &[u8]) -> Result<ClassicRequest, WireError> {
        let mut r = Reader::new(bytes, self.api().0);
        let out = match self {
            ClassicRequest::Join(_) => ClassicRequest::Join(JoinGroupRequest {
                group_id: r.compact_string("GroupId")?,
                session_timeout_ms: r.i32("SessionTimeoutMs")?,
                rebalance_timeout_ms: r.i32("RebalanceTimeoutMs")?,
                member_id: r.compact_string("MemberId")?,
                group_instance_id: r.compact_nullable_string("GroupInstanceId")?,
                protocol_type: r.compact_string("ProtocolType")?,
                protocols: items(&mut r, "Protocols", join_protocol)?,
                reason: r.compact_nullable_string("Reason")?,
            }),
            ClassicRequest::Sync(_) => ClassicRequest::Sync(SyncGroupRequest {
                group_id: r.compact_string("GroupId")?,
                generation_id: r.i32("GenerationId")?,
                member_id: r.compact_string("MemberId")?,
                group_instance_id: r.compact_nullable_string("GroupInstanceId")?,
                protocol_type: r.compact_nullable_string("ProtocolType")?,
                protocol_name: r.compact_nullable_string("ProtocolName")?,
                assignments: items(&mut r, "Assignments", sync_assignment)?,
            }),
            ClassicRequest::Heartbeat(_) => ClassicRequest::Heartbeat(HeartbeatRequest {
                group_id: r.compact_string("GroupId")?,
                generation_id: r.i32("GenerationId")?,
                member_id: r.compact_string("MemberId")?,
                group_instance_id: r.compact_nullable_string("GroupInstanceId")?,
            }),
            ClassicRequest::Leave(_) => ClassicRequest::Leave(LeaveGroupRequest {
                group_id: r.compact_string("GroupId")?,
                members: items(&mut r, "Members", leaving_member)?,
            }),
        };
        r.skip_tagged_fields()?;
        r.finish()?;
        Ok(out)
    }
}

impl ClassicResponse {
    /// The response's error code.
    pub fn error_code(&self) -> ErrorCode {
        match self {
            ClassicResponse::Join(r) => r.error_code,
            ClassicResponse::Sync(r) => r.error_code,
            ClassicResponse::Heartbeat { error_code } => *error_code,
            ClassicResponse::Leave(r) => r.error_code,
        }
    }

    fn name(&self) -> &'static str {
        match self {
            ClassicResponse::Join(_) => "JoinGroupResponse",
            ClassicResponse::Sync(_) => "SyncGroupResponse",
            ClassicResponse::Heartbeat { .. } => "HeartbeatResponse",
            ClassicResponse::Leave(_) => "LeaveGroupResponse",
        }
    }

    fn encode(&self) -> Result<Vec<u8>, WireError> {
        let mut w = Writer::new(self.name());
        w.i32(0); // ThrottleTimeMs
        w.i16(self.error_code().0);
        match self {
            ClassicResponse::Join(r) => {
                w.i32(r.generation_id);
                w.compact_nullable_string("ProtocolType", r.protocol_type.as_deref())?;
                w.compact_nullable_string("ProtocolName", r.protocol_name.as_deref())?;
                w.compact_string("Leader", &r.leader)?;
                w.bool(r.skip_assignment);
                w.compact_string("MemberId", &r.member_id)?;
                w.uvarint(r.members.len() as u32 + 1);
                for m in &r.members {
                    w.compact_string("MemberId", &m.member_id)?;
                    w.compact_nullable_string("GroupInstanceId", m.group_instance_id.as_deref())?;
                    w.compact_bytes("Metadata", &m.metadata)?;
                    w.no_tagged_fields();
                }
            }
            ClassicResponse::Sync(r) => {
                w.compact_nullable_string("ProtocolType", r.protocol_type.as_deref())?;
                w.compact_nullable_string("ProtocolName", r.protocol_name.as_deref())?;
                w.compact_bytes("Assignment", &r.assignment)?;
            }
            ClassicResponse::Heartbeat { .. } => {}
            ClassicResponse::Leave(r) => {
                w.uvarint(r.members.len() as u32 + 1);
                for m in &r.members {
                    w.compact_string("MemberId", &m.member_id)?;
                    w.compact_nullable_string("GroupInstanceId", m.group_instance_id.as_deref())?;
                    w.i16(m.error_code.0);
                    w.no_tagged_fields();
                }
            }
        }
        w.no_tagged_fields();
        Ok(w.into_bytes())
    }

    fn decode_like(&self, bytes: &[u8]) -> Result<ClassicResponse, WireError> {
        let mut r = Reader::new(bytes, self.name());
        r.i32("ThrottleTimeMs")?;
        let error_code = ErrorCode(r.i16("ErrorCode")?);
        let out = match self {
            ClassicResponse::Join(_) => ClassicResponse::Join(JoinGroupResponse {
                error_code,
                generation_id: r.i32("GenerationId")?,
                protocol_type: r.compact_nullable_string("ProtocolType")?,
                protocol_name: r.compact_nullable_string("ProtocolName")?,
                leader: r.compact_string("Leader")?,
                skip_assignment: r.bool("SkipAssignment")?,
                member_id: r.compact_string("MemberId")?,
                members: items(&mut r, "Members", join_member)?,
            }),
            ClassicResponse::Sync(_) => ClassicResponse::Sync(SyncGroupResponse {
                error_code,
                protocol_type: r.compact_nullable_string("ProtocolType")?,
                protocol_name: r.compact_nullable_string("ProtocolName")?,
                assignment: r.compact_bytes("Assignment")?.to_vec(),
            }),
            ClassicResponse::Heartbeat { .. } => ClassicResponse::Heartbeat { error_code },
            ClassicResponse::Leave(_) => ClassicResponse::Leave(LeaveGroupResponse {
                error_code,
                members: items(&mut r, "Members", left_member)?,
            }),
        };
        r.skip_tagged_fields()?;
        r.finish()?;
        Ok(out)
    }
}

/// Encode then decode a classic request, as [`request_roundtrip`] does for heartbeats.
pub(crate) fn classic_request_roundtrip(
    req: ClassicRequest,
) -> (String, ClassicRequest, Option<String>) {
    match req.encode() {
        Ok(bytes) => match req.decode_like(&bytes) {
            Ok(decoded) => (hex(&bytes), decoded, None),
            Err(e) => (hex(&bytes), req, Some(format!("decode: {e}"))),
        },
        Err(e) => (String::new(), req, Some(format!("encode: {e}"))),
    }
}

/// Encode then decode a classic response.
pub(crate) fn classic_response_roundtrip(
    resp: ClassicResponse,
) -> (String, ClassicResponse, Option<String>) {
    match resp.encode() {
        Ok(bytes) => match resp.decode_like(&bytes) {
            Ok(decoded) => (hex(&bytes), decoded, None),
            Err(e) => (hex(&bytes), resp, Some(format!("decode: {e}"))),
        },
        Err(e) => (String::new(), resp, Some(format!("encode: {e}"))),
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use bytes::Bytes;
    use kafka_protocol::messages as k;
    use kafka_protocol::protocol::{Decodable, Encodable};

    use super::*;

    fn again<T: Decodable + Encodable>(bytes: &[u8], version: i16) -> Vec<u8> {
        let mut buf = Bytes::copy_from_slice(bytes);
        let m = T::decode(&mut buf, version).expect("kafka-protocol decodes it");
        assert!(buf.is_empty(), "trailing bytes");
        let mut out = Vec::new();
        m.encode(&mut out, version)
            .expect("kafka-protocol encodes it");
        out
    }

    /// Every message decodes with `kafka-protocol` at the version named and re-encodes to the
    /// same bytes; our decoder gives back what was encoded.
    #[test]
    fn classic_messages_match_kafka_protocol() {
        let join = ClassicRequest::Join(JoinGroupRequest {
            group_id: "g".into(),
            session_timeout_ms: 45000,
            rebalance_timeout_ms: 300000,
            member_id: "m-1".into(),
            group_instance_id: Some("i1".into()),
            protocol_type: "consumer".into(),
            protocols: vec![JoinProtocol {
                name: "range".into(),
                metadata: vec![0, 3, 1, 2],
            }],
            reason: Some("rebalance failed".into()),
        });
        let sync = ClassicRequest::Sync(SyncGroupRequest {
            group_id: "g".into(),
            generation_id: 4,
            member_id: "m-1".into(),
            group_instance_id: None,
            protocol_type: Some("consumer".into()),
            protocol_name: Some("range".into()),
            assignments: vec![("m-1".into(), vec![9, 9])],
        });
        let hb = ClassicRequest::Heartbeat(HeartbeatRequest {
            group_id: "g".into(),
            generation_id: 4,
            member_id: "m-1".into(),
            group_instance_id: Some("i".into()),
        });
        let leave = ClassicRequest::Leave(LeaveGroupRequest {
            group_id: "g".into(),
            members: vec![LeavingMember {
                member_id: "m-1".into(),
                group_instance_id: None,
                reason: Some("the consumer is being closed".into()),
            }],
        });
        for req in [join, sync, hb, leave] {
            let bytes = req.encode().unwrap();
            assert_eq!(req.decode_like(&bytes).unwrap(), req);
            let k = match &req {
                ClassicRequest::Join(_) => again::<k::JoinGroupRequest>(&bytes, 9),
                ClassicRequest::Sync(_) => again::<k::SyncGroupRequest>(&bytes, 5),
                ClassicRequest::Heartbeat(_) => again::<k::HeartbeatRequest>(&bytes, 4),
                ClassicRequest::Leave(_) => again::<k::LeaveGroupRequest>(&bytes, 5),
            };
            assert_eq!(k, bytes, "{req:?}");
            for n in 0..bytes.len() {
                assert!(req.decode_like(&bytes[..n]).is_err());
            }
        }
        let responses = [
            ClassicResponse::Join(JoinGroupResponse {
                error_code: ErrorCode::NONE,
                generation_id: 3,
                protocol_type: Some("consumer".into()),
                protocol_name: Some("range".into()),
                leader: "m-1".into(),
                skip_assignment: true,
                member_id: "m-2".into(),
                members: vec![JoinGroupResponseMember {
                    member_id: "m-1".into(),
                    group_instance_id: Some("i".into()),
                    metadata: vec![1],
                }],
            }),
            ClassicResponse::Sync(SyncGroupResponse {
                error_code: ErrorCode::REBALANCE_IN_PROGRESS,
                protocol_type: None,
                protocol_name: Some("range".into()),
                assignment: vec![0, 3],
            }),
            ClassicResponse::Heartbeat {
                error_code: ErrorCode::ILLEGAL_GENERATION,
            },
            ClassicResponse::Leave(LeaveGroupResponse {
                error_code: ErrorCode::NONE,
                members: vec![LeftMember {
                    member_id: "m-1".into(),
                    group_instance_id: None,
                    error_code: ErrorCode::UNKNOWN_MEMBER_ID,
                }],
            }),
        ];
        for resp in responses {
            let bytes = resp.encode().unwrap();
            assert_eq!(resp.decode_like(&bytes).unwrap(), resp);
            let k = match &resp {
                ClassicResponse::Join(_) => again::<k::JoinGroupResponse>(&bytes, 9),
                ClassicResponse::Sync(_) => again::<k::SyncGroupResponse>(&bytes, 5),
                ClassicResponse::Heartbeat { .. } => again::<k::HeartbeatResponse>(&bytes, 4),
                ClassicResponse::Leave(_) => again::<k::LeaveGroupResponse>(&bytes, 5),
            };
            assert_eq!(k, bytes, "{resp:?}");
        }
    }
}
