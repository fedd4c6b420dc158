//! Routing requests to the owners (docs/sharding.md, "Requests"). With one owner every job goes
//! to it unchanged. With several, a request about one group goes to the owner of the group's
//! coordinator partition ([`super::shards`]); a request without a group (Metadata, topic, ACL,
//! config and SCRAM admin, the data plane) goes to owner 0, which holds the global registries;
//! a request about several groups (ListGroups, DescribeGroups, ConsumerGroupDescribe,
//! StreamsGroupDescribe, DeleteGroups, OffsetFetch v8+) is split per owner and the parts merged
//! back in the request's order. A connection's job is answered by one [`Reply`], its responses
//! in request order, whatever owners its requests went to: the connection's ordering rule holds
//! unchanged.

use kafka_protocol::messages::ListGroupsRequest;
use tokio::sync::{mpsc, oneshot};

use super::owner::{Job, Reply};
use super::shards;
use super::wire::{Header, Req, RequestKind, Resp, ResponseKind};

/// Kafka's default `offsets.topic.num.partitions`: the coordinator partitions the groups are
/// placed on, dealt over the owners.
pub(crate) const COORDINATOR_PARTITIONS: u32 = 50;

/// The owners' job queues, and the placement rule between them.
pub(crate) struct Router {
    owners: Vec<mpsc::Sender<Job>>,
}

/// The owner went away (the server is stopping); the job is dropped.
#[derive(Debug)]
pub(crate) struct OwnerGone;

impl Router {
    /// A router over the owners' queues (owner 0 first).
    pub fn new(owners: Vec<mpsc::Sender<Job>>) -> Router {
        assert!(!owners.is_empty(), "at least one owner");
        Router { owners }
    }

    /// Hand `job` to its owner(s). Its reply comes back on `job.reply` as one [`Reply`] with
    /// the responses in request order.
    pub async fn send(&self, job: Job) -> Result<(), OwnerGone> {
        let n = self.owners.len();
        if n == 1 {
            return self.owners[0].send(job).await.map_err(|_| OwnerGone);
        }
        let plans: Vec<Plan> = job.items.iter().map(|(_, r)| plan(r, n)).collect();
        // The common case: every request of the batch for one owner (a connection's
        // heartbeats of one group): no split, no merge.
        if let Some(target) = single_target(&plans) {
            return self.owners[target].send(job).await.map_err(|_| OwnerGone);
        }
        let Job { items, peer, reply } = job;
        let mut parts: Vec<Vec<(Header, Req)>> = (0..n).map(|_| Vec::new()).collect();
        // Per request: where its parts are (owner, index in that owner's job).
        let mut slots: Vec<Slot> = Vec::with_capacity(items.len());
        let mut kept: Vec<Option<(Header, Req)>> = Vec::with_capacity(items.len());
        for ((h, req), p) in items.into_iter().zip(plans) {
            match p {
                Plan::One(o) => {
                    slots.push(Slot::One(o, parts[o].len()));
                    parts[o].push((h, req));
                    kept.push(None);
                }
                Plan::Split(split) => {
                    let mut at = Vec::with_capacity(split.len());
                    for (o, positions, sub) in split {
                        at.push((o, parts[o].len(), positions));
                        parts[o].push((h.clone(), sub));
                    }
                    slots.push(Slot::Split(at));
                    kept.push(Some((h, req)));
                }
            }
        }
        let mut waits: Vec<Option<oneshot::Receiver<Reply>>> = (0..n).map(|_| None).collect();
        for (o, items) in parts.into_iter().enumerate() {
            if items.is_empty() {
                continue;
            }
            let (tx, rx) = oneshot::channel();
            let sub = Job {
                items,
                peer: peer.clone(),
                reply: tx,
            };
            self.owners[o].send(sub).await.map_err(|_| OwnerGone)?;
            waits[o] = Some(rx);
        }
        tokio::spawn(merge(waits, slots, kept, reply));
        Ok(())
    }
}

/// The owner of `group` among `owners`.
pub(crate) fn owner_of(group: &str, owners: usize) -> usize {
    shards::owner_of_partition(
        shards::coordinator_partition(group, COORDINATOR_PARTITIONS),
        owners,
    )
}

/// Where one request goes.
enum Plan {
    One(usize),
    /// Per owner: the positions (in the request's group list) it answers, and its request.
    Split(Vec<(usize, Vec<usize>, Req)>),
}

/// Where the parts of one request went.
enum Slot {
    One(usize, usize),
    Split(Vec<(usize, usize, Vec<usize>)>),
}

fn single_target(plans: &[Plan]) -> Option<usize> {
    let mut target = None;
    for p in plans {
        match p {
            Plan::One(o) if target.is_none() || target == Some(*o) => target = Some(*o),
            _ => return None,
        }
    }
    target
}

/// Splits the group ids of a request by owner: (owner, positions, ids), owners in order.
fn by_owner<T: Clone>(
    ids: &[T],
    key: impl Fn(&T) -> &str,
    n: usize,
) -> Vec<(usize, Vec<usize>, Vec<T>)> {
    let mut out: Vec<(usize, Vec<usize>, Vec<T>)> = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        let o = owner_of(key(id), n);
        match out.iter_mut().find(|(x, _, _)| *x == o) {
            Some((_, pos, part)) => {
                pos.push(i);
                part.push(id.clone());
            }
            None => out.push((o, vec![i], vec![id.clone()])),
        }
    }
    out.sort_by_key(|(o, _, _)| *o);
    out
}

/// One owner for a group list (or owner 0 for an empty one); else the split.
fn split_or_one<T: Clone>(
    ids: &[T],
    key: impl Fn(&T) -> &str,
    n: usize,
    rebuild: impl Fn(Vec<T>) -> Req,
) -> Plan {
    let parts = by_owner(ids, key, n);
    match parts.len() {
        0 => Plan::One(0),
        1 => Plan::One(parts[0].0),
        _ => Plan::Split(
            parts
                .into_iter()
                .map(|(o, pos, part)| (o, pos, rebuild(part)))
                .collect(),
        ),
    }
}

fn plan(req: &Req, n: usize) -> Plan {
    let one = |g: &str| Plan::One(owner_of(g, n));
    match req {
        Req::Heartbeat(r) => one(&r.group_id),
        Req::Describe(r) => split_or_one(
            &r.group_ids,
            |g| g.as_str(),
            n,
            |ids| {
                let mut sub = r.clone();
                sub.group_ids = ids;
                Req::Describe(sub)
            },
        ),
        Req::ApiVersions(_) => Plan::One(0),
        Req::Kafka(k) => match k {
            RequestKind::JoinGroup(r) => one(&r.group_id),
            RequestKind::SyncGroup(r) => one(&r.group_id),
            RequestKind::Heartbeat(r) => one(&r.group_id),
            RequestKind::LeaveGroup(r) => one(&r.group_id),
            RequestKind::OffsetCommit(r) => one(&r.group_id),
            RequestKind::OffsetDelete(r) => one(&r.group_id),
            RequestKind::ConsumerGroupHeartbeat(r) => one(&r.group_id),
            RequestKind::ConsumerGroupDescribe(r) => split_or_one(
                &r.group_ids,
                |g| g.as_str(),
                n,
                |ids| {
                    Req::Kafka(RequestKind::ConsumerGroupDescribe({
                        let mut sub = r.clone();
                        sub.group_ids = ids;
                        sub
                    }))
                },
            ),
            RequestKind::DescribeGroups(r) => split_or_one(
                &r.groups,
                |g| g.as_str(),
                n,
                |ids| {
                    Req::Kafka(RequestKind::DescribeGroups({
                        let mut sub = r.clone();
                        sub.groups = ids;
                        sub
                    }))
                },
            ),
            RequestKind::DeleteGroups(r) => split_or_one(
                &r.groups_names,
                |g| g.as_str(),
                n,
                |ids| {
                    Req::Kafka(RequestKind::DeleteGroups({
                        let mut sub = r.clone();
                        sub.groups_names = ids;
                        sub
                    }))
                },
            ),
            RequestKind::OffsetFetch(r) if r.groups.is_empty() => one(&r.group_id),
            RequestKind::OffsetFetch(r) => split_or_one(
                &r.groups,
                |g| g.group_id.as_str(),
                n,
                |groups| {
                    Req::Kafka(RequestKind::OffsetFetch({
                        let mut sub = r.clone();
                        sub.groups = groups;
                        sub
                    }))
                },
            ),
            // Every owner lists its own groups; the answer is the union.
            RequestKind::ListGroups(r) => Plan::Split(
                (0..n)
                    .map(|o| {
                        let sub: ListGroupsRequest = r.clone();
                        (o, Vec::new(), Req::Kafka(RequestKind::ListGroups(sub)))
                    })
                    .collect(),
            ),
            // No group: the global registries and the data plane live on owner 0.
            _ => Plan::One(0),
        },
    }
}

/// Waits for every owner's part and answers the connection with one reply in request order.
/// Gives up (dropping the parts) when the connection's side of the reply is gone: a parked
/// JoinGroup's owner then notices its own reply channel closed.
async fn merge(
    mut waits: Vec<Option<oneshot::Receiver<Reply>>>,
    slots: Vec<Slot>,
    mut kept: Vec<Option<(Header, Req)>>,
    mut out: oneshot::Sender<Reply>,
) {
    let mut replies: Vec<Option<Reply>> = (0..waits.len()).map(|_| None).collect();
    for (o, w) in waits.iter_mut().enumerate() {
        let Some(rx) = w.take() else { continue };
        let reply = tokio::select! {
            r = rx => r,
            _ = out.closed() => return,
        };
        let Ok(reply) = reply else { return };
        replies[o] = Some(reply);
    }
    // Take each owner's responses (and requests) out by index.
    let mut resps: Vec<Vec<Option<Resp>>> = Vec::with_capacity(replies.len());
    let mut items: Vec<Vec<Option<(Header, Req)>>> = Vec::with_capacity(replies.len());
    for r in replies {
        let (i, rs) = match r {
            Some(r) => (r.items, r.resps),
            None => (Vec::new(), Vec::new()),
        };
        items.push(i.into_iter().map(Some).collect());
        resps.push(rs.into_iter().map(Some).collect());
    }
    let mut merged_items = Vec::with_capacity(slots.len());
    let mut merged = Vec::with_capacity(slots.len());
    for (slot, kept) in slots.into_iter().zip(kept.iter_mut()) {
        match slot {
            Slot::One(o, i) => {
                let (Some(item), Some(resp)) = (items[o][i].take(), resps[o][i].take()) else {
                    return;
                };
                merged_items.push(item);
                merged.push(resp);
            }
            Slot::Split(at) => {
                let Some(item) = kept.take() else { return };
                let parts: Vec<(Vec<usize>, Resp)> = at
                    .into_iter()
                    .filter_map(|(o, i, pos)| Some((pos, resps[o][i].take()?)))
                    .collect();
                merged.push(merge_parts(parts));
                merged_items.push(item);
            }
        }
    }
    let _ = out.send(Reply {
        items: merged_items,
        resps: merged,
    });
}

/// Puts the per-owner parts of one multi-group response back together: entries in the order of
/// the request's group list (`positions` says which entries each part holds), ListGroups' as
/// the union in owner order (Kafka concatenates its partitions' lists).
fn merge_parts(parts: Vec<(Vec<usize>, Resp)>) -> Resp {
    let total: usize = parts.iter().map(|(p, _)| p.len()).sum();
    let mut iter = parts.into_iter();
    let Some((first_pos, mut first)) = iter.next() else {
        return Resp::Kafka(ResponseKind::ListGroups(Default::default()));
    };
    let rest: Vec<(Vec<usize>, Resp)> = iter.collect();
    use ResponseKind as K;
    match &mut first {
        Resp::Describe(d) => merge_list(total, first_pos, &mut d.groups, rest, |r| match r {
            Resp::Describe(r) => Some(r.groups),
            _ => None,
        }),
        Resp::Kafka(K::DescribeGroups(d)) => {
            merge_list(total, first_pos, &mut d.groups, rest, |r| match r {
                Resp::Kafka(K::DescribeGroups(r)) => Some(r.groups),
                _ => None,
            })
        }
        Resp::Kafka(K::ConsumerGroupDescribe(d)) => {
            merge_list(total, first_pos, &mut d.groups, rest, |r| match r {
                Resp::Kafka(K::ConsumerGroupDescribe(r)) => Some(r.groups),
                _ => None,
            })
        }
        Resp::Kafka(K::DeleteGroups(d)) => {
            merge_list(total, first_pos, &mut d.results, rest, |r| match r {
                Resp::Kafka(K::DeleteGroups(r)) => Some(r.results),
                _ => None,
            })
        }
        Resp::Kafka(K::OffsetFetch(d)) => {
            merge_list(total, first_pos, &mut d.groups, rest, |r| match r {
                Resp::Kafka(K::OffsetFetch(r)) => Some(r.groups),
                _ => None,
            })
        }
        Resp::Kafka(K::ListGroups(d)) => {
            for (_, r) in rest {
                if let Resp::Kafka(K::ListGroups(r)) = r {
                    if d.error_code == 0 {
                        d.error_code = r.error_code;
                    }
                    d.groups.extend(r.groups);
                }
            }
        }
        _ => {}
    }
    first
}

/// Sets `first` to the entries of every part, in request order: part `k`'s entries fill the
/// positions it answered. A part without one entry per position (never expected) keeps its
/// entries, after the ordered ones.
fn merge_list<T>(
    total: usize,
    first_pos: Vec<usize>,
    first: &mut Vec<T>,
    rest: Vec<(Vec<usize>, Resp)>,
    take: impl Fn(Resp) -> Option<Vec<T>>,
) {
    let mut chunks = vec![(first_pos, std::mem::take(first))];
    for (pos, r) in rest {
        if let Some(entries) = take(r) {
            chunks.push((pos, entries));
        }
    }
    let mut slots: Vec<Option<T>> = (0..total).map(|_| None).collect();
    let mut extra = Vec::new();
    for (pos, entries) in chunks {
        if pos.len() != entries.len() {
            extra.extend(entries);
            continue;
        }
        for (p, e) in pos.into_iter().zip(entries) {
            slots[p] = Some(e);
        }
    }
    *first = slots.into_iter().flatten().chain(extra).collect();
}
