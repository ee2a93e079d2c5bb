/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Like volatile_flag, but the flag is a plain Tracked variable: the flag
 * accesses race, and so does the consumer's read of the data.  Expected:
 * racy.  The consumer's last flag read and its data read always race (with
 * the producer's earlier writes); the producer's flag write races with the
 * consumer's earlier flag reads only if the consumer read the flag before it
 * was set, which depends on scheduling. */
#include <lard.h>
#include <sched.h>
#include <stdio.h>

static uint64_t data;                       /* program data (Tracked) */
static uint64_t ready;                      /* program flag (Tracked) */

static void *producer(void *arg)
{
    (void)arg;
    lard_store64(&data, 42);
    lard_store64(&ready, 1); /* RACE */
    return NULL;
}

static void *consumer(void *arg)
{
    (void)arg;
    while (lard_load64(&ready) == 0) /* RACE */
        sched_yield();
    return (void *)(uintptr_t)lard_load64(&data); /* RACE */
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
