/* Race-free: two nowait loops over different arrays, then an explicit
 * barrier before the cross reads. */
#include <stdio.h>
#define N 32
static int a[N], b[N], c[N];
int main(void)
{
#pragma omp parallel num_threads(4)
    {
#pragma omp for nowait
        for (int i = 0; i < N; i++)
            a[i] = i;
#pragma omp for nowait
        for (int i = 0; i < N; i++)
            b[i] = 2 * i;
#pragma omp barrier
#pragma omp for
        for (int i = 0; i < N; i++)
            c[i] = a[N - 1 - i] + b[N - 1 - i];
    }
    printf("c0 = %d\n", c[0]);
    return 0;
}
