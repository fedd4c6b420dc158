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
//! Written at version 3, as Kafka's `newGroupMetadataRecord` does. Arrays are never
//! preallocated from a peer's count: each element consumes bytes, so a lying count ends in
//! `Truncated`.

use super::RecordCodecError;
use super::wire::{Reader, Writer};
use crate::records::{ClassicGroupMetadataValue, ClassicMemberMetadata};

pub(crate) const GROUP_METADATA_KEY: &str = "GroupMetadataKey";
pub(crate) const GROUP_METADATA: &str = "GroupMetadataValue";

/// The version groupcoord writes.
pub(crate) const WRITE_VERSION: i16 = 3;

fn nullable_string(w: &mut Writer, field: &'static str, s: Option<&str>) {
    match s {
        None => w.i16(-1),
        Some(s) => w.string(field, s),
    }
}

/// int32 length, then the bytes (the payloads are opaque; Kafka bounds them by the record size).
fn bytes(w: &mut Writer, b: &[u8]) {
    w.i32(i32::try_from(b.len()).unwrap_or(i32::MAX));
    for &x in b {
        w.i8(x as i8);
    }
}

pub(crate) fn encode_group_metadata(v: &ClassicGroupMetadataValue) -> Writer {
    let mut w = Writer::new(GROUP_METADATA);
    w.i16(WRITE_VERSION);
    w.string("protocolType", &v.protocol_type);
    w.i32(v.generation);
    nullable_string(&mut w, "protocol", v.protocol.as_deref());
    nullable_string(&mut w, "leader", v.leader.as_deref());
    w.i64(v.current_state_timestamp);
    w.i32(i32::try_from(v.members.len()).unwrap_or(i32::MAX));
    for m in &v.members {
        w.string("memberId", &m.member_id);
        nullable_string(&mut w, "groupInstanceId", m.group_instance_id.as_deref());
        w.string("clientId", &m.client_id);
        w.string("clientHost", &m.client_host);
        w.i32(m.rebalance_timeout);
        w.i32(m.session_timeout);
        bytes(&mut w, &m.subscription);
        bytes(&mut w, &m.assignment);
    }
    w
}

/// Strings and byte fields of one version: classic (int16 / int32 lengths) or compact.
struct Fields<'r, 'a> {
    r: &'r mut Reader<'a>,
    flexible: bool,
}

impl Fields<'_, '_> {
    fn string(&mut self, field: &'static str) -> Result<String, RecordCodecError> {
        if self.flexible {
            self.r.compact_string(field)
        } else {
            self.r.string(field)
        }
    }

    fn nullable_string(&mut self, field: &'static str) -> Result<Option<String>, RecordCodecError> {
        if self.flexible {
            self.r.compact_nullable_string(field)
        } else {
            self.r.nullable_string(field)
        }
    }

    fn bytes(&mut self, field: &'static str) -> Result<Vec<u8>, RecordCodecError> {
        let len = if self.flexible {
            match self.r.uvarint(field)? {
                0 => return Err(self.r.invalid(field, "null for non-nullable bytes")),
                n => (n - 1) as usize,
            }
        } else {
            match self.r.i32(field)? {
                n if n < 0 => return Err(self.r.invalid(field, format!("negative length {n}"))),
                n => n as usize,
            }
        };
        Ok(self.r.bytes(len, field)?.to_vec())
    }

    fn array_len(&mut self, field: &'static str) -> Result<usize, RecordCodecError> {
        if self.flexible {
            // The smallest v4 member: four empty strings, two int32, two empty bytes, no tags.
            self.r.compact_array_len(field, 15)
        } else {
            match self.r.i32(field)? {
                n if n < 0 => Err(self.r.invalid(field, format!("negative array length {n}"))),
                n => Ok(n as usize),
            }
        }
    }
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
    let mut f = Fields {
        r: &mut r,
        flexible,
    };
    let protocol_type = f.string("protocolType")?;
    let generation = f.r.i32("generation")?;
    let protocol = f.nullable_string("protocol")?;
    let leader = f.nullable_string("leader")?;
    let current_state_timestamp = if version >= 2 {
        f.r.i64("currentStateTimestamp")?
    } else {
        -1
    };
    let count = f.array_len("members")?;
    let mut members = Vec::new();
    for _ in 0..count {
        let member_id = f.string("memberId")?;
        let group_instance_id = if version >= 3 {
            f.nullable_string("groupInstanceId")?
        } else {
            None
        };
        let client_id = f.string("clientId")?;
        let client_host = f.string("clientHost")?;
        let rebalance_timeout = if version >= 1 {
            f.r.i32("rebalanceTimeout")?
        } else {
            -1
        };
        let session_timeout = f.r.i32("sessionTimeout")?;
        let subscription = f.bytes("subscription")?;
        let assignment = f.bytes("assignment")?;
        if flexible {
            f.r.skip_tagged_fields("member tagged fields")?;
        }
        members.push(ClassicMemberMetadata {
            member_id,
            group_instance_id,
            client_id,
            client_host,
            rebalance_timeout,
            session_timeout,
            subscription,
            assignment,
        });
    }
    if flexible {
        f.r.skip_tagged_fields("tagged fields")?;
    }
    r.finish("value")?;
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
    use crate::records::codec::try_encode_record;
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
        let (k, v) = try_encode_record(&r).unwrap();
        assert_eq!(k, [0, 2, 0, 1, b'g']);
        assert_eq!(decode_record(&k, v.as_deref()).unwrap(), r);
        let t = Record::ClassicGroupMetadata {
            group_id: "g".into(),
            value: None,
        };
        let (k, v) = encode_record(&t);
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
        });
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
        });
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
            Err(RecordCodecError::Truncated { .. })
        ));
        let bad_version = [&[0, 5][..], &v[2..]].concat();
        assert!(matches!(
            decode_record(&key, Some(&bad_version)),
            Err(RecordCodecError::UnsupportedVersion { version: 5, .. })
        ));
    }
}
