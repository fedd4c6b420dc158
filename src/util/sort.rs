//! Sorting and ordered collecting, with one shared implementation on wasm32.
//!
//! Every `sort*` call and every `collect` into a `BTreeMap`/`BTreeSet` makes std instantiate its
//! sort (driftsort or ipnsort, a few KB each) for that element type and comparator. Natively that
//! is what we want, and these helpers call std. On wasm32 the instantiations made up about a sixth
//! of the module, so there they go through one non-generic stable merge sort of indices
//! ([`sorted_indices`]); the per-call-site code left is a comparison closure and a few swaps.
//! None of these sorts is on the simulation's hot path (small inputs, rebalances only).
//!
//! Results are identical on both targets: the stable variants are stable on both, and the
//! `unstable` variants must only be used where equal elements are indistinguishable (distinct
//! keys, or ties between equal values), so that any correct sort gives the same output.

use crate::util::map::{BTreeMap, BTreeSet};
use std::cmp::Ordering;

/// Stable sort by `cmp` (as `slice::sort_by`).
#[inline]
pub fn by<T>(v: &mut [T], cmp: impl FnMut(&T, &T) -> Ordering) {
    #[cfg(not(target_arch = "wasm32"))]
    v.sort_by(cmp);
    #[cfg(target_arch = "wasm32")]
    {
        let mut cmp = cmp;
        erased(v, &mut |a, b| cmp(a, b) == Ordering::Less);
    }
}

/// Stable sort by a key (as `slice::sort_by_key`).
#[inline]
pub fn by_key<T, K: Ord>(v: &mut [T], key: impl FnMut(&T) -> K) {
    #[cfg(not(target_arch = "wasm32"))]
    v.sort_by_key(key);
    #[cfg(target_arch = "wasm32")]
    {
        let mut key = key;
        erased(v, &mut |a, b| key(a) < key(b));
    }
}

/// Stable sort (as `slice::sort`).
#[inline]
pub fn sort<T: Ord>(v: &mut [T]) {
    #[cfg(not(target_arch = "wasm32"))]
    v.sort();
    #[cfg(target_arch = "wasm32")]
    erased(v, &mut |a, b| a < b);
}

/// `slice::sort_unstable` natively. Only for elements where equal means indistinguishable.
#[inline]
pub fn unstable<T: Ord>(v: &mut [T]) {
    #[cfg(not(target_arch = "wasm32"))]
    v.sort_unstable();
    #[cfg(target_arch = "wasm32")]
    erased(v, &mut |a, b| a < b);
}

/// `slice::sort_unstable_by_key` natively. Only where elements with equal keys are
/// indistinguishable (in practice: keys are distinct), so the order of ties cannot show.
#[inline]
pub fn unstable_by_key<T, K: Ord>(v: &mut [T], key: impl FnMut(&T) -> K) {
    #[cfg(not(target_arch = "wasm32"))]
    v.sort_unstable_by_key(key);
    #[cfg(target_arch = "wasm32")]
    {
        let mut key = key;
        erased(v, &mut |a, b| key(a) < key(b));
    }
}

/// `iter.collect::<BTreeMap<_, _>>()`; on a duplicate key the last value wins, as with `collect`.
#[inline]
pub fn collect_map<K: Ord, V>(iter: impl IntoIterator<Item = (K, V)>) -> BTreeMap<K, V> {
    #[cfg(not(target_arch = "wasm32"))]
    return iter.into_iter().collect();
    #[cfg(target_arch = "wasm32")]
    {
        let mut m = BTreeMap::new();
        for (k, v) in iter {
            m.insert(k, v);
        }
        m
    }
}

/// `iter.collect::<Result<BTreeMap<_, _>, _>>()`: the first error, else the map.
#[inline]
pub fn try_collect_map<K: Ord, V, E>(
    iter: impl IntoIterator<Item = Result<(K, V), E>>,
) -> Result<BTreeMap<K, V>, E> {
    #[cfg(not(target_arch = "wasm32"))]
    return iter.into_iter().collect();
    #[cfg(target_arch = "wasm32")]
    {
        let mut m = BTreeMap::new();
        for kv in iter {
            let (k, v) = kv?;
            m.insert(k, v);
        }
        Ok(m)
    }
}

/// `iter.collect::<BTreeSet<_>>()`.
#[inline]
pub fn collect_set<T: Ord>(iter: impl IntoIterator<Item = T>) -> BTreeSet<T> {
    #[cfg(not(target_arch = "wasm32"))]
    return iter.into_iter().collect();
    #[cfg(target_arch = "wasm32")]
    {
        let mut s = BTreeSet::new();
        for x in iter {
            s.insert(x);
        }
        s
    }
}

/// Sorts `v` stably by `less`; the only generic code is the closure and the swaps.
#[cfg(any(target_arch = "wasm32", test))]
fn erased<T>(v: &mut [T], less: &mut dyn FnMut(&T, &T) -> bool) {
    if v.len() < 2 {
        return;
    }
    let perm = {
        let s = &*v;
        sorted_indices(s.len(), &mut |a, b| less(&s[a], &s[b]))
    };
    apply(perm, &mut |i, j| v.swap(i, j));
}

/// Stable merge sort of `0..n` where `less(a, b)` says element `a` sorts before element `b`.
/// Returns `perm`: position `k` of the sorted sequence takes element `perm[k]`.
#[cfg(any(target_arch = "wasm32", test))]
#[inline(never)]
fn sorted_indices(n: usize, less: &mut dyn FnMut(usize, usize) -> bool) -> Vec<usize> {
    const RUN: usize = 12;
    let mut a: Vec<usize> = (0..n).collect();
    // Insertion sort of each run of RUN elements (a later equal element never moves before an
    // earlier one).
    let mut start = 0;
    while start < n {
        let end = (start + RUN).min(n);
        for i in start + 1..end {
            let x = a[i];
            let mut j = i;
            while j > start && less(x, a[j - 1]) {
                a[j] = a[j - 1];
                j -= 1;
            }
            a[j] = x;
        }
        start = end;
    }
    // Bottom-up merges, taking from the right run only when strictly less.
    let mut b = vec![0; n];
    let mut width = RUN;
    while width < n {
        let mut lo = 0;
        while lo < n {
            let mid = (lo + width).min(n);
            let hi = (lo + 2 * width).min(n);
            if mid == hi || !less(a[mid], a[mid - 1]) {
                b[lo..hi].copy_from_slice(&a[lo..hi]);
            } else {
                let (mut i, mut j) = (lo, mid);
                for slot in &mut b[lo..hi] {
                    if j < hi && (i == mid || less(a[j], a[i])) {
                        *slot = a[j];
                        j += 1;
                    } else {
                        *slot = a[i];
                        i += 1;
                    }
                }
            }
            lo = hi;
        }
        std::mem::swap(&mut a, &mut b);
        width *= 2;
    }
    a
}

/// Rearranges by `perm` (position `k` takes the element at `perm[k]`) with `swap`, one cycle of
/// the permutation at a time.
#[cfg(any(target_arch = "wasm32", test))]
#[inline(never)]
fn apply(mut perm: Vec<usize>, swap: &mut dyn FnMut(usize, usize)) {
    for start in 0..perm.len() {
        let mut k = start;
        loop {
            let src = perm[k];
            perm[k] = k;
            if src == start || src == k {
                break;
            }
            swap(k, src);
            k = src;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (no RNG dependency in unit tests).
    fn next(x: &mut u64) -> u64 {
        *x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *x >> 33
    }

    #[test]
    fn erased_sort_is_stable_and_matches_std() {
        let mut seed = 7;
        for n in [0usize, 1, 2, 3, 11, 12, 13, 24, 25, 100, 1000, 1031] {
            for modulus in [1u64, 2, 5, 1_000_000] {
                let v: Vec<(u64, usize)> = (0..n).map(|i| (next(&mut seed) % modulus, i)).collect();
                let mut want = v.clone();
                want.sort_by_key(|e| e.0);
                let mut got = v.clone();
                erased(&mut got, &mut |a, b| a.0 < b.0);
                assert_eq!(got, want, "n={n} modulus={modulus}");
            }
        }
    }

    #[test]
    fn sorted_input_and_reverse_input() {
        let mut up: Vec<u32> = (0..500).collect();
        erased(&mut up, &mut |a, b| a < b);
        assert!(up.windows(2).all(|w| w[0] < w[1]));
        let mut down: Vec<u32> = (0..500).rev().collect();
        erased(&mut down, &mut |a, b| a < b);
        assert_eq!(down, up);
    }

    #[test]
    fn helpers_match_std() {
        let mut v = vec![3, 1, 2, 3, 0];
        sort(&mut v);
        assert_eq!(v, [0, 1, 2, 3, 3]);
        let m = collect_map([(2, "b"), (1, "a"), (2, "c")]);
        assert_eq!(m.into_iter().collect::<Vec<_>>(), [(1, "a"), (2, "c")]);
        let r: Result<_, ()> = try_collect_map([Ok((2, 'b')), Ok((1, 'a'))]);
        assert_eq!(
            r.unwrap().into_iter().collect::<Vec<_>>(),
            [(1, 'a'), (2, 'b')]
        );
        assert_eq!(try_collect_map([Ok((1, 'a')), Err(1), Err(2)]), Err(1));
        let s = collect_set([3, 1, 3]);
        assert_eq!(s.into_iter().collect::<Vec<_>>(), [1, 3]);
    }
}
