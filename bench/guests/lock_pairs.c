/* Synchronisation-cost guest (docs/performance.md, "Where the time goes
 * now"): four threads each take and release one of eight mutexes ITERS
 * times around a one-line critical section, with an occasional condition
 * variable broadcast. Almost all of its time under lard is the
 * interception of pthread_mutex_lock/unlock.
 *
 * usage: lock_pairs [ITERS]   (default 200000; prints the sum, 4 x ITERS)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#define NT 4
static pthread_mutex_t m[8];
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static long counter[8];
static int iters = 200000;
static void *worker(void *arg)
{
    long id = (long)arg;
    for (int i = 0; i < iters; i++) {
        int k = (i + id) & 7;
        pthread_mutex_lock(&m[k]);
        counter[k]++;
        if ((i & 1023) == 0) pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&m[k]);
    }
    return 0;
}
int main(int argc, char **argv)
{
    if (argc > 1) iters = atoi(argv[1]);
    for (int i = 0; i < 8; i++) pthread_mutex_init(&m[i], 0);
    pthread_t t[NT];
    for (long i = 0; i < NT; i++) pthread_create(&t[i], 0, worker, (void *)i);
    for (int i = 0; i < NT; i++) pthread_join(t[i], 0);
    long s = 0;
    for (int i = 0; i < 8; i++) s += counter[i];
    printf("sum %ld\n", s);
    return 0;
}
