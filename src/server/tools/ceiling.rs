//! The ceiling of `groupcoord bench load`: a minimal responder, measured by the same load
//! generator as groupcoord and Kafka, that shows the most any server could reach on this machine
//! with this generator. It accepts the connections, splits frames and answers every request with
//! a canned frame of the kind and size groupcoord sends (a steady StreamsGroupHeartbeat answer,
//! or groupcoord's own ApiVersions answer), only the correlation id patched in: no decoding, no
//! owner, no log, no task hop. Its threads each run one edge-triggered poller (mio): a read
//! shorter than the buffer has drained the socket, and all answers a read produced leave in one
//! write, so a request costs one read and one write plus its share of a poller wake-up.
//!
//! It listens on 127.0.0.1 only and serves nothing but the bench's two request kinds; anything
//! else (another key or version, a frame length outside 8 bytes..1 MiB) closes the connection.

use std::io::{ErrorKind, Read, Write};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::thread::JoinHandle;
use std::time::Duration;

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token};

use super::bench::Kind;
use crate::protocol::{Status, StreamsGroupHeartbeatResponse};
use crate::server::wire::{self, Header, Resp, ResponseKind};

/// The listener's token (connections are indexes into the thread's table).
const LISTENER: Token = Token(usize::MAX);
/// Bytes taken from a socket per read call.
const READ_CHUNK: usize = 64 * 1024;
/// The largest request frame accepted (the bench's are a few hundred bytes).
const MAX_FRAME: usize = 1 << 20;
/// How often an idle thread looks at the stop flag.
const TICK: Duration = Duration::from_millis(100);

/// The responder's threads; stopped when dropped.
pub(crate) struct Ceiling {
    /// Where it listens.
    pub(crate) addr: SocketAddr,
    stop: Arc<AtomicBool>,
    /// Kernel thread ids, for their CPU time.
    tids: Vec<u32>,
    threads: Vec<JoinHandle<()>>,
}

/// Whole response frames (length prefix included); the correlation id is bytes 4..8.
struct Canned {
    api_versions: Vec<u8>,
    heartbeat: Vec<u8>,
}

impl Canned {
    fn new() -> Result<Canned, String> {
        let frame = |kind: Kind, resp: Resp| {
            let (api_key, api_version) = kind.api();
            let h = Header {
                api_key,
                api_version,
                correlation_id: 0,
                client_id: None,
            };
            wire::encode_response(&h, &resp).map(|b| b.to_vec())
        };
        let cfg = crate::config::CoordinatorConfig::default();
        // What groupcoord answers a steady member (nothing changed: no task lists), for a
        // member id as long as most of the bench's ("bench-member-NNN").
        let steady = StreamsGroupHeartbeatResponse {
            member_id: "bench-member-500".into(),
            member_epoch: 3,
            heartbeat_interval_ms: cfg.heartbeat_interval_ms,
            task_offset_interval_ms: cfg.task_offset_interval_ms,
            acceptable_recovery_lag: cfg.acceptable_recovery_lag,
            status: Some(Vec::<Status>::new()),
            ..Default::default()
        };
        let (_, api_versions_version) = Kind::ApiVersions.api();
        let api_versions = wire::api_versions_response(0, api_versions_version, true);
        Ok(Canned {
            api_versions: frame(
                Kind::ApiVersions,
                Resp::Kafka(ResponseKind::ApiVersions(api_versions)),
            )?,
            heartbeat: frame(Kind::Heartbeat, Resp::Heartbeat(steady))?,
        })
    }

    /// The answer to a request of `key` and `version`, if it is one the bench sends.
    fn answer(&self, key: i16, version: i16) -> Option<&[u8]> {
        match Some((key, version)) {
            k if k == Some(Kind::Heartbeat.api()) => Some(&self.heartbeat),
            k if k == Some(Kind::ApiVersions.api()) => Some(&self.api_versions),
            _ => None,
        }
    }
}

impl Ceiling {
    /// Listen on an ephemeral port of 127.0.0.1 and answer on `threads` threads (they share
    /// the listening socket; each serves the connections it accepted).
    pub(crate) fn start(threads: usize) -> Result<Ceiling, String> {
        let canned = Arc::new(Canned::new()?);
        let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
        listener.set_nonblocking(true).map_err(|e| e.to_string())?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        let stop = Arc::new(AtomicBool::new(false));
        let mut ceiling = Ceiling {
            addr,
            stop: stop.clone(),
            tids: Vec::new(),
            threads: Vec::new(),
        };
        let (tid_tx, tid_rx) = std::sync::mpsc::channel();
        for i in 0..threads.max(1) {
            let listener = listener.try_clone().map_err(|e| e.to_string())?;
            let (canned, stop, tid_tx) = (canned.clone(), stop.clone(), tid_tx.clone());
            let handle = std::thread::Builder::new()
                .name(format!("bench-ceiling-{i}"))
                .spawn(move || {
                    let _ = tid_tx.send(current_tid());
                    if let Err(e) = serve(TcpListener::from_std(listener), &canned, &stop) {
                        eprintln!("bench: ceiling responder: {e}");
                    }
                })
                .map_err(|e| e.to_string())?;
            ceiling.threads.push(handle);
            if let Ok(Some(tid)) = tid_rx.recv() {
                ceiling.tids.push(tid);
            }
        }
        Ok(ceiling)
    }

    /// CPU time each of its threads has run: (thread id, ns) (Linux's schedstat; `None`
    /// elsewhere).
    pub(crate) fn threads_cpu_ns(&self) -> Option<Vec<(u32, u64)>> {
        if self.tids.len() != self.threads.len() {
            return None;
        }
        let mut threads = Vec::new();
        for &tid in &self.tids {
            let s = std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat")).ok()?;
            threads.push((tid, s.split_whitespace().next()?.parse::<u64>().ok()?));
        }
        Some(threads)
    }
}

impl Drop for Ceiling {
    fn drop(&mut self) {
        self.stop.store(true, Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// The calling thread's kernel id (from `/proc/thread-self`, a link to `PID/task/TID`).
fn current_tid() -> Option<u32> {
    let link = std::fs::read_link("/proc/thread-self").ok()?;
    link.file_name()?.to_str()?.parse().ok()
}

/// One responder thread: accept, read, answer, until `stop`.
fn serve(mut listener: TcpListener, canned: &Canned, stop: &AtomicBool) -> std::io::Result<()> {
    let mut poll = Poll::new()?;
    poll.registry()
        .register(&mut listener, LISTENER, Interest::READABLE)?;
    let mut conns: Vec<Option<Conn>> = Vec::new();
    let mut free: Vec<usize> = Vec::new();
    let mut events = Events::with_capacity(1024);
    let mut scratch = vec![0u8; READ_CHUNK];
    while !stop.load(Relaxed) {
        match poll.poll(&mut events, Some(TICK)) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
        for ev in &events {
            if ev.token() == LISTENER {
                // Edge-triggered: take every pending connection (other threads race for them).
                loop {
                    let (mut sock, _) = match listener.accept() {
                        Ok(a) => a,
                        Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                        Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                        Err(_) => break,
                    };
                    let _ = sock.set_nodelay(true);
                    let i = free.pop().unwrap_or_else(|| {
                        conns.push(None);
                        conns.len() - 1
                    });
                    let interest = Interest::READABLE | Interest::WRITABLE;
                    if poll
                        .registry()
                        .register(&mut sock, Token(i), interest)
                        .is_err()
                    {
                        free.push(i);
                        continue;
                    }
                    conns[i] = Some(Conn {
                        sock,
                        rbuf: Vec::new(),
                        wbuf: Vec::new(),
                        wpos: 0,
                    });
                }
                continue;
            }
            let i = ev.token().0;
            let Some(c) = conns.get_mut(i).and_then(Option::as_mut) else {
                continue;
            };
            if !c.on_ready(ev.is_readable(), &mut scratch, canned) {
                let _ = poll.registry().deregister(&mut c.sock);
                conns[i] = None;
                free.push(i);
            }
        }
    }
    Ok(())
}

/// One connection: bytes of an incomplete frame, answers not yet written.
struct Conn {
    sock: TcpStream,
    rbuf: Vec<u8>,
    wbuf: Vec<u8>,
    wpos: usize,
}

impl Conn {
    /// Read what arrived, answer every complete frame, write. `false`: close.
    fn on_ready(&mut self, readable: bool, scratch: &mut [u8], canned: &Canned) -> bool {
        if readable {
            loop {
                match self.sock.read(scratch) {
                    Ok(0) => return false,
                    Ok(n) => {
                        if !self.answer(&scratch[..n], canned) {
                            return false;
                        }
                        // A short read has drained the socket (edge-triggered epoll reports
                        // the next arrival): no second read just to see WouldBlock.
                        if n < scratch.len() {
                            break;
                        }
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == ErrorKind::Interrupted => {}
                    Err(_) => return false,
                }
            }
        }
        self.flush()
    }

    /// Queue the canned answer of every complete frame in what was kept plus `data`; keep the
    /// rest. `false` for a frame the bench does not send.
    fn answer(&mut self, data: &[u8], canned: &Canned) -> bool {
        let mut kept = std::mem::take(&mut self.rbuf);
        let taken = {
            let whole: &[u8] = if kept.is_empty() {
                data
            } else {
                kept.extend_from_slice(data);
                &kept
            };
            let mut pos = 0;
            while whole.len() - pos >= 4 {
                let len = i32::from_be_bytes([
                    whole[pos],
                    whole[pos + 1],
                    whole[pos + 2],
                    whole[pos + 3],
                ]);
                let Ok(len) = usize::try_from(len) else {
                    return false;
                };
                if !(8..=MAX_FRAME).contains(&len) {
                    return false;
                }
                if whole.len() - pos - 4 < len {
                    break;
                }
                // Request header: api key (2), api version (2), correlation id (4).
                let f = &whole[pos + 4..pos + 4 + len];
                let key = i16::from_be_bytes([f[0], f[1]]);
                let version = i16::from_be_bytes([f[2], f[3]]);
                let Some(answer) = canned.answer(key, version) else {
                    return false;
                };
                let at = self.wbuf.len();
                self.wbuf.extend_from_slice(answer);
                self.wbuf[at + 4..at + 8].copy_from_slice(&f[4..8]);
                pos += 4 + len;
            }
            if kept.is_empty() {
                self.rbuf.extend_from_slice(&data[pos..]);
                return true;
            }
            pos
        };
        kept.drain(..taken);
        self.rbuf = kept;
        true
    }

    /// Write what is queued, as far as the socket takes it (the rest waits for writability).
    fn flush(&mut self) -> bool {
        while self.wpos < self.wbuf.len() {
            match self.sock.write(&self.wbuf[self.wpos..]) {
                Ok(0) => return false,
                Ok(n) => self.wpos += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
        self.wbuf.clear();
        self.wpos = 0;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two pipelined requests, the second split over two reads: both answered in order with
    /// their correlation ids; an unknown key closes.
    #[test]
    fn answers_every_complete_frame_with_its_correlation_id() {
        let canned = Canned::new().unwrap();
        let (key, version) = Kind::Heartbeat.api();
        let request = |corr: i32| {
            let mut f = 12i32.to_be_bytes().to_vec();
            f.extend_from_slice(&key.to_be_bytes());
            f.extend_from_slice(&version.to_be_bytes());
            f.extend_from_slice(&corr.to_be_bytes());
            f.extend_from_slice(&[0, 0, 0, 0]);
            f
        };
        let mut bytes = request(7);
        bytes.extend(request(8));
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(std_listener.local_addr().unwrap()).unwrap();
        let (server, _) = std_listener.accept().unwrap();
        let mut c = Conn {
            sock: TcpStream::from_std(server),
            rbuf: Vec::new(),
            wbuf: Vec::new(),
            wpos: 0,
        };
        assert!(c.answer(&bytes[..20], &canned));
        assert!(c.answer(&bytes[20..], &canned));
        assert!(c.rbuf.is_empty());
        let n = canned.heartbeat.len();
        assert_eq!(c.wbuf.len(), 2 * n);
        let (corr_a, body_a) = wire::split_response(key, version, &c.wbuf[4..n]).unwrap();
        let (corr_b, _) = wire::split_response(key, version, &c.wbuf[n + 4..]).unwrap();
        assert_eq!((corr_a, corr_b), (7, 8));
        let r = super::super::client::decode_heartbeat(body_a, version).unwrap();
        assert_eq!((r.error_code, r.member_epoch), (0, 3));
        assert!(r.active_tasks.is_none());
        let mut other = request(9);
        other[4..6].copy_from_slice(&3i16.to_be_bytes());
        assert!(!c.answer(&other, &canned));
        drop(client);
    }
}
