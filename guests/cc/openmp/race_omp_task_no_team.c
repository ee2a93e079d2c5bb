/* Racy: inside a parallel region a task is deferrable and any thread of
 * the team may run it, so a task's write and its creator's read without a
 * taskwait race, as do a deferrable taskloop's tasks on a shared sum,
 * however the run happened to order them. Outside every parallel region
 * the same code is race-free: omp_task_no_team.c. */
#include <stdio.h>
static int var, sum, seen;
int main(void)
{
#pragma omp parallel num_threads(2)
#pragma omp single
    {
#pragma omp task
        {
#pragma omp task
            var = 1; /* RACE */
        }
        seen = var; /* RACE */
#pragma omp taskloop num_tasks(4) nogroup
        for (int i = 0; i < 8; i++)
            sum += i; /* RACE */
    }
    printf("done %d\n", seen + sum > 0);
    return 0;
}
