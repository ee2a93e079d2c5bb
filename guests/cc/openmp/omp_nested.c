/* Race-free: nested parallel regions write disjoint cells of a matrix. */
#include <omp.h>
#include <stdio.h>
static int m[2][2];
int main(void)
{
    omp_set_max_active_levels(2);
#pragma omp parallel num_threads(2)
    {
        int i = omp_get_thread_num();
#pragma omp parallel num_threads(2)
        m[i][omp_get_thread_num()] = 10 * i + omp_get_thread_num() + 1;
    }
    printf("m = %d %d %d %d\n", m[0][0], m[0][1], m[1][0], m[1][1]);
    return 0;
}
