/* Race-free: outside every parallel region the binding team is the initial
 * thread alone, whatever the team size of parallel regions, so the tasks
 * created there run on that thread, which finishes each before it
 * continues; OpenMP's data races are between threads. Here a task writes
 * `var` that its creator then reads without a taskwait (DataRaceBench's
 * tasking-threadprivate1), and tasks share the thread's threadprivate
 * copy. A taskloop's tasks bound to no team, or undeferred by if(0) inside
 * a parallel region, run one after another. The same code inside a
 * parallel region races: race_omp_task_no_team.c. */
#include <stdio.h>
static int tp;
#pragma omp threadprivate(tp)
static int var, sum, seen;
int main(void)
{
#pragma omp task
    {
#pragma omp task
        {
            tp = 1;
#pragma omp task
            {
            }
            var = tp;
        }
        tp = 2;
    }
    seen = var;
#pragma omp taskloop num_tasks(4) nogroup
    for (int i = 0; i < 8; i++)
        sum += i;
#pragma omp parallel num_threads(2)
#pragma omp single
    {
#pragma omp taskloop num_tasks(4) if (0)
        for (int i = 0; i < 8; i++)
            sum += i;
    }
    printf("seen = %d tp = %d sum = %d\n", seen, tp, sum);
    return 0;
}
