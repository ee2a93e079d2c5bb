/* Racy: the first schedule(dynamic) loop has nowait, so a chunk of the
 * second loop reads an element a chunk of the first may still be writing:
 * nothing orders the chunks of the two loops, also when a team of one runs
 * them all. */
#include <stdio.h>
#define N 16
static int a[N], b[N];
int main(void)
{
#pragma omp parallel num_threads(1)
    {
#pragma omp for nowait schedule(dynamic, 4)
        for (int i = 0; i < N; i++)
            a[i] = i; /* RACE */
#pragma omp for schedule(dynamic, 4)
        for (int i = 0; i < N; i++)
            b[i] = a[N - 1 - i]; /* RACE */
    }
    printf("b0 = %d\n", b[0]);
    return 0;
}
