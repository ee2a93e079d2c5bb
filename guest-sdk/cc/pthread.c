/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * lard-cc runtime: POSIX threads, their synchronization, and heap memory.
 *
 * lard-cc links the program with `-Wl,--wrap=SYM` for each function here
 * (lardcc-pthread.wrap, generated from the archive), so the program's (and libstdc++'s and
 * libgomp's) calls reach __wrap_SYM, which calls the real function as
 * __real_SYM and reports the edge.  A dynamic link uses these objects
 * renamed (__wrap_SYM -> SYM, interposed; __real_SYM -> the shared
 * libraries' SYM, interpose.c).  glibc's internal synchronization uses
 * internal names and is never seen: it is system code.
 * The happens-before table is in docs/lard-cc.md.
 */
#define _GNU_SOURCE
#include "rt.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ threads */

struct start {
    void *(*fn)(void *);
    void *arg;
    uint32_t id;
};

static __thread int thread_ended;
/* This thread ends in thread_end_at_exit (below). */
static __thread int end_at_exit;

/* The end of a pthread's language thread: its final clock is released to
 * joiners (sync object keyed by its pthread_t), its stack's histories are
 * forgotten (glibc reuses thread stacks), its id may be reused.  A thread
 * that liblard switched to a language thread of its own (lard_spawn's
 * trampoline runs inside this one) ends the runtime's. */
__attribute__((noinline)) static void thread_end(void)
{
    uint32_t me;
    uint64_t final;
    pthread_attr_t at;
    void *stack;
    size_t size;
    if (thread_ended)
        return;
    thread_ended = 1;
    me = lardcc_me_reclaim();
    lard_note_thread_exit();
    final = lardcc_own(me);
    lardcc_release(lardcc_sync_of((const void *)pthread_self()));
    if (pthread_getattr_np(pthread_self(), &at) == 0) {
        if (pthread_attr_getstack(&at, &stack, &size) == 0) {
            /* Everything below the caller's stack pointer is dead (the
             * thread function's frames were there); the frames above are
             * runtime frames with no Tracked accesses. */
            uintptr_t here = (uintptr_t)__builtin_frame_address(0) + 16;
            if ((uintptr_t)stack < here)
                lard_clear_history(stack, here - (uintptr_t)stack);
        }
        pthread_attr_destroy(&at);
    }
    lardcc_id_retire(me, final);
}

/* glibc runs the destructors of thread-local values (C++ `thread_local`,
 * Rust's `thread_local!`, both registered here) after the thread function
 * returned or called pthread_exit, last registered first.  The runtime
 * registers its own first, so the thread ends after every other one: what
 * they do happens before the join too. */
int __cxa_thread_atexit_impl(void (*)(void *), void *, void *) __attribute__((weak));
extern void *__dso_handle;

/* exit() in a static program deregisters the unwinder's frame tables
 * (crtbeginT's destructor), and a thread that unwinds after that aborts the
 * process. libgomp's pool threads end by pthread_exit when a team's pool is
 * freed, which may be while the main thread exits. So a thread in
 * pthread_exit counts itself in `unwinding` until its unwinding is done (a
 * thread-specific value's destructor, which runs after it), and exit first
 * sets `exiting` and waits (a bounded while) for the count to drop: a
 * thread that then sees `exiting` does not unwind but waits for the process
 * to end (both sides sequentially consistent: either the thread sees
 * `exiting` or exit sees the thread counted). */
static int unwinding, exiting, waits_at_exit, unwind_key_made;
static pthread_key_t unwind_key;

static void unwound(void *unused)
{
    (void)unused;
    __atomic_fetch_sub(&unwinding, 1, __ATOMIC_SEQ_CST);
}

static void wait_unwinding(void)
{
    __atomic_store_n(&exiting, 1, __ATOMIC_SEQ_CST);
    for (int i = 0; i < 100000 && __atomic_load_n(&unwinding, __ATOMIC_SEQ_CST) > 0; i++)
        sched_yield();
}

/* Before the process's first thread: exit waits for unwinding threads. */
static void wait_unwinding_at_exit(void)
{
    if (__atomic_exchange_n(&waits_at_exit, 1, __ATOMIC_ACQ_REL))
        return;
    if (pthread_key_create(&unwind_key, unwound) == 0) {
        __atomic_store_n(&unwind_key_made, 1, __ATOMIC_RELEASE);
        atexit(wait_unwinding);
    }
}

static void thread_end_at_exit(void *unused)
{
    (void)unused;
    thread_end();
}

static void *trampoline(void *arg)
{
    struct start st = *(struct start *)arg;
    void *r;
    free(arg);
    lardcc_switch(st.id);
    lardcc_stack_detach();
    if (__cxa_thread_atexit_impl == NULL ||
        __cxa_thread_atexit_impl(thread_end_at_exit, NULL, &__dso_handle) != 0) {
        r = st.fn(st.arg);
        thread_end();
        return r;
    }
    end_at_exit = 1;
    return st.fn(st.arg);
}

int __real_pthread_create(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
/* Fork: everything the creator did before happens before the thread. */
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *),
                          void *arg)
{
    struct start *st;
    int err;
    LARDCC_RUNTIME(st = malloc(sizeof *st));
    if (st == NULL)
        return EAGAIN;
    wait_unwinding_at_exit();
    st->fn = fn;
    st->arg = arg;
    st->id = lardcc_id_alloc(lardcc_my_clock());
    lardcc_tick();
    err = __real_pthread_create(t, attr, trampoline, st);
    if (err != 0) {
        lardcc_id_retire(st->id, lardcc_own(st->id));
        free(st);
    }
    return err;
}

static void joined(pthread_t t)
{
    struct lardcc_sync *s = lardcc_sync_of((const void *)t);
    lardcc_acquire(s);
    lardcc_sync_reset((const void *)t); /* pthread_t values are reused */
}

int __real_pthread_join(pthread_t, void **);
int __wrap_pthread_join(pthread_t t, void **ret)
{
    int err = __real_pthread_join(t, ret);
    if (err == 0)
        joined(t);
    return err;
}

int __real_pthread_tryjoin_np(pthread_t, void **);
int __wrap_pthread_tryjoin_np(pthread_t t, void **ret)
{
    int err = __real_pthread_tryjoin_np(t, ret);
    if (err == 0)
        joined(t);
    return err;
}

int __real_pthread_timedjoin_np(pthread_t, void **, const struct timespec *);
int __wrap_pthread_timedjoin_np(pthread_t t, void **ret, const struct timespec *ts)
{
    int err = __real_pthread_timedjoin_np(t, ret, ts);
    if (err == 0)
        joined(t);
    return err;
}

void __real_pthread_exit(void *) __attribute__((noreturn));
void __wrap_pthread_exit(void *r)
{
    /* A thread the runtime started ends in thread_end_at_exit, after the
     * destructors pthread_exit runs; any other (the main thread) here. */
    if (!end_at_exit)
        thread_end();
    if (__atomic_load_n(&unwind_key_made, __ATOMIC_ACQUIRE) &&
        pthread_getspecific(unwind_key) == NULL) {
        __atomic_fetch_add(&unwinding, 1, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&exiting, __ATOMIC_SEQ_CST)) {
            __atomic_fetch_sub(&unwinding, 1, __ATOMIC_SEQ_CST);
            for (;;)
                pause();
        }
        pthread_setspecific(unwind_key, &unwinding);
    }
    __real_pthread_exit(r);
}

/* ------------------------------------------------------------------ mutexes */

#define LOCKLIKE(ret_t, name, params, args, obj, ok, edge)                       \
    ret_t __real_##name params;                                                  \
    ret_t __wrap_##name params                                                   \
    {                                                                            \
        ret_t r = __real_##name args;                                            \
        if (ok)                                                                  \
            edge(lardcc_sync_of(obj));                                           \
        return r;                                                                \
    }
/* Lock identities for the object race detector (docs/events.md). */
static void lock_acquire(struct lardcc_sync *s)
{
    lard_note_acquire(s->addr, 0);
    lardcc_acquire(s);
}

static void lock_acquire_all(struct lardcc_sync *s)
{
    lard_note_acquire(s->addr, 0);
    lardcc_acquire_all(s);
}

static void lock_release(struct lardcc_sync *s)
{
    lard_note_release(s->addr);
    lardcc_release(s);
}

#define UNLOCKLIKE(ret_t, name, params, args, obj, edge)                         \
    ret_t __real_##name params;                                                  \
    ret_t __wrap_##name params                                                   \
    {                                                                            \
        edge(lardcc_sync_of(obj));                                               \
        return __real_##name args;                                               \
    }

int __real_pthread_mutex_init(pthread_mutex_t *, const pthread_mutexattr_t *);
int __wrap_pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a)
{
    lardcc_sync_reset(m);
    return __real_pthread_mutex_init(m, a);
}

LOCKLIKE(int, pthread_mutex_lock, (pthread_mutex_t * m), (m), m, r == 0, lock_acquire)
LOCKLIKE(int, pthread_mutex_trylock, (pthread_mutex_t * m), (m), m, r == 0, lock_acquire)
LOCKLIKE(int, pthread_mutex_timedlock, (pthread_mutex_t * m, const struct timespec *t), (m, t),
         m, r == 0, lock_acquire)
LOCKLIKE(int, pthread_mutex_clocklock,
         (pthread_mutex_t * m, clockid_t c, const struct timespec *t), (m, c, t), m, r == 0,
         lock_acquire)
UNLOCKLIKE(int, pthread_mutex_unlock, (pthread_mutex_t * m), (m), m, lock_release)

LOCKLIKE(int, pthread_spin_lock, (pthread_spinlock_t * m), (m), (const void *)m, r == 0,
         lock_acquire)
LOCKLIKE(int, pthread_spin_trylock, (pthread_spinlock_t * m), (m), (const void *)m, r == 0,
         lock_acquire)
UNLOCKLIKE(int, pthread_spin_unlock, (pthread_spinlock_t * m), (m), (const void *)m,
           lock_release)

/* Readers acquire the writers' releases; writers acquire writers' and
 * readers' releases.  Two readers are never ordered by the lock. */
int __real_pthread_rwlock_init(pthread_rwlock_t *, const pthread_rwlockattr_t *);
int __wrap_pthread_rwlock_init(pthread_rwlock_t *l, const pthread_rwlockattr_t *a)
{
    lardcc_sync_reset(l);
    return __real_pthread_rwlock_init(l, a);
}
LOCKLIKE(int, pthread_rwlock_wrlock, (pthread_rwlock_t * l), (l), l, r == 0, lock_acquire_all)
LOCKLIKE(int, pthread_rwlock_trywrlock, (pthread_rwlock_t * l), (l), l, r == 0,
         lock_acquire_all)
LOCKLIKE(int, pthread_rwlock_timedwrlock, (pthread_rwlock_t * l, const struct timespec *t),
         (l, t), l, r == 0, lock_acquire_all)

/* Which rwlocks this kernel thread holds for reading (unlock must know
 * whether it releases a read or a write hold). */
#define MAX_RD 16
static __thread const void *rd_held[MAX_RD];
static __thread unsigned rd_n;

static void rd_push(const void *l)
{
    if (rd_n < MAX_RD)
        rd_held[rd_n++] = l;
}

static int rd_pop(const void *l)
{
    unsigned i;
    for (i = rd_n; i-- > 0;)
        if (rd_held[i] == l) {
            rd_held[i] = rd_held[--rd_n];
            return 1;
        }
    return 0;
}

int __real_pthread_rwlock_unlock(pthread_rwlock_t *);
int __wrap_pthread_rwlock_unlock(pthread_rwlock_t *l)
{
    struct lardcc_sync *s = lardcc_sync_of(l);
    lard_note_release(l);
    if (rd_pop(l))
        lardcc_release_read(s);
    else
        lardcc_release(s);
    return __real_pthread_rwlock_unlock(l);
}

#define RDLOCK(name, params, args)                                               \
    int __real_##name params;                                                    \
    int __wrap_##name params                                                     \
    {                                                                            \
        int r = __real_##name args;                                              \
        if (r == 0) {                                                            \
            rd_push(l);                                                          \
            lard_note_acquire(l, 1);                                             \
            lardcc_acquire(lardcc_sync_of(l));                                   \
        }                                                                        \
        return r;                                                                \
    }
RDLOCK(pthread_rwlock_rdlock, (pthread_rwlock_t * l), (l))
RDLOCK(pthread_rwlock_tryrdlock, (pthread_rwlock_t * l), (l))
RDLOCK(pthread_rwlock_timedrdlock, (pthread_rwlock_t * l, const struct timespec *t), (l, t))

/* --------------------------------------------------- condition variables */

/* A wait releases the mutex and re-acquires it: the edges are the mutex's
 * (as in ThreadSanitizer); signal/broadcast add none. */
int __real_pthread_cond_wait(pthread_cond_t *, pthread_mutex_t *);
int __wrap_pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
    struct lardcc_sync *s = lardcc_sync_of(m);
    int r;
    lock_release(s);
    r = __real_pthread_cond_wait(c, m);
    lock_acquire(s);
    return r;
}

int __real_pthread_cond_timedwait(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
int __wrap_pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
                                  const struct timespec *t)
{
    struct lardcc_sync *s = lardcc_sync_of(m);
    int r;
    lock_release(s);
    r = __real_pthread_cond_timedwait(c, m, t);
    lock_acquire(s);
    return r;
}

int __real_pthread_cond_clockwait(pthread_cond_t *, pthread_mutex_t *, clockid_t,
                                  const struct timespec *);
int __wrap_pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t k,
                                  const struct timespec *t)
{
    struct lardcc_sync *s = lardcc_sync_of(m);
    int r;
    lock_release(s);
    r = __real_pthread_cond_clockwait(c, m, k, t);
    lock_acquire(s);
    return r;
}

/* ---------------------------------------------------------------- barriers */

struct pbarrier {
    struct lardcc_barrier b;
};

int __real_pthread_barrier_init(pthread_barrier_t *, const pthread_barrierattr_t *, unsigned);
int __wrap_pthread_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *a,
                                unsigned n)
{
    int r = __real_pthread_barrier_init(b, a, n);
    if (r == 0) {
        struct lardcc_sync *s = lardcc_sync_of(b);
        struct lardcc_barrier *lb = s->ext;
        if (lb == NULL)
            LARDCC_RUNTIME(lb = calloc(1, sizeof *lb));
        else
            memset(lb, 0, sizeof *lb);
        if (lb != NULL)
            lb->n = n;
        s->ext = lb;
    }
    return r;
}

int __real_pthread_barrier_wait(pthread_barrier_t *);
/* All-to-all: every waiter's accesses before a phase's wait happen before
 * every waiter's accesses after it. */
int __wrap_pthread_barrier_wait(pthread_barrier_t *b)
{
    struct lardcc_barrier *lb = lardcc_sync_of(b)->ext;
    int slot, r;
    if (lb == NULL)
        return __real_pthread_barrier_wait(b);
    slot = lardcc_barrier_arrive(lb, lb->n);
    r = __real_pthread_barrier_wait(b);
    lardcc_barrier_depart(lb, slot);
    return r;
}

/* -------------------------------------------------------------- semaphores */

/* Every post happens before every wait that returns after it (posts join). */
UNLOCKLIKE(int, sem_post, (sem_t * s), (s), s, lardcc_release_join)
LOCKLIKE(int, sem_wait, (sem_t * s), (s), s, r == 0, lardcc_acquire)
LOCKLIKE(int, sem_trywait, (sem_t * s), (s), s, r == 0, lardcc_acquire)
LOCKLIKE(int, sem_timedwait, (sem_t * s, const struct timespec *t), (s, t), s, r == 0,
         lardcc_acquire)
LOCKLIKE(int, sem_clockwait, (sem_t * s, clockid_t c, const struct timespec *t), (s, c, t), s,
         r == 0, lardcc_acquire)

int __real_sem_init(sem_t *, int, unsigned);
int __wrap_sem_init(sem_t *s, int shared, unsigned v)
{
    lardcc_sync_reset(s);
    return __real_sem_init(s, shared, v);
}

/* -------------------------------------------------------------------- once */

/* The init routine happens before every pthread_once call returns. */
static __thread void (*once_fn)(void);
static __thread pthread_once_t *once_obj;

static void once_trampoline(void)
{
    void (*fn)(void) = once_fn;
    pthread_once_t *o = once_obj;
    uint32_t stack = lardcc_stack_detach();
    fn();
    lardcc_stack_attach(stack);
    lardcc_release(lardcc_sync_of(o));
}

int __real_pthread_once(pthread_once_t *, void (*)(void));
int __wrap_pthread_once(pthread_once_t *o, void (*fn)(void))
{
    void (*saved_fn)(void) = once_fn;
    pthread_once_t *saved_obj = once_obj;
    int r;
    once_fn = fn;
    once_obj = o;
    r = __real_pthread_once(o, once_trampoline);
    once_fn = saved_fn;
    once_obj = saved_obj;
    if (r == 0)
        lardcc_acquire(lardcc_sync_of(o));
    return r;
}

/* ------------------------------------------------------------ heap memory */

/* free/realloc: the block's histories are cleared before the block can be
 * handed out again (Rule 3), so its next occupant races with nothing of the
 * old one's.  No happens-before edge. */
void *__real_malloc(size_t);
void *__real_calloc(size_t, size_t);
void *__real_realloc(void *, size_t);
void __real_free(void *);

/* Object extents for the object race detector (docs/events.md): the
 * allocation site is the code that called malloc (or operator new). */
static void noted_alloc(void *p, size_t n, void *site)
{
    lard_note_alloc(p, n, site);
    if (lardcc_omp_heap != NULL && !lardcc_in_runtime)
        lardcc_omp_heap(p, 1);
}

void *__wrap_malloc(size_t n)
{
    void *p = __real_malloc(n);
    if (p != NULL)
        noted_alloc(p, n, __builtin_return_address(0));
    return p;
}

void *__wrap_calloc(size_t k, size_t n)
{
    void *p = __real_calloc(k, n);
    if (p != NULL)
        noted_alloc(p, k * n, __builtin_return_address(0));
    return p;
}

void __wrap_free(void *p)
{
    size_t n;
    if (p == NULL)
        return;
    if (lardcc_omp_heap != NULL && !lardcc_in_runtime)
        lardcc_omp_heap(p, 0);
    n = malloc_usable_size(p);
    lard_note_free(p);
    lard_clear_history(p, n);
    /* The mutexes and atomics the block held: the next object there is a
     * new one, with no clock (as ThreadSanitizer forgets them). */
    lardcc_sync_forget_range(p, n);
    __real_free(p);
}

void *__wrap_realloc(void *p, size_t n)
{
    size_t old;
    void *q;
    if (p == NULL) {
        q = __real_malloc(n);
        if (q != NULL)
            noted_alloc(q, n, __builtin_return_address(0));
        return q;
    }
    if (n == 0) {
        __wrap_free(p);
        return NULL;
    }
    /* Always a new block: the old one is freed (cleared) like free(). */
    old = malloc_usable_size(p);
    q = __real_malloc(n);
    if (q == NULL)
        return NULL;
    noted_alloc(q, n, __builtin_return_address(0));
    memcpy(q, p, old < n ? old : n);
    __wrap_free(p);
    return q;
}

void *__wrap_reallocarray(void *p, size_t k, size_t n)
{
    if (n != 0 && k > SIZE_MAX / n) {
        errno = ENOMEM;
        return NULL;
    }
    return __wrap_realloc(p, k * n);
}
