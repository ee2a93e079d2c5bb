//! ClearHistory and CopyHistory, and the type safety optimizations' items
//! (learning them, granularity conflicts).

use crate::lard::HistoryOp;
use crate::lardish::baselines::Op;
use crate::lardish::ftcost::HistoryWork;
use crate::lardish::granularity::{self, Learn, BLOCK};
use crate::lardish::history::ByteMeta;
use crate::lardish::layout;
use crate::lardish::stats::{Mechanism, SwCause};
use crate::lardish::Lardish;

use super::release_valid;

impl Lardish {
    /// Type safety: learns or checks the items of the `count` bytes from
    /// `first` (one item per 64-byte block they touch), turning a block
    /// whose items the access breaks to byte metadata first. Returns
    /// whether any of them uses the clock table (an item narrower than
    /// [`granularity::COARSE_ITEM_BYTES`]).
    pub(in crate::lardish) fn learn_items(&mut self, c: usize, first: u64, count: u64) -> bool {
        let mut counted = false;
        let mut i = 0;
        while i < count {
            let x = first.wrapping_add(i);
            let k = (BLOCK - x % BLOCK).min(count - i);
            let width = match self.func.items.access(x, k) {
                Learn::Item { width, .. } => width,
                Learn::Conflict => {
                    self.granularity_conflict(c, x);
                    self.func.items.access(x, k);
                    1
                }
            };
            counted |= width < granularity::COARSE_ITEM_BYTES;
            i += k;
        }
        counted
    }

    /// A granularity conflict in the block of byte `x`: every core's
    /// metadata lines of its data lines go to software through the
    /// eviction handler (their records are in software from now on), the
    /// block turns to byte metadata and its data lines to expanded
    /// metadata. Costs the transition and one eviction per resident line.
    pub(in crate::lardish) fn granularity_conflict(&mut self, c: usize, x: u64) {
        self.acct.stats.granularity_conflicts += 1;
        let block = x - x % BLOCK;
        let half = 1u64 << (self.layout.shift - 1);
        let mut cost = u64::from(self.cfg.transition_cycles);
        for dline in self.layout.data_lines(block, BLOCK as u32) {
            let addr = dline << self.layout.shift;
            let expanded = !self.cfg.compact_metadata || self.hw.is_expanded_line(dline);
            for p in 0..self.func.cores.len() {
                let mut lines = vec![self.layout.md_line(p, addr, expanded)];
                if expanded {
                    lines.push(self.layout.md_line(p, addr + half, true));
                }
                for line in lines {
                    if self.lose(line, SwCause::Granularity) {
                        self.timing.hier.invalidate(line);
                        self.acct.stats.md_evictions += 1;
                        cost += u64::from(self.cfg.md_evict_cycles);
                    }
                }
            }
            if self.cfg.compact_metadata && !expanded {
                self.hw.expand(dline);
            }
        }
        // After the lines released their records under the old widths.
        self.func.items.fall_back(x);
        self.drain_md_evictions(c);
        self.acct.charge(c, cost, Mechanism::MdEviction);
    }

    /// Before a history operation on `[addr, addr + len)`: a block whose
    /// item the region's ends cut falls back to byte metadata (a
    /// granularity conflict), so no item changes width while hardware
    /// holds its records.
    pub(in crate::lardish) fn uncut_items(&mut self, c: usize, addr: u64, len: u64) {
        if self.func.type_safe {
            for x in self.func.items.cut_blocks(addr, len) {
                self.granularity_conflict(c, x);
            }
        }
    }

    /// Byte `x`'s records in `m` leave the variable map (ClearHistory,
    /// CopyHistory's destination): those held in hardware release their
    /// clock-table entries.
    pub(in crate::lardish) fn release_records(&mut self, x: u64, m: &ByteMeta) {
        if !self.func.items.counted(x) {
            return;
        }
        let v = self.hw.view();
        release_valid(
            &mut self.func.cores,
            m.write.iter().chain(&m.reads),
            1,
            &|h| v.holder_valid(x, h),
        );
    }

    /// The metadata lines of core `core` for `[addr, addr + len)`, in
    /// order: each with whether the region covers all of its data, and
    /// the region's offsets `[from, to)` it holds.
    fn region_md_lines(&self, core: usize, addr: u64, len: u64) -> Vec<RegionLine> {
        let v = self.hw.view();
        let mut out: Vec<RegionLine> = Vec::new();
        for i in 0..len {
            let x = addr.wrapping_add(i);
            let line = v.md_line(core, x);
            match out.last_mut() {
                Some(l) if l.line == line => l.to = i + 1,
                _ => {
                    // Fully covered if the region spans the line's data range.
                    let (s, n) = self.layout.md_covers(line, v.is_expanded(x));
                    let full = s >= addr && s.wrapping_add(n) <= addr.wrapping_add(len);
                    out.push(RegionLine {
                        line,
                        full,
                        from: i,
                        to: i + 1,
                    });
                }
            }
        }
        out
    }

    /// Which bytes of `[addr, addr + len)` hold an access history (a last
    /// write or a last read): the software manager's presence bits.
    fn held_histories(&self, addr: u64, len: u64) -> Vec<bool> {
        (0..len)
            .map(|i| {
                self.func
                    .bytes
                    .get(addr.wrapping_add(i))
                    .is_some_and(ByteMeta::has_history)
            })
            .collect()
    }

    /// The software manager's scan of `[addr, addr + len)` (`held`: its
    /// bytes holding a history): the summary bit of each of its pages
    /// (set while any byte of the page holds one, inside the region or
    /// not), then the presence words of the region's part of the pages
    /// whose bit is set ([`Layout::presence_scan`]). Returns the lines
    /// read and the words scanned; the lines go to software FastTrack's
    /// model too (`Op::Scanned`), whose shadow holds the same histories.
    fn scan_presence(&mut self, addr: u64, len: u64, held: &[bool]) -> (Vec<u64>, u64) {
        let page_held: Vec<bool> = self
            .layout
            .presence_pages(addr, len)
            .into_iter()
            .map(|(p, from, to)| {
                held[from as usize..to as usize].contains(&true)
                    || (to - from < layout::PRESENCE_PAGE_BYTES && {
                        // The page's bytes outside the region.
                        let page = p * layout::PRESENCE_PAGE_BYTES;
                        let base = addr & !((1u64 << 48) - 1);
                        let (lo, hi) = (addr.wrapping_add(from), addr.wrapping_add(to));
                        (0..layout::PRESENCE_PAGE_BYTES)
                            .map(|i| base | (page + i))
                            .filter(|&x| x < lo || x >= hi)
                            .any(|x| self.func.bytes.get(x).is_some_and(ByteMeta::has_history))
                    })
            })
            .collect();
        let (lines, words) = self.layout.presence_scan(addr, len, &page_held);
        for &l in &lines {
            self.timing.baselines.push(Op::Scanned(l));
        }
        (lines, words)
    }

    /// Which bytes of `[addr, addr + len)` hold part of their history in
    /// the software manager ([`ByteMeta::in_software`]): what LARDISH's
    /// software manager clears or copies. The others' histories are in
    /// hardware only and are invalidated there.
    fn software_histories(&self, addr: u64, len: u64) -> Vec<bool> {
        let v = self.hw.view();
        (0..len)
            .map(|i| {
                let x = addr.wrapping_add(i);
                self.func.bytes.get(x).is_some_and(|m| {
                    m.has_history()
                        && m.in_software(&|h| v.fill(h.core as usize, x) == Some(h.fill))
                })
            })
            .collect()
    }

    /// Of the bytes from `addr` that hold a history (`held`), those whose
    /// record the software manager keeps: every one with byte metadata;
    /// with type-safe metadata the first byte of each item (one coarsened
    /// record per item, RADISH §5.2, as a software check reads them) and
    /// any byte with no item learned.
    fn record_starts(&self, addr: u64, held: &[bool]) -> Vec<bool> {
        (0u64..)
            .zip(held)
            .map(|(i, &h)| {
                h && (!self.func.type_safe || self.func.items.is_record_start(addr.wrapping_add(i)))
            })
            .collect()
    }

    /// Hands the presence bits `held` (one region's, or a copy's source
    /// then destination) to software FastTrack's cost model, which walks
    /// the same histories (`Op::Held`, before the operation's
    /// `Op::History`).
    fn send_held(&mut self, held: &[bool]) {
        for chunk in held.chunks(64) {
            let bits = chunk
                .iter()
                .enumerate()
                .fold(0u64, |w, (i, &h)| w | u64::from(h) << i);
            self.timing.baselines.push(Op::Held(bits));
        }
    }

    /// Invalidation of the cached metadata of a region's histories
    /// (`held`: [`Lardish::held_histories`]): every core's metadata lines
    /// holding one of them, each costing a cache hit where it lives;
    /// `evict` persists them via the eviction handler (CopyHistory's
    /// source) instead of discarding them. Lines of the region with no
    /// history there hold nothing the operation changes and stay. Returns
    /// the cycles.
    fn invalidate_region(
        &mut self,
        c: usize,
        addr: u64,
        len: u64,
        held: &[bool],
        evict: bool,
    ) -> u64 {
        let mut cycles = 0u64;
        for p in 0..self.func.cores.len() {
            for l in self.region_md_lines(p, addr, len) {
                if !held[l.from as usize..l.to as usize].contains(&true)
                    || !self.hw.resident.contains_key(l.line)
                {
                    continue;
                }
                if let Some(level) = self.timing.hier.level_of(p, l.line) {
                    cycles += u64::from(self.timing.hier.latency(level));
                }
                self.acct.stats.history_invalidations += 1;
                if evict {
                    self.acct.stats.md_evictions += 1;
                    cycles += u64::from(self.cfg.md_evict_cycles);
                }
                if l.full || evict {
                    self.timing.hier.invalidate(l.line);
                    self.lose(l.line, SwCause::HistoryOp);
                }
            }
        }
        self.drain_md_evictions(c);
        cycles
    }

    /// Marks the data lines of `[addr, addr+len)` as changed by a history
    /// operation (statistics only).
    pub(in crate::lardish) fn touch_history_lines(&mut self, addr: u64, len: u64) {
        if len == 0 {
            return;
        }
        let (a, b) = (
            self.layout.data_line(addr),
            self.layout.data_line(addr.wrapping_add(len - 1)),
        );
        let mut l = a;
        loop {
            self.acct.history_lines.insert(l);
            if l == b {
                break;
            }
            l = l.wrapping_add(1);
        }
    }

    /// ClearHistory/CopyHistory, priced by what the software manager finds
    /// (docs/lardish.md, "ClearHistory / CopyHistory"): it scans the
    /// region's page summary and presence words and clears or copies each
    /// history its variable map holds; LARDISH adds its transition and the
    /// invalidation of the region's cached histories. Software FastTrack
    /// does the same work on its shadow, which holds every history
    /// (`Op::History`, priced by the same instructions).
    pub(in crate::lardish) fn history_op(&mut self, c: usize, op: HistoryOp) {
        let swb = self.cfg.ft.shadow_bytes;
        let instr = u64::from(self.cfg.instruction_cycles);
        let mut cost = u64::from(self.cfg.transition_cycles);
        // LARDISH's software work and software FastTrack's (every history
        // is in its shadow): one algorithm, priced once, on what each holds.
        let (work, work_ft, lines) = match op {
            HistoryOp::Clear { addr, len } => {
                self.acct.stats.clear_ops += 1;
                self.uncut_items(c, addr, len);
                self.touch_history_lines(addr, len);
                let held = self.held_histories(addr, len);
                let soft = self.software_histories(addr, len);
                let records = self.record_starts(addr, &held);
                let soft_records = self.record_starts(addr, &soft);
                cost += self.invalidate_region(c, addr, len, &held, false);
                let (mut lines, words) = self.scan_presence(addr, len, &held);
                for i in 0..len {
                    let x = addr.wrapping_add(i);
                    if let Some(m) = self.func.bytes.remove(x) {
                        self.release_records(x, &m);
                    }
                    if soft_records[i as usize] {
                        lines.push(self.layout.sw_line(x, swb));
                    }
                }
                self.func.items.clear(addr, len);
                self.send_held(&records);
                self.timing.baselines.push(Op::History {
                    c: c as u32,
                    a: (addr, len),
                    b: (0, 0),
                });
                let count = |v: &[bool]| v.iter().filter(|&&h| h).count() as u64;
                let work = |cleared| HistoryWork {
                    words,
                    cleared,
                    ..HistoryWork::default()
                };
                (work(count(&soft)), work(count(&held)), lines)
            }
            HistoryOp::Copy { src, dst, len } => {
                self.acct.stats.copy_ops += 1;
                self.uncut_items(c, dst, len);
                self.touch_history_lines(dst, len);
                let from = self.held_histories(src, len);
                let onto = self.held_histories(dst, len);
                // What the destination's software holds (its cached
                // histories are only invalidated); the source's cached
                // ones are evicted into software first, so all are copied.
                let onto_soft = self.software_histories(dst, len);
                let (src_scan, src_words) = self.scan_presence(src, len, &from);
                let (dst_scan, dst_words) = self.scan_presence(dst, len, &onto);
                // The records read (the source's) and written (each copied
                // one, and each destination one whose source has none).
                let read = self.record_starts(src, &from);
                let written_by = |onto: &[bool]| -> Vec<bool> {
                    let onto_records = self.record_starts(dst, onto);
                    (0..len as usize)
                        .map(|i| read[i] || (onto_records[i] && !from[i]))
                        .collect()
                };
                let (written, written_ft) = (written_by(&onto_soft), written_by(&onto));
                cost += self.invalidate_region(c, src, len, &from, true);
                cost += self.invalidate_region(c, dst, len, &onto, false);
                let copied: Vec<Option<ByteMeta>> = (0..len)
                    .map(|i| {
                        self.func
                            .bytes
                            .get(src.wrapping_add(i))
                            .map(|m| m.software_copy())
                    })
                    .collect();
                for (i, m) in (0..len).zip(copied) {
                    let at = dst.wrapping_add(i);
                    if let Some(old) = self.func.bytes.remove(at) {
                        self.release_records(at, &old);
                    }
                    match m {
                        Some(m) => {
                            self.func.wide_addrs |= at >> 48 != 0;
                            self.func.bytes.insert(at, m);
                        }
                        None => {
                            self.func.bytes.remove(at);
                        }
                    }
                }
                self.func.items.copy(src, dst, len);
                let mut lines = src_scan;
                lines.extend(dst_scan);
                for (i, _) in (0u64..).zip(&read).filter(|(_, &r)| r) {
                    lines.push(self.layout.sw_line(src.wrapping_add(i), swb));
                }
                for (i, _) in (0u64..).zip(&written).filter(|(_, &w)| w) {
                    lines.push(self.layout.sw_line(dst.wrapping_add(i), swb));
                }
                let n_copied = from.iter().filter(|&&f| f).count() as u64;
                let n_cleared = |onto: &[bool]| {
                    (from.iter().zip(onto)).filter(|(&f, &o)| o && !f).count() as u64
                };
                let both: Vec<bool> = read.iter().chain(&written_ft).copied().collect();
                self.send_held(&both);
                self.timing.baselines.push(Op::History {
                    c: c as u32,
                    a: (src, len),
                    b: (dst, len),
                });
                let work = |cleared| HistoryWork {
                    copy: true,
                    words: src_words + dst_words,
                    copied: n_copied,
                    cleared,
                };
                (work(n_cleared(&onto_soft)), work(n_cleared(&onto)), lines)
            }
        };
        let per_op = self.cfg.ft.history_instructions(&work) * instr;
        cost += self.soft_accesses(c, lines, true) + per_op;
        self.acct.charge(c, cost, Mechanism::HistoryOp);
        self.acct.stats.cycles_fasttrack += self.cfg.ft.history_instructions(&work_ft) * instr;
    }
}

/// One metadata line of a history operation's region.
struct RegionLine {
    line: u64,
    /// The region covers all of the line's data.
    full: bool,
    /// Offsets `[from, to)` of the region the line holds.
    from: u64,
    to: u64,
}
