/* Race-free: passes of a schedule(dynamic, 4) loop in one parallel region,
 * each writing every element once in a different order, then a loop of the
 * same shape that only reads them.  Each pass's barrier orders its chunks
 * before the next pass, whose chunks get their language-thread ids again
 * (binary mode and the lard-cc runtime alike): a reused id continues its
 * previous holder's clock, so no two passes race. */
#include <stdio.h>
#define N 16
#define PASSES 4
static int a[N], b[N];
int main(void)
{
#pragma omp parallel num_threads(2)
    {
        for (int p = 0; p < PASSES; p++) {
#pragma omp for schedule(dynamic, 4)
            for (int i = 0; i < N; i++)
                a[(i * 5 + p) % N] += i;
        }
#pragma omp for schedule(dynamic, 4)
        for (int i = 0; i < N; i++)
            b[i] = a[i] + a[(i + 1) % N];
    }
    printf("b = %d %d %d %d\n", b[0], b[1], b[2], b[3]);
    return 0;
}
