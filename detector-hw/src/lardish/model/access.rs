//! One access through the LARDISH machine: data and metadata lines, the
//! stage that decides it (permission, hardware or software check), the
//! exact check and record, and permission upkeep.

use crate::detector::{history_units, Granularity};
use crate::event::{Access, AccessKind};
use crate::lard;
use crate::lardish::cache::LineKind;
use crate::lardish::history::{self, ByteMeta, Holder, HwStatus, Perm};
use crate::lardish::stats::{HwCause, Mechanism, SwCause};
use crate::lardish::{Lardish, Stage};
use crate::race::Race;

use super::{check_and_record, hw_cause, release_valid, sw_cause, Core, View};

impl Lardish {
    /// [`Detector::access`](crate::Detector::access): the access in the
    /// LARDISH machine, its stage, exact check and record, and its cost.
    pub(in crate::lardish) fn on_access(&mut self, a: &Access) -> Option<Race> {
        self.begin_event();
        self.acct.stats.accesses += 1;
        let c = self.core_index(a.origin.core);
        let write = a.kind == AccessKind::Write;
        let tracked = lard::is_checked(a);
        // The data access in the LARDISH machine and (summed later, see
        // `stats`) in the no-detection one.
        let mut data_lat = 0u32;
        for line in self.layout.data_lines(a.addr, a.size) {
            data_lat = data_lat.max(self.timing.hier.data_access(c, line, write).1);
        }
        self.timing.baselines.push_no_detection(c, a);
        self.drain_md_evictions(c);
        if !tracked {
            self.push_access(c, a, false, false);
            self.acct.stats.untracked += 1;
            self.acct.charge(c, u64::from(data_lat), Mechanism::Base);
            return None;
        }
        if a.stack && self.cfg.stack_thread_local {
            self.push_access(c, a, false, false);
            self.acct.stats.stack_accesses += 1;
            self.acct.charge(c, u64::from(data_lat), Mechanism::Base);
            return self.software_record(c, a);
        }
        // (Interned before the switch, which touches other state, so that
        // the key is not kept on the stack across it and read back wider
        // than it was written: a store-forwarding stall.)
        let t = self.func.clocks.identity(lard::identity(&a.origin));
        let key = lard::identity(&a.origin);
        self.switch_to(c, key);
        let now = self.func.clocks.clock(t).get(t);
        let (first, count) = history_units(a, Granularity::Byte);
        // Items narrower than 4 bytes (all, with byte granularity) keep
        // their clocks in the clock table.
        if !self.func.type_safe || self.learn_items(c, first, u64::from(count)) {
            self.ensure_clock(c, now, true);
        }

        // Metadata lines (inflating compact ones on a byte access).
        let mut md_lat = 0u32;
        if self.cfg.compact_metadata && count == 1 {
            let dline = self.layout.data_line(first);
            if !self.hw.expanded.contains(&dline) {
                md_lat = self.inflate(c, dline);
            }
        }
        // By data line ([`Layout::data_line_parts`]): expanded or not is a
        // property of the data line (touching metadata does not change it).
        let mut last_line = u64::MAX;
        for (x, k) in self.layout.data_line_parts(first, u64::from(count)) {
            let expanded = self.hw.view().is_expanded(x);
            let kind = if expanded {
                LineKind::MdExpanded
            } else {
                LineKind::MdCompact
            };
            for line in self.layout.md_lines_of_part(c, x, k, expanded) {
                if line != last_line {
                    last_line = line;
                    md_lat = md_lat.max(self.touch_md(c, line, kind));
                }
            }
        }
        // Metadata is looked up in parallel with the data.
        self.acct.charge(c, u64::from(data_lat), Mechanism::Base);
        self.acct.charge(
            c,
            u64::from(md_lat.saturating_sub(data_lat)),
            Mechanism::Metadata,
        );

        // Stage decision (on the state before the access), exact check and
        // record, permission maintenance.
        let clock = self.func.clocks.clock(t);
        let mut stage = Stage::Permission;
        let mut sw_addr = first;
        let mut sw_cause = SwCause::Cold;
        let mut hw_cause = HwCause::NoPermission;
        if first.wrapping_add(u64::from(count)) >> 48 != 0 || first >> 48 != 0 {
            self.func.wide_addrs = true;
        }
        let v = self.hw.view();
        let (clocks, races, stats) = (
            &self.func.clocks,
            &mut self.func.races,
            &mut self.acct.stats,
        );
        let cores = &mut self.func.cores;
        // Whether some core compares records through merged clock-table
        // entries (else every record compares with its own clock).
        let any_merged = cores.iter().any(|k| k.table.has_merged());
        let items = &self.func.items;
        let (lost, history_lines) = (&self.acct.lost, &self.acct.history_lines);
        let new = ByteMeta::new;
        // `n` bytes from `x` on share `m` (a uniform granule of the variable
        // map): everything below depends on the byte only through `m` and
        // its metadata line, which they share, so one pass stands for `n`.
        // Only the per-byte count needs `n`; the later bytes of a granule
        // reach the same stage as its first (which alone can raise `stage`)
        // and push the same races (the collector removes duplicates).
        self.func
            .bytes
            .for_range_mut(first, u64::from(count), new, |x, n, m| {
                // This core's holder now: valid by definition, so a record
                // held there needs no generation or fill lookup.
                let holder = v.holder(c, x);
                let valid = |h: &Holder| holder.as_ref() == Some(h) || v.holder_valid(x, h);
                let perm = View::perm_of(m, c, holder);
                let allowed = match a.kind {
                    AccessKind::Read => perm >= Perm::Read,
                    AccessKind::Write => perm == Perm::Write,
                };
                let counted = items.counted(x);
                let exact = |r: &history::Rec| r.clock;
                let mut merged_out = false;
                let byte_stage = if allowed {
                    Stage::Permission
                } else if !(any_merged && counted) {
                    if m.hw_decidable(a.kind, t, clock, &valid, &exact) {
                        Stage::Hardware
                    } else {
                        Stage::Software
                    }
                } else if m.hw_decidable(a.kind, t, clock, &valid, &hw_clock(cores, &valid)) {
                    Stage::Hardware
                } else {
                    // Decidable on the records' own clocks: a merged entry
                    // sent it to software.
                    merged_out = m.hw_decidable(a.kind, t, clock, &valid, &exact);
                    Stage::Software
                };
                if byte_stage > stage {
                    stage = byte_stage;
                    match byte_stage {
                        Stage::Software => {
                            sw_addr = x;
                            sw_cause = if merged_out {
                                SwCause::ClockTable
                            } else {
                                self::sw_cause(&v, lost, history_lines, x, m)
                            };
                        }
                        Stage::Hardware => hw_cause = self::hw_cause(&v, c, x, m),
                        Stage::Permission => {}
                    }
                }
                let raced = check_and_record(m, clocks, races, t, clock, a, holder);
                if !m.in_variable_map {
                    m.in_variable_map = raced.replaced_in_software(&valid);
                }
                if counted {
                    if let Some(gone) = raced.replaced {
                        release_valid(cores, gone.iter(), n, &valid);
                    }
                    if let Some(h) = holder {
                        cores[h.core as usize].table.add_ref(now, n);
                    }
                }
                let raced = raced.raced;
                if raced && byte_stage == Stage::Permission {
                    stats.permission_violations += n;
                }
                if write {
                    m.status = HwStatus::Everything;
                    m.anchor = holder;
                }
                m.downgrade_others(c, a.kind);
                if let Some(h) = holder {
                    // After a write recorded with a holder of this view,
                    // hardware holds everything (status, anchor and the
                    // write are `h`, no reads) and the write is the
                    // thread's own: Write, as `hw_perm` computes.
                    let perm = if write {
                        debug_assert_eq!(m.hw_perm(t, clock, &valid, &exact), Perm::Write);
                        Perm::Write
                    } else {
                        // The thread's own read leaves the permission it
                        // had valid (the last write, and for Write the
                        // other last reads, are unchanged), so hardware
                        // keeps it when it sees less than a software
                        // check did (RADISH §4.4: permissions change on
                        // checks, fills and other cores' accesses).
                        let hw = if any_merged && counted {
                            m.hw_perm(t, clock, &valid, &hw_clock(cores, &valid))
                        } else {
                            m.hw_perm(t, clock, &valid, &exact)
                        };
                        hw.max(perm)
                    };
                    m.set_perm_slot(c, history::PermSlot::granted(perm, h));
                }
            });
        // Synchronous software checks charge FastTrack's cost of this
        // access when the baselines have computed it (`deferred`, summed in
        // `stats`); asynchronous ones need it now, to schedule the check.
        let deferred = self.timing.async_busy.is_empty();
        self.push_access(c, a, true, deferred && stage == Stage::Software);
        match stage {
            Stage::Permission => self.acct.stats.permission_hits += 1,
            Stage::Hardware => {
                self.acct.stats.hw_checks += 1;
                self.acct.stats.hw_causes[hw_cause as usize] += 1;
                let cost = u64::from(self.cfg.hw_check_cycles);
                self.acct.charge(c, cost, Mechanism::HwCheck);
            }
            Stage::Software => {
                self.acct.stats.sw_checks += 1;
                self.acct.stats.sw_causes[sw_cause as usize] += 1;
                let hw = u64::from(self.cfg.hw_check_cycles);
                self.acct.charge(c, hw, Mechanism::SwCheck);
                let own = (first, u64::from(count));
                // What software FastTrack pays for this access: later
                // (`deferred`), or now (waits for the baselines to reach it).
                let ft_cycles = if deferred {
                    0
                } else {
                    self.timing.baselines.last_access_cycles()
                };
                let cost = self.software_check(c, t, sw_addr, own, ft_cycles);
                self.charge_software(c, cost);
            }
        }

        self.finish_access(key, t, a)
    }
}

/// The clock hardware compares for a record: a validly held record's
/// clock through its core's clock table (a merged entry's clock), else its
/// own.
fn hw_clock<'a>(
    cores: &'a [Core],
    valid: &'a impl Fn(&Holder) -> bool,
) -> impl Fn(&history::Rec) -> u64 + 'a {
    move |r| match &r.holder {
        Some(h) if valid(h) => cores
            .get(h.core as usize)
            .map_or(r.clock, |k| k.table.hw_clock(r.clock)),
        _ => r.clock,
    }
}
