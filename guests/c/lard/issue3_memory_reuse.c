/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * LARD §3.3 -- memory reuse (Rule 3).  Expected: race-free.
 *
 * One thread allocates a record, writes it and frees it; then (after a
 * runtime-internal, unreported handoff) another thread allocates a record of
 * the same size -- liblard's shared LIFO free lists hand it the same memory --
 * and writes it.  The two records are distinct program objects, so the two
 * writes cannot race, although they hit the same address with no program
 * synchronization between them (LARD Figure 1, E/F).  lard_free clears the
 * block's access histories, so under LARD there is no race.
 */
#include <lard.h>
#include <sched.h>
#include <stdio.h>

struct rec {
    uint64_t x;
    uint64_t y;
};

static uintptr_t old_addr;                  /* system data (untracked) */
static int handoff;                         /* system flag (untracked) */
static uint64_t result;
static int reused;

static void *old_owner(void *arg)
{
    (void)arg;
    struct rec *r = lard_malloc(sizeof *r);
    lard_store64(&r->x, 1);
    lard_store64(&r->y, lard_load64(&r->x) + 1);
    __atomic_store_n(&old_addr, (uintptr_t)r, __ATOMIC_RELAXED);
    lard_free(r);
    __atomic_store_n(&handoff, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void *new_owner(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&handoff, __ATOMIC_ACQUIRE))
        sched_yield();
    struct rec *r = lard_malloc(sizeof *r);
    reused = (uintptr_t)r == __atomic_load_n(&old_addr, __ATOMIC_RELAXED);
    lard_store64(&r->x, 10);
    lard_store64(&r->y, lard_load64(&r->x) + 10);
    result = lard_load64(&r->y);
    lard_free(r);
    return NULL;
}

int main(void)
{
    lard_thread_t a, b;
    lard_spawn(&a, old_owner, NULL);
    lard_spawn(&b, new_owner, NULL);
    lard_join(a, NULL);
    lard_join(b, NULL);
    printf("reused = %s\ny = %llu\n", reused ? "yes" : "no",
           (unsigned long long)result);
    return 0;
}
