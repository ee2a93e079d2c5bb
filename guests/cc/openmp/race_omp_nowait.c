/* Racy: the first loop has nowait, so the second loop reads elements that
 * other threads may still be writing. */
#include <stdio.h>
#define N 64
static int a[N], b[N];
int main(void)
{
#pragma omp parallel num_threads(4)
    {
#pragma omp for nowait schedule(static)
        for (int i = 0; i < N; i++)
            a[i] = i; /* RACE */
#pragma omp for schedule(static)
        for (int i = 0; i < N; i++)
            b[i] = a[N - 1 - i]; /* RACE */
    }
    printf("done %d\n", b[0] + b[N - 1] >= 0);
    return 0;
}
