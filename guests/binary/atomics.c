/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Binary mode: a spin lock built from lock-prefixed instructions in program
 * code orders the data it protects (race-free); a plain counter next to it
 * is racy. */
#include <pthread.h>
#include <stdio.h>
static int lock;
static long guarded, unguarded;
static void *work(void *arg) {
    (void)arg;
    for (int i = 0; i < 200; i++) {
        while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE)) {
        }
        guarded++;
        __atomic_exchange_n(&lock, 0, __ATOMIC_RELEASE);
        unguarded++; /* RACE */
    }
    return NULL;
}
int main(void) {
    pthread_t a, b;
    pthread_create(&a, NULL, work, NULL);
    pthread_create(&b, NULL, work, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("guarded = %ld\n", guarded);
    return 0;
}
