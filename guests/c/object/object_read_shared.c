/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Read-only sharing: main fills a table, then three readers sum it
 * concurrently (a barrier before and after keeps all three alive while any
 * reads) and return their sums through the join.  Expected: no data race
 * and no object race: after the second owner the table is shared-read,
 * whose lockset may become empty without a report. */
#include <lard.h>
#include <stdio.h>

#define N 64

static lard_barrier_t all;

static void *reader(void *arg)
{
    const uint64_t *table = arg;
    uint64_t sum = 0;
    lard_barrier_wait(&all);
    for (int i = 0; i < N; i++)
        sum += lard_load64(&table[i]);
    lard_barrier_wait(&all);
    return (void *)(uintptr_t)sum;
}

int main(void)
{
    lard_thread_t t[3];
    uint64_t *table = lard_malloc(N * sizeof *table);
    for (int i = 0; i < N; i++)
        lard_store64(&table[i], (uint64_t)i);
    lard_barrier_init(&all, 3);
    for (int i = 0; i < 3; i++)
        lard_spawn(&t[i], reader, table);
    uint64_t total = 0;
    for (int i = 0; i < 3; i++) {
        void *ret;
        lard_join(t[i], &ret);
        total += (uintptr_t)ret;
    }
    printf("total = %llu\n", (unsigned long long)total);
    return 0;
}
