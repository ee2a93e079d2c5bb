/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* A producer publishes data through a lard_volatile flag; the consumer spins
 * on the flag and then reads the data.  Volatile accesses never race and the
 * store->load edge orders the data accesses.  Expected: race-free. */
#include <lard.h>
#include <sched.h>
#include <stdio.h>

static uint64_t data;                       /* program data (Tracked) */
static lard_volatile_t ready = LARD_VOLATILE_INIT(0);

static void *producer(void *arg)
{
    (void)arg;
    lard_store64(&data, 42);
    lard_volatile_store(&ready, 1);
    return NULL;
}

static void *consumer(void *arg)
{
    (void)arg;
    while (lard_volatile_load(&ready) == 0)
        sched_yield();
    return (void *)(uintptr_t)lard_load64(&data);
}

int main(void)
{
    lard_thread_t p, c;
    void *got;
    lard_spawn(&c, consumer, NULL);
    lard_spawn(&p, producer, NULL);
    lard_join(p, NULL);
    lard_join(c, &got);
    printf("data = %llu\n", (unsigned long long)(uintptr_t)got);
    return 0;
}
