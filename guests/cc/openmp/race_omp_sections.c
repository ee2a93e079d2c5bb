/* Racy: one section updates a total that every thread reads after the
 * sections construct without waiting (nowait). */
#include <omp.h>
#include <stdio.h>
static int total, other, seen[2];
int main(void)
{
#pragma omp parallel num_threads(2)
    {
#pragma omp sections nowait
        {
#pragma omp section
            total += 1; /* RACE */
#pragma omp section
            other += 2;
        }
        seen[omp_get_thread_num()] = total; /* RACE */
    }
    printf("done %d\n", seen[0] + seen[1] + other > 0);
    return 0;
}
