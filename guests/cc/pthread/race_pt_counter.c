/* Racy: pthreads increment a counter without a lock. */
#include <pthread.h>
#include <stdio.h>
static long count;
static void *work(void *arg)
{
    (void)arg;
    for (int i = 0; i < 20; i++) /* RACE */
        count++; /* RACE */
    return NULL;
}
int main(void)
{
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, work, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("done %d\n", count > 0);
    return 0;
}
