/* Racy: a mutex freed, and its memory reused for another mutex, passes no
 * synchronization on. The writer's unlock of the first mutex does not
 * order its write of `data` before the reader's lock of the second, which
 * the reader finds through a plain pointer (itself a race): nothing orders
 * the two accesses to `data`. The second mutex is the first's memory (the
 * allocator's per-thread cache gives a freed block back at once): the
 * program prints whether it is. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long data;
static pthread_mutex_t *volatile shared;
static int reused;

static void *writer(void *arg)
{
    pthread_mutex_t *m = malloc(sizeof *m), *n;
    (void)arg;
    pthread_mutex_init(m, NULL);
    data = 42; /* RACE */
    pthread_mutex_lock(m);
    pthread_mutex_unlock(m);
    pthread_mutex_destroy(m);
    free(m);
    n = malloc(sizeof *n);
    reused = n == m;
    pthread_mutex_init(n, NULL);
    shared = n; /* RACE */
    return NULL;
}

int main(void)
{
    pthread_t t;
    pthread_mutex_t *n;
    long v;
    pthread_create(&t, NULL, writer, NULL);
    while ((n = shared) == NULL) /* RACE */
        ;
    pthread_mutex_lock(n);
    v = data; /* RACE */
    pthread_mutex_unlock(n);
    pthread_join(t, NULL);
    printf("data %ld, the mutex's memory reused: %d\n", v, reused);
    pthread_mutex_destroy(n);
    free(n);
    return 0;
}
