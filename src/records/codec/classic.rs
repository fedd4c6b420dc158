//! Classic groups: `GroupMetadataValue` (record type 2), value versions 0-4.
//!
//! | version | adds |
//! |---|---|
//! | 0 | protocolType string, generation int32, protocol nullable string, leader nullable string, members [memberId, clientId, clientHost, sessionTimeout int32, subscription bytes, assignment bytes] |
//! | 1 | member rebalanceTimeout int32 (after clientHost) |
//! | 2 | currentStateTimestamp int64 (after leader) |
//! | 3 | member groupInstanceId nullable string (after memberId) |
//! | 4 | flexible: compact strings, bytes and arrays, tagged fields per struct |
//!
//! Written at version 3, as Kafka's `newGroupMetadataRecord` does. Read and written through the
//! wire layer: a member count the remaining bytes cannot hold is refused before anything is
//! allocated for it.

use super::RecordCodecError;
use crate::records::{ClassicGroupMetadataValue, ClassicMemberMetadata};
use crate::wire::{Reader, WireError, Writer};

pub(crate) const GROUP_METADATA_KEY: &str = "GroupMetadataKey";
pub(crate) const GROUP_METADATA: &str = "GroupMetadataValue";

/// The version groupcoord writes.
pub(crate) const WRITE_VERSION: i16 = 3;

pub(crate) fn encode_group_metadata(v: &ClassicGroupMetadataValue) -> Result<Vec<u8>, WireError> {
    let mut w = Writer::new(GROUP_METADATA);
    w.i16(WRITE_VERSION);
    w.string("protocolType", &v.protocol_type)?;
    w.i32(v.generation);
    w.nullable_string("protocol", v.protocol.as_deref())?;
    w.nullable_string("leader", v.leader.as_deref())?;
    w.i64(v.current_state_timestamp);
    w.array("members", &v.members, |w, m| {
        w.string("memberId", &m.member_id)?;
        w.nullable_string("groupInstanceId", m.group_instance_id.as_deref())?;
        w.string("clientId", &m.client_id)?;
        w.string("clientHost", &m.client_host)?;
        w.i32(m.rebalance_timeout);
        w.i32(m.session_timeout);
        w.bytes("subscription", &m.subscription)?;
        w.bytes("assignment", &m.assignment)
    })?;
    Ok(w.into_bytes())
}

/// A string of a version: int16 length, or compact from the flexible version 4.
fn string(r: &mut Reader<'_>, flexible: bool, name: &'static str) -> Result<String, WireError> {
    if flexible {
        r.compact_string(name)
    } else {
        r.string(name)
    }
}

fn nullable_string(
    r: &mut Reader<'_>,
    flexible: bool,
    name: &'static str,
) -> Result<Option<String>, WireError> {
    if flexible {
        r.compact_nullable_string(name)
    } else {
        r.nullable_string(name)
    }
}

fn bytes(r: &mut Reader<'_>, flexible: bool, name: &'static str) -> Result<Vec<u8>, WireError> {
    let b = if flexible {
        r.compact_bytes(name)?
    } else {
        r.bytes(name)?
    };
    Ok(b.to_vec())
}

fn read_member(r: &mut Reader<'_>, version: i16) -> Result<ClassicMemberMetadata, WireError> {
    let flexible = version >= 4;
    let member_id = string(r, flexible, "memberId")?;
    let group_instance_id = if version >= 3 {
        nullable_string(r, flexible, "groupInstanceId")?
    } else {
        None
    };
    let client_id = string(r, flexible, "clientId")?;
    let client_host = string(r, flexible, "clientHost")?;
    let rebalance_timeout = if version >= 1 {
        r.i32("rebalanceTimeout")?
    } else {
        -1
    };
    let session_timeout = r.i32("sessionTimeout")?;
    let subscription = bytes(r, flexible, "subscription")?;
    let assignment = bytes(r, flexible, "assignment")?;
    if flexible {
        r.skip_tagged_fields()?;
    }
    Ok(ClassicMemberMetadata {
        member_id,
        group_instance_id,
        client_id,
        client_host,
        rebalance_timeout,
        session_timeout,
        subscription,
        assignment,
    })
}

pub(crate) fn decode_group_metadata(
    bytes: &[u8],
) -> Result<ClassicGroupMetadataValue, RecordCodecError> {
    let mut r = Reader::new(bytes, GROUP_METADATA);
    let version = r.i16("version")?;
    if !(0..=4).contains(&version) {
        return Err(RecordCodecError::UnsupportedVersion {
            record: GROUP_METADATA,
            version,
        });
    }
    let flexible = version >= 4;
    let protocol_type = string(&mut r, flexible, "protocolType")?;
    let generation = r.i32("generation")?;
    let protocol = nullable_string(&mut r, flexible, "protocol")?;
    let leader = nullable_string(&mut r, flexible, "leader")?;
    let current_state_timestamp = if version >= 2 {
        r.i64("currentStateTimestamp")?
    } else {
        -1
    };
    let member = |r: &mut Reader<'_>| read_member(r, version);
    let members = if flexible {
        r.compact_array("members", member)?
    } else {
        r.array("members", member)?
    };
    if flexible {
        r.skip_tagged_fields()?;
    }
    r.finish()?;
    Ok(ClassicGroupMetadataValue {
        protocol_type,
        generation,
        protocol,
        leader,
        current_state_timestamp,
        members,
    })
}

#[cfg(test)]
mod tests {
    use crate::records::{
        ClassicGroupMetadataValue, ClassicMemberMetadata, Record, RecordCodecError, decode_record,
        encode_record,
    };

    fn value() -> ClassicGroupMetadataValue {
        ClassicGroupMetadataValue {
            protocol_type: "consumer".into(),
            generation: 3,
            protocol: Some("range".into()),
            leader: Some("m1".into()),
            current_state_timestamp: 77,
            members: vec![
                ClassicMemberMetadata {
                    member_id: "m1".into(),
                    group_instance_id: Some("i1".into()),
                    client_id: "c".into(),
                    client_host: "/h".into(),
                    rebalance_timeout: 300_000,
                    session_timeout: 45_000,
                    subscription: vec![0, 1, 2],
                    assignment: vec![9],
                },
                ClassicMemberMetadata {
                    member_id: "m2".into(),
                    group_instance_id: None,
                    client_id: "c2".into(),
                    client_host: "/h2".into(),
                    rebalance_timeout: 10,
                    session_timeout: 20,
                    subscription: vec![],
                    assignment: vec![],
                },
            ],
        }
    }

    #[test]
    fn round_trip_and_tombstone() {
        let r = Record::ClassicGroupMetadata {
            group_id: "g".into(),
            value: Some(value()),
        };
        let (k, v) = encode_record(&r).unwrap();
        assert_eq!(k, [0, 2, 0, 1, b'g']);
        assert_eq!(decode_record(&k, v.as_deref()).unwrap(), r);
        let t = Record::ClassicGroupMetadata {
            group_id: "g".into(),
            value: None,
        };
        let (k, v) = encode_record(&t).unwrap();
        assert_eq!(v, None);
        assert_eq!(decode_record(&k, None).unwrap(), t);
    }

    /// Bytes built by hand from the v3 schema.
    #[test]
    fn v3_layout_from_the_schema() {
        let v = ClassicGroupMetadataValue {
            protocol_type: "c".into(),
            generation: 1,
            protocol: Some("r".into()),
            leader: None,
            current_state_timestamp: 5,
            members: vec![ClassicMemberMetadata {
                member_id: "m".into(),
                group_instance_id: None,
                client_id: "x".into(),
                client_host: "h".into(),
                rebalance_timeout: 7,
                session_timeout: 6,
                subscription: vec![0xaa],
                assignment: vec![],
            }],
        };
        let (_, bytes) = encode_record(&Record::ClassicGroupMetadata {
            group_id: "g".into(),
            value: Some(v.clone()),
        })
        .unwrap();
        let expected: Vec<u8> = [
            &[0, 3][..],               // version
            &[0, 1, b'c'],             // protocolType
            &[0, 0, 0, 1],             // generation
            &[0, 1, b'r'],             // protocol
            &[0xff, 0xff],             // leader: null
            &[0, 0, 0, 0, 0, 0, 0, 5], // currentStateTimestamp
            &[0, 0, 0, 1],             // members: 1
            &[0, 1, b'm'],             // memberId
            &[0xff, 0xff],             // groupInstanceId: null
            &[0, 1, b'x'],             // clientId
            &[0, 1, b'h'],             // clientHost
            &[0, 0, 0, 7],             // rebalanceTimeout
            &[0, 0, 0, 6],             // sessionTimeout
            &[0, 0, 0, 1, 0xaa],       // subscription
            &[0, 0, 0, 0],             // assignment
        ]
        .concat();
        assert_eq!(bytes.unwrap(), expected);
    }

    #[test]
    fn older_and_flexible_versions_decode() {
        let key = [0, 2, 0, 1, b'g'];
        let expect = |rebalance, ts, instance: Option<&str>| ClassicGroupMetadataValue {
            protocol_type: "c".into(),
            generation: 2,
            protocol: None,
            leader: Some("m".into()),
            current_state_timestamp: ts,
            members: vec![ClassicMemberMetadata {
                member_id: "m".into(),
                group_instance_id: instance.map(str::to_string),
                client_id: "x".into(),
                client_host: "h".into(),
                rebalance_timeout: rebalance,
                session_timeout: 6,
                subscription: vec![1],
                assignment: vec![2, 3],
            }],
        };
        let head = |v: u8| {
            [
                &[0, v][..],
                &[0, 1, b'c'],
                &[0, 0, 0, 2],
                &[0xff, 0xff],
                &[0, 1, b'm'],
            ]
            .concat()
        };
        let tail = [&[0, 0, 0, 6][..], &[0, 0, 0, 1, 1], &[0, 0, 0, 2, 2, 3]].concat();
        let ids = [&[0, 1, b'x'][..], &[0, 1, b'h']].concat();
        let v0 = [&head(0)[..], &[0, 0, 0, 1], &[0, 1, b'm'], &ids, &tail].concat();
        let v1 = [
            &head(1)[..],
            &[0, 0, 0, 1],
            &[0, 1, b'm'],
            &ids,
            &[0, 0, 0, 9],
            &tail,
        ]
        .concat();
        let v2 = [
            &head(2)[..],
            &[0, 0, 0, 0, 0, 0, 0, 4],
            &[0, 0, 0, 1],
            &[0, 1, b'm'],
            &ids,
            &[0, 0, 0, 9],
            &tail,
        ]
        .concat();
        // v4: compact everything, an unknown tagged field on the member.
        let v4 = [
            &[0, 4][..],
            &[2, b'c'],
            &[0, 0, 0, 2],
            &[0],
            &[2, b'm'],
            &[0, 0, 0, 0, 0, 0, 0, 4],
            &[2],
            &[2, b'm'],
            &[2, b'i'],
            &[2, b'x'],
            &[2, b'h'],
            &[0, 0, 0, 9],
            &[0, 0, 0, 6],
            &[2, 1],
            &[3, 2, 3],
            &[1, 5, 1, 0xee],
            &[0],
        ]
        .concat();
        for (bytes, want) in [
            (v0, expect(-1, -1, None)),
            (v1, expect(9, -1, None)),
            (v2, expect(9, 4, None)),
            (v4, expect(9, 4, Some("i"))),
        ] {
            assert_eq!(
                decode_record(&key, Some(&bytes)).unwrap(),
                Record::ClassicGroupMetadata {
                    group_id: "g".into(),
                    value: Some(want)
                },
                "{bytes:?}"
            );
        }
    }

    #[test]
    fn hostile_bytes_are_errors() {
        let key = [0, 2, 0, 1, b'g'];
        let (_, v) = encode_record(&Record::ClassicGroupMetadata {
            group_id: "g".into(),
            value: Some(value()),
        })
        .unwrap();
        let v = v.unwrap();
        for cut in 0..v.len() {
            assert!(
                decode_record(&key, Some(&v[..cut])).is_err(),
                "cut at {cut}"
            );
        }
        // A member count of 2^31-1 with no bytes behind it.
        let lying = [
            &[0, 3][..],
            &[0, 0],
            &[0, 0, 0, 0],
            &[0xff, 0xff],
            &[0xff, 0xff],
            &[0; 8],
            &[0x7f, 0xff, 0xff, 0xff],
        ]
        .concat();
        assert!(matches!(
            decode_record(&key, Some(&lying)),
            Err(RecordCodecError::Wire(
                crate::wire::WireError::LengthExceedsRemaining { .. }
            ))
        ));
        let bad_version = [&[0, 5][..], &v[2..]].concat();
        assert!(matches!(
            decode_record(&key, Some(&bad_version)),
            Err(RecordCodecError::UnsupportedVersion { version: 5, .. })
        ));
    }
}
