/* Race-free: schedule(dynamic, 3); iterations write disjoint elements. */
#include <stdio.h>
#define N 64
static double x[N], y[N];
int main(void)
{
    for (int i = 0; i < N; i++)
        x[i] = i;
#pragma omp parallel for num_threads(4) schedule(dynamic, 3)
    for (int i = 0; i < N; i++)
        y[i] = 2.0 * x[i];
    double s = 0;
    for (int i = 0; i < N; i++)
        s += y[i];
    printf("s = %.0f\n", s);
    return 0;
}
