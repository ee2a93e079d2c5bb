/* Race-free: readers read under rdlock concurrently, writers write under
 * wrlock. */
#include <pthread.h>
#include <stdio.h>
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static int table[8];
static long reads;
static pthread_mutex_t rm = PTHREAD_MUTEX_INITIALIZER;
static void *reader(void *arg)
{
    (void)arg;
    for (int i = 0; i < 20; i++) {
        pthread_rwlock_rdlock(&rw);
        int s = table[i % 8];
        pthread_rwlock_unlock(&rw);
        pthread_mutex_lock(&rm);
        reads += s >= 0;
        pthread_mutex_unlock(&rm);
    }
    return NULL;
}
static void *writer(void *arg)
{
    (void)arg;
    for (int i = 0; i < 20; i++) {
        pthread_rwlock_wrlock(&rw);
        table[i % 8] += 1;
        pthread_rwlock_unlock(&rw);
    }
    return NULL;
}
int main(void)
{
    pthread_t t[4];
    pthread_create(&t[0], NULL, reader, NULL);
    pthread_create(&t[1], NULL, writer, NULL);
    pthread_create(&t[2], NULL, reader, NULL);
    pthread_create(&t[3], NULL, writer, NULL);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    int s = 0;
    for (int i = 0; i < 8; i++)
        s += table[i];
    printf("s = %d reads = %ld\n", s, reads);
    return 0;
}
