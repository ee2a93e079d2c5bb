/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * LARD §3.4 -- memory movement (Rule 4).  Expected: racy.
 *
 * Two program threads increment o->n with no program synchronization: a data
 * race.  Between the two increments a "copying collector" (a raw pthread:
 * runtime code) moves the object with lard_move and redirects the shared
 * reference, coordinated by runtime-internal, unreported flags.  The two
 * increments hit different addresses (LARD Figure 1, G/H); lard_move copies
 * the access histories to the new location, so under LARD the second
 * increment (read and write, on one line) races with the first.
 */
#include <lard.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

struct obj {
    uint64_t n;
    uint64_t pad[3];
};

static struct obj *shared;                  /* the reference (untracked) */
static int phase;                           /* system flag (untracked) */

static void wait_phase(int p)
{
    while (__atomic_load_n(&phase, __ATOMIC_ACQUIRE) < p)
        sched_yield();
}

static void *first(void *arg)
{
    (void)arg;
    struct obj *o = __atomic_load_n(&shared, __ATOMIC_ACQUIRE);
    lard_store64(&o->n, lard_load64(&o->n) + 1);
    __atomic_store_n(&phase, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void *collector(void *arg)
{
    (void)arg;
    wait_phase(1);
    struct obj *from = __atomic_load_n(&shared, __ATOMIC_ACQUIRE);
    struct obj *to = lard_malloc(sizeof *to);
    lard_move(to, from, sizeof *to);
    __atomic_store_n(&shared, to, __ATOMIC_RELEASE);
    lard_free(from);
    __atomic_store_n(&phase, 2, __ATOMIC_RELEASE);
    return NULL;
}

static void *second(void *arg)
{
    (void)arg;
    wait_phase(2);
    struct obj *o = __atomic_load_n(&shared, __ATOMIC_ACQUIRE);
    lard_store64(&o->n, lard_load64(&o->n) + 1); /* RACE */
    return NULL;
}

int main(void)
{
    lard_thread_t a, b;
    pthread_t gc;
    struct obj *o = lard_malloc(sizeof *o);
    lard_store64(&o->n, 0);
    shared = o;
    lard_spawn(&a, first, NULL);
    lard_spawn(&b, second, NULL);
    pthread_create(&gc, NULL, collector, NULL);
    lard_join(a, NULL);
    lard_join(b, NULL);
    pthread_join(gc, NULL);
    printf("moved = %s\nn = %llu\n", shared != o ? "yes" : "no",
           (unsigned long long)lard_load64(&shared->n));
    lard_free(shared);
    return 0;
}
