//! In-memory data plane: just enough of a Kafka partition log for Kafka Streams applications to run
//! against `groupcoord serve` (issue 6).
//!
//! Per topic-partition, the record batches appended by Produce (offsets assigned here, CRC checked),
//! read back by Fetch, with log start / end offsets for ListOffsets, DeleteRecords (Streams purges its
//! repartition topics) and OffsetForLeaderEpoch (there is one leader epoch, 0). InitProducerId hands out
//! producer ids for idempotent producers (on by default in 4.x clients); an exact retry of the last
//! batch of a producer on a partition is answered with the offset it got the first time.
//!
//! Pure: no I/O, no clock, no tokio. Every method takes a `kafka_protocol` request and the topic
//! registry of the server (`name -> partitions`) and returns the response.
//!
//! **Explicitly in memory, never durable.** A restart empties every partition, while committed
//! offsets (coordinator state) survive. So that no consumer silently skips records after a
//! restart, each partition's log starts at the highest offset any group committed for it
//! ([`DataPlane::set_offset_floors`]): new records get offsets above every committed one, and a
//! consumer positioned below that is told `OFFSET_OUT_OF_RANGE` (its reset policy decides)
//! instead of reading different records at the offsets it already consumed. `acks` are accepted
//! as Kafka defines them but mean only "in this server's memory": there is one replica and no
//! disk, so `acks=all` promises no more than `acks=1`. Memory is capped
//! (`groupcoord.max.data.plane.mb`); a Produce beyond the cap is refused with
//! `POLICY_VIOLATION` and a message, until DeleteRecords (Kafka Streams purges its repartition
//! topics) or topic deletion frees space. Not served: transactions, compression-specific handling (batches are stored as sent),
//! fetch sessions (every response carries session id 0, so clients send full fetches), topic ids
//! (clients fall back to topic names because Metadata carries none).

use std::collections::{BTreeMap, HashMap};

use bytes::{Bytes, BytesMut};

use crate::error::ErrorCode;
use crate::wire::{Reader, WireError};
use kafka_protocol::messages::delete_records_response::{
    DeleteRecordsPartitionResult, DeleteRecordsTopicResult,
};
use kafka_protocol::messages::fetch_response::{FetchableTopicResponse, PartitionData};
use kafka_protocol::messages::list_offsets_response::{
    ListOffsetsPartitionResponse, ListOffsetsTopicResponse,
};
use kafka_protocol::messages::offset_for_leader_epoch_response::{
    EpochEndOffset, OffsetForLeaderTopicResult,
};
use kafka_protocol::messages::produce_response::{PartitionProduceResponse, TopicProduceResponse};
use kafka_protocol::messages::*;

/// Size of the v2 record batch header up to and including the record count.
pub const BATCH_HEADER: usize = 61;
/// Latest timestamp sentinel of ListOffsets.
pub const LATEST_TIMESTAMP: i64 = -1;
/// Earliest timestamp sentinel of ListOffsets.
pub const EARLIEST_TIMESTAMP: i64 = -2;
/// Max-timestamp sentinel of ListOffsets (v7+).
pub const MAX_TIMESTAMP: i64 = -3;
/// Earliest-local sentinel (v8+): same as earliest here.
pub const EARLIEST_LOCAL_TIMESTAMP: i64 = -4;
/// Latest-tiered sentinel (v9+): nothing is tiered, so `log start - 1`... reported as earliest.
pub const LATEST_TIERED_TIMESTAMP: i64 = -5;
/// Earliest-pending-upload sentinel (v11): nothing is pending, answered like earliest.
pub const EARLIEST_PENDING_UPLOAD_TIMESTAMP: i64 = -6;

/// The fields of a v2 record batch header the log needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchHeader {
    pub base_offset: i64,
    pub length: usize,
    pub magic: i8,
    pub crc: u32,
    pub attributes: i16,
    pub last_offset_delta: i32,
    pub base_timestamp: i64,
    pub max_timestamp: i64,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub base_sequence: i32,
    pub records_count: i32,
}

/// Reads the header of the batch at the start of `b` (at least [`BATCH_HEADER`] bytes), field by
/// field in Kafka's `DefaultRecordBatch` layout.
fn read_batch_header(b: &[u8]) -> Result<BatchHeader, WireError> {
    let mut r = Reader::new(b, "RecordBatch");
    let base_offset = r.i64("BaseOffset")?;
    let batch_length = r.i32("BatchLength")?;
    let _partition_leader_epoch = r.i32("PartitionLeaderEpoch")?;
    Ok(BatchHeader {
        base_offset,
        length: 12 + batch_length.max(0) as usize,
        magic: r.i8("Magic")?,
        crc: r.u32("Crc")?,
        attributes: r.i16("Attributes")?,
        last_offset_delta: r.i32("LastOffsetDelta")?,
        base_timestamp: r.i64("BaseTimestamp")?,
        max_timestamp: r.i64("MaxTimestamp")?,
        producer_id: r.i64("ProducerId")?,
        producer_epoch: r.i16("ProducerEpoch")?,
        base_sequence: r.i32("BaseSequence")?,
        records_count: r.i32("RecordsCount")?,
    })
}

/// Splits a records blob into v2 batches. Errors: truncated input, magic other than 2, CRC mismatch,
/// negative deltas or counts.
pub fn split_batches(records: &[u8]) -> Result<Vec<(BatchHeader, &[u8])>, i16> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while at < records.len() {
        let rest = &records[at..];
        // Length and magic first: a batch of another format is refused before its size is trusted.
        let mut prefix = Reader::new(rest, "RecordBatch");
        let (Ok(_), Ok(batch_len), Ok(_), Ok(magic)) = (
            prefix.i64("BaseOffset"),
            prefix.i32("BatchLength"),
            prefix.i32("PartitionLeaderEpoch"),
            prefix.i8("Magic"),
        ) else {
            return Err(ErrorCode::CORRUPT_MESSAGE.0);
        };
        if batch_len < 0 {
            return Err(ErrorCode::CORRUPT_MESSAGE.0);
        }
        let total = 12usize + batch_len as usize;
        if magic != 2 {
            return Err(ErrorCode::UNSUPPORTED_FOR_MESSAGE_FORMAT.0);
        }
        if total < BATCH_HEADER || rest.len() < total {
            return Err(ErrorCode::CORRUPT_MESSAGE.0);
        }
        let b = &rest[..total];
        let h = read_batch_header(b).map_err(|_| ErrorCode::CORRUPT_MESSAGE.0)?;
        if h.last_offset_delta < 0 || h.records_count < 0 {
            return Err(ErrorCode::CORRUPT_MESSAGE.0);
        }
        if crc32c::crc32c(&b[21..]) != h.crc {
            return Err(ErrorCode::CORRUPT_MESSAGE.0);
        }
        out.push((h, b));
        at += total;
    }
    Ok(out)
}

/// One stored batch: its offsets and bytes (base offset and leader epoch already rewritten; both lie
/// outside the CRC).
#[derive(Debug, Clone)]
struct Stored {
    base: i64,
    last: i64,
    max_timestamp: i64,
    bytes: Bytes,
}

/// The last batch a producer appended to a partition (idempotence: exact retries are deduplicated).
#[derive(Debug, Clone, Copy)]
struct ProducerTail {
    epoch: i16,
    base_sequence: i32,
    last_sequence: i32,
    base_offset: i64,
}

/// One partition's log.
#[derive(Debug, Clone, Default)]
pub struct PartitionLog {
    batches: Vec<Stored>,
    log_start: i64,
    end: i64,
    bytes: usize,
    producers: HashMap<i64, ProducerTail>,
}

impl PartitionLog {
    #[cfg(test)]
    /// First offset still readable.
    pub fn log_start_offset(&self) -> i64 {
        self.log_start
    }
    #[cfg(test)]
    /// Next offset to be assigned (= high watermark: one replica, everything is committed).
    pub fn end_offset(&self) -> i64 {
        self.end
    }
    #[cfg(test)]
    /// Bytes held.
    pub fn size_bytes(&self) -> usize {
        self.bytes
    }

    /// Appends the batches of one Produce partition entry; returns the base offset of the first
    /// appended batch (or of the deduplicated retry).
    fn append(&mut self, records: &[u8]) -> Result<i64, i16> {
        let batches = split_batches(records)?;
        if batches.is_empty() {
            return Err(ErrorCode::CORRUPT_MESSAGE.0);
        }
        // Exact retry of the last batch of an idempotent producer: same answer, nothing appended.
        if batches.len() == 1 {
            let (h, _) = &batches[0];
            if h.producer_id >= 0
                && let Some(t) = self.producers.get(&h.producer_id)
            {
                if t.epoch == h.producer_epoch && t.base_sequence == h.base_sequence {
                    return Ok(t.base_offset);
                }
                if t.epoch == h.producer_epoch
                    && h.base_sequence >= 0
                    && t.last_sequence >= 0
                    && h.base_sequence != t.last_sequence.wrapping_add(1)
                    && h.base_sequence != 0
                {
                    return Err(ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER.0);
                }
            }
        }
        let first = self.end;
        for (h, raw) in batches {
            let base = self.end;
            let mut b = BytesMut::from(raw);
            b[0..8].copy_from_slice(&base.to_be_bytes());
            b[12..16].copy_from_slice(&0i32.to_be_bytes()); // partition leader epoch
            let last = base + h.last_offset_delta as i64;
            self.bytes += b.len();
            self.batches.push(Stored {
                base,
                last,
                max_timestamp: h.max_timestamp,
                bytes: b.freeze(),
            });
            self.end = last + 1;
            if h.producer_id >= 0 {
                self.producers.insert(
                    h.producer_id,
                    ProducerTail {
                        epoch: h.producer_epoch,
                        base_sequence: h.base_sequence,
                        last_sequence: h.base_sequence.wrapping_add(h.last_offset_delta),
                        base_offset: base,
                    },
                );
            }
        }
        Ok(first)
    }

    /// Whole batches from the one holding `offset`, at least one batch, then up to `max_bytes`.
    fn read(&self, offset: i64, max_bytes: usize) -> Bytes {
        let i = self.batches.partition_point(|b| b.last < offset);
        let mut out = BytesMut::new();
        for b in &self.batches[i..] {
            if !out.is_empty() && out.len() + b.bytes.len() > max_bytes {
                break;
            }
            out.extend_from_slice(&b.bytes);
        }
        out.freeze()
    }

    /// Moves the log start forward (DeleteRecords); drops batches wholly below it.
    fn delete_before(&mut self, offset: i64) {
        if offset <= self.log_start {
            return;
        }
        self.log_start = offset;
        let keep = self.batches.partition_point(|b| b.last < offset);
        for b in self.batches.drain(..keep) {
            self.bytes -= b.bytes.len();
        }
    }

    /// First offset whose batch has a max timestamp >= `ts` (ListOffsets by time).
    fn offset_for_timestamp(&self, ts: i64) -> Option<(i64, i64)> {
        self.batches
            .iter()
            .find(|b| b.max_timestamp >= ts)
            .map(|b| (b.base.max(self.log_start), b.max_timestamp))
    }

    fn max_timestamp(&self) -> Option<(i64, i64)> {
        self.batches
            .iter()
            .max_by_key(|b| (b.max_timestamp, std::cmp::Reverse(b.base)))
            .map(|b| (b.last, b.max_timestamp))
    }
}

/// Every partition log, created on first use for partitions of topics in the registry.
#[derive(Debug)]
pub struct DataPlane {
    logs: HashMap<(String, i32), PartitionLog>,
    next_producer_id: i64,
    /// Where a partition's log starts when it is created: above every committed offset.
    floors: HashMap<(String, i32), i64>,
    /// Bytes held by every log, and the cap.
    bytes: usize,
    max_bytes: usize,
}

impl Default for DataPlane {
    fn default() -> Self {
        DataPlane {
            logs: HashMap::new(),
            next_producer_id: 0,
            floors: HashMap::new(),
            bytes: 0,
            max_bytes: usize::MAX,
        }
    }
}

/// The server's topic registry: name -> partition count.
pub type Topics = BTreeMap<String, i32>;

fn known(topics: &Topics, name: &str, partition: i32) -> bool {
    matches!(topics.get(name), Some(&n) if partition >= 0 && partition < n)
}

impl DataPlane {
    pub fn new() -> DataPlane {
        DataPlane::default()
    }

    /// Cap the bytes held by every partition log together.
    pub fn set_max_bytes(&mut self, max: usize) {
        self.max_bytes = max;
    }

    #[cfg(test)]
    /// Bytes held by every partition log together.
    pub fn size_bytes(&self) -> usize {
        self.bytes
    }

    /// The committed offsets that survived a restart: a partition log created from now on starts
    /// at the highest one for its partition (logs that already exist are not moved).
    pub fn set_offset_floors(&mut self, floors: impl IntoIterator<Item = ((String, i32), i64)>) {
        for (k, offset) in floors {
            let f = self.floors.entry(k).or_insert(0);
            *f = (*f).max(offset);
        }
    }

    fn floor(&self, topic: &str, partition: i32) -> i64 {
        self.floors
            .get(&(topic.to_string(), partition))
            .copied()
            .unwrap_or(0)
    }

    fn log_mut(&mut self, topic: &str, partition: i32) -> &mut PartitionLog {
        let floor = self.floor(topic, partition);
        self.logs
            .entry((topic.to_string(), partition))
            .or_insert_with(|| PartitionLog {
                log_start: floor,
                end: floor,
                ..Default::default()
            })
    }

    /// The log of a partition, if anything was written to it.
    pub fn log(&self, topic: &str, partition: i32) -> Option<&PartitionLog> {
        self.logs.get(&(topic.to_string(), partition))
    }

    /// Forgets a deleted topic's data (and data of partitions beyond a new, smaller count).
    pub fn retain_topics(&mut self, topics: &Topics) {
        self.logs.retain(|(t, p), _| known(topics, t, *p));
        self.bytes = self.logs.values().map(|l| l.bytes).sum();
    }

    fn end_and_start(&self, topic: &str, partition: i32) -> (i64, i64) {
        match self.log(topic, partition) {
            Some(l) => (l.end, l.log_start),
            None => {
                let f = self.floor(topic, partition);
                (f, f)
            }
        }
    }

    /// Produce (key 0). acks 0 is answered like acks 1 (the caller must not send a response for it).
    pub fn produce(
        &mut self,
        topics: &Topics,
        req: &ProduceRequest,
        version: i16,
    ) -> ProduceResponse {
        let mut resp = ProduceResponse::default();
        let acks_ok = matches!(req.acks, -1..=1);
        for t in &req.topic_data {
            let mut rt = TopicProduceResponse::default();
            rt.name = t.name.clone();
            rt.topic_id = t.topic_id;
            let by_id = version >= 13;
            for p in &t.partition_data {
                let mut rp = PartitionProduceResponse::default();
                rp.index = p.index;
                rp.base_offset = -1;
                rp.log_append_time_ms = -1;
                rp.log_start_offset = -1;
                let name = t.name.0.as_str();
                let size = p.records.as_ref().map_or(0, |r| r.len());
                rp.error_code = if by_id {
                    ErrorCode::UNKNOWN_TOPIC_ID.0
                } else if !acks_ok {
                    ErrorCode::INVALID_REQUIRED_ACKS.0
                } else if req.transactional_id.is_some() {
                    ErrorCode::TRANSACTIONAL_ID_AUTHORIZATION_FAILED.0
                } else if !known(topics, name, p.index) {
                    ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.0
                } else if self.bytes.saturating_add(size) > self.max_bytes {
                    if version >= 8 {
                        rp.error_message =
                            Some(kafka_protocol::protocol::StrBytes::from_string(format!(
                                "The in-memory data plane is full: {} of {} bytes held \
                                 (groupcoord.max.data.plane.mb); delete records or topics to \
                                 free space.",
                                self.bytes, self.max_bytes
                            )));
                    }
                    ErrorCode::POLICY_VIOLATION.0
                } else {
                    let log = self.log_mut(name, p.index);
                    let before = log.bytes;
                    let r = log.append(p.records.as_deref().unwrap_or(&[]));
                    let (after, start) = (log.bytes, log.log_start);
                    self.bytes = self.bytes + after - before;
                    match r {
                        Ok(base) => {
                            rp.base_offset = base;
                            rp.log_start_offset = start;
                            ErrorCode::NONE.0
                        }
                        Err(e) => e,
                    }
                };
                rt.partition_responses.push(rp);
            }
            resp.responses.push(rt);
        }
        resp
    }

    /// Fetch (key 1). Never waits: the caller decides whether to hold an empty answer back
    /// (`max_wait_ms`) and ask again; see [`fetch_is_empty`].
    pub fn fetch(&self, topics: &Topics, req: &FetchRequest, version: i16) -> FetchResponse {
        let mut resp = FetchResponse::default();
        let mut budget = if req.max_bytes > 0 {
            req.max_bytes as usize
        } else {
            usize::MAX
        };
        for t in &req.topics {
            let mut ft = FetchableTopicResponse::default();
            ft.topic = t.topic.clone();
            ft.topic_id = t.topic_id;
            // v13+ names topics by id: the server's ids are derived from the names (Metadata
            // reports the same ones; only a comparison harness gives the core other ids).
            let by_id = (version >= 13)
                .then(|| {
                    topics.keys().find(|n| {
                        super::consumer::uuid(&crate::assignor::consumer::TopicId::from_name(n))
                            == t.topic_id
                    })
                })
                .flatten();
            for p in &t.partitions {
                let mut pd = PartitionData::default();
                pd.partition_index = p.partition;
                pd.records = Some(Bytes::new());
                let name = match by_id {
                    Some(n) => n.as_str(),
                    None => t.topic.0.as_str(),
                };
                if version >= 13 && by_id.is_none() {
                    pd.error_code = ErrorCode::UNKNOWN_TOPIC_ID.0;
                } else if !known(topics, name, p.partition) {
                    pd.error_code = ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.0;
                    pd.high_watermark = -1;
                } else {
                    let (end, start) = self.end_and_start(name, p.partition);
                    pd.high_watermark = end;
                    pd.last_stable_offset = end;
                    pd.log_start_offset = start;
                    if version >= 4 {
                        pd.aborted_transactions = Some(Vec::new());
                    }
                    if p.fetch_offset < start || p.fetch_offset > end {
                        pd.error_code = ErrorCode::OFFSET_OUT_OF_RANGE.0;
                    } else if p.fetch_offset < end {
                        let log = self.log(name, p.partition).expect("end > 0 means a log");
                        let max = (p.partition_max_bytes.max(1) as usize).min(budget.max(1));
                        let data = log.read(p.fetch_offset, max);
                        budget = budget.saturating_sub(data.len());
                        pd.records = Some(data);
                    }
                }
                ft.partitions.push(pd);
            }
            resp.responses.push(ft);
        }
        resp
    }

    /// ListOffsets (key 2).
    pub fn list_offsets(
        &self,
        topics: &Topics,
        req: &ListOffsetsRequest,
        version: i16,
    ) -> ListOffsetsResponse {
        let mut resp = ListOffsetsResponse::default();
        for t in &req.topics {
            let mut rt = ListOffsetsTopicResponse::default();
            rt.name = t.name.clone();
            for p in &t.partitions {
                let mut rp = ListOffsetsPartitionResponse::default();
                rp.partition_index = p.partition_index;
                rp.timestamp = -1;
                rp.offset = -1;
                let name = t.name.0.as_str();
                if !known(topics, name, p.partition_index) {
                    rp.error_code = ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.0;
                } else {
                    let (end, start) = self.end_and_start(name, p.partition_index);
                    let log = self.log(name, p.partition_index);
                    match p.timestamp {
                        LATEST_TIMESTAMP => rp.offset = end,
                        EARLIEST_TIMESTAMP
                        | EARLIEST_LOCAL_TIMESTAMP
                        | LATEST_TIERED_TIMESTAMP
                        | EARLIEST_PENDING_UPLOAD_TIMESTAMP => rp.offset = start,
                        MAX_TIMESTAMP => {
                            if let Some((o, ts)) = log.and_then(|l| l.max_timestamp()) {
                                rp.offset = o;
                                rp.timestamp = ts;
                            }
                        }
                        ts => {
                            if let Some((o, bts)) = log.and_then(|l| l.offset_for_timestamp(ts)) {
                                rp.offset = o;
                                rp.timestamp = bts;
                            }
                        }
                    }
                    if version >= 4 {
                        rp.leader_epoch = if rp.offset >= 0 { 0 } else { -1 };
                    }
                }
                rt.partitions.push(rp);
            }
            resp.topics.push(rt);
        }
        resp
    }

    /// InitProducerId (key 22) for idempotent producers; transactional ids are refused.
    pub fn init_producer_id(
        &mut self,
        req: &InitProducerIdRequest,
        _version: i16,
    ) -> InitProducerIdResponse {
        let mut resp = InitProducerIdResponse::default();
        if req.transactional_id.is_some() {
            resp.error_code = ErrorCode::TRANSACTIONAL_ID_AUTHORIZATION_FAILED.0;
            resp.producer_id = (-1).into();
            resp.producer_epoch = -1;
            return resp;
        }
        if req.producer_id.0 >= 0 && req.producer_id.0 < self.next_producer_id {
            // A producer bumping its epoch (KIP-360).
            resp.producer_id = req.producer_id;
            resp.producer_epoch = req.producer_epoch.saturating_add(1).max(0);
        } else {
            resp.producer_id = self.next_producer_id.into();
            resp.producer_epoch = 0;
            self.next_producer_id += 1;
        }
        resp
    }

    /// DeleteRecords (key 21): moves the log start offset; `-1` means the high watermark.
    pub fn delete_records(
        &mut self,
        topics: &Topics,
        req: &DeleteRecordsRequest,
        _version: i16,
    ) -> DeleteRecordsResponse {
        let mut resp = DeleteRecordsResponse::default();
        for t in &req.topics {
            let mut rt = DeleteRecordsTopicResult::default();
            rt.name = t.name.clone();
            for p in &t.partitions {
                let mut rp = DeleteRecordsPartitionResult::default();
                rp.partition_index = p.partition_index;
                rp.low_watermark = -1;
                let name = t.name.0.as_str();
                if !known(topics, name, p.partition_index) {
                    rp.error_code = ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.0;
                } else {
                    let log = self.log_mut(name, p.partition_index);
                    let before = log.bytes;
                    let target = if p.offset == -1 { log.end } else { p.offset };
                    if target < 0 || target > log.end {
                        rp.error_code = ErrorCode::OFFSET_OUT_OF_RANGE.0;
                    } else {
                        log.delete_before(target);
                        rp.low_watermark = log.log_start;
                    }
                    let after = log.bytes;
                    self.bytes = self.bytes + after - before;
                }
                rt.partitions.push(rp);
            }
            resp.topics.push(rt);
        }
        resp
    }

    /// OffsetForLeaderEpoch (key 23): one leader epoch (0) whose end is the log end.
    pub fn offset_for_leader_epoch(
        &self,
        topics: &Topics,
        req: &OffsetForLeaderEpochRequest,
        _version: i16,
    ) -> OffsetForLeaderEpochResponse {
        let mut resp = OffsetForLeaderEpochResponse::default();
        for t in &req.topics {
            let mut rt = OffsetForLeaderTopicResult::default();
            rt.topic = t.topic.clone();
            for p in &t.partitions {
                let mut rp = EpochEndOffset::default();
                rp.partition = p.partition;
                let name = t.topic.0.as_str();
                if !known(topics, name, p.partition) {
                    rp.error_code = ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.0;
                    rp.leader_epoch = -1;
                    rp.end_offset = -1;
                } else if p.leader_epoch < 0 {
                    rp.leader_epoch = -1;
                    rp.end_offset = -1;
                } else {
                    rp.leader_epoch = 0;
                    rp.end_offset = self.end_and_start(name, p.partition).0;
                }
                rt.partitions.push(rp);
            }
            resp.topics.push(rt);
        }
        resp
    }
}

/// True when a Fetch response is worth holding back: it names at least one partition, carries no
/// record bytes and no error. As in Kafka's `ReplicaManager.fetchMessages`, a fetch of no partitions
/// is answered at once (a consumer that has just given up its partitions sends those, and waits for
/// the answer when it closes).
pub fn fetch_is_empty(resp: &FetchResponse) -> bool {
    resp.error_code == ErrorCode::NONE.0
        && resp.responses.iter().any(|t| !t.partitions.is_empty())
        && resp.responses.iter().all(|t| {
            t.partitions.iter().all(|p| {
                p.error_code == ErrorCode::NONE.0 && p.records.as_ref().is_none_or(|r| r.is_empty())
            })
        })
}

/// The error name for logs.
#[cfg(test)]
pub fn error_name(code: i16) -> String {
    match kafka_protocol::ResponseError::try_from_code(code) {
        Some(e) => format!("{e:?}"),
        None if code == 0 => "NONE".into(),
        None => format!("error {code}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::messages::delete_records_request::{
        DeleteRecordsPartition, DeleteRecordsTopic,
    };
    use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
    use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
    use kafka_protocol::messages::offset_for_leader_epoch_request::{
        OffsetForLeaderPartition, OffsetForLeaderTopic,
    };
    use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
    use kafka_protocol::protocol::StrBytes;
    use kafka_protocol::records::{
        Compression, Record, RecordBatchDecoder, RecordBatchEncoder, RecordEncodeOptions,
        TimestampType,
    };

    fn topics() -> Topics {
        let mut t = Topics::new();
        t.insert("in".into(), 2);
        t
    }

    fn tn(s: &str) -> TopicName {
        TopicName(StrBytes::from_string(s.to_string()))
    }

    /// A v2 batch of `n` records built by the kafka-protocol encoder (CRC included).
    fn batch(n: usize, ts: i64, pid: i64, seq: i32) -> Bytes {
        let recs: Vec<Record> = (0..n)
            .map(|i| Record {
                transactional: false,
                control: false,
                delete_horizon: false,
                partition_leader_epoch: 7,
                producer_id: pid,
                producer_epoch: if pid >= 0 { 0 } else { -1 },
                timestamp_type: TimestampType::Creation,
                offset: i as i64,
                sequence: if pid >= 0 { seq + i as i32 } else { -1 },
                timestamp: ts + i as i64,
                key: Some(Bytes::from(format!("k{i}"))),
                value: Some(Bytes::from(format!("v{i}"))),
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

    fn produce_req(topic: &str, part: i32, records: Bytes) -> ProduceRequest {
        let mut p = PartitionProduceData::default();
        p.index = part;
        p.records = Some(records);
        let mut t = TopicProduceData::default();
        t.name = tn(topic);
        t.partition_data = vec![p];
        let mut r = ProduceRequest::default();
        r.acks = -1;
        r.timeout_ms = 30000;
        r.topic_data = vec![t];
        r
    }

    fn fetch_req(topic: &str, part: i32, offset: i64, max: i32) -> FetchRequest {
        let mut p = FetchPartition::default();
        p.partition = part;
        p.fetch_offset = offset;
        p.partition_max_bytes = max;
        let mut t = FetchTopic::default();
        t.topic = tn(topic);
        t.partitions = vec![p];
        let mut r = FetchRequest::default();
        r.max_bytes = 1 << 20;
        r.max_wait_ms = 500;
        r.topics = vec![t];
        r
    }

    fn produce_one(dp: &mut DataPlane, part: i32, records: Bytes) -> (i16, i64) {
        let r = dp.produce(&topics(), &produce_req("in", part, records), 9);
        let p = &r.responses[0].partition_responses[0];
        (p.error_code, p.base_offset)
    }

    fn list(dp: &DataPlane, part: i32, ts: i64) -> (i16, i64, i64) {
        let mut p = ListOffsetsPartition::default();
        p.partition_index = part;
        p.timestamp = ts;
        let mut t = ListOffsetsTopic::default();
        t.name = tn("in");
        t.partitions = vec![p];
        let mut r = ListOffsetsRequest::default();
        r.topics = vec![t];
        let resp = dp.list_offsets(&topics(), &r, 9);
        let p = &resp.topics[0].partitions[0];
        (p.error_code, p.offset, p.timestamp)
    }

    #[test]
    fn produce_assigns_offsets_and_fetch_reads_them_back() {
        let mut dp = DataPlane::new();
        assert_eq!(produce_one(&mut dp, 0, batch(3, 1000, -1, -1)), (0, 0));
        assert_eq!(produce_one(&mut dp, 0, batch(2, 2000, -1, -1)), (0, 3));
        assert_eq!(produce_one(&mut dp, 1, batch(1, 3000, -1, -1)), (0, 0));
        let log = dp.log("in", 0).unwrap();
        assert_eq!((log.log_start_offset(), log.end_offset()), (0, 5));

        let resp = dp.fetch(&topics(), &fetch_req("in", 0, 0, 1 << 20), 12);
        let pd = &resp.responses[0].partitions[0];
        assert_eq!(
            (pd.error_code, pd.high_watermark, pd.last_stable_offset),
            (0, 5, 5)
        );
        let mut bytes = pd.records.clone().unwrap();
        let set = RecordBatchDecoder::decode_all(&mut bytes).unwrap();
        let recs: Vec<_> = set.into_iter().flat_map(|s| s.records).collect();
        assert_eq!(
            recs.iter().map(|r| r.offset).collect::<Vec<_>>(),
            vec![0, 1, 2, 3, 4]
        );
        assert!(recs.iter().all(|r| r.partition_leader_epoch == 0));
        assert_eq!(recs[3].value.as_deref(), Some(&b"v0"[..]));

        // From offset 4: the batch holding it and nothing before it (the kafka-protocol encoder may
        // have put each record in a batch of its own, so the batch may start at 3 or 4).
        let resp = dp.fetch(&topics(), &fetch_req("in", 0, 4, 1 << 20), 12);
        let mut bytes = resp.responses[0].partitions[0].records.clone().unwrap();
        let set = RecordBatchDecoder::decode_all(&mut bytes).unwrap();
        let offs: Vec<i64> = set
            .iter()
            .flat_map(|s| s.records.iter().map(|r| r.offset))
            .collect();
        assert_eq!(offs.last(), Some(&4), "{set:?}");
        assert!(offs.iter().all(|&o| o >= 3), "{set:?}");

        // At the end: empty, no error.
        let resp = dp.fetch(&topics(), &fetch_req("in", 0, 5, 1 << 20), 12);
        assert!(fetch_is_empty(&resp));
        assert_eq!(resp.responses[0].partitions[0].high_watermark, 5);
    }

    #[test]
    fn fetch_returns_at_least_one_batch_then_respects_max_bytes() {
        let mut dp = DataPlane::new();
        for _ in 0..3 {
            produce_one(&mut dp, 0, batch(2, 1, -1, -1));
        }
        let one = dp.log("in", 0).unwrap().batches[0].bytes.len();
        let resp = dp.fetch(&topics(), &fetch_req("in", 0, 0, 1), 12);
        assert_eq!(
            resp.responses[0].partitions[0]
                .records
                .as_ref()
                .unwrap()
                .len(),
            one
        );
        let resp = dp.fetch(&topics(), &fetch_req("in", 0, 0, (2 * one) as i32), 12);
        assert_eq!(
            resp.responses[0].partitions[0]
                .records
                .as_ref()
                .unwrap()
                .len(),
            2 * one
        );
    }

    #[test]
    fn fetch_errors() {
        let mut dp = DataPlane::new();
        produce_one(&mut dp, 0, batch(2, 1, -1, -1));
        let pd = |r: FetchResponse| r.responses[0].partitions[0].error_code;
        assert_eq!(
            pd(dp.fetch(&topics(), &fetch_req("in", 0, 3, 100), 12)),
            ErrorCode::OFFSET_OUT_OF_RANGE.0
        );
        assert_eq!(
            pd(dp.fetch(&topics(), &fetch_req("in", 2, 0, 100), 12)),
            ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.0
        );
        assert_eq!(
            pd(dp.fetch(&topics(), &fetch_req("nope", 0, 0, 100), 12)),
            ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.0
        );
        assert_eq!(
            pd(dp.fetch(&topics(), &fetch_req("in", 0, 0, 100), 13)),
            ErrorCode::UNKNOWN_TOPIC_ID.0
        );
        assert!(!fetch_is_empty(&dp.fetch(
            &topics(),
            &fetch_req("in", 0, 3, 100),
            12
        )));
        // A partition never written to is empty, not unknown.
        let r = dp.fetch(&topics(), &fetch_req("in", 1, 0, 100), 12);
        assert!(fetch_is_empty(&r));
        // A fetch of no partitions is not held back.
        let mut none = fetch_req("in", 0, 0, 100);
        none.topics.clear();
        assert!(!fetch_is_empty(&dp.fetch(&topics(), &none, 12)));
    }

    #[test]
    fn produce_errors() {
        let mut dp = DataPlane::new();
        assert_eq!(
            produce_one(&mut dp, 5, batch(1, 1, -1, -1)).0,
            ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.0
        );
        let mut bad = BytesMut::from(&batch(1, 1, -1, -1)[..]);
        let n = bad.len();
        bad[n - 1] ^= 0xff;
        assert_eq!(
            produce_one(&mut dp, 0, bad.freeze()).0,
            ErrorCode::CORRUPT_MESSAGE.0
        );
        let mut v1 = BytesMut::from(&batch(1, 1, -1, -1)[..]);
        v1[16] = 1;
        assert_eq!(
            produce_one(&mut dp, 0, v1.freeze()).0,
            ErrorCode::UNSUPPORTED_FOR_MESSAGE_FORMAT.0
        );
        let b = batch(1, 1, -1, -1);
        assert_eq!(
            produce_one(&mut dp, 0, b.slice(..b.len() - 3)).0,
            ErrorCode::CORRUPT_MESSAGE.0
        );
        assert_eq!(
            produce_one(&mut dp, 0, Bytes::new()).0,
            ErrorCode::CORRUPT_MESSAGE.0
        );
        let mut r = produce_req("in", 0, batch(1, 1, -1, -1));
        r.acks = 2;
        let resp = dp.produce(&topics(), &r, 9);
        assert_eq!(
            resp.responses[0].partition_responses[0].error_code,
            ErrorCode::INVALID_REQUIRED_ACKS.0
        );
        // Nothing was appended by any of these.
        assert_eq!(dp.log("in", 0).map(|l| l.end_offset()).unwrap_or(0), 0);
    }

    #[test]
    fn idempotent_retry_is_deduplicated() {
        let mut dp = DataPlane::new();
        let mut ipr = InitProducerIdRequest::default();
        ipr.transactional_id = None;
        ipr.producer_id = (-1).into();
        ipr.producer_epoch = -1;
        let r = dp.init_producer_id(&ipr, 5);
        assert_eq!((r.error_code, r.producer_id.0, r.producer_epoch), (0, 0, 0));
        let r2 = dp.init_producer_id(&ipr, 5);
        assert_eq!(r2.producer_id.0, 1);
        let b0 = batch(2, 1, 0, 0);
        assert_eq!(produce_one(&mut dp, 0, b0.clone()), (0, 0));
        assert_eq!(produce_one(&mut dp, 0, b0), (0, 0)); // retry: same offset, not appended
        assert_eq!(produce_one(&mut dp, 0, batch(1, 1, 0, 2)), (0, 2));
        assert_eq!(
            produce_one(&mut dp, 0, batch(1, 1, 0, 9)).0,
            ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER.0
        );
        assert_eq!(dp.log("in", 0).unwrap().end_offset(), 3);
        // Transactional ids are not served.
        let mut t = InitProducerIdRequest::default();
        t.transactional_id = Some(TransactionalId(StrBytes::from_static_str("tx")));
        assert_ne!(dp.init_producer_id(&t, 5).error_code, 0);
        // Epoch bump of a known producer id.
        let mut bump = InitProducerIdRequest::default();
        bump.transactional_id = None;
        bump.producer_id = 0.into();
        bump.producer_epoch = 0;
        let r = dp.init_producer_id(&bump, 5);
        assert_eq!((r.producer_id.0, r.producer_epoch), (0, 1));
    }

    #[test]
    fn list_offsets_and_delete_records() {
        let mut dp = DataPlane::new();
        assert_eq!(list(&dp, 0, LATEST_TIMESTAMP), (0, 0, -1));
        assert_eq!(list(&dp, 0, EARLIEST_TIMESTAMP), (0, 0, -1));
        produce_one(&mut dp, 0, batch(2, 1000, -1, -1));
        produce_one(&mut dp, 0, batch(2, 5000, -1, -1));
        assert_eq!(list(&dp, 0, LATEST_TIMESTAMP).1, 4);
        let (e, o, ts) = list(&dp, 0, 3000);
        assert_eq!((e, o), (0, 2));
        assert!(ts >= 5000);
        assert_eq!(list(&dp, 0, 9000), (0, -1, -1));
        let (e, o, ts) = list(&dp, 0, MAX_TIMESTAMP);
        assert_eq!((e, o), (0, 3));
        assert!(ts >= 5000);
        assert_eq!(
            list(&dp, 7, LATEST_TIMESTAMP).0,
            ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.0
        );

        let del = |dp: &mut DataPlane, off: i64| {
            let mut p = DeleteRecordsPartition::default();
            p.partition_index = 0;
            p.offset = off;
            let mut t = DeleteRecordsTopic::default();
            t.name = tn("in");
            t.partitions = vec![p];
            let mut r = DeleteRecordsRequest::default();
            r.topics = vec![t];
            let resp = dp.delete_records(&topics(), &r, 2);
            let p = &resp.topics[0].partitions[0];
            (p.error_code, p.low_watermark)
        };
        assert_eq!(del(&mut dp, 3), (0, 3));
        assert_eq!(list(&dp, 0, EARLIEST_TIMESTAMP).1, 3);
        assert_eq!(dp.log("in", 0).unwrap().batches.len(), 1);
        assert_eq!(del(&mut dp, 9).0, ErrorCode::OFFSET_OUT_OF_RANGE.0);
        assert_eq!(del(&mut dp, 1), (0, 3)); // never backwards
        let r = dp.fetch(&topics(), &fetch_req("in", 0, 2, 100), 12);
        assert_eq!(
            r.responses[0].partitions[0].error_code,
            ErrorCode::OFFSET_OUT_OF_RANGE.0
        );
        assert_eq!(r.responses[0].partitions[0].log_start_offset, 3);
        assert_eq!(del(&mut dp, -1), (0, 4));
        assert_eq!(dp.log("in", 0).unwrap().size_bytes(), 0);
    }

    #[test]
    fn offset_for_leader_epoch_and_retain() {
        let mut dp = DataPlane::new();
        produce_one(&mut dp, 1, batch(3, 1, -1, -1));
        let mut p = OffsetForLeaderPartition::default();
        p.partition = 1;
        p.leader_epoch = 0;
        let mut t = OffsetForLeaderTopic::default();
        t.topic = tn("in");
        t.partitions = vec![p];
        let mut r = OffsetForLeaderEpochRequest::default();
        r.topics = vec![t];
        let resp = dp.offset_for_leader_epoch(&topics(), &r, 4);
        let e = &resp.topics[0].partitions[0];
        assert_eq!((e.error_code, e.leader_epoch, e.end_offset), (0, 0, 3));

        dp.retain_topics(&Topics::new());
        assert!(dp.log("in", 1).is_none());
    }

    #[test]
    fn split_batches_rejects_garbage_without_panicking() {
        for len in 0..80 {
            let junk: Vec<u8> = (0..len).map(|i| (i * 37 % 251) as u8).collect();
            let _ = split_batches(&junk);
        }
        let mut neg = BytesMut::from(&batch(1, 1, -1, -1)[..]);
        neg[8..12].copy_from_slice(&(-5i32).to_be_bytes());
        assert!(split_batches(&neg).is_err());
        assert_eq!(error_name(ErrorCode::CORRUPT_MESSAGE.0), "CorruptMessage");
    }

    #[test]
    fn after_a_restart_offsets_start_above_the_highest_committed_offset() {
        // A consumer committed offset 2 before the restart emptied the log.
        let mut dp = DataPlane::new();
        dp.set_offset_floors([(("in".to_string(), 0), 2), (("in".to_string(), 0), 1)]);
        assert_eq!(list(&dp, 0, EARLIEST_TIMESTAMP).1, 2);
        assert_eq!(list(&dp, 0, LATEST_TIMESTAMP).1, 2);
        // The next records are 2 and 3: the consumer at 2 reads them, nothing is skipped.
        assert_eq!(produce_one(&mut dp, 0, batch(2, 1000, -1, -1)), (0, 2));
        let resp = dp.fetch(&topics(), &fetch_req("in", 0, 2, 1 << 20), 12);
        let pd = &resp.responses[0].partitions[0];
        assert_eq!(
            (pd.error_code, pd.high_watermark, pd.log_start_offset),
            (0, 4, 2)
        );
        let mut bytes = pd.records.clone().unwrap();
        let set = RecordBatchDecoder::decode_all(&mut bytes).unwrap();
        let offsets: Vec<i64> = set
            .into_iter()
            .flat_map(|s| s.records)
            .map(|r| r.offset)
            .collect();
        assert_eq!(offsets, vec![2, 3]);
        // A consumer below the floor is told so instead of reading other records there.
        let resp = dp.fetch(&topics(), &fetch_req("in", 0, 0, 1 << 20), 12);
        assert_eq!(
            resp.responses[0].partitions[0].error_code,
            ErrorCode::OFFSET_OUT_OF_RANGE.0
        );
        // Partitions without a commit start at 0.
        assert_eq!(produce_one(&mut dp, 1, batch(1, 1000, -1, -1)), (0, 0));
    }

    #[test]
    fn produce_beyond_the_memory_cap_is_refused_with_a_message() {
        let mut dp = DataPlane::new();
        let one = batch(3, 1000, -1, -1);
        dp.set_max_bytes(one.len() * 2);
        assert_eq!(produce_one(&mut dp, 0, one.clone()).0, 0);
        assert_eq!(produce_one(&mut dp, 1, one.clone()).0, 0);
        assert_eq!(dp.size_bytes(), one.len() * 2);
        let r = dp.produce(&topics(), &produce_req("in", 0, one.clone()), 9);
        let p = &r.responses[0].partition_responses[0];
        assert_eq!(
            (p.error_code, p.base_offset),
            (ErrorCode::POLICY_VIOLATION.0, -1)
        );
        let msg = p.error_message.as_ref().unwrap().to_string();
        assert!(msg.contains("groupcoord.max.data.plane.mb"), "{msg}");
        assert_eq!(dp.log("in", 0).unwrap().end_offset(), 3, "nothing appended");
        // DeleteRecords frees space.
        let mut dpart = DeleteRecordsPartition::default();
        dpart.partition_index = 0;
        dpart.offset = -1;
        let mut dt = DeleteRecordsTopic::default();
        dt.name = tn("in");
        dt.partitions = vec![dpart];
        let mut dr = DeleteRecordsRequest::default();
        dr.topics = vec![dt];
        dp.delete_records(&topics(), &dr, 2);
        assert_eq!(dp.size_bytes(), one.len());
        assert_eq!(produce_one(&mut dp, 0, one), (0, 3));
    }
}
