//! Wire-level recordings (classic and consumer groups): every request as the bytes of its body,
//! every answer as the bytes of its body and *when* it arrived, relative to the other steps.
//!
//! JoinGroup and SyncGroup are answered late (another member's request or a timer completes
//! them), so a step's answer is tagged with the step during whose interval it arrived: the
//! interval of step k runs from the moment step k was sent until step k+1 was. The recorder
//! sends each request on a connection with nothing in flight (as the broker answers one request
//! of a connection at a time), so a deferred request never holds back the next step.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::Bytes;
use groupcoord::server::wire::{
    Header, RequestKind, ResponseKind, decode_kafka_response, split_response,
};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::net::tcp::OwnedWriteHalf;
use tokio::sync::mpsc;

/// A recorded answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WireAnswer {
    /// The step during whose interval it arrived.
    pub after_step: usize,
    /// Milliseconds since the sequence started.
    pub at_ms: u64,
    /// The response body (after the header), hex.
    pub body: String,
}

/// One request and Apache Kafka's answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WireStep {
    /// What the generator meant ("join m2 (new, v5)", "wrong generation", ...).
    pub note: String,
    /// When the request was written, in milliseconds since the sequence started (measured).
    pub at_ms: u64,
    pub client_id: String,
    pub api_key: i16,
    pub version: i16,
    /// The request body (after the header), hex.
    pub request: String,
    /// `None`: no answer by the end of the sequence.
    pub answer: Option<WireAnswer>,
}

/// One sequence: its groups and steps.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WireSequence {
    pub seq: u32,
    pub groups: Vec<String>,
    pub steps: Vec<WireStep>,
    /// When the recorder stopped waiting for answers, in milliseconds since the start.
    pub end_ms: u64,
    /// The broker's topic ids by topic name (consumer groups name topics by id).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub topic_ids: std::collections::BTreeMap<String, String>,
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn unhex(s: &str) -> Bytes {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).expect("hex"))
        .collect::<Vec<u8>>()
        .into()
}

/// The request body of a step, decoded.
pub fn decode_request(step: &WireStep) -> RequestKind {
    let mut b = unhex(&step.request);
    RequestKind::decode(step.api_key, &mut b, step.version).expect("recorded request decodes")
}

/// The recorded answer of a step, decoded.
pub fn decode_answer(step: &WireStep) -> Option<ResponseKind> {
    let a = step.answer.as_ref()?;
    Some(
        decode_kafka_response(step.api_key, step.version, &unhex(&a.body)).expect("answer decodes"),
    )
}

/// The body bytes of a request (any kafka-protocol message, at `version`).
pub fn encode_body<M: kafka_protocol::protocol::Encodable>(m: &M, version: i16) -> Vec<u8> {
    let mut buf = bytes::BytesMut::new();
    m.encode(&mut buf, version).expect("request encodes");
    buf.to_vec()
}

/// A string field of a request.
pub fn s(v: &str) -> kafka_protocol::protocol::StrBytes {
    kafka_protocol::protocol::StrBytes::from_string(v.to_string())
}

/// A group id field of a request.
pub fn gid(v: &str) -> kafka_protocol::messages::GroupId {
    kafka_protocol::messages::GroupId(s(v))
}

/// The dice of the wire generators (classic and consumer groups), on `next_u32` as the
/// recordings were made (a generator must stay what made its recording).
pub trait Dice: rand_core::RngCore {
    /// An index below `n` (0 when `n` is 0).
    fn pick(&mut self, n: usize) -> usize {
        (self.next_u32() as usize) % n.max(1)
    }
    /// True `percent` times in a hundred.
    fn chance(&mut self, percent: u32) -> bool {
        self.next_u32() % 100 < percent
    }
}

impl<R: rand_core::RngCore> Dice for R {}

/// The steps of the wire generators go out on a 150 ms grid.
pub const PACE_MS: u64 = 150;

/// A request to send, paced on the grid.
pub fn planned<M: kafka_protocol::protocol::Encodable>(
    note: String,
    client_id: String,
    key: kafka_protocol::messages::ApiKey,
    version: i16,
    m: &M,
) -> Planned {
    Planned {
        note,
        client_id,
        api_key: key as i16,
        version,
        body: encode_body(m, version),
        then_wait_ms: PACE_MS,
    }
}

/// What a generator asks the recorder to send next.
pub struct Planned {
    pub note: String,
    pub client_id: String,
    pub api_key: i16,
    pub version: i16,
    /// The request body, encoded at `version`.
    pub body: Vec<u8>,
    /// How long to wait (collecting answers) before the next step, in milliseconds.
    pub then_wait_ms: u64,
}

/// A client model that decides each request from the answers so far.
pub trait Generate {
    /// The next request, or `None` when the sequence is over.
    fn next(&mut self) -> Option<Planned>;
    /// The answer to step `step` arrived (its body, at the step's key and version).
    fn observe(&mut self, step: usize, body: &[u8]);
    fn groups(&self) -> Vec<String>;
}

struct Arrival {
    conn: usize,
    frame: Bytes,
    at: Instant,
}

/// Connections to the broker, each with at most one request in flight.
pub struct Wire {
    addr: SocketAddr,
    writers: Vec<OwnedWriteHalf>,
    /// Per connection: the step in flight and its correlation id.
    busy: Vec<Option<(usize, i32)>>,
    tx: mpsc::UnboundedSender<Arrival>,
    rx: mpsc::UnboundedReceiver<Arrival>,
    next_corr: i32,
}

impl Wire {
    pub fn new(addr: SocketAddr) -> Wire {
        let (tx, rx) = mpsc::unbounded_channel();
        Wire {
            addr,
            writers: Vec::new(),
            busy: Vec::new(),
            tx,
            rx,
            next_corr: 1,
        }
    }

    async fn idle_conn(&mut self) -> usize {
        if let Some(i) = self.busy.iter().position(|b| b.is_none()) {
            return i;
        }
        let stream = TcpStream::connect(self.addr).await.expect("connect");
        stream.set_nodelay(true).ok();
        let (mut r, w) = stream.into_split();
        let conn = self.writers.len();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            loop {
                let mut len = [0u8; 4];
                if r.read_exact(&mut len).await.is_err() {
                    return;
                }
                let mut frame = vec![0u8; u32::from_be_bytes(len) as usize];
                if r.read_exact(&mut frame).await.is_err() {
                    return;
                }
                let at = Instant::now();
                if tx
                    .send(Arrival {
                        conn,
                        frame: frame.into(),
                        at,
                    })
                    .is_err()
                {
                    return;
                }
            }
        });
        self.writers.push(w);
        self.busy.push(None);
        conn
    }

    /// Send a request; returns when it is written.
    async fn send(&mut self, step: usize, p: &Planned) {
        let conn = self.idle_conn().await;
        let corr = self.next_corr;
        self.next_corr += 1;
        let h = Header {
            api_key: p.api_key,
            api_version: p.version,
            correlation_id: corr,
            client_id: Some(p.client_id.clone()),
        };
        let header = groupcoord::server::wire::encode_request_header(&h).expect("header");
        let mut frame = ((header.len() + p.body.len()) as u32)
            .to_be_bytes()
            .to_vec();
        frame.extend_from_slice(&header);
        frame.extend_from_slice(&p.body);
        self.writers[conn].write_all(&frame).await.expect("write");
        self.busy[conn] = Some((step, corr));
    }
}

/// How long a JoinGroup or SyncGroup may take to be answered before the recorder takes it as
/// deferred and goes on (Kafka's answers take 3 ms at the median and up to some 300 ms on a loaded
/// machine).
const DEFERRED_AFTER_MS: u64 = 420;

/// The step grid: every step goes out at a multiple of it from the sequence's start.
const PACE_FLOOR_MS: u64 = 150;

/// How late a step may go out and still count as on its planned grid point.
const GRID_TOLERANCE_MS: u64 = 20;

/// Record one sequence: send each planned request at its time, collect every answer with the
/// interval it arrived in, and hand it to the generator as it comes.
pub async fn record<G: Generate>(addr: SocketAddr, seq: u32, mut generator: G) -> WireSequence {
    const SETTLE_MS: u64 = 400;
    let mut wire = Wire::new(addr);
    let start = Instant::now();
    let mut steps: Vec<WireStep> = Vec::new();
    // Steps go out at planned times from the start (not from the previous send), so the
    // schedule does not drift and stays on the generator's grid.
    let mut planned_ms = 0u64;
    let mut deadline = start;
    let mut sent_at = start;
    let mut meta: HashMap<usize, (i16, i16)> = HashMap::new();
    loop {
        collect(
            &mut wire,
            &mut generator,
            &mut steps,
            &meta,
            start,
            deadline,
        )
        .await;
        // Causality on a loaded machine: the broker answers a request only once its records are
        // committed, and answers reads from committed state, so the next step waits for the
        // previous answer (a JoinGroup or SyncGroup that is still unanswered after
        // DEFERRED_AFTER_MS is waiting for other members or a timer). The measured send times,
        // not the plan, are what the checker replays.
        if let Some(k) = steps.len().checked_sub(1) {
            let deferrable = matches!(steps[k].api_key, 11 | 14);
            let bound =
                sent_at + Duration::from_millis(if deferrable { DEFERRED_AFTER_MS } else { 5_000 });
            while steps[k].answer.is_none() && Instant::now() < bound {
                let until = (Instant::now() + Duration::from_millis(5)).min(bound);
                collect(&mut wire, &mut generator, &mut steps, &meta, start, until).await;
            }
        }
        let Some(p) = generator.next() else { break };
        let k = steps.len();
        sent_at = Instant::now();
        let at_ms = (sent_at - start).as_millis() as u64;
        wire.send(k, &p).await;
        meta.insert(k, (p.api_key, p.version));
        steps.push(WireStep {
            note: p.note,
            at_ms,
            client_id: p.client_id,
            api_key: p.api_key,
            version: p.version,
            request: hex(&p.body),
            answer: None,
        });
        // The next step goes out `then_wait_ms` after this one's planned time; when waiting on a
        // late or deferred answer pushed this step past its plan, the plan moves on to the next
        // multiple of the pace, so steps stay on the generator's grid (its timeouts are off it).
        let late_by = (sent_at - start).as_millis() as u64;
        if late_by > planned_ms + GRID_TOLERANCE_MS {
            planned_ms = late_by.div_ceil(PACE_FLOOR_MS) * PACE_FLOOR_MS;
        }
        planned_ms += p.then_wait_ms;
        deadline = start + Duration::from_millis(planned_ms);
    }
    let end = Instant::now() + Duration::from_millis(SETTLE_MS);
    collect(&mut wire, &mut generator, &mut steps, &meta, start, end).await;
    WireSequence {
        seq,
        groups: generator.groups(),
        steps,
        end_ms: start.elapsed().as_millis() as u64,
        topic_ids: Default::default(),
    }
}

async fn collect<G: Generate>(
    wire: &mut Wire,
    generator: &mut G,
    steps: &mut [WireStep],
    meta: &HashMap<usize, (i16, i16)>,
    start: Instant,
    until: Instant,
) {
    loop {
        let arrival = tokio::select! {
            a = wire.rx.recv() => a.expect("reader alive"),
            _ = tokio::time::sleep_until(until.into()) => return,
        };
        let Some((step, corr)) = wire.busy[arrival.conn].take() else {
            panic!("an answer on an idle connection");
        };
        let (key, version) = meta[&step];
        let (got_corr, body) =
            split_response(key, version, &arrival.frame).expect("response header");
        assert_eq!(got_corr, corr, "correlation id");
        steps[step].answer = Some(WireAnswer {
            after_step: steps.len() - 1,
            at_ms: (arrival.at - start).as_millis() as u64,
            body: hex(body),
        });
        generator.observe(step, body);
    }
}
