/* Racy: a task created before a simd loop reads a[3], which the loop
 * writes.  The task is concurrent with everything its creator does after
 * creating it, the loop included, however the team of one runs it
 * (libgomp runs it at the single's barrier, after the loop).  Built with
 * --lard-omp-iterations the write is lane 3's, a language thread forked
 * after the task was created: the task's start clock, taken at creation,
 * must keep the runtime from raising a clock floor over the lanes' entries
 * at the loop's end (docs/lard-cc-openmp.md, "Clock floors"), or the task would
 * start ordered after them.  Race-free twin: omp_task_before_lanes.c. */
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
            x = a[3]; /* RACE */
#pragma omp simd
            for (int i = 0; i < N; i++)
                a[i] = i + 1; /* RACE */
        }
    }
    printf("a[3] = %d\n", a[3]);
    return x == -1;
}
