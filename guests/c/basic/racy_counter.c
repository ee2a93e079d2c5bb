/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Two threads increment a shared counter with no lock.  Expected: racy
 * (every increment after the other thread's first one races; the read and
 * the write of an increment are on the same line). */
#include <lard.h>
#include <stdio.h>

static uint64_t counter;                    /* program data (Tracked) */

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1000; i++)
        lard_store64(&counter, lard_load64(&counter) + 1); /* RACE */
    return NULL;
}

int main(void)
{
    lard_thread_t t[2];
    for (int i = 0; i < 2; i++)
        lard_spawn(&t[i], worker, NULL);
    for (int i = 0; i < 2; i++)
        lard_join(t[i], NULL);
    /* The final value depends on the interleaving: print only "done". */
    printf("done\n");
    return 0;
}
