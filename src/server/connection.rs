//! One client connection. The read side takes frames ([`FrameReader`]), answers the requests
//! that need no coordinator state itself (ApiVersions, FindCoordinator), sends the rest to the
//! owner in batches (every complete frame already received goes in one batch) and queues one
//! response slot per request or batch. The same task writes the slots strictly in queue order,
//! so responses leave in request order however the owner and the commit path interleave them.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use std::collections::VecDeque;

use bytes::{Buf, Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{oneshot, watch};
use tracing::{debug, error, info, warn};

use super::frame::{Frame, FrameReader, IDLE_BUFFER, ReadError, Reservation};
use super::kafka::{self, data_plane};
use super::listener::Endpoint;
use super::owner::Reply;
use super::peer::{Peer, Principal};
use super::routing::Answer;
use super::security::sasl::{self, Authenticator};
use super::wire::{self, Decoded, Header, Req, RequestKind, Resp, ResponseKind};
use super::{ServeOptions, Shared};

/// Requests sent to the owner as one job at most.
const MAX_BATCH: usize = 512;
/// Answers encoded and not yet written, at most (then the connection waits for the peer to read).
const MAX_UNWRITTEN: usize = 64 * 1024;

/// A response in the connection's ordered queue, with the request bytes it answers (released
/// once it is written).
struct Slot {
    response: Pending,
    _reservations: Vec<Reservation>,
}

enum Pending {
    Ready(Bytes),
    /// The owner's answer to a batch (with several owners, the parts of a batch that spans
    /// them, merged in request order when the last part is in).
    Wait(Answer),
    /// A batch holding a JoinGroup or SyncGroup: its answer may take up to a rebalance timeout
    /// (or never come, for a JoinGroup replaced by a newer one), so the connection stops
    /// waiting for it when the peer closes.
    Deferred(Answer),
}

/// A connection's settings.
pub struct Connection {
    peer: SocketAddr,
    /// The sender as the handlers see it; a SASL listener replaces its principal.
    peer_id: Arc<Peer>,
    shared: Arc<Shared>,
    idle: Duration,
    max_frame: usize,
    max_inflight: usize,
    /// The listener the connection came in on.
    endpoint: Arc<Endpoint>,
    /// The SASL exchange, while the client of a SASL listener is not authenticated yet.
    sasl: Option<Authenticator>,
}

impl Connection {
    pub fn new(
        peer: SocketAddr,
        shared: Arc<Shared>,
        opts: &ServeOptions,
        endpoint: Arc<Endpoint>,
    ) -> Connection {
        let sasl = endpoint.sasl.as_ref().map(|settings| {
            Authenticator::new(
                settings.clone(),
                shared.scram.clone(),
                shared.streams_enabled,
            )
        });
        Connection {
            peer,
            peer_id: Arc::new(Peer::on_listener(&peer.ip().to_string(), &endpoint.name)),
            shared,
            idle: Duration::from_millis(opts.server.connections_max_idle_ms.max(1) as u64),
            max_frame: opts.server.socket_request_max_bytes.max(0) as usize,
            max_inflight: opts.max_inflight_per_connection.max(1),
            endpoint,
            sasl,
        }
    }

    /// The client's address.
    pub fn peer(&self) -> SocketAddr {
        self.peer
    }

    /// Authenticated by the transport (a TLS client certificate).
    pub fn set_principal(&mut self, principal: Principal) {
        self.peer_id = Arc::new(self.peer_id.authenticated(principal));
    }

    /// Serve the connection until the peer closes it, it idles out, a frame is bad, or shutdown.
    ///
    /// One task reads, hands requests to the owner and writes the answers: the only wake-ups per
    /// request are the socket's readiness and the owner's reply (no writer task, no channel
    /// between the two).
    pub async fn run<R, W>(mut self, rd: R, mut wr: W, mut shutdown: watch::Receiver<bool>)
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin,
    {
        let mut frames = FrameReader::new(rd, self.max_frame, self.shared.request_memory.clone());
        if self.sasl.is_some() {
            // Kafka's sasl.server.max.receive.size: small frames until authenticated.
            frames.set_max_frame(sasl::MAX_RECEIVE_BEFORE_AUTH.min(self.max_frame));
        }
        let mut queue = VecDeque::<Slot>::new();
        // Answers ready to write; kept (up to IDLE_BUFFER) between requests so that a steady
        // connection allocates no output buffer per response.
        let mut out = BytesMut::new();
        let mut batch = Batch::default();
        // One idle timer per connection, registered once and moved only when it fires: a frame
        // just notes the time (a timer registered and cleared per frame cost more than the
        // heartbeat it guarded).
        let idle = tokio::time::sleep(self.idle);
        tokio::pin!(idle);
        let mut last_frame = tokio::time::Instant::now();
        // False once the peer closed, a frame was bad, or the server shuts down: what is queued
        // is still written, but deferred answers are not waited for.
        let mut reading = true;
        loop {
            // A peer that does not read its answers stops getting new ones encoded: the
            // queue fills up to `max_inflight` and reading stops.
            let room = out.len() < MAX_UNWRITTEN;
            if room && !take_answered(&mut queue, &mut out) {
                break;
            }
            if !reading && out.is_empty() {
                match queue.front().map(|s| &s.response) {
                    None | Some(Pending::Deferred(_)) => break,
                    _ => {}
                }
            }
            let can_read = reading && queue.len() < self.max_inflight;
            let head = queue.front_mut().and_then(|s| match &mut s.response {
                Pending::Wait(rx) | Pending::Deferred(rx) => Some(rx),
                Pending::Ready(_) => None,
            });
            let waiting = room && head.is_some();
            tokio::select! {
                biased;
                w = wr.write(&out), if !out.is_empty() => match w {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        out.advance(n);
                        if out.is_empty() && !finish_write(&mut wr, &mut out).await {
                            break;
                        }
                    }
                },
                reply = async {
                    match head {
                        Some(answer) => answer.await,
                        None => std::future::pending().await,
                    }
                }, if waiting => {
                    let Ok(reply) = reply else { break };
                    // The request (and its reservation) is freed once its answer is encoded.
                    queue.pop_front();
                    if !encode_reply(&reply, &mut out) {
                        let _ = wr.write_all(&out).await;
                        break;
                    }
                }
                first = frames.read_frame(), if can_read => {
                    last_frame = tokio::time::Instant::now();
                    if !self.take_frames(first, &mut frames, &mut batch, &mut queue).await {
                        reading = false;
                    }
                }
                () = &mut idle, if reading => {
                    let deadline = last_frame + self.idle;
                    if deadline > tokio::time::Instant::now() {
                        idle.as_mut().reset(deadline);
                        continue;
                    }
                    debug!(peer = %self.peer, "idle connection closed (connections.max.idle.ms)");
                    reading = false;
                }
                _ = shutdown.changed(), if reading => reading = false,
            }
        }
        // Answers still deferred are not waited for: the owner drops them when they come.
    }

    /// `first` and every complete frame already buffered after it: requests for the owner go as
    /// one batch, answers made here are queued in order. `false` when the connection stops
    /// reading (closed, a bad frame, failed authentication, the owner gone).
    async fn take_frames<R: AsyncRead + Unpin>(
        &mut self,
        first: Result<Frame, ReadError>,
        frames: &mut FrameReader<R>,
        batch: &mut Batch,
        queue: &mut VecDeque<Slot>,
    ) -> bool {
        let mut next = first;
        loop {
            let frame = match next {
                Ok(f) => f,
                Err(e) => {
                    self.closed(e);
                    return false;
                }
            };
            if self.sasl.is_some() {
                // Before authentication every frame belongs to the SASL exchange (the batch is
                // empty: nothing reaches the owner until then).
                let (slot, open) = self.authenticate(frame);
                queue.extend(slot);
                if !open {
                    return false;
                }
                if self.sasl.is_none() {
                    frames.set_max_frame(self.max_frame);
                }
            } else {
                let Some(local) = self.dispatch(frame, batch) else {
                    return false;
                };
                if let Some(slot) = local {
                    // Keep the order: what is batched for the owner goes first.
                    if !self.submit(batch, queue).await {
                        return false;
                    }
                    queue.push_back(slot);
                }
            }
            // Frames left in the buffer wait there while the queue is full.
            if batch.items.len() >= MAX_BATCH || queue.len() >= self.max_inflight {
                break;
            }
            next = match frames.try_frame() {
                Ok(Some(f)) => Ok(f),
                Ok(None) => break,
                Err(e) => Err(e),
            };
        }
        self.submit(batch, queue).await
    }

    /// One frame of the SASL exchange: the slot to write (if any) and whether the connection
    /// stays open.
    fn authenticate(&mut self, frame: Frame) -> (Option<Slot>, bool) {
        let Some(auth) = self.sasl.as_mut() else {
            return (None, true);
        };
        let slot = |b: Bytes| Slot {
            response: Pending::Ready(b),
            _reservations: vec![],
        };
        match auth.on_frame(frame.body) {
            sasl::Outcome::Reply(b) => (Some(slot(b)), true),
            sasl::Outcome::Authenticated { reply, principal } => {
                debug!(peer = %self.peer, listener = %self.endpoint.name, %principal, "authenticated");
                self.sasl = None;
                self.set_principal(principal);
                (Some(slot(reply)), true)
            }
            sasl::Outcome::Fail { reply, reason } => {
                info!(peer = %self.peer, listener = %self.endpoint.name, "failed authentication: {reason}");
                (reply.map(slot), false)
            }
        }
    }

    fn closed(&self, e: ReadError) {
        match e {
            ReadError::Closed { mid_frame: true } => {
                debug!(peer = %self.peer, "connection closed mid-frame")
            }
            ReadError::Closed { mid_frame: false } => {}
            ReadError::BadLength { declared, .. } if (declared as u32) >> 16 == 0x1603 => {
                // 0x16 0x03: a TLS record, i.e. a TLS client on a plaintext listener.
                self.endpoint.log_refused(
                    self.peer,
                    "TLS client on a plaintext listener (a TLS handshake instead of a Kafka request)",
                );
            }
            ReadError::BadLength { declared, max } => {
                warn!(peer = %self.peer, size = declared, max, "request frame size invalid or larger than socket.request.max.bytes; closing connection");
                self.shared.metrics.closed_bad_frames.fetch_add(1, Relaxed);
            }
            ReadError::Stalled { held } => {
                warn!(peer = %self.peer, held, "request memory spent (queued.max.request.bytes) while this connection held a partial request; closing it");
            }
        }
    }

    /// Decode a frame. A request for the owner joins `batch` (`Some(None)`); one answered here
    /// returns its slot; `None` closes the connection.
    fn dispatch(&self, frame: Frame, batch: &mut Batch) -> Option<Option<Slot>> {
        let shared = &self.shared;
        let streams = shared.streams_enabled;
        let ready = |h: &Header, resp: Resp, reservation: Reservation| match wire::encode_response(
            h, &resp,
        ) {
            Ok(b) => Some(Some(Slot {
                response: Pending::Ready(b),
                _reservations: vec![reservation],
            })),
            Err(e) => {
                error!(
                    key = h.api_key,
                    version = h.api_version,
                    "cannot encode response: {e}"
                );
                None
            }
        };
        match wire::decode_frame(frame.body, streams) {
            Decoded::Close(reason) => {
                warn!(peer = %self.peer, "closing connection: {reason}");
                shared.metrics.closed_bad_frames.fetch_add(1, Relaxed);
                None
            }
            Decoded::ApiVersionsUnsupported(h) => Some(Some(Slot {
                response: Pending::Ready(wire::api_versions_unsupported_frame(
                    h.correlation_id,
                    streams,
                )),
                _reservations: vec![frame.reservation],
            })),
            Decoded::Request(h, Req::ApiVersions(_)) => {
                let r = wire::api_versions_response(0, h.api_version, streams);
                ready(
                    &h,
                    Resp::Kafka(ResponseKind::ApiVersions(r)),
                    frame.reservation,
                )
            }
            // With an authorizer, the owner answers it (DESCRIBE on the group).
            Decoded::Request(h, Req::Kafka(RequestKind::FindCoordinator(r)))
                if !shared.authorize =>
            {
                let (host, port) = &self.endpoint.advertised;
                let resp = kafka::find_coordinator(host, *port, h.api_version, &r, |_| true);
                ready(
                    &h,
                    Resp::Kafka(ResponseKind::FindCoordinator(resp)),
                    frame.reservation,
                )
            }
            Decoded::Request(h, Req::Kafka(RequestKind::Fetch(r))) => {
                // data_plane: an empty answer is held back and the fetch asked again until
                // max_wait_ms (capped at 500 ms) has passed, like a broker's fetch purgatory.
                let (tx, rx) = oneshot::channel();
                tokio::spawn(long_poll_fetch(
                    shared.clone(),
                    h,
                    self.peer_id.clone(),
                    r,
                    tx,
                ));
                Some(Some(Slot {
                    response: Pending::Wait(Answer::One(rx)),
                    _reservations: vec![frame.reservation],
                }))
            }
            Decoded::Request(h, req) => {
                batch.deferred |= wire::may_defer(&req);
                batch.items.push((h, req));
                batch.reservations.push(frame.reservation);
                Some(None)
            }
        }
    }

    /// Send the batch (if any) to the owner and queue its response slot.
    async fn submit(&self, batch: &mut Batch, queue: &mut VecDeque<Slot>) -> bool {
        if batch.items.is_empty() {
            return true;
        }
        let Batch {
            items,
            reservations,
            deferred,
        } = std::mem::take(batch);
        let Some(answer) = to_owner(&self.shared, items, self.peer_id.clone()).await else {
            return false;
        };
        let response = if deferred {
            Pending::Deferred(answer)
        } else {
            Pending::Wait(answer)
        };
        queue.push_back(Slot {
            response,
            _reservations: reservations,
        });
        true
    }
}

/// The hand-off of requests to the owner(s) (the one place a connection reaches them); `None`
/// once an owner is gone.
async fn to_owner(shared: &Shared, items: Vec<(Header, Req)>, peer: Arc<Peer>) -> Option<Answer> {
    shared.owner.send(items, peer).await.ok()
}

/// Requests for the owner, collected from the frames received so far.
#[derive(Default)]
struct Batch {
    items: Vec<(Header, Req)>,
    reservations: Vec<Reservation>,
    /// Holds a JoinGroup or SyncGroup.
    deferred: bool,
}

/// Move every answer at the head of the queue that is already there into `out`, in order,
/// without waiting. `false` when an answer can never come (the owner dropped it) or cannot be
/// encoded: the connection closes.
fn take_answered(queue: &mut VecDeque<Slot>, out: &mut BytesMut) -> bool {
    while let Some(slot) = queue.front_mut() {
        if out.len() >= MAX_UNWRITTEN {
            return true;
        }
        let reply = match &mut slot.response {
            Pending::Ready(b) => {
                out.extend_from_slice(b);
                queue.pop_front();
                continue;
            }
            Pending::Wait(answer) | Pending::Deferred(answer) => match answer.try_take() {
                Ok(Some(reply)) => reply,
                Ok(None) => return true,
                Err(_) => return false,
            },
        };
        queue.pop_front();
        if !encode_reply(&reply, out) {
            return false;
        }
    }
    true
}

/// Append the owner's answers to `out`; `false` if one cannot be encoded.
fn encode_reply(reply: &Reply, out: &mut BytesMut) -> bool {
    for ((h, _), resp) in reply.items.iter().zip(reply.resps.iter()) {
        if let Err(e) = wire::encode_response_into(h, resp, out) {
            error!(
                key = h.api_key,
                version = h.api_version,
                "cannot encode response: {e}"
            );
            return false;
        }
    }
    true
}

/// Everything in `out` was written: flush (a TLS stream writes its last record here) and drop an
/// output buffer that grew large, so an idle connection does not keep it.
async fn finish_write<W: AsyncWrite + Unpin>(wr: &mut W, out: &mut BytesMut) -> bool {
    if wr.flush().await.is_err() {
        return false;
    }
    out.clear();
    if out.capacity() > IDLE_BUFFER {
        *out = BytesMut::new();
    }
    true
}

/// Fetch through the owner (data_plane), polling every 20 ms while the answer is empty and
/// `max_wait_ms` (capped at 500 ms) has not passed.
async fn long_poll_fetch(
    shared: Arc<Shared>,
    h: Header,
    peer: Arc<Peer>,
    r: kafka_protocol::messages::FetchRequest,
    out: oneshot::Sender<Reply>,
) {
    let poll = Duration::from_millis(20);
    let deadline =
        tokio::time::Instant::now() + Duration::from_millis(r.max_wait_ms.clamp(0, 500) as u64);
    loop {
        let items = vec![(h.clone(), Req::Kafka(RequestKind::Fetch(r.clone())))];
        let Some(answer) = to_owner(&shared, items, peer.clone()).await else {
            return;
        };
        let Ok(reply) = answer.await else { return };
        let empty = match reply.resps.first() {
            Some(Resp::Kafka(ResponseKind::Fetch(f))) => data_plane::fetch_is_empty(f),
            _ => false,
        };
        if !empty || tokio::time::Instant::now() + poll >= deadline {
            let _ = out.send(reply);
            return;
        }
        tokio::time::sleep(poll).await;
    }
}
