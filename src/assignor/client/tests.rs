use crate::util::map::BTreeMap;

use super::protocol::*;
use super::*;

fn topics(t: &[(&str, i32)]) -> BTreeMap<String, i32> {
    t.iter().map(|(n, p)| (n.to_string(), *p)).collect()
}

fn sub(topics: &[&str]) -> Subscription {
    Subscription {
        topics: topics.iter().map(|t| t.to_string()).collect(),
        ..Default::default()
    }
}

fn tps(v: &[(&str, i32)]) -> Vec<TopicPartition> {
    v.iter().map(|(t, p)| (t.to_string(), *p)).collect()
}

fn get(out: &[(String, Vec<TopicPartition>)], m: &str) -> Vec<TopicPartition> {
    out.iter()
        .find(|(id, _)| id == m)
        .expect("member in the output")
        .1
        .clone()
}

fn members(subs: Vec<(&str, Subscription)>) -> Vec<(String, Subscription)> {
    subs.into_iter().map(|(m, s)| (m.to_string(), s)).collect()
}

#[test]
fn range_gives_each_topic_in_ranges() {
    // Kafka's RangeAssignor javadoc example: C0 gets t0p0, t0p1, t1p0, t1p1; C1 the rest.
    let ms = members(vec![("C1", sub(&["t0", "t1"])), ("C0", sub(&["t0", "t1"]))]);
    let out = ClientAssignor::Range
        .assign(&topics(&[("t0", 3), ("t1", 3)]), &ms)
        .unwrap();
    let mut c0 = get(&out, "C0");
    c0.sort();
    assert_eq!(c0, tps(&[("t0", 0), ("t0", 1), ("t1", 0), ("t1", 1)]));
    let mut c1 = get(&out, "C1");
    c1.sort();
    assert_eq!(c1, tps(&[("t0", 2), ("t1", 2)]));
}

#[test]
fn range_puts_static_members_first() {
    let mut a = sub(&["t"]);
    a.group_instance_id = Some("z".into());
    let ms = members(vec![("a", sub(&["t"])), ("b", a)]);
    let out = ClientAssignor::Range
        .assign(&topics(&[("t", 3)]), &ms)
        .unwrap();
    assert_eq!(get(&out, "b"), tps(&[("t", 0), ("t", 1)]));
    assert_eq!(get(&out, "a"), tps(&[("t", 2)]));
}

#[test]
fn roundrobin_deals_partitions_in_member_order() {
    // Kafka's RoundRobinAssignor javadoc example.
    let ms = members(vec![("C0", sub(&["t0", "t1"])), ("C1", sub(&["t0", "t1"]))]);
    let out = ClientAssignor::RoundRobin
        .assign(&topics(&[("t0", 3), ("t1", 3)]), &ms)
        .unwrap();
    assert_eq!(get(&out, "C0"), tps(&[("t0", 0), ("t0", 2), ("t1", 1)]));
    assert_eq!(get(&out, "C1"), tps(&[("t0", 1), ("t1", 0), ("t1", 2)]));
}

#[test]
fn roundrobin_skips_members_not_subscribed() {
    let ms = members(vec![("C0", sub(&["t0"])), ("C1", sub(&["t0", "t1"]))]);
    let out = ClientAssignor::RoundRobin
        .assign(&topics(&[("t0", 2), ("t1", 2)]), &ms)
        .unwrap();
    assert_eq!(get(&out, "C0"), tps(&[("t0", 0)]));
    assert_eq!(get(&out, "C1"), tps(&[("t0", 1), ("t1", 0), ("t1", 1)]));
}

#[test]
fn sticky_fresh_group_deals_round_robin() {
    let ms = members(vec![
        ("c", sub(&["t"])),
        ("a", sub(&["t"])),
        ("b", sub(&["t"])),
    ]);
    let out = ClientAssignor::Sticky
        .assign(&topics(&[("t", 6)]), &ms)
        .unwrap();
    assert_eq!(get(&out, "a"), tps(&[("t", 0), ("t", 3)]));
    assert_eq!(get(&out, "b"), tps(&[("t", 1), ("t", 4)]));
    assert_eq!(get(&out, "c"), tps(&[("t", 2), ("t", 5)]));
}

#[test]
fn sticky_keeps_previous_assignment_from_user_data() {
    let all: Vec<TopicPartition> = (0..6).map(|p| ("t".to_string(), p)).collect();
    let mut a = sub(&["t"]);
    a.user_data = ClientAssignor::Sticky.subscription_user_data(Some(&all), 1);
    a.generation_id = Some(1);
    let ms = members(vec![("a", a), ("b", sub(&["t"]))]);
    let out = ClientAssignor::Sticky
        .assign(&topics(&[("t", 6)]), &ms)
        .unwrap();
    assert_eq!(get(&out, "a"), tps(&[("t", 0), ("t", 1), ("t", 2)]));
    assert_eq!(get(&out, "b"), tps(&[("t", 3), ("t", 4), ("t", 5)]));
}

#[test]
fn cooperative_sticky_withholds_moving_partitions_until_revoked() {
    let all: Vec<TopicPartition> = (0..6).map(|p| ("t".to_string(), p)).collect();
    let owner = |owned: Vec<TopicPartition>, generation: i32| {
        let mut s = sub(&["t"]);
        s.owned_partitions = owned;
        s.generation_id = Some(generation);
        s.user_data = ClientAssignor::CooperativeSticky.subscription_user_data(None, generation);
        s
    };
    // First rebalance: a keeps half, b gets nothing yet (the other half is still a's).
    let ms = members(vec![("a", owner(all.clone(), 1)), ("b", sub(&["t"]))]);
    let out = ClientAssignor::CooperativeSticky
        .assign(&topics(&[("t", 6)]), &ms)
        .unwrap();
    assert_eq!(get(&out, "a"), tps(&[("t", 0), ("t", 1), ("t", 2)]));
    assert!(get(&out, "b").is_empty());
    // Second: a revoked the rest, b takes it.
    let ms = members(vec![
        ("a", owner(get(&out, "a"), 2)),
        ("b", owner(vec![], 2)),
    ]);
    let out = ClientAssignor::CooperativeSticky
        .assign(&topics(&[("t", 6)]), &ms)
        .unwrap();
    assert_eq!(get(&out, "a"), tps(&[("t", 0), ("t", 1), ("t", 2)]));
    assert_eq!(get(&out, "b"), tps(&[("t", 3), ("t", 4), ("t", 5)]));
}

#[test]
fn sticky_same_generation_double_claim_is_dropped_from_both() {
    let claim = |owned: &[(&str, i32)]| {
        let mut s = sub(&["t"]);
        s.owned_partitions = tps(owned);
        s.generation_id = Some(3);
        s
    };
    let ms = members(vec![("a", claim(&[("t", 0)])), ("b", claim(&[("t", 0)]))]);
    let out = ClientAssignor::CooperativeSticky
        .assign(&topics(&[("t", 2)]), &ms)
        .unwrap();
    // t-0 was claimed twice in one generation: it moves as a "transferring" partition and is
    // withheld; the other partition goes out normally.
    let total: usize = out.iter().map(|(_, v)| v.len()).sum();
    assert_eq!(total, 1, "{out:?}");
}

#[test]
fn heterogeneous_sticky_is_refused_not_guessed() {
    let ms = members(vec![("a", sub(&["t"])), ("b", sub(&["t", "u"]))]);
    assert_eq!(
        ClientAssignor::Sticky.assign(&topics(&[("t", 2), ("u", 2)]), &ms),
        Err(AssignError::Heterogeneous)
    );
}

#[test]
fn protocol_is_cooperative_only_when_every_assignor_supports_it() {
    use ClientAssignor::*;
    assert_eq!(
        common_protocol(&[CooperativeSticky]),
        RebalanceProtocol::Cooperative
    );
    assert_eq!(
        common_protocol(&[CooperativeSticky, Range]),
        RebalanceProtocol::Eager
    );
    assert_eq!(common_protocol(&[Range]), RebalanceProtocol::Eager);
    for a in ALL {
        assert_eq!(ClientAssignor::from_name(a.name()), Some(a));
    }
    assert_eq!(ClientAssignor::from_name("uniform"), None);
}

#[test]
fn subscription_round_trips_and_sorts() {
    let s = Subscription {
        topics: vec!["b".into(), "a".into()],
        user_data: Some(vec![0, 0, 0, 7]),
        owned_partitions: tps(&[("b", 1), ("a", 2), ("a", 0)]),
        generation_id: Some(7),
        rack_id: Some("r1".into()),
        group_instance_id: None,
    };
    let bytes = encode_subscription(&s).unwrap();
    let back = decode_subscription(&bytes).unwrap();
    assert_eq!(back.topics, vec!["a", "b"]);
    assert_eq!(back.owned_partitions, tps(&[("a", 0), ("a", 2), ("b", 1)]));
    assert_eq!(back.generation_id, Some(7));
    assert_eq!(back.rack_id.as_deref(), Some("r1"));
    assert_eq!(back.user_data, s.user_data);
    // Truncated input is an error, never a panic.
    for n in 0..bytes.len() {
        assert!(decode_subscription(&bytes[..n]).is_err(), "{n}");
    }
}

#[test]
fn assignment_and_sticky_user_data_round_trip() {
    let a = tps(&[("x", 1), ("y", 0), ("x", 0)]);
    let bytes = encode_assignment(&a).unwrap();
    assert_eq!(
        decode_assignment(&bytes).unwrap(),
        tps(&[("x", 1), ("x", 0), ("y", 0)])
    );
    assert_eq!(decode_assignment(&[]).unwrap(), vec![]);
    assert!(decode_assignment(&bytes[..bytes.len() - 3]).is_err());
    let ud = encode_sticky_user_data(&a, 4).unwrap();
    let (mut ps, g) = decode_sticky_user_data(&ud);
    ps.sort();
    assert_eq!((ps, g), (tps(&[("x", 0), ("x", 1), ("y", 0)]), Some(4)));
    assert_eq!(decode_sticky_user_data(&[1, 2]), (vec![], Some(-1)));
}

/// The payloads agree with the `kafka-protocol` crate's generated codecs.
#[cfg(not(target_arch = "wasm32"))]
#[test]
fn payloads_match_kafka_protocol() {
    use bytes::Bytes;
    use kafka_protocol::messages::{ConsumerProtocolAssignment, ConsumerProtocolSubscription};
    use kafka_protocol::protocol::{Decodable, Encodable};
    let s = Subscription {
        topics: vec!["orders".into(), "audit".into()],
        user_data: Some(vec![0, 0, 0, 3]),
        owned_partitions: tps(&[("orders", 4), ("audit", 1)]),
        generation_id: Some(3),
        rack_id: None,
        group_instance_id: None,
    };
    let bytes = encode_subscription(&s).unwrap();
    let mut buf = Bytes::copy_from_slice(&bytes[2..]);
    let k = ConsumerProtocolSubscription::decode(&mut buf, 3).unwrap();
    assert!(buf.is_empty());
    let names: Vec<String> = k.topics.iter().map(|t| t.to_string()).collect();
    assert_eq!(names, vec!["audit", "orders"]);
    assert_eq!(k.generation_id, 3);
    assert_eq!(k.owned_partitions.len(), 2);
    assert_eq!(k.user_data.as_deref(), Some(&[0u8, 0, 0, 3][..]));
    let mut again = Vec::new();
    k.encode(&mut again, 3).unwrap();
    assert_eq!(&bytes[2..], &again[..]);

    let a = tps(&[("orders", 1), ("orders", 5), ("audit", 0)]);
    let bytes = encode_assignment(&a).unwrap();
    let mut buf = Bytes::copy_from_slice(&bytes[2..]);
    let k = ConsumerProtocolAssignment::decode(&mut buf, 3).unwrap();
    assert!(buf.is_empty());
    let mut again = Vec::new();
    k.encode(&mut again, 3).unwrap();
    assert_eq!(&bytes[2..], &again[..]);
}
