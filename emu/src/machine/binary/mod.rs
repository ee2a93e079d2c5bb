//! Binary mode's runtime at work (docs/binary-mode.md): the machine's
//! actions when binary mode's runtime ([`BinaryRuntime`], its state and
//! rules) learns of an object's code, a thread's creation and exit, an
//! atomic instruction or an intercepted library call ([`calls`], one module
//! per family). They read the guest's registers and memory, switch
//! language threads and emit events, so they act on the whole machine.

mod calls;
mod contention;
mod floors;
mod worksharing;

use crate::binary::atomics::pcs::{AtomicPcs, MemOrder};
use crate::binary::atomics::{rmw_locations_known, AtomicObjects};
use crate::binary::elf::ElfFile;
use crate::binary::functions::fdes;
use crate::binary::objects::{ObjectId, ObjectKind as LoadedKind};
use crate::binary::program::{glob_match, ProgramCode, ProgramSource};
use crate::binary::prune::{prune_known, Image};
use crate::intercept::hb::{fork, SyncKey};
use crate::intercept::library::library_functions;
use crate::intercept::libs::LibCall;
use crate::intercept::runtime::{page_chunks, BinaryRuntime, Pending};
use crate::machine::Machine;
use lard_detector_hw::event::{
    Access, AccessKind, EventKind, LardOp as EvOp, ProgramEvent, ThreadKey,
};
use std::collections::HashSet;

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

    pub(crate) fn program(&mut self, pc: u64, p: ProgramEvent) {
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
            let (code, source, allocator) =
                ProgramCode::of(dwarf.as_ref().unwrap_or(&file), &file, bias, &rt.patterns);
            rt.allocator.add(allocator.ranges());
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
            rt.atomic_pcs = AtomicPcs::of(dwarf.as_ref().unwrap_or(&file), bias);
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
                self.obs.repeats.forget_all();
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
            // A program's own `strlen` is program code, checked as such.
            if matches!(call, LibCall::Range(_) | LibCall::Resolver(_)) && rt.program.contains(at) {
                continue;
            }
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

    /// Declares the main thread (T0, as lard-cc's runtime does) at the
    /// start of a binary-mode run.
    pub fn binary_start(&mut self, pc: u64) {
        self.cpu.threads[0].lthread = Some(0);
        self.emit(pc, EventKind::Lard(EvOp::Thread { id: 0 }));
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
    /// read; inside an inlined atomic operation whose memory order DWARF
    /// gives ([`AtomicPcs`](crate::binary::atomics::pcs::AtomicPcs)), only
    /// the edges of that order (none for a relaxed one). Two atomics of a
    /// location never race (the access is a read); a plain write they are
    /// not ordered with does. Not as a write: on the heap and the stack a
    /// binary cannot tell an atomic load from a plain read (both are a
    /// `mov`; a compare-exchange loop starts with one), and those would
    /// race with it (docs/binary-mode.md, "Atomics").
    pub fn binary_atomic(&mut self, pc: u64, addr: u64, size: u32) {
        let kind = AccessKind::Read;
        // (Plain accesses of this location are synchronization from now on.)
        self.obs.repeats.forget_all();
        let rt = self.rt();
        rt.atomic_pc = pc;
        rt.atomics += 1;
        rt.atomic_locations.add(addr, u64::from(size));
        let order = rt.atomic_pcs.order(pc).unwrap_or(MemOrder::AcqRel);
        if order.acquires() {
            self.acquire(SyncKey::Object(addr), pc);
        }
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
        if order.releases() {
            self.release(SyncKey::Object(addr), pc);
        }
    }

    /// A plain (not lock-prefixed) access by program code at `pc` of `addr`,
    /// an atomic access with memory order `order`: a load acquires the
    /// location's clock if the order acquires, a store releases into it if
    /// the order releases (the same location clocks lock-prefixed atomics
    /// use). An access of an atomic object outside an inlined atomic
    /// operation has no known order: it is [`MemOrder::AcqRel`].
    pub fn binary_plain_atomic(&mut self, pc: u64, addr: u64, kind: AccessKind, order: MemOrder) {
        self.rt().plain_atomics += 1;
        match kind {
            AccessKind::Read if order.acquires() => self.acquire(SyncKey::Object(addr), pc),
            AccessKind::Write if order.releases() => self.release(SyncKey::Object(addr), pc),
            _ => {}
        }
    }
}
