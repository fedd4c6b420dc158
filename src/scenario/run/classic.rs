//! Classic group steps of the scenario runner (docs/classic-protocol.md). Members are named in
//! the files (`member=c1`); the runner maps names to the ids the coordinator hands out, keeps
//! each member's generation, and routes the deferred JoinGroup / SyncGroup answers (§C3) back to
//! the member that asked.

use crate::util::map::BTreeMap;

use super::{Last, Runner, err, mismatch};
use crate::coordinator::classic::{ClassicReply, RequestToken};
use crate::coordinator::{Coordinator, RequestContext, TimerKey};
use crate::error::ErrorCode;
use crate::protocol::classic::{
    DescribedClassicGroup, HeartbeatRequest, JoinGroupRequest, JoinGroupResponse, JoinProtocol,
    LeaveGroupRequest, LeavingMember, SyncGroupRequest, SyncGroupResponse,
};
use crate::records::Record;
use crate::scenario::parse::{Args, ScenarioError, list};
use crate::types::Millis;
use crate::wire::{WireError, Writer};

/// What the client side of a classic member remembers.
#[derive(Debug, Clone, Default)]
struct Member {
    group: String,
    member_id: String,
    generation: i32,
    /// The last JoinGroup answer (`None` while one is outstanding or before any).
    join: Option<JoinGroupResponse>,
    join_waiting: bool,
    sync: Option<SyncGroupResponse>,
    sync_waiting: bool,
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Join,
    Sync,
}

/// The runner's classic clients.
#[derive(Debug, Clone, Default)]
pub(super) struct Clients {
    members: BTreeMap<String, Member>,
    tokens: BTreeMap<u64, (String, Kind)>,
    next_token: u64,
    leave_codes: Vec<ErrorCode>,
    described: Option<DescribedClassicGroup>,
}

/// The commands of this file.
pub(super) fn is_classic(cmd: &str) -> bool {
    matches!(
        cmd,
        "join-group"
            | "sync-group"
            | "heartbeat-classic"
            | "leave-group"
            | "describe-group"
            | "offset-delete"
            | "expect-join"
            | "expect-sync"
            | "expect-classic"
            | "expect-leave"
            | "expect-described"
    )
}

/// A `consumer` protocol subscription (version 0) to `topics`, no user data.
fn subscription(topics: &[String]) -> Result<Vec<u8>, WireError> {
    let mut w = Writer::new("ConsumerProtocolSubscription");
    w.i16(0);
    w.array("Topics", topics, |w, t| w.string("Topic", t))?;
    w.nullable_bytes("UserData", None)?;
    Ok(w.into_bytes())
}

/// `t-0,t-1,u-2` as (topic, partition) pairs (the last `-` splits).
fn topic_partitions(spec: &str) -> Vec<(String, i32)> {
    list(spec)
        .into_iter()
        .filter_map(|tp| {
            let (t, p) = tp.rsplit_once('-')?;
            Some((t.to_string(), p.parse().ok()?))
        })
        .collect()
}

/// A `consumer` protocol assignment as `t-0,t-1` (sorted; `""` when empty or unreadable).
fn assignment_text(bytes: &[u8]) -> String {
    let mut ps = crate::assignor::client::protocol::decode_assignment(bytes).unwrap_or_default();
    ps.sort();
    ps.iter()
        .map(|(t, p)| format!("{t}-{p}"))
        .collect::<Vec<_>>()
        .join(",")
}

fn code_name(c: ErrorCode) -> String {
    c.name().to_string()
}

impl Runner {
    pub(super) fn classic_step(&mut self, cmd: &str, a: &Args) -> Result<(), ScenarioError> {
        let n = a.line;
        match cmd {
            "join-group" => {
                let name = a.req("member")?.to_string();
                let group = a.get("group").unwrap_or("g").to_string();
                let known = self.classic.members.get(&name).map(|m| m.member_id.clone());
                let member_id = match a.get("member-id") {
                    Some(id) => self.classic_id(id),
                    None => known.unwrap_or_default(),
                };
                let topics = list(a.get("topics").unwrap_or("t"));
                let metadata = match (a.get("meta"), a.get("owned")) {
                    (Some(m), _) => m.as_bytes().to_vec(),
                    // A version 3 subscription with the partitions the member owns (cooperative).
                    (None, Some(owned)) => crate::assignor::client::protocol::encode_subscription(
                        &crate::assignor::client::Subscription {
                            topics: topics.clone(),
                            user_data: None,
                            owned_partitions: topic_partitions(owned),
                            generation_id: None,
                            rack_id: None,
                            group_instance_id: None,
                        },
                    )
                    .map_err(|e| err(n, e.to_string()))?,
                    (None, None) => subscription(&topics).map_err(|e| err(n, e.to_string()))?,
                };
                let protocols = list(a.get("protocols").unwrap_or("range"))
                    .into_iter()
                    .map(|name| JoinProtocol {
                        name,
                        metadata: metadata.clone(),
                    })
                    .collect();
                let req = JoinGroupRequest {
                    group_id: group.clone(),
                    session_timeout_ms: a.int("session")?.unwrap_or(10_000),
                    rebalance_timeout_ms: a.int("rebalance")?.unwrap_or(30_000),
                    member_id,
                    group_instance_id: a.get("instance").map(String::from),
                    protocol_type: a.get("type").unwrap_or("consumer").to_string(),
                    protocols,
                    reason: None,
                };
                let ctx = RequestContext {
                    client_id: a.get("client-id").unwrap_or(&name).to_string(),
                    client_host: "/127.0.0.1".into(),
                    api_version: a.int("version")?.unwrap_or(9),
                };
                a.finish(&[])?;
                let token = self.classic_token(&name, &group, Kind::Join);
                let now = self.now;
                let out = self.coord().classic_join(now, &ctx, &req, token);
                self.record(out.records);
                self.deliver_classic();
                Ok(())
            }
            "sync-group" => {
                let name = a.req("member")?.to_string();
                let m = self.classic_member(&name, n)?;
                let assignments = match a.get("assign") {
                    None => Vec::new(),
                    Some(spec) => spec
                        .split(';')
                        .filter(|s| !s.is_empty())
                        .map(|e| {
                            let (who, bytes) = e.split_once(':').unwrap_or((e, ""));
                            // `@t-0,t-1`: a `consumer` protocol assignment of those partitions.
                            let bytes = match bytes.strip_prefix('@') {
                                Some(ps) => crate::assignor::client::protocol::encode_assignment(
                                    &topic_partitions(ps),
                                )
                                .unwrap_or_default(),
                                None => bytes.as_bytes().to_vec(),
                            };
                            (self.classic_id(who), bytes)
                        })
                        .collect(),
                };
                let req = SyncGroupRequest {
                    group_id: m.group.clone(),
                    generation_id: a.int("generation")?.unwrap_or(m.generation),
                    member_id: a
                        .get("member-id")
                        .map(|i| self.classic_id(i))
                        .unwrap_or(m.member_id.clone()),
                    group_instance_id: a.get("instance").map(String::from),
                    protocol_type: a.get("protocol-type").map(String::from),
                    protocol_name: a.get("protocol").map(String::from),
                    assignments,
                };
                a.finish(&[])?;
                let token = self.classic_token(&name, &m.group, Kind::Sync);
                let now = self.now;
                let out = self.coord().classic_sync(now, &req, token);
                self.record(out.records);
                self.deliver_classic();
                Ok(())
            }
            "heartbeat-classic" => {
                let name = a.req("member")?.to_string();
                let m = self.classic_member(&name, n)?;
                let req = HeartbeatRequest {
                    group_id: m.group.clone(),
                    generation_id: a.int("generation")?.unwrap_or(m.generation),
                    member_id: a
                        .get("member-id")
                        .map(|i| self.classic_id(i))
                        .unwrap_or(m.member_id.clone()),
                    group_instance_id: a.get("instance").map(String::from),
                };
                a.finish(&[])?;
                let now = self.now;
                let out = self.coord().classic_heartbeat(now, &req);
                self.last = Last::Result(out.response, None);
                self.record(out.records);
                self.deliver_classic();
                Ok(())
            }
            "leave-group" => {
                // `member=c1,c2` (names); `instance=i1,i2` pairs with them by position, `-` none.
                let names = list(a.req("member")?);
                let instances = list(a.get("instance").unwrap_or(""));
                let group = a.get("group").unwrap_or("g").to_string();
                let by_instance = a.flag("by-instance");
                a.finish(&["by-instance"])?;
                let members = names
                    .iter()
                    .enumerate()
                    .map(|(i, name)| LeavingMember {
                        member_id: if by_instance {
                            String::new()
                        } else {
                            self.classic_id(name)
                        },
                        group_instance_id: instances.get(i).filter(|s| s.as_str() != "-").cloned(),
                        reason: None,
                    })
                    .collect();
                let now = self.now;
                let out = self.coord().classic_leave(
                    now,
                    &LeaveGroupRequest {
                        group_id: group,
                        members,
                    },
                );
                self.classic.leave_codes =
                    out.response.members.iter().map(|m| m.error_code).collect();
                let first = self.classic.leave_codes.first().copied();
                let code = if out.response.error_code != ErrorCode::NONE {
                    out.response.error_code
                } else {
                    first.unwrap_or(ErrorCode::NONE)
                };
                self.last = Last::Result(code, None);
                self.record(out.records);
                self.deliver_classic();
                Ok(())
            }
            "describe-group" => {
                let group = a.get("group").unwrap_or("g").to_string();
                let version = a.int("version")?.unwrap_or(5);
                a.finish(&[])?;
                let d = self.coord().describe_groups(&[group], version);
                self.classic.described = d.into_iter().next();
                Ok(())
            }
            "offset-delete" => {
                let group = a.get("group").unwrap_or("g").to_string();
                let topic = a.req("topic")?.to_string();
                let partition = a.int("partition")?.unwrap_or(0);
                a.finish(&[])?;
                let now = self.now;
                let out = self
                    .coord()
                    .offset_delete(now, &group, &[(topic, vec![partition])]);
                let code = if out.response.error_code != ErrorCode::NONE {
                    out.response.error_code
                } else {
                    out.response.topics[0].1[0].1
                };
                self.last = Last::Result(code, None);
                self.record(out.records);
                Ok(())
            }
            "expect-join" => self.expect_join(a),
            "expect-sync" => self.expect_sync(a),
            "expect-classic" => self.expect_classic(a),
            "expect-leave" => {
                let want = a.req("codes")?.to_string();
                a.finish(&[])?;
                let got: Vec<String> = self
                    .classic
                    .leave_codes
                    .iter()
                    .map(|c| code_name(*c))
                    .collect();
                self.checks += 1;
                if want != got.join(",") {
                    return Err(mismatch(n, "leave codes", &want, &got.join(",")));
                }
                Ok(())
            }
            "expect-described" => self.expect_described(a),
            other => Err(err(n, format!("unknown command `{other}`"))),
        }
    }

    /// A member name's id (names of known members), else the word itself (`""` stays empty).
    pub(super) fn classic_id(&self, word: &str) -> String {
        self.classic
            .members
            .get(word)
            .map(|m| m.member_id.clone())
            .unwrap_or_else(|| word.to_string())
    }

    /// A member id as the scenario names it: a classic member's name (its id is generated), else
    /// the id (consumer members are named by their ids).
    pub(super) fn member_label(&self, member_id: &str) -> String {
        self.classic
            .members
            .iter()
            .find(|(_, m)| m.member_id == member_id)
            .map_or_else(|| member_id.to_string(), |(n, _)| n.clone())
    }

    /// `text` with every generated classic member id replaced by the member's name (classic
    /// members of consumer groups appear in consumer records and timers).
    pub(super) fn relabel_classic(&self, mut text: String) -> String {
        for (name, m) in &self.classic.members {
            if !m.member_id.is_empty() && m.member_id != *name && text.contains(&m.member_id) {
                text = text.replace(&m.member_id, name);
            }
        }
        text
    }

    /// The name of the member with this id, for readable timer tokens.
    pub(super) fn classic_name(&self, member_id: &str) -> String {
        self.classic
            .members
            .iter()
            .find(|(_, m)| m.member_id == member_id)
            .map(|(n, _)| n.clone())
            .or_else(|| {
                // Not answered yet (JoinGroup v0-3 learns its id at the end of the join phase):
                // generated ids start with the client id, which is the member name by default.
                self.classic
                    .members
                    .iter()
                    .filter(|(n, m)| {
                        m.member_id.is_empty() && member_id.starts_with(&format!("{n}-"))
                    })
                    .map(|(n, _)| n.clone())
                    .max_by_key(String::len)
            })
            .unwrap_or_else(|| member_id.to_string())
    }

    fn classic_member(&self, name: &str, n: usize) -> Result<Member, ScenarioError> {
        self.classic
            .members
            .get(name)
            .cloned()
            .ok_or_else(|| err(n, format!("no classic member `{name}` (join-group first)")))
    }

    fn classic_token(&mut self, name: &str, group: &str, kind: Kind) -> RequestToken {
        self.classic.next_token += 1;
        let t = self.classic.next_token;
        self.classic.tokens.insert(t, (name.to_string(), kind));
        let m = self.classic.members.entry(name.to_string()).or_default();
        m.group = group.to_string();
        match kind {
            Kind::Join => {
                m.join = None;
                m.join_waiting = true;
            }
            Kind::Sync => {
                m.sync = None;
                m.sync_waiting = true;
            }
        }
        RequestToken(t)
    }

    /// Route every completed answer to the member that asked.
    pub(super) fn deliver_classic(&mut self) {
        let Some(c) = self.coord.as_mut() else {
            return;
        };
        for done in c.take_completed() {
            let Some((name, _)) = self.classic.tokens.remove(&done.token.0) else {
                continue;
            };
            let m = self.classic.members.entry(name).or_default();
            match done.reply {
                ClassicReply::Join(r) => {
                    if !r.member_id.is_empty()
                        && matches!(
                            r.error_code,
                            ErrorCode::NONE | ErrorCode::MEMBER_ID_REQUIRED
                        )
                    {
                        m.member_id = r.member_id.clone();
                    }
                    if r.error_code == ErrorCode::NONE {
                        m.generation = r.generation_id;
                    }
                    m.join = Some(r);
                    m.join_waiting = false;
                }
                ClassicReply::Sync(r) => {
                    m.sync = Some(r);
                    m.sync_waiting = false;
                }
            }
        }
    }

    fn expect_join(&mut self, a: &Args) -> Result<(), ScenarioError> {
        let n = a.line;
        let name = a.req("member")?.to_string();
        let m = self.classic_member(&name, n)?;
        let waiting = a.flag("waiting");
        let fields = [
            "error",
            "generation",
            "leader",
            "members",
            "protocol",
            "member-id",
            "skip-assignment",
        ];
        let wants: Vec<(&str, Option<String>)> = fields
            .iter()
            .map(|f| (*f, a.get(f).map(String::from)))
            .collect();
        a.finish(&["waiting"])?;
        self.checks += 1;
        if waiting {
            if !m.join_waiting {
                return Err(err(
                    n,
                    format!("`{name}` has a JoinGroup answer: {:?}", m.join),
                ));
            }
            return Ok(());
        }
        let Some(r) = m.join else {
            return Err(err(
                n,
                format!("`{name}` has no JoinGroup answer (still waiting)"),
            ));
        };
        for (f, want) in wants {
            let Some(want) = want else { continue };
            let got = match f {
                "error" => code_name(r.error_code),
                "generation" => r.generation_id.to_string(),
                "leader" => {
                    if r.leader.is_empty() {
                        "-".into()
                    } else {
                        self.classic_name(&r.leader)
                    }
                }
                "members" => {
                    let mut names: Vec<String> = r
                        .members
                        .iter()
                        .map(|x| self.classic_name(&x.member_id))
                        .collect();
                    names.sort();
                    if names.is_empty() {
                        "[]".into()
                    } else {
                        names.join(",")
                    }
                }
                "protocol" => r.protocol_name.clone().unwrap_or_else(|| "-".into()),
                "member-id" => {
                    if r.member_id.is_empty() {
                        "\"\"".into()
                    } else {
                        self.classic_name(&r.member_id)
                    }
                }
                _ => r.skip_assignment.to_string(),
            };
            let want = if want.is_empty() {
                "\"\"".to_string()
            } else {
                want
            };
            self.checks += 1;
            if want != got {
                return Err(mismatch(n, &format!("join {f}"), &want, &got));
            }
        }
        Ok(())
    }

    fn expect_sync(&mut self, a: &Args) -> Result<(), ScenarioError> {
        let n = a.line;
        let name = a.req("member")?.to_string();
        let m = self.classic_member(&name, n)?;
        let waiting = a.flag("waiting");
        let error = a.get("error").map(String::from);
        let assignment = a.get("assignment").map(String::from);
        let partitions = a.get("partitions").map(String::from);
        let protocol = a.get("protocol").map(String::from);
        a.finish(&["waiting"])?;
        self.checks += 1;
        if waiting {
            if !m.sync_waiting {
                return Err(err(
                    n,
                    format!("`{name}` has a SyncGroup answer: {:?}", m.sync),
                ));
            }
            return Ok(());
        }
        let Some(r) = m.sync else {
            return Err(err(
                n,
                format!("`{name}` has no SyncGroup answer (still waiting)"),
            ));
        };
        let pairs = [
            ("error", error, code_name(r.error_code)),
            (
                "assignment",
                assignment,
                String::from_utf8_lossy(&r.assignment).into_owned(),
            ),
            ("partitions", partitions, assignment_text(&r.assignment)),
            (
                "protocol",
                protocol,
                r.protocol_name.clone().unwrap_or_else(|| "-".into()),
            ),
        ];
        for (f, want, got) in pairs {
            if let Some(w) = want {
                self.checks += 1;
                if w != got {
                    return Err(mismatch(n, &format!("sync {f}"), &w, &got));
                }
            }
        }
        Ok(())
    }

    fn expect_classic(&mut self, a: &Args) -> Result<(), ScenarioError> {
        let n = a.line;
        let group = a.get("group").unwrap_or("g").to_string();
        let missing = a.flag("missing");
        let fields = [
            "state",
            "generation",
            "leader",
            "members",
            "protocol",
            "protocol-type",
            "pending-sync",
        ];
        let wants: Vec<(&str, Option<String>)> = fields
            .iter()
            .map(|f| (*f, a.get(f).map(String::from)))
            .collect();
        a.finish(&["missing"])?;
        let g = self.coord().classic_group(&group).cloned();
        self.checks += 1;
        let Some(g) = g else {
            if missing {
                return Ok(());
            }
            return Err(err(n, format!("no classic group `{group}`")));
        };
        if missing {
            return Err(err(
                n,
                format!("classic group `{group}` exists ({})", g.state.name()),
            ));
        }
        for (f, want) in wants {
            let Some(want) = want else { continue };
            let names = |ids: &mut dyn Iterator<Item = &String>| {
                let mut v: Vec<String> = ids.map(|i| self.classic_name(i)).collect();
                v.sort();
                if v.is_empty() {
                    "[]".to_string()
                } else {
                    v.join(",")
                }
            };
            let got = match f {
                "state" => g.state.name().to_string(),
                "generation" => g.generation.to_string(),
                "leader" => g
                    .leader
                    .as_deref()
                    .map(|l| self.classic_name(l))
                    .unwrap_or_else(|| "-".into()),
                "members" => names(&mut g.members.keys()),
                "protocol" => g.protocol_name.clone().unwrap_or_else(|| "-".into()),
                "protocol-type" => g.protocol_type.clone().unwrap_or_else(|| "-".into()),
                _ => names(&mut g.pending_sync.iter()),
            };
            self.checks += 1;
            if want != got {
                return Err(mismatch(n, &format!("classic {f}"), &want, &got));
            }
        }
        Ok(())
    }

    fn expect_described(&mut self, a: &Args) -> Result<(), ScenarioError> {
        let n = a.line;
        let d = self
            .classic
            .described
            .clone()
            .ok_or_else(|| err(n, "no describe-group yet"))?;
        let pairs = [
            (
                "error",
                a.get("error").map(String::from),
                code_name(d.error_code),
            ),
            (
                "state",
                a.get("state").map(String::from),
                d.group_state.clone(),
            ),
            (
                "protocol-type",
                a.get("protocol-type").map(String::from),
                d.protocol_type.clone(),
            ),
            (
                "protocol",
                a.get("protocol").map(String::from),
                d.protocol_data.clone(),
            ),
            (
                "members",
                a.get("members").map(String::from),
                d.members.len().to_string(),
            ),
            (
                "message",
                a.get("message").map(String::from),
                d.error_message.clone().unwrap_or_default(),
            ),
        ];
        a.finish(&[])?;
        for (f, want, got) in pairs {
            if let Some(w) = want {
                self.checks += 1;
                if w != got {
                    return Err(mismatch(n, &format!("described {f}"), &w, &got));
                }
            }
        }
        Ok(())
    }

    /// Timer tokens of classic timers, with member names.
    pub(super) fn classic_timer_token(&self, k: &TimerKey, at: Millis) -> Option<String> {
        let g = |g: &str| {
            if g == "g" {
                String::new()
            } else {
                format!("{g}/")
            }
        };
        Some(match k {
            TimerKey::ClassicHeartbeat {
                group_id,
                member_id,
            } => {
                format!(
                    "hb:{}{}@{}",
                    g(group_id),
                    self.classic_name(member_id),
                    at.0
                )
            }
            TimerKey::ClassicJoin { group_id } => format!("join:{group_id}@{}", at.0),
            TimerKey::ClassicSync { group_id } => format!("sync:{group_id}@{}", at.0),
            _ => return None,
        })
    }

    /// The settled classic groups of the live coordinator equal their replayed selves (§C7).
    pub(super) fn classic_replay_check(
        &self,
        live: &Coordinator,
        fresh: &Coordinator,
        n: usize,
    ) -> Result<(), ScenarioError> {
        let strip = |v: Option<crate::records::ClassicGroupMetadataValue>| {
            v.map(|mut v| {
                v.current_state_timestamp = -1;
                v
            })
        };
        for id in live.group_ids() {
            let Some(g) = live.classic_group(&id) else {
                continue;
            };
            let Some(view) = g.settled_view() else {
                continue;
            };
            let replayed = fresh.classic_group(&id).and_then(|r| r.settled_view());
            if strip(Some(view)) != strip(replayed) {
                return Err(err(
                    n,
                    format!("replaying the records does not rebuild settled classic group `{id}`"),
                ));
            }
        }
        Ok(())
    }
}

/// Record fields of a classic GroupMetadata record for `expect-record` (`generation=`,
/// `members=`, `protocol=`).
pub(super) fn classic_record_field(r: &Record, field: &str) -> Option<String> {
    let Record::ClassicGroupMetadata { value: Some(v), .. } = r else {
        return None;
    };
    Some(match field {
        "generation" => v.generation.to_string(),
        "members" => v.members.len().to_string(),
        "protocol" => v.protocol.clone().unwrap_or_else(|| "-".into()),
        _ => return None,
    })
}
