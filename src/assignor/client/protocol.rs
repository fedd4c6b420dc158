//! The `consumer` protocol's payloads as Kafka 4.4's `ConsumerProtocol` writes them: a
//! subscription (JoinGroup metadata) and an assignment (SyncGroup bytes), both an int16 version
//! followed by a non-flexible struct. Written at version 3 as Kafka does; read at any version
//! (above 3 read as 3, as Kafka does). Peer bytes: every count is bounded by the bytes left.

use crate::wire::{Reader, WireError, Writer};

use super::{Subscription, TopicPartition};
use crate::util::sort;

/// The version Kafka 4.4 writes subscriptions and assignments at.
pub const CONSUMER_PROTOCOL_VERSION: i16 = 3;

/// Groups partitions by topic in order of each topic's first appearance (Kafka's
/// `ConsumerProtocolAssignment` collection keeps insertion order).
fn by_topic(partitions: &[TopicPartition]) -> Vec<(&str, Vec<i32>)> {
    let mut out: Vec<(&str, Vec<i32>)> = Vec::new();
    for (t, p) in partitions {
        match out.iter_mut().find(|(n, _)| n == t) {
            Some((_, ps)) => ps.push(*p),
            None => out.push((t.as_str(), vec![*p])),
        }
    }
    out
}

fn write_topic_partitions(w: &mut Writer, groups: &[(&str, Vec<i32>)]) -> Result<(), WireError> {
    w.i32(groups.len() as i32);
    for (t, ps) in groups {
        w.string("topic", t)?;
        w.i32(ps.len() as i32);
        for p in ps {
            w.i32(*p);
        }
    }
    Ok(())
}

fn read_topic_partitions(r: &mut Reader<'_>) -> Result<Vec<TopicPartition>, WireError> {
    let mut out = Vec::new();
    for _ in 0..r.array_len("")? {
        let t = r.string("topic")?;
        for _ in 0..r.array_len("partitions")? {
            out.push((t.clone(), r.i32("")?));
        }
    }
    Ok(out)
}

/// `ConsumerProtocol.serializeSubscription` at version 3: topics sorted, owned partitions
/// sorted by topic then partition, generation -1 when absent.
pub fn encode_subscription(s: &Subscription) -> Result<Vec<u8>, WireError> {
    let mut topics = s.topics.clone();
    sort::sort(&mut topics);
    let mut owned = s.owned_partitions.clone();
    sort::sort(&mut owned);
    let mut w = Writer::new("ConsumerProtocolSubscription");
    w.i16(CONSUMER_PROTOCOL_VERSION);
    w.i32(topics.len() as i32);
    for t in &topics {
        w.string("Topics", t)?;
    }
    w.nullable_bytes("UserData", s.user_data.as_deref())?;
    write_topic_partitions(&mut w, &by_topic(&owned))?;
    w.i32(s.generation_id.unwrap_or(-1));
    w.nullable_string("RackId", s.rack_id.as_deref())?;
    Ok(w.into_bytes())
}

/// `ConsumerProtocol.deserializeSubscription` (the group instance id is not in the bytes).
pub fn decode_subscription(bytes: &[u8]) -> Result<Subscription, WireError> {
    let mut r = Reader::new(bytes, "ConsumerProtocolSubscription");
    let version = r.i16("Version")?;
    if version < 0 {
        return Err(r.unexpected_null());
    }
    let mut topics = Vec::new();
    for _ in 0..r.array_len("Topics")? {
        topics.push(r.string("Topics")?);
    }
    let user_data = r.nullable_bytes("UserData")?.map(<[u8]>::to_vec);
    let owned_partitions = if version >= 1 {
        r.field("OwnedPartitions", read_topic_partitions)?
    } else {
        Vec::new()
    };
    let generation = if version >= 2 {
        r.i32("GenerationId")?
    } else {
        -1
    };
    let rack_id = if version >= 3 {
        r.nullable_string("RackId")?.filter(|s| !s.is_empty())
    } else {
        None
    };
    Ok(Subscription {
        topics,
        user_data,
        owned_partitions,
        generation_id: (generation >= 0).then_some(generation),
        rack_id,
        group_instance_id: None,
    })
}

/// `ConsumerProtocol.serializeAssignment` at version 3, partitions grouped by topic in order of
/// first appearance.
pub fn encode_assignment(partitions: &[TopicPartition]) -> Result<Vec<u8>, WireError> {
    let mut w = Writer::new("ConsumerProtocolAssignment");
    w.i16(CONSUMER_PROTOCOL_VERSION);
    write_topic_partitions(&mut w, &by_topic(partitions))?;
    w.nullable_bytes("UserData", None)?;
    Ok(w.into_bytes())
}

/// `ConsumerProtocol.deserializeAssignment`: the assigned partitions in wire order. An empty
/// payload is an empty assignment (a member the leader gave nothing, as the Java client treats
/// it).
pub fn decode_assignment(bytes: &[u8]) -> Result<Vec<TopicPartition>, WireError> {
    decode_assignment_with_user_data(bytes).map(|(partitions, _)| partitions)
}

/// [`decode_assignment`] with the assignor's user data (`None` when null or absent).
pub fn decode_assignment_with_user_data(
    bytes: &[u8],
) -> Result<(Vec<TopicPartition>, Option<Vec<u8>>), WireError> {
    if bytes.is_empty() {
        return Ok((Vec::new(), None));
    }
    let mut r = Reader::new(bytes, "ConsumerProtocolAssignment");
    let version = r.i16("Version")?;
    if version < 0 {
        return Err(r.unexpected_null());
    }
    let partitions = r.field("AssignedPartitions", read_topic_partitions)?;
    let user_data = r.nullable_bytes("UserData")?.map(<[u8]>::to_vec);
    Ok((partitions, user_data))
}

/// `ConsumerProtocol.serializeAssignment` at the version a member's subscription was written
/// with (what the coordinator answers a classic member of a consumer group with); versions
/// 0-3 share one layout, a newer one is written as 3.
pub fn encode_assignment_at(
    partitions: &[TopicPartition],
    version: i16,
) -> Result<Vec<u8>, WireError> {
    let mut bytes = encode_assignment(partitions)?;
    let v = version.clamp(0, CONSUMER_PROTOCOL_VERSION);
    bytes[..2].copy_from_slice(&v.to_be_bytes());
    Ok(bytes)
}

/// The version of a `consumer` protocol payload (its first two bytes).
pub fn payload_version(bytes: &[u8]) -> Result<i16, WireError> {
    Reader::new(bytes, "ConsumerProtocol").i16("Version")
}

/// A schema-encoded int32 generation: `CooperativeStickyAssignor`'s user data.
pub fn encode_generation(generation: i32) -> Vec<u8> {
    generation.to_be_bytes().to_vec()
}

/// `StickyAssignor`'s user data (`STICKY_ASSIGNOR_USER_DATA_V1`): the previous assignment by
/// topic (topics in Java `HashMap` order) and the generation.
pub fn encode_sticky_user_data(
    partitions: &[TopicPartition],
    generation: i32,
) -> Result<Vec<u8>, WireError> {
    let groups = by_topic(partitions);
    let order = crate::assignor::consumer::java_order::string_hash_map_order(
        groups.iter().map(|(t, _)| *t),
    );
    let ordered: Vec<(&str, Vec<i32>)> = order
        .iter()
        .filter_map(|t| groups.iter().find(|(n, _)| n == t).cloned())
        .collect();
    let mut w = Writer::new("StickyAssignorUserData");
    write_topic_partitions(&mut w, &ordered)?;
    w.i32(generation);
    Ok(w.into_bytes())
}

/// Reads `StickyAssignor` user data: version 1 (with generation), else version 0, else Kafka's
/// fallback (no partitions, generation -1).
pub fn decode_sticky_user_data(bytes: &[u8]) -> (Vec<TopicPartition>, Option<i32>) {
    let v1 = {
        let mut r = Reader::new(bytes, "StickyAssignorUserData");
        read_topic_partitions(&mut r).and_then(|ps| Ok((ps, r.i32("generation")?)))
    };
    if let Ok((ps, g)) = v1 {
        return (ps, Some(g));
    }
    let mut r = Reader::new(bytes, "StickyAssignorUserData");
    match read_topic_partitions(&mut r) {
        Ok(ps) => (ps, None),
        Err(_) => (Vec::new(), Some(-1)),
    }
}
