/* Four threads take turns through one seq_cst atomic counter: thread k
 * spins until the counter is 4*i + k, writes its turn into a plain array
 * and stores the next value.  Every turn is published by the store and
 * acquired by the load that sees it, so the plain writes are ordered:
 * race-free.  The spinning threads all load the same location at once:
 * under lard's turn-taking schedule this starves the thread whose turn it
 * is unless the runtime's internal lock hands over when contended. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define THREADS 4
#define ROUNDS 50

static atomic_uint turn;
static int order[THREADS * ROUNDS];

static void *taker(void *arg)
{
    unsigned k = (unsigned)(unsigned long)arg;
    for (unsigned i = 0; i < ROUNDS; i++) {
        unsigned mine = THREADS * i + k;
        while (atomic_load(&turn) != mine)
            ;
        order[mine] = (int)k;
        atomic_store(&turn, mine + 1);
    }
    return NULL;
}

int main(void)
{
    pthread_t t[THREADS];
    for (unsigned long k = 0; k < THREADS; k++)
        pthread_create(&t[k], NULL, taker, (void *)k);
    for (int k = 0; k < THREADS; k++)
        pthread_join(t[k], NULL);
    int in_order = 0;
    for (int j = 0; j < THREADS * ROUNDS; j++)
        in_order += order[j] == j % THREADS;
    printf("%d of %d turns in order\n", in_order, THREADS * ROUNDS);
    return 0;
}
