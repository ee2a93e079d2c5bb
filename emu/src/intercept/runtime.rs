//! Binary mode: the emulator as the race-detection runtime of a program
//! that carries no LARDx86 code (docs/binary-mode.md).
//!
//! * accesses made by program code are delivered as checked (`tracked`)
//!   accesses, system-code accesses are not (Rule 1);
//! * library calls found by symbol become, at entry and at return,
//!   (a) happens-before — the WriteVCs of [`hb`](super::hb)'s primitives,
//!   delivered as LardOp events, (b) program events (allocations, locks)
//!   and (c) ClearHistory/CopyHistory when heap memory is freed or moved;
//! * every kernel thread is one language thread (T1 is the main thread),
//!   declared with a Thread event; clone forks its clock, exit releases it;
//! * lock-prefixed instructions and `xchg` in program code synchronize on
//!   their address (acquire, then release) and are not checked.
//!
//! A return is caught with a code hook on the return address read at
//! entry, matched per thread against a stack of pending calls by the stack
//! pointer (a frame abandoned by `longjmp` or thread exit is dropped when a
//! shallower one returns).

use crate::binary::atomics::{rmw_locations_known, AtomicObjects};
use crate::binary::elf::ElfFile;
use crate::binary::functions::fdes;
use crate::binary::objects::{ObjectId, ObjectKind as LoadedKind};
use crate::binary::program::{glob_match, ProgramCode, ProgramSource};
use crate::binary::prune::{prune_known, Image, Pruned, Pruning};
use crate::cpu::code::AddrMap;
use crate::cpu::memory::PAGE as PAGE_SIZE;
use crate::intercept::counted::PrunedCounts;
use crate::intercept::hb::{fork, IdPool, SyncClocks, SyncKey};
use crate::intercept::libs::{library_functions, LibCall};
use crate::intercept::tasks::Tasks;
use crate::machine::Machine;
use lard_detector_hw::event::{
    Access, AccessKind, EventKind, LardOp as EvOp, ProgramEvent, ThreadKey,
};
use std::collections::{BTreeMap, HashMap, HashSet};

mod calls;
mod classify;
pub use classify::Class;
mod contention;
mod floors;
mod worksharing;

/// The number of teams lard runs for a `teams` construct inside a `target`
/// region without `num_teams` (libgomp's host fallback would run one; the
/// lard-cc runtime makes the same choice).
pub const TARGET_DEFAULT_TEAMS: u64 = 2;

/// A call whose return is awaited.
#[derive(Clone, Copy, Debug)]
struct Pending {
    ret: u64,
    sp: u64,
    call: LibCall,
    args: [u64; 3],
    /// The task creation of an `OmpTask`/`OmpTaskLoop`/`OmpTaskBody` call
    /// (`u64::MAX`: none).
    task: u64,
    /// The entry address hooked.
    entry: u64,
}

/// Per kernel thread (by index in `Machine::threads`).
#[derive(Default, Clone, Debug)]
struct RtThread {
    lang: u64,
    pending: Vec<Pending>,
    /// The language thread the last clone by this thread created.
    last_child: Option<u64>,
    /// The lowest stack address program code accessed since the last
    /// task start on this thread (0: none).
    stack_low: u64,
    /// The units (section, loop chunk, team) this thread runs, innermost
    /// last.
    units: Vec<worksharing::Unit>,
    /// The teams the innermost `teams` construct on this thread started so
    /// far (the next team's number).
    teams_started: u64,
    /// The contention group of the code it runs (runtime/contention.rs).
    cg: u64,
    /// The groups it left to enter `cg`, innermost last.
    cg_saved: Vec<u64>,
    /// The return address of the running loop's `_start` call (0: none, or
    /// a combined `parallel for`, whose chunks all come from `_next`): the
    /// loop its chunks are named by.
    loop_site: u64,
    /// libgomp made it for a team (its `pthread_create` was called by
    /// system code inside `GOMP_parallel` or `GOMP_teams`): it runs
    /// program code only in the bodies libgomp hands it
    /// (runtime/floors.rs).
    pool: bool,
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
    /// (worksharing.rs, [`Machine::own_task`]), if any.
    pub owner: Option<u64>,
}

/// Binary-mode state.
pub struct BinaryRuntime {
    /// The program code (checked).
    pub program: ProgramCode,
    /// Where the executable's program code came from (once it is mapped).
    pub program_source: Option<ProgramSource>,
    /// The observer asked for every access: system code's accesses are
    /// delivered too, unchecked, and nothing is counted inline.
    pub all: bool,
    patterns: Vec<String>,
    seen: HashSet<ObjectId>,
    by_entry: AddrMap<LibCall>,
    sync: SyncClocks,
    tasks: Tasks,
    threads: Vec<RtThread>,
    next_lang: u64,
    /// Ended worksharing units' and teams' ids, for reuse (hb.rs).
    ids: IdPool,
    /// Language threads that created explicit tasks: their ids name those
    /// tasks' keys (children, dependences) and are never reused.
    task_parents: HashSet<u64>,
    /// Tasks `GOMP_task` created that have not started (runtime/floors.rs).
    unstarted: u64,
    /// No clock floor is raised any more (a `nogroup` taskloop was
    /// created).
    floors_off: bool,
    /// Clock floors raised (`LardOp::FloorVc` events).
    pub floors_raised: u64,
    pthreads: HashMap<u64, u64>,
    read_held: HashSet<(u64, u64)>,
    hooked_returns: AddrMap<()>,
    heap: BTreeMap<u64, HeapBlock>,
    /// Statically allocated objects whose DWARF type is atomic: plain
    /// accesses of them by program code are acquire (load) and release
    /// (store), not checked.
    pub atomic_objects: AtomicObjects,
    /// Plain accesses of atomic objects by program code.
    pub plain_atomics: u64,
    /// The atomic instruction whose accesses the memory hook must skip.
    pub atomic_pc: u64,
    writes: Vec<(u64, u64)>,
    /// Static pruning of program code.
    pub pruning: Pruning,
    prune: bool,
    /// Program-code accesses delivered as checked.
    pub checked_accesses: u64,
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
    readonly: Vec<(u64, u64)>,
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
    groups: u64,
    /// The contention group of each parallel region, by body address.
    region_groups: HashMap<u64, u64>,
    /// Live heap blocks the program allocated, per implicit task (by
    /// region token: worksharing.rs, "thread-bound state").
    owned: HashMap<u64, u32>,
    /// Implicit tasks (by region token) whose program code asked their
    /// thread number.
    asked_num: HashSet<u64>,
    /// The next region token (one per implicit task that starts).
    next_region: u64,
    /// The team instance of each `GOMP_parallel` call in progress, by
    /// (body, data): its members' bodies are called with the call's data.
    team_calls: HashMap<(u64, u64), u64>,
    /// The next team instance (0 stands for no team).
    next_team: u64,
}

impl BinaryRuntime {
    /// Binary mode with no object seen yet; `patterns` are the
    /// `--program-code` globs.
    pub fn new(patterns: Vec<String>, prune: bool, all: bool) -> BinaryRuntime {
        BinaryRuntime {
            program: ProgramCode::default(),
            program_source: None,
            patterns,
            seen: HashSet::new(),
            all,
            by_entry: AddrMap::default(),
            sync: SyncClocks::default(),
            tasks: Tasks::default(),
            threads: vec![RtThread {
                lang: 1,
                ..RtThread::default()
            }],
            next_lang: 2,
            ids: IdPool::default(),
            task_parents: HashSet::new(),
            unstarted: 0,
            floors_off: false,
            floors_raised: 0,
            pthreads: HashMap::new(),
            read_held: HashSet::new(),
            hooked_returns: AddrMap::default(),
            heap: BTreeMap::new(),
            owned: HashMap::new(),
            asked_num: HashSet::new(),
            next_region: 1,
            team_calls: HashMap::new(),
            next_team: 1,
            atomic_objects: AtomicObjects::default(),
            plain_atomics: 0,
            atomic_pc: u64::MAX,
            writes: Vec::new(),
            pruning: Pruning::default(),
            prune,
            checked_accesses: 0,
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
    fn fresh_lang(&mut self) -> u64 {
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
    fn team_of(&self, i: usize) -> u64 {
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

    fn thread(&mut self, i: usize) -> &mut RtThread {
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

impl Machine {
    fn rt(&mut self) -> &mut BinaryRuntime {
        self.obs.binary.as_mut().expect("binary mode")
    }

    /// The current thread's language id in binary mode.
    fn lang(&mut self) -> u64 {
        let cur = self.cpu.cur;
        self.rt().thread(cur).lang
    }

    fn emit_writes(&mut self, pc: u64) {
        let writes = std::mem::take(&mut self.rt().writes);
        for &(tid, value) in &writes {
            self.emit(pc, EventKind::Lard(EvOp::WriteVc { tid, value }));
        }
        let mut writes = writes;
        writes.clear();
        self.rt().writes = writes;
    }

    fn release(&mut self, key: SyncKey, pc: u64) {
        let me = self.lang();
        let rt = self.obs.binary.as_mut().expect("binary mode");
        rt.sync.release(&mut self.cpu.vc, me, key, &mut rt.writes);
        self.emit_writes(pc);
    }

    fn acquire(&mut self, key: SyncKey, pc: u64) {
        let me = self.lang();
        let rt = self.obs.binary.as_mut().expect("binary mode");
        rt.sync.acquire(&mut self.cpu.vc, me, key, &mut rt.writes);
        self.emit_writes(pc);
    }

    pub(super) fn program(&mut self, pc: u64, p: ProgramEvent) {
        self.obs.stats.program_events += 1;
        self.emit(pc, EventKind::Program(p));
    }

    /// Binary mode learns of executable memory `[start, start+len)` of
    /// loaded object `id`: its program code (the executable's DWARF
    /// compilation units and `--program-code` functions; a whole object
    /// whose name matches a pattern) and the library functions it defines.
    /// Returns the entry addresses to hook.
    pub fn binary_object_mapped(&mut self, id: ObjectId, start: u64, len: u64) -> Vec<u64> {
        let o = self.obs.objects.get(id);
        let (kind, bias, path, debug) =
            (o.kind, o.bias, o.path.clone(), o.debug_file().to_path_buf());
        let (name, short) = (o.name.clone(), o.short_name().to_string());
        let Some(rt) = self.obs.binary.as_mut() else {
            return Vec::new();
        };
        if rt
            .patterns
            .iter()
            .any(|p| glob_match(p, &name) || glob_match(p, &short))
        {
            rt.program.add(&[(start, start + len)]);
        }
        if !rt.seen.insert(id) {
            return Vec::new();
        }
        let Ok(file) = ElfFile::open(&path) else {
            return Vec::new();
        };
        if kind == LoadedKind::Executable {
            let dwarf = if debug != path {
                ElfFile::open(&debug).ok()
            } else {
                None
            };
            let (code, source) =
                ProgramCode::of(dwarf.as_ref().unwrap_or(&file), &file, bias, &rt.patterns);
            rt.program_source = Some(source);
            if source == ProgramSource::None {
                log::info!(
                    "{}: no debug information and no --program-code pattern matched: \
                     binary mode checks no code (build with -g)",
                    path.display()
                );
            }
            rt.program.add(code.ranges());
            rt.atomic_objects
                .add(&AtomicObjects::of(dwarf.as_ref().unwrap_or(&file), bias));
            let functions: Vec<(u64, u64)> = self
                .obs
                .objects
                .get(id)
                .functions()
                .iter()
                .copied()
                .filter(|&(s, _)| rt.program.contains(s))
                .collect();
            if let Some(bytes) = self.cpu.mem.slice(start, len) {
                let rmw = rmw_locations_known(bytes, start, &functions, self.obs.code.known());
                rt.atomic_objects.add(&AtomicObjects::from_ranges(rmw));
            }
            let image = Image {
                readonly: file
                    .segments
                    .iter()
                    .filter(|sg| sg.flags & 2 == 0 && sg.memsz > 0)
                    .map(|sg| {
                        let at = sg.vaddr.wrapping_add(bias);
                        (at, at + sg.memsz)
                    })
                    .collect(),
                entries: {
                    let mut e: Vec<u64> = fdes(&file)
                        .iter()
                        .map(|f| f.start.wrapping_add(bias))
                        .chain(
                            file.symbols
                                .iter()
                                .filter(|s| s.is_func)
                                .map(|s| s.addr.wrapping_add(bias)),
                        )
                        .collect();
                    e.sort_unstable();
                    e.dedup();
                    e
                },
                // Parts of functions entered through jump tables or by the
                // unwinder: FDEs with exception tables, `.cold` partitions,
                // and (stripped files) any FDE no function symbol starts.
                unstructured: {
                    let named: HashSet<u64> = file
                        .symbols
                        .iter()
                        .filter(|s| s.is_func && !s.name.contains(".cold"))
                        .map(|s| s.addr)
                        .collect();
                    fdes(&file)
                        .iter()
                        .filter(|f| f.lsda || !named.contains(&f.start))
                        .map(|f| (f.start.wrapping_add(bias), f.end.wrapping_add(bias)))
                        .collect()
                },
            };
            rt.readonly = image.readonly.clone();
            if rt.prune {
                // One entry per function (FDEs unmerged): the stack
                // analyses are per function, and a merged range may mix
                // program and system code.
                let mut functions: Vec<(u64, u64)> = fdes(&file)
                    .iter()
                    .map(|f| (f.start.wrapping_add(bias), f.end.wrapping_add(bias)))
                    .filter(|&(s, e)| {
                        rt.program.contains(s) && rt.program.contains(e.saturating_sub(1))
                    })
                    .collect();
                functions.sort_unstable();
                functions.dedup();
                if let Some(bytes) = self.cpu.mem.slice(start, len) {
                    rt.pruning.extend(prune_known(
                        bytes,
                        start,
                        &functions,
                        &image,
                        self.obs.code.known(),
                    ));
                }
            }
        }
        let mut new = Vec::new();
        let had_tasks = rt.tasks_possible;
        for (addr, call) in library_functions(&file) {
            let at = addr.wrapping_add(bias);
            if let std::collections::hash_map::Entry::Vacant(e) = rt.by_entry.entry(at) {
                e.insert(call);
                new.push(at);
            }
            rt.tasks_possible |= matches!(call, LibCall::OmpTask | LibCall::OmpTaskLoop);
        }
        if rt.tasks_possible && !had_tasks && rt.counted.is_some() {
            // The stack analyses' decisions change (counted_slot).
            if rt.counted.as_ref().is_some_and(|c| !c.is_zero()) {
                log::info!(
                    "OpenMP tasks appeared after program code ran: task starts clear \
                     stack histories down to the lowest checked stack access"
                );
            }
            let ranges = rt.program.ranges().to_vec();
            for (s, e) in ranges {
                self.cpu.uc.remove_cache(s, e);
            }
        }
        new
    }

    /// The team instance of the parallel region the current kernel thread
    /// runs a body of (0: none): its barriers, tasks and units.
    fn current_team(&self) -> u64 {
        self.obs
            .binary
            .as_ref()
            .map_or(0, |rt| rt.team_of(self.cpu.cur))
    }

    /// Declares the main thread (T1) at the start of a binary-mode run.
    pub fn binary_start(&mut self, pc: u64) {
        self.cpu.threads[0].lthread = Some(1);
        self.emit(pc, EventKind::Lard(EvOp::Thread { id: 1 }));
    }

    /// Clone in binary mode: thread `child` (index) is a new language
    /// thread whose clock starts as its creator's.
    pub fn binary_clone(&mut self, child: usize, pc: u64) {
        let parent = self.lang();
        let rt = self.obs.binary.as_mut().expect("binary mode");
        rt.end_single_threaded();
        let id = rt.fresh_lang();
        let cur = self.cpu.cur;
        let pool = rt.made_for_a_team(cur);
        let t = rt.thread(child);
        t.lang = id;
        t.pool = pool;
        rt.thread(cur).last_child = Some(id);
        self.cpu.threads[child].lthread = Some(id);
        let origin = self.cpu.threads[child].origin();
        let (mut p, mut c) = (Vec::new(), Vec::new());
        fork(&mut self.cpu.vc, parent, id, &mut p, &mut c);
        self.emit_from(origin, pc, EventKind::Lard(EvOp::Thread { id }));
        for (tid, value) in c {
            self.emit_from(origin, pc, EventKind::Lard(EvOp::WriteVc { tid, value }));
        }
        for (tid, value) in p {
            self.emit(pc, EventKind::Lard(EvOp::WriteVc { tid, value }));
        }
    }

    /// The running kernel thread now runs language thread `id` (a Thread
    /// event, as LARD's Thread op).
    fn switch_lang(&mut self, id: u64, pc: u64) {
        let cur = self.cpu.cur;
        self.rt().end_single_threaded();
        self.rt().thread(cur).lang = id;
        self.cpu.threads[cur].lthread = Some(id);
        self.emit(pc, EventKind::Lard(EvOp::Thread { id }));
    }

    /// Switches the running kernel thread to a fresh language thread.
    fn switch_to_new_lang(&mut self, pc: u64) -> u64 {
        let id = self.rt().fresh_lang();
        self.switch_lang(id, pc);
        id
    }

    /// Switches the running kernel thread to a language thread that starts
    /// by acquiring `start` (a task's creation): a retired id whose
    /// previous holder happens before `start` (hb.rs, `IdPool`), else a
    /// fresh one. A reused id's own entry continues after what `start`
    /// knew of it.
    fn switch_to_started_lang(&mut self, pc: u64, start: SyncKey) -> u64 {
        let rt = self.obs.binary.as_mut().expect("binary mode");
        let (ids, sync) = (&mut rt.ids, &rt.sync);
        let id = match ids.take(|t| sync.entry(start, t)) {
            Some(r) => self.cpu.vc.reuse(r.id, r.own),
            None => rt.fresh_lang(),
        };
        self.switch_lang(id, pc);
        self.acquire(start, pc);
        let own = self.rt().sync.entry(start, id) + 1;
        if own > self.cpu.vc.read(ThreadKey::Lang(id), id) {
            self.cpu.vc.write(ThreadKey::Lang(id), id, own);
            self.emit(
                pc,
                EventKind::Lard(EvOp::WriteVc {
                    tid: id,
                    value: own,
                }),
            );
        }
        id
    }

    /// Language thread `id` (a task or worksharing unit), whose own entry
    /// was `last` at its last access, ended and its kernel thread moved on:
    /// its clock goes, and its id waits for reuse with its own entry (hb.rs,
    /// `IdPool`) unless it created tasks, whose keys name it.
    fn retire_lang(&mut self, id: u64, last: u64) {
        let who = ThreadKey::Lang(id);
        let own = self.cpu.vc.read(who, id);
        self.cpu.vc.forget(who);
        let rt = self.rt();
        if !rt.task_parents.contains(&id) {
            rt.ids.retire(id, last, own);
        }
    }

    /// Thread exit in binary mode: its clock is released to its joiner.
    pub fn binary_exit(&mut self, pc: u64) {
        let me = self.lang();
        self.release(SyncKey::ThreadEnd(me), pc);
    }

    /// A lock-prefixed instruction or `xchg` in program code at `pc` on
    /// the `size` bytes at `addr`: acquire, then release, the location's
    /// clock, and in between the instruction's access is checked as a
    /// read. Two atomics of a location are ordered by its clock and never
    /// race; a plain write they are not ordered with does. Not as a write:
    /// on the heap and the stack a binary cannot tell an atomic load from
    /// a plain read (both are a `mov`; a compare-exchange loop starts with
    /// one), and those would race with it (docs/binary-mode.md, "Atomics").
    pub fn binary_atomic(&mut self, pc: u64, addr: u64, size: u32) {
        let kind = AccessKind::Read;
        let rt = self.rt();
        rt.atomic_pc = pc;
        rt.atomics += 1;
        self.acquire(SyncKey::Object(addr), pc);
        let rt = self.rt();
        if rt.single_threaded {
            rt.single_threaded_accesses += 1;
        } else {
            let stack = self.is_stack(addr);
            self.obs.stats.count_access(true, stack, kind);
            let a = Access {
                pc,
                addr,
                size,
                kind,
                tracked: true,
                stack,
                origin: self.origin(),
            };
            self.emit(pc, EventKind::Access(a));
        }
        self.release(SyncKey::Object(addr), pc);
    }

    /// A plain (not lock-prefixed) access by program code at `pc` of `addr`,
    /// a byte of an object whose DWARF type is atomic: a load acquires the
    /// location's clock, a store releases into it (the same location clocks
    /// lock-prefixed atomics use). A binary cannot tell a relaxed access
    /// from an acquire/release one: every such access orders.
    pub fn binary_plain_atomic(&mut self, pc: u64, addr: u64, kind: AccessKind) {
        self.rt().plain_atomics += 1;
        match kind {
            AccessKind::Read => self.acquire(SyncKey::Object(addr), pc),
            AccessKind::Write => self.release(SyncKey::Object(addr), pc),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_never_cross_a_page() {
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
