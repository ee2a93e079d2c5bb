/* Race-free: single copyprivate broadcasts a value computed once. */
#include <omp.h>
#include <stdio.h>
static int seen[4];
int main(void)
{
#pragma omp parallel num_threads(4)
    {
        int v;
#pragma omp single copyprivate(v)
        v = 42;
        seen[omp_get_thread_num()] = v;
    }
    printf("seen = %d %d %d %d\n", seen[0], seen[1], seen[2], seen[3]);
    return 0;
}
