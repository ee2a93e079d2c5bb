//! The software manager's variable map: one [`ByteMeta`] per byte that has
//! any, stored in 64-byte chunks of 4-byte granules.
//!
//! Why chunks: the bytes of one access (and of one metadata line) are
//! neighbours, and a map keyed by byte scattered them over the host's memory
//! (a host cache miss per byte was the model's largest single cost). A chunk
//! keeps them together behind one hash lookup.
//!
//! Why granules: the bytes of an aligned access almost always share their
//! whole history (same records, status and permissions), so a granule of 4
//! aligned bytes whose metadata is identical holds it once
//! ([`Granule::Uniform`]) and is split into per-byte metadata only when an
//! access covers part of it or software changes one of its bytes
//! alone ([`Granule::Split`]). A `ByteMeta` is ~200 bytes: per byte the
//! variable map of a 256 KiB array was 50 MiB, far more than the host's
//! caches. [`VarMap::for_range_mut`] hands a uniform granule covered by an
//! access to its caller once, with the number of bytes it stands for; the
//! caller's per-byte work must then depend on the byte only through its
//! metadata and its metadata line, which all 4 aligned bytes share (lines
//! are at least 8 bytes, so even an expanded metadata line — half a data
//! line — holds whole granules).
//!
//! The per-byte map is kept as the reference layout ([`VarMap::per_byte`]):
//! tests run both on the same trace and require byte-identical statistics.

use crate::clock::FxHashMap;

use super::history::ByteMeta;
use super::probemap::ProbeMap;

const CHUNK: u64 = 64;
/// Bytes per granule (aligned).
pub const GRANULE: u64 = 4;
const GRANULES: usize = (CHUNK / GRANULE) as usize;

/// The metadata of 4 aligned bytes.
#[derive(Clone, Debug)]
enum Granule {
    /// No byte has metadata.
    Absent,
    /// Every byte has this metadata.
    Uniform(ByteMeta),
    /// Per byte.
    Split(Box<[Option<ByteMeta>; GRANULE as usize]>),
}

impl Granule {
    /// Makes the granule per-byte (no-op if it is).
    fn split(&mut self) -> &mut [Option<ByteMeta>; GRANULE as usize] {
        if !matches!(self, Granule::Split(_)) {
            let bytes = match std::mem::replace(self, Granule::Absent) {
                Granule::Uniform(m) => std::array::from_fn(|_| Some(m.clone())),
                _ => std::array::from_fn(|_| None),
            };
            *self = Granule::Split(Box::new(bytes));
        }
        match self {
            Granule::Split(b) => b,
            _ => unreachable!("split above"),
        }
    }

    /// Joins a per-byte granule whose bytes all have the same metadata (or
    /// none).
    fn try_join(&mut self) {
        let Granule::Split(b) = self else {
            return;
        };
        if b.iter().all(Option::is_none) {
            *self = Granule::Absent;
        } else if b.iter().all(|m| m.is_some() && *m == b[0]) {
            let m = b[0].take().unwrap_or_default();
            *self = Granule::Uniform(m);
        }
    }

    fn get(&self, i: usize) -> Option<&ByteMeta> {
        match self {
            Granule::Absent => None,
            Granule::Uniform(m) => Some(m),
            Granule::Split(b) => b[i].as_ref(),
        }
    }
}

type Chunk = [Granule; GRANULES];

fn new_chunk() -> Box<Chunk> {
    Box::new(std::array::from_fn(|_| Granule::Absent))
}

#[derive(Clone, Debug)]
enum Store {
    /// Chunk number → chunk (chunks are never removed).
    Chunked(ProbeMap<Box<Chunk>>),
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
            store: Store::Chunked(ProbeMap::new()),
            len: 0,
        }
    }
}

/// Chunk key, granule in the chunk, byte in the granule.
#[inline]
fn split(x: u64) -> (u64, usize, usize) {
    (
        x / CHUNK,
        ((x % CHUNK) / GRANULE) as usize,
        (x % GRANULE) as usize,
    )
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
                let (k, g, i) = split(x);
                m.get(k).and_then(|c| c[g].get(i))
            }
            Store::PerByte(m) => m.get(&x),
        }
    }

    /// Sets byte `x`'s metadata.
    pub fn insert(&mut self, x: u64, meta: ByteMeta) {
        match &mut self.store {
            Store::Chunked(m) => {
                let (k, g, i) = split(x);
                let granule = &mut m.get_or_insert_with(k, new_chunk)[g];
                if let Granule::Uniform(u) = granule {
                    if *u == meta {
                        return;
                    }
                }
                let slot = &mut granule.split()[i];
                if slot.is_none() {
                    self.len += 1;
                }
                *slot = Some(meta);
                // Software sets the bytes of a line in order: try once per
                // granule (joining is only a matter of space and speed).
                if i == GRANULE as usize - 1 {
                    granule.try_join();
                }
            }
            Store::PerByte(m) => {
                if m.insert(x, meta).is_none() {
                    self.len += 1;
                }
            }
        }
    }

    /// Calls `f(x, n, meta)` on the metadata of the bytes of
    /// `[first, first+count)` in order, creating absent ones with `new`:
    /// Prefetches ([`crate::prefetch::line`]) the slot of byte `x`'s chunk
    /// in the chunk index: the first stage of [`VarMap::prefetch`], a few
    /// accesses earlier (a hint, no state changes).
    #[inline]
    pub fn prefetch_index(&self, x: u64) {
        if let Store::Chunked(m) = &self.store {
            m.prefetch(split(x).0);
        }
    }

    /// Prefetches ([`crate::prefetch::line`]) the metadata of byte `x`'s
    /// granule, if its chunk exists (never allocating: a hint, no state
    /// changes).
    #[inline]
    pub fn prefetch(&self, x: u64) {
        if let Store::Chunked(m) = &self.store {
            let (k, g, _) = split(x);
            if let Some(chunk) = m.get(k) {
                crate::prefetch::lines(&chunk[g] as *const Granule, std::mem::size_of::<Granule>());
            }
        }
    }

    /// `n` bytes from `x` on share `meta` (a uniform granule the range
    /// covers; `n` is 1 otherwise, and always in the per-byte layout). One
    /// chunk lookup per chunk instead of one per byte.
    #[inline]
    pub fn for_range_mut(
        &mut self,
        first: u64,
        count: u64,
        new: impl Fn() -> ByteMeta,
        mut f: impl FnMut(u64, u64, &mut ByteMeta),
    ) {
        match &mut self.store {
            Store::Chunked(m) => {
                let mut i = 0;
                while i < count {
                    let x = first.wrapping_add(i);
                    let (k, _, _) = split(x);
                    let chunk = m.get_or_insert_with(k, new_chunk);
                    let off = x % CHUNK;
                    let n = (CHUNK - off).min(count - i);
                    // Bytes [off, off + n) of the chunk (no wrap inside a
                    // chunk: it is aligned).
                    let base = x - off;
                    let mut j = off;
                    while j < off + n {
                        let granule = &mut chunk[(j / GRANULE) as usize];
                        let gi = j % GRANULE;
                        let rest = off + n - j;
                        if gi == 0 && rest >= GRANULE {
                            if let Granule::Absent = granule {
                                *granule = Granule::Uniform(new());
                                self.len += GRANULE as usize;
                            }
                            if let Granule::Uniform(meta) = granule {
                                f(base + j, GRANULE, meta);
                                j += GRANULE;
                                continue;
                            }
                        }
                        let take = (GRANULE - gi).min(rest);
                        let bytes = granule.split();
                        for b in gi..gi + take {
                            let slot = &mut bytes[b as usize];
                            if slot.is_none() {
                                self.len += 1;
                            }
                            f(base + j + (b - gi), 1, slot.get_or_insert_with(&new));
                        }
                        granule.try_join();
                        j += take;
                    }
                    i += n;
                }
            }
            Store::PerByte(m) => {
                for i in 0..count {
                    let x = first.wrapping_add(i);
                    let len = &mut self.len;
                    let meta = m.entry(x).or_insert_with(|| {
                        *len += 1;
                        new()
                    });
                    f(x, 1, meta);
                }
            }
        }
    }

    /// Removes and returns byte `x`'s metadata.
    pub fn remove(&mut self, x: u64) -> Option<ByteMeta> {
        let out = match &mut self.store {
            Store::Chunked(m) => {
                let (k, g, i) = split(x);
                // Empty chunks stay: the address range is likely reused.
                let granule = &mut m.get_mut(k)?[g];
                if let Granule::Absent = granule {
                    return None;
                }
                let out = granule.split()[i].take();
                granule.try_join();
                out
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
                for (k, chunk) in m.iter() {
                    for (g, granule) in chunk.iter().enumerate() {
                        for i in 0..GRANULE as usize {
                            if let Some(b) = granule.get(i) {
                                f(k * CHUNK + (g as u64) * GRANULE + i as u64, b);
                            }
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

    fn everything() -> ByteMeta {
        ByteMeta {
            status: HwStatus::Everything,
            ..ByteMeta::new()
        }
    }

    #[test]
    fn layouts_agree() {
        for mut v in [VarMap::default(), VarMap::per_byte()] {
            assert!(v.get(5).is_none());
            v.insert(5, everything());
            v.insert(u64::MAX, ByteMeta::new());
            v.insert(70, ByteMeta::new());
            assert_eq!(v.len(), 3);
            assert_eq!(v.get(5).map(|m| m.status), Some(HwStatus::Everything));
            assert!(v.get(4).is_none() && v.get(6).is_none());
            let mut seen = Vec::new();
            v.for_each(|x, _| seen.push(x));
            seen.sort_unstable();
            assert_eq!(seen, [5, 70, u64::MAX]);
            assert!(v.remove(5).is_some());
            assert!(v.remove(5).is_none());
            assert_eq!(v.len(), 2);
        }
    }

    /// Sets the status of a range's bytes; returns the calls `(x, n)`.
    fn visit(v: &mut VarMap, first: u64, count: u64, status: HwStatus) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        v.for_range_mut(first, count, everything, |x, n, m| {
            m.status = status;
            out.push((x, n));
        });
        out
    }

    #[test]
    fn granules_split_and_join() {
        let mut v = VarMap::default();
        // An aligned access: one call per granule.
        let (lw, reads) = (HwStatus::LastWrite, HwStatus::AllLastReads);
        assert_eq!(visit(&mut v, 64, 8, lw), [(64, 4), (68, 4)]);
        assert_eq!(v.len(), 8);
        // A misaligned one splits the granules it covers in part.
        let bytes = |r: std::ops::Range<u64>| r.map(|x| (x, 1)).collect::<Vec<_>>();
        assert_eq!(visit(&mut v, 66, 4, reads), bytes(66..70));
        assert_eq!(v.len(), 8);
        assert_eq!(v.get(65).map(|m| m.status), Some(lw));
        assert_eq!(v.get(66).map(|m| m.status), Some(reads));
        // The bytes are alike again: covered whole, they join.
        assert_eq!(visit(&mut v, 64, 8, lw), bytes(64..72));
        assert_eq!(visit(&mut v, 64, 8, lw), [(64, 4), (68, 4)]);
        // One byte changed alone; removal.
        v.insert(65, ByteMeta::new());
        assert_eq!(v.get(65).map(|m| m.status), Some(HwStatus::InSoftware));
        assert_eq!(v.get(64).map(|m| m.status), Some(HwStatus::LastWrite));
        assert_eq!(v.remove(64).map(|m| m.status), Some(HwStatus::LastWrite));
        assert!(v.get(64).is_none());
        assert_eq!(v.len(), 7);
        for x in 65..72 {
            assert!(v.remove(x).is_some());
        }
        assert!(v.is_empty());
        // Ranges across chunk ends and at the top of the address space.
        assert_eq!(visit(&mut v, 62, 6, lw), [(62, 1), (63, 1), (64, 4)]);
        assert_eq!(visit(&mut v, u64::MAX - 3, 4, lw), [(u64::MAX - 3, 4)]);
        assert_eq!(v.len(), 10);
    }
}
