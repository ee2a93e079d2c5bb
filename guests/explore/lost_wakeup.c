/* SPDX-License-Identifier: MIT OR Apache-2.0
 * A lost wake-up that deadlocks only under one interleaving.
 *
 * The consumer tests the flag without holding the lock and then waits
 * without a predicate loop. If it is preempted between its test and its
 * wait (the window), and the producer sets the flag and signals in
 * between, the signal finds no waiter and the consumer waits forever:
 * every thread blocks and lard run exits with 122. The producer first
 * computes for a while, so the consumer normally waits long before the
 * signal; lard run's default schedule prints "value=42" and exits 0.
 *
 * The consumer's unlocked read of the flag races with the producer's
 * write when the producer gets there first. */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int ready;
static int value;
static volatile unsigned long work;

static void *consumer(void *arg) {
    (void)arg;
    if (!ready) { /* test (unlocked) */
        pthread_mutex_lock(&m);
        pthread_cond_wait(&c, &m); /* wait: no `while (!ready)` loop */
        pthread_mutex_unlock(&m);
    }
    pthread_mutex_lock(&m);
    printf("value=%d\n", value);
    pthread_mutex_unlock(&m);
    return NULL;
}

static void *producer(void *arg) {
    (void)arg;
    for (int i = 0; i < 3000; i++) /* the work before the result */
        work += i;
    pthread_mutex_lock(&m);
    value = 42;
    ready = 1;
    pthread_cond_signal(&c);
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(void) {
    pthread_t c_thread, p_thread;
    pthread_create(&c_thread, NULL, consumer, NULL);
    pthread_create(&p_thread, NULL, producer, NULL);
    pthread_join(c_thread, NULL);
    pthread_join(p_thread, NULL);
    return 0;
}
