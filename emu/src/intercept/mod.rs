//! Interception of guest functions by symbol: a code hook on a function's
//! first instruction turns the call into a program-level event
//! ([`ProgramEvent`]) before the function runs.
//!
//! The table maps an entry address to what the call means. Today it holds
//! the SDK's `lard_note_*` functions (docs/events.md), through which the C
//! SDK, the lard-cc runtime and language runtimes such as minivm report
//! object extents, lock identities and the end of language-level threads.
//! Arguments are read from the System V registers at entry and the event's
//! PC is the call's return address (the instruction after the `call` in the
//! caller), so reports point into the program, not into the note function.
//! The lard-cc runtime's `lardcc_note_unit` names the OpenMP unit a
//! language thread runs, for reports ([`names`]).

pub mod counted;
pub mod hb;
pub mod library;
pub mod libs;
pub mod names;
pub mod ranges;
pub mod runtime;
pub mod tasks;

use crate::binary::symbols::Symbolizer;
use crate::cpu::code::AddrMap;
use lard_detector_hw::event::{LockMode, ObjectKind, ProgramEvent};

/// What a call to an intercepted function means.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Intercept {
    /// `lard_note_alloc(addr, size, site)`.
    NoteAlloc,
    /// `lard_note_free(addr)`.
    NoteFree,
    /// `lard_note_acquire(lock, shared)`.
    NoteAcquire,
    /// `lard_note_release(lock)`.
    NoteRelease,
    /// `lard_note_thread_exit()`.
    NoteThreadExit,
    /// `lardcc_note_unit(const struct lardcc_unit_note *)`: the lard-cc
    /// runtime names the OpenMP unit a language thread starts to run
    /// ([`names::UnitNote`]); a report's note, no program event.
    NoteUnit,
    /// `lard_note_report_count(uint64_t *n)`: the races reported so far,
    /// printed if new and counted into `*n` (docs/go.md); no program event.
    NoteReportCount,
    /// `lardcc_note_ranges(const struct lardcc_ranges_note *)`: the
    /// lard-cc runtime reports a program's call of a function of the
    /// ranges table ([`ranges`]); its ranges are checked as Tracked
    /// accesses of the caller, no program event.
    NoteRanges,
}

/// The intercepted functions by symbol name.
pub const NOTES: &[(&str, Intercept)] = &[
    ("lard_note_alloc", Intercept::NoteAlloc),
    ("lard_note_free", Intercept::NoteFree),
    ("lard_note_acquire", Intercept::NoteAcquire),
    ("lard_note_release", Intercept::NoteRelease),
    ("lard_note_thread_exit", Intercept::NoteThreadExit),
    ("lardcc_note_unit", Intercept::NoteUnit),
    ("lard_note_report_count", Intercept::NoteReportCount),
    ("lardcc_note_ranges", Intercept::NoteRanges),
];

/// The argument registers of a call at function entry (System V x86-64:
/// rdi, rsi, rdx) and its return address.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CallArgs {
    /// rdi, rsi, rdx.
    pub args: [u64; 3],
    /// The return address (`[rsp]` at entry).
    pub ret: u64,
}

impl Intercept {
    /// The program event a call with `call` means (`None`: a note for
    /// reports only).
    pub fn event(self, call: &CallArgs) -> Option<ProgramEvent> {
        let [a0, a1, a2] = call.args;
        Some(match self {
            Intercept::NoteAlloc => ProgramEvent::Alloc {
                addr: a0,
                size: a1,
                site: if a2 != 0 { a2 } else { call.ret },
                kind: ObjectKind::Heap,
            },
            Intercept::NoteFree => ProgramEvent::Free { addr: a0 },
            Intercept::NoteAcquire => ProgramEvent::Acquire {
                lock: a0,
                // `int shared`: only the low 32 bits are the argument.
                mode: if a1 as u32 != 0 {
                    LockMode::Shared
                } else {
                    LockMode::Exclusive
                },
            },
            Intercept::NoteRelease => ProgramEvent::Release { lock: a0 },
            Intercept::NoteThreadExit => ProgramEvent::ThreadExit,
            Intercept::NoteUnit | Intercept::NoteReportCount | Intercept::NoteRanges => {
                return None
            }
        })
    }
}

/// Entry address → intercepted function.
#[derive(Clone, Debug, Default)]
pub struct InterceptTable {
    by_entry: AddrMap<Intercept>,
}

impl InterceptTable {
    /// The note functions a program's symbol table defines (addresses as
    /// loaded, i.e. with the symbolizer's bias applied).
    pub fn from_symbols(symbols: &Symbolizer) -> InterceptTable {
        let mut t = InterceptTable::default();
        t.add_from_symbols(symbols);
        t
    }

    /// Adds the note functions `symbols` defines (one loaded object's);
    /// returns the entries that were not in the table yet (to hook).
    pub fn add_from_symbols(&mut self, symbols: &Symbolizer) -> Vec<u64> {
        let mut new = Vec::new();
        for &(name, what) in NOTES {
            if let Some(s) = symbols.function_named(name) {
                if self.by_entry.insert(s.addr, what).is_none() {
                    new.push(s.addr);
                }
            }
        }
        new
    }

    /// What the function at `pc` means, if it is intercepted.
    #[inline]
    pub fn at(&self, pc: u64) -> Option<Intercept> {
        self.by_entry.get(&pc).copied()
    }

    /// The entry addresses to hook.
    pub fn entries(&self) -> impl Iterator<Item = u64> + '_ {
        self.by_entry.keys().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_become_program_events() {
        let call = CallArgs {
            args: [0x1000, 64, 0],
            ret: 0x40_1234,
        };
        let cases = [
            (
                Intercept::NoteAlloc,
                ProgramEvent::Alloc {
                    addr: 0x1000,
                    size: 64,
                    site: 0x40_1234,
                    kind: ObjectKind::Heap,
                },
            ),
            (Intercept::NoteFree, ProgramEvent::Free { addr: 0x1000 }),
            (
                Intercept::NoteAcquire,
                ProgramEvent::Acquire {
                    lock: 0x1000,
                    mode: LockMode::Shared,
                },
            ),
            (
                Intercept::NoteRelease,
                ProgramEvent::Release { lock: 0x1000 },
            ),
            (Intercept::NoteThreadExit, ProgramEvent::ThreadExit),
        ];
        for (what, want) in cases {
            assert_eq!(what.event(&call), Some(want), "{what:?}");
        }
        assert_eq!(Intercept::NoteUnit.event(&call), None);
        // An explicit site wins over the return address; `int shared` is
        // 32 bits wide (garbage in the upper half of rsi is not "shared").
        let explicit = CallArgs {
            args: [0x1000, 0x1_0000_0000, 0x40_9999],
            ret: 0x40_1234,
        };
        assert_eq!(
            Intercept::NoteAlloc.event(&explicit).unwrap(),
            ProgramEvent::Alloc {
                addr: 0x1000,
                size: 0x1_0000_0000,
                site: 0x40_9999,
                kind: ObjectKind::Heap,
            }
        );
        assert_eq!(
            Intercept::NoteAcquire.event(&explicit).unwrap(),
            ProgramEvent::Acquire {
                lock: 0x1000,
                mode: LockMode::Exclusive,
            }
        );
    }
}
