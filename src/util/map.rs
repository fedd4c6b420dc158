//! Ordered maps and sets: std's `BTreeMap`/`BTreeSet` natively, sorted vectors on wasm32.
//!
//! Every `BTreeMap<K, V>` the core uses makes std instantiate its B-tree (insert, split, remove,
//! merge, steal, clone, drop: 10-15 KB of wasm per key/value pair); with some sixty pairs that
//! was the largest part of the explorer's module. On wasm32 [`BTreeMap`] and [`BTreeSet`] are
//! therefore [`VecMap`] and [`VecSet`]: one sorted `Vec`, binary search, a few hundred bytes per
//! instantiation. The explorer's maps are small (members, tasks, partitions of one simulated
//! group), where a sorted vector is as fast as a B-tree or faster; natively, where the server may
//! hold large groups, std's B-tree stays.
//!
//! Both are ordered by `Ord` and behave like std's types for the API the core uses (same
//! iteration order, same `insert`/`entry`/`remove` results, same `Hash`, `Eq`, `Ord`, `Debug`
//! and serde forms), so a run is the same on both targets (the state hashes compare it; the tests
//! below compare the two implementations).

#[cfg(not(target_arch = "wasm32"))]
pub use std::collections::{BTreeMap, BTreeSet};

#[cfg(target_arch = "wasm32")]
pub use self::{VecMap as BTreeMap, VecSet as BTreeSet};

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::{Bound, Index, RangeBounds};

/// A map ordered by key, stored as a vector of entries sorted by key (see the module doc).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct VecMap<K, V> {
    entries: Vec<(K, V)>,
}

impl<K, V> Default for VecMap<K, V> {
    fn default() -> Self {
        Self::new()
    }
}

/// Position of `key` (`Ok`) or where it would go (`Err`).
#[inline]
fn search<K: Borrow<Q>, V, Q: Ord + ?Sized>(entries: &[(K, V)], key: &Q) -> Result<usize, usize> {
    entries.binary_search_by(|(k, _)| k.borrow().cmp(key))
}

/// The index range of `entries` whose keys are within `range`.
fn bounds<K: Borrow<Q>, V, Q: Ord + ?Sized>(
    entries: &[(K, V)],
    range: &impl RangeBounds<Q>,
) -> (usize, usize) {
    let start = match range.start_bound() {
        Bound::Included(k) => entries.partition_point(|(e, _)| e.borrow() < k),
        Bound::Excluded(k) => entries.partition_point(|(e, _)| e.borrow() <= k),
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(k) => entries.partition_point(|(e, _)| e.borrow() <= k),
        Bound::Excluded(k) => entries.partition_point(|(e, _)| e.borrow() < k),
        Bound::Unbounded => entries.len(),
    };
    (start, end.max(start))
}

impl<K, V> VecMap<K, V> {
    /// An empty map.
    pub const fn new() -> Self {
        Self {
            entries: Vec::new(),
        }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the map is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Removes every entry.
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// Entries in key order.
    pub fn iter(&self) -> Iter<'_, K, V> {
        Iter(self.entries.iter())
    }

    /// Entries in key order, values mutable.
    pub fn iter_mut(&mut self) -> IterMut<'_, K, V> {
        IterMut(self.entries.iter_mut())
    }

    /// Keys in order.
    pub fn keys(&self) -> Keys<'_, K, V> {
        Keys(self.entries.iter())
    }

    /// Values in key order.
    pub fn values(&self) -> Values<'_, K, V> {
        Values(self.entries.iter())
    }

    /// Values in key order, mutable.
    pub fn values_mut(&mut self) -> ValuesMut<'_, K, V> {
        ValuesMut(self.entries.iter_mut())
    }

    /// Keys in order, consuming the map.
    pub fn into_keys(self) -> IntoKeys<K, V> {
        IntoKeys(self.entries.into_iter())
    }

    /// Values in key order, consuming the map.
    pub fn into_values(self) -> IntoValues<K, V> {
        IntoValues(self.entries.into_iter())
    }

    /// The entry with the smallest key.
    pub fn first_key_value(&self) -> Option<(&K, &V)> {
        self.entries.first().map(|(k, v)| (k, v))
    }

    /// The entry with the largest key.
    pub fn last_key_value(&self) -> Option<(&K, &V)> {
        self.entries.last().map(|(k, v)| (k, v))
    }

    /// Removes and returns the entry with the smallest key.
    pub fn pop_first(&mut self) -> Option<(K, V)> {
        if self.entries.is_empty() {
            None
        } else {
            Some(self.entries.remove(0))
        }
    }

    /// Removes and returns the entry with the largest key.
    pub fn pop_last(&mut self) -> Option<(K, V)> {
        self.entries.pop()
    }

    /// Keeps the entries for which `f` returns true (visited in key order).
    pub fn retain(&mut self, mut f: impl FnMut(&K, &mut V) -> bool) {
        self.entries.retain_mut(|(k, v)| f(k, v));
    }
}

impl<K: Ord, V> VecMap<K, V> {
    /// The value of `key`.
    pub fn get<Q: Ord + ?Sized>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
    {
        search(&self.entries, key).ok().map(|i| &self.entries[i].1)
    }

    /// The stored key and value of `key`.
    pub fn get_key_value<Q: Ord + ?Sized>(&self, key: &Q) -> Option<(&K, &V)>
    where
        K: Borrow<Q>,
    {
        search(&self.entries, key).ok().map(|i| {
            let (k, v) = &self.entries[i];
            (k, v)
        })
    }

    /// The value of `key`, mutable.
    pub fn get_mut<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
    {
        match search(&self.entries, key) {
            Ok(i) => Some(&mut self.entries[i].1),
            Err(_) => None,
        }
    }

    /// Whether `key` is in the map.
    pub fn contains_key<Q: Ord + ?Sized>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        search(&self.entries, key).is_ok()
    }

    /// Inserts `value` at `key`; returns the previous value (the stored key is kept, as std).
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        match search(&self.entries, &key) {
            Ok(i) => Some(std::mem::replace(&mut self.entries[i].1, value)),
            Err(i) => {
                self.entries.insert(i, (key, value));
                None
            }
        }
    }

    /// Removes `key`; returns its value.
    pub fn remove<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
    {
        self.remove_entry(key).map(|(_, v)| v)
    }

    /// Removes `key`; returns the stored key and its value.
    pub fn remove_entry<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<(K, V)>
    where
        K: Borrow<Q>,
    {
        match search(&self.entries, key) {
            Ok(i) => Some(self.entries.remove(i)),
            Err(_) => None,
        }
    }

    /// The entry of `key`, for in-place insertion or update.
    pub fn entry(&mut self, key: K) -> Entry<'_, K, V> {
        match search(&self.entries, &key) {
            Ok(index) => Entry::Occupied(OccupiedEntry {
                entries: &mut self.entries,
                index,
            }),
            Err(index) => Entry::Vacant(VacantEntry {
                entries: &mut self.entries,
                index,
                key,
            }),
        }
    }

    /// The entries whose keys are within `range`, in key order.
    pub fn range<Q: Ord + ?Sized, R: RangeBounds<Q>>(&self, range: R) -> Iter<'_, K, V>
    where
        K: Borrow<Q>,
    {
        let (start, end) = bounds(&self.entries, &range);
        Iter(self.entries[start..end].iter())
    }

    /// The entries whose keys are within `range`, in key order, values mutable.
    pub fn range_mut<Q: Ord + ?Sized, R: RangeBounds<Q>>(&mut self, range: R) -> IterMut<'_, K, V>
    where
        K: Borrow<Q>,
    {
        let (start, end) = bounds(&self.entries, &range);
        IterMut(self.entries[start..end].iter_mut())
    }

    /// Moves every entry of `other` into `self` (`other`'s values win), leaving `other` empty.
    pub fn append(&mut self, other: &mut Self) {
        for (k, v) in std::mem::take(&mut other.entries) {
            self.insert(k, v);
        }
    }

    /// Splits off the entries with keys `>= key`.
    pub fn split_off<Q: Ord + ?Sized>(&mut self, key: &Q) -> Self
    where
        K: Borrow<Q>,
    {
        let at = self.entries.partition_point(|(k, _)| k.borrow() < key);
        Self {
            entries: self.entries.split_off(at),
        }
    }
}

/// A view into one entry of a [`VecMap`] (as std's `btree_map::Entry`).
pub enum Entry<'a, K, V> {
    /// The key is absent.
    Vacant(VacantEntry<'a, K, V>),
    /// The key is present.
    Occupied(OccupiedEntry<'a, K, V>),
}

/// An absent key of a [`VecMap`] and where it goes.
pub struct VacantEntry<'a, K, V> {
    entries: &'a mut Vec<(K, V)>,
    index: usize,
    key: K,
}

/// A present entry of a [`VecMap`].
pub struct OccupiedEntry<'a, K, V> {
    entries: &'a mut Vec<(K, V)>,
    index: usize,
}

impl<'a, K, V> Entry<'a, K, V> {
    /// The value, inserting `default` if absent.
    pub fn or_insert(self, default: V) -> &'a mut V {
        match self {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => e.insert(default),
        }
    }

    /// The value, inserting `f()` if absent.
    pub fn or_insert_with(self, f: impl FnOnce() -> V) -> &'a mut V {
        match self {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => e.insert(f()),
        }
    }

    /// The value, inserting `f(&key)` if absent.
    pub fn or_insert_with_key(self, f: impl FnOnce(&K) -> V) -> &'a mut V {
        match self {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => {
                let v = f(&e.key);
                e.insert(v)
            }
        }
    }

    /// The value, inserting `V::default()` if absent.
    pub fn or_default(self) -> &'a mut V
    where
        V: Default,
    {
        self.or_insert_with(V::default)
    }

    /// Applies `f` to the value if present.
    pub fn and_modify(mut self, f: impl FnOnce(&mut V)) -> Self {
        if let Entry::Occupied(e) = &mut self {
            f(e.get_mut());
        }
        self
    }

    /// The entry's key.
    pub fn key(&self) -> &K {
        match self {
            Entry::Occupied(e) => e.key(),
            Entry::Vacant(e) => e.key(),
        }
    }
}

impl<'a, K, V> VacantEntry<'a, K, V> {
    /// The key.
    pub fn key(&self) -> &K {
        &self.key
    }

    /// Takes the key back.
    pub fn into_key(self) -> K {
        self.key
    }

    /// Inserts `value` at the key.
    pub fn insert(self, value: V) -> &'a mut V {
        self.entries.insert(self.index, (self.key, value));
        &mut self.entries[self.index].1
    }
}

impl<'a, K, V> OccupiedEntry<'a, K, V> {
    /// The stored key.
    pub fn key(&self) -> &K {
        &self.entries[self.index].0
    }

    /// The value.
    pub fn get(&self) -> &V {
        &self.entries[self.index].1
    }

    /// The value, mutable.
    pub fn get_mut(&mut self) -> &mut V {
        &mut self.entries[self.index].1
    }

    /// The value, mutable for the map's borrow.
    pub fn into_mut(self) -> &'a mut V {
        &mut self.entries[self.index].1
    }

    /// Replaces the value; returns the old one.
    pub fn insert(&mut self, value: V) -> V {
        std::mem::replace(self.get_mut(), value)
    }

    /// Removes the entry; returns its value.
    pub fn remove(self) -> V {
        self.entries.remove(self.index).1
    }

    /// Removes the entry; returns its key and value.
    pub fn remove_entry(self) -> (K, V) {
        self.entries.remove(self.index)
    }
}

macro_rules! iterator {
    ($(#[$doc:meta])* $name:ident<$($lt:lifetime,)? $k:ident, $v:ident>($inner:ty) -> $item:ty, |$e:ident| $map:expr) => {
        $(#[$doc])*
        pub struct $name<$($lt,)? $k, $v>($inner);

        impl<$($lt,)? $k, $v> Iterator for $name<$($lt,)? $k, $v> {
            type Item = $item;
            #[inline]
            fn next(&mut self) -> Option<$item> {
                self.0.next().map(|$e| $map)
            }
            #[inline]
            fn size_hint(&self) -> (usize, Option<usize>) {
                self.0.size_hint()
            }
        }

        impl<$($lt,)? $k, $v> DoubleEndedIterator for $name<$($lt,)? $k, $v> {
            #[inline]
            fn next_back(&mut self) -> Option<$item> {
                self.0.next_back().map(|$e| $map)
            }
        }

        impl<$($lt,)? $k, $v> ExactSizeIterator for $name<$($lt,)? $k, $v> {}
        impl<$($lt,)? $k, $v> std::iter::FusedIterator for $name<$($lt,)? $k, $v> {}
    };
}

iterator!(
    /// Entries of a [`VecMap`] in key order.
    Iter<'a, K, V>(std::slice::Iter<'a, (K, V)>) -> (&'a K, &'a V), |e| (&e.0, &e.1)
);
iterator!(
    /// Entries of a [`VecMap`] in key order, values mutable.
    IterMut<'a, K, V>(std::slice::IterMut<'a, (K, V)>) -> (&'a K, &'a mut V), |e| (&e.0, &mut e.1)
);
iterator!(
    /// Keys of a [`VecMap`] in order.
    Keys<'a, K, V>(std::slice::Iter<'a, (K, V)>) -> &'a K, |e| &e.0
);
iterator!(
    /// Values of a [`VecMap`] in key order.
    Values<'a, K, V>(std::slice::Iter<'a, (K, V)>) -> &'a V, |e| &e.1
);
iterator!(
    /// Values of a [`VecMap`] in key order, mutable.
    ValuesMut<'a, K, V>(std::slice::IterMut<'a, (K, V)>) -> &'a mut V, |e| &mut e.1
);
iterator!(
    /// Entries of a [`VecMap`] in key order, owned.
    IntoIter<K, V>(std::vec::IntoIter<(K, V)>) -> (K, V), |e| e
);
iterator!(
    /// Keys of a [`VecMap`] in order, owned.
    IntoKeys<K, V>(std::vec::IntoIter<(K, V)>) -> K, |e| e.0
);
iterator!(
    /// Values of a [`VecMap`] in key order, owned.
    IntoValues<K, V>(std::vec::IntoIter<(K, V)>) -> V, |e| e.1
);

impl<K, V> Clone for Iter<'_, K, V> {
    fn clone(&self) -> Self {
        Iter(self.0.clone())
    }
}

impl<K, V> Clone for Keys<'_, K, V> {
    fn clone(&self) -> Self {
        Keys(self.0.clone())
    }
}

impl<K, V> Clone for Values<'_, K, V> {
    fn clone(&self) -> Self {
        Values(self.0.clone())
    }
}

impl<K, V> IntoIterator for VecMap<K, V> {
    type Item = (K, V);
    type IntoIter = IntoIter<K, V>;
    fn into_iter(self) -> IntoIter<K, V> {
        IntoIter(self.entries.into_iter())
    }
}

impl<'a, K, V> IntoIterator for &'a VecMap<K, V> {
    type Item = (&'a K, &'a V);
    type IntoIter = Iter<'a, K, V>;
    fn into_iter(self) -> Iter<'a, K, V> {
        self.iter()
    }
}

impl<'a, K, V> IntoIterator for &'a mut VecMap<K, V> {
    type Item = (&'a K, &'a mut V);
    type IntoIter = IterMut<'a, K, V>;
    fn into_iter(self) -> IterMut<'a, K, V> {
        self.iter_mut()
    }
}

impl<K: Ord, V> Extend<(K, V)> for VecMap<K, V> {
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(k, v);
        }
    }
}

impl<'a, K: Ord + Copy, V: Copy> Extend<(&'a K, &'a V)> for VecMap<K, V> {
    fn extend<I: IntoIterator<Item = (&'a K, &'a V)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(*k, *v);
        }
    }
}

impl<K: Ord, V> FromIterator<(K, V)> for VecMap<K, V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut m = Self::new();
        m.extend(iter);
        m
    }
}

impl<K: Ord, V, const N: usize> From<[(K, V); N]> for VecMap<K, V> {
    fn from(arr: [(K, V); N]) -> Self {
        arr.into_iter().collect()
    }
}

impl<K: Ord + Borrow<Q>, Q: Ord + ?Sized, V> Index<&Q> for VecMap<K, V> {
    type Output = V;
    fn index(&self, key: &Q) -> &V {
        self.get(key).expect("no entry found for key")
    }
}

impl<K: Hash, V: Hash> Hash for VecMap<K, V> {
    /// As std's `BTreeMap`: the length, then every key and value in order.
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_usize(self.entries.len());
        for (k, v) in &self.entries {
            k.hash(state);
            v.hash(state);
        }
    }
}

impl<K: fmt::Debug, V: fmt::Debug> fmt::Debug for VecMap<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<K: serde::Serialize, V: serde::Serialize> serde::Serialize for VecMap<K, V> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.iter())
    }
}

impl<'de, K, V> serde::Deserialize<'de> for VecMap<K, V>
where
    K: serde::Deserialize<'de> + Ord,
    V: serde::Deserialize<'de>,
{
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit<K, V>(std::marker::PhantomData<(K, V)>);
        impl<'de, K, V> serde::de::Visitor<'de> for Visit<K, V>
        where
            K: serde::Deserialize<'de> + Ord,
            V: serde::Deserialize<'de>,
        {
            type Value = VecMap<K, V>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Self::Value, A::Error> {
                let mut m = VecMap::new();
                while let Some((k, v)) = a.next_entry()? {
                    m.insert(k, v);
                }
                Ok(m)
            }
        }
        d.deserialize_map(Visit(std::marker::PhantomData))
    }
}

/// A set ordered by `Ord`, stored as a sorted vector (see the module doc).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct VecSet<T> {
    items: Vec<T>,
}

impl<T> Default for VecSet<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> VecSet<T> {
    /// An empty set.
    pub const fn new() -> Self {
        Self { items: Vec::new() }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Removes every element.
    pub fn clear(&mut self) {
        self.items.clear();
    }

    /// Elements in order.
    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.items.iter()
    }

    /// The smallest element.
    pub fn first(&self) -> Option<&T> {
        self.items.first()
    }

    /// The largest element.
    pub fn last(&self) -> Option<&T> {
        self.items.last()
    }

    /// Removes and returns the smallest element.
    pub fn pop_first(&mut self) -> Option<T> {
        if self.items.is_empty() {
            None
        } else {
            Some(self.items.remove(0))
        }
    }

    /// Removes and returns the largest element.
    pub fn pop_last(&mut self) -> Option<T> {
        self.items.pop()
    }

    /// Keeps the elements for which `f` returns true (visited in order).
    pub fn retain(&mut self, mut f: impl FnMut(&T) -> bool) {
        self.items.retain(|x| f(x));
    }
}

impl<T: Ord> VecSet<T> {
    fn position<Q: Ord + ?Sized>(&self, value: &Q) -> Result<usize, usize>
    where
        T: Borrow<Q>,
    {
        self.items.binary_search_by(|x| x.borrow().cmp(value))
    }

    /// Whether `value` is in the set.
    pub fn contains<Q: Ord + ?Sized>(&self, value: &Q) -> bool
    where
        T: Borrow<Q>,
    {
        self.position(value).is_ok()
    }

    /// The stored element equal to `value`.
    pub fn get<Q: Ord + ?Sized>(&self, value: &Q) -> Option<&T>
    where
        T: Borrow<Q>,
    {
        self.position(value).ok().map(|i| &self.items[i])
    }

    /// Adds `value`; false (and the set unchanged) if an equal element is present.
    pub fn insert(&mut self, value: T) -> bool {
        match self.position(&value) {
            Ok(_) => false,
            Err(i) => {
                self.items.insert(i, value);
                true
            }
        }
    }

    /// Adds `value`, replacing and returning an equal element.
    pub fn replace(&mut self, value: T) -> Option<T> {
        match self.position(&value) {
            Ok(i) => Some(std::mem::replace(&mut self.items[i], value)),
            Err(i) => {
                self.items.insert(i, value);
                None
            }
        }
    }

    /// Removes `value`; whether it was present.
    pub fn remove<Q: Ord + ?Sized>(&mut self, value: &Q) -> bool
    where
        T: Borrow<Q>,
    {
        self.take(value).is_some()
    }

    /// Removes and returns the element equal to `value`.
    pub fn take<Q: Ord + ?Sized>(&mut self, value: &Q) -> Option<T>
    where
        T: Borrow<Q>,
    {
        match self.position(value) {
            Ok(i) => Some(self.items.remove(i)),
            Err(_) => None,
        }
    }

    /// The elements within `range`, in order.
    pub fn range<Q: Ord + ?Sized, R: RangeBounds<Q>>(&self, range: R) -> std::slice::Iter<'_, T>
    where
        T: Borrow<Q>,
    {
        let start = match range.start_bound() {
            Bound::Included(k) => self.items.partition_point(|e| e.borrow() < k),
            Bound::Excluded(k) => self.items.partition_point(|e| e.borrow() <= k),
            Bound::Unbounded => 0,
        };
        let end = match range.end_bound() {
            Bound::Included(k) => self.items.partition_point(|e| e.borrow() <= k),
            Bound::Excluded(k) => self.items.partition_point(|e| e.borrow() < k),
            Bound::Unbounded => self.items.len(),
        };
        self.items[start..end.max(start)].iter()
    }

    /// Moves every element of `other` into `self`, leaving `other` empty.
    pub fn append(&mut self, other: &mut Self) {
        for x in std::mem::take(&mut other.items) {
            self.insert(x);
        }
    }

    /// Splits off the elements `>= value`.
    pub fn split_off<Q: Ord + ?Sized>(&mut self, value: &Q) -> Self
    where
        T: Borrow<Q>,
    {
        let at = self.items.partition_point(|x| x.borrow() < value);
        Self {
            items: self.items.split_off(at),
        }
    }

    /// Elements of `self` not in `other`, in order.
    pub fn difference<'a>(&'a self, other: &'a Self) -> impl Iterator<Item = &'a T> + Clone + 'a {
        self.items.iter().filter(move |x| !other.contains(*x))
    }

    /// Elements in both sets, in order.
    pub fn intersection<'a>(&'a self, other: &'a Self) -> impl Iterator<Item = &'a T> + Clone + 'a {
        self.items.iter().filter(move |x| other.contains(*x))
    }

    /// Elements in either set, in order, each once.
    pub fn union<'a>(&'a self, other: &'a Self) -> Union<'a, T> {
        Union {
            a: self.items.iter().peekable(),
            b: other.items.iter().peekable(),
        }
    }

    /// Elements in exactly one of the sets, in order.
    pub fn symmetric_difference<'a>(
        &'a self,
        other: &'a Self,
    ) -> impl Iterator<Item = &'a T> + Clone + 'a {
        self.union(other)
            .filter(move |x| !(self.contains(*x) && other.contains(*x)))
    }

    /// Whether every element of `self` is in `other`.
    pub fn is_subset(&self, other: &Self) -> bool {
        self.items.iter().all(|x| other.contains(x))
    }

    /// Whether every element of `other` is in `self`.
    pub fn is_superset(&self, other: &Self) -> bool {
        other.is_subset(self)
    }

    /// Whether the sets have no element in common.
    pub fn is_disjoint(&self, other: &Self) -> bool {
        self.items.iter().all(|x| !other.contains(x))
    }
}

/// The union of two [`VecSet`]s, in order.
pub struct Union<'a, T> {
    a: std::iter::Peekable<std::slice::Iter<'a, T>>,
    b: std::iter::Peekable<std::slice::Iter<'a, T>>,
}

impl<T> Clone for Union<'_, T> {
    fn clone(&self) -> Self {
        Union {
            a: self.a.clone(),
            b: self.b.clone(),
        }
    }
}

impl<'a, T: Ord> Iterator for Union<'a, T> {
    type Item = &'a T;
    fn next(&mut self) -> Option<&'a T> {
        match (self.a.peek(), self.b.peek()) {
            (Some(x), Some(y)) => match x.cmp(y) {
                Ordering::Less => self.a.next(),
                Ordering::Greater => self.b.next(),
                Ordering::Equal => {
                    self.b.next();
                    self.a.next()
                }
            },
            (Some(_), None) => self.a.next(),
            (None, _) => self.b.next(),
        }
    }
}

impl<T> IntoIterator for VecSet<T> {
    type Item = T;
    type IntoIter = std::vec::IntoIter<T>;
    fn into_iter(self) -> std::vec::IntoIter<T> {
        self.items.into_iter()
    }
}

impl<'a, T> IntoIterator for &'a VecSet<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> std::slice::Iter<'a, T> {
        self.items.iter()
    }
}

impl<T: Ord> Extend<T> for VecSet<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        for x in iter {
            self.insert(x);
        }
    }
}

impl<'a, T: Ord + Copy + 'a> Extend<&'a T> for VecSet<T> {
    fn extend<I: IntoIterator<Item = &'a T>>(&mut self, iter: I) {
        for x in iter {
            self.insert(*x);
        }
    }
}

impl<T: Ord> FromIterator<T> for VecSet<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut s = Self::new();
        s.extend(iter);
        s
    }
}

impl<T: Ord, const N: usize> From<[T; N]> for VecSet<T> {
    fn from(arr: [T; N]) -> Self {
        arr.into_iter().collect()
    }
}

impl<T: Ord + Clone> std::ops::BitOr<&VecSet<T>> for &VecSet<T> {
    type Output = VecSet<T>;
    fn bitor(self, rhs: &VecSet<T>) -> VecSet<T> {
        VecSet {
            items: self.union(rhs).cloned().collect(),
        }
    }
}

impl<T: Ord + Clone> std::ops::BitAnd<&VecSet<T>> for &VecSet<T> {
    type Output = VecSet<T>;
    fn bitand(self, rhs: &VecSet<T>) -> VecSet<T> {
        VecSet {
            items: self.intersection(rhs).cloned().collect(),
        }
    }
}

impl<T: Ord + Clone> std::ops::Sub<&VecSet<T>> for &VecSet<T> {
    type Output = VecSet<T>;
    fn sub(self, rhs: &VecSet<T>) -> VecSet<T> {
        VecSet {
            items: self.difference(rhs).cloned().collect(),
        }
    }
}

impl<T: Hash> Hash for VecSet<T> {
    /// As std's `BTreeSet`: the length, then every element in order.
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_usize(self.items.len());
        for x in &self.items {
            x.hash(state);
        }
    }
}

impl<T: fmt::Debug> fmt::Debug for VecSet<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl<T: serde::Serialize> serde::Serialize for VecSet<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

impl<'de, T: serde::Deserialize<'de> + Ord> serde::Deserialize<'de> for VecSet<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Vec::<T>::deserialize(d).map(|v| v.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    //! `VecMap`/`VecSet` against std's `BTreeMap`/`BTreeSet`: the same operations give the same
    //! results, contents, order, hashes and Debug/serde forms.
    use super::*;
    use std::collections::{BTreeMap as StdMap, BTreeSet as StdSet};
    use std::hash::DefaultHasher;

    fn hash_of<T: Hash>(t: &T) -> u64 {
        let mut h = DefaultHasher::new();
        t.hash(&mut h);
        h.finish()
    }

    /// A small deterministic generator (xorshift) so the test needs no extra crates.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    #[test]
    fn map_matches_btreemap() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for round in 0..50 {
            let mut a: VecMap<String, i64> = VecMap::new();
            let mut b: StdMap<String, i64> = StdMap::new();
            for step in 0..300 {
                let k = format!("k{}", rng.next(40));
                let v = (round * 1000 + step) as i64;
                match rng.next(9) {
                    0 | 1 => assert_eq!(a.insert(k.clone(), v), b.insert(k, v)),
                    2 => assert_eq!(a.remove(k.as_str()), b.remove(k.as_str())),
                    3 => {
                        *a.entry(k.clone()).or_default() += v;
                        *b.entry(k).or_default() += v;
                    }
                    4 => {
                        a.entry(k.clone()).and_modify(|x| *x -= 1).or_insert(v);
                        b.entry(k.clone()).and_modify(|x| *x -= 1).or_insert(v);
                    }
                    5 => {
                        a.retain(|_, x| *x % 7 != 3);
                        b.retain(|_, x| *x % 7 != 3);
                    }
                    6 => {
                        let hi = format!("k{}", rng.next(40));
                        let (lo, hi) = if k <= hi { (k, hi) } else { (hi, k) };
                        let ra: Vec<_> = a.range(lo.clone()..hi.clone()).collect();
                        let rb: Vec<_> = b.range(lo.clone()..hi.clone()).collect();
                        assert_eq!(ra, rb);
                        let ra: Vec<_> = a
                            .range::<str, _>((
                                Bound::Included(lo.as_str()),
                                Bound::Included(hi.as_str()),
                            ))
                            .collect();
                        let rb: Vec<_> = b
                            .range::<str, _>((
                                Bound::Included(lo.as_str()),
                                Bound::Included(hi.as_str()),
                            ))
                            .collect();
                        assert_eq!(ra, rb);
                        let ra: Vec<_> = a.range(lo.clone()..).rev().collect();
                        let rb: Vec<_> = b.range(lo..).rev().collect();
                        assert_eq!(ra, rb);
                    }
                    7 => assert_eq!(a.pop_first(), b.pop_first()),
                    _ => {
                        if let Some(x) = a.get_mut(k.as_str()) {
                            *x += 1;
                        }
                        if let Some(x) = b.get_mut(k.as_str()) {
                            *x += 1;
                        }
                    }
                }
                assert!(a.iter().eq(b.iter()));
            }
            let pairs: Vec<(String, i64)> =
                (0..60).map(|i| (format!("x{}", rng.next(30)), i)).collect();
            let a: VecMap<_, _> = pairs.iter().cloned().collect();
            let b: StdMap<_, _> = pairs.iter().cloned().collect();
            assert!(a.iter().eq(b.iter()));
            assert!(a.keys().eq(b.keys()));
            assert!(a.values().eq(b.values()));
            assert!(a.iter().rev().eq(b.iter().rev()));
            assert_eq!(hash_of(&a), hash_of(&b));
            assert_eq!(format!("{a:?}"), format!("{b:?}"));
            assert_eq!(
                serde_json::to_string(&a).unwrap(),
                serde_json::to_string(&b).unwrap()
            );
            let back: VecMap<String, i64> =
                serde_json::from_str(&serde_json::to_string(&b).unwrap()).unwrap();
            assert_eq!(back, a);
            assert_eq!(a.first_key_value(), b.first_key_value());
            assert_eq!(a.last_key_value(), b.last_key_value());
            assert!(a.clone().into_iter().eq(b.clone()));
        }
    }

    #[test]
    fn map_entry_or_default_matches() {
        let mut rng = Rng(7);
        let mut a: VecMap<(u8, i32), Vec<u32>> = VecMap::new();
        let mut b: StdMap<(u8, i32), Vec<u32>> = StdMap::new();
        for i in 0..2000 {
            let k = (rng.next(4) as u8, rng.next(50) as i32 - 25);
            a.entry(k).or_default().push(i);
            b.entry(k).or_default().push(i);
            if i % 5 == 0 {
                let r = (rng.next(4) as u8, rng.next(50) as i32 - 25);
                assert_eq!(a.remove(&r), b.remove(&r));
            }
        }
        assert!(a.iter().eq(b.iter()));
        assert_eq!(hash_of(&a), hash_of(&b));
        let mut a2 = a.split_off(&(2, 0));
        let mut b2 = b.split_off(&(2, 0));
        assert!(a.iter().eq(b.iter()) && a2.iter().eq(b2.iter()));
        a.append(&mut a2);
        b.append(&mut b2);
        assert!(a.iter().eq(b.iter()) && a2.is_empty() && b2.is_empty());
    }

    #[test]
    fn map_order_and_equality_match() {
        let mk = |v: &[(i32, i32)]| -> (VecMap<i32, i32>, StdMap<i32, i32>) {
            (v.iter().copied().collect(), v.iter().copied().collect())
        };
        let cases = [
            vec![],
            vec![(1, 1)],
            vec![(1, 2)],
            vec![(1, 1), (2, 0)],
            vec![(0, 9)],
        ];
        for x in &cases {
            for y in &cases {
                let (ax, bx) = mk(x);
                let (ay, by) = mk(y);
                assert_eq!(ax.cmp(&ay), bx.cmp(&by), "{x:?} vs {y:?}");
                assert_eq!(ax == ay, bx == by);
            }
        }
    }

    #[test]
    fn set_matches_btreeset() {
        let mut rng = Rng(12345);
        for _ in 0..50 {
            let mut a: VecSet<i32> = VecSet::new();
            let mut b: StdSet<i32> = StdSet::new();
            let mut oa: VecSet<i32> = VecSet::new();
            let mut ob: StdSet<i32> = StdSet::new();
            for _ in 0..200 {
                let x = rng.next(60) as i32;
                match rng.next(6) {
                    0 | 1 => assert_eq!(a.insert(x), b.insert(x)),
                    2 => assert_eq!(a.remove(&x), b.remove(&x)),
                    3 => assert_eq!(oa.insert(x), ob.insert(x)),
                    4 => assert_eq!(a.take(&x), b.take(&x)),
                    _ => assert_eq!(a.replace(x), b.replace(x)),
                }
            }
            assert!(a.iter().eq(b.iter()));
            assert!(a.union(&oa).eq(b.union(&ob)));
            assert!(a.intersection(&oa).eq(b.intersection(&ob)));
            assert!(a.difference(&oa).eq(b.difference(&ob)));
            assert!(a.symmetric_difference(&oa).eq(b.symmetric_difference(&ob)));
            assert_eq!(a.is_subset(&oa), b.is_subset(&ob));
            assert_eq!(a.is_disjoint(&oa), b.is_disjoint(&ob));
            assert!((&a | &oa).iter().eq((&b | &ob).iter()));
            assert!((&a - &oa).iter().eq((&b - &ob).iter()));
            assert!((&a & &oa).iter().eq((&b & &ob).iter()));
            assert!(a.range(10..40).eq(b.range(10..40)));
            assert!(a.range(..=20).rev().eq(b.range(..=20).rev()));
            assert_eq!(a.first(), b.first());
            assert_eq!(a.last(), b.last());
            assert_eq!(hash_of(&a), hash_of(&b));
            assert_eq!(a.cmp(&oa), b.cmp(&ob));
            assert_eq!(format!("{a:?}"), format!("{b:?}"));
            assert_eq!(
                serde_json::to_string(&a).unwrap(),
                serde_json::to_string(&b).unwrap()
            );
            a.retain(|x| x % 3 != 0);
            b.retain(|x| x % 3 != 0);
            assert!(a.iter().eq(b.iter()));
            assert_eq!(a.pop_last(), b.pop_last());
            assert_eq!(a.pop_first(), b.pop_first());
            assert!(a.into_iter().eq(b));
        }
    }
}
