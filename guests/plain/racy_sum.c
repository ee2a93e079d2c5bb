/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Two threads increment a shared counter without synchronization: the final
 * value (and the interleaving) depends on the schedule. Prints the value. */
#include <pthread.h>
#include <stdio.h>
static volatile long counter;
static void *work(void *arg) { (void)arg; for (int i = 0; i < 20000; i++) counter = counter + 1; return NULL; }
int main(void) {
    pthread_t t1, t2;
    pthread_create(&t1, NULL, work, NULL);
    pthread_create(&t2, NULL, work, NULL);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    printf("counter=%ld\n", counter);
    return 0;
}
