/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Binary mode, racy: two threads pass one pthread_barrier_t eight times.
 * The barrier orders each phase after the one before, whichever thread
 * returns from it first: cell[k-1], written by one thread in phase k-1, is
 * read by the other in phase k (race-free). Within a phase nothing orders
 * the two threads: both update `racy` in phase 3. */
#include <pthread.h>
#include <stdio.h>

#define PHASES 8
static pthread_barrier_t b;
static long cell[PHASES];
static long seen[2];
static long racy;

static void *worker(void *arg) {
    long me = (long)arg;
    for (int k = 0; k < PHASES; k++) {
        if (k % 2 == me)
            cell[k] = k + 1;
        else if (k > 0)
            seen[me] += cell[k - 1];
        if (k == 3)
            racy += me; /* RACE */
        pthread_barrier_wait(&b);
    }
    return NULL;
}

int main(void) {
    pthread_t t[2];
    pthread_barrier_init(&b, NULL, 2);
    for (long i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&b);
    printf("seen %ld %ld\n", seen[0], seen[1]);
    return 0;
}
