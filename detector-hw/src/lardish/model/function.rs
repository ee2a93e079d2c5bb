//! The function: the exact detection (the software manager's histories
//! and the verdicts drawn from them) and what each core's hardware holds.

use crate::clock::{ClockRef, ClockTable, ThreadIdx};
use crate::event::{Access, AccessKind, ThreadKey};
use crate::lardish::clocktable::HwClockTable;
use crate::lardish::config::{HwConfig, MdGranularity};
use crate::lardish::granularity::ItemMap;
use crate::lardish::history::{self, ByteMeta, Holder};
use crate::lardish::varmap::VarMap;
use crate::race::{RaceCollector, RaceKind};

/// The function's state: the software manager's exact histories and the
/// verdicts drawn from them, and what each core's hardware holds.
#[derive(Debug)]
pub(in crate::lardish) struct Function {
    pub(in crate::lardish) clocks: ClockTable,
    pub(in crate::lardish) bytes: VarMap,
    pub(in crate::lardish) races: RaceCollector,
    /// The learned item of every byte (type safety optimizations; empty
    /// with byte granularity, where every byte is an item).
    pub(in crate::lardish) items: ItemMap,
    /// `cfg.granularity` is [`MdGranularity::TypeSafe`].
    pub(in crate::lardish) type_safe: bool,
    /// True once the variable map holds a byte at or above 2^48 (where
    /// metadata lines alias; see [`Lardish::live_clocks`]).
    pub(in crate::lardish) wide_addrs: bool,
    pub(in crate::lardish) cores: Vec<Core>,
    /// Free clock-table entries by recomputing their references from the
    /// records ([`Lardish::live_clocks`]) instead of by the incremental
    /// reference counts (the reference model).
    pub(in crate::lardish) scan_clocks: bool,
}

impl Function {
    /// No threads, no histories, idle cores.
    pub(in crate::lardish) fn new(cfg: &HwConfig) -> Function {
        Function {
            clocks: ClockTable::new(),
            bytes: VarMap::default(),
            races: RaceCollector::new(),
            items: ItemMap::default(),
            type_safe: cfg.granularity == MdGranularity::TypeSafe,
            wide_addrs: false,
            cores: (0..cfg.cores)
                .map(|_| Core {
                    ident: None,
                    table: HwClockTable::new(cfg.clock_table_entries as usize),
                })
                .collect(),
            scan_clocks: false,
        }
    }
}

/// One core's hardware: the thread it runs and its clock table.
#[derive(Clone, Debug)]
pub(in crate::lardish) struct Core {
    pub(in crate::lardish) ident: Option<ThreadKey>,
    pub(in crate::lardish) table: HwClockTable,
}

/// `n` bytes' records `recs` leave hardware: each one held in a valid slot
/// (`valid`) releases its owner core's clock-table entry (RADISH §5.1).
#[inline]
pub(in crate::lardish) fn release_valid<'r>(
    cores: &mut [Core],
    recs: impl Iterator<Item = &'r history::Rec>,
    n: u64,
    valid: &impl Fn(&Holder) -> bool,
) {
    for r in recs {
        if let Some(h) = &r.holder {
            if valid(h) {
                cores[h.core as usize].table.release(r.clock, n);
            }
        }
    }
}

/// What [`check_and_record`] did to a byte.
pub(in crate::lardish) struct Recorded {
    /// The byte raced.
    pub(in crate::lardish) raced: bool,
    /// The records the new one replaced that hardware held at some time
    /// (`None`: none).
    pub(in crate::lardish) replaced: Option<history::Reads>,
    /// A replaced record was never held in hardware (it was in software).
    pub(in crate::lardish) replaced_unheld: bool,
}

impl Recorded {
    /// Whether a replaced record was in software (never held, or its
    /// holder no longer `valid`): the variable map keeps an entry for the
    /// byte ([`ByteMeta::in_variable_map`]).
    pub(in crate::lardish) fn replaced_in_software(
        &self,
        valid: &impl Fn(&Holder) -> bool,
    ) -> bool {
        self.replaced_unheld
            || self
                .replaced
                .iter()
                .flat_map(|r| r.iter())
                .any(|r| !r.holder.is_some_and(|h| valid(&h)))
    }
}

/// The canonical check-then-record of one byte (identical to
/// [`Canonical`](crate::canonical::Canonical)'s), storing `holder` with the
/// new record. Returns whether the byte raced and the records replaced.
pub(in crate::lardish) fn check_and_record(
    m: &mut ByteMeta,
    clocks: &ClockTable,
    races: &mut RaceCollector,
    t: ThreadIdx,
    c: ClockRef<'_>,
    a: &Access,
    holder: Option<Holder>,
) -> Recorded {
    let races_with = |u: ThreadIdx, clock: u64| u != t && clock > c.get(u);
    let mut raced = false;
    if let Some(w) = m.write {
        if races_with(w.thread, w.clock) {
            let kind = match a.kind {
                AccessKind::Write => RaceKind::WriteWrite,
                AccessKind::Read => RaceKind::WriteRead,
            };
            races.push(kind, clocks.key(w.thread), w.pc, w.clock);
            raced = true;
        }
    }
    let rec = history::Rec {
        thread: t,
        clock: c.get(t),
        pc: a.pc,
        holder,
    };
    let mut replaced = None;
    let mut replaced_unheld = false;
    let mut gone = |r: history::Rec| {
        replaced_unheld |= r.holder.is_none();
        if r.holder.is_some() {
            replaced.get_or_insert_with(history::Reads::default).push(r);
        }
    };
    match a.kind {
        AccessKind::Read => match m.reads.iter_mut().find(|r| r.thread == t) {
            Some(r) => gone(std::mem::replace(r, rec)),
            None => m.reads.push(rec),
        },
        AccessKind::Write => {
            for r in &m.reads {
                if races_with(r.thread, r.clock) {
                    races.push(RaceKind::ReadWrite, clocks.key(r.thread), r.pc, r.clock);
                    raced = true;
                }
            }
            if let Some(w) = m.write.replace(rec) {
                gone(w);
            }
            for r in m.reads.iter() {
                gone(*r);
            }
            m.reads.clear();
        }
    }
    Recorded {
        raced,
        replaced,
        replaced_unheld,
    }
}
