/* Race-free: what the iterations of schedule(static) loops may rely on
 * when every iteration (every chunk) is a logical thread (a lard-cc
 * build's window, or --lard-omp-iterations): a variable declared in the parallel region is
 * its thread's, shared by the iterations that thread runs; after a nowait,
 * a loop with the same iteration count and schedule runs iteration i on
 * the thread that ran iteration i of the previous one (OpenMP 5.2
 * §11.5.3); the iterations of one chunk run in order on one thread; the
 * reduction's combination and the lastprivate copy-out come after the
 * iterations.  Racy twin: race_omp_static_iterations.c. */
#include <stdio.h>
#define N 64
static int a[N], b[N], c[N];
static long total;
int main(void)
{
    int last = -1;
#pragma omp parallel num_threads(2)
    {
        int scratch[4];
#pragma omp for nowait
        for (int i = 0; i < N; i++) {
            scratch[i % 4] = i;
            a[i] = scratch[i % 4] * 2;
        }
#pragma omp for
        for (int i = 0; i < N; i++)
            b[i] = a[i] + 1;
#pragma omp for schedule(static, 4)
        for (int i = 0; i < N; i++)
            c[i] = i % 4 == 0 ? b[i] : c[i - 1] + b[i];
#pragma omp for reduction(+ : total) lastprivate(last)
        for (int i = 0; i < N; i++) {
            total += c[i];
            last = i;
        }
    }
    printf("c[7] = %d, total = %ld, last = %d\n", c[7], total, last);
    return 0;
}
