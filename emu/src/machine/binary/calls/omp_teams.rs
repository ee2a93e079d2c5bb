//! OpenMP parallel regions and teams: a region's start and end, its members'
//! bodies, `teams` constructs and their teams. Each call's action at entry
//! and at return, side by side.

use super::{Entry, Pending, Return};
use crate::cpu::uc::Reg;
use crate::intercept::hb::SyncKey;
use crate::intercept::libs::LibCall;
use crate::intercept::names::LangUnit;
use crate::intercept::runtime::TARGET_DEFAULT_TEAMS;
use crate::machine::Machine;
use lard_detector_hw::event::ProgramEvent;
use lard_detector_hw::event::ThreadKey;

impl Machine {
    /// A parallel-region or teams call's entry ([`Machine::binary_entry`]).
    pub(super) fn omp_teams_entry(&mut self, call: LibCall, e: &mut Entry) {
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
            LibCall::OmpParallel => {
                self.group_of_region(args[0]);
                // A team instance of its own: two concurrent regions with
                // one body (nested in two threads of a team) do not
                // synchronize with each other. `args[2]` keeps it.
                let rt = self.rt();
                let team = rt.next_team;
                rt.next_team += 1;
                rt.team_calls.insert((args[0], args[1]), team);
                args[2] = team;
                self.release(SyncKey::RegionStart(team), ret);
                self.intercept_body(args[0], LibCall::OmpRegion);
            }
            LibCall::OmpRegion => {
                let g = self.region_group(pc);
                self.group_enter(g);
                // The member's team: the call that passed this body its
                // data (`args[1]` keeps it).
                let team = self
                    .rt()
                    .team_calls
                    .get(&(pc, args[0]))
                    .copied()
                    .unwrap_or(0);
                args[1] = team;
                self.acquire(SyncKey::RegionStart(team), ret);
                // The implicit task's token (its own heap memory).
                let rt = self.rt();
                *task = rt.next_region;
                rt.next_region += 1;
            }
            LibCall::OmpTeams => {
                self.rt().thread(cur).teams_started = 0;
                self.release(SyncKey::TeamStart(args[0]), ret);
                self.intercept_body(args[0], LibCall::OmpTeamBody);
            }
            LibCall::OmpTeamBody => {
                // Every team runs at the same stack addresses: the frames
                // below are the earlier teams' (dead, Rule 3).
                self.clear_dead_frames(sp, ret);
                let prev = self.lang();
                let id = self.switch_to_new_lang(ret);
                self.group_enter_new();
                self.acquire(SyncKey::TeamStart(pc), ret);
                *task_ids = Some((prev, id));
                let t = self.rt().thread(cur);
                let n = t.teams_started;
                t.teams_started += 1;
                let site = t
                    .pending
                    .iter()
                    .rev()
                    .find(|p| p.call == LibCall::OmpTeams)
                    .map_or(0, |p| p.ret);
                self.obs
                    .lang_units
                    .insert(id, 0, LangUnit::Team { site, n });
            }
            LibCall::OmpTeams4 => {
                self.team_end(ret);
                // `bool first` (the 4th argument): a new construct.
                if uc.reg(Reg::RCX) & 0xff != 0 {
                    // No `num_teams` clause (both bounds 0): libgomp's host
                    // fallback would run one team, which hides every race
                    // between teams; the number is the implementation's
                    // choice, and lard's is `TARGET_DEFAULT_TEAMS`.
                    if uc.reg(Reg::RDI) as u32 == 0 && uc.reg(Reg::RSI) as u32 == 0 {
                        uc.set_reg(Reg::RDI, TARGET_DEFAULT_TEAMS);
                        uc.set_reg(Reg::RSI, TARGET_DEFAULT_TEAMS);
                    }
                    self.rt().thread(cur).teams_started = 0;
                    let g = self.group();
                    self.group_enter(g);
                }
            }
            _ => {}
        }
    }

    /// A parallel-region or teams call's return ([`Machine::binary_return`]).
    pub(super) fn omp_teams_return(&mut self, p: &Pending, r: &Return) {
        let Return { pc, rax, .. } = *r;
        let a = p.args;
        match p.call {
            LibCall::OmpParallel => {
                // The region's end waits for every task of the team too
                // (they may run in the final barrier, after the bodies).
                let team = a[2];
                self.acquire(SyncKey::RegionEnd(team), pc);
                self.acquire(SyncKey::Tasks(team), pc);
                self.raise_floors(pc);
                let rt = self.rt();
                if rt.team_calls.get(&(a[0], a[1])) == Some(&team) {
                    rt.team_calls.remove(&(a[0], a[1]));
                }
                for key in [
                    SyncKey::RegionStart(team),
                    SyncKey::RegionEnd(team),
                    SyncKey::Barrier(team),
                    SyncKey::Tasks(team),
                ] {
                    rt.sync.forget(key);
                }
            }
            LibCall::OmpRegion => {
                // `p.args[1]` holds the member's team instance.
                self.release(SyncKey::RegionEnd(a[1]), pc);
                self.group_leave();
                let rt = self.rt();
                rt.owned.remove(&p.task);
                rt.asked_num.remove(&p.task);
                rt.sync.forget(SyncKey::Units(p.task));
            }
            LibCall::OmpTeams => self.acquire(SyncKey::TeamEnd(a[0]), pc),
            LibCall::OmpTeamBody => {
                // `p.args` holds [team id, encountering task, body address].
                let (id, prev) = (a[0], a[1]);
                self.release(SyncKey::TeamEnd(a[2]), pc);
                self.group_leave();
                self.program(pc, ProgramEvent::ThreadExit);
                self.switch_lang(prev, pc);
                self.cpu.vc.forget(ThreadKey::Lang(id));
            }
            LibCall::OmpTeams4 if rax as u8 != 0 => {
                self.team_begin(pc);
                self.group_replace_new();
            }
            LibCall::OmpTeams4 => {
                self.teams_done(pc);
                self.group_leave();
            }
            _ => {}
        }
    }
}
