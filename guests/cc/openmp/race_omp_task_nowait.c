/* Racy: the creator reads a result its task writes, without taskwait. */
#include <stdio.h>
static int result;
int main(void)
{
    int seen = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
    {
#pragma omp task
        result = 42; /* RACE */
        seen = result; /* RACE */
    }
    printf("done %d\n", seen >= 0);
    return 0;
}
