/* Racy: writers take the rwlock for reading only. */
#include <pthread.h>
#include <stdio.h>
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static int value;
static void *bad_writer(void *arg)
{
    for (int i = 0; i < 10; i++) {
        pthread_rwlock_rdlock(&rw);
        value += (int)(long)arg; /* RACE */
        pthread_rwlock_unlock(&rw);
    }
    return NULL;
}
int main(void)
{
    pthread_t a, b;
    pthread_create(&a, NULL, bad_writer, (void *)1);
    pthread_create(&b, NULL, bad_writer, (void *)2);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("done %d\n", value > 0);
    return 0;
}
