/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Ownership hand-off: main fills a buffer and hands it to one worker,
 * which updates it without locks; main frees it after the join.
 * Expected: no data race (spawn and join order every access) and no
 * object race: the worker is the buffer's second owner (exclusive2), the
 * hand-off idiom the paper's second-owner state exists for. */
#include <lard.h>
#include <stdio.h>

#define N 32

static void *worker(void *arg)
{
    uint64_t *buf = arg;
    uint64_t sum = 0;
    for (int i = 0; i < N; i++) {
        uint64_t v = lard_load64(&buf[i]) * 3;
        lard_store64(&buf[i], v);
        sum += v;
    }
    return (void *)(uintptr_t)sum;
}

int main(void)
{
    lard_thread_t t;
    void *ret;
    uint64_t *buf = lard_malloc(N * sizeof *buf);
    for (int i = 0; i < N; i++)
        lard_store64(&buf[i], (uint64_t)i);
    lard_spawn(&t, worker, buf);
    lard_join(t, &ret);
    lard_free(buf);
    printf("sum = %llu\n", (unsigned long long)(uintptr_t)ret);
    return 0;
}
