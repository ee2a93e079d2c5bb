/* Race-free: the ordered region appends to a shared log in iteration
 * order; the work outside it touches only per-iteration data. */
#include <stdio.h>
#define N 16
static int sq[N], logv[N], pos;
int main(void)
{
#pragma omp parallel for num_threads(4) ordered schedule(dynamic, 1)
    for (int i = 0; i < N; i++) {
        sq[i] = i * i;
#pragma omp ordered
        logv[pos++] = sq[i];
    }
    printf("pos = %d last = %d\n", pos, logv[N - 1]);
    return 0;
}
