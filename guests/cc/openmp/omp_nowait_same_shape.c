/* Race-free: static loops after a nowait that OpenMP orders iteration by
 * iteration.  Two schedule(static) loops of one parallel region with the
 * same number of iterations and the same chunk size run logical iteration
 * k on the same thread (OpenMP 5.2 §11.5.3), whatever their bounds, their
 * direction or a collapse: each loop below reads only what iteration k of
 * the loop before it wrote.  Racy twin: race_omp_nowait_shapes.c. */
#include <stdio.h>
#define N 48
static int a[N], b[N], c[N], d[N], e[N];
int main(void)
{
#pragma omp parallel num_threads(2)
    {
#pragma omp for schedule(static, 3) nowait
        for (int i = 0; i < N; i++)
            a[i] = i;
#pragma omp for schedule(static, 3) nowait
        for (int i = 1; i <= N; i++)
            b[i - 1] = a[i - 1] * 2;
#pragma omp for schedule(static, 3) nowait
        for (int i = N - 1; i >= 0; i -= 1)
            c[N - 1 - i] = b[N - 1 - i] + 1;
#pragma omp for collapse(2) nowait
        for (int r = 0; r < 6; r++)
            for (int s = 0; s < 8; s++)
                d[r * 8 + s] = r + s;
#pragma omp for nowait
        for (long i = 0; i < N; i++)
            e[i] = d[i] + 1;
    }
    long sum = 0;
    for (int i = 0; i < N; i++)
        sum += c[i] + e[i];
    printf("sum = %ld\n", sum);
    return 0;
}
