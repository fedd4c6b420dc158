//! Client-side partition assignors of classic consumer groups: what the group leader's Java
//! `KafkaConsumer` 4.4 runs between JoinGroup and SyncGroup — `range` (`RangeAssignor`),
//! `roundrobin` (`RoundRobinAssignor`), `sticky` (`StickyAssignor`) and `cooperative-sticky`
//! (`CooperativeStickyAssignor`) — with the same output for the same input, and the `consumer`
//! protocol payloads they read and write ([`protocol`]).
//!
//! The input is what the leader's `ConsumerCoordinator` has: the members of its JoinGroup
//! response in response order, each with its decoded subscription, and the partition count of
//! each topic. Kafka collects the members into a `HashMap` keyed by member id and the assignors
//! iterate it, so the order in which members are visited is Java's hash order
//! (`java_order::string_hash_map_order`), reproduced here.
//!
//! Not modelled: rack-aware assignment (the simulated cluster has no partition racks, so Kafka
//! never takes the rack path either), and the sticky assignors' general algorithm for members
//! with different subscriptions ([`AssignError::Heterogeneous`]): the simulated consumers share
//! one subscription, which takes Kafka's "constrained" path implemented here.

pub mod protocol;

use std::collections::{BTreeMap, BTreeSet};

use crate::assignor::consumer::java_order::string_hash_map_order;
use crate::util::sort;

/// A topic partition (`TopicPartition`).
pub type TopicPartition = (String, i32);

/// A member's decoded subscription (`ConsumerPartitionAssignor.Subscription`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Subscription {
    /// Subscribed topics (sorted on the wire).
    pub topics: Vec<String>,
    /// The assignor's user data.
    pub user_data: Option<Vec<u8>>,
    /// Partitions the member owns (sent from protocol version 1 on).
    pub owned_partitions: Vec<TopicPartition>,
    /// The member's generation; `None` for a negative generation, as Kafka's constructor does.
    pub generation_id: Option<i32>,
    /// The member's rack (`client.rack`).
    pub rack_id: Option<String>,
    /// From the JoinGroup response, not from the bytes.
    pub group_instance_id: Option<String>,
}

/// Why an assignment could not be computed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AssignError {
    /// The sticky assignors' general algorithm (members with different subscriptions) is not
    /// implemented.
    #[error("members subscribe to different topics: the sticky general algorithm is not modelled")]
    Heterogeneous,
    /// Kafka throws `IllegalStateException` here.
    #[error("illegal state: {0}")]
    IllegalState(&'static str),
}

/// The rebalance protocol a consumer follows (`RebalanceProtocol`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RebalanceProtocol {
    /// Revoke everything before rejoining.
    Eager,
    /// Keep owned partitions; revoke only what moves, then rejoin.
    Cooperative,
}

impl RebalanceProtocol {
    /// `eager` / `cooperative`.
    pub fn name(self) -> &'static str {
        match self {
            RebalanceProtocol::Eager => "eager",
            RebalanceProtocol::Cooperative => "cooperative",
        }
    }
}

/// One of Kafka's client-side assignors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientAssignor {
    /// `range`.
    Range,
    /// `roundrobin`.
    RoundRobin,
    /// `sticky` (eager).
    Sticky,
    /// `cooperative-sticky`.
    CooperativeSticky,
}

/// Every assignor, for name lookup.
const ALL: [ClientAssignor; 4] = [
    ClientAssignor::Range,
    ClientAssignor::RoundRobin,
    ClientAssignor::Sticky,
    ClientAssignor::CooperativeSticky,
];

/// The protocol a consumer with these assignors uses: cooperative when every one supports it
/// (Kafka's `ConsumerCoordinator` takes the highest protocol all assignors support).
pub fn common_protocol(assignors: &[ClientAssignor]) -> RebalanceProtocol {
    if !assignors.is_empty()
        && assignors
            .iter()
            .all(|a| *a == ClientAssignor::CooperativeSticky)
    {
        RebalanceProtocol::Cooperative
    } else {
        RebalanceProtocol::Eager
    }
}

impl ClientAssignor {
    /// By Kafka's name (`partition.assignment.strategy` short names).
    pub fn from_name(name: &str) -> Option<ClientAssignor> {
        ALL.into_iter().find(|a| a.name() == name)
    }

    /// Kafka's name (the JoinGroup protocol name).
    pub fn name(self) -> &'static str {
        match self {
            ClientAssignor::Range => "range",
            ClientAssignor::RoundRobin => "roundrobin",
            ClientAssignor::Sticky => "sticky",
            ClientAssignor::CooperativeSticky => "cooperative-sticky",
        }
    }

    /// The user data of this assignor's subscription, from what the consumer last got:
    /// `sticky` sends its last assignment and generation (nothing before the first assignment),
    /// `cooperative-sticky` its generation (-1 before the first).
    pub fn subscription_user_data(
        self,
        last_assignment: Option<&[TopicPartition]>,
        generation: i32,
    ) -> Option<Vec<u8>> {
        match self {
            ClientAssignor::Range | ClientAssignor::RoundRobin => None,
            ClientAssignor::Sticky => {
                protocol::encode_sticky_user_data(last_assignment?, generation).ok()
            }
            ClientAssignor::CooperativeSticky => Some(protocol::encode_generation(generation)),
        }
    }

    /// The assignment of every member, as the leader computes it. `members` in JoinGroup
    /// response order; `partitions_per_topic` the cluster's topics (topics nobody subscribes to
    /// are ignored, subscribed topics missing here get no assignment).
    pub fn assign(
        self,
        partitions_per_topic: &BTreeMap<String, i32>,
        members: &[(String, Subscription)],
    ) -> Result<BTreeMap<String, Vec<TopicPartition>>, AssignError> {
        // Kafka's `HashMap<String, Subscription>` of the members.
        let order = string_hash_map_order(members.iter().map(|(id, _)| id.as_str()));
        let subs: Vec<(&str, &Subscription)> = order
            .iter()
            .filter_map(|id| {
                members
                    .iter()
                    .find(|(m, _)| m == id)
                    .map(|(m, s)| (m.as_str(), s))
            })
            .collect();
        // `partitionsPerTopic`: a HashMap filled from the HashSet of every subscribed topic.
        let mut first_seen: Vec<&str> = Vec::new();
        for (_, s) in &subs {
            for t in &s.topics {
                if !first_seen.contains(&t.as_str()) {
                    first_seen.push(t);
                }
            }
        }
        let topics: Vec<(&str, i32)> = string_hash_map_order(first_seen)
            .into_iter()
            .filter_map(|t| {
                partitions_per_topic
                    .get(t)
                    .filter(|n| **n > 0)
                    .map(|n| (t, *n))
            })
            .collect();
        let out = match self {
            ClientAssignor::Range => range(&topics, &subs),
            ClientAssignor::RoundRobin => round_robin(&topics, &subs),
            ClientAssignor::Sticky | ClientAssignor::CooperativeSticky => {
                sticky(self, &topics, &subs)?
            }
        };
        Ok(sort::collect_map(
            out.into_iter().map(|(m, ps)| (m.to_string(), ps)),
        ))
    }
}

/// `AbstractPartitionAssignor.MemberInfo`'s order: members with a group instance id first, by
/// instance id, then by member id.
fn member_info_cmp(a: (&str, &Subscription), b: (&str, &Subscription)) -> std::cmp::Ordering {
    use crate::assignor::java_compat::cmp_strings;
    match (&a.1.group_instance_id, &b.1.group_instance_id) {
        (Some(x), Some(y)) => cmp_strings(x, y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => cmp_strings(a.0, b.0),
    }
}

fn empty_assignment<'a>(subs: &[(&'a str, &Subscription)]) -> Vec<(&'a str, Vec<TopicPartition>)> {
    subs.iter().map(|(m, _)| (*m, Vec::new())).collect()
}

fn entry<'b>(
    out: &'b mut [(&str, Vec<TopicPartition>)],
    member: &str,
) -> &'b mut Vec<TopicPartition> {
    let i = out
        .iter()
        .position(|(m, _)| *m == member)
        .expect("every member has an entry");
    &mut out[i].1
}

/// `RangeAssignor` without racks: per topic, the subscribed members in `MemberInfo` order take
/// consecutive ranges, the first `partitions % members` one partition more.
fn range<'a>(
    topics: &[(&str, i32)],
    subs: &[(&'a str, &Subscription)],
) -> Vec<(&'a str, Vec<TopicPartition>)> {
    let mut out = empty_assignment(subs);
    for &(topic, count) in topics {
        let mut consumers: Vec<(&str, &Subscription)> = subs
            .iter()
            .filter(|(_, s)| s.topics.iter().any(|t| t == topic))
            .copied()
            .collect();
        sort::by(&mut consumers, |a, b| member_info_cmp(*a, *b));
        if consumers.is_empty() {
            continue;
        }
        let n = consumers.len() as i32;
        let (per, mut extra) = (count / n, count % n);
        let mut next = 0;
        for (m, _) in consumers {
            if next >= count {
                break;
            }
            let take = per + i32::from(extra > 0);
            let end = (next + take).min(count);
            if end > next {
                entry(&mut out, m).extend((next..end).map(|p| (topic.to_string(), p)));
                if end - next > per {
                    extra -= 1;
                }
            }
            next = end;
        }
    }
    out
}

/// `RoundRobinAssignor`: every partition (topics sorted) to the next member in `MemberInfo`
/// order that subscribes to its topic.
fn round_robin<'a>(
    topics: &[(&str, i32)],
    subs: &[(&'a str, &Subscription)],
) -> Vec<(&'a str, Vec<TopicPartition>)> {
    let mut out = empty_assignment(subs);
    let mut sorted: Vec<(&str, &Subscription)> = subs.to_vec();
    sort::by(&mut sorted, |a, b| member_info_cmp(*a, *b));
    let mut names: Vec<&str> = topics.iter().map(|(t, _)| *t).collect();
    sort::by(&mut names, |a, b| {
        crate::assignor::java_compat::cmp_strings(a, b)
    });
    let mut cursor = 0usize;
    for t in names {
        let count = topics.iter().find(|(n, _)| *n == t).map_or(0, |x| x.1);
        for p in 0..count {
            while !sorted[cursor].1.topics.iter().any(|x| x == t) {
                cursor = (cursor + 1) % sorted.len();
            }
            entry(&mut out, sorted[cursor].0).push((t.to_string(), p));
            cursor = (cursor + 1) % sorted.len();
        }
    }
    out
}

/// What a sticky assignor reads from a subscription (`AbstractStickyAssignor.MemberData`).
fn member_data(kind: ClientAssignor, s: &Subscription) -> (Vec<TopicPartition>, Option<i32>) {
    match kind {
        ClientAssignor::Sticky => match s.user_data.as_deref() {
            None | Some([]) => (Vec::new(), None),
            Some(b) => protocol::decode_sticky_user_data(b),
        },
        _ => {
            if let Some(g) = s.generation_id {
                return (s.owned_partitions.clone(), Some(g));
            }
            let generation = s.user_data.as_deref().map(|b| match b.get(..4) {
                Some(x) => i32::from_be_bytes([x[0], x[1], x[2], x[3]]),
                None => -1,
            });
            (s.owned_partitions.clone(), generation)
        }
    }
}

/// `AbstractStickyAssignor.assignPartitions` for members that all subscribe to the same topics
/// (`ConstrainedAssignmentBuilder`), plus `CooperativeStickyAssignor`'s removal of partitions
/// that change owner (they are handed out in the follow-up rebalance).
fn sticky<'a>(
    kind: ClientAssignor,
    topics: &[(&str, i32)],
    subs: &[(&'a str, &Subscription)],
) -> Result<Vec<(&'a str, Vec<TopicPartition>)>, AssignError> {
    let exists = |t: &str| topics.iter().any(|(n, _)| *n == t);
    // allSubscriptionsEqual: resolve claims on the same partition by generation.
    let mut equal = true;
    let mut first: Option<BTreeSet<&str>> = None;
    let mut owned: Vec<(&str, Vec<TopicPartition>)> = Vec::new();
    let mut owner_of: BTreeMap<TopicPartition, usize> = BTreeMap::new();
    let mut multiple: BTreeSet<TopicPartition> = BTreeSet::new();
    for (i, (m, s)) in subs.iter().enumerate() {
        let set: BTreeSet<&str> = sort::collect_set(s.topics.iter().map(String::as_str));
        match &first {
            Some(f) if !f.is_empty() => equal &= *f == set,
            _ => first = Some(set),
        }
        let (partitions, generation) = member_data(kind, s);
        let generation = generation.unwrap_or(-1);
        owned.push((m, Vec::new()));
        for tp in partitions {
            if !exists(&tp.0) {
                continue;
            }
            match owner_of.get(&tp).copied() {
                None => {
                    owned[i].1.push(tp.clone());
                    owner_of.insert(tp, i);
                }
                Some(other) => {
                    let other_generation = subs[other].1.generation_id.unwrap_or(-1);
                    let remove = |v: &mut Vec<TopicPartition>, tp: &TopicPartition| {
                        if let Some(k) = v.iter().position(|x| x == tp) {
                            v.remove(k);
                        }
                    };
                    if generation == other_generation {
                        multiple.insert(tp.clone());
                        remove(&mut owned[other].1, &tp);
                        owner_of.insert(tp, i);
                    } else if generation > other_generation {
                        owned[i].1.push(tp.clone());
                        remove(&mut owned[other].1, &tp);
                        owner_of.insert(tp, i);
                    }
                }
            }
        }
    }
    if !equal {
        return Err(AssignError::Heterogeneous);
    }
    let total: i32 = topics.iter().map(|(_, n)| n).sum();
    let n = subs.len() as i32;
    let (min_quota, max_quota) = (total / n, (total + n - 1) / n);
    let expected_over = (total % n) as usize;
    let mut current_over = 0usize;
    let mut assignment: Vec<(&str, Vec<TopicPartition>)> = empty_assignment(subs);
    let mut maybe_revoked: BTreeMap<TopicPartition, &str> = BTreeMap::new();
    let mut under: Vec<&str> = Vec::new();
    let mut exactly: Vec<&str> = Vec::new();
    let mut assigned: BTreeSet<TopicPartition> = BTreeSet::new();
    let (min_q, max_q) = (min_quota as usize, max_quota as usize);
    for (i, (m, list)) in owned.iter().enumerate() {
        let mut mine = list.clone();
        sort::by(&mut mine, |a, b| a.1.cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
        mine.retain(|tp| !multiple.contains(tp));
        let target = &mut assignment[i].1;
        if mine.len() < min_q {
            assigned.extend(mine.iter().cloned());
            target.extend(mine);
            under.push(m);
            continue;
        }
        let keep = if mine.len() >= max_q && current_over < expected_over {
            current_over += 1;
            if current_over == expected_over {
                exactly.clear();
            }
            max_q
        } else {
            min_q
        };
        for tp in &mine[keep..] {
            maybe_revoked.insert(tp.clone(), m);
        }
        assigned.extend(mine[..keep].iter().cloned());
        target.extend(mine.into_iter().take(keep));
        if keep == min_q && current_over < expected_over {
            exactly.push(m);
        }
    }
    let mut names: Vec<&str> = topics.iter().map(|(t, _)| *t).collect();
    sort::by(&mut names, |a, b| {
        crate::assignor::java_compat::cmp_strings(a, b)
    });
    let mut unassigned: Vec<TopicPartition> = Vec::new();
    for t in names {
        let count = topics.iter().find(|(x, _)| *x == t).map_or(0, |x| x.1);
        for p in 0..count {
            let tp = (t.to_string(), p);
            if !assigned.contains(&tp) {
                unassigned.push(tp);
            }
        }
    }
    sort::by(&mut under, |a, b| {
        crate::assignor::java_compat::cmp_strings(a, b)
    });
    sort::by(&mut exactly, |a, b| {
        crate::assignor::java_compat::cmp_strings(a, b)
    });
    // assignRoundRobin: `cursor` is the LinkedList iterator over `under`.
    let mut transferring: Vec<(TopicPartition, &str)> = Vec::new();
    let mut cursor = 0usize;
    for tp in unassigned {
        let consumer = if cursor < under.len() {
            cursor += 1;
            under[cursor - 1]
        } else if under.is_empty() {
            if exactly.is_empty() {
                return Err(AssignError::IllegalState(
                    "No more unfilled consumers to be assigned.",
                ));
            }
            // `poll()`: a member already at minQuota, so it cannot hit minQuota again below.
            exactly.remove(0)
        } else {
            cursor = 1;
            under[0]
        };
        let list = entry(&mut assignment, consumer);
        list.push(tp.clone());
        let count = list.len();
        if maybe_revoked.get(&tp).is_some_and(|o| *o != consumer) || multiple.contains(&tp) {
            transferring.push((tp, consumer));
        }
        if count == min_q && cursor > 0 {
            // `iterator.remove()` of the member just returned.
            cursor -= 1;
            under.remove(cursor);
            exactly.push(consumer);
        } else if count == max_q {
            current_over += 1;
        }
    }
    if !under.is_empty() {
        if current_over != expected_over {
            return Err(AssignError::IllegalState(
                "We haven't reached the expected number of members with more than the minQuota partitions, but no more partitions to be assigned",
            ));
        }
        for m in &under {
            if entry(&mut assignment, m).len() != min_q {
                return Err(AssignError::IllegalState(
                    "a consumer doesn't reach minQuota partitions, and no more partitions to be assigned",
                ));
            }
        }
    }
    if kind == ClientAssignor::CooperativeSticky {
        for (tp, consumer) in transferring {
            let list = entry(&mut assignment, consumer);
            if let Some(k) = list.iter().position(|x| *x == tp) {
                list.remove(k);
            }
        }
    }
    Ok(assignment)
}

#[cfg(test)]
mod tests;
