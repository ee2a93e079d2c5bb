/* Racy: a hand-off through a relaxed flag orders nothing. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
static int message;
static atomic_int ready;
static void *producer(void *arg)
{
    (void)arg;
    message = 17; /* RACE */
    atomic_store_explicit(&ready, 1, memory_order_relaxed);
    return NULL;
}
int main(void)
{
    pthread_t p;
    pthread_create(&p, NULL, producer, NULL);
    while (!atomic_load_explicit(&ready, memory_order_relaxed))
        ;
    int m = message; /* RACE */
    pthread_join(p, NULL);
    printf("message = %d\n", m);
    return 0;
}
