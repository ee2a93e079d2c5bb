//! The software manager's variable map: one [`ByteMeta`] per byte that has
//! any, stored in 64-byte chunks.
//!
//! Why chunks: the bytes of one access (and of one metadata line) are
//! neighbours, and a map keyed by byte scattered them over the host's memory
//! (a host cache miss per byte was the model's largest single cost). A chunk
//! keeps them together behind one hash lookup. The per-byte map is kept as
//! the reference layout ([`VarMap::per_byte`]): tests run both on the same
//! trace and require byte-identical statistics.

use crate::clock::FxHashMap;

use super::history::ByteMeta;

const CHUNK: u64 = 64;

type Chunk = [Option<ByteMeta>; CHUNK as usize];

#[derive(Clone, Debug)]
enum Store {
    Chunked(FxHashMap<u64, Box<Chunk>>),
    PerByte(FxHashMap<u64, ByteMeta>),
}

/// Byte address → [`ByteMeta`].
#[derive(Clone, Debug)]
pub struct VarMap {
    store: Store,
    len: usize,
}

impl Default for VarMap {
    fn default() -> Self {
        VarMap {
            store: Store::Chunked(FxHashMap::default()),
            len: 0,
        }
    }
}

fn split(x: u64) -> (u64, usize) {
    (x / CHUNK, (x % CHUNK) as usize)
}

impl VarMap {
    /// The reference layout: one hash map entry per byte.
    pub fn per_byte() -> VarMap {
        VarMap {
            store: Store::PerByte(FxHashMap::default()),
            len: 0,
        }
    }

    /// Bytes with metadata.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if no byte has metadata.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The metadata of byte `x`.
    #[inline]
    pub fn get(&self, x: u64) -> Option<&ByteMeta> {
        match &self.store {
            Store::Chunked(m) => {
                let (k, i) = split(x);
                m.get(&k).and_then(|c| c[i].as_ref())
            }
            Store::PerByte(m) => m.get(&x),
        }
    }

    /// The metadata of byte `x`, created by `new` if absent.
    #[inline]
    pub fn get_or_insert_with(&mut self, x: u64, new: impl FnOnce() -> ByteMeta) -> &mut ByteMeta {
        match &mut self.store {
            Store::Chunked(m) => {
                let (k, i) = split(x);
                let chunk = m
                    .entry(k)
                    .or_insert_with(|| Box::new(std::array::from_fn(|_| None)));
                let slot = &mut chunk[i];
                if slot.is_none() {
                    self.len += 1;
                }
                slot.get_or_insert_with(new)
            }
            Store::PerByte(m) => {
                let len = &mut self.len;
                m.entry(x).or_insert_with(|| {
                    *len += 1;
                    new()
                })
            }
        }
    }

    /// Calls `f` on the metadata of each byte of `[first, first+count)` in
    /// order, creating absent ones with `new`: one chunk lookup per chunk
    /// instead of one per byte.
    #[inline]
    pub fn for_range_mut(
        &mut self,
        first: u64,
        count: u64,
        new: impl Fn() -> ByteMeta,
        mut f: impl FnMut(u64, &mut ByteMeta),
    ) {
        match &mut self.store {
            Store::Chunked(m) => {
                let mut i = 0;
                while i < count {
                    let x = first.wrapping_add(i);
                    let (k, off) = split(x);
                    let chunk = m
                        .entry(k)
                        .or_insert_with(|| Box::new(std::array::from_fn(|_| None)));
                    let n = (CHUNK - off as u64).min(count - i);
                    for j in 0..n {
                        let slot = &mut chunk[off + j as usize];
                        if slot.is_none() {
                            self.len += 1;
                        }
                        f(x.wrapping_add(j), slot.get_or_insert_with(&new));
                    }
                    i += n;
                }
            }
            Store::PerByte(_) => {
                for i in 0..count {
                    let x = first.wrapping_add(i);
                    f(x, self.get_or_insert_with(x, &new));
                }
            }
        }
    }

    /// Sets byte `x`'s metadata.
    pub fn insert(&mut self, x: u64, meta: ByteMeta) {
        *self.get_or_insert_with(x, ByteMeta::new) = meta;
    }

    /// Removes and returns byte `x`'s metadata.
    pub fn remove(&mut self, x: u64) -> Option<ByteMeta> {
        let out = match &mut self.store {
            Store::Chunked(m) => {
                let (k, i) = split(x);
                // Empty chunks stay: the address range is likely reused.
                m.get_mut(&k)?[i].take()
            }
            Store::PerByte(m) => m.remove(&x),
        };
        if out.is_some() {
            self.len -= 1;
        }
        out
    }

    /// Every byte with metadata (in no particular order).
    pub fn for_each(&self, mut f: impl FnMut(u64, &ByteMeta)) {
        match &self.store {
            Store::Chunked(m) => {
                for (k, chunk) in m {
                    for (i, b) in chunk.iter().enumerate() {
                        if let Some(b) = b {
                            f(k * CHUNK + i as u64, b);
                        }
                    }
                }
            }
            Store::PerByte(m) => {
                for (x, b) in m {
                    f(*x, b);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lardish::history::HwStatus;

    #[test]
    fn layouts_agree() {
        for mut v in [VarMap::default(), VarMap::per_byte()] {
            assert!(v.get(5).is_none());
            v.get_or_insert_with(5, || ByteMeta {
                status: HwStatus::Everything,
                ..ByteMeta::new()
            });
            v.get_or_insert_with(5, ByteMeta::new);
            v.insert(u64::MAX, ByteMeta::new());
            v.insert(70, ByteMeta::new());
            assert_eq!(v.len(), 3);
            assert_eq!(v.get(5).map(|m| m.status), Some(HwStatus::Everything));
            let mut seen = Vec::new();
            v.for_each(|x, _| seen.push(x));
            seen.sort_unstable();
            assert_eq!(seen, [5, 70, u64::MAX]);
            assert!(v.remove(5).is_some());
            assert!(v.remove(5).is_none());
            assert_eq!(v.len(), 2);
        }
    }
}
