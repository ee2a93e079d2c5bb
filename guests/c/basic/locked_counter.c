/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Four threads increment a shared counter under a lard_mutex.  Expected:
 * race-free. */
#include <lard.h>
#include <stdio.h>

static uint64_t counter;                    /* program data (Tracked) */
static lard_mutex_t lock = LARD_MUTEX_INIT;

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 500; i++) {
        lard_mutex_lock(&lock);
        lard_store64(&counter, lard_load64(&counter) + 1);
        lard_mutex_unlock(&lock);
    }
    return NULL;
}

int main(void)
{
    lard_thread_t t[4];
    lard_store64(&counter, 0);
    for (int i = 0; i < 4; i++)
        lard_spawn(&t[i], worker, NULL);
    for (int i = 0; i < 4; i++)
        lard_join(t[i], NULL);
    printf("counter = %llu\n", (unsigned long long)lard_load64(&counter));
    return 0;
}
