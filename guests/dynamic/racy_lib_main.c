/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Two program threads call store_slot (in libracy.so) without program
 * synchronization; the runtime-internal barrier orders them, so the output
 * is deterministic but the second store races with the first. */
#include <lard.h>
#include <pthread.h>
#include <stdio.h>

void store_slot(uint64_t v);
uint64_t load_slot(void);

static pthread_barrier_t stop_the_world; /* system synchronization */

static void *first(void *arg)
{
    (void)arg;
    store_slot(1);
    pthread_barrier_wait(&stop_the_world);
    return NULL;
}

static void *second(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&stop_the_world);
    store_slot(2);
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
    printf("slot = %llu\n", (unsigned long long)load_slot());
    return 0;
}
