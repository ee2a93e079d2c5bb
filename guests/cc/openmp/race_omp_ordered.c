/* Racy: the loop is ordered but the shared log position is updated outside
 * the ordered region. */
#include <stdio.h>
#define N 16
static int logv[N + 1], pos;
int main(void)
{
#pragma omp parallel for num_threads(4) ordered schedule(static, 1)
    for (int i = 0; i < N; i++) {
        pos++; /* RACE */
#pragma omp ordered
        logv[i] = i;
    }
    printf("done %d\n", pos > 0 && logv[3] == 3);
    return 0;
}
