/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Binary mode: threads share an array on main's stack (stack memory is
 * checked).  Each writes its own element (race-free) and all of them
 * write one common element (racy). */
#include <pthread.h>
#include <stdio.h>
#define N 3
struct job { long *slots; long id; };
static void *work(void *arg) {
    struct job *j = arg;
    j->slots[j->id] = j->id * 10;
    j->slots[N] = j->id; /* RACE */
    return NULL;
}
int main(void) {
    long slots[N + 1] = {0};
    struct job jobs[N];
    pthread_t t[N];
    for (long i = 0; i < N; i++) {
        jobs[i] = (struct job){slots, i};
        pthread_create(&t[i], NULL, work, &jobs[i]);
    }
    for (int i = 0; i < N; i++) pthread_join(t[i], NULL);
    printf("sum = %ld\n", slots[0] + slots[1] + slots[2]);
    return 0;
}
