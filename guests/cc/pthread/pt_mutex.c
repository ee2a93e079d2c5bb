/* Race-free: pthread mutex (lock, trylock) around a shared counter and a
 * heap array. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long count;
static long *cells;
static void *work(void *arg)
{
    long id = (long)arg;
    for (int i = 0; i < 50; i++) {
        if (i % 2)
            pthread_mutex_lock(&m);
        else
            while (pthread_mutex_trylock(&m) != 0)
                ;
        count++;
        cells[(id + i) % 4] += 1;
        pthread_mutex_unlock(&m);
    }
    return NULL;
}
int main(void)
{
    pthread_t t[4];
    cells = calloc(4, sizeof *cells);
    for (long i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, work, (void *)i);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    printf("count = %ld cells = %ld\n", count, cells[0] + cells[1] + cells[2] + cells[3]);
    free(cells);
    return 0;
}
