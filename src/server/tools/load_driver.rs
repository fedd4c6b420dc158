//! The engine of `groupcoord bench load`: one OS thread drives many connections with
//! non-blocking sockets on one poller (epoll), instead of a task per connection. On a 2-core
//! machine the generator competes with the server for the same cores, so its own cost per
//! request caps every ratio it reports: here a wake-up serves every connection that became
//! readable, each read takes every response that arrived, and each connection's next requests go
//! out in one write. Steady requests are copies of a cached frame with a new correlation id, and
//! a steady answer identical to the member's previous one is not decoded again. A request costs
//! the generator one write and one read (a read shorter than the buffer has drained the socket)
//! plus its share of a poller wake-up.

use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};

use super::bench::{Kind, Slot, api_versions_body, heartbeat};
use super::client::{decode_heartbeat, heartbeat_body, raw_frame};
use crate::protocol::StreamsGroupHeartbeatRequest;
use crate::server::wire;

/// How long a load may run past its end while waiting for its last responses.
const DRAIN: Duration = Duration::from_secs(60);
/// Bytes taken from a socket per read call.
const READ_CHUNK: usize = 64 * 1024;
/// The in-flight entry of a leave request (its response is not counted).
const LEAVE: usize = usize::MAX;

/// The generator threads' common start: every thread connects all its sockets first (a broker
/// with a short accept backlog takes seconds to accept 1,000 connections), then the warm-up
/// starts for all of them at once.
pub(crate) struct Clock {
    pub(crate) connected: std::sync::Barrier,
    pub(crate) start: std::sync::OnceLock<Instant>,
}

/// When a load starts, is measured and ends, and what it sends.
#[derive(Clone, Copy)]
pub(crate) struct Schedule {
    pub(crate) kind: Kind,
    pub(crate) start: Instant,
    pub(crate) measure_from: Instant,
    pub(crate) end: Instant,
}

/// What one thread measured.
#[derive(Default)]
pub(crate) struct Measured {
    pub(crate) done: u64,
    pub(crate) errors: u64,
    pub(crate) latencies_us: Vec<u32>,
    /// Responses received in each second since the start (warm-up included): a stall shows as
    /// a run of small counts.
    pub(crate) per_second: Vec<u64>,
    /// CPU time of the generator's threads between the start and the end of the measurement.
    pub(crate) cpu_ns: u64,
}

impl Measured {
    pub(crate) fn merge(&mut self, other: Measured) {
        self.cpu_ns += other.cpu_ns;
        self.done += other.done;
        self.errors += other.errors;
        self.latencies_us.extend(other.latencies_us);
        if self.per_second.len() < other.per_second.len() {
            self.per_second.resize(other.per_second.len(), 0);
        }
        for (a, b) in self.per_second.iter_mut().zip(other.per_second) {
            *a += b;
        }
    }
}

#[derive(PartialEq)]
enum Phase {
    Running,
    /// Heartbeat loads: the members' leave requests are out.
    Leaving,
    Done,
}

/// One connection and the members it carries.
struct Conn {
    sock: TcpStream,
    slots: Vec<Slot>,
    /// (correlation id, slot index or [`LEAVE`], sent at); responses come back in order.
    inflight: VecDeque<(i32, usize, Instant)>,
    /// Received bytes not yet taken as frames.
    rbuf: Vec<u8>,
    /// Per slot, the body of its last steady heartbeat answer (no error, no task lists): the
    /// same bytes again decode to the same thing, so they are compared, not decoded.
    steady_answers: Vec<Vec<u8>>,
    /// Requests not yet written, from `wpos`.
    wbuf: Vec<u8>,
    wpos: usize,
    corr: i32,
    phase: Phase,
}

/// Connect, wait for the other threads to have connected too, then drive `conns` (the members of
/// each connection) for `warmup` + `duration` and let heartbeat members leave, on the calling
/// thread.
pub(crate) fn drive(
    addr: SocketAddr,
    conns: Vec<Vec<Slot>>,
    kind: Kind,
    (warmup, duration): (Duration, Duration),
    clock: &Clock,
) -> Result<Measured, String> {
    let connected = connect(addr, conns);
    // Every thread reaches the barrier, connected or not, so that none waits forever.
    clock.connected.wait();
    let (mut poll, mut open) = connected?;
    let start = *clock.start.get_or_init(Instant::now);
    let s = Schedule {
        kind,
        start,
        measure_from: start + warmup,
        end: start + warmup + duration,
    };
    run(&mut poll, &mut open, s)
}

fn connect(addr: SocketAddr, conns: Vec<Vec<Slot>>) -> Result<(Poll, Vec<Conn>), String> {
    let poll = Poll::new().map_err(|e| e.to_string())?;
    let mut open = Vec::with_capacity(conns.len());
    for (i, slots) in conns.into_iter().enumerate() {
        let std = std::net::TcpStream::connect(addr).map_err(|e| format!("connect: {e}"))?;
        std.set_nodelay(true).ok();
        std.set_nonblocking(true).map_err(|e| e.to_string())?;
        let mut sock = TcpStream::from_std(std);
        poll.registry()
            .register(&mut sock, Token(i), Interest::READABLE | Interest::WRITABLE)
            .map_err(|e| e.to_string())?;
        open.push(Conn {
            sock,
            steady_answers: vec![Vec::new(); slots.len()],
            slots,
            inflight: VecDeque::new(),
            rbuf: Vec::new(),
            wbuf: Vec::new(),
            wpos: 0,
            corr: 0,
            phase: Phase::Running,
        });
    }
    Ok((poll, open))
}

fn run(poll: &mut Poll, open: &mut [Conn], s: Schedule) -> Result<Measured, String> {
    let api_versions = api_versions_body()?;
    let mut m = Measured::default();
    let now = Instant::now();
    for c in open.iter_mut() {
        for i in 0..c.slots.len() {
            c.send(i, s.kind, &api_versions, now)?;
        }
        c.flush()?;
    }
    let mut events = Events::with_capacity(1024);
    let mut scratch = vec![0u8; READ_CHUNK];
    let mut running = open.len();
    let mut cpu_from = None;
    let mut cpu_to = None;
    while running > 0 {
        let now = Instant::now();
        if cpu_from.is_none() && now >= s.measure_from {
            cpu_from = thread_cpu_ns();
        }
        if cpu_to.is_none() && now >= s.end {
            cpu_to = thread_cpu_ns();
        }
        if Instant::now() > s.end + DRAIN {
            return Err(format!(
                "{running} connections still waiting for responses {} s after the end",
                DRAIN.as_secs()
            ));
        }
        match poll.poll(&mut events, Some(Duration::from_millis(100))) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.to_string()),
        }
        for ev in &events {
            let c = &mut open[ev.token().0];
            if c.phase == Phase::Done {
                continue;
            }
            if ev.is_readable() {
                c.receive(&mut scratch)?;
                c.take_responses(&s, &api_versions, &mut m)?;
            }
            c.flush()?;
            if c.phase == Phase::Done {
                running -= 1;
                let _ = poll.registry().deregister(&mut c.sock);
            }
        }
    }
    if let (Some(a), Some(b)) = (cpu_from, cpu_to) {
        m.cpu_ns = b.saturating_sub(a);
    }
    Ok(m)
}

/// Nanoseconds the calling thread has run on a CPU (Linux's schedstat; `None` elsewhere).
fn thread_cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

/// CPU time of every live thread of process `pid`: (thread id, nanoseconds it has run).
pub(crate) fn process_threads_cpu_ns(pid: u32) -> Option<Vec<(u32, u64)>> {
    let mut threads = Vec::new();
    for t in std::fs::read_dir(format!("/proc/{pid}/task")).ok()? {
        let Ok(t) = t else { continue };
        let Some(tid) = t.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if let Ok(s) = std::fs::read_to_string(t.path().join("schedstat"))
            && let Some(ns) = s
                .split_whitespace()
                .next()
                .and_then(|n| n.parse::<u64>().ok())
        {
            threads.push((tid, ns));
        }
    }
    Some(threads)
}

/// CPU time the threads ran between two samples of [`process_threads_cpu_ns`], thread by thread:
/// a thread that started in between counts whole, one that ended in between is missing from the
/// second sample and adds nothing (an undercount of its last moments; summing whole processes
/// instead subtracted its entire earlier CPU time, which could make a window's CPU time zero when
/// an idle worker thread of an earlier load exited).
pub(crate) fn cpu_ns_between(from: &[(u32, u64)], to: &[(u32, u64)]) -> u64 {
    to.iter()
        .map(|(tid, ns)| {
            let before = from.iter().find(|(t, _)| t == tid).map_or(0, |(_, n)| *n);
            ns.saturating_sub(before)
        })
        .sum()
}

impl Conn {
    /// Queue slot `i`'s next request.
    fn send(
        &mut self,
        i: usize,
        kind: Kind,
        api_versions: &[u8],
        now: Instant,
    ) -> Result<(), String> {
        self.corr = self.corr.wrapping_add(1);
        let corr = self.corr;
        let s = &mut self.slots[i];
        let (key, version) = kind.api();
        let steady = kind == Kind::ApiVersions || (s.epoch > 0 && !s.send_tasks);
        match &s.steady_frame {
            Some((epoch, frame)) if steady && *epoch == s.epoch => {
                let at = self.wbuf.len();
                self.wbuf.extend_from_slice(frame);
                // Frame layout: length (4), api key (2), api version (2), correlation id (4).
                self.wbuf[at + 8..at + 12].copy_from_slice(&corr.to_be_bytes());
            }
            _ => {
                let body = match kind {
                    Kind::Heartbeat => heartbeat_body(&heartbeat(s), version)?,
                    Kind::ApiVersions => api_versions.to_vec(),
                };
                let frame = raw_frame(key, version, corr, Some("bench"), &body)?;
                self.wbuf.extend_from_slice(&frame);
                if steady {
                    s.steady_frame = Some((s.epoch, frame));
                }
            }
        }
        s.send_tasks = false;
        self.inflight.push_back((corr, i, now));
        Ok(())
    }

    /// Read everything the socket has.
    fn receive(&mut self, scratch: &mut [u8]) -> Result<(), String> {
        loop {
            match self.sock.read(scratch) {
                Ok(0) => return Err("the server closed a connection".into()),
                Ok(n) => {
                    self.rbuf.extend_from_slice(&scratch[..n]);
                    // A read shorter than asked has drained the socket; mio's epoll is
                    // edge-triggered, so the next arrival is reported again. Reading on to
                    // see WouldBlock would cost a second syscall per response.
                    if n < scratch.len() {
                        return Ok(());
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e.to_string()),
            }
        }
    }

    /// Write what is queued, as far as the socket takes it.
    fn flush(&mut self) -> Result<(), String> {
        while self.wpos < self.wbuf.len() {
            match self.sock.write(&self.wbuf[self.wpos..]) {
                Ok(0) => return Err("the server closed a connection".into()),
                Ok(n) => self.wpos += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e.to_string()),
            }
        }
        self.wbuf.clear();
        self.wpos = 0;
        Ok(())
    }

    /// Take every complete response received, note it and queue the member's next request.
    fn take_responses(
        &mut self,
        s: &Schedule,
        api_versions: &[u8],
        m: &mut Measured,
    ) -> Result<(), String> {
        let (key, version) = s.kind.api();
        let mut pos = 0;
        let now = Instant::now();
        while self.rbuf.len() - pos >= 4 {
            let len = u32::from_be_bytes([
                self.rbuf[pos],
                self.rbuf[pos + 1],
                self.rbuf[pos + 2],
                self.rbuf[pos + 3],
            ]) as usize;
            if self.rbuf.len() - pos - 4 < len {
                break;
            }
            let frame = &self.rbuf[pos + 4..pos + 4 + len];
            pos += 4 + len;
            let Some((c, i, sent)) = self.inflight.pop_front() else {
                return Err("a response nobody asked for".into());
            };
            let (rc, body) = wire::split_response(key, version, frame)?;
            if rc != c {
                return Err(format!("correlation {rc} != {c}"));
            }
            if i == LEAVE {
                continue;
            }
            let mut error = false;
            if s.kind == Kind::Heartbeat && self.steady_answers[i] != body {
                let r = decode_heartbeat(body, version)?;
                let slot = &mut self.slots[i];
                let known = &mut self.steady_answers[i];
                known.clear();
                if r.error_code != 0 {
                    error = true;
                    slot.epoch = 0;
                    slot.active.clear();
                } else {
                    slot.epoch = r.member_epoch;
                    if let Some(a) = r.active_tasks {
                        slot.active = a;
                        slot.send_tasks = true;
                    } else {
                        known.extend_from_slice(body);
                    }
                }
            }
            let second = now.duration_since(s.start).as_secs() as usize;
            if m.per_second.len() <= second {
                m.per_second.resize(second + 1, 0);
            }
            m.per_second[second] += 1;
            if now >= s.measure_from {
                m.done += 1;
                m.errors += u64::from(error);
                m.latencies_us
                    .push(now.duration_since(sent).as_micros().min(u32::MAX as u128) as u32);
            }
            if now < s.end {
                self.send(i, s.kind, api_versions, now)?;
            }
        }
        self.rbuf.drain(..pos);
        if self.inflight.is_empty() && now >= s.end {
            self.finish(s.kind, now)?;
        }
        Ok(())
    }

    /// All answered after the end: heartbeat members leave (epoch -1), as closing clients do,
    /// so that the next load starts from an empty server instead of members waiting out their
    /// session timeouts; then the connection is done.
    fn finish(&mut self, kind: Kind, now: Instant) -> Result<(), String> {
        if kind != Kind::Heartbeat || self.phase == Phase::Leaving {
            self.phase = Phase::Done;
            return Ok(());
        }
        let (key, version) = kind.api();
        for s in &self.slots {
            self.corr = self.corr.wrapping_add(1);
            let leave = StreamsGroupHeartbeatRequest {
                group_id: s.group.clone(),
                member_id: s.id.clone(),
                member_epoch: -1,
                ..Default::default()
            };
            let body = heartbeat_body(&leave, version)?;
            self.wbuf
                .extend_from_slice(&raw_frame(key, version, self.corr, Some("bench"), &body)?);
            self.inflight.push_back((self.corr, LEAVE, now));
        }
        self.phase = Phase::Leaving;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::cpu_ns_between;

    /// A thread that ended between the samples takes nothing away; one that started counts whole.
    #[test]
    fn cpu_between_samples_is_counted_thread_by_thread() {
        let from = [(1, 1_000), (2, 50_000)];
        let to = [(1, 1_600), (3, 300)];
        assert_eq!(cpu_ns_between(&from, &to), 900);
    }
}
