//! Which hardware-held state is still valid ([`Validity`]), and the
//! [`View`]s through which the rest of the model reads it while the
//! function's state changes.

use std::cell::Cell;

use crate::lardish::history::{ByteMeta, Holder, Perm};
use crate::lardish::layout::{self, Layout};
use crate::lardish::probemap::ProbeMap;

use super::FxHashSet;

/// Lookups of [`View`]s remembered while what they depend on does not
/// change: whether the data line last asked about is expanded, and the
/// fill id of each core's metadata line for the metadata offset last asked
/// about. Exact because every answer is a function of `resident`,
/// `expanded` and `gens` alone, which a view borrows immutably (nothing
/// changes while it lives), and every change of them between views bumps
/// [`Validity`]'s `changes` (its methods count every one), which starts a
/// new generation
/// ([`Memo::fresh`]). The bytes of one access share their metadata line,
/// and consecutive accesses mostly share it too, so this turns a dozen
/// hash lookups per byte into about one per line.
#[derive(Clone, Debug)]
pub(in crate::lardish) struct Memo {
    /// Incremented by every change of what answers depend on and by every
    /// new key; entries of older generations are stale.
    pub(in crate::lardish) generation: Cell<u64>,
    /// [`Validity`]'s `changes` when the generation started.
    pub(in crate::lardish) changes: Cell<u64>,
    pub(in crate::lardish) dline: Cell<(u64, u64, bool)>,
    /// Metadata line offset (line without core) of `fills`, and its
    /// generation.
    pub(in crate::lardish) key: Cell<(u64, u64)>,
    /// Per core: (generation, fill id or `NO_FILL`).
    pub(in crate::lardish) fills: Vec<Cell<(u64, u64)>>,
    /// The last question and its answer: (generation, core, byte, fill id
    /// or `NO_FILL`). The check of one granule asks about the same byte
    /// and mostly the same core 4–5 times.
    pub(in crate::lardish) last: Cell<(u64, usize, u64, u64)>,
}

/// A metadata line not resident (fill ids start at 1 and only grow).
pub(in crate::lardish) const NO_FILL: u64 = u64::MAX;

impl Memo {
    pub(in crate::lardish) fn new(cores: usize) -> Memo {
        Memo {
            generation: Cell::new(1),
            changes: Cell::new(0),
            dline: Cell::new((0, 0, false)),
            key: Cell::new((0, 0)),
            fills: vec![Cell::new((0, 0)); cores],
            last: Cell::new((0, 0, 0, 0)),
        }
    }

    /// The memo for a new view: forgets everything if `resident`,
    /// `expanded` or `gens` changed since the generation started
    /// (`changes` is [`Validity`]'s count of their changes).
    pub(in crate::lardish) fn fresh(&self, changes: u64) -> &Memo {
        if self.changes.get() != changes {
            self.changes.set(changes);
            self.generation.set(self.generation.get() + 1);
        }
        self
    }
}

/// Which hardware-held state is still valid: the resident metadata lines
/// and their fill ids, the expanded data lines and each core's thread
/// generation. Read through [`View`]s.
#[derive(Debug)]
pub(in crate::lardish) struct Validity {
    /// A copy of the model's ([`HwConfig::line_bytes`](crate::HwConfig)).
    pub(in crate::lardish) layout: Layout,
    /// `cfg.compact_metadata`.
    pub(in crate::lardish) compact: bool,
    /// Resident metadata line → its fill id.
    pub(in crate::lardish) resident: ProbeMap<u64>,
    /// Resident metadata lines per core.
    pub(in crate::lardish) per_core: Vec<u64>,
    pub(in crate::lardish) next_fill: u64,
    pub(in crate::lardish) expanded: FxHashSet<u64>,
    pub(in crate::lardish) gens: Vec<u32>,
    /// Lookups remembered across views (`None`: the reference model).
    pub(in crate::lardish) memo: Option<Memo>,
    /// Changes of `resident`, `expanded` and `gens` so far (every one is
    /// counted: [`Memo::fresh`] relies on it).
    pub(in crate::lardish) changes: u64,
}

impl Validity {
    /// Nothing resident or expanded, every core in generation 0.
    pub(in crate::lardish) fn new(layout: Layout, compact: bool, cores: usize) -> Validity {
        Validity {
            layout,
            compact,
            resident: ProbeMap::new(),
            per_core: vec![0; cores],
            next_fill: 1,
            expanded: FxHashSet::default(),
            gens: vec![0; cores],
            memo: Some(Memo::new(cores)),
            changes: 0,
        }
    }

    /// A view of the state now.
    pub(in crate::lardish) fn view(&self) -> View<'_> {
        View {
            layout: self.layout,
            resident: &self.resident,
            expanded: &self.expanded,
            compact: self.compact,
            gens: &self.gens,
            memo: self.memo.as_ref().map(|m| m.fresh(self.changes)),
        }
    }

    /// True if data line `dline`'s metadata is expanded (no hash lookup
    /// while none is).
    #[inline]
    pub(in crate::lardish) fn is_expanded_line(&self, dline: u64) -> bool {
        !self.expanded.is_empty() && self.expanded.contains(&dline)
    }

    /// Core `c` runs another thread: what it held becomes invalid.
    pub(in crate::lardish) fn next_generation(&mut self, c: usize) {
        self.gens[c] = self.gens[c].wrapping_add(1);
        self.changes += 1;
    }

    /// Metadata line `line` is filled (a new fill id).
    pub(in crate::lardish) fn fill(&mut self, line: u64) {
        if self.resident.insert(line, self.next_fill).is_none() {
            self.count(line, 1);
        }
        self.changes += 1;
        self.next_fill += 1;
    }

    /// Metadata line `line` is filled with the fill id `fill` (the upper
    /// half of an inflated line keeps the lower half's, so its records stay
    /// valid).
    pub(in crate::lardish) fn fill_as(&mut self, line: u64, fill: u64) {
        if self.resident.insert(line, fill).is_none() {
            self.count(line, 1);
        }
        self.changes += 1;
    }

    /// Metadata line `line` leaves the hierarchy; returns its fill id if it
    /// was resident.
    pub(in crate::lardish) fn remove(&mut self, line: u64) -> Option<u64> {
        let fill = self.resident.remove(line)?;
        self.count(line, -1);
        self.changes += 1;
        Some(fill)
    }

    /// Metadata line `line` joins (`1`) or leaves (`-1`) its core's lines.
    fn count(&mut self, line: u64, d: i64) {
        if let Some(n) = self.per_core.get_mut(Layout::md_core(line)) {
            *n = n.wrapping_add_signed(d);
        }
    }

    /// Core `c`'s resident metadata lines.
    pub(in crate::lardish) fn lines_of(&self, c: usize) -> u64 {
        self.per_core.get(c).copied().unwrap_or(0)
    }

    /// Data line `dline`'s metadata becomes expanded.
    pub(in crate::lardish) fn expand(&mut self, dline: u64) {
        self.expanded.insert(dline);
        self.changes += 1;
    }
}

/// A reading of [`Validity`] (borrowed immutably while the function's
/// state changes).
pub(in crate::lardish) struct View<'a> {
    pub(in crate::lardish) layout: Layout,
    pub(in crate::lardish) resident: &'a ProbeMap<u64>,
    pub(in crate::lardish) expanded: &'a FxHashSet<u64>,
    pub(in crate::lardish) compact: bool,
    pub(in crate::lardish) gens: &'a [u32],
    /// `None` in the reference model.
    pub(in crate::lardish) memo: Option<&'a Memo>,
}

impl View<'_> {
    #[inline(always)]
    pub(in crate::lardish) fn is_expanded(&self, addr: u64) -> bool {
        if !self.compact {
            return true;
        }
        let d = self.layout.data_line(addr);
        let Some(m) = self.memo else {
            return self.expanded.contains(&d);
        };
        let g = m.generation.get();
        let (mg, md, e) = m.dline.get();
        if mg == g && md == d {
            return e;
        }
        let e = !self.expanded.is_empty() && self.expanded.contains(&d);
        m.dline.set((g, d, e));
        e
    }

    #[inline(always)]
    pub(in crate::lardish) fn md_line(&self, core: usize, addr: u64) -> u64 {
        self.layout.md_line(core, addr, self.is_expanded(addr))
    }

    #[inline(always)]
    pub(in crate::lardish) fn fill(&self, core: usize, addr: u64) -> Option<u64> {
        let m = match self.memo {
            Some(m) if core < m.fills.len() => m,
            _ => return self.resident.get(self.md_line(core, addr)).copied(),
        };
        // Any answer of this view stays right while it lives; generations
        // only grow, so an older view's answer never matches.
        let (lg, lc, lx, lf) = m.last.get();
        if lg == m.generation.get() && lc == core && lx == addr {
            return (lf != NO_FILL).then_some(lf);
        }
        let found = self.fill_memo(m, core, self.md_line(core, addr));
        // Stamped after the lookup, which may start a new generation.
        m.last
            .set((m.generation.get(), core, addr, found.unwrap_or(NO_FILL)));
        found
    }

    /// [`View::fill`] through the memo's per-core fill ids of one line.
    #[inline(always)]
    pub(in crate::lardish) fn fill_memo(&self, m: &Memo, core: usize, line: u64) -> Option<u64> {
        let offset = line & ((1 << layout::CORE_SHIFT) - 1);
        let mut g = m.generation.get();
        let (kg, key) = m.key.get();
        if kg != g || key != offset {
            // A new line: entries of the previous one become stale.
            g += 1;
            m.generation.set(g);
            m.key.set((g, offset));
        }
        let (fg, fill) = m.fills[core].get();
        if fg == g {
            return (fill != NO_FILL).then_some(fill);
        }
        let found = self.resident.get(line).copied();
        m.fills[core].set((g, found.unwrap_or(NO_FILL)));
        found
    }

    #[inline(always)]
    pub(in crate::lardish) fn holder_valid(&self, addr: u64, h: &Holder) -> bool {
        let core = h.core as usize;
        self.gens.get(core) == Some(&h.gen) && self.fill(core, addr) == Some(h.fill)
    }

    pub(in crate::lardish) fn holder(&self, core: usize, addr: u64) -> Option<Holder> {
        self.fill(core, addr).map(|fill| Holder {
            core: core as u16,
            gen: self.gens[core],
            fill,
        })
    }

    /// Core `core`'s permission for `addr`: the stored one if still valid
    /// (same thread generation, metadata line not refilled since), else
    /// `None`. The fill-time broadcast of RADISH §4.4 is modeled as the
    /// hardware check of the first access after the fill.
    pub(in crate::lardish) fn perm(&self, m: &ByteMeta, core: usize, addr: u64) -> Perm {
        Self::perm_of(m, core, self.holder(core, addr))
    }

    /// [`View::perm`] from the core's holder for the byte ([`View::holder`]):
    /// the slot is valid if it was granted under the holder's generation
    /// and fill.
    #[inline(always)]
    pub(in crate::lardish) fn perm_of(m: &ByteMeta, core: usize, holder: Option<Holder>) -> Perm {
        let s = m.perm_slot(core);
        match holder {
            Some(h) if s.gen == h.gen && s.fill == h.fill => s.perm,
            _ => Perm::None,
        }
    }
}
