/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* A worker builds a table and terminates; main joins it and then reads
 * and updates the table.  Expected: no data race (the join orders the
 * worker's writes before main's accesses) and no object race: main's
 * first access finds the owner terminated and inherits the table (§4.2,
 * case 1), so it stays exclusive. */
#include <lard.h>
#include <stdio.h>

#define N 16

static void *build(void *arg)
{
    (void)arg;
    uint64_t *table = lard_malloc(N * sizeof *table);
    for (int i = 0; i < N; i++)
        lard_store64(&table[i], (uint64_t)(i * i));
    return table;
}

int main(void)
{
    lard_thread_t t;
    void *ret;
    lard_spawn(&t, build, NULL);
    lard_join(t, &ret);
    uint64_t *table = ret;
    uint64_t sum = 0;
    for (int i = 0; i < N; i++) {
        sum += lard_load64(&table[i]);
        lard_store64(&table[i], 0);
    }
    lard_free(table);
    printf("sum = %llu\n", (unsigned long long)sum);
    return 0;
}
