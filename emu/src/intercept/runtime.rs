//! Binary mode: the emulator as the race-detection runtime of a program
//! that carries no LARDx86 code (docs/binary-mode.md).
//!
//! * accesses made by program code are delivered as checked (`tracked`)
//!   accesses, system-code accesses are not (Rule 1);
//! * library calls found by symbol become, at entry and at return,
//!   (a) happens-before — the WriteVCs of [`hb`](super::hb)'s primitives,
//!   delivered as LardOp events, (b) program events (allocations, locks)
//!   and (c) ClearHistory/CopyHistory when heap memory is freed or moved;
//! * every kernel thread is one language thread (T0 is the main thread, as
//!   in lard-cc builds), declared with a Thread event; clone forks its clock, exit releases it;
//! * lock-prefixed instructions and `xchg` in program code synchronize on
//!   their address (acquire, then release) and are not checked.
//!
//! A return is caught with a code hook on the return address read at
//! entry, matched per thread against a stack of pending calls by the stack
//! pointer (a frame abandoned by `longjmp` or thread exit is dropped when a
//! shallower one returns).

use crate::binary::atomics::pcs::AtomicPcs;
use crate::binary::atomics::{AtomicLocations, AtomicObjects};
use crate::binary::objects::ObjectId;
use crate::binary::program::{ProgramCode, ProgramSource};
use crate::binary::prune::{Pruned, Pruning};
use crate::cpu::code::AddrMap;
use crate::cpu::memory::PAGE as PAGE_SIZE;
use crate::intercept::counted::PrunedCounts;
use crate::intercept::hb::{IdPool, SyncClocks, SyncKey};
use crate::intercept::libs::LibCall;
use crate::intercept::tasks::Tasks;
use lard_detector_hw::event::ThreadKey;
use std::collections::{BTreeMap, HashMap, HashSet};

mod classify;
pub use classify::Class;
mod floors;

/// The number of teams lard runs for a `teams` construct inside a `target`
/// region without `num_teams` (libgomp's host fallback would run one; the
/// lard-cc runtime makes the same choice).
pub const TARGET_DEFAULT_TEAMS: u64 = 2;

/// A call whose return is awaited.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pending {
    pub(crate) ret: u64,
    pub(crate) sp: u64,
    pub(crate) call: LibCall,
    pub(crate) args: [u64; 3],
    /// The task creation of an `OmpTask`/`OmpTaskLoop`/`OmpTaskBody` call
    /// (`u64::MAX`: none).
    pub(crate) task: u64,
    /// The entry address hooked.
    pub(crate) entry: u64,
}

/// Per kernel thread (by index in `Machine::threads`).
#[derive(Default, Clone, Debug)]
pub(crate) struct RtThread {
    pub(crate) lang: u64,
    pub(crate) pending: Vec<Pending>,
    /// The language thread the last clone by this thread created.
    pub(crate) last_child: Option<u64>,
    /// The lowest stack address program code accessed since the last
    /// task start on this thread (0: none).
    pub(crate) stack_low: u64,
    /// The units (section, loop chunk, team) this thread runs, innermost
    /// last.
    pub(crate) units: Vec<Unit>,
    /// The teams the innermost `teams` construct on this thread started so
    /// far (the next team's number).
    pub(crate) teams_started: u64,
    /// The contention group of the code it runs (machine/binary/contention.rs).
    pub(crate) cg: u64,
    /// The groups it left to enter `cg`, innermost last.
    pub(crate) cg_saved: Vec<u64>,
    /// The return address of the running loop's `_start` call (0: none, or
    /// a combined `parallel for`, whose chunks all come from `_next`): the
    /// loop its chunks are named by.
    pub(crate) loop_site: u64,
    /// The doacross loop it runs: its key ([`SyncKey::Doacross`]) and
    /// iteration count per dimension.
    pub(crate) doacross: Option<(u64, Vec<u64>)>,
    /// The doacross loops it started per team instance token.
    pub(crate) doacross_seq: Vec<(u64, u64)>,
    /// libgomp made it for a team (its `pthread_create` was called by
    /// system code inside `GOMP_parallel` or `GOMP_teams`): it runs
    /// program code only in the bodies libgomp hands it
    /// (machine/binary/floors.rs).
    pub(crate) pool: bool,
}

/// A unit a kernel thread runs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Unit {
    /// The task that got it (the thread continues as this one).
    pub(crate) task: u64,
    /// The unit's language thread.
    pub(crate) id: u64,
    /// Released at its end.
    pub(crate) end: SyncKey,
    /// Its frames lie below this stack address (0: none to clear).
    pub(crate) top: u64,
    /// The region token of the implicit task that got it (0: a team).
    pub(crate) owner: u64,
}

impl Unit {
    /// A team of a `teams` construct (not a worksharing unit).
    pub(crate) fn is_team(&self) -> bool {
        matches!(self.end, SyncKey::Teams(_))
    }
}

/// A `pthread_barrier_t` whose count `pthread_barrier_init` gave: the
/// phase its waiters are in.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Barrier {
    /// Waiters per phase.
    pub(crate) n: u64,
    /// Waiters of the current phase arrived so far.
    pub(crate) arrived: u64,
    /// Phases completed.
    pub(crate) phase: u64,
}

impl Barrier {
    /// A waiter arrives: the parity of its phase, and whether it
    /// completed the phase (the next phase's parity is then cleared).
    pub(crate) fn arrive(&mut self) -> (u8, bool) {
        let parity = (self.phase & 1) as u8;
        self.arrived += 1;
        let done = self.arrived >= self.n;
        if done {
            self.arrived = 0;
            self.phase += 1;
        }
        (parity, done)
    }
}

/// A heap block as allocated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeapBlock {
    /// First byte.
    pub addr: u64,
    /// Size in bytes.
    pub size: u64,
    /// The allocation site (return address of the allocating call).
    pub site: u64,
    /// The allocating thread.
    pub thread: ThreadKey,
    /// False once freed (kept for reports until the memory is reused).
    pub live: bool,
    /// The implicit task (its region token) whose own memory the block is
    /// (machine/binary/worksharing.rs, [`Machine::own_task`]), if any.
    pub owner: Option<u64>,
}

/// Binary-mode state.
pub struct BinaryRuntime {
    /// The program code (checked).
    pub program: ProgramCode,
    /// The code of allocators linked into the executable (system code
    /// whose intercepted calls are part of the allocation).
    pub allocator: ProgramCode,
    /// Where the executable's program code came from (once it is mapped).
    pub program_source: Option<ProgramSource>,
    /// The observer asked for every access: system code's accesses are
    /// delivered too, unchecked, and nothing is counted inline.
    pub all: bool,
    pub(crate) patterns: Vec<String>,
    pub(crate) seen: HashSet<ObjectId>,
    pub(crate) by_entry: AddrMap<LibCall>,
    pub(crate) sync: SyncClocks,
    pub(crate) tasks: Tasks,
    pub(crate) threads: Vec<RtThread>,
    pub(crate) next_lang: u64,
    /// Ended worksharing units' and teams' ids, for reuse (hb.rs).
    pub(crate) ids: IdPool,
    /// Language threads that created explicit tasks: their ids name those
    /// tasks' keys (children, dependences) and are never reused.
    pub(crate) task_parents: HashSet<u64>,
    /// Tasks `GOMP_task` created that have not started (machine/binary/floors.rs).
    pub(crate) unstarted: u64,
    /// No clock floor is raised any more (a `nogroup` taskloop was
    /// created).
    pub(crate) floors_off: bool,
    /// Clock floors raised (`LardOp::FloorVc` events).
    pub floors_raised: u64,
    /// Joined threads' ids with their final entries, not floored yet
    /// (machine/binary/floors.rs, "Joined threads").
    pub(crate) joined: Vec<(u64, u64)>,
    /// Joins since `joined` was last checked.
    pub(crate) joins_unchecked: usize,
    pub(crate) pthreads: HashMap<u64, u64>,
    /// `pthread_barrier_t`s by address, from their `pthread_barrier_init`.
    pub(crate) barriers: HashMap<u64, Barrier>,
    pub(crate) read_held: HashSet<(u64, u64)>,
    pub(crate) hooked_returns: AddrMap<()>,
    pub(crate) heap: BTreeMap<u64, HeapBlock>,
    /// Statically allocated objects whose DWARF type is atomic: plain
    /// accesses of them by program code are acquire (load) and release
    /// (store), not checked.
    pub atomic_objects: AtomicObjects,
    /// Locations program code has accessed with an atomic read-modify-write,
    /// wherever they live: plain accesses of them are atomic too.
    pub atomic_locations: AtomicLocations,
    /// Program-code instructions inside inlined atomic operations (DWARF),
    /// with their memory orders: their accesses are atomic.
    pub atomic_pcs: AtomicPcs,
    /// Plain accesses of atomic objects by program code.
    pub plain_atomics: u64,
    /// Those of them inside inlined atomic operations (their memory order
    /// known from DWARF).
    pub inlined_atomics: u64,
    /// The atomic instruction whose accesses the memory hook must skip.
    pub atomic_pc: u64,
    pub(crate) writes: Vec<(u64, u64)>,
    /// Static pruning of program code.
    pub pruning: Pruning,
    pub(crate) prune: bool,
    /// Program-code accesses delivered as checked.
    pub checked_accesses: u64,
    /// Of those, repeats counted without delivery (observe::repeats).
    pub repeated_accesses: u64,
    /// The process has had one thread only (no clone, no task): its
    /// accesses happen before those of every thread it will create, so
    /// none can race and none is checked (cleared by the first thread or
    /// task; only when [`BinaryRuntime::skip_single_threaded`] was asked).
    pub single_threaded: bool,
    /// Program-code accesses made while [`BinaryRuntime::single_threaded`].
    pub single_threaded_accesses: u64,
    /// Program-code accesses pruned, per analysis ([`Pruned::index`]).
    pub pruned: [u64; 4],
    /// The executable's segments mapped without write permission: program
    /// code's writes there are not checked (they fault, or rewrite code or
    /// constants after an `mprotect`), which makes reads of them race-free.
    pub(crate) readonly: Vec<(u64, u64)>,
    /// Pruned instructions and system-code atomics counted by translated
    /// code instead of delivered (unicorn patch 0011; pruned ones not with
    /// `--no-prune` or an observer of every access). Set by
    /// [`Machine::install_hooks`].
    pub counted: Option<PrunedCounts>,
    /// OpenMP task entries are intercepted: a task body's start clears the
    /// stack below it down to the lowest stack address program code touched
    /// ([`BinaryRuntime::note_stack`]), which needs every stack access, so
    /// the stack analyses' instructions are no longer counted.
    pub tasks_possible: bool,
    /// Intercepted library calls.
    pub calls: u64,
    /// Atomic instructions executed in program code.
    pub atomics: u64,
    /// Contention groups started so far (the teams of `teams` constructs).
    pub(crate) groups: u64,
    /// The contention group of each parallel region, by body address.
    pub(crate) region_groups: HashMap<u64, u64>,
    /// Live heap blocks the program allocated, per implicit task (by
    /// region token: machine/binary/worksharing.rs, "thread-bound state").
    pub(crate) owned: HashMap<u64, u32>,
    /// Implicit tasks (by region token) whose program code asked their
    /// thread number.
    pub(crate) asked_num: HashSet<u64>,
    /// The next region token (one per implicit task that starts).
    pub(crate) next_region: u64,
    /// The team instance of each `GOMP_parallel` call in progress, by
    /// (body, data): its members' bodies are called with the call's data.
    pub(crate) team_calls: HashMap<(u64, u64), u64>,
    /// The next team instance (0 stands for no team).
    pub(crate) next_team: u64,
}

impl BinaryRuntime {
    /// Binary mode with no object seen yet; `patterns` are the
    /// `--program-code` globs.
    pub fn new(patterns: Vec<String>, prune: bool, all: bool) -> BinaryRuntime {
        BinaryRuntime {
            program: ProgramCode::default(),
            allocator: ProgramCode::default(),
            program_source: None,
            patterns,
            seen: HashSet::new(),
            all,
            by_entry: AddrMap::default(),
            sync: SyncClocks::default(),
            tasks: Tasks::default(),
            threads: vec![RtThread {
                lang: 0,
                ..RtThread::default()
            }],
            next_lang: 1,
            ids: IdPool::default(),
            task_parents: HashSet::new(),
            unstarted: 0,
            floors_off: false,
            floors_raised: 0,
            joined: Vec::new(),
            joins_unchecked: 0,
            pthreads: HashMap::new(),
            barriers: HashMap::new(),
            read_held: HashSet::new(),
            hooked_returns: AddrMap::default(),
            heap: BTreeMap::new(),
            owned: HashMap::new(),
            asked_num: HashSet::new(),
            next_region: 1,
            team_calls: HashMap::new(),
            next_team: 1,
            atomic_objects: AtomicObjects::default(),
            atomic_locations: AtomicLocations::default(),
            atomic_pcs: AtomicPcs::default(),
            plain_atomics: 0,
            inlined_atomics: 0,
            atomic_pc: u64::MAX,
            writes: Vec::new(),
            pruning: Pruning::default(),
            prune,
            checked_accesses: 0,
            repeated_accesses: 0,
            single_threaded: false,
            single_threaded_accesses: 0,
            pruned: [0; 4],
            readonly: Vec::new(),
            counted: None,
            tasks_possible: false,
            calls: 0,
            atomics: 0,
            groups: 0,
            region_groups: HashMap::new(),
        }
    }

    /// A language-thread id never used before.
    pub(crate) fn fresh_lang(&mut self) -> u64 {
        self.next_lang += 1;
        self.next_lang - 1
    }

    /// The entry addresses to hook.
    pub fn entries(&self) -> Vec<u64> {
        self.by_entry.keys().copied().collect()
    }

    /// The library call at entry address `pc`.
    #[inline]
    pub fn call_at(&self, pc: u64) -> Option<LibCall> {
        self.by_entry.get(&pc).copied()
    }

    /// The team instance of the innermost parallel region whose body
    /// kernel thread `i` runs (0: none).
    pub(crate) fn team_of(&self, i: usize) -> u64 {
        self.threads.get(i).map_or(0, |t| {
            t.pending
                .iter()
                .rev()
                .find(|p| p.call == LibCall::OmpRegion)
                .map_or(0, |p| p.args[1])
        })
    }

    /// The process has a second thread or a task from now on: counted
    /// accesses so far were made while it had one.
    pub fn end_single_threaded(&mut self) {
        if let Some(c) = &mut self.counted {
            c.fold(
                self.single_threaded,
                &mut self.pruned,
                &mut self.single_threaded_accesses,
            );
        }
        self.single_threaded = false;
    }

    /// Checks no access while the process has one thread (a pruning of its
    /// own: such accesses happen before every other thread's).
    pub fn skip_single_threaded(&mut self) {
        self.single_threaded = self.prune && !self.all;
    }

    /// The pruning table (HardRace Tables 2-4 style): static memory
    /// instructions and dynamic accesses per analysis, and what is left.
    pub fn pruning_table(&self) -> String {
        if !self.prune {
            return "pruning: off (--no-prune)\n".to_string();
        }
        let p = &self.pruning;
        let (pruned, single_threaded_accesses) = match &self.counted {
            Some(c) => c.folded(
                self.single_threaded,
                self.pruned,
                self.single_threaded_accesses,
            ),
            None => (self.pruned, self.single_threaded_accesses),
        };
        let dyn_total = self.checked_accesses + pruned.iter().sum::<u64>();
        let pct = |n: u64, d: u64| {
            if d == 0 {
                0.0
            } else {
                100.0 * n as f64 / d as f64
            }
        };
        let mut s =
            String::from("pruning (HardRace §4.1-4.3)    static insns        dynamic accesses\n");
        let mut row = |name: &str, st: u64, dy: u64| {
            s.push_str(&format!(
                "  {name:28} {st:>7} ({:5.1}%)   {dy:>12} ({:5.1}%)\n",
                pct(st, p.memory_insns),
                pct(dy, dyn_total)
            ));
        };
        for k in Pruned::ALL {
            row(
                &format!("{} ({})", k.name(), k.section()),
                p.by_kind[k.index()],
                pruned[k.index()],
            );
        }
        let pruned_static: u64 = p.by_kind.iter().sum();
        row(
            "observed",
            p.memory_insns - pruned_static,
            self.checked_accesses,
        );
        if self.repeated_accesses > 0 {
            s.push_str(&format!(
                "  of which repeated in their thread's epoch, counted without delivery: {}\n",
                self.repeated_accesses
            ));
        }
        if single_threaded_accesses > 0 {
            s.push_str(&format!(
                "  not checked: {} access(es) made before the process's first thread or task \
                 (they happen before all of that thread's)\n",
                single_threaded_accesses
            ));
        }
        s
    }

    /// The heap block containing `addr`: a live one, else the last freed
    /// one there.
    pub fn heap_block(&self, addr: u64) -> Option<&HeapBlock> {
        let (_, b) = self.heap.range(..=addr).next_back()?;
        (addr < b.addr + b.size.max(1)).then_some(b)
    }

    pub(crate) fn thread(&mut self, i: usize) -> &mut RtThread {
        if self.threads.len() <= i {
            self.threads.resize(i + 1, RtThread::default());
        }
        &mut self.threads[i]
    }
}

/// `[addr, addr+len)` cut at page boundaries (LARD regions never cross one).
pub fn page_chunks(addr: u64, len: u64) -> impl Iterator<Item = (u64, u64)> {
    let end = addr.saturating_add(len);
    let mut at = addr;
    std::iter::from_fn(move || {
        if at >= end {
            return None;
        }
        let next = ((at / PAGE_SIZE) + 1).saturating_mul(PAGE_SIZE).min(end);
        let c = (at, next - at);
        at = next;
        Some(c)
    })
}

/// Copies of `[src, src+len)` onto `[dst, dst+len)` cut so that neither side
/// crosses a page.
pub fn copy_chunks(src: u64, dst: u64, len: u64) -> Vec<(u64, u64, u64)> {
    let mut out = Vec::new();
    let mut done = 0;
    while done < len {
        let (s, d) = (src + done, dst + done);
        let room = (PAGE_SIZE - s % PAGE_SIZE).min(PAGE_SIZE - d % PAGE_SIZE);
        let n = room.min(len - done);
        out.push((s, d, n));
        done += n;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    pub(crate) fn chunks_never_cross_a_page() {
        let c: Vec<_> = page_chunks(0x1ff0, 0x2020).collect();
        assert_eq!(
            c,
            [
                (0x1ff0, 0x10),
                (0x2000, 0x1000),
                (0x3000, 0x1000),
                (0x4000, 0x10)
            ]
        );
        assert_eq!(page_chunks(5, 0).count(), 0);
        let c = copy_chunks(0x1ff8, 0x5000, 0x20);
        assert_eq!(c, [(0x1ff8, 0x5000, 8), (0x2000, 0x5008, 0x18)]);
        for (s, d, n) in copy_chunks(0x1234, 0x9f00, 0x3000) {
            assert!(s % 4096 + n <= 4096 && d % 4096 + n <= 4096);
        }
    }
}
