/* Racy: the task created before the taskgroup is not waited for by it. */
#include <stdio.h>
static int early, late;
int main(void)
{
    int sum = 0;
#pragma omp parallel num_threads(4)
#pragma omp single
    {
#pragma omp task
        early = 1; /* RACE */
#pragma omp taskgroup
        {
#pragma omp task
            late = 2;
        }
        sum = late + early; /* RACE */
    }
    printf("done %d\n", sum >= 0);
    return 0;
}
