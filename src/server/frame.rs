//! Framing and the memory budget of request bytes.
//!
//! A Kafka request is `length i32 BE | body`. The length comes from the peer, so nothing is
//! allocated from it: the body is read in chunks into a buffer that grows with the bytes that
//! actually arrived, and every chunk is reserved first from two budgets:
//!
//! * the connection's own, `socket.request.max.bytes` (a connection holds at most one maximal
//!   request's worth of bytes: received and not yet answered);
//! * the server's, `queued.max.request.bytes` (Kafka's key; groupcoord's default is
//!   [`DEFAULT_QUEUED_MAX_REQUEST_BYTES`](crate::config_keys::DEFAULT_QUEUED_MAX_REQUEST_BYTES)).
//!
//! When a budget is spent the connection stops reading (back-pressure, as Kafka mutes a channel
//! when its memory pool is empty) until responses are written and their requests freed. A frame's
//! reservation travels with its request ([`Frame::reservation`]) and is released when the
//! response has been written. An idle connection keeps no read buffer beyond [`IDLE_BUFFER`].

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use bytes::{BufMut, Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Bytes read from a socket at a time (and reserved before reading) while a frame is incomplete.
const CHUNK: usize = 64 * 1024;
/// First read after an idle period: enough for a few small pipelined requests.
const FIRST_CHUNK: usize = 4 * 1024;
/// A read buffer larger than this is dropped instead of kept when the connection goes idle.
pub const IDLE_BUFFER: usize = 16 * 1024;
/// How long a connection that holds part of a request waits for the server's budget before it
/// is closed. Without this, connections holding partial requests that together spend the
/// budget would wait for each other forever (and a peer that sends part of a request and
/// stalls could keep the server from reading anyone).
pub const STALL: std::time::Duration = std::time::Duration::from_secs(2);

/// A budget of bytes, shared by everything that reserves from it. `limit <= 0` = unbounded
/// (still counted).
#[derive(Clone, Debug)]
pub struct MemoryBudget {
    inner: Arc<BudgetInner>,
}

#[derive(Debug)]
struct BudgetInner {
    permits: Option<Arc<Semaphore>>,
    limit: usize,
    in_use: AtomicU64,
}

impl MemoryBudget {
    pub fn new(limit: i64) -> MemoryBudget {
        let n = usize::try_from(limit)
            .unwrap_or(usize::MAX)
            .min(Semaphore::MAX_PERMITS);
        let permits = (limit > 0).then(|| Arc::new(Semaphore::new(n)));
        MemoryBudget {
            inner: Arc::new(BudgetInner {
                permits,
                limit: if limit > 0 { n } else { usize::MAX },
                in_use: AtomicU64::new(0),
            }),
        }
    }

    /// The most that can ever be reserved at once.
    pub fn limit(&self) -> usize {
        self.inner.limit
    }

    /// Bytes reserved now.
    pub fn in_use(&self) -> u64 {
        self.inner.in_use.load(Relaxed)
    }

    /// Wait until `bytes` are available and reserve them.
    pub async fn reserve(&self, bytes: usize) -> Held {
        let permit = match &self.inner.permits {
            // `bytes` is at most CHUNK and the limit; the semaphore is never closed.
            Some(s) => s.clone().acquire_many_owned(bytes as u32).await.ok(),
            None => None,
        };
        self.inner.in_use.fetch_add(bytes as u64, Relaxed);
        Held {
            inner: self.inner.clone(),
            bytes,
            permit,
        }
    }
}

/// Bytes reserved from one [`MemoryBudget`]; given back on drop.
#[derive(Debug)]
pub struct Held {
    inner: Arc<BudgetInner>,
    bytes: usize,
    permit: Option<OwnedSemaphorePermit>,
}

impl Held {
    fn empty(budget: &MemoryBudget) -> Held {
        Held {
            inner: budget.inner.clone(),
            bytes: 0,
            permit: None,
        }
    }

    /// Take `n` of the held bytes out into a reservation of their own.
    fn split(&mut self, n: usize) -> Held {
        let n = n.min(self.bytes);
        self.bytes -= n;
        let permit = match self.permit.as_mut() {
            Some(p) if n == p.num_permits() => self.permit.take(),
            Some(p) => p.split(n),
            None => None,
        };
        Held {
            inner: self.inner.clone(),
            bytes: n,
            permit,
        }
    }

    fn merge(&mut self, mut other: Held) {
        self.bytes += std::mem::take(&mut other.bytes);
        match (self.permit.as_mut(), other.permit.take()) {
            (Some(p), Some(o)) => p.merge(o),
            (None, o) => self.permit = o,
            (Some(_), None) => {}
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.inner.in_use.fetch_sub(self.bytes as u64, Relaxed);
    }
}

/// A frame's share of both budgets.
#[derive(Debug)]
pub struct Reservation {
    connection: Held,
    server: Held,
}

impl Reservation {
    #[cfg(test)]
    pub fn bytes(&self) -> usize {
        self.connection.bytes
    }
}

/// One complete request frame (the body, without the length prefix).
#[derive(Debug)]
pub struct Frame {
    pub body: Bytes,
    pub reservation: Reservation,
}

/// Why no frame could be read.
#[derive(Debug, PartialEq, Eq)]
pub enum ReadError {
    /// The peer closed (or reset) the connection; `mid_frame` if a frame was incomplete.
    Closed { mid_frame: bool },
    /// The declared length is negative or larger than the limit.
    BadLength { declared: i32, max: usize },
    /// The server's request budget stayed spent for [`STALL`] while this connection held part
    /// of a request.
    Stalled { held: usize },
}

/// Reads length-prefixed frames within the memory budgets.
pub struct FrameReader<R> {
    rd: R,
    buf: BytesMut,
    /// Covers the bytes in `buf` (plus, briefly, space being read into).
    held: Reservation,
    connection_budget: MemoryBudget,
    server_budget: MemoryBudget,
    max_frame: usize,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    /// `max_frame` is `socket.request.max.bytes`; it is also the connection's budget.
    pub fn new(rd: R, max_frame: usize, server_budget: MemoryBudget) -> FrameReader<R> {
        // One maximal frame, length prefix included.
        let connection_budget = MemoryBudget::new(max_frame.saturating_add(4) as i64);
        FrameReader {
            rd,
            buf: BytesMut::new(),
            held: Reservation {
                connection: Held::empty(&connection_budget),
                server: Held::empty(&server_budget),
            },
            connection_budget,
            server_budget,
            max_frame,
        }
    }

    /// Lower (or restore) the largest frame accepted; never above the limit given to
    /// [`FrameReader::new`] (the connection's budget is sized for that one).
    pub fn set_max_frame(&mut self, max: usize) {
        let limit = self.connection_budget.limit().max(4) - 4;
        self.max_frame = max.min(limit);
    }

    /// Bytes received and not yet returned as frames.
    #[cfg(test)]
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// Capacity of the read buffer (what an idle connection costs).
    #[cfg(test)]
    pub fn capacity(&self) -> usize {
        self.buf.capacity()
    }

    /// A complete frame already in the buffer, if any (no I/O).
    pub fn try_frame(&mut self) -> Result<Option<Frame>, ReadError> {
        let Some(len) = self.declared_len()? else {
            return Ok(None);
        };
        if self.buf.len() < 4 + len {
            return Ok(None);
        }
        let _ = self.buf.split_to(4);
        let body = self.buf.split_to(len).freeze();
        let n = 4 + len;
        let reservation = Reservation {
            connection: self.held.connection.split(n),
            server: self.held.server.split(n),
        };
        if self.buf.is_empty() && self.buf.capacity() > IDLE_BUFFER {
            self.buf = BytesMut::new();
        }
        Ok(Some(Frame { body, reservation }))
    }

    /// The next frame, reading as needed.
    pub async fn read_frame(&mut self) -> Result<Frame, ReadError> {
        loop {
            if let Some(f) = self.try_frame()? {
                return Ok(f);
            }
            let want = match self.declared_len()? {
                // Grow with what arrived (at most doubling), not with what was declared.
                Some(len) => (4 + len - self.buf.len())
                    .min(self.buf.len().max(FIRST_CHUNK))
                    .clamp(1, CHUNK),
                None if self.buf.is_empty() => FIRST_CHUNK,
                None => CHUNK,
            };
            self.read_some(want).await?;
        }
    }

    /// The declared body length of the frame at the head of the buffer, once 4 bytes are in.
    fn declared_len(&self) -> Result<Option<usize>, ReadError> {
        if self.buf.len() < 4 {
            return Ok(None);
        }
        let declared = i32::from_be_bytes([self.buf[0], self.buf[1], self.buf[2], self.buf[3]]);
        match usize::try_from(declared) {
            Ok(n) if n <= self.max_frame => Ok(Some(n)),
            _ => Err(ReadError::BadLength {
                declared,
                max: self.max_frame,
            }),
        }
    }

    /// Reserve `want` bytes, read at most that many, give back what did not arrive. Afterwards
    /// the reservation covers exactly the buffered bytes, even if this future was cancelled
    /// while reading (the next call tops up only what is missing).
    async fn read_some(&mut self, want: usize) -> Result<(), ReadError> {
        let want = want
            .min(self.connection_budget.limit())
            .min(self.server_budget.limit())
            .max(1);
        let spare = self.held.connection.bytes.saturating_sub(self.buf.len());
        if want > spare {
            // The connection's budget first: a connection that holds its share waits for its
            // own responses before it competes for the server's.
            let more = want - spare;
            let connection = self.connection_budget.reserve(more).await;
            let server = if self.buf.is_empty() {
                // Holding nothing, waiting cannot block anyone.
                self.server_budget.reserve(more).await
            } else {
                tokio::time::timeout(STALL, self.server_budget.reserve(more))
                    .await
                    .map_err(|_| ReadError::Stalled {
                        held: self.buf.len(),
                    })?
            };
            self.held.connection.merge(connection);
            self.held.server.merge(server);
        }
        self.buf.reserve(want);
        let read = self.rd.read_buf(&mut (&mut self.buf).limit(want)).await;
        let extra = self.held.connection.bytes.saturating_sub(self.buf.len());
        drop(self.held.connection.split(extra));
        drop(self.held.server.split(extra));
        match read {
            Ok(0) | Err(_) => Err(ReadError::Closed {
                mid_frame: !self.buf.is_empty(),
            }),
            Ok(_) => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A header claiming a 100 MiB body allocates nothing like it while the body does not come.
    #[tokio::test]
    async fn buffer_grows_with_received_bytes_not_declared_length() {
        let (mut client, server) = tokio::io::duplex(1 << 20);
        let budget = MemoryBudget::new(256 << 20);
        let mut reader = FrameReader::new(server, 100 << 20, budget.clone());
        use tokio::io::AsyncWriteExt;
        client
            .write_all(&(100i32 << 20).to_be_bytes())
            .await
            .unwrap();
        client.write_all(&[7u8; 1000]).await.unwrap();
        let pending =
            tokio::time::timeout(std::time::Duration::from_millis(50), reader.read_frame()).await;
        assert!(pending.is_err(), "the frame is incomplete");
        assert_eq!(reader.buffered(), 1004);
        assert!(
            reader.capacity() <= 4 * FIRST_CHUNK,
            "{}",
            reader.capacity()
        );
        assert!(
            budget.in_use() <= 4 * FIRST_CHUNK as u64,
            "{}",
            budget.in_use()
        );
    }

    #[tokio::test]
    async fn frames_carry_their_reservation_and_release_it() {
        let (mut client, server) = tokio::io::duplex(1 << 16);
        let budget = MemoryBudget::new(1 << 20);
        let mut reader = FrameReader::new(server, 1 << 10, budget.clone());
        use tokio::io::AsyncWriteExt;
        for body in [&b"abc"[..], b"defgh"] {
            client
                .write_all(&(body.len() as i32).to_be_bytes())
                .await
                .unwrap();
            client.write_all(body).await.unwrap();
        }
        let a = reader.read_frame().await.unwrap();
        let b = reader.read_frame().await.unwrap();
        assert_eq!((&a.body[..], &b.body[..]), (&b"abc"[..], &b"defgh"[..]));
        assert_eq!((a.reservation.bytes(), b.reservation.bytes()), (7, 9));
        assert_eq!(budget.in_use(), 16);
        drop((a, b));
        assert_eq!(budget.in_use(), 0);
    }

    #[tokio::test]
    async fn a_spent_connection_budget_stops_reading_until_a_frame_is_freed() {
        let (mut client, server) = tokio::io::duplex(1 << 16);
        let budget = MemoryBudget::new(-1);
        let mut reader = FrameReader::new(server, 100, budget);
        use tokio::io::AsyncWriteExt;
        for _ in 0..3 {
            client.write_all(&60i32.to_be_bytes()).await.unwrap();
            client.write_all(&[1u8; 60]).await.unwrap();
        }
        let first = reader.read_frame().await.unwrap();
        // 64 bytes held by `first`: the second frame (64 more) does not fit in 100.
        let blocked =
            tokio::time::timeout(std::time::Duration::from_millis(50), reader.read_frame()).await;
        assert!(blocked.is_err());
        drop(first);
        let second = reader.read_frame().await.unwrap();
        assert_eq!(second.body.len(), 60);
    }

    #[tokio::test]
    async fn bad_lengths_are_refused() {
        let (mut client, server) = tokio::io::duplex(64);
        let mut reader = FrameReader::new(server, 100, MemoryBudget::new(-1));
        use tokio::io::AsyncWriteExt;
        client.write_all(&101i32.to_be_bytes()).await.unwrap();
        assert_eq!(
            reader.read_frame().await.unwrap_err(),
            ReadError::BadLength {
                declared: 101,
                max: 100
            }
        );
    }
}
