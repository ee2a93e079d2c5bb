/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Producer/consumer over a bounded buffer with condition variables. */
#include <pthread.h>
#include <stdio.h>
#define ITEMS 2000
#define CAP 8
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER, not_empty = PTHREAD_COND_INITIALIZER;
static int buf[CAP], head, count;
static void *producer(void *arg) {
    (void)arg;
    for (int i = 1; i <= ITEMS; i++) {
        pthread_mutex_lock(&m);
        while (count == CAP) pthread_cond_wait(&not_full, &m);
        buf[(head + count++) % CAP] = i;
        pthread_cond_signal(&not_empty);
        pthread_mutex_unlock(&m);
    }
    return NULL;
}
static void *consumer(void *arg) {
    long *sum = arg;
    for (int i = 0; i < ITEMS / 2; i++) {
        pthread_mutex_lock(&m);
        while (count == 0) pthread_cond_wait(&not_empty, &m);
        *sum += buf[head]; head = (head + 1) % CAP; count--;
        pthread_cond_signal(&not_full);
        pthread_mutex_unlock(&m);
    }
    return NULL;
}
int main(void) {
    pthread_t p, c1, c2; long s1 = 0, s2 = 0;
    pthread_create(&c1, NULL, consumer, &s1);
    pthread_create(&c2, NULL, consumer, &s2);
    pthread_create(&p, NULL, producer, NULL);
    pthread_join(p, NULL); pthread_join(c1, NULL); pthread_join(c2, NULL);
    printf("consumed sum=%ld expected=%d\n", s1 + s2, ITEMS * (ITEMS + 1) / 2);
    return 0;
}
