/* Racy: a plain reset of a counter that other threads update atomically.
 * The updates never race with each other; the reset, which nothing orders
 * with them, races with every one (C11 5.1.2.4).  The counter is on the
 * heap, where a binary cannot take its plain accesses for atomic ones. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
static long *hits;
static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 100; i++)
        __atomic_fetch_add(hits, 1, __ATOMIC_RELAXED); /* RACE */
    return NULL;
}
int main(void)
{
    pthread_t a, b;
    hits = calloc(1, sizeof *hits);
    pthread_create(&a, NULL, worker, NULL);
    pthread_create(&b, NULL, worker, NULL);
    *hits = 0; /* RACE */
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("updated\n");
    free(hits);
    return 0;
}
