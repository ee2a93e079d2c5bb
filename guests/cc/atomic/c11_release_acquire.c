/* Race-free: a C11 release store / acquire load hand-off, and a ticket
 * lock built from fetch_add (acq_rel) and acquire loads - plain movs on
 * x86, told apart only by the compiler's instrumentation. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
static int message;
static atomic_int ready;
static atomic_uint next_ticket, now_serving;
static long counter;
static void *producer(void *arg)
{
    (void)arg;
    message = 17;
    atomic_store_explicit(&ready, 1, memory_order_release);
    return NULL;
}
static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 20; i++) {
        unsigned t = atomic_fetch_add_explicit(&next_ticket, 1, memory_order_relaxed);
        while (atomic_load_explicit(&now_serving, memory_order_acquire) != t)
            ;
        counter++;
        atomic_store_explicit(&now_serving, t + 1, memory_order_release);
    }
    return NULL;
}
int main(void)
{
    pthread_t p, w[3];
    pthread_create(&p, NULL, producer, NULL);
    while (!atomic_load_explicit(&ready, memory_order_acquire))
        ;
    printf("message = %d\n", message);
    pthread_join(p, NULL);
    for (int i = 0; i < 3; i++)
        pthread_create(&w[i], NULL, worker, NULL);
    for (int i = 0; i < 3; i++)
        pthread_join(w[i], NULL);
    printf("counter = %ld\n", counter);
    return 0;
}
