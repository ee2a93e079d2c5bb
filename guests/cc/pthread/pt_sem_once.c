/* Race-free: a semaphore hands data from one thread to another, and
 * pthread_once runs an initializer whose result every thread reads. */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
static sem_t ready;
static int payload, table_size, seen[3];
static pthread_once_t once = PTHREAD_ONCE_INIT;
static void init_table(void)
{
    table_size = 128;
}
static void *user(void *arg)
{
    long id = (long)arg;
    pthread_once(&once, init_table);
    seen[id] = table_size;
    return NULL;
}
static void *producer(void *arg)
{
    (void)arg;
    payload = 1234;
    sem_post(&ready);
    return NULL;
}
int main(void)
{
    pthread_t p, u[3];
    sem_init(&ready, 0, 0);
    pthread_create(&p, NULL, producer, NULL);
    sem_wait(&ready);
    printf("payload = %d\n", payload);
    for (long i = 0; i < 3; i++)
        pthread_create(&u[i], NULL, user, (void *)i);
    for (int i = 0; i < 3; i++)
        pthread_join(u[i], NULL);
    pthread_join(p, NULL);
    printf("seen = %d %d %d\n", seen[0], seen[1], seen[2]);
    return 0;
}
