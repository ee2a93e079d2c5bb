//! [`ProbeMap`]: a hash map from `u64` keys (metadata line numbers, variable
//! map chunk numbers) to values, stored in one array by linear probing, so
//! that the model can ask the host for a key's slot before it needs it
//! ([`ProbeMap::prefetch`]): the slot is `home(key)`, arithmetic on the key.
//!
//! Why not `FxHashMap`: its probe of a key the host's caches lack was a
//! miss the model could not hide (the resident-metadata map in
//! `View::perm`, the variable map's chunk index in the batch's hint,
//! docs/lardish.md), and hashbrown does not say where a key's group lies.
//! Iteration order is the slots' order; nothing in the model depends on it.

use crate::prefetch;

/// Smallest table: 2^4 slots.
const MIN_BITS: u32 = 4;

/// `u64` → `V` by linear probing; at most half the slots are used.
#[derive(Clone, Debug)]
pub struct ProbeMap<V> {
    slots: Vec<Option<(u64, V)>>,
    len: usize,
    /// `64 - log2(slots.len())`: the home slot is the product's top bits.
    shift: u32,
}

impl<V> Default for ProbeMap<V> {
    fn default() -> Self {
        ProbeMap::with_bits(MIN_BITS)
    }
}

impl<V> ProbeMap<V> {
    /// An empty map.
    pub fn new() -> ProbeMap<V> {
        ProbeMap::default()
    }

    fn with_bits(bits: u32) -> ProbeMap<V> {
        ProbeMap {
            slots: (0..1usize << bits).map(|_| None).collect(),
            len: 0,
            shift: 64 - bits,
        }
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if no key is present.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline(always)]
    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// The slot where probing for `key` starts (Fibonacci hashing: the top
    /// bits of the product depend on every bit of the key).
    #[inline(always)]
    fn home(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// `Ok(slot)` of `key`, or `Err(slot)`: the empty slot ending its probe.
    #[inline(always)]
    fn find(&self, key: u64) -> Result<usize, usize> {
        let mask = self.mask();
        let mut i = self.home(key);
        loop {
            match &self.slots[i] {
                Some((k, _)) if *k == key => return Ok(i),
                Some(_) => i = (i + 1) & mask,
                None => return Err(i),
            }
        }
    }

    /// Asks the host for the slot where a lookup of `key` starts (a hint:
    /// no state changes).
    #[inline(always)]
    pub fn prefetch(&self, key: u64) {
        prefetch::line(self.slots.as_ptr().wrapping_add(self.home(key)));
    }

    /// The value of `key`.
    #[inline]
    pub fn get(&self, key: u64) -> Option<&V> {
        let i = self.find(key).ok()?;
        self.slots[i].as_ref().map(|(_, v)| v)
    }

    /// The value of `key`, mutably.
    #[inline]
    pub fn get_mut(&mut self, key: u64) -> Option<&mut V> {
        let i = self.find(key).ok()?;
        self.slots[i].as_mut().map(|(_, v)| v)
    }

    /// True if `key` is present.
    #[inline]
    pub fn contains_key(&self, key: u64) -> bool {
        self.find(key).is_ok()
    }

    /// The value of `key`, inserting `make()` first if absent.
    #[inline]
    pub fn get_or_insert_with(&mut self, key: u64, make: impl FnOnce() -> V) -> &mut V {
        let i = match self.find(key) {
            Ok(i) => i,
            Err(i) => self.put(i, key, make()),
        };
        match &mut self.slots[i] {
            Some((_, v)) => v,
            None => unreachable!("slot {i} was just found or filled"),
        }
    }

    /// Sets `key` to `value`; returns the old value.
    pub fn insert(&mut self, key: u64, value: V) -> Option<V> {
        match self.find(key) {
            Ok(i) => self.slots[i]
                .as_mut()
                .map(|(_, v)| std::mem::replace(v, value)),
            Err(i) => {
                self.put(i, key, value);
                None
            }
        }
    }

    /// Stores a new key in empty slot `i` (growing first if the table
    /// would be over half full); returns its slot.
    fn put(&mut self, i: usize, key: u64, value: V) -> usize {
        if 2 * (self.len + 1) > self.slots.len() {
            self.grow();
            let Err(j) = self.find(key) else {
                unreachable!("a new key is absent after growing")
            };
            self.slots[j] = Some((key, value));
            self.len += 1;
            return j;
        }
        self.slots[i] = Some((key, value));
        self.len += 1;
        i
    }

    fn grow(&mut self) {
        let bits = 64 - self.shift + 1;
        let old = std::mem::replace(self, ProbeMap::with_bits(bits));
        for (k, v) in old.slots.into_iter().flatten() {
            if let Err(j) = self.find(k) {
                self.slots[j] = Some((k, v));
                self.len += 1;
            }
        }
    }

    /// Removes `key`; returns its value. The keys probing past its slot
    /// move back (backward-shift deletion), so every probe still ends at
    /// its key or at the first empty slot.
    pub fn remove(&mut self, key: u64) -> Option<V> {
        let mut hole = self.find(key).ok()?;
        let (_, value) = self.slots[hole].take()?;
        self.len -= 1;
        let mask = self.mask();
        let mut j = hole;
        loop {
            j = (j + 1) & mask;
            let home = match &self.slots[j] {
                Some((k, _)) => self.home(*k),
                None => break,
            };
            // The key at `j` may fill the hole if the hole lies on its
            // probe, i.e. between its home and `j` (cyclically).
            if j.wrapping_sub(home) & mask >= j.wrapping_sub(hole) & mask {
                self.slots[hole] = self.slots[j].take();
                hole = j;
            }
        }
        Some(value)
    }

    /// Every key and value (in slot order).
    pub fn iter(&self) -> impl Iterator<Item = (u64, &V)> {
        self.slots.iter().flatten().map(|(k, v)| (*k, v))
    }

    /// Every key (in slot order).
    pub fn keys(&self) -> impl Iterator<Item = u64> + '_ {
        self.iter().map(|(k, _)| k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// A small xorshift generator (deterministic).
    fn rng(seed: u64) -> impl FnMut() -> u64 {
        let mut x = seed | 1;
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    /// Random inserts, removes and lookups against `HashMap`, for key sets
    /// that collide a lot (few distinct keys, keys differing only in high
    /// bits, sequential keys) and at every size the table grows through.
    /// A named way of drawing keys from random words.
    type Shape = (&'static str, fn(u64) -> u64);

    #[test]
    fn agrees_with_hashmap() {
        let shapes: [Shape; 4] = [
            ("few keys", |r| r % 37),
            ("high bits", |r| (r % 300) << 50),
            ("sequential", |r| r % 5000),
            ("any", |r| r),
        ];
        for (name, key) in shapes {
            let mut next = rng(0x5eed ^ name.len() as u64);
            let mut m = ProbeMap::new();
            let mut h = HashMap::new();
            for step in 0..60_000u64 {
                let k = key(next());
                match next() % 4 {
                    0 | 1 => assert_eq!(m.insert(k, step), h.insert(k, step), "{name}: insert {k}"),
                    2 => assert_eq!(m.remove(k), h.remove(&k), "{name}: remove {k}"),
                    _ => {
                        *m.get_or_insert_with(k, || step) += 1;
                        *h.entry(k).or_insert(step) += 1;
                    }
                }
                assert_eq!(m.get(k), h.get(&k), "{name}: get {k}");
                assert_eq!(m.contains_key(k ^ 1), h.contains_key(&(k ^ 1)), "{name}");
                assert_eq!(m.len(), h.len(), "{name}: len");
            }
            let mut keys: Vec<u64> = m.keys().collect();
            let mut expected: Vec<u64> = h.keys().copied().collect();
            keys.sort_unstable();
            expected.sort_unstable();
            assert_eq!(keys, expected, "{name}: keys");
            for (k, v) in m.iter() {
                assert_eq!(Some(v), h.get(&k), "{name}: iter");
            }
        }
    }

    #[test]
    fn remove_keeps_every_probe_reachable() {
        // Every key of a full run of collisions stays reachable whichever
        // one is removed.
        for victim in 0..24u64 {
            let mut m = ProbeMap::new();
            let keys: Vec<u64> = (0..24u64).map(|i| i << 58).collect();
            for &k in &keys {
                m.insert(k, k);
            }
            assert_eq!(m.remove(keys[victim as usize]), Some(keys[victim as usize]));
            for (i, &k) in keys.iter().enumerate() {
                let want = (i as u64 != victim).then_some(&k);
                assert_eq!(m.get(k), want, "victim {victim}, key {i}");
            }
            assert_eq!(m.get_mut(keys[0]).is_some(), victim != 0);
            assert_eq!(m.remove(keys[victim as usize]), None);
        }
    }
}
