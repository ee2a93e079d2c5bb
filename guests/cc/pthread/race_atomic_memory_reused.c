/* Racy: an atomic flag freed, and its memory reused for a new flag, passes
 * no synchronization on. The writer releases `data` through the first
 * flag, frees it, allocates the second in the same block (the allocator's
 * per-thread cache gives a freed block back at once) and hands it over
 * through a plain pointer (itself a race); the reader's acquire load of
 * the second flag reads its plain initialization (another race), which no
 * release wrote: nothing orders the two accesses to `data`. The program
 * prints whether the second flag is the first's memory. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static long data;
static atomic_int *volatile shared;
static int reused;

static void *writer(void *arg)
{
    atomic_int *f = malloc(sizeof *f), *g;
    (void)arg;
    *(int *)f = 0;
    data = 42; /* RACE */
    atomic_store_explicit(f, 1, memory_order_release);
    free(f);
    g = malloc(sizeof *g);
    reused = g == f;
    *(int *)g = 7; /* RACE */
    shared = g; /* RACE */
    return NULL;
}

int main(void)
{
    pthread_t t;
    atomic_int *g;
    long v = 0;
    pthread_create(&t, NULL, writer, NULL);
    while ((g = shared) == NULL) /* RACE */
        ;
    if (atomic_load_explicit(g, memory_order_acquire) == 7) /* RACE */
        v = data; /* RACE */
    pthread_join(t, NULL);
    printf("data %ld, the flag's memory reused: %d\n", v, reused);
    free(g);
    return 0;
}
