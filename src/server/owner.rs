//! The owner of the core: the only place the coordinator and the topic registry live. It runs on
//! a thread of its own (a current-thread runtime), so it never competes with connection tasks for
//! a worker. It takes batches of requests, runs them through the pure
//! [`State::handle`](super::kafka::State::handle), hands the log entries with the replies that
//! depend on them to the commit path, fires the coordinator's timers when they are due and keeps
//! the live view for the web side.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot, watch};
use tracing::{debug, error};

use crate::coordinator::classic::RequestToken;
use crate::coordinator::{AssignmentJob, AssignmentResult};
use crate::records::Record;

use super::commit::{CommitGone, Committer};
use super::kafka::State;
use super::peer::Peer;
use super::storage::log::LogEntry;
use super::web::history::History;
use super::web::phases;
use super::web::{LiveSnapshot, LiveView};
use super::wire::{Header, Req, RequestKind, Resp};
use super::{Shared, now_ms};

/// Requests of one connection for the owner.
pub struct Job {
    /// Answered together, in this order.
    pub items: Vec<(Header, Req)>,
    /// The connection's sender (address and principal).
    pub peer: Arc<Peer>,
    pub reply: oneshot::Sender<Reply>,
}

/// The answer to a [`Job`]: its requests come back too, so that they are dropped (freed) by the
/// connection task rather than by the owner.
pub struct Reply {
    pub items: Vec<(Header, Req)>,
    pub resps: Vec<super::wire::Resp>,
}

/// A job with deferred answers (JoinGroup / SyncGroup) still open: it is released, all its
/// responses in order, once the last one arrives.
struct Parked {
    reply: oneshot::Sender<Reply>,
    items: Vec<(Header, Req)>,
    resps: Vec<Resp>,
    open: usize,
}

/// Jobs waiting for deferred answers, and which slot each token fills.
#[derive(Default)]
pub struct ParkedJobs {
    next: u64,
    jobs: HashMap<u64, Parked>,
    slots: HashMap<RequestToken, (u64, usize)>,
}

impl ParkedJobs {
    /// Park `job` if one of its responses is deferred; otherwise hand it back.
    fn park(
        &mut self,
        reply: oneshot::Sender<Reply>,
        items: Vec<(Header, Req)>,
        resps: Vec<Resp>,
    ) -> Option<(oneshot::Sender<Reply>, Reply)> {
        let tokens: Vec<(usize, RequestToken)> = resps
            .iter()
            .enumerate()
            .filter_map(|(i, r)| match r {
                Resp::Deferred(t) => Some((i, *t)),
                _ => None,
            })
            .collect();
        if tokens.is_empty() {
            return Some((reply, Reply { items, resps }));
        }
        self.next += 1;
        let id = self.next;
        for &(i, t) in &tokens {
            self.slots.insert(t, (id, i));
        }
        let open = tokens.len();
        self.jobs.insert(
            id,
            Parked {
                reply,
                items,
                resps,
                open,
            },
        );
        None
    }

    /// Fill a deferred slot; the job, once complete, is returned for release.
    fn answer(
        &mut self,
        token: RequestToken,
        resp: Resp,
    ) -> Option<(oneshot::Sender<Reply>, Reply)> {
        let (id, i) = self.slots.remove(&token)?;
        let p = self.jobs.get_mut(&id)?;
        p.resps[i] = resp;
        p.open -= 1;
        if p.open > 0 {
            return None;
        }
        let p = self.jobs.remove(&id)?;
        Some((
            p.reply,
            Reply {
                items: p.items,
                resps: p.resps,
            },
        ))
    }

    /// Drop the jobs whose connection is gone; returns their open tokens.
    fn drop_closed(&mut self) -> Vec<RequestToken> {
        if self.jobs.is_empty() {
            return Vec::new();
        }
        self.jobs.retain(|_, p| !p.reply.is_closed());
        let jobs = &self.jobs;
        let mut gone = Vec::new();
        self.slots.retain(|t, (id, _)| {
            let keep = jobs.contains_key(id);
            if !keep {
                gone.push(*t);
            }
            keep
        });
        gone
    }

    /// Jobs waiting.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.jobs.len()
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }
}

/// Runs offloaded target assignments on a thread of its own and hands the results back to the
/// owner, which applies them as records (`Coordinator::complete_assignment`): a large
/// assignment never holds up the other groups' heartbeats.
pub struct AssignmentWorker {
    jobs: std::sync::mpsc::Sender<AssignmentJob>,
    results: mpsc::UnboundedReceiver<AssignmentResult>,
}

impl AssignmentWorker {
    /// Start the worker thread; it ends when the owner (the job sender) is dropped.
    pub fn spawn() -> std::io::Result<AssignmentWorker> {
        let (jobs, job_rx) = std::sync::mpsc::channel::<AssignmentJob>();
        let (result_tx, results) = mpsc::unbounded_channel();
        std::thread::Builder::new()
            .name("groupcoord-assign".into())
            .spawn(move || {
                while let Ok(job) = job_rx.recv() {
                    if result_tx.send(job.run()).is_err() {
                        break;
                    }
                }
            })?;
        Ok(AssignmentWorker { jobs, results })
    }

    fn submit(&self, jobs: Vec<AssignmentJob>) {
        for job in jobs {
            // The worker only stops when the owner does.
            let _ = self.jobs.send(job);
        }
    }
}

/// The global registries (topics, ACLs, group configs, SCRAM) between owners, when there are
/// several (docs/sharding.md, "Global entries"): owner 0 holds them and logs them; the others
/// apply copies.
pub(crate) enum RegistryMsg {
    /// To owner 0: registry entries another owner wrote (a streams group's internal topics),
    /// to be applied, logged in owner 0's log and broadcast.
    Write(Vec<LogEntry>),
    /// To the other owners: entries durable in owner 0's log, to apply; `done` is told once
    /// they are applied (owner 0's commit thread waits for it before releasing the replies).
    Apply(Arc<Vec<LogEntry>>, std::sync::mpsc::Sender<()>),
}

/// Jobs taken per batch at most.
const MAX_BATCH: usize = 1024;
/// The live view is published at most this often.
const PUBLISH_EVERY: Duration = Duration::from_millis(100);

/// The owner task and everything it owns.
pub struct Owner {
    /// Which owner this is (0 holds the global registries).
    pub index: usize,
    pub state: State,
    pub jobs: mpsc::Receiver<Job>,
    pub live_requests: mpsc::Receiver<oneshot::Sender<Arc<LiveSnapshot>>>,
    pub committer: Committer,
    pub shared: Arc<Shared>,
    pub shutdown: watch::Receiver<bool>,
    /// How long to keep looking for new work after a batch before parking.
    pub spin: Duration,
    /// Test fault injection (see [`super::ServeOptions::panic_owner_on_client_id`]).
    pub panic_on_client_id: Option<String>,
    /// Jobs holding a JoinGroup / SyncGroup not answered yet.
    pub parked: ParkedJobs,
    /// Where large assignments are computed.
    pub assignments: AssignmentWorker,
    /// Registry messages for this owner (`None` with one owner).
    pub registry: Option<mpsc::UnboundedReceiver<RegistryMsg>>,
    /// Owner 0's registry queue, on the other owners: where their registry entries go.
    pub to_registry: Option<mpsc::UnboundedSender<RegistryMsg>>,
}

impl Owner {
    /// Run on a thread of its own. The thread ends on shutdown, when the commit path failed, or
    /// by panicking; the server watches for all three.
    pub fn spawn(self, name: String) -> std::io::Result<JoinHandle<()>> {
        // Built here, so that a failure (out of file descriptors) fails start-up rather than
        // the thread.
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        std::thread::Builder::new().name(name).spawn(move || {
            if rt.block_on(self.run()).is_err() {
                error!("commit thread gone; owner stopped");
            }
        })
    }

    /// The loop. Dropping `self` at the end closes the commit channel: the commit thread drains,
    /// fsyncs and ends.
    pub async fn run(mut self) -> Result<(), CommitGone> {
        let mut live = LiveView::new();
        let mut jobs = Vec::with_capacity(MAX_BATCH);
        let mut last_publish = Instant::now();
        loop {
            // Busy: take what arrived while the last batch ran, spinning (and yielding the core)
            // up to `spin` before parking: under load a park/unpark round trip through the
            // runtime costs more than the wait, and it adds to every heartbeat's latency. Timers
            // and the live view are served here too, so a busy owner never starves them.
            let spin_until = Instant::now() + self.spin;
            loop {
                match self.jobs.try_recv() {
                    Ok(job) => {
                        jobs.push(job);
                        while jobs.len() < MAX_BATCH {
                            match self.jobs.try_recv() {
                                Ok(j) => jobs.push(j),
                                Err(_) => break,
                            }
                        }
                        break;
                    }
                    Err(mpsc::error::TryRecvError::Empty)
                        if Instant::now() < spin_until
                            && !self.shutdown.has_changed().unwrap_or(true) =>
                    {
                        std::thread::yield_now();
                    }
                    Err(_) => break,
                }
            }
            if !jobs.is_empty() {
                self.process(&mut jobs, &mut live)?;
                if self
                    .state
                    .coord
                    .next_deadline()
                    .is_some_and(|t| t <= now_ms())
                {
                    self.fire(&mut live)?;
                }
                while let Ok(result) = self.assignments.results.try_recv() {
                    self.complete_assignment(result, &mut live)?;
                }
                while let Some(msg) = self.registry.as_mut().and_then(|r| r.try_recv().ok()) {
                    self.registry_msg(msg, &mut live)?;
                }
                while let Ok(asker) = self.live_requests.try_recv() {
                    let _ = asker.send(self.publish(&mut live, &mut last_publish));
                }
                if self.should_publish(&live) && last_publish.elapsed() >= PUBLISH_EVERY {
                    self.publish(&mut live, &mut last_publish);
                }
                if *self.shutdown.borrow() {
                    break;
                }
                continue;
            }
            let timer = self.state.coord.next_deadline();
            let wake = timer.map(|t| {
                let d = (t.0 - now_ms().0).max(0) as u64;
                tokio::time::Instant::now() + Duration::from_millis(d)
            });
            let publish_at = self
                .should_publish(&live)
                .then(|| tokio::time::Instant::from_std(last_publish + PUBLISH_EVERY));
            tokio::select! {
                n = self.jobs.recv_many(&mut jobs, MAX_BATCH) => {
                    if n == 0 { break; }
                    self.process(&mut jobs, &mut live)?;
                }
                Some(result) = self.assignments.results.recv() => {
                    self.complete_assignment(result, &mut live)?;
                }
                Some(asker) = self.live_requests.recv() => {
                    let _ = asker.send(self.publish(&mut live, &mut last_publish));
                }
                Some(msg) = async { self.registry.as_mut()?.recv().await }, if self.registry.is_some() => {
                    self.registry_msg(msg, &mut live)?;
                }
                _ = async { tokio::time::sleep_until(wake.unwrap()).await }, if wake.is_some() => {
                    self.fire(&mut live)?;
                }
                _ = async { tokio::time::sleep_until(publish_at.unwrap()).await }, if publish_at.is_some() => {
                    self.publish(&mut live, &mut last_publish);
                }
                _ = self.shutdown.changed() => break,
            }
        }
        // Queued requests are dropped: their connections are closing.
        debug!("owner stopped");
        Ok(())
    }

    /// Run a batch of jobs through the pure handler and hand the result to the commit path.
    fn process(&mut self, jobs: &mut Vec<Job>, live: &mut LiveView) -> Result<(), CommitGone> {
        let now = now_ms();
        let mut entries = Vec::new();
        let mut replies = Vec::with_capacity(jobs.len());
        let shared = self.shared.clone();
        let mut history = watched_history(&shared);
        // Replies that read only durable state go out now instead of behind this batch's fsync.
        let mut free = Vec::new();
        for job in jobs.drain(..) {
            let before = entries.len();
            let mut resps = Vec::with_capacity(job.items.len());
            for (header, req) in &job.items {
                if let Some(id) = &self.panic_on_client_id
                    && header.client_id.as_ref() == Some(id)
                {
                    panic!("fault injection: request from client id `{id}`");
                }
                if let Some(group_id) = super::web::history::member_group(req) {
                    // Member requests change what the view shows without a record (session
                    // deadlines, task offsets, a classic group's join phase).
                    live.group_changed(group_id);
                }
                let h = self.state.handle(now, header, &job.peer, req);
                if let Some(group_id) = phases::rebalance_group(req) {
                    phases::observe(&shared.phases, &self.state.coord, group_id, now.0);
                }
                if let Some(history) = history.as_mut() {
                    history.handled(now.0, header, req, &h);
                }
                forward_globals(self.to_registry.as_ref(), h.entries, &mut entries);
                resps.push(h.resp);
            }
            let wrote = entries.len() > before;
            if wrote {
                self.committer.note_writes(&entries[before..]);
            }
            let reads_durable = !wrote
                && job.items.iter().all(|(_, req)| {
                    heartbeat_group(req).is_some_and(|g| self.committer.is_durable(g))
                });
            if let Some(r) = self.parked.park(job.reply, job.items, resps) {
                if reads_durable {
                    free.push(r);
                } else {
                    replies.push(r);
                }
            }
        }
        for (tx, r) in free {
            let _ = tx.send(r);
        }
        drop(history);
        self.route_answers(&mut replies);
        let counters = std::mem::take(&mut self.state.counters);
        let metrics = &self.shared.metrics;
        metrics.heartbeats.fetch_add(counters.heartbeats, Relaxed);
        metrics.requests.fetch_add(counters.requests, Relaxed);
        self.note(&entries, live);
        self.assignments
            .submit(self.state.coord.take_assignment_jobs());
        self.committer.submit(entries, replies)
    }

    /// Apply an assignment the worker computed.
    fn complete_assignment(
        &mut self,
        result: AssignmentResult,
        live: &mut LiveView,
    ) -> Result<(), CommitGone> {
        let mut entries = Vec::new();
        let written = self.state.complete_assignment(now_ms(), result);
        forward_globals(self.to_registry.as_ref(), written, &mut entries);
        if entries.is_empty() {
            return Ok(());
        }
        self.note(&entries, live);
        self.committer.submit(entries, Vec::new())
    }

    fn fire(&mut self, live: &mut LiveView) -> Result<(), CommitGone> {
        let now = now_ms();
        let mut entries = Vec::new();
        let mut fired = Vec::new();
        while let Some(key) = self.state.fire_next_timer(now, &mut fired) {
            // A classic timer may end the join phase, void a sync phase or expire a member.
            if let Some(group_id) = key.classic_group()
                && phases::observe(&self.shared.phases, &self.state.coord, group_id, now.0)
            {
                live.group_changed(group_id);
            }
        }
        forward_globals(self.to_registry.as_ref(), fired, &mut entries);
        if let Some(mut history) = watched_history(&self.shared) {
            for e in &entries {
                if let LogEntry::Records(rs) = e {
                    history.records(now.0, "timer", rs);
                }
            }
        }
        // A timer may complete deferred requests (the join phase ends at the rebalance timeout).
        let mut replies = Vec::new();
        self.route_answers(&mut replies);
        if entries.is_empty() && replies.is_empty() {
            return Ok(());
        }
        self.note(&entries, live);
        self.committer.submit(entries, replies)
    }

    /// A registry message (several owners only).
    fn registry_msg(&mut self, msg: RegistryMsg, live: &mut LiveView) -> Result<(), CommitGone> {
        match msg {
            RegistryMsg::Write(entries) => {
                // Owner 0: keep what is still news (another owner's copy may be behind).
                let entries: Vec<LogEntry> = entries
                    .into_iter()
                    .filter_map(|e| self.state.registry_news(e))
                    .collect();
                for e in &entries {
                    if let Err(e) = super::storage::apply_entry(&mut self.state, e) {
                        error!("registry entry from another owner not applied: {e}");
                    }
                }
                if entries.is_empty() {
                    return Ok(());
                }
                self.note(&entries, live);
                self.committer.submit(entries, Vec::new())
            }
            RegistryMsg::Apply(entries, done) => {
                for e in entries.iter() {
                    if let Err(e) = super::storage::apply_entry(&mut self.state, e) {
                        error!("registry entry from owner 0 not applied: {e}");
                    }
                }
                self.note(&entries, live);
                let _ = done.send(());
                Ok(())
            }
        }
    }

    /// Give every answer the core completed to its parked job; complete jobs join `replies`,
    /// released by the commit path after the records they depend on are durable. Jobs whose
    /// connection closed are dropped and their tokens forgotten.
    fn route_answers(&mut self, replies: &mut Vec<(oneshot::Sender<Reply>, Reply)>) {
        for (token, resp) in self.state.take_answers() {
            super::web::history::answered(&self.shared.history, &self.shared.watch, token, &resp);
            replies.extend(self.parked.answer(token, resp));
        }
        for token in self.parked.drop_closed() {
            self.state.forget(token);
        }
    }

    /// Count rebalances and tell the live view which groups changed.
    fn note(&self, entries: &[LogEntry], live: &mut LiveView) {
        let mut rebalances = 0;
        for e in entries {
            if let LogEntry::Records(rs) = e {
                rebalances += rs
                    .iter()
                    .filter(|r| matches!(r, Record::GroupMetadata { value: Some(_), .. }))
                    .count() as u64;
            }
            live.note(e);
        }
        self.shared
            .metrics
            .rebalances
            .fetch_add(rebalances, Relaxed);
    }

    /// Something changed and someone is watching (an SSE subscriber).
    fn should_publish(&self, live: &LiveView) -> bool {
        live.has_changes() && self.shared.live.receiver_count() > 0
    }

    fn publish(&self, live: &mut LiveView, last: &mut Instant) -> Arc<LiveSnapshot> {
        let snap = live.snapshot(&self.state, &self.shared.metrics);
        if self.shared.live_parts.len() > 1 {
            // Several owners: the published view is the merge of every owner's last part.
            let merged = {
                let mut parts = Vec::with_capacity(self.shared.live_parts.len());
                for (i, p) in self.shared.live_parts.iter().enumerate() {
                    let mut p = p.lock().unwrap_or_else(|e| e.into_inner());
                    if i == self.index {
                        *p = snap.clone();
                    }
                    parts.push(p.clone());
                }
                super::merge_live(&parts)
            };
            self.shared.live.send_replace(merged);
        } else {
            self.shared.live.send_replace(snap.clone());
        }
        *last = Instant::now();
        snap
    }
}

/// Moves `written` to `entries`, except, on an owner other than 0 (`to_registry` set), the
/// registry entries: those go to owner 0, which logs them and gives them to every owner.
fn forward_globals(
    to_registry: Option<&mpsc::UnboundedSender<RegistryMsg>>,
    written: Vec<LogEntry>,
    entries: &mut Vec<LogEntry>,
) {
    let Some(to) = to_registry else {
        entries.extend(written);
        return;
    };
    let mut globals = Vec::new();
    for e in written {
        match e {
            LogEntry::Records(_) => entries.push(e),
            _ => globals.push(e),
        }
    }
    if !globals.is_empty() {
        let _ = to.send(RegistryMsg::Write(globals));
    }
}

/// The live view's history, locked, while someone watches (else it is dropped).
fn watched_history(shared: &Shared) -> Option<std::sync::MutexGuard<'_, History>> {
    let now = now_ms().0;
    if !shared.watch.watched(now) {
        if shared.watch.stop_recording() {
            let mut h = shared.history.lock().unwrap_or_else(|e| e.into_inner());
            h.stop();
        }
        return None;
    }
    let mut h = shared.history.lock().unwrap_or_else(|e| e.into_inner());
    h.recording(now);
    Some(h)
}

/// The group a heartbeat (streams, classic, consumer) is about: its response reflects that
/// group's state only (and the global registries).
fn heartbeat_group(req: &Req) -> Option<&str> {
    match req {
        Req::Heartbeat(r) => Some(&r.group_id),
        Req::Kafka(RequestKind::Heartbeat(r)) => Some(r.group_id.0.as_str()),
        Req::Kafka(RequestKind::ConsumerGroupHeartbeat(r)) => Some(r.group_id.0.as_str()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::wire::ResponseKind;
    use kafka_protocol::messages::{HeartbeatResponse, JoinGroupRequest, SyncGroupRequest};

    fn header(key: i16) -> Header {
        Header {
            api_key: key,
            api_version: 5,
            correlation_id: 1,
            client_id: None,
        }
    }

    fn answer() -> Resp {
        Resp::Kafka(ResponseKind::Heartbeat(HeartbeatResponse::default()))
    }

    /// A job with two deferred answers and an immediate one is released once, when its last
    /// answer arrives, with its responses in request order.
    #[test]
    fn a_parked_job_is_released_when_its_last_answer_arrives() {
        let mut parked = ParkedJobs::default();
        let (tx, mut rx) = oneshot::channel();
        let items = vec![
            (
                header(11),
                Req::Kafka(RequestKind::JoinGroup(JoinGroupRequest::default())),
            ),
            (
                header(12),
                Req::Kafka(RequestKind::Heartbeat(Default::default())),
            ),
            (
                header(14),
                Req::Kafka(RequestKind::SyncGroup(SyncGroupRequest::default())),
            ),
        ];
        let resps = vec![
            Resp::Deferred(RequestToken(1)),
            answer(),
            Resp::Deferred(RequestToken(2)),
        ];
        assert!(parked.park(tx, items, resps).is_none());
        assert_eq!(parked.len(), 1);
        assert!(parked.answer(RequestToken(2), answer()).is_none());
        assert!(
            parked.answer(RequestToken(7), answer()).is_none(),
            "unknown token"
        );
        let (tx, reply) = parked.answer(RequestToken(1), answer()).expect("released");
        assert!(reply.resps.iter().all(|r| !matches!(r, Resp::Deferred(_))));
        assert_eq!(reply.items.len(), 3);
        assert!(parked.is_empty());
        tx.send(reply).ok().unwrap();
        assert!(rx.try_recv().is_ok());
    }

    /// A job without deferred answers is handed back at once; a parked job whose connection is
    /// gone is dropped and its open tokens are returned (to be forgotten by the state).
    #[test]
    fn jobs_of_closed_connections_are_dropped() {
        let mut parked = ParkedJobs::default();
        let (tx, _rx) = oneshot::channel();
        let immediate = parked.park(tx, vec![], vec![answer()]);
        assert!(immediate.is_some());
        let (tx, rx) = oneshot::channel();
        let items = vec![(
            header(11),
            Req::Kafka(RequestKind::JoinGroup(JoinGroupRequest::default())),
        )];
        assert!(
            parked
                .park(tx, items, vec![Resp::Deferred(RequestToken(3))])
                .is_none()
        );
        assert!(
            parked.drop_closed().is_empty(),
            "the connection is still open"
        );
        drop(rx);
        assert_eq!(parked.drop_closed(), vec![RequestToken(3)]);
        assert!(parked.is_empty());
        assert!(parked.answer(RequestToken(3), answer()).is_none());
    }
}
