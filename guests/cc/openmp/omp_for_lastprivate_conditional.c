/* Race-free: gcc 9+'s generic loop entry (GOMP_loop_start): a dynamic loop
 * with lastprivate(conditional), whose chunks compare their last update
 * under GOMP_atomic_start, then a static loop with a task reduction, which
 * GOMP_loop_start only sets up (no istart: the schedule stays inline). */
#include <stdio.h>
#define N 32
static int a[N];
int main(void)
{
    int last = -1, sum = 0;
#pragma omp parallel num_threads(2)
    {
#pragma omp for lastprivate(conditional : last) schedule(dynamic, 4)
        for (int i = 0; i < N; i++) {
            a[i] = i;
            if (i % 5 == 0)
                last = i;
        }
#pragma omp for reduction(task, + : sum) schedule(static)
        for (int i = 0; i < N; i++)
            sum += a[i];
    }
    printf("last = %d sum = %d\n", last, sum);
    return 0;
}
