/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Four threads compute in phases separated by a lard_barrier: each phase
 * reads slots other threads wrote in the previous phase and overwrites slots
 * other threads read in the previous phase.  Expected: race-free. */
#include <lard.h>
#include <stdio.h>

#define N 4

static uint64_t a[N], b[N];                 /* program data (Tracked) */
static uint64_t total;
static lard_barrier_t barrier;

static void *worker(void *arg)
{
    unsigned i = (unsigned)(uintptr_t)arg;
    for (int round = 0; round < 3; round++) {
        lard_store64(&a[i], i + 1 + (uint64_t)round);
        lard_barrier_wait(&barrier);
        lard_store64(&b[i], lard_load64(&a[i]) + lard_load64(&a[(i + 1) % N]));
        lard_barrier_wait(&barrier);
        lard_store64(&a[i], 2 * lard_load64(&b[(i + N - 1) % N]));
        if (lard_barrier_wait(&barrier)) {  /* exactly one thread sums */
            uint64_t s = 0;
            for (int j = 0; j < N; j++)
                s += lard_load64(&a[j]);
            lard_store64(&total, lard_load64(&total) + s);
        }
        lard_barrier_wait(&barrier);
    }
    return NULL;
}

int main(void)
{
    lard_thread_t t[N];
    lard_barrier_init(&barrier, N);
    for (unsigned i = 0; i < N; i++)
        lard_spawn(&t[i], worker, (void *)(uintptr_t)i);
    for (unsigned i = 0; i < N; i++)
        lard_join(t[i], NULL);
    printf("total = %llu\n", (unsigned long long)lard_load64(&total));
    return 0;
}
