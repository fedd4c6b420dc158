//! The iteration and tie-break orders of the Java collections Kafka's assignor uses, so that a
//! Rust port gives the same output for the same input: `String.hashCode` and `compareTo`,
//! `java.util.HashMap` iteration order, and `java.util.PriorityQueue` (a binary heap: equal
//! elements come out in heap order, not insertion order).
//!
//! These follow the behaviour of the OpenJDK 17+ collections, which Kafka 4.4 runs on; the unit
//! tests pin outputs printed by a real JVM.

use std::cmp::Ordering;

/// `java.lang.String.hashCode()`: `s[0]*31^(n-1) + ... + s[n-1]` over UTF-16 code units, in
/// wrapping 32-bit arithmetic.
pub fn string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// `java.lang.String.compareTo`: lexicographic over UTF-16 code units (differs from Rust's UTF-8
/// byte order only for characters above U+FFFF against U+E000..=U+FFFF).
pub fn cmp_strings(a: &str, b: &str) -> Ordering {
    if a.is_ascii() && b.is_ascii() {
        return a.cmp(b);
    }
    a.encode_utf16().cmp(b.encode_utf16())
}

/// The iteration order of a `java.util.HashMap` (or `HashSet`) after a known sequence of `put`
/// and `computeIfAbsent` calls, without removals. Keys are anything comparable; the caller
/// supplies each key's `hashCode()`.
///
/// A HashMap iterates its table bucket by bucket; a key's bucket is `spread(hash) & (capacity -
/// 1)` with `spread(h) = h ^ (h >>> 16)`. Within a bucket:
///
/// * `put` appends a new key and then doubles the table if the size exceeds the threshold
///   (`0.75 * capacity`);
/// * `computeIfAbsent` first doubles the table if the size *already* exceeds the threshold (so
///   a table can stay over-full until the next call, hit or miss), then *prepends* a new key;
/// * a resize splits every bucket into two without reordering.
///
/// The table is allocated on the first call: 16 buckets for `new HashMap<>()`,
/// `tableSizeFor(initialCapacity)` (the next power of two, at least 1) for
/// `new HashMap<>(initialCapacity)`.
///
/// Not modelled: a bucket of more than 8 entries (Java then resizes a small table or turns the
/// bucket into a tree, which reorders later insertions). With the load factor kept below 0.75
/// that takes deliberately colliding keys.
#[derive(Debug, Clone)]
pub struct HashMapOrder<K> {
    /// Empty until the first call.
    buckets: Vec<Vec<(u32, K)>>,
    first_capacity: usize,
    len: usize,
}

impl<K: Copy + Eq> HashMapOrder<K> {
    /// `new HashMap<>()`.
    pub fn new() -> Self {
        Self {
            buckets: Vec::new(),
            first_capacity: 16,
            len: 0,
        }
    }

    /// `new HashMap<>(initialCapacity)`.
    pub fn with_capacity(initial_capacity: usize) -> Self {
        Self {
            buckets: Vec::new(),
            first_capacity: initial_capacity.max(1).next_power_of_two(),
            len: 0,
        }
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    fn over_threshold(&self) -> bool {
        self.len > self.buckets.len() * 3 / 4
    }

    fn resize(&mut self) {
        if self.buckets.is_empty() {
            self.buckets = vec![Vec::new(); self.first_capacity];
            return;
        }
        let old = self.buckets.len();
        let mut next: Vec<Vec<(u32, K)>> = vec![Vec::new(); old * 2];
        for (j, bucket) in std::mem::take(&mut self.buckets).into_iter().enumerate() {
            for e in bucket {
                let to = if e.0 as usize & old == 0 { j } else { j + old };
                next[to].push(e);
            }
        }
        self.buckets = next;
    }

    fn bucket_of(&self, spread: u32) -> usize {
        spread as usize & (self.buckets.len() - 1)
    }

    fn contains(&self, spread: u32, key: K) -> bool {
        self.buckets[self.bucket_of(spread)]
            .iter()
            .any(|&(_, k)| k == key)
    }

    /// `put(key, ...)`; an existing key keeps its place.
    pub fn put(&mut self, hash_code: i32, key: K) {
        let spread = spread(hash_code);
        if self.buckets.is_empty() {
            self.resize();
        }
        if self.contains(spread, key) {
            return;
        }
        let b = self.bucket_of(spread);
        self.buckets[b].push((spread, key));
        self.len += 1;
        if self.over_threshold() {
            self.resize();
        }
    }

    /// `computeIfAbsent(key, ...)` (hit or miss).
    pub fn compute_if_absent(&mut self, hash_code: i32, key: K) {
        let spread = spread(hash_code);
        if self.buckets.is_empty() || self.over_threshold() {
            self.resize();
        }
        if self.contains(spread, key) {
            return;
        }
        let b = self.bucket_of(spread);
        self.buckets[b].insert(0, (spread, key));
        self.len += 1;
    }

    /// The keys in the order `keySet()` / `values()` / `entrySet()` iterate them.
    pub fn iteration_order(&self) -> Vec<K> {
        self.buckets
            .iter()
            .flat_map(|b| b.iter().map(|&(_, k)| k))
            .collect()
    }
}

impl<K: Copy + Eq> Default for HashMapOrder<K> {
    fn default() -> Self {
        Self::new()
    }
}

/// `HashMap.hash`: the high half of the hash code folded into the low half.
fn spread(hash_code: i32) -> u32 {
    let h = hash_code as u32;
    h ^ (h >> 16)
}

/// The iteration order of an `org.apache.kafka.timeline.TimelineHashMap` (the coordinator's
/// member and target maps) at the latest epoch, after a known sequence of `put` and `remove`
/// calls; snapshots do not change it.
///
/// Its `BaseHashTable` picks a key's slot from the *top* bits of `hashCode * 0x9E3779B97F4A7C15`
/// (Fibonacci hashing; as many bits as the table has slots, at least 2 slots); a slot holds its
/// keys in an array in insertion order (a removal closes the gap, a `put` of a present key
/// replaces it in place), and iteration walks the slots in order and each slot's array from its
/// *last* element to its first. Before every `put`, present key or not, the table doubles if
/// `(size + 1) * 0.75` exceeds its slots; a doubling splits each slot in two in order, so the
/// order is: by slot at the final size, then most recently inserted first.
#[derive(Debug, Clone)]
pub struct TimelineHashMapOrder<K> {
    slots: usize,
    /// (Fibonacci product, insertion stamp, key) of every present key.
    entries: Vec<(u64, u64, K)>,
    next_stamp: u64,
}

impl<K: Clone + Eq> TimelineHashMapOrder<K> {
    /// `new TimelineHashMap<>(registry, expectedSize)`.
    pub fn with_expected_size(expected_size: usize) -> Self {
        let min = (expected_size as f64 / 0.75).ceil() as usize;
        Self {
            slots: min.next_power_of_two().clamp(2, 1 << 30),
            entries: Vec::new(),
            next_stamp: 0,
        }
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// `put(key, ...)`.
    pub fn put(&mut self, hash_code: i32, key: K) {
        if (self.entries.len() + 1) as f64 * 0.75 > self.slots as f64 && self.slots < 1 << 30 {
            self.slots *= 2;
        }
        if self.entries.iter().any(|e| e.2 == key) {
            return;
        }
        let product = (i64::from(hash_code) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.entries.push((product, self.next_stamp, key));
        self.next_stamp += 1;
    }

    /// `remove(key)`.
    pub fn remove(&mut self, key: &K) {
        self.entries.retain(|e| e.2 != *key);
    }

    /// The keys in the order `keySet()` / `entrySet()` iterate them.
    pub fn iteration_order(&self) -> Vec<K> {
        let shift = 64 - self.slots.trailing_zeros();
        let mut order: Vec<(u64, std::cmp::Reverse<u64>, &K)> = self
            .entries
            .iter()
            .map(|(product, stamp, key)| (product >> shift, std::cmp::Reverse(*stamp), key))
            .collect();
        crate::util::sort::unstable_by_key(&mut order, |&(slot, stamp, _)| (slot, stamp));
        order.into_iter().map(|(.., key)| key.clone()).collect()
    }
}

/// `java.util.PriorityQueue`: a binary min-heap with `siftUp` on `add` and `siftDown` on `poll`,
/// exactly as the JDK does them, so elements that compare equal come out in the same order as
/// in Java. The comparator is passed to each call (it may read state outside the heap, as
/// Kafka's comparators do; elements must not change their key while in the heap).
#[derive(Debug, Clone, Default)]
pub struct PriorityQueue<T> {
    heap: Vec<T>,
}

impl<T: Copy> PriorityQueue<T> {
    #[cfg(test)]
    pub fn new() -> Self {
        Self { heap: Vec::new() }
    }

    pub fn with_capacity(n: usize) -> Self {
        Self {
            heap: Vec::with_capacity(n),
        }
    }

    /// `add` / `offer`: append, then sift up while strictly less than the parent.
    pub fn add(&mut self, x: T, mut cmp: impl FnMut(&T, &T) -> Ordering) {
        let mut k = self.heap.len();
        self.heap.push(x);
        while k > 0 {
            let parent = (k - 1) >> 1;
            if cmp(&x, &self.heap[parent]) != Ordering::Less {
                break;
            }
            self.heap[k] = self.heap[parent];
            k = parent;
        }
        self.heap[k] = x;
    }

    /// `poll`: take the root, move the last element to the root and sift it down (towards the
    /// smaller child, the left one on ties) while greater than that child.
    pub fn poll(&mut self, mut cmp: impl FnMut(&T, &T) -> Ordering) -> Option<T> {
        let last = self.heap.pop()?;
        let n = self.heap.len();
        if n == 0 {
            return Some(last);
        }
        let result = self.heap[0];
        let mut k = 0;
        let half = n >> 1;
        while k < half {
            let mut child = 2 * k + 1;
            let right = child + 1;
            if right < n && cmp(&self.heap[child], &self.heap[right]) == Ordering::Greater {
                child = right;
            }
            if cmp(&last, &self.heap[child]) != Ordering::Greater {
                break;
            }
            self.heap[k] = self.heap[child];
            k = child;
        }
        self.heap[k] = last;
        Some(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected values below were printed by OpenJDK 17.

    #[test]
    fn string_hash_matches_java() {
        for (s, h) in [
            ("", 0),
            ("a", 97),
            ("m1", 3428),
            ("process-1", -1_094_761_389),
            ("Aa", 2112),
            ("BB", 2112),
            ("ü€", 16176),
            ("😀x", 54_959_989),
            ("6a0b2c34-1d2e-4f50-8a9b-0c1d2e3f4a5b", -897_395_894),
        ] {
            assert_eq!(string_hash(s), h, "{s:?}");
        }
    }

    #[test]
    fn compare_is_by_utf16_code_units() {
        assert_eq!(cmp_strings("\u{FFFF}", "😀"), Ordering::Greater);
        assert_eq!("\u{FFFF}".cmp("😀"), Ordering::Less, "UTF-8 order differs");
        assert_eq!(cmp_strings("a", "b"), Ordering::Less);
        assert_eq!(cmp_strings("10", "9"), Ordering::Less);
    }

    fn order(mut map: HashMapOrder<&'static str>, keys: &[&'static str]) -> Vec<&'static str> {
        for k in keys {
            map.put(string_hash(k), k);
        }
        map.iteration_order()
    }

    fn order_computed(
        mut map: HashMapOrder<&'static str>,
        keys: &[&'static str],
    ) -> Vec<&'static str> {
        for k in keys {
            map.compute_if_absent(string_hash(k), k);
        }
        map.iteration_order()
    }

    #[test]
    fn default_hash_map_grows_and_keeps_insertion_order_in_a_bucket() {
        let keys: Vec<&'static str> = (1..=20).rev().map(|i| &*format!("m{i}").leak()).collect();
        assert_eq!(
            order(HashMapOrder::new(), &keys).join(","),
            "m1,m2,m3,m4,m5,m6,m20,m7,m8,m11,m9,m10,m13,m12,m15,m14,m17,m16,m19,m18"
        );
    }

    #[test]
    fn sized_hash_maps() {
        assert_eq!(
            order(
                HashMapOrder::with_capacity(3),
                &["p5", "p3", "pa", "p1", "zz"]
            )
            .join(","),
            "zz,pa,p1,p3,p5"
        );
        assert_eq!(
            order(HashMapOrder::with_capacity(1), &["b", "a"]).join(","),
            "a,b"
        );
        // Equal hash codes: insertion order.
        assert_eq!(
            order(HashMapOrder::with_capacity(0), &["x", "Aa", "BB", "c"]).join(","),
            "x,Aa,BB,c"
        );
    }

    #[test]
    fn compute_if_absent_prepends_and_resizes_lazily() {
        // "Aa", "BB" and "C#" share a hash code.
        let keys = ["Aa", "BB", "x", "Aa", "C#", "y"];
        assert_eq!(
            order_computed(HashMapOrder::with_capacity(2), &keys).join(","),
            "C#,x,BB,Aa,y"
        );
        assert_eq!(
            order(HashMapOrder::with_capacity(2), &keys).join(","),
            "Aa,BB,x,C#,y"
        );
        // Four keys in a table of 4 (threshold 3): over-full until the next call, a hit.
        let mut lazy = HashMapOrder::with_capacity(4);
        for k in ["a", "e", "b", "c"] {
            lazy.compute_if_absent(string_hash(k), k);
        }
        assert_eq!(lazy.iteration_order().join(","), "e,a,b,c");
        lazy.compute_if_absent(string_hash("a"), "a");
        assert_eq!(lazy.iteration_order().join(","), "a,b,c,e");
        assert_eq!(lazy.len(), 4);
        assert_eq!(
            order(HashMapOrder::with_capacity(4), &["a", "e", "b", "c"]).join(","),
            "a,b,c,e"
        );
    }

    #[test]
    fn timeline_hash_map_order() {
        // Each step's expected order was printed by Kafka 4.4.0's TimelineHashMap (expected size
        // 0, as the coordinator's member maps), with snapshots taken at "s".
        let steps = [
            ("+m1", "m1"),
            ("+m2", "m2,m1"),
            ("+m3", "m2,m1,m3"),
            ("s", "m2,m1,m3"),
            ("+m4", "m2,m4,m1,m3"),
            ("+m5", "m5,m2,m4,m1,m3"),
            ("-m2", "m5,m4,m1,m3"),
            ("+m6", "m5,m4,m6,m1,m3"),
            ("+m2", "m5,m2,m4,m1,m6,m3"),
            ("+m1", "m5,m2,m4,m1,m6,m3"),
            ("+m7", "m5,m2,m7,m4,m1,m6,m3"),
            ("s", "m5,m2,m7,m4,m1,m6,m3"),
            ("-m4", "m5,m2,m7,m1,m6,m3"),
            ("+m8", "m5,m2,m7,m1,m6,m3,m8"),
            ("+m9", "m5,m2,m7,m9,m1,m6,m3,m8"),
            ("+m10", "m5,m2,m7,m9,m1,m6,m3,m10,m8"),
            ("+Aa", "m5,m2,Aa,m7,m9,m1,m6,m3,m10,m8"),
            ("+BB", "m5,m2,BB,Aa,m7,m9,m1,m6,m3,m10,m8"),
            ("+C#", "m5,m2,C#,BB,Aa,m7,m9,m1,m6,m3,m10,m8"),
        ];
        let mut map = TimelineHashMapOrder::with_expected_size(0);
        for (op, want) in steps {
            let key = &op[1..];
            match &op[..1] {
                "+" => map.put(string_hash(key), key),
                "-" => map.remove(&key),
                _ => {}
            }
            assert_eq!(map.iteration_order().join(","), want, "after {op}");
        }
        assert_eq!(map.len(), 12);
    }

    fn by_second(a: &(u32, u32), b: &(u32, u32)) -> Ordering {
        a.1.cmp(&b.1)
    }

    #[test]
    fn priority_queue_ties_come_out_in_heap_order() {
        let mut q = PriorityQueue::new();
        for e in [
            (0, 1),
            (1, 0),
            (2, 1),
            (3, 0),
            (4, 1),
            (5, 0),
            (6, 2),
            (7, 1),
        ] {
            q.add(e, by_second);
        }
        let mut out = Vec::new();
        while let Some((id, _)) = q.poll(by_second) {
            out.push(id);
        }
        assert_eq!(out, [1, 3, 5, 7, 4, 0, 2, 6]);
    }

    #[test]
    fn priority_queue_poll_and_re_add() {
        let mut q = PriorityQueue::new();
        for i in 0..5 {
            q.add((i, 0), by_second);
        }
        let mut out = Vec::new();
        for _ in 0..12 {
            let (id, load) = q.poll(by_second).unwrap();
            out.push(id);
            q.add((id, load + 1), by_second);
        }
        assert_eq!(out, [0, 4, 1, 3, 2, 3, 2, 4, 0, 1, 0, 1]);
    }
}
