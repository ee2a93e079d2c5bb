/* Race-free: a bounded buffer with a mutex and two condition variables. */
#include <pthread.h>
#include <stdio.h>
#define CAP 4
static int buf[CAP], head, tail, n;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER, not_empty = PTHREAD_COND_INITIALIZER;
static long got;
static void *producer(void *arg)
{
    (void)arg;
    for (int i = 1; i <= 30; i++) {
        pthread_mutex_lock(&m);
        while (n == CAP)
            pthread_cond_wait(&not_full, &m);
        buf[tail] = i;
        tail = (tail + 1) % CAP;
        n++;
        pthread_cond_signal(&not_empty);
        pthread_mutex_unlock(&m);
    }
    return NULL;
}
static void *consumer(void *arg)
{
    (void)arg;
    for (int i = 0; i < 30; i++) {
        pthread_mutex_lock(&m);
        while (n == 0)
            pthread_cond_wait(&not_empty, &m);
        got += buf[head];
        head = (head + 1) % CAP;
        n--;
        pthread_cond_signal(&not_full);
        pthread_mutex_unlock(&m);
    }
    return NULL;
}
int main(void)
{
    pthread_t p, c;
    pthread_create(&p, NULL, producer, NULL);
    pthread_create(&c, NULL, consumer, NULL);
    pthread_join(p, NULL);
    pthread_join(c, NULL);
    printf("got = %ld\n", got);
    return 0;
}
