/* SPDX-License-Identifier: MIT OR Apache-2.0
 * A data race on a path that runs only under a preemption.
 *
 * Two workers add to a total under a lock taken with trylock. When the
 * lock is busy -- only if its holder was preempted inside the critical
 * section -- a worker takes the "busy" path, which reads the holder's
 * `owner` field without the lock: a read that races with the holder's
 * write. Each worker's work fits in half a quantum of lard run's default
 * schedule, so that schedule never takes the busy path and lard reports
 * no race; the program prints "total=2000" either way. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

#define ITERS 10

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long total;
static long owner;
static long busy_seen[2];
static volatile long scratch;

static void *worker(void *arg) {
    long id = (long)arg;
    for (int i = 0; i < ITERS; i++) {
        while (pthread_mutex_trylock(&m) != 0) {
            busy_seen[id] += owner; /* busy path: unlocked read, races */
            sched_yield();
        }
        owner = id + 1;              /* written under the lock */
        for (int k = 0; k < 20; k++) /* the critical section's work */
            scratch += k;
        total += 100;
        pthread_mutex_unlock(&m);
    }
    return NULL;
}

int main(void) {
    pthread_t t[2];
    for (long i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("total=%ld\n", total);
    return 0;
}
