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

use crate::util::map::BTreeMap;

use crate::assignor::consumer::java_order::string_hash_map_order;
use crate::assignor::java_compat::cmp_strings;
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

    /// The assignment of every member (by member id), as the leader computes it. `members` in JoinGroup
    /// response order; `partitions_per_topic` the cluster's topics (topics nobody subscribes to
    /// are ignored, subscribed topics missing here get no assignment).
    pub fn assign(
        self,
        partitions_per_topic: &BTreeMap<String, i32>,
        members: &[(String, Subscription)],
    ) -> Result<Vec<(String, Vec<TopicPartition>)>, AssignError> {
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
        let mut out: Vec<(String, Vec<TopicPartition>)> =
            out.into_iter().map(|(m, ps)| (m.to_string(), ps)).collect();
        sort::by(&mut out, |a, b| cmp_strings(&a.0, &b.0));
        Ok(out)
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
    sort::by(&mut names, |a, b| cmp_strings(a, b));
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

/// Dense partition numbering: topics by name, partitions in order (the order of Kafka's
/// `getAllTopicPartitions` over sorted topics). Indices instead of `(String, i32)` keys keep the
/// assignor free of extra `BTreeMap` instantiations in the wasm module.
struct Partitions<'a> {
    /// (topic, first index, count), topics sorted.
    topics: Vec<(&'a str, usize, i32)>,
    total: usize,
}

impl<'a> Partitions<'a> {
    fn new(topics: &[(&'a str, i32)]) -> Self {
        let mut sorted: Vec<(&str, i32)> = topics.to_vec();
        sort::by(&mut sorted, |a, b| cmp_strings(a.0, b.0));
        let mut out = Vec::with_capacity(sorted.len());
        let mut next = 0usize;
        for (t, n) in sorted {
            out.push((t, next, n));
            next += n.max(0) as usize;
        }
        Partitions {
            topics: out,
            total: next,
        }
    }

    fn index(&self, topic: &str, partition: i32) -> Option<usize> {
        let (_, first, n) = self.topics.iter().find(|(t, _, _)| *t == topic)?;
        (0..*n)
            .contains(&partition)
            .then(|| first + partition as usize)
    }

    /// (topic position, partition) of an index.
    fn key(&self, index: usize) -> (usize, i32) {
        let pos = self
            .topics
            .iter()
            .rposition(|(_, first, _)| *first <= index)
            .unwrap_or(0);
        (pos, (index - self.topics[pos].1) as i32)
    }

    fn partition(&self, index: usize) -> TopicPartition {
        let (pos, p) = self.key(index);
        (self.topics[pos].0.to_string(), p)
    }
}

fn remove_value(v: &mut Vec<usize>, x: usize) {
    if let Some(k) = v.iter().position(|y| *y == x) {
        v.remove(k);
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
    let parts = Partitions::new(topics);
    // allSubscriptionsEqual: resolve claims on the same partition by generation.
    let mut equal = true;
    let mut first: Vec<&str> = Vec::new();
    let mut owned: Vec<Vec<usize>> = Vec::with_capacity(subs.len());
    let mut owner_of: Vec<Option<usize>> = vec![None; parts.total];
    let mut multiple: Vec<bool> = vec![false; parts.total];
    for (i, (_, s)) in subs.iter().enumerate() {
        let mut set: Vec<&str> = s.topics.iter().map(String::as_str).collect();
        sort::sort(&mut set);
        set.dedup();
        if first.is_empty() {
            first = set;
        } else {
            equal &= first == set;
        }
        let (partitions, generation) = member_data(kind, s);
        let generation = generation.unwrap_or(-1);
        owned.push(Vec::new());
        for (t, p) in partitions {
            // Partitions of topics nobody subscribes to are ignored.
            let Some(tp) = parts.index(&t, p) else {
                continue;
            };
            match owner_of[tp] {
                None => {
                    owned[i].push(tp);
                    owner_of[tp] = Some(i);
                }
                Some(other) => {
                    let other_generation = subs[other].1.generation_id.unwrap_or(-1);
                    if generation == other_generation {
                        multiple[tp] = true;
                        remove_value(&mut owned[other], tp);
                        owner_of[tp] = Some(i);
                    } else if generation > other_generation {
                        owned[i].push(tp);
                        remove_value(&mut owned[other], tp);
                        owner_of[tp] = Some(i);
                    }
                }
            }
        }
    }
    if !equal {
        return Err(AssignError::Heterogeneous);
    }
    let n = subs.len();
    let total = parts.total;
    let (min_q, max_q) = (total / n, total.div_ceil(n));
    let expected_over = total % n;
    let mut current_over = 0usize;
    let mut assignment: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut maybe_revoked: Vec<Option<usize>> = vec![None; total];
    let mut under: Vec<usize> = Vec::new();
    let mut exactly: Vec<usize> = Vec::new();
    let mut assigned: Vec<bool> = vec![false; total];
    for (i, list) in owned.iter().enumerate() {
        let mut mine = list.clone();
        sort::by(&mut mine, |a, b| {
            let (ka, kb) = (parts.key(*a), parts.key(*b));
            (ka.1, ka.0).cmp(&(kb.1, kb.0))
        });
        mine.retain(|tp| !multiple[*tp]);
        if mine.len() < min_q {
            for tp in &mine {
                assigned[*tp] = true;
            }
            assignment[i] = mine;
            under.push(i);
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
            maybe_revoked[*tp] = Some(i);
        }
        mine.truncate(keep);
        for tp in &mine {
            assigned[*tp] = true;
        }
        assignment[i] = mine;
        if keep == min_q && current_over < expected_over {
            exactly.push(i);
        }
    }
    let by_name = |a: &usize, b: &usize| cmp_strings(subs[*a].0, subs[*b].0);
    sort::by(&mut under, by_name);
    sort::by(&mut exactly, by_name);
    // assignRoundRobin: `cursor` is the LinkedList iterator over `under`.
    let mut transferring: Vec<(usize, usize)> = Vec::new();
    let mut cursor = 0usize;
    for tp in (0..total).filter(|tp| !assigned[*tp]) {
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
        assignment[consumer].push(tp);
        let count = assignment[consumer].len();
        if maybe_revoked[tp].is_some_and(|o| o != consumer) || multiple[tp] {
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
        if under.iter().any(|m| assignment[*m].len() != min_q) {
            return Err(AssignError::IllegalState(
                "a consumer doesn't reach minQuota partitions, and no more partitions to be assigned",
            ));
        }
    }
    if kind == ClientAssignor::CooperativeSticky {
        for (tp, consumer) in transferring {
            remove_value(&mut assignment[consumer], tp);
        }
    }
    Ok(subs
        .iter()
        .zip(assignment)
        .map(|((m, _), a)| (*m, a.into_iter().map(|tp| parts.partition(tp)).collect()))
        .collect())
}

#[cfg(test)]
mod tests;
