/* Racy: a task reads a shared variable the creator keeps modifying. */
#include <stdio.h>
static int n, copy;
int main(void)
{
#pragma omp parallel num_threads(2)
#pragma omp single
    {
#pragma omp task shared(n, copy)
        copy = n; /* RACE */
        n = 5; /* RACE */
#pragma omp taskwait
    }
    printf("done %d\n", copy >= 0);
    return 0;
}
