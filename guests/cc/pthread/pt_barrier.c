/* Race-free: pthread_barrier_wait separates a write phase from a read
 * phase, twice. */
#include <pthread.h>
#include <stdio.h>
static pthread_barrier_t b;
static int slot[4], out[4];
static void *work(void *arg)
{
    long id = (long)arg;
    for (int round = 0; round < 2; round++) {
        slot[id] = (int)id + round;
        pthread_barrier_wait(&b);
        out[id] += slot[(id + 1) % 4];
        pthread_barrier_wait(&b);
    }
    return NULL;
}
int main(void)
{
    pthread_t t[4];
    pthread_barrier_init(&b, NULL, 4);
    for (long i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, work, (void *)i);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    printf("out = %d %d %d %d\n", out[0], out[1], out[2], out[3]);
    return 0;
}
