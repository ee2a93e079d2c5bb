//! OpenMP explicit tasks: creation (with dependences, `taskloop`), task
//! bodies, `taskwait` and `taskgroup`. Each call's action at entry and at
//! return, side by side.

use super::{Entry, Pending, Return};
use crate::cpu::uc::Reg;
use crate::intercept::hb::join_clock;
use crate::intercept::hb::SyncKey;
use crate::intercept::libs::LibCall;
use crate::intercept::names::LangUnit;
use crate::intercept::tasks::dep_acquires;
use crate::intercept::tasks::dep_releases;
use crate::intercept::tasks::parse_depend;
use crate::intercept::tasks::Execution;
use crate::intercept::tasks::FLAG_DEPEND;
use crate::intercept::tasks::FLAG_FINAL;
use crate::intercept::tasks::FLAG_IF;
use crate::intercept::tasks::FLAG_NOGROUP;
use crate::machine::Machine;
use lard_detector_hw::event::ProgramEvent;
use lard_detector_hw::event::ThreadKey;

impl Machine {
    /// An explicit-task call's entry ([`Machine::binary_entry`]).
    pub(super) fn omp_tasks_entry(&mut self, call: LibCall, e: &mut Entry) {
        let Entry {
            pc,
            ret,
            sp,
            cur,
            ref mut args,
            ref mut task,
            ref mut task_ids,
        } = *e;
        let uc = self.cpu.uc;
        match call {
            LibCall::OmpTask | LibCall::OmpTaskLoop => {
                let me = self.lang();
                self.rt().task_parents.insert(me);
                // Outside every parallel region (or in a team of a
                // `teams` construct) the binding team is one thread.
                let no_team = self.pending_sp(|c| c == LibCall::OmpRegion).is_none();
                let (deps, many, own_group, exec) = if call == LibCall::OmpTask {
                    // if_clause is the 6th argument (a bool), flags and
                    // depend the 7th and 8th.
                    let flags =
                        self.cpu.mem.read_u64(sp.wrapping_add(8)).unwrap_or(0) & 0xffff_ffff;
                    let depend = self.cpu.mem.read_u64(sp.wrapping_add(16)).unwrap_or(0);
                    let deps = if flags & FLAG_DEPEND != 0 && depend != 0 {
                        parse_depend(|a| self.cpu.mem.read_u64(a), depend)
                    } else {
                        Vec::new()
                    };
                    let exec = Execution {
                        final_clause: flags & FLAG_FINAL != 0,
                        if_false: uc.reg(Reg::R9) & 0xff == 0,
                        no_team,
                    };
                    (deps, false, false, exec)
                } else {
                    // flags is the 6th argument; without nogroup (or with
                    // if(false)) the creator waits for the loop's tasks.
                    let flags = uc.reg(Reg::R9) & 0xffff_ffff;
                    let wait = flags & FLAG_NOGROUP == 0 || flags & FLAG_IF == 0 || no_team;
                    let exec = Execution {
                        final_clause: flags & FLAG_FINAL != 0,
                        if_false: flags & FLAG_IF == 0,
                        no_team,
                    };
                    (Vec::new(), true, wait, exec)
                };
                let (id, group) = self.rt().tasks.create(me, deps, many, own_group, exec, ret);
                let team = self.current_team();
                self.rt().tasks.bind(id, team);
                // The task may start long after its creation (at a barrier
                // of a team of one): the creator's accesses from now on are
                // concurrent with it, so they are checked.
                self.rt().end_single_threaded();
                self.rt().floors_task_created(many, own_group);
                *task = id;
                // args[2] (cpyfn) is not needed at return: it keeps the
                // taskloop's implicit group + 1 (0: none).
                args[2] = group.map_or(0, |g| g + 1);
                self.release(SyncKey::TaskCreated(id), ret);
                // By body address too, for a body whose creation is not
                // found (docs/binary-mode-openmp.md).
                self.release(SyncKey::TaskStart(args[0]), ret);
                self.intercept_body(args[0], LibCall::OmpTaskBody);
            }
            LibCall::OmpTaskGroupStart => {
                let me = self.lang();
                self.rt().tasks.group_start(me);
            }
            LibCall::OmpTaskBody => {
                // Tasks that reuse the same stack addresses must not race
                // with each other.
                self.clear_dead_frames(sp, ret);
                let inside = self
                    .rt()
                    .thread(cur)
                    .pending
                    .iter()
                    .rev()
                    .find(|p| matches!(p.call, LibCall::OmpTask | LibCall::OmpTaskLoop))
                    .map(|p| p.task);
                let creation = self.rt().tasks.body_creation(args[0], inside);
                let prev = self.lang();
                let start = match creation {
                    Some(c) => SyncKey::TaskCreated(c),
                    None => SyncKey::TaskStart(pc),
                };
                let id = self.switch_to_started_lang(ret, start);
                if let Some(c) = creation {
                    *task = c;
                    let (deps, unit, one) = match self.rt().tasks.started(id, c) {
                        Some(cr) => (
                            dep_acquires(cr.parent, &cr.deps).collect(),
                            Some(LangUnit::Task {
                                site: cr.site,
                                body: pc,
                                taskloop: cr.many,
                            }),
                            !cr.many,
                        ),
                        None => (Vec::new(), None, false),
                    };
                    if one {
                        self.rt().floors_task_started();
                    }
                    if let Some(u) = unit {
                        let start = self.cpu.vc.read(ThreadKey::Lang(id), id);
                        self.obs.lang_units.insert(id, start, u);
                    }
                    for k in deps {
                        self.acquire(k, ret);
                    }
                }
                *task_ids = Some((prev, id));
            }
            _ => {}
        }
    }

    /// An explicit-task call's return ([`Machine::binary_return`]).
    pub(super) fn omp_tasks_return(&mut self, p: &Pending, r: &Return) {
        let Return { pc, .. } = *r;
        let a = p.args;
        match p.call {
            LibCall::OmpTaskLoop if a[2] != 0 => self.acquire(SyncKey::Group(a[2] - 1), pc),
            LibCall::OmpTaskGroupEnd => {
                let me = self.lang();
                if let Some(g) = self.rt().tasks.group_end(me) {
                    self.acquire(SyncKey::Group(g), pc);
                    self.rt().sync.forget(SyncKey::Group(g));
                }
            }
            LibCall::OmpTaskBody => {
                let (id, prev) = (a[0], a[1]);
                let last = self.cpu.vc.read(ThreadKey::Lang(id), id);
                // The task's binding team: it may run in the region's final
                // barrier, after the member's body returned.
                let team = self.rt().tasks.team_of(id);
                self.release(SyncKey::Tasks(team), pc);
                let mut undeferred = false;
                if let Some(c) = self.rt().tasks.finished(id) {
                    undeferred = c.undeferred;
                    self.release(SyncKey::Children(c.parent), pc);
                    if let Some(g) = c.group {
                        self.release(SyncKey::Group(g), pc);
                    }
                    for k in dep_releases(c.parent, &c.deps) {
                        self.release(k, pc);
                    }
                    if !c.many {
                        self.rt().sync.forget(SyncKey::TaskCreated(p.task));
                    } else if undeferred {
                        // The next of the taskloop's tasks runs after this
                        // one (it acquires the creation's key).
                        self.release(SyncKey::TaskCreated(p.task), pc);
                    }
                }
                // An undeferred task completes before its creator
                // continues (its final clock, read before the switch lets
                // it go); a task libgomp merely ran at once does not.
                let fin = undeferred.then(|| self.cpu.vc.entries(ThreadKey::Lang(id)));
                // Its end lets the detectors drop its clock.
                self.program(pc, ProgramEvent::ThreadExit);
                self.switch_lang(prev, pc);
                if let Some(fin) = fin {
                    let me = self.lang();
                    let rt = self.obs.binary.as_mut().expect("binary mode");
                    join_clock(&mut self.cpu.vc, me, fin, &mut rt.writes);
                    self.emit_writes(pc);
                }
                // Task `id` never runs again, nor waits for its children:
                // its clocks go (recursive task programs end millions).
                self.rt().sync.forget(SyncKey::Children(id));
                self.retire_lang(id, last);
            }
            LibCall::OmpTaskWait => {
                let me = self.lang();
                self.acquire(SyncKey::Children(me), pc);
            }
            _ => {}
        }
    }
}
