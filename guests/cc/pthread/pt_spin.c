/* Race-free: a pthread spinlock guards a shared sum. */
#include <pthread.h>
#include <stdio.h>
static pthread_spinlock_t s;
static long sum;
static void *work(void *arg)
{
    for (long i = 0; i < 25; i++) {
        pthread_spin_lock(&s);
        sum += (long)arg;
        pthread_spin_unlock(&s);
    }
    return NULL;
}
int main(void)
{
    pthread_t t[3];
    pthread_spin_init(&s, PTHREAD_PROCESS_PRIVATE);
    for (long i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, work, (void *)(i + 1));
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    printf("sum = %ld\n", sum);
    return 0;
}
