/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Two races in two functions, for the race report's tests (suppressions,
 * SARIF, the summary): two worker threads both increment `hits` in count()
 * (a read and a write, line marked RACE1) and both write `last` in note()
 * (line marked RACE2), with no synchronization between the workers. main
 * joins them and prints `hits = H last = L` (H is 1 or 2, L the last
 * writer's 1 or 2). Expected: racy, two races on two globals. */
#include <pthread.h>
#include <stdio.h>

long hits;
long last;

__attribute__((noinline)) void count(void)
{
    hits = hits + 1; /* RACE1 */
}

__attribute__((noinline)) void note(long v)
{
    last = v; /* RACE2 */
}

static void *worker(void *arg)
{
    count();
    note((long)arg);
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    pthread_create(&a, NULL, worker, (void *)1);
    pthread_create(&b, NULL, worker, (void *)2);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("hits = %ld last = %ld\n", hits, last);
    return 0;
}
