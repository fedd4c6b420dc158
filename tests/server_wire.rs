//! The server over real TCP on 127.0.0.1 (ephemeral port): every served key and version range,
//! the ApiVersions rules, topics, offsets, groups, and bad input.
#![cfg(not(target_arch = "wasm32"))]

mod common;
use common::{s, temp_dir};

use std::path::PathBuf;
use std::time::Duration;

use groupcoord::server::SUPPORTED;
use groupcoord::server::tools::client::Client;
use groupcoord::server::{ServeOptions, ServerHandle, start};
use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::delete_topics_request::DeleteTopicState;
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
use kafka_protocol::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kafka_protocol::messages::offset_fetch_request::{
    OffsetFetchRequestGroup, OffsetFetchRequestTopic, OffsetFetchRequestTopics,
};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::Decodable;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn server(tag: &str) -> (ServerHandle, PathBuf) {
    let dir = temp_dir(tag);
    let mut o = ServeOptions::new("127.0.0.1:0".parse().unwrap(), dir.clone());
    o.owners = common::test_owners();
    o.topics = vec![("input".into(), 3)];
    o.server.socket_request_max_bytes = 1024 * 1024;
    // These tests look at unknown topics; auto-creation has its own test below.
    o.server.topic_defaults.auto_create_topics_enable = false;
    (start(o).await.expect("server starts"), dir)
}

/// Kafka's default `auto.create.topics.enable=true`: a Metadata request for an unknown topic
/// creates it (`num.partitions`) and answers LEADER_NOT_AVAILABLE; the next one sees it.
/// Metadata v0-3 always allows auto-creation; v4+ only when the request says so.
#[tokio::test]
async fn metadata_auto_creates_unknown_topics_by_default() {
    let dir = temp_dir("autocreate");
    let mut o = ServeOptions::new("127.0.0.1:0".parse().unwrap(), dir.clone());
    o.owners = common::test_owners();
    o.server.topic_defaults.num_partitions = 2;
    let srv = start(o).await.expect("server starts");
    let mut c = Client::connect(srv.addr).await.unwrap();
    let ask = |name: &str, allow: bool| {
        let mut t = MetadataRequestTopic::default();
        t.name = Some(TopicName(s(name)));
        let mut req = MetadataRequest::default();
        req.topics = Some(vec![t]);
        req.allow_auto_topic_creation = allow;
        req
    };
    let r: MetadataResponse = c.call(12, &ask("fresh", false)).await.unwrap();
    assert_eq!(r.topics[0].error_code, 3, "not allowed by the request");
    let r: MetadataResponse = c.call(12, &ask("fresh", true)).await.unwrap();
    assert_eq!(
        r.topics[0].error_code, 5,
        "LEADER_NOT_AVAILABLE while created"
    );
    let r: MetadataResponse = c.call(12, &ask("fresh", false)).await.unwrap();
    assert_eq!(
        (r.topics[0].error_code, r.topics[0].partitions.len()),
        (0, 2)
    );
    // (v1 has no such field: the request cannot even say no.)
    let r: MetadataResponse = c.call(1, &ask("old-client", true)).await.unwrap();
    assert_eq!(r.topics[0].error_code, 5, "v1 always allows auto-creation");
    srv.shutdown().await;
}

fn range(key: i16) -> (i16, i16) {
    let (_, lo, hi) = SUPPORTED.iter().find(|(k, _, _)| *k == key).unwrap();
    (*lo, *hi)
}

#[tokio::test]
async fn api_versions_all_versions_and_rules() {
    let (srv, _d) = server("apiv").await;
    let mut c = Client::connect(srv.addr).await.unwrap();
    for v in 0..=4 {
        let corr = c.send_body(18, v, &api_versions_body(v)).await.unwrap();
        let f = c.read_frame().await.unwrap();
        // Response header v0: correlation id only, then the body.
        assert_eq!(i32::from_be_bytes(f[0..4].try_into().unwrap()), corr);
        let mut b = bytes::Bytes::copy_from_slice(&f[4..]);
        let r = ApiVersionsResponse::decode(&mut b, v).unwrap();
        assert_eq!(r.error_code, 0, "v{v}");
        for (k, lo, hi) in SUPPORTED {
            let e = r
                .api_keys
                .iter()
                .find(|a| a.api_key == *k)
                .unwrap_or_else(|| panic!("key {k} advertised"));
            assert_eq!((e.min_version, e.max_version), (*lo, *hi));
        }
        assert_eq!(r.api_keys.len(), SUPPORTED.len());
        let hb = r.api_keys.iter().find(|a| a.api_key == 88).unwrap();
        assert_eq!((hb.min_version, hb.max_version), (0, 1));
    }
    // Unsupported version: v0 body with error 35 and the full table.
    let corr = c.send_body(18, 7, &[0, 0, 0]).await.unwrap();
    let f = c.read_frame().await.unwrap();
    assert_eq!(i32::from_be_bytes(f[0..4].try_into().unwrap()), corr);
    let mut b = bytes::Bytes::copy_from_slice(&f[4..]);
    let r = ApiVersionsResponse::decode(&mut b, 0).unwrap();
    assert_eq!(r.error_code, 35);
    assert_eq!(r.api_keys.len(), SUPPORTED.len());
    assert!(b.is_empty(), "v0 body fully consumed");
    // Connection still usable.
    let r: ApiVersionsResponse = c.call(3, &ApiVersionsRequest::default()).await.unwrap();
    assert_eq!(r.error_code, 0);
    srv.shutdown().await;
}

fn api_versions_body(v: i16) -> Vec<u8> {
    use kafka_protocol::protocol::Encodable;
    let mut r = ApiVersionsRequest::default();
    if v >= 3 {
        r.client_software_name = s("test");
        r.client_software_version = s("1.0");
    }
    let mut b = bytes::BytesMut::new();
    r.encode(&mut b, v).unwrap();
    b.to_vec()
}

#[tokio::test]
async fn metadata_find_coordinator_all_versions() {
    let (srv, _d) = server("meta").await;
    let mut c = Client::connect(srv.addr).await.unwrap();
    let (lo, hi) = range(3);
    for v in lo..=hi {
        // All topics.
        let mut req = MetadataRequest::default();
        req.topics = if v == 0 { Some(vec![]) } else { None };
        let r: MetadataResponse = c.call(v, &req).await.unwrap();
        assert_eq!(r.brokers.len(), 1);
        assert_eq!(r.brokers[0].port, srv.addr.port() as i32);
        assert_eq!(r.topics.len(), 1, "v{v}");
        assert_eq!(r.topics[0].partitions.len(), 3);
        // Named, one unknown.
        let mut t1 = MetadataRequestTopic::default();
        t1.name = Some(TopicName(s("input")));
        let mut t2 = MetadataRequestTopic::default();
        t2.name = Some(TopicName(s("nope")));
        req.topics = Some(vec![t1, t2]);
        let r: MetadataResponse = c.call(v, &req).await.unwrap();
        assert_eq!(r.topics[0].error_code, 0);
        assert_eq!(r.topics[1].error_code, 3, "UNKNOWN_TOPIC_OR_PARTITION");
    }
    let (lo, hi) = range(10);
    for v in lo..=hi {
        let mut req = FindCoordinatorRequest::default();
        if v >= 4 {
            req.coordinator_keys = vec![s("g1"), s("g2")];
        } else {
            req.key = s("g1");
        }
        let r: FindCoordinatorResponse = c.call(v, &req).await.unwrap();
        if v >= 4 {
            assert_eq!(r.coordinators.len(), 2);
            assert!(
                r.coordinators
                    .iter()
                    .all(|x| x.port == srv.addr.port() as i32 && x.error_code == 0)
            );
        } else {
            assert_eq!(r.port, srv.addr.port() as i32);
            assert_eq!(r.node_id.0, 0);
        }
    }
    srv.shutdown().await;
}

#[tokio::test]
async fn create_delete_topics_then_metadata() {
    let (srv, _d) = server("topics").await;
    let mut c = Client::connect(srv.addr).await.unwrap();
    let (lo, hi) = range(19);
    for v in lo..=hi {
        let name = format!("t-v{v}");
        let mut t = CreatableTopic::default();
        t.name = TopicName(s(&name));
        t.num_partitions = 4;
        t.replication_factor = -1;
        let mut dup = CreatableTopic::default();
        dup.name = TopicName(s("dup"));
        dup.num_partitions = 1;
        dup.replication_factor = 1;
        let mut bad = CreatableTopic::default();
        bad.name = TopicName(s("bad/name"));
        bad.num_partitions = 1;
        let mut zero = CreatableTopic::default();
        zero.name = TopicName(s(&format!("zero-v{v}")));
        zero.num_partitions = 0;
        zero.replication_factor = 1;
        let mut req = CreateTopicsRequest::default();
        req.topics = vec![t.clone(), dup.clone(), dup.clone(), bad, zero];
        req.timeout_ms = 1000;
        let r: CreateTopicsResponse = c.call(v, &req).await.unwrap();
        let codes: Vec<i16> = r.topics.iter().map(|t| t.error_code).collect();
        assert_eq!(codes, vec![0, 42, 42, 17, 37], "v{v}");
        // Again: already exists.
        req.topics = vec![t];
        let r: CreateTopicsResponse = c.call(v, &req).await.unwrap();
        assert_eq!(r.topics[0].error_code, 36, "TOPIC_ALREADY_EXISTS v{v}");
        // validateOnly does not create.
        let mut vo = CreatableTopic::default();
        vo.name = TopicName(s(&format!("vo-v{v}")));
        vo.num_partitions = 2;
        vo.replication_factor = -1;
        req.topics = vec![vo];
        req.validate_only = true;
        let r: CreateTopicsResponse = c.call(v, &req).await.unwrap();
        assert_eq!(r.topics[0].error_code, 0);
        let mut mt = MetadataRequestTopic::default();
        mt.name = Some(TopicName(s(&name)));
        let mut mt2 = MetadataRequestTopic::default();
        mt2.name = Some(TopicName(s(&format!("vo-v{v}"))));
        let mut mreq = MetadataRequest::default();
        mreq.topics = Some(vec![mt, mt2]);
        let m: MetadataResponse = c.call(12, &mreq).await.unwrap();
        assert_eq!(m.topics[0].error_code, 0);
        assert_eq!(m.topics[0].partitions.len(), 4);
        assert_eq!(m.topics[1].error_code, 3);
    }
    let (lo, hi) = range(20);
    for v in lo..=hi {
        let name = format!("t-v{}", 2 + (v - lo) % 6);
        let mut req = DeleteTopicsRequest::default();
        if v >= 6 {
            let mut st = DeleteTopicState::default();
            st.name = Some(TopicName(s(&name)));
            let mut st2 = DeleteTopicState::default();
            st2.name = Some(TopicName(s("missing")));
            req.topics = vec![st, st2];
        } else {
            req.topic_names = vec![TopicName(s(&name)), TopicName(s("missing"))];
        }
        let r: DeleteTopicsResponse = c.call(v, &req).await.unwrap();
        assert_eq!(r.responses[0].error_code, 0, "v{v} {name}");
        assert_eq!(r.responses[1].error_code, 3);
    }
    srv.shutdown().await;
}

#[tokio::test]
async fn offsets_groups_list_fetch_all_versions() {
    let (srv, _d) = server("offsets").await;
    let mut c = Client::connect(srv.addr).await.unwrap();
    let (lo, hi) = range(8);
    for v in lo..=hi {
        let mut req = OffsetCommitRequest::default();
        req.group_id = GroupId(s(&format!("g-{v}")));
        req.generation_id_or_member_epoch = -1;
        let mut p = OffsetCommitRequestPartition::default();
        p.partition_index = 1;
        p.committed_offset = 42 + v as i64;
        p.committed_metadata = Some(s("m"));
        let mut t = OffsetCommitRequestTopic::default();
        t.name = TopicName(s("input"));
        t.partitions = vec![p];
        req.topics = vec![t];
        let r: OffsetCommitResponse = c.call(v, &req).await.unwrap();
        assert_eq!(r.topics[0].partitions[0].error_code, 0, "commit v{v}");
    }
    let (flo, fhi) = range(9);
    for v in flo..=fhi {
        let g = format!("g-{}", 9.min(lo + (v - flo)));
        let mut req = OffsetFetchRequest::default();
        if v >= 8 {
            let mut grp = OffsetFetchRequestGroup::default();
            grp.group_id = GroupId(s(&g));
            grp.member_epoch = -1;
            let mut t = OffsetFetchRequestTopics::default();
            t.name = TopicName(s("input"));
            t.partition_indexes = vec![1];
            grp.topics = Some(vec![t]);
            req.groups = vec![grp];
            let r: OffsetFetchResponse = c.call(v, &req).await.unwrap();
            assert_eq!(r.groups[0].error_code, 0);
            let p = &r.groups[0].topics[0].partitions[0];
            assert!(p.committed_offset >= 42, "fetch v{v}");
        } else {
            req.group_id = GroupId(s(&g));
            let mut t = OffsetFetchRequestTopic::default();
            t.name = TopicName(s("input"));
            t.partition_indexes = vec![1];
            req.topics = Some(vec![t]);
            let r: OffsetFetchResponse = c.call(v, &req).await.unwrap();
            assert!(
                r.topics[0].partitions[0].committed_offset >= 42,
                "fetch v{v}"
            );
        }
    }
    let (lo, hi) = range(16);
    for v in lo..=hi {
        let r: ListGroupsResponse = c.call(v, &ListGroupsRequest::default()).await.unwrap();
        assert_eq!(r.error_code, 0);
    }
    let (lo, hi) = range(15);
    for v in lo..=hi {
        let mut req = DescribeGroupsRequest::default();
        req.groups = vec![GroupId(s("unknown-group"))];
        let r: DescribeGroupsResponse = c.call(v, &req).await.unwrap();
        assert_eq!(r.groups.len(), 1);
        if v >= 6 {
            assert_eq!(r.groups[0].error_code, 69);
        } else {
            assert_eq!(r.groups[0].group_state.as_str(), "Dead");
        }
    }
    let (lo, hi) = range(42);
    for v in lo..=hi {
        let mut req = DeleteGroupsRequest::default();
        req.groups_names = vec![GroupId(s("never-existed"))];
        let r: DeleteGroupsResponse = c.call(v, &req).await.unwrap();
        assert_eq!(r.results.len(), 1);
        assert_ne!(r.results[0].error_code, 0);
    }
    let (lo, hi) = range(2);
    for v in lo..=hi {
        let mut req = ListOffsetsRequest::default();
        req.replica_id = BrokerId(-1);
        let mut p = ListOffsetsPartition::default();
        p.partition_index = 0;
        p.timestamp = -1;
        let mut t = ListOffsetsTopic::default();
        t.name = TopicName(s("input"));
        t.partitions = vec![p];
        req.topics = vec![t];
        let r: ListOffsetsResponse = c.call(v, &req).await.unwrap();
        assert_eq!(r.topics[0].partitions[0].error_code, 0);
        assert_eq!(r.topics[0].partitions[0].offset, 0);
    }
    let (lo, hi) = range(1);
    for v in lo..=hi {
        let mut req = FetchRequest::default();
        req.replica_id = BrokerId(-1);
        req.max_wait_ms = 10;
        let mut p = FetchPartition::default();
        p.partition = 0;
        let mut t = FetchTopic::default();
        if v < 13 {
            t.topic = TopicName(s("input"));
        }
        t.partitions = vec![p];
        req.topics = vec![t];
        let r: FetchResponse = c.call(v, &req).await.unwrap();
        assert_eq!(r.responses[0].partitions[0].high_watermark, 0, "fetch v{v}");
    }
    srv.shutdown().await;
}

async fn closed(stream: &mut TcpStream) -> bool {
    let mut b = [0u8; 64];
    matches!(
        tokio::time::timeout(Duration::from_secs(5), stream.read(&mut b)).await,
        Ok(Ok(0)) | Ok(Err(_))
    )
}

#[tokio::test]
async fn bad_input_only_closes_that_connection() {
    let (srv, _d) = server("bad").await;
    // A healthy client that keeps working throughout.
    let mut good = Client::connect(srv.addr).await.unwrap();
    // A slow client: half a frame, then silence.
    let mut slow = TcpStream::connect(srv.addr).await.unwrap();
    slow.write_all(&[0, 0, 0, 100, 0, 18]).await.unwrap();
    // Garbage bytes (an absurd frame length).
    let mut g = TcpStream::connect(srv.addr).await.unwrap();
    g.write_all(b"GET / HTTP/1.1\r\n\r\n").await.unwrap();
    assert!(closed(&mut g).await, "garbage closes");
    // Oversized frame (> socket.request.max.bytes = 1 MiB here).
    let mut o = TcpStream::connect(srv.addr).await.unwrap();
    o.write_all(&(2 * 1024 * 1024u32).to_be_bytes())
        .await
        .unwrap();
    assert!(closed(&mut o).await, "oversized closes");
    // Well-sized frame with a garbage body.
    let mut m = TcpStream::connect(srv.addr).await.unwrap();
    let mut f = vec![0, 0, 0, 12, 0, 3, 0, 9, 0, 0, 0, 1, 0, 50, 1, 2];
    f.truncate(16);
    m.write_all(&f).await.unwrap();
    assert!(closed(&mut m).await, "malformed body closes");
    // Truncated frame then EOF.
    let mut t = TcpStream::connect(srv.addr).await.unwrap();
    t.write_all(&[0, 0, 0, 50, 0, 3, 0]).await.unwrap();
    t.shutdown().await.unwrap();
    assert!(closed(&mut t).await);
    // Unknown key and unsupported version: closed.
    let mut u = Client::connect(srv.addr).await.unwrap();
    u.send_body(999, 0, &[]).await.unwrap();
    assert!(u.read_frame().await.is_err());
    let mut u = Client::connect(srv.addr).await.unwrap();
    u.send_body(3, 13, &[]).await.unwrap();
    assert!(u.read_frame().await.is_err());
    // Everyone else is served.
    for _ in 0..10 {
        let r: MetadataResponse = good.call(12, &MetadataRequest::default()).await.unwrap();
        assert_eq!(r.brokers.len(), 1);
    }
    let mut fresh = Client::connect(srv.addr).await.unwrap();
    let r: ApiVersionsResponse = fresh.call(3, &ApiVersionsRequest::default()).await.unwrap();
    assert_eq!(r.error_code, 0);
    drop(slow);
    srv.shutdown().await;
}

#[tokio::test]
async fn pipelined_requests_answer_in_order() {
    let (srv, _d) = server("pipe").await;
    let mut c = Client::connect(srv.addr).await.unwrap();
    let mut corrs = Vec::new();
    for i in 0..200 {
        let (key, v, body) = if i % 3 == 0 {
            (18, 3, api_versions_body(3))
        } else {
            use kafka_protocol::protocol::Encodable;
            let mut b = bytes::BytesMut::new();
            MetadataRequest::default().encode(&mut b, 12).unwrap();
            (3, 12, b.to_vec())
        };
        corrs.push((c.send_body(key, v, &body).await.unwrap(), key, v));
    }
    for (corr, key, v) in corrs {
        c.read_body(key, v, corr).await.unwrap();
    }
    srv.shutdown().await;
}

#[tokio::test]
async fn topics_survive_restart() {
    let dir = temp_dir("restart");
    let mut o = ServeOptions::new("127.0.0.1:0".parse().unwrap(), dir.clone());
    o.owners = common::test_owners();
    o.topics = vec![("a".into(), 2)];
    let srv = start(o.clone()).await.unwrap();
    let mut c = Client::connect(srv.addr).await.unwrap();
    let mut t = CreatableTopic::default();
    t.name = TopicName(s("b"));
    t.num_partitions = 5;
    t.replication_factor = -1;
    let mut req = CreateTopicsRequest::default();
    req.topics = vec![t];
    let r: CreateTopicsResponse = c.call(7, &req).await.unwrap();
    assert_eq!(r.topics[0].error_code, 0);
    srv.shutdown().await;
    o.topics.clear();
    let srv = start(o).await.unwrap();
    let mut c = Client::connect(srv.addr).await.unwrap();
    let mut all = MetadataRequest::default();
    all.topics = None;
    let m: MetadataResponse = c.call(12, &all).await.unwrap();
    let mut got: Vec<(String, usize)> = m
        .topics
        .iter()
        .map(|t| (t.name.as_ref().unwrap().0.to_string(), t.partitions.len()))
        .collect();
    got.sort();
    assert_eq!(got, vec![("a".into(), 2), ("b".into(), 5)]);
    srv.shutdown().await;
}

#[tokio::test]
async fn max_connections_and_idle_timeout() {
    let dir = temp_dir("limits");
    let mut o = ServeOptions::new("127.0.0.1:0".parse().unwrap(), dir);
    o.owners = common::test_owners();
    o.server.max_connections = 2;
    o.server.connections_max_idle_ms = 300;
    let srv = start(o).await.unwrap();
    let mut a = Client::connect(srv.addr).await.unwrap();
    let _b = TcpStream::connect(srv.addr).await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    // The third connection is closed at once.
    let mut c = TcpStream::connect(srv.addr).await.unwrap();
    assert!(closed(&mut c).await, "over max.connections");
    // `a` keeps working while it is active.
    let r: ApiVersionsResponse = a.call(3, &ApiVersionsRequest::default()).await.unwrap();
    assert_eq!(r.error_code, 0);
    // Idle connections are closed after connections.max.idle.ms.
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(a.read_frame().await.is_err(), "idle connection closed");
    // Slots are free again.
    let mut d = Client::connect(srv.addr).await.unwrap();
    let r: ApiVersionsResponse = d.call(3, &ApiVersionsRequest::default()).await.unwrap();
    assert_eq!(r.error_code, 0);
    srv.shutdown().await;
}
