/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* JUMBLE's montecarlo: a global debug flag that every worker writes, always
 * with the value it already holds (0), and reads to decide whether to
 * print diagnostics, with no synchronization.  Every visible value is 0,
 * so no read can change the program's behaviour.
 * Expected: racy; JUMBLE verdict benign. */
#include <lard.h>
#include <stdio.h>

#define WORKERS 3

static uint64_t debug;                      /* Tracked */
static uint64_t results[WORKERS];

static void *simulate(void *arg)
{
    uint64_t id = (uint64_t)(uintptr_t)arg, v = id + 1;
    lard_store64(&debug, 0); /* RACE */
    for (int i = 0; i < 100; i++) {
        v = v * 6364136223846793005ull + 1442695040888963407ull;
        if (lard_load64(&debug)) /* RACE */
            printf("debug: worker %llu step %d\n", (unsigned long long)id, i);
    }
    lard_store64(&results[id], v >> 60);
    return NULL;
}

int main(void)
{
    lard_thread_t t[WORKERS];
    for (int i = 0; i < WORKERS; i++)
        lard_spawn(&t[i], simulate, (void *)(uintptr_t)i);
    for (int i = 0; i < WORKERS; i++)
        lard_join(t[i], NULL);
    for (int i = 0; i < WORKERS; i++)
        printf("result %d = %llu\n", i, (unsigned long long)lard_load64(&results[i]));
    return 0;
}
