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

use super::{BinaryRuntime, LibCall};

impl BinaryRuntime {
    /// A task was created (`many`: by a taskloop, whose creator waits for
    /// its tasks when `waits`).
    pub(crate) fn floors_task_created(&mut self, many: bool, waits: bool) {
        if !many {
            self.unstarted += 1;
        } else if !waits {
            self.floors_off = true;
        }
    }

    /// A thread kernel thread `creator` makes now is libgomp's for a team:
    /// its `pthread_create` was called by system code while the creator is
    /// in `GOMP_parallel` or `GOMP_teams`.
    pub(crate) fn made_for_a_team(&mut self, creator: usize) -> bool {
        let Some(t) = self.threads.get(creator) else {
            return false;
        };
        let program = &self.program;
        let in_team_start = t
            .pending
            .iter()
            .any(|p| matches!(p.call, LibCall::OmpParallel | LibCall::OmpTeams));
        let by_system = t
            .pending
            .iter()
            .rev()
            .find(|p| p.call == LibCall::ThreadCreate)
            .is_some_and(|p| !program.contains(p.ret));
        in_team_start && by_system
    }

    /// A task created by `GOMP_task` started.
    pub(crate) fn floors_task_started(&mut self) {
        self.unstarted = self.unstarted.saturating_sub(1);
    }
}
