/* Racy: two schedule(static) loops whose iterations write the same element
 * through an index table.  In the first, iterations 2 and 5 collide: a team
 * of two runs both in its first thread's share [0, 8), one after the other,
 * but under a team of sixteen they run on two threads.  In the second
 * (chunks of four), iterations 1 and 9 collide: chunks [0, 4) and [8, 12)
 * are the first thread's under a team of two, another's under any other
 * team size.  A lard-cc build runs every iteration (every chunk) as a
 * logical thread, in a window by default or each its own with
 * --lard-omp-iterations.  Race-free twin: omp_static_iterations.c. */
#include <stdio.h>
#define N 16
static const int idx[N] = {0, 1, 2, 3, 4, 2, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
static const int idc[N] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 1, 10, 11, 12, 13, 14, 15};
static int out[N], outc[N];
int main(void)
{
#pragma omp parallel num_threads(2)
    {
#pragma omp for
        for (int i = 0; i < N; i++)
            out[idx[i]] += i; /* RACE */
#pragma omp for schedule(static, 4)
        for (int i = 0; i < N; i++)
            outc[idc[i]] += i; /* RACE */
    }
    printf("out[2] = %d, outc[1] = %d\n", out[2], outc[1]);
    return 0;
}
