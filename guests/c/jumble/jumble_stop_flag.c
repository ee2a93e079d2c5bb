/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* A busy-wait stop flag (JUMBLE §1.2, fairness): a worker polls a plain
 * Tracked flag until the main thread sets it.  Stale reads only make the
 * worker poll a little longer; the memory model's fairness (the latest
 * value is eventually returned) makes it terminate.
 * Expected: racy; JUMBLE verdict benign. */
#include <lard.h>
#include <sched.h>
#include <stdio.h>

static uint64_t stop;                       /* Tracked */

static void *worker(void *arg)
{
    (void)arg;
    while (lard_load64(&stop) == 0) /* RACE */
        sched_yield();
    return NULL;
}

int main(void)
{
    lard_thread_t w;
    uint64_t v = 1;
    lard_spawn(&w, worker, NULL);
    for (int i = 0; i < 20000; i++)
        v = v * 3 % 1000003;
    lard_store64(&stop, 1); /* RACE */
    lard_join(w, NULL);
    printf("stopped (%llu)\n", (unsigned long long)v);
    return 0;
}
