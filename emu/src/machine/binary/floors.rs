//! Clock floors in binary mode (docs/binary-mode-openmp.md, "Clock floors").
//!
//! After a barrier every member's clock names every worksharing unit and
//! task of the phase, and every unit or task forked later would copy those
//! entries, one WriteVC each: a loop of U chunks run again costs U forks of
//! U entries. Once every language thread that can still run holds an entry
//! at value `v` or more, that entry is raised to a floor
//! (`LardOp::FloorVc`): every clock reads at least `v` there from now on,
//! the stored copies at or below it go, and forks leave it out.
//!
//! The language threads that can still run are every live kernel thread's
//! current one, the tasks suspended under its worksharing units and the
//! creators suspended under its task bodies; a libgomp pool thread between
//! implicit tasks is not one of them (it runs no program code until its
//! next implicit task, which starts by acquiring the encountering thread's
//! clock), so a `parallel for` in a time-step loop floors the previous
//! region's chunks when the next region ends. A clock can also start a
//! language thread from a synchronization object's clock, which may be
//! older than a floor: a created task not yet started, the tasks of a
//! taskloop, the teams of a host `teams` construct. So no floor is raised
//! while one of those may still start (a taskloop's tasks are not counted:
//! none while its creator waits in it for them, none ever after a
//! `nogroup` one), nor unless every detector applies floors
//! (`Observer::accepts_floors`).
//!
//! **Joined threads.** A pthread that was joined has exited: its kernel
//! thread runs nothing more, and its language-thread id is never handed
//! out again, so its own entry stops at the final value `f` its end
//! released, which the joiner now holds. Once every language thread that
//! can still run holds `f` there too, the entry is floored at `f`: every
//! clock that can still be read (those threads', the clocks they fork,
//! the objects' clocks they acquire, which only raise theirs) reads `f`
//! there already, so no comparison changes, and the thread's entry leaves
//! every clock, and from the objects' clocks at their next acquire. Its
//! own clock goes at the join (nothing reads it again), and so does the
//! clock its end published (no second join acquires it).
//! A program that replaces its threads then keeps clocks as long as the
//! threads that are alive or joined recently, not as every thread it ever
//! made. The check visits the pending joins against the live threads and
//! is amortized over the joins (it runs once as many joins as a quarter of
//! the pending ones were made).

use super::LibCall;
use crate::intercept::hb::SyncKey;
use crate::machine::Machine;
use lard_detector_hw::event::{EventKind, LardOp as EvOp, ThreadKey};

impl Machine {
    /// Raises the floor of every entry of the current language thread's
    /// clock that every language thread that can still run holds (module
    /// docs); called where the team has just synchronized (a barrier's
    /// return, a parallel region's end).
    pub(super) fn raise_floors(&mut self, pc: u64) {
        if !self.obs.floors {
            return;
        }
        let Some(live) = self.floor_holders() else {
            return;
        };
        let me = self.lang();
        let mut raised = Vec::new();
        for (t, v) in self.cpu.vc.stored(ThreadKey::Lang(me)) {
            if live
                .iter()
                .all(|&l| self.cpu.vc.read(ThreadKey::Lang(l), t) >= v)
            {
                raised.push((t, v));
            }
        }
        self.raise(pc, raised);
    }

    /// At a barrier's return, before the thread acquires what the barrier
    /// publishes (the barrier's clock and the phase's tasks'): raises the
    /// floors of those clocks' entries that every language thread that can
    /// still run holds, or will acquire before it runs program code again —
    /// the returning thread, and every thread whose innermost call is a
    /// barrier of the same team: each acquires the same clocks at its
    /// return. The acquires
    /// then skip those entries, so one member pays for a phase's units
    /// instead of every member.
    pub(super) fn raise_floors_at_barrier(&mut self, pc: u64, team: u64) {
        if !self.obs.floors {
            return;
        }
        let Some(live) = self.floor_holders() else {
            return;
        };
        let me = self.lang();
        let Some(rt) = self.obs.binary.as_ref() else {
            return;
        };
        let waiting: Vec<u64> = rt
            .threads
            .iter()
            .enumerate()
            .filter(|&(i, t)| {
                t.pending
                    .last()
                    .is_some_and(|p| p.call == LibCall::OmpBarrier)
                    && rt.team_of(i) == team
            })
            .map(|(_, t)| t.lang)
            .chain(std::iter::once(me))
            .collect();
        let others: Vec<u64> = live.into_iter().filter(|l| !waiting.contains(l)).collect();
        let mut published: lard_detector_hw::clock::FxHashMap<u64, u64> = Default::default();
        for key in [SyncKey::Barrier(team), SyncKey::Tasks(team)] {
            for (t, v) in rt.sync.entries(key) {
                let e = published.entry(t).or_insert(0);
                *e = (*e).max(v);
            }
        }
        let mut raised: Vec<(u64, u64)> = published
            .into_iter()
            .filter(|&(t, v)| {
                v > self.cpu.vc.read(ThreadKey::Lang(me), t)
                    && others
                        .iter()
                        .all(|&l| self.cpu.vc.read(ThreadKey::Lang(l), t) >= v)
            })
            .collect();
        raised.sort_unstable();
        self.raise(pc, raised);
    }

    /// The current language thread joined language thread `id`: `id`'s
    /// clock and end clock go, and the entries of the joined threads that
    /// every language thread that can still run holds at their final value
    /// are floored (module docs, "Joined threads").
    pub(in crate::machine::binary) fn joined(&mut self, id: u64, pc: u64) {
        let me = self.lang();
        let last = self.cpu.vc.read(ThreadKey::Lang(me), id);
        self.cpu.vc.forget(ThreadKey::Lang(id));
        let rt = self.rt();
        rt.sync.forget(SyncKey::ThreadEnd(id));
        if !self.obs.floors {
            return;
        }
        let rt = self.rt();
        rt.joined.push((id, last));
        rt.joins_unchecked += 1;
        if rt.joins_unchecked * 4 < rt.joined.len() {
            return;
        }
        rt.joins_unchecked = 0;
        let Some(live) = self.floor_holders() else {
            return;
        };
        let vc = &self.cpu.vc;
        let rt = self.obs.binary.as_mut().expect("binary mode");
        let mut raised = Vec::new();
        rt.joined.retain(|&(t, v)| {
            let held = live.iter().all(|&l| vc.read(ThreadKey::Lang(l), t) >= v);
            if held {
                raised.push((t, v));
            }
            !held
        });
        self.raise(pc, raised);
    }

    /// Raises the floors `raised` (`(entry, value)`): in the clock file, to
    /// the detectors (a FloorVc event each, which first delivers every
    /// earlier access), then in the unit names.
    fn raise(&mut self, pc: u64, raised: Vec<(u64, u64)>) {
        if let Some(rt) = self.obs.binary.as_mut() {
            rt.floors_raised += raised.len() as u64;
        }
        for &(tid, value) in &raised {
            self.cpu.vc.raise_floor(tid, value);
            self.emit(pc, EventKind::Lard(EvOp::FloorVc { tid, value }));
        }
        for (tid, value) in raised {
            self.prune_unit_names(tid, value);
        }
    }

    /// The language threads that can still run, or `None` while a clock
    /// that is not theirs may still start one (module docs).
    fn floor_holders(&self) -> Option<Vec<u64>> {
        let rt = self.obs.binary.as_ref()?;
        if rt.unstarted > 0 || rt.floors_off {
            return None;
        }
        let mut live = Vec::new();
        // The threads that have not exited, in thread order.
        for &i in &self.cpu.sets.live {
            let Some(t) = rt.threads.get(i) else {
                break;
            };
            let starts = t.pending.iter().any(|p| {
                matches!(
                    p.call,
                    LibCall::OmpTeams | LibCall::OmpTeamBody | LibCall::OmpTaskLoop
                )
            });
            if starts {
                return None;
            }
            // A pool thread between implicit tasks runs no program code
            // until it starts the next, whose start it acquires from the
            // encountering thread (live): its clock reads what it lacks at
            // the floor meanwhile, which it knows by then.
            let in_body = t.pending.iter().any(|p| {
                matches!(
                    p.call,
                    LibCall::OmpRegion | LibCall::OmpTaskBody | LibCall::OmpTeamBody
                )
            });
            if t.pool && !in_body {
                continue;
            }
            live.push(t.lang);
            live.extend(t.units.iter().map(|u| u.task));
            live.extend(
                t.pending
                    .iter()
                    .filter(|p| p.call == LibCall::OmpTaskBody)
                    .map(|p| p.args[1]),
            );
        }
        Some(live)
    }
}
