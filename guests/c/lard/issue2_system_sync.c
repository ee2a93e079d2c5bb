/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * LARD §3.2 -- program vs system synchronization (Rule 2).  Expected:
 * racy.
 *
 * Two program threads write x with no program synchronization: a data race.
 * Between the two writes a "stop-the-world collection" makes both threads
 * meet at a runtime-internal pthread barrier.  A detector that observed that
 * barrier would see the writes as ordered and miss the race (LARD Figure 1,
 * C/D); the runtime does not report it, so under LARD the second write races.
 * The barrier fixes the order of the writes, so the output is deterministic.
 */
#include <lard.h>
#include <pthread.h>
#include <stdio.h>

static uint64_t x;                          /* program data (Tracked) */
static pthread_barrier_t stop_the_world;    /* system synchronization */

static void *first(void *arg)
{
    (void)arg;
    lard_store64(&x, 1);
    pthread_barrier_wait(&stop_the_world);
    return NULL;
}

static void *second(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&stop_the_world);
    lard_store64(&x, 2); /* RACE */
    return NULL;
}

int main(void)
{
    lard_thread_t a, b;
    pthread_barrier_init(&stop_the_world, NULL, 2);
    lard_spawn(&a, first, NULL);
    lard_spawn(&b, second, NULL);
    lard_join(a, NULL);
    lard_join(b, NULL);
    printf("x = %llu\n", (unsigned long long)lard_load64(&x));
    return 0;
}
