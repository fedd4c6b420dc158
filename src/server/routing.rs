//! Routing requests to the owners (docs/sharding.md, "Requests"). With one owner every job goes
//! to it unchanged. With several, a request about one group goes to the owner of the group's
//! coordinator partition ([`super::shards`]); a request without a group (Metadata, topic, ACL,
//! config and SCRAM admin, the data plane) goes to owner 0, which holds the global registries;
//! a request about several groups (ListGroups, DescribeGroups, ConsumerGroupDescribe,
//! StreamsGroupDescribe, DeleteGroups, OffsetFetch v8+) is split per owner and the parts merged
//! back in the request's order. A connection's batch is answered by one [`Reply`], its responses
//! in request order, whatever owners its requests went to: the connection's ordering rule holds
//! unchanged. A batch that spans owners is merged by its [`Answer`] when the connection polls
//! it, once every owner's part is in: no task sits between the owners and the connection.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use kafka_protocol::messages::ListGroupsRequest;
use tokio::sync::{mpsc, oneshot};

use super::owner::{Job, Reply};
use super::peer::Peer;
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

    /// Hand a connection's requests to their owner(s). The answer is one [`Reply`] with the
    /// responses in request order: the owner's own reply when every request went to one owner,
    /// else the owners' parts, which the [`Answer`] merges when the connection polls it (no task
    /// between the owners and the connection).
    pub async fn send(
        &self,
        items: Vec<(Header, Req)>,
        peer: Arc<Peer>,
    ) -> Result<Answer, OwnerGone> {
        let n = self.owners.len();
        if n == 1 {
            return one_owner(&self.owners[0], items, peer).await;
        }
        let plans: Vec<Plan> = items.iter().map(|(_, r)| plan(r, n)).collect();
        // The common case: every request of the batch for one owner (a connection's
        // heartbeats of one group): no split, no merge.
        if let Some(target) = single_target(&plans) {
            return one_owner(&self.owners[target], items, peer).await;
        }
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
        let mut waits: Vec<Part> = (0..n).map(|_| Part::Absent).collect();
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
            waits[o] = Part::Waiting(rx);
        }
        Ok(Answer::Split(Box::new(Merge { waits, slots, kept })))
    }
}

async fn one_owner(
    owner: &mpsc::Sender<Job>,
    items: Vec<(Header, Req)>,
    peer: Arc<Peer>,
) -> Result<Answer, OwnerGone> {
    let (reply, rx) = oneshot::channel();
    let job = Job { items, peer, reply };
    owner.send(job).await.map_err(|_| OwnerGone)?;
    Ok(Answer::One(rx))
}

/// The answer to a connection's requests ([`Router::send`]): a future of one [`Reply`], its
/// responses in request order. Dropping it drops every owner's reply channel, so an owner that
/// parked a JoinGroup of it sees its channel closed (and drops the request) once the connection
/// is gone, whichever owner that is.
pub(crate) enum Answer {
    /// Every request went to one owner: its reply as it is.
    One(oneshot::Receiver<Reply>),
    /// Requests on several owners: their parts, merged once the last is in.
    Split(Box<Merge>),
}

/// No reply can come: an owner dropped its part (it stopped, or a part did not fit).
#[derive(Debug)]
pub(crate) struct NoReply;

impl Answer {
    /// The reply if it is complete, without waiting (`Ok(None)`: not yet).
    pub fn try_take(&mut self) -> Result<Option<Reply>, NoReply> {
        match self {
            Answer::One(rx) => match rx.try_recv() {
                Ok(r) => Ok(Some(r)),
                Err(oneshot::error::TryRecvError::Empty) => Ok(None),
                Err(oneshot::error::TryRecvError::Closed) => Err(NoReply),
            },
            Answer::Split(m) => {
                for w in m.waits.iter_mut() {
                    if let Part::Waiting(rx) = w {
                        match rx.try_recv() {
                            Ok(r) => *w = Part::Done(r),
                            Err(oneshot::error::TryRecvError::Empty) => return Ok(None),
                            Err(oneshot::error::TryRecvError::Closed) => return Err(NoReply),
                        }
                    }
                }
                m.finish().map(Some)
            }
        }
    }
}

impl Future for Answer {
    type Output = Result<Reply, NoReply>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.get_mut() {
            Answer::One(rx) => Pin::new(rx).poll(cx).map_err(|_| NoReply),
            Answer::Split(m) => {
                let mut pending = false;
                for w in m.waits.iter_mut() {
                    if let Part::Waiting(rx) = w {
                        match Pin::new(rx).poll(cx) {
                            Poll::Ready(Ok(r)) => *w = Part::Done(r),
                            Poll::Ready(Err(_)) => return Poll::Ready(Err(NoReply)),
                            Poll::Pending => pending = true,
                        }
                    }
                }
                if pending {
                    return Poll::Pending;
                }
                Poll::Ready(m.finish())
            }
        }
    }
}

/// A split batch's parts: per owner, its part (if it got one); per request, where its
/// response is; the multi-group requests themselves (their parts went to the owners).
pub(crate) struct Merge {
    waits: Vec<Part>,
    slots: Vec<Slot>,
    kept: Vec<Option<(Header, Req)>>,
}

enum Part {
    /// This owner got no part of the batch.
    Absent,
    Waiting(oneshot::Receiver<Reply>),
    Done(Reply),
    /// Merged (the answer was taken).
    Taken,
}

impl Merge {
    /// One reply in request order from the owners' parts (all in).
    fn finish(&mut self) -> Result<Reply, NoReply> {
        // Take each owner's responses (and requests) out by index.
        let mut resps: Vec<Vec<Option<Resp>>> = Vec::with_capacity(self.waits.len());
        let mut items: Vec<Vec<Option<(Header, Req)>>> = Vec::with_capacity(self.waits.len());
        for w in self.waits.iter_mut() {
            let (i, rs) = match std::mem::replace(w, Part::Taken) {
                Part::Done(r) => (r.items, r.resps),
                Part::Absent => (Vec::new(), Vec::new()),
                Part::Waiting(_) | Part::Taken => return Err(NoReply),
            };
            items.push(i.into_iter().map(Some).collect());
            resps.push(rs.into_iter().map(Some).collect());
        }
        let slots = std::mem::take(&mut self.slots);
        let mut merged_items = Vec::with_capacity(slots.len());
        let mut merged = Vec::with_capacity(slots.len());
        for (slot, kept) in slots.into_iter().zip(self.kept.iter_mut()) {
            match slot {
                Slot::One(o, i) => {
                    let item = items.get_mut(o).and_then(|v| v.get_mut(i)?.take());
                    let resp = resps.get_mut(o).and_then(|v| v.get_mut(i)?.take());
                    let (Some(item), Some(resp)) = (item, resp) else {
                        return Err(NoReply);
                    };
                    merged_items.push(item);
                    merged.push(resp);
                }
                Slot::Split(at) => {
                    let Some(item) = kept.take() else {
                        return Err(NoReply);
                    };
                    let parts: Vec<(Vec<usize>, Resp)> = at
                        .into_iter()
                        .filter_map(|(o, i, pos)| {
                            Some((pos, resps.get_mut(o)?.get_mut(i)?.take()?))
                        })
                        .collect();
                    merged.push(merge_parts(parts));
                    merged_items.push(item);
                }
            }
        }
        Ok(Reply {
            items: merged_items,
            resps: merged,
        })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{
        DescribedGroup, StreamsGroupDescribeRequest, StreamsGroupDescribeResponse,
        StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse,
    };
    use kafka_protocol::messages::{GroupId, JoinGroupRequest};
    use kafka_protocol::protocol::StrBytes;

    // Placement over 2 owners (Java's String.hashCode, 50 partitions): g-b on owner 0, g-a and
    // g-c on owner 1 (as in tests/server_sharded.rs).
    const ON_0: &str = "g-b";
    const ON_1: &str = "g-a";
    const ALSO_ON_1: &str = "g-c";

    fn header(key: i16, correlation_id: i32) -> Header {
        Header {
            api_key: key,
            api_version: 0,
            correlation_id,
            client_id: None,
        }
    }

    fn heartbeat(correlation_id: i32, group: &str) -> (Header, Req) {
        let r = StreamsGroupHeartbeatRequest {
            group_id: group.into(),
            ..Default::default()
        };
        (header(88, correlation_id), Req::Heartbeat(r))
    }

    fn describe(correlation_id: i32, groups: &[&str]) -> (Header, Req) {
        let r = StreamsGroupDescribeRequest {
            group_ids: groups.iter().map(|g| g.to_string()).collect(),
            ..Default::default()
        };
        (header(89, correlation_id), Req::Describe(r))
    }

    fn join(correlation_id: i32, group: &str) -> (Header, Req) {
        let mut r = JoinGroupRequest::default();
        r.group_id = GroupId(StrBytes::from_string(group.into()));
        (
            header(11, correlation_id),
            Req::Kafka(RequestKind::JoinGroup(r)),
        )
    }

    /// A fake owner's answer: a heartbeat's member id is its group, a describe lists the groups
    /// it was asked for, in its order.
    fn answer(job: Job) -> (oneshot::Sender<Reply>, Reply) {
        let resps = job
            .items
            .iter()
            .map(|(_, req)| match req {
                Req::Heartbeat(r) => Resp::Heartbeat(StreamsGroupHeartbeatResponse {
                    member_id: r.group_id.clone(),
                    ..Default::default()
                }),
                Req::Describe(r) => Resp::Describe(StreamsGroupDescribeResponse {
                    groups: r
                        .group_ids
                        .iter()
                        .map(|g| DescribedGroup {
                            group_id: g.clone(),
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                }),
                other => panic!("unexpected {other:?}"),
            })
            .collect();
        (
            job.reply,
            Reply {
                items: job.items,
                resps,
            },
        )
    }

    /// (correlation id, what the response names) per response, in order.
    fn shown(reply: &Reply) -> Vec<(i32, String)> {
        reply
            .items
            .iter()
            .zip(&reply.resps)
            .map(|((h, _), r)| {
                let what = match r {
                    Resp::Heartbeat(r) => r.member_id.clone(),
                    Resp::Describe(r) => r
                        .groups
                        .iter()
                        .map(|g| g.group_id.as_str())
                        .collect::<Vec<_>>()
                        .join(","),
                    other => panic!("unexpected {other:?}"),
                };
                (h.correlation_id, what)
            })
            .collect()
    }

    fn two_owners() -> (Router, Vec<mpsc::Receiver<Job>>) {
        let (txs, rxs) = (0..2).map(|_| mpsc::channel(16)).unzip();
        (Router::new(txs), rxs)
    }

    fn peer() -> Arc<Peer> {
        Arc::new(Peer::anonymous("127.0.0.1"))
    }

    /// A batch mixing groups of both owners and a describe of groups on both: each owner gets
    /// its part, and the answer (complete only when both parts are in, whichever comes first)
    /// holds every response in request order, the describe's groups in the requested order.
    #[tokio::test]
    async fn a_batch_over_two_owners_is_answered_in_request_order() {
        assert_eq!(owner_of(ON_0, 2), 0);
        assert_eq!(owner_of(ON_1, 2), 1);
        assert_eq!(owner_of(ALSO_ON_1, 2), 1);
        let expected = vec![
            (1, ON_1.to_string()),
            (2, ON_0.to_string()),
            (3, format!("{ALSO_ON_1},{ON_0},{ON_1}")),
            (4, ALSO_ON_1.to_string()),
            (5, ON_0.to_string()),
        ];
        for owner_1_first in [true, false] {
            for by_polling in [true, false] {
                let (router, mut rxs) = two_owners();
                let batch = vec![
                    heartbeat(1, ON_1),
                    heartbeat(2, ON_0),
                    describe(3, &[ALSO_ON_1, ON_0, ON_1]),
                    heartbeat(4, ALSO_ON_1),
                    heartbeat(5, ON_0),
                ];
                let mut ans = router.send(batch, peer()).await.unwrap();
                assert!(matches!(ans, Answer::Split(_)));
                let part0 = rxs[0].try_recv().expect("owner 0's part");
                let part1 = rxs[1].try_recv().expect("owner 1's part");
                assert_eq!(part0.items.len(), 3, "2 heartbeats and the describe's part");
                assert_eq!(part1.items.len(), 3, "2 heartbeats and the describe's part");
                let (first, second) = if owner_1_first {
                    (part1, part0)
                } else {
                    (part0, part1)
                };
                let (tx, r) = answer(first);
                tx.send(r).ok().unwrap();
                if by_polling {
                    assert!(
                        futures::poll!(&mut ans).is_pending(),
                        "one part is not an answer"
                    );
                } else {
                    assert!(
                        ans.try_take().unwrap().is_none(),
                        "one part is not an answer"
                    );
                }
                let (tx, r) = answer(second);
                tx.send(r).ok().unwrap();
                let reply = if by_polling {
                    (&mut ans).await.unwrap()
                } else {
                    ans.try_take().unwrap().expect("both parts in")
                };
                assert_eq!(shown(&reply), expected);
            }
        }
    }

    /// A batch for one owner goes to it whole and comes back as its reply.
    #[tokio::test]
    async fn a_batch_for_one_owner_is_not_split() {
        let (router, mut rxs) = two_owners();
        let batch = vec![heartbeat(1, ON_1), describe(2, &[ALSO_ON_1, ON_1])];
        let mut ans = router.send(batch, peer()).await.unwrap();
        assert!(matches!(ans, Answer::One(_)));
        assert!(rxs[0].try_recv().is_err());
        let (tx, r) = answer(rxs[1].try_recv().unwrap());
        tx.send(r).ok().unwrap();
        let reply = ans.try_take().unwrap().unwrap();
        assert_eq!(
            shown(&reply),
            vec![(1, ON_1.into()), (2, format!("{ALSO_ON_1},{ON_1}"))]
        );
    }

    /// An owner that drops its part (it stopped) leaves no answer: the connection closes rather
    /// than write a partial or misordered batch.
    #[tokio::test]
    async fn a_lost_part_is_no_answer() {
        let (router, mut rxs) = two_owners();
        let batch = vec![heartbeat(1, ON_1), heartbeat(2, ON_0)];
        let mut ans = router.send(batch, peer()).await.unwrap();
        let (tx, r) = answer(rxs[0].try_recv().unwrap());
        tx.send(r).ok().unwrap();
        drop(rxs[1].try_recv().unwrap());
        assert!(ans.try_take().is_err());
        let (router, mut rxs) = two_owners();
        let batch = vec![heartbeat(1, ON_1), heartbeat(2, ON_0)];
        let ans = router.send(batch, peer()).await.unwrap();
        drop(rxs[0].try_recv().unwrap());
        let (tx, r) = answer(rxs[1].try_recv().unwrap());
        tx.send(r).ok().unwrap();
        assert!(ans.await.is_err());
    }

    /// The connection goes while a JoinGroup of its split batch is parked on one owner (the
    /// other owner's part already answered): that owner sees its reply channel closed, so it
    /// drops the parked request.
    #[tokio::test]
    async fn a_parked_part_sees_the_connection_go() {
        for answered_first in [true, false] {
            let (router, mut rxs) = two_owners();
            let batch = vec![heartbeat(1, ON_0), join(2, ON_1)];
            let mut ans = router.send(batch, peer()).await.unwrap();
            let parked = rxs[1].try_recv().unwrap();
            if answered_first {
                let (tx, r) = answer(rxs[0].try_recv().unwrap());
                tx.send(r).ok().unwrap();
            }
            assert!(ans.try_take().unwrap().is_none());
            assert!(!parked.reply.is_closed());
            drop(ans);
            assert!(
                parked.reply.is_closed(),
                "the parked join's channel is closed"
            );
        }
    }
}
