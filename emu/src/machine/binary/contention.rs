//! OpenMP contention groups in binary mode: an initial thread and its
//! descendant threads (OpenMP 5.2 §1.2.2). The program's initial thread
//! starts group 0; each team of a `teams` construct is a new group (its
//! initial thread is an initial thread), and every thread of a parallel
//! region belongs to its master's group. `critical` and the lock routines
//! bind to the contention group (§15.2, §18.9): between two teams they
//! order nothing, however libgomp's host fallback runs the teams (one
//! after another, on one thread). `atomic` binds to every thread of the
//! device and keeps one sync object. The lard-cc runtime's rule
//! (`guest-sdk/cc/gomp.c`, "contention groups"; docs/lard-cc-openmp.md's OpenMP
//! table).

use crate::intercept::hb::SyncKey;
use crate::machine::Machine;

impl Machine {
    /// The contention group of the code the current kernel thread runs.
    pub(super) fn group(&mut self) -> u64 {
        let cur = self.cpu.cur;
        self.rt().thread(cur).cg
    }

    /// The current kernel thread enters contention group `g` (a parallel
    /// region's body, run in its master's group).
    pub(super) fn group_enter(&mut self, g: u64) {
        let cur = self.cpu.cur;
        let t = self.rt().thread(cur);
        t.cg_saved.push(t.cg);
        t.cg = g;
    }

    /// The current kernel thread starts a team of a `teams` construct: a
    /// new contention group (the enclosing one is restored by
    /// [`Machine::group_leave`]).
    pub(super) fn group_enter_new(&mut self) {
        let rt = self.rt();
        rt.groups += 1;
        let g = rt.groups;
        self.group_enter(g);
    }

    /// The next team of a `teams` construct in its loop form starts on
    /// the current kernel thread (after [`Machine::group_enter`] saved the
    /// encountering task's group): a new contention group in its place.
    pub(super) fn group_replace_new(&mut self) {
        let rt = self.rt();
        rt.groups += 1;
        let g = rt.groups;
        let cur = self.cpu.cur;
        self.rt().thread(cur).cg = g;
    }

    /// The current kernel thread leaves the group it entered last.
    pub(super) fn group_leave(&mut self) {
        let cur = self.cpu.cur;
        let t = self.rt().thread(cur);
        t.cg = t.cg_saved.pop().unwrap_or(0);
    }

    /// A parallel region whose body is `body` starts: its threads run in
    /// the encountering thread's group.
    pub(super) fn group_of_region(&mut self, body: u64) {
        let g = self.group();
        self.rt().region_groups.insert(body, g);
    }

    /// The group of the parallel region whose body is `body`.
    pub(super) fn region_group(&mut self, body: u64) -> u64 {
        self.rt().region_groups.get(&body).copied().unwrap_or(0)
    }

    /// The sync object of `critical` or an OpenMP lock (`object`: the
    /// construct's number or the lock's address) in the current group:
    /// `plain` in group 0.
    pub(super) fn in_group(&mut self, object: u64, plain: SyncKey) -> SyncKey {
        match self.group() {
            0 => plain,
            group => SyncKey::Grouped { group, object },
        }
    }
}
