/* Racy: static loops after a nowait that OpenMP does not order.  Loops of
 * different iteration counts, or of different chunk sizes, may run an
 * iteration on different threads: with a team of two each pair below maps
 * the iterations to the same threads, but under three threads iteration 15
 * of the first loop runs on the third thread and iteration 15 of the
 * second on the second, so the write and the read are unordered (the
 * read, after the write in every schedule, is the racing access).
 * Race-free twin: omp_nowait_same_shape.c. */
#include <stdio.h>
#define N 16
static int a[N], b[N], c[N], d[N];
int main(void)
{
#pragma omp parallel num_threads(2)
    {
#pragma omp for nowait
        for (int i = 0; i < N; i++)
            a[i] = i;
#pragma omp for nowait
        for (int i = 0; i < N - 1; i++)
            b[i] = a[i] + 1; /* RACE */
#pragma omp for nowait
        for (int i = 0; i < N; i++)
            c[i] = i;
#pragma omp for schedule(static, 8)
        for (int i = 0; i < N; i++)
            d[i] = c[i] + 1; /* RACE */
    }
    printf("b[14] = %d, d[15] = %d\n", b[14], d[15]);
    return 0;
}
