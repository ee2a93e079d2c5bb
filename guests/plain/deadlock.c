/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Two threads take two mutexes in opposite order; a barrier makes sure each
 * holds its first before wanting the second, so they deadlock every time. */
#include <pthread.h>
#include <stdio.h>
static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t bar;
static void *one(void *x) { (void)x; pthread_mutex_lock(&a); pthread_barrier_wait(&bar); pthread_mutex_lock(&b); return NULL; }
static void *two(void *x) { (void)x; pthread_mutex_lock(&b); pthread_barrier_wait(&bar); pthread_mutex_lock(&a); return NULL; }
int main(void) {
    pthread_t t1, t2;
    pthread_barrier_init(&bar, NULL, 2);
    pthread_create(&t1, NULL, one, NULL);
    pthread_create(&t2, NULL, two, NULL);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    puts("unreachable");
    return 0;
}
