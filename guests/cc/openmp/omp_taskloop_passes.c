/* Race-free: passes of a taskloop in one parallel region, each writing every
 * element once, in a different order.  The taskloop's implicit taskgroup
 * orders its tasks before the single ends, and the single's barrier orders
 * them before the next pass. */
#include <stdio.h>
#define N 32
#define PASSES 4
static int a[N];
int main(void)
{
#pragma omp parallel num_threads(2)
    for (int p = 0; p < PASSES; p++) {
#pragma omp single
        {
#pragma omp taskloop num_tasks(8)
            for (int i = 0; i < N; i++)
                a[(i * 5 + p) % N] += i;
        }
    }
    printf("a = %d %d %d %d\n", a[0], a[1], a[2], a[3]);
    return 0;
}
