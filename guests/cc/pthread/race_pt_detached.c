/* Racy: a detached thread's write is read by main, which only waits on a
 * relaxed atomic flag (no happens-before). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
static int result;
static atomic_int finished;
static void *work(void *arg)
{
    (void)arg;
    result = 9; /* RACE */
    atomic_store_explicit(&finished, 1, memory_order_relaxed);
    return NULL;
}
int main(void)
{
    pthread_t t;
    pthread_create(&t, NULL, work, NULL);
    pthread_detach(t);
    while (!atomic_load_explicit(&finished, memory_order_relaxed))
        ;
    printf("result = %d\n", result); /* RACE */
    return 0;
}
