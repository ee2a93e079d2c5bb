/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Race-free: four threads, each summing into its own heap buffer, and
 * adding its result to a total under a lock once. Nearly every checked
 * access of the program is the buffer update on the line marked HOT, so
 * that line is where a detector's work on this program goes. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define WORDS 512
#define ROUNDS 40

static long total;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void *work(void *arg) {
    long *buf = arg;
    for (int r = 0; r < ROUNDS; r++)
        for (int i = 0; i < WORDS; i++)
            buf[i] += r ^ i; /* HOT */
    long sum = 0;
    for (int i = 0; i < WORDS; i++)
        sum += buf[i];
    pthread_mutex_lock(&m);
    total += sum;
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(void) {
    pthread_t t[4];
    long *bufs[4];
    for (int i = 0; i < 4; i++) {
        bufs[i] = calloc(WORDS, sizeof(long));
        pthread_create(&t[i], NULL, work, bufs[i]);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < 4; i++)
        free(bufs[i]);
    printf("total=%ld\n", total);
    return 0;
}
