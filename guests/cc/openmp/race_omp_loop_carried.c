/* Racy: loop-carried dependence under parallel for (iteration i reads
 * a[i+1], which iteration i+1 writes). */
#include <stdio.h>
#define N 64
int main(void)
{
    int a[N];
    for (int i = 0; i < N; i++)
        a[i] = i;
#pragma omp parallel for num_threads(4) schedule(static)
    for (int i = 0; i < N - 1; i++)
        a[i] = a[i + 1] + 1; /* RACE */
    printf("done %d\n", a[0] > 0);
    return 0;
}
