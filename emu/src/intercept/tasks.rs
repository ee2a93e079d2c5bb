//! OpenMP explicit tasks in binary mode: which creation a running task body
//! belongs to, its taskgroup, and its sibling dependences
//! (docs/binary-mode-openmp.md, "Tasks").
//!
//! libgomp calls an outlined task body as `fn(arg)`. For a deferred task
//! `arg` points into the block libgomp `malloc`ed for the task inside
//! `GOMP_task` (the task structure, its dependence entries, then a copy of
//! the data); an undeferred task runs inside `GOMP_task` itself. So a body
//! is matched to its creation by the blocks allocated during that
//! `GOMP_task` call (by the creating kernel thread), or by the innermost
//! `GOMP_task` still running on the same kernel thread.
//!
//! The happens-before rules are those of the lard-cc runtime
//! (`guest-sdk/cc/omp/tasks.c`: `task_link`, `deps_apply`, taskwait, taskgroup),
//! expressed with [`hb`](super::hb)'s release/acquire on the keys below.

use crate::intercept::hb::SyncKey;
use std::collections::{BTreeMap, HashMap};

/// A `depend` clause item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dep {
    /// `depend(in: a)`.
    In(u64),
    /// `depend(out: a)`, `inout`, `mutexinoutset` and `inoutset` (the last
    /// two ordered like `inout`, as libgomp and the lard-cc runtime do:
    /// this can only add order among them).
    Out(u64),
}

/// `GOMP_TASK_FLAG_FINAL`: the `final` clause was true.
pub const FLAG_FINAL: u64 = 1 << 1;
/// `GOMP_TASK_FLAG_DEPEND`: the `depend` argument is valid.
pub const FLAG_DEPEND: u64 = 1 << 3;
/// `GOMP_TASK_FLAG_IF`: taskloop's `if` clause was true.
pub const FLAG_IF: u64 = 1 << 10;
/// `GOMP_TASK_FLAG_NOGROUP`: taskloop without its implicit taskgroup.
pub const FLAG_NOGROUP: u64 = 1 << 11;
/// At most this many dependences are read from one clause list (a guard
/// against a corrupt array).
const MAX_DEPS: u64 = 4096;

/// Reads libgomp's `depend` array at `depend` with `read` (guest memory,
/// 8-byte words). Both encodings: `[n, nout, addr...]` (outs first) and
/// `[0, n, nout, nmutexinoutset, nin, addr..., depobj...]` where a depobj
/// entry points to `{addr, kind}` (kind 1 = in).
pub fn parse_depend(read: impl Fn(u64) -> Option<u64>, depend: u64) -> Vec<Dep> {
    let word = |i: u64| read(depend.wrapping_add(8 * i));
    let mut out = Vec::new();
    let Some(d0) = word(0) else {
        return out;
    };
    let (n, outs, ins, first) = if d0 != 0 {
        let Some(nout) = word(1) else {
            return out;
        };
        (d0, nout, d0.saturating_sub(nout), 2)
    } else {
        let (Some(n), Some(nout), Some(nmut), Some(nin)) = (word(1), word(2), word(3), word(4))
        else {
            return out;
        };
        (n, nout.saturating_add(nmut), nin, 5)
    };
    for i in 0..n.min(MAX_DEPS) {
        let Some(v) = word(first + i) else {
            break;
        };
        if i < outs {
            out.push(Dep::Out(v));
        } else if i < outs.saturating_add(ins) {
            out.push(Dep::In(v));
        } else {
            // depobj: {address, kind}.
            let (Some(a), Some(kind)) = (read(v), read(v.wrapping_add(8))) else {
                continue;
            };
            out.push(if kind == 1 { Dep::In(a) } else { Dep::Out(a) });
        }
    }
    out
}

/// The sync keys a task with `deps`, created by language thread `parent`,
/// acquires when it starts (OpenMP 5.2 §15.9.5: an in-dependence follows
/// every earlier out/inout sibling on the address, an out/inout follows
/// every earlier sibling on it). Sibling tasks are created by the same
/// parent, so the keys name it.
pub fn dep_acquires(parent: u64, deps: &[Dep]) -> impl Iterator<Item = SyncKey> + '_ {
    deps.iter().flat_map(move |d| {
        let (a, out) = match *d {
            Dep::In(a) => (a, false),
            Dep::Out(a) => (a, true),
        };
        let writers = Some(SyncKey::DepOut(parent, a));
        let readers = out.then_some(SyncKey::DepIn(parent, a));
        writers.into_iter().chain(readers)
    })
}

/// The sync keys such a task releases when it ends.
pub fn dep_releases(parent: u64, deps: &[Dep]) -> impl Iterator<Item = SyncKey> + '_ {
    deps.iter().map(move |d| match *d {
        Dep::In(a) => SyncKey::DepIn(parent, a),
        Dep::Out(a) => SyncKey::DepOut(parent, a),
    })
}

/// One `GOMP_task` (or taskloop) call.
#[derive(Clone, Debug)]
pub struct Creation {
    /// The creating language thread (the parent task).
    pub parent: u64,
    /// The taskgroup its tasks belong to.
    pub group: Option<u64>,
    /// Its dependences.
    pub deps: Vec<Dep>,
    /// A taskloop: several bodies run for one creation.
    pub many: bool,
    /// Return address of the creating call (reports name the task by it).
    pub site: u64,
    /// Its tasks are final (the `final` clause, or a final parent): the
    /// tasks they create are included tasks.
    pub final_task: bool,
    /// Its task is undeferred: `if(false)`, or an included task (created
    /// by a final task). It completes before its creator continues
    /// (OpenMP 5.2 §12.5, §12.8). So does a task bound to no team
    /// (created outside every parallel region, or in a team of a `teams`
    /// construct): its binding team is one thread, whatever the team size
    /// elsewhere, and that thread runs it to its end first. A task libgomp
    /// runs at once for reasons of its own (too many queued tasks,
    /// `mergeable`) is not undeferred: it stays concurrent with its
    /// creator's continuation. A taskloop's undeferred tasks run one after
    /// another.
    pub undeferred: bool,
    /// The team instance it binds to (runtime.rs; 0: none): the tasks'
    /// ends join that team's barriers and region end, wherever they run
    /// (also in the region's final barrier, after a member's body).
    pub team: u64,
}

/// How a `GOMP_task` call asks its task to run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Execution {
    /// The `final` clause was true (`FLAG_FINAL`).
    pub final_clause: bool,
    /// The `if` clause was false (`GOMP_task`'s `if_clause` argument, a
    /// taskloop's `FLAG_IF`).
    pub if_false: bool,
    /// Created outside every parallel region (or in a team of a `teams`
    /// construct): the binding team has one thread.
    pub no_team: bool,
}

/// The explicit tasks of a run.
#[derive(Default)]
pub struct Tasks {
    next: u64,
    creations: HashMap<u64, Creation>,
    /// Blocks allocated inside a creation: start → (end, creation).
    blocks: BTreeMap<u64, (u64, u64)>,
    /// The creation each running task (by language thread) came from.
    running: HashMap<u64, u64>,
    /// Open taskgroups per language thread, innermost last.
    groups: HashMap<u64, Vec<u64>>,
}

impl Tasks {
    /// The taskgroup a task created now by `parent` belongs to: the
    /// innermost one `parent` opened, else the one `parent` itself belongs
    /// to (a taskgroup waits for descendants too).
    fn group_of_new(&self, parent: u64) -> Option<u64> {
        if let Some(g) = self.groups.get(&parent).and_then(|s| s.last()) {
            return Some(*g);
        }
        let c = self.running.get(&parent)?;
        self.creations.get(c)?.group
    }

    /// A new creation by `parent`; `many` for a taskloop, whose tasks form
    /// an implicit taskgroup of their own unless `nogroup` (`own_group`);
    /// `exec` its clauses; `site` the call's return address. Returns the creation's id (its release key is
    /// [`SyncKey::TaskCreated`]) and, for `own_group`, the group's id.
    pub fn create(
        &mut self,
        parent: u64,
        deps: Vec<Dep>,
        many: bool,
        own_group: bool,
        exec: Execution,
        site: u64,
    ) -> (u64, Option<u64>) {
        let parent_final = self
            .running
            .get(&parent)
            .and_then(|c| self.creations.get(c))
            .is_some_and(|c| c.final_task);
        let id = self.next;
        self.next += 1;
        let own = own_group.then(|| {
            let g = self.next;
            self.next += 1;
            g
        });
        let group = own.or_else(|| self.group_of_new(parent));
        self.creations.insert(
            id,
            Creation {
                parent,
                group,
                deps,
                many,
                site,
                final_task: exec.final_clause || parent_final,
                undeferred: exec.if_false || exec.no_team || parent_final,
                team: 0,
            },
        );
        (id, own)
    }

    /// Creation `id`'s tasks bind to team instance `team`.
    pub fn bind(&mut self, id: u64, team: u64) {
        if let Some(c) = self.creations.get_mut(&id) {
            c.team = team;
        }
    }

    /// The team instance running task `task`'s creation binds to (0: none
    /// or unknown).
    pub fn team_of(&self, task: u64) -> u64 {
        self.running
            .get(&task)
            .and_then(|c| self.creations.get(c))
            .map_or(0, |c| c.team)
    }

    /// `[addr, addr+size)` was allocated during creation `id`.
    pub fn block_allocated(&mut self, id: u64, addr: u64, size: u64) {
        self.blocks.insert(addr, (addr.saturating_add(size), id));
    }

    /// The block at `addr` was freed.
    pub fn block_freed(&mut self, addr: u64) {
        self.blocks.remove(&addr);
    }

    /// A task body was entered with argument `arg` on a kernel thread whose
    /// innermost running `GOMP_task` is `inside` (an undeferred task):
    /// its creation, if known.
    /// The block is tried first: a thread waiting inside a taskloop's
    /// implicit taskgroup may run unrelated deferred tasks, whose `arg`
    /// lies in their own blocks; an undeferred task's `arg` is the
    /// creator's data (stack), in no block.
    pub fn body_creation(&mut self, arg: u64, inside: Option<u64>) -> Option<u64> {
        // The block holding `arg` (the data copy may end the block: an
        // empty copy points just past it).
        if let Some((&start, &(end, id))) = self.blocks.range(..=arg).next_back() {
            if arg <= end {
                self.blocks.remove(&start);
                return Some(id);
            }
        }
        inside
    }

    /// Language thread `task` runs a body of creation `id`; returns the
    /// creation.
    pub fn started(&mut self, task: u64, id: u64) -> Option<&Creation> {
        self.running.insert(task, id);
        self.creations.get(&id)
    }

    /// Language thread `task` finished its body: its creation (forgotten
    /// unless a taskloop's).
    pub fn finished(&mut self, task: u64) -> Option<Creation> {
        let id = self.running.remove(&task)?;
        let c = self.creations.get(&id)?;
        if c.many {
            Some(c.clone())
        } else {
            self.creations.remove(&id)
        }
    }

    /// `GOMP_taskgroup_start` by `me`: a new group.
    pub fn group_start(&mut self, me: u64) -> u64 {
        let g = self.next;
        self.next += 1;
        self.groups.entry(me).or_default().push(g);
        g
    }

    /// `GOMP_taskgroup_end` by `me`: the group it closes.
    pub fn group_end(&mut self, me: u64) -> Option<u64> {
        let s = self.groups.get_mut(&me)?;
        let g = s.pop();
        if s.is_empty() {
            self.groups.remove(&me);
        }
        g
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mem(words: &[(u64, u64)]) -> impl Fn(u64) -> Option<u64> + '_ {
        move |a| words.iter().find(|w| w.0 == a).map(|w| w.1)
    }

    #[test]
    fn both_depend_encodings() {
        // Old: n = 3, nout = 1: out 0x10, in 0x20, in 0x30.
        let m = [
            (0x100, 3),
            (0x108, 1),
            (0x110, 0x10),
            (0x118, 0x20),
            (0x120, 0x30),
        ];
        assert_eq!(
            parse_depend(mem(&m), 0x100),
            [Dep::Out(0x10), Dep::In(0x20), Dep::In(0x30)]
        );
        // New: n = 4, nout 1, nmutexinoutset 1, nin 1, one depobj (in).
        let m = [
            (0x100, 0),
            (0x108, 4),
            (0x110, 1),
            (0x118, 1),
            (0x120, 1),
            (0x128, 0x10),
            (0x130, 0x20),
            (0x138, 0x30),
            (0x140, 0x500),
            (0x500, 0x40),
            (0x508, 1),
        ];
        assert_eq!(
            parse_depend(mem(&m), 0x100),
            [Dep::Out(0x10), Dep::Out(0x20), Dep::In(0x30), Dep::In(0x40)]
        );
        assert!(parse_depend(mem(&[]), 0x100).is_empty());
    }

    #[test]
    fn readers_do_not_order_each_other() {
        let acq: Vec<_> = dep_acquires(7, &[Dep::In(1)]).collect();
        assert_eq!(acq, [SyncKey::DepOut(7, 1)]);
        let acq: Vec<_> = dep_acquires(7, &[Dep::Out(1)]).collect();
        assert_eq!(acq, [SyncKey::DepOut(7, 1), SyncKey::DepIn(7, 1)]);
        let rel: Vec<_> = dep_releases(7, &[Dep::In(1), Dep::Out(2)]).collect();
        assert_eq!(rel, [SyncKey::DepIn(7, 1), SyncKey::DepOut(7, 2)]);
    }

    #[test]
    fn bodies_find_their_creation_and_group() {
        let mut t = Tasks::default();
        let (early, _) = t.create(1, Vec::new(), false, false, Execution::default(), 0);
        t.block_allocated(early, 0x1000, 0x80);
        let g = t.group_start(1);
        let (late, _) = t.create(1, Vec::new(), false, false, Execution::default(), 0);
        t.block_allocated(late, 0x2000, 0x40);
        assert_eq!(t.body_creation(0x2040, None), Some(late));
        assert_eq!(t.body_creation(0x2040, None), None, "a block is used once");
        assert_eq!(t.body_creation(0x1010, None), Some(early));
        assert_eq!(t.body_creation(0x9999, Some(early)), Some(early));
        assert_eq!(t.body_creation(0x9999, None), None);
        assert_eq!(t.started(5, late).unwrap().group, Some(g));
        // A task created by task 5 belongs to 5's group.
        let (child, _) = t.create(5, Vec::new(), false, false, Execution::default(), 0);
        assert_eq!(t.started(6, child).unwrap().group, Some(g));
        assert_eq!(t.started(4, early).unwrap().group, None);
        assert_eq!(t.group_end(1), Some(g));
        assert_eq!(t.group_end(1), None);
        assert_eq!(t.finished(5).unwrap().parent, 1);
        assert!(t.finished(5).is_none());
    }

    #[test]
    fn if_false_included_and_teamless_tasks_are_undeferred() {
        let mut t = Tasks::default();
        let plain = Execution::default();
        let fin = Execution {
            final_clause: true,
            ..plain
        };
        let if0 = Execution {
            if_false: true,
            ..plain
        };
        let (a, _) = t.create(1, Vec::new(), false, false, if0, 0);
        assert!(t.started(2, a).unwrap().undeferred);
        let (f, _) = t.create(1, Vec::new(), false, false, fin, 0);
        let c = t.started(3, f).unwrap();
        assert!(c.final_task && !c.undeferred);
        // A task created by a final task is included, and final itself.
        let (inc, _) = t.create(3, Vec::new(), false, false, plain, 0);
        let c = t.started(4, inc).unwrap();
        assert!(c.undeferred && c.final_task);
        let (d, _) = t.create(1, Vec::new(), false, false, plain, 0);
        assert!(!t.started(5, d).unwrap().undeferred);
        // Bound to no team: its one thread runs it to its end first.
        let alone = Execution {
            no_team: true,
            ..plain
        };
        let (n, _) = t.create(1, Vec::new(), false, false, alone, 0);
        let c = t.started(6, n).unwrap();
        assert!(c.undeferred && !c.final_task);
    }
}
