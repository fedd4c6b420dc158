//! The data plane (src/server/data_plane.rs) over real TCP: InitProducerId, Produce, Fetch (also the
//! long poll), ListOffsets, DeleteRecords, OffsetForLeaderEpoch, at every served version.
#![cfg(not(target_arch = "wasm32"))]

mod common;
use common::{s, temp_dir};

use std::path::PathBuf;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use groupcoord::server::SUPPORTED;
use groupcoord::server::tools::client::Client;
use groupcoord::server::{ServeOptions, ServerHandle, start};
use kafka_protocol::messages::delete_records_request::{
    DeleteRecordsPartition, DeleteRecordsTopic,
};
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kafka_protocol::messages::offset_for_leader_epoch_request::{
    OffsetForLeaderPartition, OffsetForLeaderTopic,
};
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::*;
use kafka_protocol::records::{
    Compression, Record, RecordBatchDecoder, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};

async fn server(tag: &str) -> (ServerHandle, PathBuf) {
    let dir = temp_dir(tag);
    let mut o = ServeOptions::new("127.0.0.1:0".parse().unwrap(), dir.clone());
    o.owners = common::test_owners();
    o.topics = vec![("input".into(), 2)];
    (start(o).await.expect("server starts"), dir)
}

fn range(key: i16) -> (i16, i16) {
    let (_, lo, hi) = SUPPORTED.iter().find(|(k, _, _)| *k == key).unwrap();
    (*lo, *hi)
}

fn batch(values: &[&str], pid: i64, seq: i32) -> Bytes {
    let recs: Vec<Record> = values
        .iter()
        .enumerate()
        .map(|(i, v)| Record {
            transactional: false,
            control: false,
            delete_horizon: false,
            partition_leader_epoch: -1,
            producer_id: pid,
            producer_epoch: 0,
            timestamp_type: TimestampType::Creation,
            offset: i as i64,
            sequence: seq + i as i32,
            timestamp: 1_700_000_000_000 + i as i64,
            key: None,
            value: Some(Bytes::from(v.to_string())),
            headers: Default::default(),
        })
        .collect();
    let mut buf = BytesMut::new();
    RecordBatchEncoder::encode(
        &mut buf,
        &recs,
        &RecordEncodeOptions {
            version: 2,
            compression: Compression::None,
        },
    )
    .unwrap();
    buf.freeze()
}

fn produce(records: Bytes, partition: i32) -> ProduceRequest {
    let mut p = PartitionProduceData::default();
    p.index = partition;
    p.records = Some(records);
    let mut t = TopicProduceData::default();
    t.name = TopicName(s("input"));
    t.partition_data = vec![p];
    let mut r = ProduceRequest::default();
    r.transactional_id = None;
    r.acks = -1;
    r.timeout_ms = 5000;
    r.topic_data = vec![t];
    r
}

fn fetch(offset: i64, partition: i32, wait_ms: i32) -> FetchRequest {
    let mut p = FetchPartition::default();
    p.partition = partition;
    p.fetch_offset = offset;
    p.partition_max_bytes = 1 << 20;
    let mut t = FetchTopic::default();
    t.topic = TopicName(s("input"));
    t.partitions = vec![p];
    let mut r = FetchRequest::default();
    r.replica_id = BrokerId(-1);
    r.max_wait_ms = wait_ms;
    r.min_bytes = 1;
    r.max_bytes = 1 << 20;
    r.topics = vec![t];
    r
}

fn values(mut records: Bytes) -> Vec<(i64, String)> {
    RecordBatchDecoder::decode_all(&mut records)
        .unwrap()
        .into_iter()
        .flat_map(|set| set.records)
        .map(|r| {
            (
                r.offset,
                String::from_utf8(r.value.unwrap().to_vec()).unwrap(),
            )
        })
        .collect()
}

#[tokio::test]
async fn produce_fetch_list_delete_over_tcp() {
    let (srv, _d) = server("dataplane").await;
    let mut c = Client::connect(srv.addr).await.unwrap();

    let mut ipr = InitProducerIdRequest::default();
    ipr.transactional_id = None;
    ipr.transaction_timeout_ms = 60000;
    ipr.producer_id = ProducerId(-1);
    ipr.producer_epoch = -1;
    let pid: InitProducerIdResponse = c.call(range(22).1, &ipr).await.unwrap();
    assert_eq!(pid.error_code, 0);

    // Produce at every served version, sequence numbers continuing.
    let (lo, hi) = range(0);
    let mut expected = Vec::new();
    let mut seq = 0;
    for v in lo..=hi {
        let vals = [format!("a{v}"), format!("b{v}")];
        let refs: Vec<&str> = vals.iter().map(|x| x.as_str()).collect();
        let r: ProduceResponse = c
            .call(v, &produce(batch(&refs, pid.producer_id.0, seq), 1))
            .await
            .unwrap();
        let p = &r.responses[0].partition_responses[0];
        assert_eq!(
            (p.error_code, p.base_offset),
            (0, seq as i64),
            "produce v{v}"
        );
        for (i, x) in vals.iter().enumerate() {
            expected.push((seq as i64 + i as i64, x.clone()));
        }
        seq += 2;
    }
    let end = seq as i64;

    // Fetch everything back at every name-based version.
    let (lo, _) = range(1);
    for v in lo..=12 {
        let r: FetchResponse = c.call(v, &fetch(0, 1, 100)).await.unwrap();
        let p = &r.responses[0].partitions[0];
        assert_eq!((p.error_code, p.high_watermark), (0, end), "fetch v{v}");
        assert_eq!(values(p.records.clone().unwrap()), expected, "fetch v{v}");
    }

    // An empty fetch is held back for max_wait_ms (the long poll), then answered empty.
    let t0 = Instant::now();
    let r: FetchResponse = c.call(12, &fetch(end, 1, 300)).await.unwrap();
    assert!(
        t0.elapsed() >= Duration::from_millis(250),
        "{:?}",
        t0.elapsed()
    );
    assert_eq!(
        r.responses[0].partitions[0].records.as_deref(),
        Some(&b""[..])
    );

    // ListOffsets latest/earliest at every version.
    let (lo, hi) = range(2);
    for v in lo..=hi {
        for (ts, want) in [(-1i64, end), (-2, 0)] {
            let mut p = ListOffsetsPartition::default();
            p.partition_index = 1;
            p.timestamp = ts;
            let mut t = ListOffsetsTopic::default();
            t.name = TopicName(s("input"));
            t.partitions = vec![p];
            let mut req = ListOffsetsRequest::default();
            req.replica_id = BrokerId(-1);
            req.topics = vec![t];
            let r: ListOffsetsResponse = c.call(v, &req).await.unwrap();
            let p = &r.topics[0].partitions[0];
            assert_eq!(
                (p.error_code, p.offset),
                (0, want),
                "list_offsets v{v} ts {ts}"
            );
        }
    }

    // OffsetForLeaderEpoch: epoch 0 ends at the log end.
    let (lo, hi) = range(23);
    for v in lo..=hi {
        let mut p = OffsetForLeaderPartition::default();
        p.partition = 1;
        p.leader_epoch = 0;
        p.current_leader_epoch = 0;
        let mut t = OffsetForLeaderTopic::default();
        t.topic = TopicName(s("input"));
        t.partitions = vec![p];
        let mut req = OffsetForLeaderEpochRequest::default();
        req.replica_id = BrokerId(-2);
        req.topics = vec![t];
        let r: OffsetForLeaderEpochResponse = c.call(v, &req).await.unwrap();
        let e = &r.topics[0].partitions[0];
        assert_eq!((e.error_code, e.end_offset), (0, end), "ofle v{v}");
    }

    // DeleteRecords moves the log start; fetching below it is out of range.
    let mut p = DeleteRecordsPartition::default();
    p.partition_index = 1;
    p.offset = 2;
    let mut t = DeleteRecordsTopic::default();
    t.name = TopicName(s("input"));
    t.partitions = vec![p];
    let mut req = DeleteRecordsRequest::default();
    req.topics = vec![t];
    req.timeout_ms = 5000;
    let r: DeleteRecordsResponse = c.call(range(21).1, &req).await.unwrap();
    assert_eq!(r.topics[0].partitions[0].low_watermark, 2);
    let r: FetchResponse = c.call(12, &fetch(0, 1, 0)).await.unwrap();
    assert_eq!(r.responses[0].partitions[0].error_code, 1); // OFFSET_OUT_OF_RANGE

    // A fetch waiting on an empty partition returns as soon as data arrives.
    let mut c2 = Client::connect(srv.addr).await.unwrap();
    let waiter = tokio::spawn(async move {
        let t0 = Instant::now();
        let r: FetchResponse = c2.call(12, &fetch(0, 0, 500)).await.unwrap();
        (t0.elapsed(), r)
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let r: ProduceResponse = c
        .call(9, &produce(batch(&["late"], -1, -1), 0))
        .await
        .unwrap();
    assert_eq!(r.responses[0].partition_responses[0].error_code, 0);
    let (took, r) = waiter.await.unwrap();
    assert_eq!(
        values(r.responses[0].partitions[0].records.clone().unwrap()),
        vec![(0, "late".to_string())]
    );
    assert!(took < Duration::from_millis(450), "{took:?}");
    srv.shutdown().await;
}
