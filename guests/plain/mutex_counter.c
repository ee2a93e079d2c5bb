/* SPDX-License-Identifier: MIT OR Apache-2.0
 * N pthreads x M increments under a mutex: the sum is exactly N*M. */
#include <pthread.h>
#include <stdio.h>
#define N 4
#define M 5000
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static void *work(void *arg) {
    (void)arg;
    for (int i = 0; i < M; i++) { pthread_mutex_lock(&lock); counter++; pthread_mutex_unlock(&lock); }
    return NULL;
}
int main(void) {
    pthread_t t[N];
    for (int i = 0; i < N; i++) pthread_create(&t[i], NULL, work, NULL);
    for (int i = 0; i < N; i++) pthread_join(t[i], NULL);
    printf("counter=%ld expected=%d\n", counter, N * M);
    return counter == N * M ? 0 : 1;
}
