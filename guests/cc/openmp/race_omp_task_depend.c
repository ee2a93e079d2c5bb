/* Racy: both tasks declare depend(in:x) but write x, so nothing orders
 * them. */
#include <stdio.h>
static int x;
int main(void)
{
#pragma omp parallel num_threads(4)
#pragma omp single
    {
#pragma omp task depend(in : x)
        x += 1; /* RACE */
#pragma omp task depend(in : x)
        x += 2; /* RACE */
#pragma omp taskwait
    }
    printf("done %d\n", x > 0);
    return 0;
}
