//! `uniform` when members subscribe to different topics (Kafka's
//! `UniformHeterogeneousAssignmentBuilder`): keep every owned partition that is still subscribed,
//! hand each unowned partition to the least loaded subscriber (topics with most partitions per
//! subscriber first), then move partitions from the most to the least loaded subscribers, topic by
//! topic, for at most 16 rounds or until a full round moves nothing.
//!
//! All choices follow total orders (load, then member index in `GroupSpec` order; partitions per
//! subscriber, subscriber count, then topic id), so only the member order and the topic ids matter.

use crate::util::map::{BTreeMap, BTreeSet};
use std::cmp::Ordering;

use rustc_hash::FxHashMap;

use super::java_order::{JavaAssignmentMap, JavaHashTable};

use super::{
    AssignorError, GroupAssignment, GroupSpec, TopicId, TopicMetadata, unknown_topic_error,
};

const MAX_BALANCE_ROUNDS: usize = 16;
const NO_OWNER: i32 = -1;

struct Builder<'a> {
    topics: &'a TopicMetadata,
    /// Subscriber indexes per topic, in member order.
    subscribers: BTreeMap<TopicId, Vec<usize>>,
    target: Vec<BTreeMap<TopicId, BTreeSet<i32>>>,
    /// Per member, Kafka's copy of its assignment once changed (for the record order).
    copies: Vec<Option<JavaAssignmentMap>>,
    group: &'a GroupSpec,
    sizes: Vec<i64>,
    owners: FxHashMap<TopicId, Vec<i32>>,
}

pub(super) fn assign(
    group: &GroupSpec,
    topics: &TopicMetadata,
) -> Result<GroupAssignment, AssignorError> {
    let mut subscribers: BTreeMap<TopicId, Vec<usize>> = BTreeMap::new();
    for (index, member) in group.members.iter().enumerate() {
        for topic in &member.subscribed_topics {
            topics
                .num_partitions(topic)
                .ok_or_else(|| unknown_topic_error(topic))?;
            let list = subscribers.entry(*topic).or_default();
            // A subscription is a set: a repeated topic counts once.
            if list.last() != Some(&index) {
                list.push(index);
            }
        }
    }
    if subscribers.is_empty() {
        return Ok(GroupAssignment::default());
    }
    let owners = subscribers
        .keys()
        .map(|topic| {
            let count = topics.num_partitions(topic).unwrap_or(0);
            (*topic, vec![NO_OWNER; count as usize])
        })
        .collect();
    let mut builder = Builder {
        topics,
        subscribers,
        target: Vec::with_capacity(group.members.len()),
        copies: vec![None; group.members.len()],
        group,
        sizes: vec![0; group.members.len()],
        owners,
    };
    builder.keep_owned(group)?;
    builder.assign_unowned();
    builder.balance();
    Ok(GroupAssignment::from_uniform(
        group,
        builder.target,
        builder.copies,
    ))
}

impl Builder<'_> {
    fn num_partitions(&self, topic: &TopicId) -> i32 {
        self.topics.num_partitions(topic).unwrap_or(0)
    }

    /// Kafka's topic order: most partitions per subscriber first, then fewer subscribers, then id.
    fn topic_order(&self, a: &TopicId, b: &TopicId) -> Ordering {
        let per_subscriber =
            |t: &TopicId| f64::from(self.num_partitions(t)) / self.subscribers[t].len() as f64;
        per_subscriber(b)
            .total_cmp(&per_subscriber(a))
            .then(self.subscribers[a].len().cmp(&self.subscribers[b].len()))
            .then(a.cmp(b))
    }

    fn sorted_topics(&self, topics: impl Iterator<Item = TopicId>) -> Vec<TopicId> {
        let mut sorted: Vec<TopicId> = topics.collect();
        crate::util::sort::by(&mut sorted, |a, b| self.topic_order(a, b));
        sorted
    }

    fn keep_owned(&mut self, group: &GroupSpec) -> Result<(), AssignorError> {
        for (index, member) in group.members.iter().enumerate() {
            let mut kept: BTreeMap<TopicId, BTreeSet<i32>> = BTreeMap::new();
            for (topic, partitions) in &member.assignment {
                if !member.subscribed_topics.contains(topic) {
                    JavaAssignmentMap::copy_on_write(&mut self.copies[index], &member.assignment)
                        .remove_topic(topic);
                    continue;
                }
                let owners = self
                    .owners
                    .get_mut(topic)
                    .expect("subscribed topics have owners");
                self.sizes[index] += partitions.len() as i64;
                let num_partitions = owners.len();
                for partition in partitions {
                    let slot = usize::try_from(*partition)
                        .ok()
                        .and_then(|p| owners.get_mut(p))
                        .ok_or_else(|| {
                            AssignorError::InvalidInput(format!(
                                "member {} owns partition {partition} of topic {topic}, which has {num_partitions} partitions",
                                member.member_id
                            ))
                        })?;
                    *slot = index as i32;
                }
                kept.entry(*topic)
                    .or_default()
                    .extend(partitions.iter().copied());
            }
            kept.retain(|_, p| !p.is_empty());
            self.target.push(kept);
        }
        Ok(())
    }

    fn assign_unowned(&mut self) {
        let unowned: Vec<(TopicId, Vec<i32>)> = self
            .owners
            .iter()
            .map(|(topic, owners)| {
                let free = (0..owners.len() as i32)
                    .filter(|p| owners[*p as usize] == NO_OWNER)
                    .collect::<Vec<_>>();
                (*topic, free)
            })
            .filter(|(_, free)| !free.is_empty())
            .collect();
        let unowned: BTreeMap<TopicId, Vec<i32>> = crate::util::sort::collect_map(unowned);
        let mut balancer = Balancer::default();
        for topic in self.sorted_topics(unowned.keys().copied()) {
            balancer.initialize(&self.subscribers[&topic], &self.sizes);
            for partition in &unowned[&topic] {
                let member = balancer.next_least_loaded(&self.sizes);
                self.move_partition(topic, *partition, member);
            }
        }
    }

    fn balance(&mut self) {
        let candidates: Vec<TopicId> = self
            .subscribers
            .iter()
            .filter(|(_, s)| s.len() >= 2)
            .map(|(t, _)| *t)
            .collect();
        if candidates.is_empty() {
            return;
        }
        let sorted = self.sorted_topics(candidates.into_iter());
        let mut balancer = Balancer::default();
        let mut last_moving_topic: Option<usize> = None;
        for _ in 0..MAX_BALANCE_ROUNDS {
            for (index, topic) in sorted.iter().enumerate() {
                // A whole round since the last move changed nothing: done.
                if last_moving_topic == Some(index) {
                    return;
                }
                let moved = self.balance_topic(*topic, &mut balancer);
                if moved > 0 || last_moving_topic.is_none() {
                    last_moving_topic = Some(index);
                }
            }
        }
    }

    fn balance_topic(&mut self, topic: TopicId, balancer: &mut Balancer) -> usize {
        let subscribers = self.subscribers[&topic].clone();
        if balancer.initialize(&subscribers, &self.sizes) <= 1 {
            return 0;
        }
        let owners = &self.owners[&topic];
        let mut partitions: Vec<i32> = (0..owners.len() as i32).collect();
        crate::util::sort::by_key(&mut partitions, |p| (owners[*p as usize], *p));
        // Each owner's partitions are one run of `partitions`: [start, end).
        let mut runs: FxHashMap<i32, (usize, usize)> = FxHashMap::default();
        for (i, p) in partitions.iter().enumerate() {
            runs.entry(owners[*p as usize]).or_insert((i, i)).1 = i + 1;
        }
        let mut moved = 0;
        while !balancer.is_balanced() {
            let donor = loop {
                match balancer.next_most_loaded(&self.sizes) {
                    None => break None,
                    Some(m) if runs.get(&(m as i32)).is_some_and(|(s, e)| e > s) => break Some(m),
                    Some(_) => balancer.exclude_most_loaded(),
                }
            };
            let Some(donor) = donor else { break };
            let run = runs.get_mut(&(donor as i32)).expect("donor has a run");
            run.1 -= 1;
            let partition = partitions[run.1];
            let receiver = balancer.next_least_loaded(&self.sizes);
            if balancer.is_balanced() {
                break;
            }
            self.move_partition(topic, partition, receiver);
            moved += 1;
        }
        moved
    }

    fn move_partition(&mut self, topic: TopicId, partition: i32, member: usize) {
        let owners = self.owners.get_mut(&topic).expect("subscribed topic");
        let previous = owners[partition as usize];
        owners[partition as usize] = member as i32;
        if previous != NO_OWNER {
            let previous = previous as usize;
            if let Some(set) = self.target[previous].get_mut(&topic) {
                set.remove(&partition);
                if set.is_empty() {
                    self.target[previous].remove(&topic);
                }
            }
            JavaAssignmentMap::copy_on_write(
                &mut self.copies[previous],
                &self.group.members[previous].assignment,
            )
            .remove_partition(&topic, partition);
            self.sizes[previous] -= 1;
        }
        // Kafka sizes a new partition set for this topic's fair share.
        let subscribers = self.subscribers[&topic].len() as i32;
        let share = (self.num_partitions(&topic) + subscribers - 1) / subscribers;
        JavaAssignmentMap::copy_on_write(
            &mut self.copies[member],
            &self.group.members[member].assignment,
        )
        .add_partition(topic, partition, || {
            JavaHashTable::with_capacity((share as f32 / 0.75f32 + 1.0f32) as usize)
        });
        self.target[member]
            .entry(topic)
            .or_default()
            .insert(partition);
        self.sizes[member] += 1;
    }
}

/// Kafka's `MemberAssignmentBalancer`: the subscribers of one topic sorted by load, handing out
/// least loaded members round-robin within the lowest load level and most loaded ones from the top
/// level down. It reads the live loads, so it sees every move made since `initialize`.
#[derive(Default)]
struct Balancer {
    sorted: Vec<usize>,
    least_loaded_end: usize,
    least_loaded_count: i64,
    next_least_loaded: usize,
    most_loaded_start: isize,
    most_loaded_end: isize,
    most_loaded_count: i64,
    next_most_loaded: isize,
}

impl Balancer {
    /// Returns the load spread (most minus least loaded).
    fn initialize(&mut self, members: &[usize], sizes: &[i64]) -> i64 {
        self.sorted.clear();
        self.sorted.extend_from_slice(members);
        crate::util::sort::by_key(&mut self.sorted, |m| (sizes[*m], *m));
        let least = sizes[self.sorted[0]];
        let most = sizes[*self.sorted.last().expect("a topic has subscribers")];
        let len = self.sorted.len() as isize;
        self.least_loaded_end = 0;
        self.least_loaded_count = least - 1;
        self.next_least_loaded = 0;
        self.most_loaded_start = len;
        self.most_loaded_end = len;
        self.most_loaded_count = most + 1;
        self.next_most_loaded = len - 1;
        most - least
    }

    fn size_at(&self, sizes: &[i64], position: isize) -> i64 {
        sizes[self.sorted[position as usize]]
    }

    fn next_least_loaded(&mut self, sizes: &[i64]) -> usize {
        if self.next_least_loaded >= self.least_loaded_end {
            self.least_loaded_count += 1;
            while self.least_loaded_end < self.sorted.len()
                && sizes[self.sorted[self.least_loaded_end]] == self.least_loaded_count
            {
                self.least_loaded_end += 1;
            }
            self.next_least_loaded = 0;
        }
        let member = self.sorted[self.next_least_loaded];
        self.next_least_loaded += 1;
        member
    }

    fn next_most_loaded(&mut self, sizes: &[i64]) -> Option<usize> {
        if self.next_most_loaded < self.most_loaded_start {
            self.most_loaded_count =
                if self.most_loaded_end <= self.most_loaded_start && self.most_loaded_start > 0 {
                    self.size_at(sizes, self.most_loaded_start - 1)
                } else {
                    self.most_loaded_count - 1
                };
            while self.most_loaded_start > 0
                && self.size_at(sizes, self.most_loaded_start - 1) == self.most_loaded_count
            {
                self.most_loaded_start -= 1;
            }
            self.next_most_loaded = self.most_loaded_end - 1;
        }
        if self.next_most_loaded < 0 {
            return None;
        }
        let member = self.sorted[self.next_most_loaded as usize];
        self.next_most_loaded -= 1;
        Some(member)
    }

    /// Drops the member last returned by `next_most_loaded` (it has nothing to give).
    fn exclude_most_loaded(&mut self) {
        let returned = (self.next_most_loaded + 1) as usize;
        let last = (self.most_loaded_end - 1) as usize;
        self.sorted.swap(returned, last);
        self.most_loaded_end -= 1;
    }

    fn is_balanced(&self) -> bool {
        self.most_loaded_count - self.least_loaded_count <= 1
    }
}
