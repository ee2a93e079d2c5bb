/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Binary mode, race-free: every shared access is ordered by a pthread
 * mutex, rwlock, spin lock, condition variable, semaphore, barrier, once,
 * create or join.  Threads also call printf and malloc/free concurrently
 * (glibc's internal locks and atomics are system code: no false race). */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#define N 4
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_spinlock_t spin;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t bar;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static sem_t sem;
static long counter, table[N], config, spun, ready, handed, phase_sum[N];
static void init_config(void) { config = 42; }
static void *worker(void *arg) {
    long id = (long)arg;
    pthread_once(&once, init_config);
    for (int i = 0; i < 100; i++) {
        pthread_mutex_lock(&m);
        counter++;
        pthread_mutex_unlock(&m);
        pthread_rwlock_rdlock(&rw);
        long seen = table[(id + 1) % N];
        pthread_rwlock_unlock(&rw);
        pthread_rwlock_wrlock(&rw);
        table[id] = seen + 1;
        pthread_rwlock_unlock(&rw);
        pthread_spin_lock(&spin);
        spun++;
        pthread_spin_unlock(&spin);
    }
    char *p = malloc(64 + id);
    p[0] = (char)id;
    free(p);
    phase_sum[id] = config + id;
    pthread_barrier_wait(&bar);
    long total = 0;
    for (int i = 0; i < N; i++) total += phase_sum[i];
    pthread_barrier_wait(&bar);
    if (id == 0) {
        pthread_mutex_lock(&m);
        handed = total;
        ready = 1;
        pthread_cond_signal(&cv);
        pthread_mutex_unlock(&m);
    }
    if (id == 1) {
        sem_wait(&sem);
    }
    return NULL;
}
int main(void) {
    pthread_t t[N];
    pthread_spin_init(&spin, 0);
    pthread_barrier_init(&bar, NULL, N);
    sem_init(&sem, 0, 0);
    for (long i = 0; i < N; i++) pthread_create(&t[i], NULL, worker, (void *)i);
    pthread_mutex_lock(&m);
    while (!ready) pthread_cond_wait(&cv, &m);
    long got = handed;
    pthread_mutex_unlock(&m);
    sem_post(&sem);
    for (int i = 0; i < N; i++) pthread_join(t[i], NULL);
    printf("counter = %ld spun = %ld total = %ld\n", counter, spun, got);
    return 0;
}
