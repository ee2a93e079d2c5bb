/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Binary mode, static pruning (docs/binary-mode.md): accesses the
 * must-race-free and redundancy analyses (HardRace §4.2-4.3) remove.
 *  - reads of read-only data: the constant table `scale` and the
 *    floating-point constant in `weigh` live in .rodata;
 *  - redundant accesses: each worker writes its own `slot` and at once
 *    reads and rewrites it (volatile keeps every access);
 *  - one racy line: every worker writes `last` and bumps it without a
 *    lock (the redundant read and write after the first write cannot be
 *    racy themselves: the first write is, on the same line). */
#include <pthread.h>
#include <stdio.h>
#define N 4
static const long scale[N] = {3, 5, 7, 11};
static volatile long slot[N];
static volatile long last;
static double sums[N];
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long total;

static volatile long iters = 2000;

__attribute__((noinline)) static double weigh(long v) { return (double)v * 0.375 + 1.5; }

/* Each worker's own slot: written, then read and rewritten at once. */
__attribute__((noinline)) static void bump(long id, long i) {
    slot[id] = i * scale[id];
    slot[id] += i;
}

static void *worker(void *arg) {
    long id = (long)arg;
    double sum = 0;
    long n = iters;
    for (long i = 0; i < n; i++) {
        bump(id, i);
        sum += weigh(slot[id]);
    }
    last = id; last += 1; /* RACE */
    sums[id] = sum;
    pthread_mutex_lock(&m);
    total += slot[id];
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(void) {
    pthread_t t[N];
    for (long i = 0; i < N; i++) pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < N; i++) pthread_join(t[i], NULL);
    double all = 0;
    for (int i = 0; i < N; i++) all += sums[i];
    printf("total = %ld sum = %.1f\n", total, all);
    return 0;
}
