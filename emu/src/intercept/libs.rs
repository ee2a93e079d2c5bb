//! What each library call binary mode intercepts means ([`LibCall`]) and
//! which module acts on it ([`Family`]); which symbol is which call is
//! [`crate::intercept::library`] (the interception table of
//! docs/binary-mode.md).

use crate::intercept::ranges;

/// The family of a [`LibCall`]: each family's entry and return actions
/// live in one module (emu/src/intercept/runtime/calls/).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// POSIX threads: creation, join, mutexes, read-write locks, condition variables, barriers, semaphores, `pthread_once`.
    Pthread,
    /// The heap: `malloc` and its family, `free`.
    Heap,
    /// OpenMP parallel regions and their members' bodies, `teams` constructs and their teams, `target`.
    OmpTeams,
    /// OpenMP explicit tasks: creation, bodies, `taskwait`, `taskgroup`.
    OmpTasks,
    /// OpenMP worksharing: barriers, `sections`, loop chunks, a construct's end, `omp_get_thread_num`.
    OmpWork,
    /// OpenMP mutual exclusion: `critical`, `ordered`, `single`'s copy, OpenMP locks.
    OmpSync,
    /// Memory a function reads or writes for its caller: the mem* and
    /// str* families, stdio buffers, system calls' buffers
    /// ([`ranges`](crate::intercept::ranges)).
    Ranges,
}

/// A library call binary mode acts on. Entry actions happen when the
/// function is entered, return actions when it returns to its caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LibCall {
    /// `pthread_create(thread*, attr, fn, arg)`: return records `*thread`.
    ThreadCreate,
    /// `pthread_join(thread, ret)` and friends: return 0 acquires the end
    /// of `thread`.
    ThreadJoin,
    /// Lock of a mutex or spin lock (arg0): return 0 acquires it.
    Lock,
    /// Unlock of a mutex or spin lock (arg0): entry releases it.
    Unlock,
    /// Read lock of an rwlock (arg0): return 0 acquires its writers.
    RdLock,
    /// Write lock of an rwlock (arg0): return 0 acquires writers and readers.
    WrLock,
    /// `pthread_rwlock_unlock(l)`: entry releases into readers or writers,
    /// as the thread holds it.
    RwUnlock,
    /// `pthread_cond_wait(c, m)` and timed variants: entry releases `m`;
    /// return acquires `c` and `m`.
    CondWait,
    /// `pthread_cond_signal/broadcast(c)`: entry releases `c`.
    CondSignal,
    /// `pthread_barrier_init(b, attr, n)`: return 0 records `b`'s count.
    BarrierInit,
    /// `pthread_mutex_init(m, …)` and the other initializers of a
    /// synchronization object: return 0 makes `m` a new object, with no
    /// clock (the releases of an object that was there order nothing for
    /// this one).
    SyncInit,
    /// `pthread_barrier_wait(b)`: entry releases into `b`'s current
    /// phase, return acquires that phase (`b` itself when its count is
    /// unknown).
    BarrierWait,
    /// `sem_post(s)`: entry releases `s`.
    SemPost,
    /// `sem_wait(s)` and friends: return 0 acquires `s`.
    SemWait,
    /// `pthread_once(o, fn)`: return acquires and releases `o`.
    Once,
    /// `malloc(size)`, `operator new(size)`, `valloc`, `pvalloc`.
    Malloc,
    /// `calloc(n, size)`.
    Calloc,
    /// `realloc(p, size)`.
    Realloc,
    /// `aligned_alloc(align, size)`, `memalign(align, size)`.
    AlignedAlloc,
    /// `posix_memalign(&p, align, size)`.
    PosixMemalign,
    /// Rust's `__rust_realloc(p, old_size, align, new_size)`: as
    /// `realloc(p, new_size)`.
    RustRealloc,
    /// `free(p)`, `operator delete(p, ...)`.
    Free,
    /// `GOMP_parallel*(fn, data, ...)`: entry releases the team start of
    /// `fn` (and intercepts `fn`), return acquires its team end.
    OmpParallel,
    /// An outlined parallel-region body (found at run time): entry
    /// acquires its team start, return releases its team end.
    OmpRegion,
    /// `GOMP_task(fn, data, cpyfn, size, align, if, flags, depend, ...)`:
    /// entry records the creation (its taskgroup and `depend` list) and
    /// releases it (and intercepts `fn`); see intercept/tasks.rs.
    OmpTask,
    /// `GOMP_taskloop*(fn, data, cpyfn, size, align, flags, ...)`: as
    /// `OmpTask`, and without `nogroup` its tasks form an implicit
    /// taskgroup that return acquires.
    OmpTaskLoop,
    /// `GOMP_taskgroup_start()`: entry opens a taskgroup.
    OmpTaskGroupStart,
    /// `GOMP_taskgroup_end()`: return acquires the end of the group's tasks.
    OmpTaskGroupEnd,
    /// An outlined task body (found at run time): it runs as a language
    /// thread of its own (a fresh id, LARD's Thread op), whose clock starts
    /// from its task start; return releases the tasks' end and switches
    /// back (an undeferred or included task also orders its creator after
    /// it).
    OmpTaskBody,
    /// `GOMP_taskwait`, `GOMP_taskwait_depend`: return acquires the end
    /// of the caller's child tasks.
    OmpTaskWait,
    /// `GOMP_barrier` and the implicit barriers (`GOMP_loop_end`, ...):
    /// entry ends the running worksharing unit (if any) and releases the barrier,
    /// return acquires it and the tasks' end.
    OmpBarrier,
    /// `GOMP_sections_start(n)`, `GOMP_sections2_start`,
    /// `GOMP_sections_next()`: entry ends the running worksharing unit (if
    /// any); a non-zero return starts section number `rax` as a language
    /// thread of its own (machine/binary/worksharing.rs).
    OmpSections,
    /// A worksharing-loop call that may hand out a chunk
    /// (`GOMP_loop_*_start`, `GOMP_loop_*_next`, `_ull` and `ordered`
    /// variants, `GOMP_loop_start`): entry ends the running unit (if any);
    /// a true return with a non-null `istart` starts the chunk
    /// `[*istart, *iend)` as a language thread of its own.
    OmpLoop {
        /// The index of the `istart` argument (`iend` follows it).
        istart: u8,
        /// The bounds are `unsigned long long` (the `_ull` entry points),
        /// else `long`.
        ull: bool,
    },
    /// `GOMP_loop_doacross_*_start(n, counts, ...)`, `_ull` and the generic
    /// `GOMP_loop_doacross_start`: as [`LibCall::OmpLoop`], and entry
    /// starts the thread's next doacross loop of `n` dimensions whose
    /// iteration counts are at `counts`.
    OmpDoacrossLoop {
        /// The index of the `istart` argument (`iend` follows it).
        istart: u8,
        /// The counts and bounds are `unsigned long long`.
        ull: bool,
    },
    /// `GOMP_doacross_post(counts)`, `GOMP_doacross_ull_post`
    /// (`depend(source)`): entry releases the iteration vector at `counts`.
    OmpDoacrossPost,
    /// `GOMP_doacross_wait(first, ...)`, `GOMP_doacross_ull_wait`
    /// (`depend(sink: v)`, `v` the variadic arguments): return acquires
    /// iteration vector `v`.
    OmpDoacrossWait,
    /// `GOMP_teams_reg(fn, data, num_teams, ...)` (a `teams` construct on
    /// the host): entry releases the team start of `fn` (and intercepts
    /// `fn`), return acquires its team end.
    OmpTeams,
    /// An outlined teams body (found at run time), called once per team:
    /// it runs as a language thread of its own whose clock starts from the
    /// team start; return releases the team end and switches back.
    OmpTeamBody,
    /// `GOMP_teams4(low, high, limit, first)` (a `teams` construct inside
    /// a target region, loop form): entry ends the running team (if any);
    /// a true return starts the next team as a language thread forked from
    /// the encountering task, a false one acquires the end of every team.
    OmpTeams4,
    /// `GOMP_target_ext(device, fn, ...)`: the host fallback runs `fn` on
    /// the calling thread as the encountering task; the call stays pending
    /// so that a team's frames (below its entry) can be cleared.
    OmpTarget,
    /// `GOMP_sections_end_nowait()`, `GOMP_loop_end_nowait()`: entry ends
    /// the running unit (section or chunk).
    OmpWorkEnd,
    /// `GOMP_critical_start`, `GOMP_atomic_start`, `GOMP_ordered_start`:
    /// return acquires the construct's lock.
    OmpEnter(u8),
    /// `GOMP_critical_end`, `GOMP_atomic_end`, `GOMP_ordered_end`: entry
    /// releases it.
    OmpExit(u8),
    /// `GOMP_critical_name_start(&p)`: return acquires the named lock.
    OmpNamedEnter,
    /// `GOMP_critical_name_end(&p)`: entry releases it.
    OmpNamedExit,
    /// `GOMP_single_copy_start`: return acquires the copy.
    OmpCopyStart,
    /// `GOMP_single_copy_end(data)`: entry releases the copy.
    OmpCopyEnd,
    /// `omp_test_lock(l)`, `omp_test_nest_lock(l)`: non-zero return acquires `l`.
    OmpTestLock,
    /// `omp_set_lock(l)`, `omp_set_nest_lock(l)`: return acquires `l` in
    /// the caller's contention group (they return nothing).
    OmpLock,
    /// `omp_unset_lock(l)`, `omp_unset_nest_lock(l)`: entry releases it.
    OmpUnlock,
    /// `omp_get_thread_num()` called by program code: entry binds the
    /// calling implicit task's units to its thread
    /// (machine/binary/worksharing.rs).
    OmpThreadNum,
    /// Function `i` of the ranges table ([`ranges::table`]) called by
    /// program code: its ranges are checked at entry, or at return when
    /// its result gives them.
    Range(u8),
    /// The IFUNC resolver of function `i` of the ranges table: its return
    /// value is the implementation, intercepted as [`LibCall::Range`].
    Resolver(u8),
}

/// The construct locks of `OmpEnter`/`OmpExit`.
pub const OMP_CRITICAL: u8 = 0;
/// `#pragma omp atomic` implemented with a lock.
pub const OMP_ATOMIC: u8 = 1;
/// `#pragma omp ordered`.
pub const OMP_ORDERED: u8 = 2;

impl LibCall {
    /// The family whose module acts on the call.
    pub fn family(self) -> Family {
        match self {
            LibCall::ThreadCreate
            | LibCall::ThreadJoin
            | LibCall::Lock
            | LibCall::Unlock
            | LibCall::RdLock
            | LibCall::WrLock
            | LibCall::RwUnlock
            | LibCall::CondWait
            | LibCall::CondSignal
            | LibCall::BarrierInit
            | LibCall::SyncInit
            | LibCall::BarrierWait
            | LibCall::SemPost
            | LibCall::SemWait
            | LibCall::Once => Family::Pthread,
            LibCall::Malloc
            | LibCall::Calloc
            | LibCall::Realloc
            | LibCall::AlignedAlloc
            | LibCall::PosixMemalign
            | LibCall::RustRealloc
            | LibCall::Free => Family::Heap,
            LibCall::OmpParallel
            | LibCall::OmpRegion
            | LibCall::OmpTeams
            | LibCall::OmpTeamBody
            | LibCall::OmpTeams4
            | LibCall::OmpTarget => Family::OmpTeams,
            LibCall::OmpTask
            | LibCall::OmpTaskLoop
            | LibCall::OmpTaskGroupStart
            | LibCall::OmpTaskGroupEnd
            | LibCall::OmpTaskBody
            | LibCall::OmpTaskWait => Family::OmpTasks,
            LibCall::OmpBarrier
            | LibCall::OmpSections
            | LibCall::OmpLoop { .. }
            | LibCall::OmpDoacrossLoop { .. }
            | LibCall::OmpDoacrossPost
            | LibCall::OmpDoacrossWait
            | LibCall::OmpWorkEnd
            | LibCall::OmpThreadNum => Family::OmpWork,
            LibCall::OmpEnter(_)
            | LibCall::OmpExit(_)
            | LibCall::OmpNamedEnter
            | LibCall::OmpNamedExit
            | LibCall::OmpCopyStart
            | LibCall::OmpCopyEnd
            | LibCall::OmpTestLock
            | LibCall::OmpLock
            | LibCall::OmpUnlock => Family::OmpSync,
            LibCall::Range(_) | LibCall::Resolver(_) => Family::Ranges,
        }
    }

    /// True for the malloc family (a nested call of the family inside
    /// another one, e.g. `operator new` calling `malloc`, is one allocation).
    pub fn is_heap(self) -> bool {
        matches!(
            self,
            LibCall::Malloc
                | LibCall::Calloc
                | LibCall::Realloc
                | LibCall::AlignedAlloc
                | LibCall::PosixMemalign
                | LibCall::RustRealloc
                | LibCall::Free
        )
    }

    /// True when the call has an action at its return.
    pub fn acts_on_return(self) -> bool {
        if let LibCall::Range(i) = self {
            return ranges::table()[usize::from(i)].shape.at_return();
        }
        !matches!(
            self,
            LibCall::Unlock
                | LibCall::RwUnlock
                | LibCall::CondSignal
                | LibCall::SemPost
                | LibCall::Free
                | LibCall::OmpExit(_)
                | LibCall::OmpUnlock
                | LibCall::OmpNamedExit
                | LibCall::OmpCopyEnd
                | LibCall::OmpTaskGroupStart
                | LibCall::OmpWorkEnd
                | LibCall::OmpThreadNum
        )
    }
}
