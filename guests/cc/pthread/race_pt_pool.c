/* Racy: a pool of four workers replaced one at a time (each joined, then
 * a new one created) beside a thread that lives through half of them and
 * never synchronizes with the pool. The workers take tasks under a lock
 * (race-free) but each first bumps a statistic without it, unordered with
 * the other live workers; the first worker writes a value the long-lived
 * thread reads after its own long loop. A joined worker's clock entry is
 * floored (docs/binary-mode.md, "Joined threads") only once every live
 * thread holds its final value: none while the long-lived thread lives,
 * which learns none; the others' after it is joined. */
#include <pthread.h>
#include <stdio.h>
#define POOL 4
#define WORKERS 48
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long next_task, total, unlocked;
static int early;
static void *worker(void *arg)
{
    long me = (long)arg;
    if (me == 0)
        early = 7; /* RACE */
    unlocked++; /* RACE */
    for (int k = 0; k < 5; k++) {
        pthread_mutex_lock(&lock);
        total += next_task++;
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}
static void *loner(void *arg)
{
    volatile unsigned long x = (unsigned long)arg;
    for (int i = 0; i < 200000; i++)
        x = x * 6364136223846793005ul + 1;
    return (void *)(long)(early + (int)(x & 1)); /* RACE */
}
int main(void)
{
    pthread_t ring[POOL], l;
    void *r;
    pthread_create(&l, NULL, loner, (void *)3);
    for (long i = 0; i < WORKERS; i++) {
        if (i == WORKERS / 2)
            pthread_join(l, &r);
        if (i >= POOL)
            pthread_join(ring[i % POOL], NULL);
        pthread_create(&ring[i % POOL], NULL, worker, (void *)i);
    }
    for (long i = WORKERS - POOL; i < WORKERS; i++)
        pthread_join(ring[i % POOL], NULL);
    printf("total %ld, unlocked %d\n", total, unlocked > 0);
    return 0;
}
