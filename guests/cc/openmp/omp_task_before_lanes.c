/* Race-free: a task created before a simd loop reads a[3], which the loop
 * writes, but the creator waits for it (taskwait) before the loop.  Racy
 * twin: race_omp_task_before_lanes.c. */
#include <stdio.h>
#define N 8
int main(void)
{
    int a[N] = {0}, x = -1;
#pragma omp parallel num_threads(1) shared(a, x)
    {
#pragma omp single
        {
#pragma omp task shared(a, x)
            x = a[3];
#pragma omp taskwait
#pragma omp simd
            for (int i = 0; i < N; i++)
                a[i] = i + 1;
        }
    }
    printf("x = %d, a[3] = %d\n", x, a[3]);
    return 0;
}
