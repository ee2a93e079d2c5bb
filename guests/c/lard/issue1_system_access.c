/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * LARD §3.1 -- program vs system accesses (Rule 1).  Expected: race-free.
 *
 * A "concurrent collector" (a raw pthread: runtime code, no language
 * identity) scans a program object with plain, untracked reads and bumps its
 * own statistics, and the program threads' runtime bookkeeping also races on
 * untracked statistics.  Nothing orders the collector's read of o.x before
 * the program's later write of o.x except a plain flag, so a detector that
 * checked every access would report races (LARD Figure 1, A/B).  The
 * program's own accesses (Tracked) are all ordered by lard_mutex and
 * fork/join, so under LARD there is no race.
 */
#include <lard.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

struct obj {
    uint64_t x;
};

static struct obj o;                        /* program data (Tracked) */
static lard_mutex_t m = LARD_MUTEX_INIT;    /* program lock */

static uint64_t sys_scanned;                /* system data (untracked) */
static uint64_t sys_ops;                    /* system data (untracked) */
static int sys_scan_done;                   /* system flag (untracked) */

/* System statistics: untracked, unsynchronized read-modify-write. */
static void sys_count(uint64_t *counter)
{
    __atomic_store_n(counter, __atomic_load_n(counter, __ATOMIC_RELAXED) + 1,
                     __ATOMIC_RELAXED);
}

static void *collector(void *arg)
{
    (void)arg;
    /* Untracked read of program data, racing at the ISA level. */
    uint64_t seen = __atomic_load_n(&o.x, __ATOMIC_RELAXED);
    __atomic_store_n(&sys_scanned, seen + 1, __ATOMIC_RELAXED);
    __atomic_store_n(&sys_scan_done, 1, __ATOMIC_RELAXED);
    return NULL;
}

static void *worker(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&sys_scan_done, __ATOMIC_RELAXED))
        sched_yield();
    for (int i = 0; i < 100; i++) {
        sys_count(&sys_ops);
        lard_mutex_lock(&m);
        lard_store64(&o.x, lard_load64(&o.x) + 1);
        lard_mutex_unlock(&m);
    }
    return NULL;
}

int main(void)
{
    pthread_t gc;
    lard_thread_t t[2];
    for (int i = 0; i < 2; i++)
        lard_spawn(&t[i], worker, NULL);
    pthread_create(&gc, NULL, collector, NULL);
    pthread_join(gc, NULL);
    for (int i = 0; i < 2; i++)
        lard_join(t[i], NULL);
    printf("x = %llu\n", (unsigned long long)lard_load64(&o.x));
    return 0;
}
