/* Racy: a plain read of a flag that other threads set with atomic stores
 * and read with atomic loads.  The atomics never race with each other;
 * the plain read, which nothing orders with the stores, races with them
 * (C11 5.1.2.4).  The flag is on the heap. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
static int *flag;
static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 50; i++) {
        __atomic_store_n(flag, i, __ATOMIC_SEQ_CST); /* RACE */
        (void)__atomic_load_n(flag, __ATOMIC_SEQ_CST);
    }
    return NULL;
}
int main(void)
{
    pthread_t a, b;
    int seen;
    flag = calloc(1, sizeof *flag);
    pthread_create(&a, NULL, worker, NULL);
    pthread_create(&b, NULL, worker, NULL);
    seen = *flag; /* RACE */
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("seen %s\n", seen < 50 ? "a value" : "nothing");
    free(flag);
    return 0;
}
