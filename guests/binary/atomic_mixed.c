/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Binary mode: a plain write that an atomic read-modify-write of the same
 * location is not ordered with is a data race (C11 5.1.2.4); two atomics
 * never race, and neither do a compare-exchange and a plain read. The
 * counters are on the heap, where no DWARF type or static address makes
 * their plain accesses atomic. The pipe makes the resetter run after both
 * updaters without ordering it after them: lard takes happens-before from
 * synchronization, not from I/O. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static long *counters;
static int fds[2];
static void *updater(void *arg) {
    long expected = -1;
    char done = 1;
    (void)arg;
    for (int i = 0; i < 100; i++)
        __atomic_fetch_add(&counters[0], 1, __ATOMIC_RELAXED);
    /* Fails: counters[1] is never -1. */
    __atomic_compare_exchange_n(&counters[1], &expected, 5, 0, __ATOMIC_RELAXED,
                                __ATOMIC_RELAXED);
    if (write(fds[1], &done, 1) != 1)
        abort();
    return NULL;
}
static void *resetter(void *arg) {
    char done[2];
    long *out = arg;
    if (read(fds[0], &done[0], 1) != 1 || read(fds[0], &done[1], 1) != 1)
        abort();
    out[0] = counters[1];
    counters[0] = 0; /* RACE */
    return NULL;
}
int main(void) {
    pthread_t a, b, r;
    long seen[1];
    counters = calloc(2, sizeof *counters);
    if (counters == NULL || pipe(fds) != 0)
        return 1;
    counters[1] = 7;
    pthread_create(&r, NULL, resetter, seen);
    pthread_create(&a, NULL, updater, NULL);
    pthread_create(&b, NULL, updater, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    pthread_join(r, NULL);
    printf("seen %ld, now %ld\n", seen[0], counters[0]);
    free(counters);
    return 0;
}
