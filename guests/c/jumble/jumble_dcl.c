/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* JUMBLE Figure 2, double-checked locking: get() returns the singleton
 * point p, creating it under a lock the first time; the first check of p
 * is unsynchronized.  A thread that finds p already set reads p->x and
 * p->y with no happens-before edge from their initialization, so it may
 * see them still 0: slope() divides by x (SIGFPE) or prints 0.
 * Expected: racy (p, p->x, p->y); JUMBLE verdicts: the race on p is benign
 * (a stale NULL only takes the lock, where p is read synchronized), those
 * on p->x and p->y are destructive. */
#include <lard.h>
#include <stdio.h>
#include <stdlib.h>

struct point {
    uint64_t x, y;
};

static uint64_t p;                          /* struct point *, Tracked */
static lard_mutex_t lock = LARD_MUTEX_INIT;

static struct point *get(void)
{
    struct point *t = (struct point *)(uintptr_t)lard_load64(&p); /* RACE */
    if (t != NULL)
        return t;
    lard_mutex_lock(&lock);
    if (lard_load64(&p) == 0) {
        struct point *n = calloc(1, sizeof *n);
        lard_store64(&n->x, 1);
        lard_store64(&n->y, 1);
        lard_store64(&p, (uint64_t)(uintptr_t)n);
    }
    t = (struct point *)(uintptr_t)lard_load64(&p);
    lard_mutex_unlock(&lock);
    return t;
}

static void *slope(void *arg)
{
    uint64_t y = lard_load64(&get()->y); /* RACE */
    uint64_t x = lard_load64(&get()->x); /* RACE */
    *(uint64_t *)arg = y / x;
    return NULL;
}

int main(void)
{
    lard_thread_t a, b;
    uint64_t sa = 0, sb = 0;
    lard_spawn(&a, slope, &sa);
    lard_spawn(&b, slope, &sb);
    lard_join(a, NULL);
    lard_join(b, NULL);
    printf("slopes %llu %llu\n", (unsigned long long)sa, (unsigned long long)sb);
    return 0;
}
