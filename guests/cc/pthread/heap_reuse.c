/* Race-free: memory reuse.  Thread A fills a heap block and frees it; thread
 * B (never synchronized with A) allocates blocks of the same size - glibc
 * may hand it A's block - and fills them.  free() clears the block's
 * histories, so the two occupants never race. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static void *filler(void *arg)
{
    long sum = 0;
    for (int r = 0; r < 10; r++) {
        int *p = malloc(64 * sizeof *p);
        for (int i = 0; i < 64; i++)
            p[i] = i + (int)(long)arg;
        for (int i = 0; i < 64; i++)
            sum += p[i];
        p = realloc(p, 128 * sizeof *p);
        p[100] = 1;
        sum += p[100];
        free(p);
    }
    return (void *)sum;
}
int main(void)
{
    pthread_t a, b;
    void *ra, *rb;
    pthread_create(&a, NULL, filler, (void *)1);
    pthread_create(&b, NULL, filler, (void *)2);
    pthread_join(a, &ra);
    pthread_join(b, &rb);
    printf("sums = %ld %ld\n", (long)ra, (long)rb);
    return 0;
}
