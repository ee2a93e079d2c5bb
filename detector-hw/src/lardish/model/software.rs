//! Software checks and records, and the upkeep of the cores' clock tables
//! (garbage collection, rollover).

use crate::clock::ThreadIdx;
use crate::detector::{history_units, Granularity};
use crate::event::{Access, ThreadKey};
use crate::lard;
use crate::lardish::granularity::BLOCK;
use crate::lardish::history::{self, ByteMeta};
use crate::lardish::layout::{self, Layout};
use crate::lardish::stats::{Mechanism, SwCause};
use crate::lardish::Lardish;
use crate::race::Race;

use super::{check_and_record, release_valid, FxHashSet};

impl Lardish {
    /// The verdict on access `a` by `key` (clock index `t`) once every
    /// granule it touched was checked and recorded: the race found, if any,
    /// counted.
    pub(in crate::lardish) fn finish_access(
        &mut self,
        key: ThreadKey,
        t: ThreadIdx,
        a: &Access,
    ) -> Option<Race> {
        let race = self
            .func
            .races
            .finish(key, self.func.clocks.clock(t).get(t), a);
        if race.is_some() {
            self.acct.stats.racy += 1;
        }
        race
    }

    /// A Tracked access the hardware treats as thread-local (a stack
    /// access): checked and recorded exactly in the variable map, so the
    /// verdict is the canonical one, but held in no hardware slot; other
    /// cores' permissions for its bytes are downgraded as by any access.
    pub(in crate::lardish) fn software_record(&mut self, c: usize, a: &Access) -> Option<Race> {
        let t = self.func.clocks.identity(lard::identity(&a.origin));
        let key = lard::identity(&a.origin);
        self.switch_to(c, key);
        let (first, count) = history_units(a, Granularity::Byte);
        if first.wrapping_add(u64::from(count)) >> 48 != 0 || first >> 48 != 0 {
            self.func.wide_addrs = true;
        }
        let v = self.hw.view();
        let clock = self.func.clocks.clock(t);
        let (clocks, races, cores, items) = (
            &self.func.clocks,
            &mut self.func.races,
            &mut self.func.cores,
            &self.func.items,
        );
        self.func
            .bytes
            .for_range_mut(first, u64::from(count), ByteMeta::new, |x, n, m| {
                let valid = |h: &history::Holder| v.holder_valid(x, h);
                let recorded = check_and_record(m, clocks, races, t, clock, a, None);
                if !m.in_variable_map {
                    m.in_variable_map = recorded.replaced_in_software(&valid);
                }
                if items.counted(x) {
                    if let Some(gone) = recorded.replaced {
                        release_valid(cores, gone.iter(), n, &|h| v.holder_valid(x, h));
                    }
                }
                m.downgrade_others(c, a.kind);
            });
        self.finish_access(key, t, a)
    }

    /// Makes sure core `c`'s clock table has an entry for `clock`; on
    /// overflow, garbage-collects, then (if allowed) rolls over.
    pub(in crate::lardish) fn ensure_clock(
        &mut self,
        c: usize,
        clock: u64,
        allow_rollover: bool,
    ) -> bool {
        if self.func.cores[c].table.insert(clock) {
            return true;
        }
        if self.func.scan_clocks || self.func.wide_addrs {
            // Records above 2^48 alias metadata lines, so a line leaving
            // does not name all the records it invalidates: recount.
            let live = self.live_clocks(c);
            let table = &mut self.func.cores[c].table;
            let ranges: Vec<(u64, u64)> = table.clocks().map(|v| table.range(v)).collect();
            table.collect(entry_live(&live, &ranges));
        } else {
            #[cfg(debug_assertions)]
            {
                let live = self.live_clocks(c);
                let table = &self.func.cores[c].table;
                let ranges: Vec<(u64, u64)> = table.clocks().map(|v| table.range(v)).collect();
                let is_live = entry_live(&live, &ranges);
                for v in table.clocks() {
                    assert_eq!(
                        table.references(v) > 0,
                        is_live(v),
                        "core {c}: clock {v} has {} references",
                        table.references(v)
                    );
                }
                assert!(live.iter().all(|v| table.contains(*v)));
            }
            self.func.cores[c].table.collect_unreferenced();
        }
        if self.func.cores[c].table.insert(clock) {
            return true;
        }
        if !allow_rollover {
            return false;
        }
        if self.merge_entries(c) && self.func.cores[c].table.insert(clock) {
            return true;
        }
        self.rollover(c);
        self.func.cores[c].table.insert(clock)
    }

    /// The software manager's answer to a full clock table before a
    /// rollover (docs/lardish.md, "Clock table"): the table's clocks are
    /// of core `c`'s thread `u`, and hardware compares them only with
    /// other threads' entries for `u`. Clocks between the same two of the
    /// live threads' entries for `u` (descheduled threads included)
    /// compare alike against every one of them, so their entries merge
    /// into one holding the greatest ([`HwClockTable::merge`]), and the
    /// pointers of the core's resident metadata records are rewritten.
    /// Costs `transition_cycles`, `reclaim_clock_cycles` per live clock
    /// read and per entry compared and, if it merges,
    /// `reclaim_line_cycles` per resident metadata line of the core.
    /// Returns whether it freed an entry.
    ///
    /// [`HwClockTable::merge`]: crate::lardish::clocktable::HwClockTable::merge
    fn merge_entries(&mut self, c: usize) -> bool {
        if !self.cfg.reclaim_past {
            return false;
        }
        let Some(key) = self.func.cores[c].ident else {
            return false;
        };
        let u = self.func.clocks.identity(key);
        let mut seen = self.func.clocks.live_entries(u);
        let table = &mut self.func.cores[c].table;
        let compared = (seen.len() + table.len()) as u64;
        seen.sort_unstable();
        let freed = table.merge(|v| seen.partition_point(|&e| e < v));
        let mut cost = u64::from(self.cfg.transition_cycles)
            + compared * u64::from(self.cfg.reclaim_clock_cycles);
        if freed > 0 {
            self.acct.stats.reclaims += 1;
            cost += self.hw.lines_of(c) * u64::from(self.cfg.reclaim_line_cycles);
        }
        self.acct.charge(c, cost, Mechanism::Rollover);
        freed > 0
    }

    /// Clock values referenced by valid records held by core `c`.
    ///
    /// (A past entry is live if a clock at or below its own is:
    /// [`entry_live`].)
    ///
    /// A valid record of core `c` lies in a byte whose core-`c` metadata
    /// line is resident, i.e. in a data line of one of those lines (when no
    /// byte lies above 2^48, where data lines alias). When those data lines
    /// hold fewer bytes than the variable map, only they are scanned.
    pub(in crate::lardish) fn live_clocks(&self, c: usize) -> FxHashSet<u64> {
        let v = self.hw.view();
        let mut live = FxHashSet::default();
        let items = &self.func.items;
        let mut add = |addr: u64, m: &ByteMeta| {
            if !items.counted(addr) {
                return;
            }
            for r in m.write.iter().chain(&m.reads) {
                if let Some(h) = &r.holder {
                    if h.core as usize == c && v.holder_valid(addr, h) {
                        live.insert(r.clock);
                    }
                }
            }
        };
        if !self.func.wide_addrs {
            let line_bytes = 1u64 << self.layout.shift;
            let mut dlines: Vec<u64> = Vec::new();
            let budget = self.func.bytes.len() as u64 / line_bytes;
            for l in self.hw.resident.keys() {
                if Layout::md_core(l) == c {
                    dlines.push((l & ((1 << layout::CORE_SHIFT) - 1)) >> 1);
                    if dlines.len() as u64 > 2 * budget {
                        break;
                    }
                }
            }
            dlines.sort_unstable();
            dlines.dedup();
            if (dlines.len() as u64) <= budget {
                for d in dlines {
                    let start = d << self.layout.shift;
                    for x in start..start + line_bytes {
                        if let Some(m) = self.func.bytes.get(x) {
                            add(x, m);
                        }
                    }
                }
                return live;
            }
        }
        self.func.bytes.for_each(|addr, m| add(addr, m));
        live
    }

    /// Epoch rollover: evict all of core `c`'s metadata, reset its table.
    pub(in crate::lardish) fn rollover(&mut self, c: usize) {
        self.acct.stats.rollovers += 1;
        let cost = self.cfg.rollover_cycles;
        self.acct.charge(c, cost, Mechanism::Rollover);
        let lines = self.timing.hier.md_lines_where(|l| Layout::md_core(l) == c);
        for line in lines {
            self.timing.hier.invalidate(line);
            self.lose(line, SwCause::Rollover);
            self.acct.stats.md_evictions += 1;
        }
        self.func.cores[c].table.clear();
    }

    /// Cost of a software race check of core `c`'s thread `t` that
    /// triggered on `addr`: it checks and imports the whole metadata line
    /// (RADISH §4.5). The check of the access itself costs what software
    /// FastTrack pays for it (`access_cycles`, or 0 when the baselines
    /// charge it later: [`Lardish::stats`]); the software manager reads the
    /// line's presence words, and every other location of the line that
    /// holds a history costs FastTrack's write check of it; plus the
    /// transition and the variable-map (shadow) lines through the caches.
    pub(in crate::lardish) fn software_check(
        &mut self,
        c: usize,
        t: ThreadIdx,
        addr: u64,
        own: (u64, u64),
        access_cycles: u64,
    ) -> u64 {
        let v = self.hw.view();
        let expanded = v.is_expanded(addr);
        let line = v.md_line(c, addr);
        let (start, n) = self.layout.md_covers(line, expanded);
        let bytes = self.cfg.ft.shadow_bytes;
        // The locations the check covers: every byte, or (type safety) the
        // first byte of every item learned in the line.
        let locations: Vec<u64> = if self.func.type_safe {
            (0..n)
                .step_by(BLOCK as usize)
                .flat_map(|i| {
                    let x = start.wrapping_add(i);
                    self.func.items.item_starts(x, (n - i).min(BLOCK))
                })
                .collect()
        } else {
            (0..n).map(|i| start.wrapping_add(i)).collect()
        };
        // The line's presence words say which other locations hold a
        // history; only those are looked up and checked (a location
        // without one gets status and permission directly).
        let (presence, words) = self.layout.presence(start, n);
        let mut lines: Vec<u64> = presence.collect();
        let mut instructions = words * u64::from(self.cfg.ft.history_word);
        for &x in &locations {
            if x.wrapping_sub(own.0) < own.1 {
                lines.push(self.layout.sw_line(x, bytes));
            } else if let Some(m) = self.func.bytes.get(x).filter(|m| m.has_history()) {
                lines.push(self.layout.sw_line(x, bytes));
                instructions += self.cfg.ft.location_check_instructions(m.reads.len());
            }
        }
        let mut cost = u64::from(self.cfg.transition_cycles)
            + access_cycles
            + instructions * u64::from(self.cfg.instruction_cycles);
        cost += self.soft_accesses(c, lines, false);
        // Import t's records into this core's metadata, within clock-table
        // capacity, then set status and exact permissions.
        let clock = self.func.clocks.clock(t).to_owned();
        for i in 0..n {
            let x = start.wrapping_add(i);
            // A location without history is checked too (RADISH §4.5: every
            // location of the line): it gets status Everything and exact
            // (Write) permission, so the line's other fresh bytes need no
            // software check of their own.
            let holder = self.hw.view().holder(c, x);
            let Some(h) = holder else {
                self.func
                    .bytes
                    .for_range_mut(x, 1, ByteMeta::new, |_, _, _| {});
                continue;
            };
            // Thread t's records (its last write, its last read), imported
            // one at a time: each needs its clock's entry (which may
            // collect unreferenced entries, counting every record stored
            // so far) before it is stored.
            let own: [Option<u64>; 2] = match self.func.bytes.get(x) {
                None => [None, None],
                Some(m) => [
                    m.write.filter(|r| r.thread == t).map(|r| r.clock),
                    m.reads.iter().find(|r| r.thread == t).map(|r| r.clock),
                ],
            };
            // Records of items with base+offset clocks need no entry.
            let counted = self.func.items.counted(x);
            for (which, clock) in own.into_iter().enumerate() {
                let Some(clock) = clock else { continue };
                let ok = !counted || self.ensure_clock(c, clock, false);
                let v = self.hw.view();
                let cores = &mut self.func.cores;
                self.func
                    .bytes
                    .for_range_mut(x, 1, ByteMeta::new, |_, _, m| {
                        let r = if which == 0 {
                            m.write.as_mut()
                        } else {
                            m.reads.iter_mut().find(|r| r.thread == t)
                        };
                        let Some(r) = r else { return };
                        let old_valid = r.holder.is_some_and(|o| v.holder_valid(x, &o));
                        // Imported from software, whose copy stays.
                        let persisted = !old_valid;
                        if ok {
                            if counted {
                                if old_valid {
                                    release_valid(cores, std::iter::once(&*r), 1, &|_| true);
                                }
                                cores[c].table.add_ref(r.clock, 1);
                            }
                            r.holder = Some(h);
                        } else if !old_valid {
                            // Not in hardware either way; remembered as the
                            // cause of later software checks.
                            r.holder = Some(history::REFUSED);
                        }
                        m.in_variable_map |= persisted;
                    });
            }
            let v = self.hw.view();
            self.func
                .bytes
                .for_range_mut(x, 1, ByteMeta::new, |_, _, m| {
                    // The check flushes the line's records that hardware
                    // no longer holds for their thread (lazy flushing).
                    let stale =
                        |r: &history::Rec| !r.holder.is_some_and(|hh| v.holder_valid(x, &hh));
                    m.in_variable_map |= m.write.iter().chain(m.reads.iter()).any(stale);
                    m.import_status(h, &|hh| v.holder_valid(x, hh));
                    let perm = m.exact_perm(t, clock.as_ref());
                    m.set_perm_slot(c, history::PermSlot::granted(perm, h));
                });
        }
        cost
    }

    /// Charges a software check of `cost` cycles, synchronously or on an
    /// idle asynchronous checking core; with every checking core busy the
    /// core checks it itself (`async_local_checks`: the software handlers
    /// "may execute on any available processor", RADISH §4.5).
    pub(in crate::lardish) fn charge_software(&mut self, c: usize, cost: u64) {
        if self.timing.async_busy.is_empty() {
            self.acct.charge(c, cost, Mechanism::SwCheck);
            return;
        }
        let enqueue = u64::from(self.cfg.async_enqueue_cycles);
        self.acct.charge(c, enqueue, Mechanism::Async);
        let now = self.acct.time[c];
        if !self.timing.enqueue_async(c, now, cost) {
            self.acct.stats.async_local_checks += 1;
            self.acct.charge(c, cost, Mechanism::SwCheck);
        }
    }

    /// Synchronization waits for this core's outstanding async checks.
    pub(in crate::lardish) fn wait_async(&mut self, c: usize) {
        let (time, out) = (self.acct.time[c], self.timing.outstanding[c]);
        if out > time {
            self.acct.stats.async_stall_cycles += out - time;
            self.acct.charge(c, out - time, Mechanism::Async);
        }
    }
}

/// Whether the table entry of clock `v` is live given the clocks `live` of
/// valid records: some live clock lies in its range (`ranges`, by the
/// entry's clock; a merged entry stands for a range of clocks).
fn entry_live<'a>(live: &'a FxHashSet<u64>, ranges: &'a [(u64, u64)]) -> impl Fn(u64) -> bool + 'a {
    move |v| match ranges.iter().find(|r| r.1 == v) {
        Some(&(lo, hi)) if lo < hi => live.iter().any(|&x| lo <= x && x <= hi),
        _ => live.contains(&v),
    }
}
