/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Binary mode: a plain write that an atomic read-modify-write of the same
 * location is not ordered with is a data race (C11 5.1.2.4); two atomics
 * never race, and neither do a compare-exchange and a plain read. The
 * counters are on the heap, where no DWARF type or static address makes
 * their plain accesses atomic, and the plain accesses come before any
 * read-modify-write touched them (after one, binary mode takes a plain
 * access of the location as an atomic one). The pipe makes the updaters
 * run after the resetter without ordering them after it: lard takes
 * happens-before from synchronization, not from I/O. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static long *counters;
static int fds[2];
static void *updater(void *arg) {
    long expected = -1;
    char go;
    (void)arg;
    if (read(fds[0], &go, 1) != 1)
        abort();
    for (int i = 0; i < 100; i++)
        __atomic_fetch_add(&counters[0], 1, __ATOMIC_RELAXED); /* RACE */
    /* Fails: counters[1] is never -1. */
    __atomic_compare_exchange_n(&counters[1], &expected, 5, 0, __ATOMIC_RELAXED,
                                __ATOMIC_RELAXED);
    return NULL;
}
static void *resetter(void *arg) {
    char go[2] = {1, 1};
    long *out = arg;
    out[0] = counters[1];
    counters[0] = 0; /* races with the updaters' fetch_add, which comes later */
    if (write(fds[1], go, 2) != 2)
        abort();
    return NULL;
}
int main(void) {
    pthread_t a, b, r;
    long seen[1];
    counters = calloc(2, sizeof *counters);
    if (counters == NULL || pipe(fds) != 0)
        return 1;
    counters[1] = 7;
    pthread_create(&a, NULL, updater, NULL);
    pthread_create(&b, NULL, updater, NULL);
    pthread_create(&r, NULL, resetter, seen);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    pthread_join(r, NULL);
    printf("seen %ld, now %ld\n", seen[0], counters[0]);
    free(counters);
    return 0;
}
