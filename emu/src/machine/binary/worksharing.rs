//! OpenMP units that one kernel thread runs one after another as language
//! threads of their own, in binary mode: each section of a `sections`
//! construct and each chunk of a worksharing loop libgomp hands out, and
//! each team of a `teams` construct run by the host fallback. The rules are
//! the lard-cc runtime's (`guest-sdk/cc/omp/worksharing.c`, "worksharing
//! units", and `guest-sdk/cc/omp/teams.c`, "teams"; docs/lard-cc-openmp.md's
//! OpenMP table).
//!
//! libgomp hands a unit to a thread as the non-zero return of
//! `GOMP_sections_start`/`GOMP_sections_next` (a section's number), the
//! true return of a `GOMP_loop_*_start`/`_next` call (a chunk, its bounds
//! written to `*istart`, `*iend`) or of `GOMP_teams4` (the next team); the
//! thread runs it, then asks for the next one (or ends the construct). So a
//! unit starts at that return, forked from the task that got it, and ends
//! at the thread's next call for work or barrier: its clock is released
//! into the unit's end key — [`SyncKey::Tasks`] of its team, which every barrier
//! acquires, for a section or chunk; the encountering task's
//! [`SyncKey::Teams`] for a team — and the thread continues as the task,
//! unordered after the unit (with `nowait` another thread could have run
//! it). The units one task runs share its frames (an implicit task's
//! private copies and a loop's iteration variable, below the outlined
//! region body's entry; a team's private variables, below the target
//! region's entry): their histories are cleared when a unit ends, so they
//! never race with each other or with the reduction or `lastprivate`
//! copy-out after the last unit.
//!
//! *Thread-bound state.* A unit could have run on another thread, except
//! when what it touches depends on the thread that runs it. While an
//! implicit task holds heap blocks the program allocated in its region (by
//! the task or one of its units, not yet freed: a per-thread buffer reached
//! through a private pointer), or once its program code asked its thread
//! number (`omp_get_thread_num`: `partial[tid]`), its units run one after
//! another, as its thread runs them: each releases into [`SyncKey::Units`]
//! at its end and the next acquires it. Under any team size or schedule
//! each thread would use its own buffer or element, so two units of one
//! task never race on it; without the order they would. Races between two
//! units one thread ran are then missed for that task (races with other
//! threads' units are not). The lard-cc runtime has the same rule
//! (`guest-sdk/cc/omp/worksharing.c`).

use crate::cpu::uc::Reg;
use crate::intercept::hb::{fork, SyncKey};
use crate::intercept::libs::LibCall;
use crate::intercept::names::LangUnit;
use crate::intercept::runtime::{page_chunks, Unit};
use crate::machine::Machine;
use lard_detector_hw::event::{EventKind, LardOp as EvOp, ProgramEvent, ThreadKey};

impl Machine {
    /// The stack pointer at the entry of the innermost call `what` pending
    /// on the current kernel thread.
    pub(super) fn pending_sp(&mut self, what: impl Fn(LibCall) -> bool) -> Option<u64> {
        self.innermost_pending(what).map(|(sp, _)| sp)
    }

    /// The stack pointer at the entry of the innermost call `what` pending
    /// on the current kernel thread, and its `task` word.
    fn innermost_pending(&mut self, what: impl Fn(LibCall) -> bool) -> Option<(u64, u64)> {
        let cur = self.cpu.cur;
        self.rt()
            .thread(cur)
            .pending
            .iter()
            .rev()
            .find(|p| what(p.call))
            .map(|p| (p.sp, p.task))
    }

    /// A call for work (sections, loop chunk), the end of a worksharing
    /// construct or a barrier at `pc` (entry): the worksharing unit the
    /// current kernel thread runs, if any, ends.
    pub(super) fn unit_end(&mut self, pc: u64) {
        self.end_unit_if(pc, |u| !u.is_team());
    }

    /// `GOMP_teams4` at `pc` (entry): the team the current kernel thread
    /// runs, if any, ends.
    pub(super) fn team_end(&mut self, pc: u64) {
        self.end_unit_if(pc, Unit::is_team);
    }

    fn end_unit_if(&mut self, pc: u64, which: impl Fn(&Unit) -> bool) {
        let cur = self.cpu.cur;
        let t = self.rt().thread(cur);
        let Some(u) = t.units.last().copied().filter(which) else {
            return;
        };
        t.units.pop();
        let last = self.cpu.vc.read(ThreadKey::Lang(u.id), u.id);
        self.release(u.end, pc);
        if self.thread_bound(u.owner) {
            self.release(SyncKey::Units(u.owner), pc);
        }
        let sp = self.cpu.uc.reg(Reg::RSP);
        let low = std::mem::replace(&mut self.rt().thread(cur).stack_low, 0);
        let low = if low != 0 && low < sp { low } else { sp };
        if low < u.top {
            for (a, len) in page_chunks(low, u.top - low) {
                self.emit(pc, EventKind::Lard(EvOp::ClearHistory { addr: a, len }));
            }
        }
        self.program(pc, ProgramEvent::ThreadExit);
        self.switch_lang(u.task, pc);
        self.retire_lang(u.id, last);
    }

    /// libgomp handed a worksharing unit (a section, a loop chunk: `what`)
    /// to the current kernel thread at `pc`: it starts inside a parallel
    /// region (a construct outside any region runs as its encountering
    /// task, as in the lard-cc runtime).
    pub(super) fn unit_begin(&mut self, pc: u64, what: LangUnit) {
        if let Some((top, owner)) = self.innermost_pending(|c| c == LibCall::OmpRegion) {
            let team = self.current_team();
            self.begin_unit(pc, SyncKey::Tasks(team), top, what, owner);
            if self.thread_bound(owner) {
                self.acquire(SyncKey::Units(owner), pc);
            }
        }
    }

    /// True if the implicit task with region token `owner` has
    /// thread-bound state (module docs): its units are ordered.
    fn thread_bound(&mut self, owner: u64) -> bool {
        let rt = self.rt();
        owner != 0
            && (rt.owned.get(&owner).is_some_and(|&n| n > 0) || rt.asked_num.contains(&owner))
    }

    /// Program code asked its thread number: the implicit task it runs in
    /// (module docs) has thread-bound state from now on.
    pub(super) fn thread_num_asked(&mut self) {
        if let Some(t) = self.own_task() {
            self.rt().asked_num.insert(t);
        }
    }

    /// The region token of the implicit task whose state what the program
    /// does now is (module docs): inside a parallel region, its implicit
    /// task or one of that task's worksharing units; `None` in an explicit
    /// task, a team of `teams`, or outside every region.
    pub(super) fn own_task(&mut self) -> Option<u64> {
        let cur = self.cpu.cur;
        let t = self.rt().thread(cur);
        let body = t.pending.iter().rev().find(|p| {
            matches!(
                p.call,
                LibCall::OmpRegion | LibCall::OmpTaskBody | LibCall::OmpTeamBody
            )
        })?;
        if body.call != LibCall::OmpRegion || t.units.last().is_some_and(Unit::is_team) {
            return None;
        }
        Some(body.task)
    }

    /// `GOMP_teams4` returned true at `pc`: the next team starts. Its
    /// frames are the target region's (host fallback), else the parallel
    /// region's it runs in.
    pub(super) fn team_begin(&mut self, pc: u64) {
        let top = self
            .pending_sp(|c| c == LibCall::OmpTarget)
            .or_else(|| self.pending_sp(|c| c == LibCall::OmpRegion))
            .unwrap_or(0);
        let me = self.lang();
        let cur = self.cpu.cur;
        let t = self.rt().thread(cur);
        let n = t.teams_started;
        t.teams_started += 1;
        self.begin_unit(
            pc,
            SyncKey::Teams(me),
            top,
            LangUnit::Team { site: pc, n },
            0,
        );
    }

    /// `GOMP_teams4` returned false at `pc`: every team of the construct
    /// happens before the encountering task continues.
    pub(super) fn teams_done(&mut self, pc: u64) {
        let me = self.lang();
        self.acquire(SyncKey::Teams(me), pc);
        self.rt().sync.forget(SyncKey::Teams(me));
    }

    fn begin_unit(&mut self, pc: u64, end: SyncKey, top: u64, what: LangUnit, owner: u64) {
        let task = self.lang();
        let rt = self.obs.binary.as_mut().expect("binary mode");
        let vc = &self.cpu.vc;
        let id = match rt.ids.take(|t| vc.read(ThreadKey::Lang(task), t)) {
            Some(r) => self.cpu.vc.reuse(r.id, r.own),
            None => rt.fresh_lang(),
        };
        let (mut p, mut c) = (Vec::new(), Vec::new());
        fork(&mut self.cpu.vc, task, id, &mut p, &mut c);
        let start = self.cpu.vc.read(ThreadKey::Lang(id), id);
        self.obs.lang_units.insert(id, start, what);
        for (tid, value) in p {
            self.emit(pc, EventKind::Lard(EvOp::WriteVc { tid, value }));
        }
        self.switch_lang(id, pc);
        for (tid, value) in c {
            self.emit(pc, EventKind::Lard(EvOp::WriteVc { tid, value }));
        }
        let cur = self.cpu.cur;
        self.rt().thread(cur).units.push(Unit {
            task,
            id,
            end,
            top,
            owner,
        });
    }
}
