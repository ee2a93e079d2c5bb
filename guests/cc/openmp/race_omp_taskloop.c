/* Racy: a taskloop whose iterations read the next element. */
#include <stdio.h>
#define N 48
static int v[N];
int main(void)
{
#pragma omp parallel num_threads(4)
#pragma omp single
#pragma omp taskloop num_tasks(4)
    for (int i = 0; i < N - 1; i++)
        v[i] = v[i + 1] + 1; /* RACE */
    printf("done %d\n", v[0] > 0);
    return 0;
}
