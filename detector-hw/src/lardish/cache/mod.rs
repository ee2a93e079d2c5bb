//! Set-associative LRU caches and the three-level MESI hierarchy (private
//! L1/L2 per core, shared inclusive L3). Lines are identified by *line
//! numbers* (`address / line_bytes`); metadata lines use line numbers with
//! [`MD_BIT`] set (see [`super::layout`]).

mod scan;

use super::config::HwConfig;
use crate::prefetch;
use scan::Scan;

/// What a cache line holds (RADISH Figure 11's categories).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineKind {
    /// Program data, software-manager or FastTrack shadow data.
    Data,
    /// A compact (1:1) metadata line.
    MdCompact,
    /// One of the two lines of expanded (2:1) metadata.
    MdExpanded,
}

impl LineKind {
    fn index(self) -> usize {
        match self {
            LineKind::Data => 0,
            LineKind::MdCompact => 1,
            LineKind::MdExpanded => 2,
        }
    }
}

/// MESI state of a data line in a private cache (metadata lines are not
/// coherent and are always `Exclusive` to their owner core).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mesi {
    /// Modified.
    M,
    /// Exclusive.
    E,
    /// Shared.
    S,
}

const INVALID: u64 = u64::MAX;

/// In an L2 way's link word: the line was filled into the L1, at the way in
/// the bits below (still there if that way's tag is the line, see
/// [`Hierarchy`]).
const IN_L1: u64 = 1 << 31;

/// Largest LRU stamp: stamps are 24 bits (see [`Cache::renumber`]).
const MAX_TICK: u64 = (1 << 24) - 1;

/// A way's word: its link (high 32 bits: in the L3 the directory bits, in
/// an L2 or L1 the way of the line's other private copy, see [`Hierarchy`])
/// and its LRU stamp, kind and MESI state (`tick << 8 | kind << 4 | state`,
/// the low 32 bits). Ticks are unique within a cache, so comparing the low
/// halves orders ways as comparing ticks does.
#[inline]
fn meta(tick: u64, kind: LineKind, state: Mesi) -> u64 {
    tick << 8 | (kind.index() as u64) << 4 | state as u64
}

/// The LRU order key of a way's word (its stamp, kind and state).
#[inline]
fn stamp(m: u64) -> u32 {
    m as u32
}

#[inline]
fn meta_kind(m: u64) -> LineKind {
    match (m >> 4) & 3 {
        0 => LineKind::Data,
        1 => LineKind::MdCompact,
        _ => LineKind::MdExpanded,
    }
}

#[inline]
fn meta_state(m: u64) -> Mesi {
    match m & 3 {
        0 => Mesi::M,
        1 => Mesi::E,
        _ => Mesi::S,
    }
}

/// One set-associative cache with true LRU replacement.
///
/// Storage: one block per set holding the set's lines (tags), then each
/// way's word: directory, stamp, kind and state ([`meta`]): the model's
/// cache arrays are far larger than the host's caches, so a lookup scans 8
/// bytes per way, and what it then reads or writes of the way is one more
/// word (one host cache line; the directory had a word of its own, a third
/// host line per access). Sets start on host cache lines. A way is named by
/// the index of its tag.
#[derive(Clone, Debug)]
pub struct Cache {
    sets: usize,
    /// `sets - 1` when `sets` is a power of two (the set index is then a
    /// mask instead of a division), else `u64::MAX`.
    set_mask: u64,
    ways: usize,
    /// Index in `block` of the first set (aligns sets to host lines).
    start: usize,
    block: Vec<u64>,
    /// Per set: the line stamped last (the set's most recently used line),
    /// or `INVALID` when unknown, and its way. A touch of that line changes
    /// no LRU order and is skipped: stamps only order the lines of one set,
    /// so leaving one out keeps every later replacement decision. A lookup
    /// of that line needs no scan of the set (a line changes ways only by
    /// [`Cache::insert_at`] and [`Cache::remove`], which keep this).
    mru: Vec<Mru>,
    /// Use `mru` (false: the reference model, every touch scans the set).
    fast: bool,
    /// How sets are scanned (the reference model: [`Scan::Scalar`]).
    scan: Scan,
    tick: u64,
    /// Renumber when `tick` reaches this ([`MAX_TICK`]; smaller in tests).
    max_tick: u64,
    /// Lines held, by [`LineKind`].
    pub counts: [u64; 3],
}

/// A set's most recently used line and its way (the index of its tag).
#[derive(Clone, Copy, Debug)]
struct Mru {
    line: u64,
    way: usize,
}

/// No most recently used line known.
const NO_MRU: Mru = Mru {
    line: INVALID,
    way: 0,
};

/// A line displaced from a cache.
#[derive(Clone, Copy, Debug)]
pub struct Evicted {
    /// Its line number.
    pub line: u64,
    /// What it held.
    pub kind: LineKind,
    /// Its link word (the L3 of a [`Hierarchy`]: cores whose L2 may hold
    /// it; an L2: [`IN_L1`] and its L1 way; an L1: its L2 way).
    pub dir: u64,
}

impl Cache {
    /// An empty cache of `sets` × `ways` lines.
    pub fn new(sets: usize, ways: usize) -> Cache {
        let (n, w) = (sets.max(1), ways.max(1));
        // 7 spare words: the first set starts on a 64-byte boundary.
        let mut block = vec![0u64; 2 * n * w + 7];
        let start = (block.as_ptr() as usize).wrapping_neg() % 64 / 8;
        for s in 0..n {
            let t = start + 2 * w * s;
            block[t..t + w].fill(INVALID);
        }
        Cache {
            sets: n,
            set_mask: if n.is_power_of_two() {
                n as u64 - 1
            } else {
                u64::MAX
            },
            ways: w,
            start,
            block,
            mru: vec![NO_MRU; n],
            fast: true,
            scan: Scan::host(),
            tick: 0,
            max_tick: MAX_TICK,
            counts: [0; 3],
        }
    }

    /// The same cache without the most-recently-used shortcut (the
    /// reference model of the tests).
    pub fn reference(sets: usize, ways: usize) -> Cache {
        Cache {
            fast: false,
            scan: Scan::Scalar,
            ..Cache::new(sets, ways)
        }
    }

    /// Total lines.
    pub fn capacity(&self) -> u64 {
        (self.sets * self.ways) as u64
    }

    #[inline]
    fn set_of(&self, line: u64) -> usize {
        (if self.set_mask != u64::MAX {
            line & self.set_mask
        } else {
            line % self.sets as u64
        }) as usize
    }

    /// The tags of set `set`.
    #[inline]
    fn set_tags(&self, set: usize) -> std::ops::Range<usize> {
        let s = self.start + 2 * self.ways * set;
        s..s + self.ways
    }

    /// Prefetches ([`prefetch::line`]) the words a lookup of `line` reads: its
    /// set's most recently used record, tags and way words. No state
    /// changes.
    #[inline]
    pub fn prefetch_set(&self, line: u64) {
        let set = self.set_of(line);
        prefetch::line(self.mru.as_ptr().wrapping_add(set));
        let first = self
            .block
            .as_ptr()
            .wrapping_add(self.start + 2 * self.ways * set);
        prefetch::lines(first, 2 * self.ways * std::mem::size_of::<u64>());
    }

    /// Prefetches ([`prefetch::line`]) the first host line of set `set`'s
    /// tags and of its way words: all of a set of up to 8 ways (sets start
    /// on host lines), the part a scan reads first of a larger one.
    #[inline]
    fn prefetch_block(&self, set: usize) {
        let tags = self
            .block
            .as_ptr()
            .wrapping_add(self.start + 2 * self.ways * set);
        prefetch::line(tags);
        prefetch::line(tags.wrapping_add(self.ways));
    }

    #[inline]
    fn find_in(&self, set: usize, line: u64) -> Option<usize> {
        if self.fast {
            let m = self.mru[set];
            if m.line == line {
                return Some(m.way);
            }
        }
        let r = self.set_tags(set);
        let base = r.start;
        self.scan.position(&self.block[r], line).map(|i| base + i)
    }

    #[inline]
    fn find(&self, line: u64) -> Option<usize> {
        self.find_in(self.set_of(line), line)
    }

    /// The link word of way `i`: the directory bits in an L3, the private
    /// copies' ways in an L2 or L1 ([`Hierarchy`]).
    #[inline]
    fn dir(&self, i: usize) -> u64 {
        self.block[i + self.ways] >> 32
    }

    #[inline]
    fn set_dir(&mut self, i: usize, d: u64) {
        let m = &mut self.block[i + self.ways];
        *m = d << 32 | u64::from(stamp(*m));
    }

    /// The next LRU stamp (renumbering the stamps first when they run out).
    #[inline]
    fn next_tick(&mut self) -> u64 {
        if self.tick >= self.max_tick {
            self.renumber();
        }
        self.tick += 1;
        self.tick
    }

    /// Renumbers each set's stamps `1..=k` in their LRU order and restarts
    /// the tick above them: stamps only order the lines of one set, so
    /// every later replacement decision is unchanged. (Every 16 M touches:
    /// stamps are 24 bits to share a word with the directory.)
    fn renumber(&mut self) {
        let w = self.ways;
        let mut order: Vec<(u32, usize)> = Vec::with_capacity(w);
        for set in 0..self.sets {
            let r = self.set_tags(set);
            order.clear();
            order.extend(
                r.clone()
                    .filter(|&i| self.block[i] != INVALID)
                    .map(|i| (stamp(self.block[i + w]), i)),
            );
            order.sort_unstable();
            for (k, &(_, i)) in order.iter().enumerate() {
                let m = &mut self.block[i + w];
                *m = (*m & !0xffff_ff00) | (k as u64 + 1) << 8;
            }
        }
        self.tick = w as u64;
    }

    /// True if `line` is present.
    pub fn contains(&self, line: u64) -> bool {
        self.find(line).is_some()
    }

    /// Marks the line of way `i` (in set `set`) most recently used.
    #[inline]
    fn touch_way(&mut self, set: usize, i: usize) {
        let line = self.block[i];
        if self.fast {
            if self.mru[set].line == line {
                return;
            }
            self.mru[set] = Mru { line, way: i };
        }
        let tick = self.next_tick();
        let m = &mut self.block[i + self.ways];
        *m = (*m & !0xffff_ff00) | tick << 8;
    }

    /// Marks `line`, found at way `i`, most recently used (its set from
    /// the line: a mask, where the way's index would need a division).
    #[inline]
    fn touch_at(&mut self, line: u64, i: usize) {
        self.touch_way(self.set_of(line), i);
    }

    /// Marks `line` most recently used; returns false if absent.
    #[inline(always)]
    pub fn touch(&mut self, line: u64) -> bool {
        let set = self.set_of(line);
        // Inline: most touches are of the set's most recently used line.
        if self.fast && self.mru[set].line == line {
            return true;
        }
        self.touch_slow(set, line)
    }

    /// [`Cache::touch`] past the most-recently-used shortcut.
    #[inline(never)]
    fn touch_slow(&mut self, set: usize, line: u64) -> bool {
        match self.find_in(set, line) {
            Some(i) => {
                self.touch_way(set, i);
                true
            }
            None => false,
        }
    }

    /// The MESI state of `line`, if present.
    pub fn state(&self, line: u64) -> Option<Mesi> {
        self.find(line)
            .map(|i| meta_state(self.block[i + self.ways]))
    }

    /// Sets the MESI state of `line` if present.
    pub fn set_state(&mut self, line: u64, state: Mesi) {
        if let Some(i) = self.find(line) {
            let m = &mut self.block[i + self.ways];
            *m = (*m & !3) | state as u64;
        }
    }

    /// Changes the kind of `line` if present.
    pub fn retag(&mut self, line: u64, kind: LineKind) {
        if let Some(i) = self.find(line) {
            let m = &mut self.block[i + self.ways];
            let old = meta_kind(*m);
            *m = (*m & !0x30) | (kind.index() as u64) << 4;
            self.counts[old.index()] -= 1;
            self.counts[kind.index()] += 1;
        }
    }

    /// Inserts `line` (must be absent) as most recently used; returns the
    /// LRU victim if the set was full.
    pub fn insert(&mut self, line: u64, kind: LineKind, state: Mesi) -> Option<Evicted> {
        self.insert_at(line, kind, state).1
    }

    /// [`Cache::insert`], also returning the way `line` went to.
    #[inline(always)]
    fn insert_at(&mut self, line: u64, kind: LineKind, state: Mesi) -> (usize, Option<Evicted>) {
        let set = self.set_of(line);
        let r = self.set_tags(set);
        let (base, w) = (r.start, self.ways);
        // The first invalid way, else the least recently used one: invalid
        // ways' words are 0 and valid ways' stamps are at least 1 << 8
        // (ticks start at 1), so this is the first way of smallest stamp.
        let victim = base + self.scan.lru(&self.block[base + w..base + 2 * w]);
        debug_assert_eq!(
            stamp(self.block[victim + w]) == 0,
            self.block[r].contains(&INVALID),
            "invalid ways have stamp 0, valid ones do not"
        );
        let old_line = self.block[victim];
        let evicted = if old_line != INVALID {
            let kind = meta_kind(self.block[victim + w]);
            self.counts[kind.index()] -= 1;
            Some(Evicted {
                line: old_line,
                kind,
                dir: self.dir(victim),
            })
        } else {
            None
        };
        let tick = self.next_tick();
        self.mru[set] = Mru { line, way: victim };
        self.block[victim] = line;
        // Directory 0.
        self.block[victim + w] = meta(tick, kind, state);
        self.counts[kind.index()] += 1;
        (victim, evicted)
    }

    /// Removes `line`; returns whether it was present.
    pub fn remove(&mut self, line: u64) -> bool {
        self.take(line).is_some()
    }

    /// Removes `line`; returns its link word ([`Cache::dir`]) if it was
    /// present.
    #[inline]
    fn take(&mut self, line: u64) -> Option<u64> {
        let set = self.set_of(line);
        let i = self.find_in(set, line)?;
        let link = self.dir(i);
        self.remove_way(set, i);
        Some(link)
    }

    /// Empties way `i` of set `set`.
    #[inline]
    fn remove_way(&mut self, set: usize, i: usize) {
        let w = self.ways;
        self.counts[meta_kind(self.block[i + w]).index()] -= 1;
        if self.mru[set].line == self.block[i] {
            self.mru[set] = NO_MRU;
        }
        self.block[i] = INVALID;
        self.block[i + w] = 0;
    }

    /// All lines present for which `pred` holds.
    pub fn lines_where(&self, pred: impl Fn(u64) -> bool) -> Vec<u64> {
        (0..self.sets)
            .flat_map(|s| self.block[self.set_tags(s)].iter().copied())
            .filter(|&l| l != INVALID && pred(l))
            .collect()
    }
}

/// Where an access was satisfied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// Private L1 hit.
    L1,
    /// Local L2 hit.
    L2,
    /// Another core's L2.
    RemoteL2,
    /// Shared L3.
    L3,
    /// Memory (data) or freshly allocated metadata.
    Memory,
}

/// Private L1/L2 per core and a shared L3; L2 includes L1 and L3 includes
/// every L2 (an L3 eviction back-invalidates private copies).
///
/// Each L3 way keeps a directory of the cores whose L2 may hold its line
/// (bit `core % 32`; a superset: set when a core's L2 takes the line,
/// cleared when a walk finds the line gone), so coherence actions visit
/// those cores instead of every core's L2. The reference hierarchy
/// ([`Hierarchy::reference`]) walks every core, as the model describes.
///
/// The private caches link their copies of a line ([`Cache::dir`] of an
/// L1 or L2 way): an L1 way holds the way of the line in the L2, an L2 way
/// [`IN_L1`] and the L1 way the line was last filled into. The L1 holds
/// the line if and only if that way's tag is the line (a line keeps its
/// way while present, and every L1 fill of a line in the L2 rewrites the
/// link), so an L2 hit learns whether and where the L1 holds the line, and
/// an L2 eviction removes the L1 copy, with one tag compare instead of a
/// search of the L1 set; an L1 eviction leaves the link stale, which that
/// compare detects. The reference hierarchy searches instead.
#[derive(Clone, Debug)]
pub struct Hierarchy {
    l1: Vec<Cache>,
    l2: Vec<Cache>,
    l3: Cache,
    /// Use the directory and the caches' shortcuts.
    fast: bool,
    lat: [u32; 5],
    /// Metadata lines that left the L3 (hence the hierarchy) since the last
    /// [`Hierarchy::take_md_evictions`].
    md_evicted: Vec<u64>,
}

impl Hierarchy {
    /// An empty hierarchy for `cfg`.
    pub fn new(cfg: &HwConfig) -> Hierarchy {
        let lb = cfg.line_bytes;
        let cores = cfg.cores as usize;
        Hierarchy {
            l1: (0..cores)
                .map(|_| Cache::new(cfg.l1.sets(lb), cfg.l1.ways as usize))
                .collect(),
            l2: (0..cores)
                .map(|_| Cache::new(cfg.l2.sets(lb), cfg.l2.ways as usize))
                .collect(),
            l3: Cache::new(cfg.l3.sets(lb), cfg.l3.ways as usize),
            fast: true,
            lat: [
                cfg.l1.latency,
                cfg.l2.latency,
                cfg.remote_l2_latency,
                cfg.l3.latency,
                cfg.memory_latency,
            ],
            md_evicted: Vec::new(),
        }
    }

    /// The straightforward hierarchy (tests only): no directory, no
    /// most-recently-used shortcut.
    pub fn reference(cfg: &HwConfig) -> Hierarchy {
        let mut h = Hierarchy::new(cfg);
        h.fast = false;
        for c in h.l1.iter_mut().chain(h.l2.iter_mut()) {
            c.fast = false;
        }
        h.l3.fast = false;
        h
    }

    /// The directory bit of `core`.
    #[inline]
    fn bit(core: usize) -> u64 {
        1 << (core % 32)
    }

    /// Calls `f` for every core whose directory bit is in `mask`.
    #[inline]
    fn for_cores(cores: usize, mask: u64, mut f: impl FnMut(usize)) {
        let mut m = mask;
        while m != 0 {
            let b = m.trailing_zeros() as usize;
            m &= m - 1;
            let mut c = b;
            while c < cores {
                f(c);
                c += 32;
            }
        }
    }

    /// Cores that may hold `line` in their L2 (every core without the
    /// directory), and the line's L3 way if present.
    #[inline]
    fn sharers(&self, line: u64) -> (u64, Option<usize>) {
        if !self.fast {
            return (u64::MAX, None);
        }
        match self.l3.find(line) {
            Some(i) => (self.l3.dir(i), Some(i)),
            None => (0, None),
        }
    }

    /// Prefetches ([`Cache::prefetch_set`]) the shared L3's set of `line`,
    /// where a lookup that leaves the private caches takes its host misses
    /// (the private caches' arrays are small enough to stay in the host's
    /// caches). No state changes.
    #[inline]
    pub fn prefetch_l3(&self, line: u64) {
        self.l3.prefetch_set(line);
    }

    /// Latency of `level`.
    pub fn latency(&self, level: Level) -> u32 {
        self.lat[level as usize]
    }

    /// Takes the metadata lines evicted from the hierarchy.
    pub fn take_md_evictions(&mut self) -> Vec<u64> {
        std::mem::take(&mut self.md_evicted)
    }

    /// True if any metadata line eviction is pending.
    pub fn has_md_evictions(&self) -> bool {
        !self.md_evicted.is_empty()
    }

    /// Lines held in all caches by kind `[data, compact md, expanded md]`,
    /// and total capacity in lines.
    pub fn occupancy(&self) -> ([u64; 3], u64) {
        let mut counts = self.l3.counts;
        let mut cap = self.l3.capacity();
        for c in self.l1.iter().chain(&self.l2) {
            for (k, n) in counts.iter_mut().zip(c.counts) {
                *k += n;
            }
            cap += c.capacity();
        }
        (counts, cap)
    }

    /// Inserts `line` into `core`'s L1; `l2_way` is its way in the L2
    /// (the fast hierarchy links the two, see [`Hierarchy`]).
    #[inline]
    fn insert_l1(&mut self, core: usize, line: u64, kind: LineKind, l2_way: usize) {
        let (l1, l2) = (&mut self.l1[core], &mut self.l2[core]);
        // (The victim's L2 link is left as it is: a link is checked against
        // the L1 way's tag before it is used.)
        let (way, _) = l1.insert_at(line, kind, Mesi::E);
        if !self.fast {
            return;
        }
        debug_assert_eq!(l2.block[l2_way], line, "the L2 way holds the line");
        l1.set_dir(way, l2_way as u64);
        l2.set_dir(l2_way, IN_L1 | way as u64);
    }

    /// Removes from `l1` the copy of a line that left its L2 with link word
    /// `link` (searching for it by line in the reference hierarchy,
    /// `!fast`).
    #[inline]
    fn remove_l1_copy(l1: &mut Cache, fast: bool, line: u64, link: u64) {
        if !fast {
            l1.remove(line);
        } else if link & IN_L1 != 0 {
            let way = (link & (IN_L1 - 1)) as usize;
            if l1.block[way] == line {
                l1.remove_way(l1.set_of(line), way);
            }
        }
    }

    /// Inserts `line` into `core`'s L2 and returns its way; `l3_way` is the
    /// line's L3 way (found if `None`), whose directory gets the core's bit.
    fn insert_l2(
        &mut self,
        core: usize,
        line: u64,
        kind: LineKind,
        state: Mesi,
        l3_way: Option<usize>,
    ) -> usize {
        let (way, ev) = self.l2[core].insert_at(line, kind, state);
        if let Some(ev) = ev {
            Self::remove_l1_copy(&mut self.l1[core], self.fast, ev.line, ev.dir);
        }
        if self.fast {
            if let Some(i) = l3_way.or_else(|| self.l3.find(line)) {
                self.l3.set_dir(i, self.l3.dir(i) | Self::bit(core));
            }
        }
        way
    }

    /// Removes `line` from one core's L2 `l2` and L1 `l1`; returns whether
    /// the L2 held it.
    #[inline]
    fn remove_private(l1: &mut Cache, l2: &mut Cache, fast: bool, line: u64) -> bool {
        if !fast {
            l1.remove(line);
            return l2.remove(line);
        }
        match l2.take(line) {
            Some(link) => {
                Self::remove_l1_copy(l1, fast, line, link);
                true
            }
            None => false,
        }
    }

    /// Inserts `line` into the L3; returns its way.
    fn insert_l3(&mut self, line: u64, kind: LineKind) -> usize {
        let (way, ev) = self.l3.insert_at(line, kind, Mesi::E);
        if let Some(ev) = ev {
            let mask = if self.fast { ev.dir } else { u64::MAX };
            let (l1, l2, fast) = (&mut self.l1, &mut self.l2, self.fast);
            Self::for_cores(l1.len(), mask, |c| {
                Self::remove_private(&mut l1[c], &mut l2[c], fast, ev.line);
            });
            if ev.kind != LineKind::Data {
                self.md_evicted.push(ev.line);
            }
        }
        way
    }

    /// Looks `line` up in `core`'s L1, then L2, marking it most recently
    /// used in each that holds it (an L1 hit is stamped in the L2 too):
    /// `Some(L1)`, `Some(L2)` or `None`, exactly as an L1 touch then an L2
    /// touch, with the line's L2 way (`usize::MAX` in the reference
    /// hierarchy). The L2 includes the L1 (every L2 eviction and removal
    /// removes the L1 copy, and every L1 fill fills the L2), so when the
    /// line is not the L1 set's most recently used, the fast hierarchy asks
    /// the L2 first, and the L2 way's link says whether and where the L1
    /// holds it ([`Hierarchy`]): one set scan per lookup. (Stamps order
    /// one cache's lines only, so stamping the L2 before the L1 changes
    /// nothing.)
    #[inline]
    fn private_lookup(&mut self, core: usize, line: u64) -> Option<(Level, usize)> {
        let (l1, l2) = (&mut self.l1[core], &mut self.l2[core]);
        if !self.fast {
            return if l1.touch(line) {
                l2.touch(line);
                Some((Level::L1, usize::MAX))
            } else if l2.touch(line) {
                Some((Level::L2, usize::MAX))
            } else {
                None
            };
        }
        let set2 = l2.set_of(line);
        let set1 = l1.set_of(line);
        let mru = l1.mru[set1];
        if mru.line == line {
            // Most often the L2 set's most recently used line too (no
            // stamp changes); else its L1 way's link names its L2 way.
            let mru2 = l2.mru[set2];
            let way2 = if mru2.line == line {
                mru2.way
            } else {
                let way2 = l1.dir(mru.way) as usize;
                debug_assert_eq!(l2.block[way2], line, "the linked L2 way holds the line");
                l2.touch_way(set2, way2);
                way2
            };
            return Some((Level::L1, way2));
        }
        // Past the L1's most recently used line, the L1 set is read
        // whatever the L2 holds (its link's way, or an insert's victim):
        // its host misses overlap the L2's.
        l1.prefetch_block(set1);
        l2.prefetch_block(set2);
        let way2 = l2.find_in(set2, line)?;
        l2.touch_way(set2, way2);
        let link = l2.dir(way2);
        let way1 = (link & (IN_L1 - 1)) as usize;
        if link & IN_L1 != 0 && l1.block[way1] == line {
            l1.touch_way(set1, way1);
            Some((Level::L1, way2))
        } else {
            Some((Level::L2, way2))
        }
    }

    /// A data access (read or write) by `core` to `line`; returns where it
    /// was satisfied and its latency. Writes invalidate other copies (MESI).
    pub fn data_access(&mut self, core: usize, line: u64, write: bool) -> (Level, u32) {
        let mut level;
        let way2 = if let Some((found, way2)) = self.private_lookup(core, line) {
            level = found;
            if found == Level::L2 {
                self.insert_l1(core, line, LineKind::Data, way2);
            }
            way2
        } else {
            // Remote L2 copies are downgraded to Shared (the directory
            // keeps the bits of the cores found holding the line).
            let (mask, way) = self.sharers(line);
            let mut remote = false;
            let mut holders = 0u64;
            let l2 = &mut self.l2;
            Self::for_cores(l2.len(), mask, |c| {
                if c != core {
                    if let Some(s) = l2[c].state(line) {
                        remote = true;
                        holders |= Self::bit(c);
                        if s != Mesi::S {
                            l2[c].set_state(line, Mesi::S);
                        }
                    }
                }
            });
            let way = match way {
                Some(i) => {
                    self.l3.set_dir(i, holders);
                    self.l3.touch_at(line, i);
                    level = if remote { Level::RemoteL2 } else { Level::L3 };
                    Some(i)
                }
                None if !self.fast && self.l3.touch(line) => {
                    level = if remote { Level::RemoteL2 } else { Level::L3 };
                    None
                }
                None => {
                    level = Level::Memory;
                    Some(self.insert_l3(line, LineKind::Data))
                }
            };
            let state = if remote { Mesi::S } else { Mesi::E };
            let way2 = self.insert_l2(core, line, LineKind::Data, state, way);
            self.insert_l1(core, line, LineKind::Data, way2);
            way2
        };
        let mut cycles = self.latency(level);
        if write {
            // MESI: a line this core's L2 holds Exclusive or Modified is in
            // no other private cache, so only S needs the invalidation walk.
            let mut others = false;
            // The line's L2 way, for its state and its update (the walk
            // below changes other cores' caches only).
            let own = if self.fast {
                Some(way2)
            } else {
                self.l2[core].find(line)
            };
            let state = own.map(|i| meta_state(self.l2[core].block[i + self.l2[core].ways]));
            if !matches!(state, Some(Mesi::E | Mesi::M)) {
                let (mask, way) = self.sharers(line);
                let (l1, l2, fast) = (&mut self.l1, &mut self.l2, self.fast);
                Self::for_cores(l2.len(), mask, |c| {
                    if c != core && Self::remove_private(&mut l1[c], &mut l2[c], fast, line) {
                        others = true;
                    }
                });
                if let Some(i) = way {
                    self.l3.set_dir(i, Self::bit(core));
                }
            }
            if others && matches!(level, Level::L1 | Level::L2) {
                // Upgrade S -> M: an invalidation round trip.
                cycles = cycles.max(self.latency(Level::RemoteL2));
                level = Level::RemoteL2;
            }
            if let Some(i) = own {
                let l2 = &mut self.l2[core];
                let m = &mut l2.block[i + l2.ways];
                *m = (*m & !3) | Mesi::M as u64;
            }
        }
        (level, cycles)
    }

    /// An access by `core` to its metadata line `line`. Returns the level,
    /// latency and whether the line was newly allocated in the hierarchy
    /// (metadata has no memory backing: allocation costs an L3 access for
    /// the fill-time permission broadcast).
    pub fn md_access(&mut self, core: usize, line: u64, kind: LineKind) -> (Level, u32, bool) {
        let private = self.private_lookup(core, line);
        let (level, fresh) = if let Some((found, way2)) = private {
            self.l3.touch(line);
            if found == Level::L2 {
                self.insert_l1(core, line, kind, way2);
            }
            (found, false)
        } else if let Some(i) = self.l3.find(line) {
            self.l3.touch_at(line, i);
            let way2 = self.insert_l2(core, line, kind, Mesi::E, Some(i));
            self.insert_l1(core, line, kind, way2);
            (Level::L3, false)
        } else {
            let way = self.insert_l3(line, kind);
            let way2 = self.insert_l2(core, line, kind, Mesi::E, Some(way));
            self.insert_l1(core, line, kind, way2);
            (Level::Memory, true)
        };
        let cycles = if fresh {
            self.latency(Level::L3)
        } else {
            self.latency(level)
        };
        (level, cycles, fresh)
    }

    /// The closest level holding `line` for `core`, if any.
    pub fn level_of(&self, core: usize, line: u64) -> Option<Level> {
        if self.l1[core].contains(line) {
            Some(Level::L1)
        } else if self.l2[core].contains(line) {
            Some(Level::L2)
        } else if self.l3.contains(line) {
            Some(Level::L3)
        } else {
            None
        }
    }

    /// Removes `line` from every cache (no eviction is reported).
    pub fn invalidate(&mut self, line: u64) {
        let (mask, _) = self.sharers(line);
        let (l1, l2, fast) = (&mut self.l1, &mut self.l2, self.fast);
        Self::for_cores(l1.len(), mask, |c| {
            Self::remove_private(&mut l1[c], &mut l2[c], fast, line);
        });
        self.l3.remove(line);
    }

    /// Changes the kind of `line` in every cache.
    pub fn retag(&mut self, line: u64, kind: LineKind) {
        let (mask, _) = self.sharers(line);
        let (l1, l2) = (&mut self.l1, &mut self.l2);
        Self::for_cores(l1.len(), mask, |c| {
            l1[c].retag(line, kind);
            l2[c].retag(line, kind);
        });
        self.l3.retag(line, kind);
    }

    /// All metadata lines present (in L3, hence anywhere) matching `pred`.
    pub fn md_lines_where(&self, pred: impl Fn(u64) -> bool) -> Vec<u64> {
        self.l3
            .lines_where(|l| l & super::layout::MD_BIT != 0 && pred(l))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_evicts_least_recent() {
        let mut c = Cache::new(1, 2);
        assert!(c.insert(1, LineKind::Data, Mesi::E).is_none());
        assert!(c.insert(2, LineKind::Data, Mesi::E).is_none());
        assert!(c.touch(1));
        let ev = c.insert(3, LineKind::MdCompact, Mesi::E).unwrap();
        assert_eq!(ev.line, 2);
        assert_eq!(c.counts, [1, 1, 0]);
    }

    /// Renumbering the stamps changes no replacement decision: a cache
    /// renumbering every few touches evicts what one that never does
    /// evicts, through a pseudo-random mix of touches, inserts and removals.
    #[test]
    fn renumbering_keeps_lru_order() {
        let mut a = Cache::new(4, 4);
        let mut b = Cache::new(4, 4);
        b.max_tick = 9;
        let mut x = 12345u64;
        for _ in 0..20_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let line = (x >> 33) % 40;
            match (x >> 20) % 8 {
                0 => assert_eq!(a.remove(line), b.remove(line)),
                1..=3 => assert_eq!(a.touch(line), b.touch(line)),
                _ if !a.contains(line) => {
                    let (ea, eb) = (
                        a.insert(line, LineKind::Data, Mesi::E),
                        b.insert(line, LineKind::Data, Mesi::E),
                    );
                    assert_eq!(ea.map(|e| e.line), eb.map(|e| e.line));
                }
                _ => {}
            }
        }
        assert_eq!(a.lines_where(|_| true), b.lines_where(|_| true));
        assert!(b.tick <= 9);
    }

    #[test]
    fn mesi_sharing_and_invalidation() {
        let cfg = HwConfig::default();
        let mut h = Hierarchy::new(&cfg);
        assert_eq!(h.data_access(0, 10, false), (Level::Memory, 120));
        assert_eq!(h.data_access(0, 10, false), (Level::L1, 1));
        assert_eq!(h.data_access(1, 10, false), (Level::RemoteL2, 15));
        assert_eq!(h.l2[0].state(10), Some(Mesi::S));
        let (_, c) = h.data_access(1, 10, true);
        assert_eq!(c, 15);
        assert!(!h.l2[0].contains(10));
        assert_eq!(h.l2[1].state(10), Some(Mesi::M));
        assert_eq!(h.data_access(0, 10, false).0, Level::RemoteL2);
    }
}
