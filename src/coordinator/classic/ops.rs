//! The classic membership operations and their timers (docs/classic-protocol.md §C2-§C5).
//!
//! The functions follow the shape of Kafka's `GroupMetadataManager` classic paths: an operation
//! validates, changes the group, and then either starts a rebalance (`prepare_rebalance`) or
//! tries to end the join phase (`maybe_complete_join_phase` / `complete_join`).

use crate::util::map::BTreeMap;

use super::group::{ClassicGroup, ClassicMember, ClassicState};
use super::{ClassicReply, Completed, RequestToken};
use crate::config::ClassicConfig;
use crate::coordinator::timers::Timers;
use crate::coordinator::{Coordinator, Outcome, RequestContext, TimerChange, TimerKey};
use crate::error::ErrorCode;
use crate::protocol::classic::{
    HeartbeatRequest, JoinGroupRequest, JoinGroupResponse, JoinProtocol, LeaveGroupRequest,
    LeaveGroupResponse, LeftMember, SyncGroupRequest, SyncGroupResponse,
};
use crate::records::Record;
use crate::types::Millis;

/// JoinGroup v4+ requires a known member id: a dynamic member without one gets
/// MEMBER_ID_REQUIRED and a fresh id to rejoin with (KIP-394).
const JOIN_REQUIRES_KNOWN_MEMBER_ID_VERSION: i16 = 4;
/// JoinGroup v9+ can tell a static leader to skip the assignment (KIP-814).
const JOIN_SKIP_ASSIGNMENT_VERSION: i16 = 9;

pub(super) fn heartbeat_key(group_id: &str, member_id: &str) -> TimerKey {
    TimerKey::ClassicHeartbeat {
        group_id: group_id.to_string(),
        member_id: member_id.to_string(),
    }
}

pub(super) fn join_key(group_id: &str) -> TimerKey {
    TimerKey::ClassicJoin {
        group_id: group_id.to_string(),
    }
}

pub(super) fn sync_key(group_id: &str) -> TimerKey {
    TimerKey::ClassicSync {
        group_id: group_id.to_string(),
    }
}

/// What one operation touches besides the group: the clock, the configs, the timer table, the
/// outbox, and what it produced.
pub(super) struct Step<'a> {
    pub now: Millis,
    pub cfg: &'a ClassicConfig,
    pub timers: &'a mut Timers,
    pub outbox: &'a mut Vec<Completed>,
    pub changes: Vec<TimerChange>,
    pub records: Vec<Record>,
}

impl Step<'_> {
    fn schedule(&mut self, key: TimerKey, after_ms: i64, tag: i32) {
        let deadline = self.now.plus(after_ms.max(0));
        self.changes.push(self.timers.schedule(key, deadline, tag));
    }

    pub(super) fn cancel(&mut self, key: &TimerKey) {
        if let Some(c) = self.timers.cancel(key) {
            self.changes.push(c);
        }
    }

    fn reply_join(&mut self, token: RequestToken, r: JoinGroupResponse) {
        self.outbox.push(Completed {
            token,
            reply: ClassicReply::Join(r),
        });
    }

    fn reply_sync(&mut self, token: RequestToken, r: SyncGroupResponse) {
        self.outbox.push(Completed {
            token,
            reply: ClassicReply::Sync(r),
        });
    }

    /// Write a GroupMetadata record for the group and remember it as its persisted state.
    fn write(&mut self, g: &mut ClassicGroup, assignment: &BTreeMap<String, Vec<u8>>) {
        let value = g.metadata_value(assignment);
        g.persisted = Some(value.clone());
        self.records.push(Record::ClassicGroupMetadata {
            group_id: g.group_id.clone(),
            value: Some(value),
        });
    }

    fn reschedule_heartbeat(&mut self, g: &ClassicGroup, member_id: &str) {
        if let Some(m) = g.members.get(member_id) {
            let timeout = m.session_timeout_ms;
            self.schedule(heartbeat_key(&g.group_id, member_id), timeout as i64, 0);
        }
    }

    /// Answer a member's pending JoinGroup, if any.
    fn complete_join(&mut self, g: &mut ClassicGroup, member_id: &str, r: JoinGroupResponse) {
        if let Some(token) = g
            .members
            .get_mut(member_id)
            .and_then(|m| m.awaiting_join.take())
        {
            self.reply_join(token, r);
        }
    }

    /// Answer a member's pending SyncGroup, if any; true when there was one.
    fn complete_sync(
        &mut self,
        g: &mut ClassicGroup,
        member_id: &str,
        r: SyncGroupResponse,
    ) -> bool {
        match g
            .members
            .get_mut(member_id)
            .and_then(|m| m.awaiting_sync.take())
        {
            Some(token) => {
                self.reply_sync(token, r);
                true
            }
            None => false,
        }
    }
}

/// The successful JoinGroup answer of the current generation.
fn join_ok(g: &ClassicGroup, member_id: &str, with_members: bool, skip: bool) -> JoinGroupResponse {
    JoinGroupResponse {
        error_code: ErrorCode::NONE,
        generation_id: g.generation,
        protocol_type: g.protocol_type.clone(),
        protocol_name: g.protocol_name.clone(),
        leader: g.leader.clone().unwrap_or_default(),
        skip_assignment: skip,
        member_id: member_id.to_string(),
        members: if with_members {
            g.member_list()
        } else {
            Vec::new()
        },
    }
}

/// Kafka's `validateMember`: the instance id (when given) must map to this member id.
fn validate_member(
    g: &ClassicGroup,
    member_id: &str,
    instance_id: Option<&str>,
) -> Result<(), ErrorCode> {
    if let Some(i) = instance_id {
        match g.static_members.get(i) {
            None => return Err(ErrorCode::UNKNOWN_MEMBER_ID),
            Some(existing) if existing != member_id => return Err(ErrorCode::FENCED_INSTANCE_ID),
            Some(_) => {}
        }
    }
    if !g.members.contains_key(member_id) {
        return Err(ErrorCode::UNKNOWN_MEMBER_ID);
    }
    Ok(())
}

/// Protocols with duplicate names dropped (first wins), as Kafka's keyed collection reads them.
fn dedup_protocols(protocols: &[JoinProtocol]) -> Vec<JoinProtocol> {
    // A set of names: a peer may send many protocols, so no quadratic scan.
    let mut seen = crate::util::map::BTreeSet::new();
    protocols
        .iter()
        .filter(|p| seen.insert(p.name.as_str()))
        .cloned()
        .collect()
}

/// A deterministic UUID-shaped id: Kafka draws `UUID.randomUUID()`, the pure core hashes the
/// group, a sequence number and the time (unique within the group; checked by the caller).
fn uuid_like(group_id: &str, seq: u64, now: Millis) -> String {
    let mut input = Vec::with_capacity(group_id.len() + 16);
    input.extend_from_slice(group_id.as_bytes());
    input.extend_from_slice(&seq.to_be_bytes());
    input.extend_from_slice(&now.0.to_be_bytes());
    let h = xxhash_rust::xxh3::xxh3_128(&input);
    let h = (h & !(0xf << 76)) | (0x4 << 76); // version 4
    let h = (h & !(0x3 << 62)) | (0x2 << 62); // variant 10
    let hex = format!("{h:032x}");
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// A step on one group, chosen at run time (the timer kinds).
type StepFn<'a> = dyn Fn(&mut Step, &mut ClassicGroup) + 'a;

/// What a step on one group produced.
pub(super) struct Done<R> {
    pub value: R,
    pub records: Vec<Record>,
    pub timers: Vec<TimerChange>,
}

impl<R> Done<R> {
    fn into_outcome<T>(self, response: T) -> Outcome<T> {
        let mut out = Outcome::new(response);
        out.records = self.records;
        out.timers = self.timers;
        out
    }
}

impl Coordinator {
    /// Run `f` on the classic group `group_id` with a fresh [`Step`]; `None` when there is no
    /// such classic group.
    pub(super) fn on_classic<R>(
        &mut self,
        now: Millis,
        group_id: &str,
        f: impl FnOnce(&mut Step, &mut ClassicGroup) -> R,
    ) -> Option<Done<R>> {
        let Coordinator {
            groups,
            timers,
            config,
            classic,
            ..
        } = self;
        let g = groups.classic_mut(group_id)?;
        let mut step = Step {
            now,
            cfg: &config.classic,
            timers,
            outbox: &mut classic.outbox,
            changes: Vec::new(),
            records: Vec::new(),
        };
        let value = f(&mut step, g);
        Some(Done {
            value,
            records: step.records,
            timers: step.changes,
        })
    }

    /// Queue an answer that needs no group.
    fn answer(&mut self, token: RequestToken, reply: ClassicReply) {
        self.classic.outbox.push(Completed { token, reply });
    }

    /// JoinGroup (§C2). The answer (now or later) arrives through [`Coordinator::take_completed`]
    /// under `token`.
    pub fn classic_join(
        &mut self,
        now: Millis,
        ctx: &RequestContext,
        req: &JoinGroupRequest,
        token: RequestToken,
    ) -> Outcome<()> {
        let mut out = Outcome::new(());
        let reject = |c: &mut Coordinator, member_id: &str, code: ErrorCode| {
            c.answer(
                token,
                ClassicReply::Join(JoinGroupResponse::error(member_id, code)),
            );
        };
        if req.group_id.is_empty() {
            reject(self, &req.member_id, ErrorCode::INVALID_GROUP_ID);
            return out;
        }
        let cfg = &self.config.classic;
        if req.session_timeout_ms < cfg.min_session_timeout_ms
            || req.session_timeout_ms > cfg.max_session_timeout_ms
        {
            reject(self, &req.member_id, ErrorCode::INVALID_SESSION_TIMEOUT);
            return out;
        }
        let gid = req.group_id.as_str();
        // A streams group holds the id: an empty one is converted (deleted), as Kafka does.
        if let Some(s) = self.groups.streams(gid) {
            if !s.members.is_empty() {
                reject(self, "", ErrorCode::INCONSISTENT_GROUP_PROTOCOL);
                return out;
            }
            match self.streams_group_tombstones(gid) {
                Ok(records) => out.records.extend(records),
                Err(e) => {
                    reject(self, "", e.code);
                    return out;
                }
            }
        }
        // A consumer group holds the id: an Empty one is deleted and replaced, a live one serves
        // the classic member itself (docs/consumer-protocol.md §K11.3).
        if let Some(c) = self.groups.consumer(gid) {
            if !c.members.is_empty() {
                return self.classic_join_to_consumer_group(now, ctx, req, token);
            }
            let records = self.consumer_group_tombstones(gid).unwrap_or_default();
            if let Err(e) = self.apply(&records) {
                reject(self, "", e.code);
                return out;
            }
            out.records.extend(records);
        }
        let is_unknown = req.member_id.is_empty();
        // Committed offsets alone make a group exist in Kafka (an Empty "simple" group).
        let is_new = !self.groups.contains(gid) && !self.offsets.contains_key(gid);
        if self.groups.classic(gid).is_none() {
            if !is_unknown {
                reject(self, &req.member_id, ErrorCode::UNKNOWN_MEMBER_ID);
                return out;
            }
            self.groups.insert_classic(ClassicGroup::new(gid, now));
        }
        let member_id = if is_unknown {
            self.new_member_id(gid, ctx, req, now)
        } else {
            req.member_id.clone()
        };
        let max_size = self.config.classic.max_size;
        let done = self.on_classic(now, gid, |step, g| {
            if !accept_joining_member(g, &req.member_id, max_size) {
                g.remove(&req.member_id);
                step.reply_join(
                    token,
                    JoinGroupResponse::error("", ErrorCode::GROUP_MAX_SIZE_REACHED),
                );
            } else if is_unknown {
                join_new_member(step, g, ctx, req, member_id, token);
            } else {
                join_existing_member(step, g, ctx, req, token);
            }
            if is_new && step.records.is_empty() {
                let value = g.empty_metadata_value();
                g.persisted = Some(value.clone());
                step.records.push(Record::ClassicGroupMetadata {
                    group_id: g.group_id.clone(),
                    value: Some(value),
                });
            }
        });
        if let Some(done) = done {
            out.records.extend(done.records);
            out.timers.extend(done.timers);
        }
        out
    }

    fn new_member_id(
        &mut self,
        gid: &str,
        ctx: &RequestContext,
        req: &JoinGroupRequest,
        now: Millis,
    ) -> String {
        if let Some(id) = self.classic.supplied_member_id.take() {
            return id;
        }
        let prefix = req
            .group_instance_id
            .clone()
            .unwrap_or_else(|| ctx.client_id.clone());
        loop {
            self.classic.member_seq += 1;
            let id = format!("{prefix}-{}", uuid_like(gid, self.classic.member_seq, now));
            let taken = self
                .groups
                .classic(gid)
                .is_some_and(|g| g.members.contains_key(&id) || g.pending_join.contains(&id));
            if !taken {
                return id;
            }
        }
    }

    /// SyncGroup (§C3). The answer arrives through [`Coordinator::take_completed`] under `token`.
    pub fn classic_sync(
        &mut self,
        now: Millis,
        req: &SyncGroupRequest,
        token: RequestToken,
    ) -> Outcome<()> {
        let refuse = |code| ClassicReply::Sync(SyncGroupResponse::error(code));
        if req.group_id.is_empty() {
            self.answer(token, refuse(ErrorCode::INVALID_GROUP_ID));
            return Outcome::new(());
        }
        // docs/consumer-protocol.md §K11.3: a classic member of a consumer group.
        if let Some(c) = self.groups.consumer(&req.group_id) {
            if c.members.is_empty() {
                self.answer(token, refuse(ErrorCode::UNKNOWN_MEMBER_ID));
                return Outcome::new(());
            }
            return self.classic_sync_to_consumer_group(now, req, token);
        }
        let done = self.on_classic(now, &req.group_id, |step, g| {
            if g.is(ClassicState::Empty) {
                step.reply_sync(
                    token,
                    SyncGroupResponse::error(ErrorCode::UNKNOWN_MEMBER_ID),
                );
            } else {
                sync(step, g, req, token);
            }
        });
        match done {
            Some(done) => done.into_outcome(()),
            None => {
                // Unknown, or another type of group.
                self.answer(token, refuse(ErrorCode::UNKNOWN_MEMBER_ID));
                Outcome::new(())
            }
        }
    }

    /// Heartbeat (§C4): the response is the error code.
    pub fn classic_heartbeat(&mut self, now: Millis, req: &HeartbeatRequest) -> Outcome<ErrorCode> {
        if req.group_id.is_empty() {
            return Outcome::new(ErrorCode::INVALID_GROUP_ID);
        }
        if self.groups.consumer(&req.group_id).is_some() {
            return self.classic_heartbeat_to_consumer_group(now, req);
        }
        match self.on_classic(now, &req.group_id, |step, g| heartbeat(step, g, req)) {
            Some(done) => {
                let code = done.value;
                done.into_outcome(code)
            }
            None => Outcome::new(ErrorCode::UNKNOWN_MEMBER_ID),
        }
    }

    /// LeaveGroup (§C4), a batch of members (one for v0-2).
    pub fn classic_leave(
        &mut self,
        now: Millis,
        req: &LeaveGroupRequest,
    ) -> Outcome<LeaveGroupResponse> {
        let failed = |code| {
            Outcome::new(LeaveGroupResponse {
                error_code: code,
                members: Vec::new(),
            })
        };
        if req.group_id.is_empty() {
            return failed(ErrorCode::INVALID_GROUP_ID);
        }
        if self.groups.consumer(&req.group_id).is_some() {
            return self.classic_leave_to_consumer_group(now, req);
        }
        match self.on_classic(now, &req.group_id, |step, g| leave(step, g, req)) {
            Some(mut done) => {
                let response = std::mem::replace(
                    &mut done.value,
                    LeaveGroupResponse {
                        error_code: ErrorCode::NONE,
                        members: Vec::new(),
                    },
                );
                done.into_outcome(response)
            }
            None => failed(ErrorCode::UNKNOWN_MEMBER_ID),
        }
    }

    /// A classic group upgraded to a consumer group (docs/consumer-protocol.md §K11.2): its
    /// waiting JoinGroup and SyncGroup requests answer REBALANCE_IN_PROGRESS and its timers
    /// are cancelled. `old` is the group as it was before the upgrade.
    pub(in crate::coordinator) fn classic_release_upgraded(
        &mut self,
        old: &ClassicGroup,
    ) -> Vec<TimerChange> {
        let mut changes = Vec::new();
        for m in old.members.values() {
            if let Some(token) = m.awaiting_join {
                let r = JoinGroupResponse::error(&m.member_id, ErrorCode::REBALANCE_IN_PROGRESS);
                self.answer(token, ClassicReply::Join(r));
            }
        }
        for m in old.members.values() {
            if let Some(token) = m.awaiting_sync {
                let r = SyncGroupResponse::error(ErrorCode::REBALANCE_IN_PROGRESS);
                self.answer(token, ClassicReply::Sync(r));
            }
        }
        let keys = old
            .members
            .keys()
            .map(|m| heartbeat_key(&old.group_id, m))
            .chain([join_key(&old.group_id), sync_key(&old.group_id)]);
        for key in keys {
            changes.extend(self.timers.cancel(&key));
        }
        changes
    }

    /// A classic group that replaced a consumer group (docs/consumer-protocol.md §K11.4): every
    /// member's session timer, then a rebalance its members learn of through Heartbeat.
    pub(in crate::coordinator) fn classic_start_downgraded(
        &mut self,
        now: Millis,
        group_id: &str,
    ) -> Outcome<()> {
        let done = self.on_classic(now, group_id, |step, g| {
            let members: Vec<String> = g.members.keys().cloned().collect();
            for m in &members {
                step.reschedule_heartbeat(g, m);
            }
            prepare_rebalance(step, g);
        });
        match done {
            Some(done) => done.into_outcome(()),
            None => Outcome::new(()),
        }
    }

    /// Answers to JoinGroup / SyncGroup requests completed since the last call, in completion
    /// order (§C3.4). Call after every operation and timer.
    pub fn take_completed(&mut self) -> Vec<Completed> {
        std::mem::take(&mut self.classic.outbox)
    }

    /// After a load (§C5): a session timer for every member of every classic group, and a
    /// rebalance for a group over `group.max.size` (so its members can commit and leave).
    pub(in crate::coordinator) fn classic_on_loaded(&mut self, now: Millis) -> Vec<TimerChange> {
        let max = self.config.classic.max_size.max(0) as usize;
        let ids: Vec<String> = self
            .groups
            .all_classic()
            .map(|g| g.group_id.clone())
            .collect();
        let mut changes = Vec::new();
        for id in ids {
            let done = self.on_classic(now, &id, |step, g| {
                let members: Vec<String> = g.members.keys().cloned().collect();
                for m in &members {
                    step.reschedule_heartbeat(g, m);
                }
                if g.members.len() > max && g.can_rebalance() {
                    prepare_rebalance(step, g);
                }
            });
            // A rebalance started here writes nothing (nobody has rejoined yet).
            changes.extend(done.into_iter().flat_map(|d| d.timers));
        }
        changes
    }

    /// Fire a classic timer (§C5).
    pub(in crate::coordinator) fn fire_classic(
        &mut self,
        now: Millis,
        key: &TimerKey,
        tag: i32,
    ) -> Outcome<()> {
        let (gid, fire): (&str, &StepFn) = match key {
            TimerKey::ClassicHeartbeat {
                group_id,
                member_id,
            } => (group_id, &|step, g| expire_heartbeat(step, g, member_id)),
            TimerKey::ClassicJoin { group_id } => (group_id, &|step, g| match g.initial_delay {
                Some((delay, remaining)) => try_complete_initial(step, g, delay, remaining),
                None => complete_join(step, g),
            }),
            TimerKey::ClassicSync { group_id } => {
                (group_id, &|step, g| expire_pending_sync(step, g, tag))
            }
            _ => return Outcome::new(()),
        };
        match self.on_classic(now, gid, fire) {
            Some(done) => done.into_outcome(()),
            None => Outcome::new(()),
        }
    }
}

/// Kafka's `acceptJoiningMember` (group.max.size).
fn accept_joining_member(g: &ClassicGroup, member_id: &str, max_size: i32) -> bool {
    let max = max_size.max(0) as usize;
    match g.state {
        ClassicState::Empty | ClassicState::Dead => true,
        ClassicState::PreparingRebalance => {
            g.members
                .get(member_id)
                .is_some_and(|m| m.awaiting_join.is_some())
                || g.num_awaiting_join() < max
        }
        ClassicState::CompletingRebalance | ClassicState::Stable => {
            g.members.contains_key(member_id) || g.members.len() < max
        }
    }
}

fn join_new_member(
    step: &mut Step,
    g: &mut ClassicGroup,
    ctx: &RequestContext,
    req: &JoinGroupRequest,
    member_id: String,
    token: RequestToken,
) {
    if g.is(ClassicState::Dead) {
        step.reply_join(
            token,
            JoinGroupResponse::error("", ErrorCode::COORDINATOR_NOT_AVAILABLE),
        );
        return;
    }
    if !g.supports_protocols(&req.protocol_type, &req.protocols) {
        step.reply_join(
            token,
            JoinGroupResponse::error("", ErrorCode::INCONSISTENT_GROUP_PROTOCOL),
        );
        return;
    }
    if let Some(instance) = &req.group_instance_id {
        match g.static_members.get(instance).cloned() {
            Some(old) => replace_static_member(step, g, ctx, req, &old, &member_id, token),
            None => add_member(step, g, ctx, req, member_id, token),
        }
        return;
    }
    if ctx.api_version < JOIN_REQUIRES_KNOWN_MEMBER_ID_VERSION {
        add_member(step, g, ctx, req, member_id, token);
        return;
    }
    // KIP-394: hand out the id; the member must rejoin with it within its session timeout.
    g.pending_join.insert(member_id.clone());
    step.schedule(
        heartbeat_key(&g.group_id, &member_id),
        req.session_timeout_ms as i64,
        0,
    );
    step.reply_join(
        token,
        JoinGroupResponse::error(&member_id, ErrorCode::MEMBER_ID_REQUIRED),
    );
}

fn join_existing_member(
    step: &mut Step,
    g: &mut ClassicGroup,
    ctx: &RequestContext,
    req: &JoinGroupRequest,
    token: RequestToken,
) {
    let member_id = req.member_id.as_str();
    if g.is(ClassicState::Dead) {
        step.reply_join(
            token,
            JoinGroupResponse::error(member_id, ErrorCode::COORDINATOR_NOT_AVAILABLE),
        );
        return;
    }
    if !g.supports_protocols(&req.protocol_type, &req.protocols) {
        step.reply_join(
            token,
            JoinGroupResponse::error(member_id, ErrorCode::INCONSISTENT_GROUP_PROTOCOL),
        );
        return;
    }
    if g.pending_join.contains(member_id) {
        if req.group_instance_id.is_some() {
            // Kafka fails this with an IllegalStateException: a pending member is dynamic.
            step.reply_join(
                token,
                JoinGroupResponse::error(member_id, ErrorCode::UNKNOWN_SERVER_ERROR),
            );
            return;
        }
        add_member(step, g, ctx, req, member_id.to_string(), token);
        return;
    }
    if let Err(code) = validate_member(g, member_id, req.group_instance_id.as_deref()) {
        let mut r = JoinGroupResponse::error(member_id, code);
        r.protocol_name = None;
        step.reply_join(token, r);
        return;
    }
    let protocols = dedup_protocols(&req.protocols);
    let matches = g
        .members
        .get(member_id)
        .is_some_and(|m| m.protocols == protocols);
    match g.state {
        ClassicState::PreparingRebalance => update_member_and_rebalance(step, g, req, token),
        ClassicState::CompletingRebalance => {
            if matches {
                // A lost JoinGroup response: answer again with the current generation.
                let leader = g.is_leader(member_id);
                step.reply_join(token, join_ok(g, member_id, leader, false));
            } else {
                update_member_and_rebalance(step, g, req, token);
            }
        }
        ClassicState::Stable => {
            if g.is_leader(member_id) || !matches {
                // The leader rejoining means it wants a new assignment.
                update_member_and_rebalance(step, g, req, token);
            } else {
                step.reply_join(token, join_ok(g, member_id, false, false));
            }
        }
        ClassicState::Empty | ClassicState::Dead => {
            step.reply_join(
                token,
                JoinGroupResponse::error(member_id, ErrorCode::UNKNOWN_MEMBER_ID),
            );
        }
    }
}

/// Kafka's `ClassicGroup.updateMember`: new protocols and timeouts, and the pending JoinGroup.
fn update_member(
    g: &mut ClassicGroup,
    member_id: &str,
    req: &JoinGroupRequest,
    token: Option<RequestToken>,
) {
    if let Some(m) = g.members.get_mut(member_id) {
        m.protocols = dedup_protocols(&req.protocols);
        m.rebalance_timeout_ms = effective_rebalance_timeout(req);
        m.session_timeout_ms = req.session_timeout_ms;
        m.awaiting_join = token;
    }
}

fn effective_rebalance_timeout(req: &JoinGroupRequest) -> i32 {
    if req.rebalance_timeout_ms == -1 {
        req.session_timeout_ms
    } else {
        req.rebalance_timeout_ms
    }
}

fn update_member_and_rebalance(
    step: &mut Step,
    g: &mut ClassicGroup,
    req: &JoinGroupRequest,
    token: RequestToken,
) {
    update_member(g, &req.member_id, req, Some(token));
    maybe_prepare_rebalance_or_complete_join(step, g);
}

fn add_member(
    step: &mut Step,
    g: &mut ClassicGroup,
    ctx: &RequestContext,
    req: &JoinGroupRequest,
    member_id: String,
    token: RequestToken,
) {
    let member = ClassicMember {
        member_id: member_id.clone(),
        group_instance_id: req.group_instance_id.clone(),
        client_id: ctx.client_id.clone(),
        client_host: ctx.client_host.clone(),
        rebalance_timeout_ms: effective_rebalance_timeout(req),
        session_timeout_ms: req.session_timeout_ms,
        protocol_type: req.protocol_type.clone(),
        protocols: dedup_protocols(&req.protocols),
        assignment: Vec::new(),
        awaiting_join: Some(token),
        awaiting_sync: None,
        is_new: true,
    };
    if g.is(ClassicState::PreparingRebalance) && g.previous_state == ClassicState::Empty {
        g.new_member_added = true;
    }
    g.add(member);
    // A new member gets the (long) new-member join timeout until its first join completes.
    let timeout = step.cfg.new_member_join_timeout_ms;
    step.schedule(heartbeat_key(&g.group_id, &member_id), timeout as i64, 0);
    maybe_prepare_rebalance_or_complete_join(step, g);
}

/// A static member rejoined without its member id: the old id is fenced and replaced (§C4).
fn replace_static_member(
    step: &mut Step,
    g: &mut ClassicGroup,
    ctx: &RequestContext,
    req: &JoinGroupRequest,
    old_id: &str,
    new_id: &str,
    token: RequestToken,
) {
    let current_leader = g.leader.clone();
    let Some(mut old) = g.members.remove(old_id) else {
        return;
    };
    if let Some(t) = old.awaiting_join.take() {
        let mut r = JoinGroupResponse::error(old_id, ErrorCode::FENCED_INSTANCE_ID);
        r.protocol_name = None;
        step.reply_join(t, r);
    }
    if let Some(t) = old.awaiting_sync.take() {
        step.reply_sync(t, SyncGroupResponse::error(ErrorCode::FENCED_INSTANCE_ID));
    }
    step.cancel(&heartbeat_key(&g.group_id, old_id));
    let mut member = old;
    member.member_id = new_id.to_string();
    // Kafka builds a fresh member object: not "new", so waiting keeps it alive (§C4.2).
    member.is_new = false;
    g.pending_sync.remove(old_id);
    g.members.insert(new_id.to_string(), member);
    if g.is_leader(old_id) {
        g.leader = Some(new_id.to_string());
    }
    if let Some(i) = &req.group_instance_id {
        g.static_members.insert(i.clone(), new_id.to_string());
    }
    step.reschedule_heartbeat(g, new_id);
    update_member(g, new_id, req, Some(token));
    match g.state {
        ClassicState::Stable => {
            if g.protocol_name == g.select_protocol() {
                // Same protocol: no rebalance, the member keeps its assignment (KIP-345).
                let assignment = g.assignments();
                step.write(g, &assignment);
                let response = if ctx.api_version >= JOIN_SKIP_ASSIGNMENT_VERSION {
                    let leader = g.is_leader(new_id);
                    join_ok(g, new_id, leader, leader)
                } else {
                    let mut r = join_ok(g, new_id, false, false);
                    r.leader = current_leader.unwrap_or_default();
                    r
                };
                step.complete_join(g, new_id, response);
            } else {
                maybe_prepare_rebalance_or_complete_join(step, g);
            }
        }
        ClassicState::CompletingRebalance => prepare_rebalance(step, g),
        ClassicState::PreparingRebalance => maybe_complete_join_phase(step, g),
        ClassicState::Empty | ClassicState::Dead => {
            // Unreachable in Kafka (a static member in an Empty group); refuse rather than panic.
            step.complete_join(
                g,
                new_id,
                JoinGroupResponse::error(new_id, ErrorCode::UNKNOWN_SERVER_ERROR),
            );
        }
    }
}

fn maybe_prepare_rebalance_or_complete_join(step: &mut Step, g: &mut ClassicGroup) {
    if g.can_rebalance() {
        prepare_rebalance(step, g);
    } else {
        maybe_complete_join_phase(step, g);
    }
}

/// Start a rebalance (§C2): the next join phase, bounded by the rebalance timeout, or for an
/// Empty group by `group.initial.rebalance.delay.ms`.
pub(super) fn prepare_rebalance(step: &mut Step, g: &mut ClassicGroup) {
    if g.is(ClassicState::CompletingRebalance) {
        // The assignment being synced is void: the waiting members learn it now.
        for m in g.members.values_mut() {
            m.assignment.clear();
        }
        propagate_assignment(step, g, ErrorCode::REBALANCE_IN_PROGRESS);
    }
    g.pending_sync.clear();
    step.cancel(&sync_key(&g.group_id));
    let initial = g.is(ClassicState::Empty);
    if initial {
        let delay = step.cfg.initial_rebalance_delay_ms.max(0);
        let remaining = (g.rebalance_timeout_ms() - delay).max(0);
        g.initial_delay = Some((delay, remaining));
        step.schedule(join_key(&g.group_id), delay as i64, 0);
    }
    g.transition(ClassicState::PreparingRebalance, step.now);
    if !initial {
        if g.has_all_members_joined() {
            complete_join(step, g);
        } else {
            g.initial_delay = None;
            let timeout = g.rebalance_timeout_ms();
            step.schedule(join_key(&g.group_id), timeout as i64, 0);
        }
    }
}

fn maybe_complete_join_phase(step: &mut Step, g: &mut ClassicGroup) {
    if g.is(ClassicState::PreparingRebalance)
        && g.previous_state != ClassicState::Empty
        && g.has_all_members_joined()
    {
        complete_join(step, g);
    }
}

/// The initial rebalance delay ran out: complete, or wait another delay if members keep coming
/// (never longer than the rebalance timeout in total).
fn try_complete_initial(step: &mut Step, g: &mut ClassicGroup, delay: i32, remaining: i32) {
    if !g.new_member_added || remaining == 0 {
        complete_join(step, g);
        return;
    }
    g.new_member_added = false;
    let next_delay = step.cfg.initial_rebalance_delay_ms.min(remaining);
    let next_remaining = (remaining - delay).max(0);
    g.initial_delay = Some((next_delay, next_remaining));
    step.schedule(join_key(&g.group_id), next_delay as i64, 0);
}

/// End the join phase (§C2): drop dynamic members that did not rejoin, elect a leader that did,
/// start the next generation and answer every pending JoinGroup.
pub(super) fn complete_join(step: &mut Step, g: &mut ClassicGroup) {
    step.cancel(&join_key(&g.group_id));
    g.initial_delay = None;
    let gone: Vec<String> = g
        .members
        .values()
        .filter(|m| m.awaiting_join.is_none() && !m.is_static())
        .map(|m| m.member_id.clone())
        .collect();
    for id in gone {
        g.remove(&id);
        step.cancel(&heartbeat_key(&g.group_id, &id));
    }
    if g.is(ClassicState::Dead) {
        return;
    }
    if !g.elect_joined_leader() && !g.members.is_empty() {
        // Only static members that have not rejoined: wait another rebalance timeout.
        let timeout = g.rebalance_timeout_ms();
        step.schedule(join_key(&g.group_id), timeout as i64, 0);
        return;
    }
    g.init_next_generation(step.now);
    if g.is(ClassicState::Empty) {
        step.write(g, &BTreeMap::new());
        return;
    }
    let ids: Vec<String> = g.members.keys().cloned().collect();
    for id in &ids {
        let leader = g.is_leader(id);
        let response = join_ok(g, id, leader, false);
        step.complete_join(g, id, response);
        step.reschedule_heartbeat(g, id);
        if let Some(m) = g.members.get_mut(id) {
            m.is_new = false;
        }
        g.pending_sync.insert(id.clone());
    }
    let timeout = g.rebalance_timeout_ms();
    step.schedule(sync_key(&g.group_id), timeout as i64, g.generation);
}

/// Answer every pending SyncGroup with the members' assignments (or the error).
fn propagate_assignment(step: &mut Step, g: &mut ClassicGroup, error: ErrorCode) {
    let ok = error == ErrorCode::NONE;
    let ids: Vec<String> = g.members.keys().cloned().collect();
    for id in ids {
        let response = SyncGroupResponse {
            error_code: error,
            protocol_type: if ok { g.protocol_type.clone() } else { None },
            protocol_name: if ok { g.protocol_name.clone() } else { None },
            assignment: g
                .members
                .get(&id)
                .map(|m| m.assignment.clone())
                .unwrap_or_default(),
        };
        if step.complete_sync(g, &id, response) {
            step.reschedule_heartbeat(g, &id);
        }
    }
}

fn remove_pending_sync_member(step: &mut Step, g: &mut ClassicGroup, member_id: &str) {
    g.pending_sync.remove(member_id);
    let cancel = match g.state {
        ClassicState::Empty | ClassicState::Dead | ClassicState::PreparingRebalance => true,
        ClassicState::CompletingRebalance | ClassicState::Stable => g.pending_sync.is_empty(),
    };
    if cancel {
        step.cancel(&sync_key(&g.group_id));
    }
}

fn sync(step: &mut Step, g: &mut ClassicGroup, req: &SyncGroupRequest, token: RequestToken) {
    let error = if g.is(ClassicState::Dead) {
        Some(ErrorCode::COORDINATOR_NOT_AVAILABLE)
    } else if let Err(code) = validate_member(g, &req.member_id, req.group_instance_id.as_deref()) {
        Some(code)
    } else if req.generation_id != g.generation {
        Some(ErrorCode::ILLEGAL_GENERATION)
    } else if inconsistent(&req.protocol_type, &g.protocol_type)
        || inconsistent(&req.protocol_name, &g.protocol_name)
    {
        Some(ErrorCode::INCONSISTENT_GROUP_PROTOCOL)
    } else {
        None
    };
    if let Some(code) = error {
        step.reply_sync(token, SyncGroupResponse::error(code));
        return;
    }
    let member_id = req.member_id.as_str();
    match g.state {
        ClassicState::PreparingRebalance => {
            step.reply_sync(
                token,
                SyncGroupResponse::error(ErrorCode::REBALANCE_IN_PROGRESS),
            );
        }
        ClassicState::CompletingRebalance => {
            if let Some(m) = g.members.get_mut(member_id) {
                m.awaiting_sync = Some(token);
            }
            remove_pending_sync_member(step, g, member_id);
            if g.is_leader(member_id) {
                // Later entries for the same member win; members left out get nothing.
                let mut assignment: BTreeMap<String, Vec<u8>> = BTreeMap::new();
                for (id, a) in &req.assignments {
                    if g.members.contains_key(id) {
                        assignment.insert(id.clone(), a.clone());
                    }
                }
                step.write(g, &assignment);
                for m in g.members.values_mut() {
                    m.assignment = assignment.get(&m.member_id).cloned().unwrap_or_default();
                }
                propagate_assignment(step, g, ErrorCode::NONE);
                g.transition(ClassicState::Stable, step.now);
            }
        }
        ClassicState::Stable => {
            remove_pending_sync_member(step, g, member_id);
            let assignment = g
                .members
                .get(member_id)
                .map(|m| m.assignment.clone())
                .unwrap_or_default();
            step.reply_sync(
                token,
                SyncGroupResponse {
                    error_code: ErrorCode::NONE,
                    protocol_type: g.protocol_type.clone(),
                    protocol_name: g.protocol_name.clone(),
                    assignment,
                },
            );
        }
        ClassicState::Empty | ClassicState::Dead => {
            step.reply_sync(
                token,
                SyncGroupResponse::error(ErrorCode::UNKNOWN_MEMBER_ID),
            );
        }
    }
}

/// Both sides given and different.
fn inconsistent(requested: &Option<String>, current: &Option<String>) -> bool {
    matches!((requested, current), (Some(r), Some(c)) if r != c)
}

fn heartbeat(step: &mut Step, g: &mut ClassicGroup, req: &HeartbeatRequest) -> ErrorCode {
    if g.is(ClassicState::Dead) {
        return ErrorCode::COORDINATOR_NOT_AVAILABLE;
    }
    if let Err(code) = validate_member(g, &req.member_id, req.group_instance_id.as_deref()) {
        return code;
    }
    if req.generation_id != g.generation {
        return ErrorCode::ILLEGAL_GENERATION;
    }
    match g.state {
        ClassicState::PreparingRebalance => {
            step.reschedule_heartbeat(g, &req.member_id);
            ErrorCode::REBALANCE_IN_PROGRESS
        }
        ClassicState::CompletingRebalance | ClassicState::Stable => {
            step.reschedule_heartbeat(g, &req.member_id);
            ErrorCode::NONE
        }
        ClassicState::Empty | ClassicState::Dead => ErrorCode::UNKNOWN_MEMBER_ID,
    }
}

fn leave(step: &mut Step, g: &mut ClassicGroup, req: &LeaveGroupRequest) -> LeaveGroupResponse {
    if g.is(ClassicState::Dead) {
        return LeaveGroupResponse {
            error_code: ErrorCode::COORDINATOR_NOT_AVAILABLE,
            members: Vec::new(),
        };
    }
    let mut results = Vec::with_capacity(req.members.len());
    let mut any_left = false;
    for m in &req.members {
        let code = if m.member_id.is_empty() {
            match m
                .group_instance_id
                .as_ref()
                .and_then(|i| g.static_members.get(i))
                .cloned()
            {
                Some(id) => {
                    remove_current_member(step, g, &id);
                    ErrorCode::NONE
                }
                None => ErrorCode::UNKNOWN_MEMBER_ID,
            }
        } else if g.pending_join.contains(&m.member_id) {
            g.remove(&m.member_id);
            step.cancel(&heartbeat_key(&g.group_id, &m.member_id));
            ErrorCode::NONE
        } else {
            match validate_member(g, &m.member_id, m.group_instance_id.as_deref()) {
                Ok(()) => {
                    remove_current_member(step, g, &m.member_id);
                    ErrorCode::NONE
                }
                Err(code) => code,
            }
        };
        any_left |= code == ErrorCode::NONE;
        results.push(LeftMember {
            member_id: m.member_id.clone(),
            group_instance_id: m.group_instance_id.clone(),
            error_code: code,
        });
    }
    if any_left {
        match g.state {
            ClassicState::CompletingRebalance | ClassicState::Stable => {
                maybe_prepare_rebalance_or_complete_join(step, g)
            }
            ClassicState::PreparingRebalance => maybe_complete_join_phase(step, g),
            ClassicState::Empty | ClassicState::Dead => {}
        }
    }
    LeaveGroupResponse {
        error_code: ErrorCode::NONE,
        members: results,
    }
}

fn remove_current_member(step: &mut Step, g: &mut ClassicGroup, member_id: &str) {
    step.cancel(&heartbeat_key(&g.group_id, member_id));
    step.complete_join(
        g,
        member_id,
        JoinGroupResponse::error("", ErrorCode::UNKNOWN_MEMBER_ID),
    );
    g.remove(member_id);
}

/// A member's session ran out (§C5).
fn expire_heartbeat(step: &mut Step, g: &mut ClassicGroup, member_id: &str) {
    if g.is(ClassicState::Dead) {
        return;
    }
    if g.pending_join.contains(member_id) {
        g.remove(member_id);
        if g.is(ClassicState::PreparingRebalance) && g.has_all_members_joined() {
            complete_join(step, g);
        }
        return;
    }
    let Some(m) = g.members.get(member_id) else {
        return;
    };
    // A member waiting for a JoinGroup or SyncGroup answer is not expired (unless it is new).
    if m.has_satisfied_heartbeat() {
        return;
    }
    step.complete_join(
        g,
        member_id,
        JoinGroupResponse::error("", ErrorCode::UNKNOWN_MEMBER_ID),
    );
    g.remove(member_id);
    match g.state {
        ClassicState::Stable | ClassicState::CompletingRebalance => {
            maybe_prepare_rebalance_or_complete_join(step, g)
        }
        ClassicState::PreparingRebalance if g.has_all_members_joined() => complete_join(step, g),
        _ => {}
    }
}

/// Members that did not send SyncGroup within the rebalance timeout are removed (§C5).
fn expire_pending_sync(step: &mut Step, g: &mut ClassicGroup, generation: i32) {
    if generation != g.generation {
        return;
    }
    if !matches!(
        g.state,
        ClassicState::CompletingRebalance | ClassicState::Stable
    ) || g.pending_sync.is_empty()
    {
        return;
    }
    let late: Vec<String> = g.pending_sync.iter().cloned().collect();
    for id in late {
        g.remove(&id);
        step.cancel(&heartbeat_key(&g.group_id, &id));
    }
    prepare_rebalance(step, g);
}
