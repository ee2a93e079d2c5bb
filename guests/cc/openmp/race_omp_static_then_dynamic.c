/* Racy: the chunks of a schedule(dynamic) loop update the same bins, a
 * race whichever threads of the team run them (a team of one here).  A
 * schedule(static) loop before it in the region computes its bounds from
 * omp_get_thread_num(): that call is gcc's, not the program asking its
 * thread number, so the chunks stay concurrent (thread-bound state,
 * docs/lard-cc.md). */
#include <stdio.h>
#define N 16
static int a[N], hist[4];
int main(void)
{
#pragma omp parallel num_threads(1)
    {
#pragma omp for
        for (int i = 0; i < N; i++)
            a[i] = i;
#pragma omp for schedule(dynamic, 4)
        for (int i = 0; i < N; i++)
            hist[i % 4] += a[i]; /* RACE */
    }
    printf("hist = %d %d %d %d\n", hist[0], hist[1], hist[2], hist[3]);
    return 0;
}
