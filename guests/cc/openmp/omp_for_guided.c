/* Race-free: schedule(guided) and schedule(runtime) loops, one after the
 * other; the implicit barrier orders the second loop's reads after the
 * first loop's writes. */
#include <stdio.h>
#define N 64
static int a[N], b[N];
int main(void)
{
#pragma omp parallel num_threads(4)
    {
#pragma omp for schedule(guided)
        for (int i = 0; i < N; i++)
            a[i] = i * i;
#pragma omp for schedule(runtime)
        for (int i = 0; i < N; i++)
            b[i] = a[(i + 1) % N] - a[i];
    }
    long s = 0;
    for (int i = 0; i < N; i++)
        s += b[i];
    printf("s = %ld\n", s);
    return 0;
}
