/* Race-free: each thread accumulates into its own element of a shared
 * array, indexed by its thread number, in the chunks of a dynamic loop and
 * the sections it runs. Under any team size or schedule each thread would
 * use its own element, so no two units race on one: once an implicit task
 * asked its thread number, its units are ordered (docs/lard-cc.md,
 * "Thread-bound state"). The barrier orders the sum. The same array read
 * across threads without the barrier races: race_omp_thread_index.c. */
#include <omp.h>
#include <stdio.h>
static double partial[2], total;
int main(void)
{
#pragma omp parallel num_threads(2)
    {
        int tid = omp_get_thread_num();
        partial[tid] = 0;
#pragma omp for schedule(dynamic, 8)
        for (int i = 0; i < 256; i++)
            partial[tid] += 1;
#pragma omp sections
        {
#pragma omp section
            partial[omp_get_thread_num()] += 1;
#pragma omp section
            partial[omp_get_thread_num()] += 1;
        }
#pragma omp single
        total = partial[0] + partial[1];
    }
    printf("total = %g\n", total);
    return 0;
}
