/* Race-free: taskloop (implicit taskgroup) writes disjoint elements, read
 * after it by the creator. */
#include <stdio.h>
#define N 48
static int v[N];
int main(void)
{
    long s = 0;
#pragma omp parallel num_threads(4)
#pragma omp single
    {
#pragma omp taskloop num_tasks(6)
        for (int i = 0; i < N; i++)
            v[i] = 3 * i;
        for (int i = 0; i < N; i++)
            s += v[i];
    }
    printf("s = %ld\n", s);
    return 0;
}
