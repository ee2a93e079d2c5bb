/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * lard-cc runtime, Rust programs: the slow paths of std's synchronization,
 * precompiled in libstd without the instrumentation (docs/rust.md, "std's
 * precompiled synchronization").
 *
 * A Rust program built with lard-rustc instruments the fast paths of std's
 * futex Mutex, RwLock and scoped threads, which are inlined into its crates:
 * their atomics reach atomic.c with their memory orders, and their clocks
 * live at the addresses of the atomic words.  When a fast path fails it
 * calls a precompiled slow path whose atomics reach nobody.  lard-rustc
 * links each such call to a stub here (ld --wrap=SYM, SYM looked up in the
 * toolchain's libstd, --defsym __wrap_SYM to the stub and the stub's real
 * function to __real_SYM).  The stub calls the slow path and makes the edge
 * its atomic makes, on the clock of the same atomic word:
 *
 *   Mutex::lock_contended(m)           after: acquire   clock(m + off)
 *   RwLock::read_contended(l)          after: acquire   clock(l + off)
 *   RwLock::write_contended(l)         after: acquire   clock(l + off)
 *   Condvar::wait(c, m), wait_timeout  before: release (join) clock(m + off),
 *                                      after: acquire  clock(m + off)
 *   ScopeData::decrement_num_running_threads(d)
 *                                      before: release (join) clock(d + off)
 *   Barrier::wait(b)                   all-to-all, per phase (below)
 *   Once::call(o, ignore_poison, f)    f wrapped: after f returns, release
 *                                      (join) clock(o + off); after:
 *                                      acquire clock(o + off)
 *   Stdout::lock(s), Stderr::lock(s),  after: acquire clock(l + off), l the
 *   Stdin::lock(s)                     lock returned (the guard's first word)
 *   thread::park()                     after: acquire clock(t + off), t the
 *                                      current thread's `Arc` (its parker)
 *
 * `off` is the displacement of the slow path's first lock-prefixed
 * instruction on a pointer (lard-rustc reads it from the toolchain's
 * libstd); one stub
 * per possible offset, named `_atOFF`.  Weak references: a program whose
 * toolchain has no such function never calls the stub.
 */
#include "rt.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

static void acquire_at(const void *p, uintptr_t off)
{
    lardcc_acquire(lardcc_sync_of((const char *)p + off));
}

static void release_join_at(const void *p, uintptr_t off)
{
    lardcc_release_join(lardcc_sync_of((const char *)p + off));
}

/* The real slow paths (defined by lard-rustc's --defsym to __real_SYM). */
void __lardcc_rust_real_mutex_lock_contended(void *m) __attribute__((weak));
void __lardcc_rust_real_rwlock_read_contended(void *l) __attribute__((weak));
void __lardcc_rust_real_rwlock_write_contended(void *l) __attribute__((weak));
void __lardcc_rust_real_condvar_wait(void *c, void *m) __attribute__((weak));
bool __lardcc_rust_real_condvar_wait_timeout(void *c, void *m, uint64_t secs, uint64_t nanos)
    __attribute__((weak));
void __lardcc_rust_real_scope_decrement(void *d, bool panic) __attribute__((weak));
bool __lardcc_rust_real_barrier_wait(void *b) __attribute__((weak));
void __lardcc_rust_real_once_call(void *o, bool ignore_poison, void *f, const uintptr_t *vtable)
    __attribute__((weak));
void *__lardcc_rust_real_stdout_lock(const void *s) __attribute__((weak));
void *__lardcc_rust_real_stderr_lock(const void *s) __attribute__((weak));

/* A `MutexGuard` as returned in registers: the mutex (rax) and the poison
 * flag (dl, passed on untouched). */
struct mutex_guard {
    void *lock;
    uintptr_t poison;
};
struct mutex_guard __lardcc_rust_real_stdin_lock(const void *s) __attribute__((weak));
void __lardcc_rust_real_park(void) __attribute__((weak));
void *__lardcc_rust_real_thread_current(void) __attribute__((weak));

/* `thread::park` (precompiled) returns once it has consumed the token an
 * `unpark` left: the unpark's swap of the parker's state (Release) is
 * inlined into the program and reaches atomic.c, the park's Acquire does
 * not.  The state lies at `off` in the `Arc` of the current thread, which
 * the stub gets from `thread::current()` (precompiled, taking a
 * reference) and whose reference it gives back (the thread's own handle
 * keeps the count above zero). */
#define PARK_STUB(OFF)                                                \
    void __lardcc_rust_park_at##OFF(void)                             \
    {                                                                 \
        long *t;                                                      \
        __lardcc_rust_real_park();                                    \
        t = __lardcc_rust_real_thread_current();                      \
        acquire_at(t, OFF);                                           \
        __atomic_fetch_sub(t, 1, __ATOMIC_RELEASE);                   \
    }
PARK_STUB(24)
PARK_STUB(32)
PARK_STUB(40)
PARK_STUB(48)

/* The standard streams' locks are taken inside the precompiled
 * `Stdout::lock` (`Stderr`: a `ReentrantLock`) and `Stdin::lock` (a
 * `Mutex`), and released by the guard's drop, which the program's crates
 * instantiate: its unlock swap (Release) reaches atomic.c.  Each lock
 * function returns the lock it took (lard-rustc links the stub only when
 * the function moves the lock's base register into rax): the stub
 * acquires the clock of the lock word after it. */

/* Once::call runs the initializer `f` (a `&mut dyn FnMut(&OnceState)`:
 * data and vtable) itself, then stores COMPLETE (Release) into the state
 * word.  The stub passes a closure of its own whose call_mut calls `f` and
 * then releases into the word's clock: nothing of the program runs between
 * that and the real store.  Every thread that returns from Once::call has
 * read COMPLETE (Acquire) or ran `f`: the stub acquires the clock after.
 * A `dyn FnMut` vtable is drop, size, align, call_once, call_mut;
 * lard-rustc links the stub only when libstd calls `f` through slot 4
 * (`call *0x20(%reg)`). */
struct once_closure {
    void *data;
    const uintptr_t *vtable;
    const void *word;
};

static void once_call_mut(struct once_closure *c, const void *state)
{
    ((void (*)(void *, const void *))c->vtable[4])(c->data, state);
    lardcc_release_join(lardcc_sync_of(c->word));
}

#define STUBS(OFF)                                                                    \
    void __lardcc_rust_mutex_lock_contended_at##OFF(void *m)                          \
    {                                                                                 \
        __lardcc_rust_real_mutex_lock_contended(m);                                   \
        acquire_at(m, OFF);                                                           \
    }                                                                                 \
    void __lardcc_rust_rwlock_read_contended_at##OFF(void *l)                         \
    {                                                                                 \
        __lardcc_rust_real_rwlock_read_contended(l);                                  \
        acquire_at(l, OFF);                                                           \
    }                                                                                 \
    void __lardcc_rust_rwlock_write_contended_at##OFF(void *l)                        \
    {                                                                                 \
        __lardcc_rust_real_rwlock_write_contended(l);                                 \
        acquire_at(l, OFF);                                                           \
    }                                                                                 \
    void __lardcc_rust_condvar_wait_at##OFF(void *c, void *m)                         \
    {                                                                                 \
        release_join_at(m, OFF);                                                      \
        __lardcc_rust_real_condvar_wait(c, m);                                        \
        acquire_at(m, OFF);                                                           \
    }                                                                                 \
    bool __lardcc_rust_condvar_wait_timeout_at##OFF(void *c, void *m, uint64_t secs,  \
                                                    uint64_t nanos)                   \
    {                                                                                 \
        bool r;                                                                       \
        release_join_at(m, OFF);                                                      \
        r = __lardcc_rust_real_condvar_wait_timeout(c, m, secs, nanos);               \
        acquire_at(m, OFF);                                                           \
        return r;                                                                     \
    }                                                                                 \
    void __lardcc_rust_scope_decrement_at##OFF(void *d, bool panic)                   \
    {                                                                                 \
        release_join_at(d, OFF);                                                      \
        __lardcc_rust_real_scope_decrement(d, panic);                                 \
    }                                                                                 \
    void __lardcc_rust_once_call_at##OFF(void *o, bool ignore_poison, void *f,        \
                                         const uintptr_t *vtable)                     \
    {                                                                                 \
        struct once_closure c = {f, vtable, (const char *)o + OFF};                   \
        const uintptr_t vt[5] = {0, sizeof c, _Alignof(struct once_closure),          \
                                 (uintptr_t)once_call_mut, (uintptr_t)once_call_mut}; \
        __lardcc_rust_real_once_call(o, ignore_poison, &c, vt);                       \
        acquire_at(o, OFF);                                                           \
    }                                                                                 \
    void *__lardcc_rust_stdout_lock_at##OFF(const void *s)                            \
    {                                                                                 \
        void *l = __lardcc_rust_real_stdout_lock(s);                                  \
        acquire_at(l, OFF);                                                           \
        return l;                                                                     \
    }                                                                                 \
    void *__lardcc_rust_stderr_lock_at##OFF(const void *s)                            \
    {                                                                                 \
        void *l = __lardcc_rust_real_stderr_lock(s);                                  \
        acquire_at(l, OFF);                                                           \
        return l;                                                                     \
    }                                                                                 \
    struct mutex_guard __lardcc_rust_stdin_lock_at##OFF(const void *s)                \
    {                                                                                 \
        struct mutex_guard g = __lardcc_rust_real_stdin_lock(s);                      \
        acquire_at(g.lock, OFF);                                                      \
        return g;                                                                     \
    }

STUBS(0)
STUBS(4)
STUBS(8)
STUBS(16)

/* Barrier::wait, precompiled as a whole (its mutex and condvar calls stay
 * inside libstd): every waiter's accesses before a phase's wait happen
 * before every waiter's accesses after it.  A waiter joins its clock into
 * the accumulator of the current phase's parity before the real wait and
 * acquires it after.  No waiter count is needed: the first waiter of a
 * phase to return starts the next phase (every waiter of this phase has
 * then arrived, and none of the next can arrive before some waiter of
 * this one returned) and clears the other accumulator (every waiter of
 * the phase before has returned: each arrived here after it). */
bool __lardcc_rust_barrier_wait(void *b)
{
    struct lardcc_sync *s = lardcc_sync_of(b);
    struct lardcc_barrier *lb;
    uint32_t slot;
    bool leader;
    lard__lock(&s->lock);
    if (s->ext == NULL)
        LARDCC_RUNTIME(s->ext = calloc(1, sizeof(struct lardcc_barrier)));
    lb = s->ext;
    lard__unlock(&s->lock);
    if (lb == NULL)
        return __lardcc_rust_real_barrier_wait(b);
    lard__lock(&lb->lock);
    slot = lb->gen & 1;
    lardcc_dvc_join(&lb->acc[slot], lardcc_my_clock());
    lardcc_tick();
    lard__unlock(&lb->lock);
    leader = __lardcc_rust_real_barrier_wait(b);
    lard__lock(&lb->lock);
    if (slot == (lb->gen & 1)) {
        lb->gen++;
        lardcc_dvc_clear(&lb->acc[slot ^ 1]);
    }
    lardcc_acquire_dvc(&lb->acc[slot]);
    lard__unlock(&lb->lock);
    return leader;
}
