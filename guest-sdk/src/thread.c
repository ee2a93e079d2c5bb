/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Language threads: their clocks, spawn/join, green threads and migration
 * (their ids and the current one: identity.c). */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

/* From <linux/futex.h>, which musl-gcc's sysroot does not have. */
#define LARD__FUTEX_WAIT_PRIVATE 128
#define LARD__FUTEX_WAKE_PRIVATE 129

struct lard__lthread lard__threads[LARD_MAX_THREADS];

void lard__fatal(const char *msg)
{
    static const char pre[] = "liblard: fatal: ";
    (void)!write(2, pre, sizeof pre - 1);
    (void)!write(2, msg, strlen(msg));
    (void)!write(2, "\n", 1);
    abort();
}

void lard__futex_wait(uint32_t *addr, uint32_t val)
{
    syscall(SYS_futex, addr, LARD__FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

void lard__futex_wake(uint32_t *addr, int n)
{
    syscall(SYS_futex, addr, LARD__FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

/* Drepper's three-state futex mutex: 0 free, 1 locked, 2 contended.
 * A contended unlock also yields.  Under lard the guest's threads take
 * turns: a waiter only ever finds the lock held when its holder was
 * preempted inside the critical section, and a holder that goes on after
 * waking it takes the lock again before the waiter runs — with a fixed
 * quantum, forever (threads spinning on one atomic location starve the one
 * whose store they wait for).  The yield hands the free lock to the
 * waiters, as a uniprocessor kernel's wakeup preemption does. */
void lard__lock(uint32_t *l)
{
    uint32_t c = 0;
    if (__atomic_compare_exchange_n(l, &c, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
        return;
    if (c != 2)
        c = __atomic_exchange_n(l, 2, __ATOMIC_ACQUIRE);
    while (c != 0) {
        lard__futex_wait(l, 2);
        c = __atomic_exchange_n(l, 2, __ATOMIC_ACQUIRE);
    }
}

void lard__unlock(uint32_t *l)
{
    if (__atomic_exchange_n(l, 0, __ATOMIC_RELEASE) == 2) {
        lard__futex_wake(l, 1);
        sched_yield();
    }
}

uint32_t lard__new_id(void)
{
    uint32_t id = lard__id_fresh();
    if (id >= LARD_MAX_THREADS)
        lard__fatal("too many language threads (LARD_MAX_THREADS)");
    return id;
}

/* An adopted language thread's clock is the detector's fresh clock (own
 * entry 1, others 0). */
void lard__fresh_clock(uint32_t id)
{
    if (id >= LARD_MAX_THREADS)
        return;
    memset(lard__threads[id].vc, 0, sizeof lard__threads[id].vc);
    lard__threads[id].vc[id] = 1;
}

struct lard__lthread *lard__me(uint32_t *id)
{
    uint32_t me = lard__current();
    if (me >= LARD_MAX_THREADS)
        lard__fatal("the current language thread's id is past LARD_MAX_THREADS "
                    "(another runtime's thread)");
    if (id)
        *id = me;
    return &lard__threads[me];
}

uint32_t lard_self(void)
{
    return lard__current();
}

void lard__join_into(uint64_t *to, const uint64_t *from)
{
    uint32_t n = lard__nids(), i;
    for (i = 0; i < n && i < LARD_MAX_THREADS; i++)
        if (from[i] > to[i])
            to[i] = from[i];
}

void lard__acquire(uint32_t me, const uint64_t *from)
{
    uint64_t *vc = lard__threads[me].vc;
    uint32_t n = lard__nids(), i;
    for (i = 0; i < n && i < LARD_MAX_THREADS; i++)
        if (from[i] > vc[i]) {
            vc[i] = from[i];
            lard_write_vc(i, vc[i]);
        }
}

void lard__tick(uint32_t me)
{
    uint64_t *vc = lard__threads[me].vc;
    vc[me] += 1;
    lard_write_vc(me, vc[me]);
}

/* A new language thread whose clock starts from the creator's (fork edge):
 * child := creator's clock with child[child] = creator's knowledge of it + 1
 * (that is 1: ids are never reused); then the creator ticks its own entry. */
static uint32_t fork_child(void)
{
    uint32_t me, id = lard__new_id();
    struct lard__lthread *p = lard__me(&me);
    lard__fork_from(id, p->vc);
    lard__tick(me);
    return id;
}

/* The clock of a language thread `id` created from clock `from`:
 * child := from with child[id] += 1.  `id` may be a fresh id, or one whose
 * previous holder's final clock is <= from (lard-cc reuses such ids). */
void lard__fork_from(uint32_t id, const uint64_t *from)
{
    struct lard__lthread *c = &lard__threads[id];
    if (c->vc != from)
        memcpy(c->vc, from, sizeof c->vc);
    c->vc[id] += 1;
}

/* Install thread `id`'s software clock in the detector: every nonzero entry
 * (a fresh identity's other entries are 0) and the own entry always. */
static void install(uint32_t id)
{
    const uint64_t *vc = lard__threads[id].vc;
    uint32_t n = lard__nids(), i;
    for (i = 0; i < n && i < LARD_MAX_THREADS; i++)
        if (vc[i] != 0 || i == id)
            lard_write_vc(i, vc[i]);
}

static void *trampoline(void *arg)
{
    uint32_t id = (uint32_t)(uintptr_t)arg;
    struct lard__lthread *t = &lard__threads[id];
    lard__run(id);
    install(id);
    t->ret = t->fn(t->arg);
    lard_note_thread_exit();
    return t->ret;
}

int lard_spawn(lard_thread_t *t, void *(*fn)(void *), void *arg)
{
    uint32_t id = fork_child();
    struct lard__lthread *c = &lard__threads[id];
    pthread_t pt;
    int err;
    c->fn = fn;
    c->arg = arg;
    c->spawned = 1;
    err = pthread_create(&pt, NULL, trampoline, (void *)(uintptr_t)id);
    if (err != 0)
        return err;
    c->pthread = (unsigned long)pt;
    t->id = id;
    return 0;
}

int lard_join(lard_thread_t t, void **ret)
{
    uint32_t me;
    struct lard__lthread *c;
    void *r;
    int err;
    if (t.id >= LARD_MAX_THREADS || !lard__threads[t.id].spawned)
        return EINVAL;
    c = &lard__threads[t.id];
    err = pthread_join((pthread_t)c->pthread, &r);
    if (err != 0)
        return err;
    lard__me(&me);
    lard__acquire(me, c->vc);
    if (ret)
        *ret = r;
    return 0;
}

uint32_t lard_lang_new(void)
{
    return fork_child();
}

/* Run language thread `id` on this kernel thread from now on.  The switch
 * itself is an unreported context switch (no happens-before edge).  The
 * detector keeps each identity's clock, so reinstalling the software clock is
 * needed only on the first run of a thread made by lard_lang_new; doing it on
 * every switch is harmless (it rewrites equal values). */
void lard_lang_switch(uint32_t id)
{
    if (id >= lard__nids() || id >= LARD_MAX_THREADS)
        lard__fatal("lard_lang_switch: unknown language thread");
    lard__run(id);
    install(id);
}
