/* Race-free: the twin of race_atomic_reset.c with the reset before the
 * threads start and the count read after they end; the atomic updates of
 * the two threads never race with each other. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
static long *hits;
static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 100; i++)
        __atomic_fetch_add(hits, 1, __ATOMIC_RELAXED);
    return NULL;
}
int main(void)
{
    pthread_t a, b;
    hits = malloc(sizeof *hits);
    *hits = 0;
    pthread_create(&a, NULL, worker, NULL);
    pthread_create(&b, NULL, worker, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("hits = %ld\n", *hits);
    free(hits);
    return 0;
}
