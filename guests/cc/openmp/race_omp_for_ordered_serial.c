/* Racy: an ordered loop whose chunks update the shared position outside the
 * ordered region: the chunks are logical threads, so the updates race also
 * when a team of one runs every chunk. */
#include <stdio.h>
#define N 8
static int logv[N], pos;
int main(void)
{
#pragma omp parallel for num_threads(1) ordered schedule(dynamic, 2)
    for (int i = 0; i < N; i++) {
        pos++; /* RACE */
#pragma omp ordered
        logv[i] = i;
    }
    printf("pos = %d last = %d\n", pos, logv[N - 1]);
    return 0;
}
