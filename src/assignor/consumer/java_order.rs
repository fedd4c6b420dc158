//! Iteration orders of Java's `HashMap`/`HashSet`, reproduced. Kafka's assignors iterate such
//! collections (members, subscribed topics, the partitions a member owns) and the order decides
//! who keeps which partition, so an exact port must iterate the same way.
//!
//! A `HashMap` iterates its table bucket by bucket; a bucket lists its keys in insertion order
//! (a resize splits a bucket into two, keeping the relative order). The bucket of a key is
//! `(h ^ (h >>> 16)) & (capacity - 1)` where `h` is the key's `hashCode()`, so the order depends on
//! the hash codes, the insertion order and the table's capacity, which depends on how the map was
//! built. [`JavaHashTable`] replays that. Not modelled: tree bins (a bucket of 9+ keys in a table of
//! 64+ buckets), which no realistic group reaches.

/// Java's `String.hashCode()` (over UTF-16 code units, wrapping).
pub fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16().fold(0i32, |h, unit| {
        h.wrapping_mul(31).wrapping_add(i32::from(unit))
    })
}

/// Java's `String.compareTo` (UTF-16 code units; differs from byte order only beyond the BMP).
pub fn java_string_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

use rustc_hash::FxHashMap;

use super::TopicId;

const MAXIMUM_CAPACITY: usize = 1 << 30;
const TREEIFY_THRESHOLD: usize = 8;
const MIN_TREEIFY_CAPACITY: usize = 64;

/// `HashMap.tableSizeFor`: the next power of two, at least 1.
fn table_size_for(capacity: usize) -> usize {
    capacity.max(1).next_power_of_two().min(MAXIMUM_CAPACITY)
}

/// The bucket layout of a Java `HashMap` (or the map inside a `HashSet`), keys only.
#[derive(Debug, Clone)]
pub struct JavaHashTable<K> {
    buckets: Vec<Vec<(i32, K)>>,
    /// Before the first insertion: the initial capacity (0 for the default); afterwards the resize
    /// threshold, as in Java.
    threshold: usize,
    size: usize,
}

impl<K: PartialEq> JavaHashTable<K> {
    /// `new HashMap()` / `new HashSet()`.
    pub fn new() -> Self {
        JavaHashTable {
            buckets: Vec::new(),
            threshold: 0,
            size: 0,
        }
    }

    /// `new HashMap(initialCapacity)` / `new HashSet(initialCapacity)`.
    pub fn with_capacity(initial_capacity: usize) -> Self {
        JavaHashTable {
            buckets: Vec::new(),
            threshold: table_size_for(initial_capacity),
            size: 0,
        }
    }

    /// `new HashSet(collection)`: `new HashMap(max((int) (n / .75f) + 1, 16))`, then every element.
    pub fn copy_of(keys: impl IntoIterator<Item = (i32, K)>) -> Self
    where
        K: Clone,
    {
        let keys: Vec<(i32, K)> = keys.into_iter().collect();
        let capacity = ((keys.len() as f32 / 0.75f32) as usize + 1).max(16);
        let mut table = Self::with_capacity(capacity);
        for (hash, key) in keys {
            table.insert(hash, key);
        }
        table
    }

    fn spread(hash: i32) -> u32 {
        let h = hash as u32;
        h ^ (h >> 16)
    }

    fn resize(&mut self) {
        let old_capacity = self.buckets.len();
        let old_threshold = self.threshold;
        let (new_capacity, new_threshold);
        if old_capacity > 0 {
            if old_capacity >= MAXIMUM_CAPACITY {
                self.threshold = usize::MAX;
                return;
            }
            new_capacity = old_capacity << 1;
            new_threshold = if old_capacity >= 16 {
                old_threshold << 1
            } else {
                (new_capacity as f32 * 0.75f32) as usize
            };
        } else if old_threshold > 0 {
            new_capacity = old_threshold;
            new_threshold = (new_capacity as f32 * 0.75f32) as usize;
        } else {
            new_capacity = 16;
            new_threshold = 12;
        }
        let old = std::mem::take(&mut self.buckets);
        self.buckets = (0..new_capacity).map(|_| Vec::new()).collect();
        // Walking old buckets in order and appending keeps each bucket's relative order, as
        // Java's lo/hi split does.
        for (hash, key) in old.into_iter().flatten() {
            let index = Self::spread(hash) as usize & (new_capacity - 1);
            self.buckets[index].push((hash, key));
        }
        self.threshold = new_threshold;
    }

    /// `put`/`add`; an existing key keeps its place.
    pub fn insert(&mut self, hash: i32, key: K) {
        if self.buckets.is_empty() {
            self.resize();
        }
        let index = Self::spread(hash) as usize & (self.buckets.len() - 1);
        let bucket = &mut self.buckets[index];
        if bucket.iter().any(|(h, k)| *h == hash && *k == key) {
            return;
        }
        bucket.push((hash, key));
        // Java tries to treeify a bucket that grew past 8 keys; in a small table it resizes instead.
        if bucket.len() > TREEIFY_THRESHOLD && self.buckets.len() < MIN_TREEIFY_CAPACITY {
            self.resize();
        }
        self.size += 1;
        if self.size > self.threshold {
            self.resize();
        }
    }

    /// `computeIfAbsent`, which differs from `put`: it resizes *before* looking (whenever the
    /// previous insertion left the map over its threshold, even if the key is present) and puts a new
    /// key at the head of its bucket, not the tail.
    pub fn compute_if_absent(&mut self, hash: i32, key: K) {
        if self.buckets.is_empty() || self.size > self.threshold {
            self.resize();
        }
        let index = Self::spread(hash) as usize & (self.buckets.len() - 1);
        let bucket = &mut self.buckets[index];
        if bucket.iter().any(|(h, k)| *h == hash && *k == key) {
            return;
        }
        let others = bucket.len();
        bucket.insert(0, (hash, key));
        if others >= TREEIFY_THRESHOLD - 1 && self.buckets.len() < MIN_TREEIFY_CAPACITY {
            self.resize();
        }
        self.size += 1;
    }

    /// `remove`: the other keys keep their order (Java never shrinks a table).
    pub fn remove(&mut self, hash: i32, key: &K) -> bool {
        if self.buckets.is_empty() {
            return false;
        }
        let index = Self::spread(hash) as usize & (self.buckets.len() - 1);
        let bucket = &mut self.buckets[index];
        match bucket.iter().position(|(h, k)| *h == hash && k == key) {
            Some(at) => {
                bucket.remove(at);
                self.size -= 1;
                true
            }
            None => false,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.size == 0
    }

    /// Keys in Java's iteration order.
    pub fn iter(&self) -> impl Iterator<Item = &K> {
        self.buckets.iter().flatten().map(|(_, key)| key)
    }

    pub fn into_keys(self) -> Vec<K> {
        self.buckets
            .into_iter()
            .flatten()
            .map(|(_, key)| key)
            .collect()
    }
}

impl<K: PartialEq> Default for JavaHashTable<K> {
    fn default() -> Self {
        Self::new()
    }
}

/// A `Map<Uuid, Set<Integer>>` built of `HashMap` and `HashSet`, as Kafka's assignors build a
/// member's assignment once they change it, tracked for its iteration order (the order Kafka then
/// writes the target assignment record in).
#[derive(Debug, Clone, Default)]
pub struct JavaAssignmentMap {
    topics: JavaHashTable<TopicId>,
    partitions: FxHashMap<TopicId, JavaHashTable<i32>>,
}

impl JavaAssignmentMap {
    /// Kafka's `AssignorHelpers.deepCopyAssignment` of a map iterating in `order`:
    /// `new HashMap(size)`, each set copied with `new HashSet(set)`.
    pub fn deep_copy(order: &[(TopicId, Vec<i32>)]) -> Self {
        let mut copy = JavaAssignmentMap {
            topics: JavaHashTable::with_capacity(order.len()),
            partitions: FxHashMap::default(),
        };
        for (topic, partitions) in order {
            copy.topics.insert(topic.java_hash_code(), *topic);
            copy.partitions.insert(
                *topic,
                JavaHashTable::copy_of(partitions.iter().map(|p| (*p, *p))),
            );
        }
        copy
    }

    /// The member's working copy, made on first use from its unchanged assignment (Kafka copies
    /// an immutable assignment before its first change).
    pub fn copy_on_write<'a>(
        slot: &'a mut Option<JavaAssignmentMap>,
        original: &[(TopicId, Vec<i32>)],
    ) -> &'a mut JavaAssignmentMap {
        slot.get_or_insert_with(|| Self::deep_copy(original))
    }

    pub fn remove_topic(&mut self, topic: &TopicId) {
        if self.partitions.remove(topic).is_some() {
            self.topics.remove(topic.java_hash_code(), topic);
        }
    }

    /// Removes a partition, and the topic once it has none left.
    pub fn remove_partition(&mut self, topic: &TopicId, partition: i32) {
        if let Some(set) = self.partitions.get_mut(topic) {
            set.remove(partition, &partition);
            if set.is_empty() {
                self.remove_topic(topic);
            }
        }
    }

    /// `computeIfAbsent(topic, new_set).add(partition)`.
    pub fn add_partition(
        &mut self,
        topic: TopicId,
        partition: i32,
        new_set: impl FnOnce() -> JavaHashTable<i32>,
    ) {
        self.topics.compute_if_absent(topic.java_hash_code(), topic);
        self.partitions
            .entry(topic)
            .or_insert_with(new_set)
            .insert(partition, partition);
    }

    /// Topics and partitions in Java's iteration order.
    pub fn iteration_order(&self) -> Vec<(TopicId, Vec<i32>)> {
        self.topics
            .iter()
            .map(|topic| (*topic, self.partitions[topic].iter().copied().collect()))
            .collect()
    }
}

/// Order of `keySet()` of a `new HashMap<String, _>()` filled with `put` in the given order (how
/// Kafka's `TargetAssignmentBuilder` collects the members it hands to the assignor).
pub fn string_hash_map_order<'a>(
    insertion_order: impl IntoIterator<Item = &'a str>,
) -> Vec<&'a str> {
    let mut table = JavaHashTable::new();
    for key in insertion_order {
        table.insert(java_string_hash(key), key);
    }
    table.into_keys()
}

/// Order of a `new HashSet<String>(list)` (how a consumer member keeps its subscribed topic names).
pub fn string_hash_set_copy_order<'a>(list: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    JavaHashTable::copy_of(list.into_iter().map(|s| (java_string_hash(s), s))).into_keys()
}

/// Order of a `new HashSet<Integer>(list)`.
pub fn int_hash_set_copy_order(list: impl IntoIterator<Item = i32>) -> Vec<i32> {
    JavaHashTable::copy_of(list.into_iter().map(|p| (p, p))).into_keys()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_hash_matches_java() {
        // Values from Java: "".hashCode() == 0, "a" == 97, "hello" == 99162322,
        // "polygenelubricants" == Integer.MIN_VALUE.
        assert_eq!(java_string_hash(""), 0);
        assert_eq!(java_string_hash("a"), 97);
        assert_eq!(java_string_hash("hello"), 99_162_322);
        assert_eq!(java_string_hash("polygenelubricants"), i32::MIN);
    }

    #[test]
    fn integers_wrap_around_the_table() {
        // new HashSet<>(List.of(20, 3, 17, 1)) iterates 17, 1, 3, 20 (capacity 16: 17 and 1 share
        // bucket 1 in insertion order).
        assert_eq!(int_hash_set_copy_order([20, 3, 17, 1]), vec![17, 1, 3, 20]);
    }

    #[test]
    fn compute_if_absent_inserts_at_the_head_and_resizes_first() {
        // An assignor's copy of an empty assignment (`new HashMap(0)`) gaining topics whose
        // `Uuid.hashCode()` is 1, 7, 3: Kafka iterates 1, 3, 7 (with `put` it would be 1, 7, 3).
        let id = |hash: i64| TopicId::new(0, hash);
        let mut map = JavaAssignmentMap::deep_copy(&[]);
        for hash in [1, 7, 3] {
            map.add_partition(id(hash), 0, JavaHashTable::new);
        }
        let order: Vec<TopicId> = map.iteration_order().into_iter().map(|(t, _)| t).collect();
        assert_eq!(order, vec![id(1), id(3), id(7)]);
    }

    #[test]
    fn growth_reorders_keys() {
        // The 13th put into a default map resizes 16 -> 32: 16 leaves bucket 0 for bucket 16.
        let mut table = JavaHashTable::new();
        for k in [16, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10] {
            table.insert(k, k);
        }
        assert_eq!(table.iter().copied().collect::<Vec<_>>()[..2], [16, 0]);
        table.insert(11, 11);
        let order: Vec<i32> = table.iter().copied().collect();
        assert_eq!(order[0], 0);
        assert_eq!(*order.last().unwrap(), 16);
    }
}
