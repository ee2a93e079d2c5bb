/* Racy: after passes of a race-free schedule(dynamic, 4) loop, a loop of the
 * same shape whose chunks all write the same four bins (the same values, so
 * the output does not depend on the schedule).  Once a pass's
 * barrier orders its chunks before what follows, the next pass's chunks get
 * their language-thread ids again (binary mode and the lard-cc runtime
 * alike), so the racing chunks hold reused ids; the report still names them
 * by the loop that ran them.  Each pass writes every element once, in a
 * different order, so a reused id that did not continue its previous
 * holder's clock would make the passes race. */
#include <stdio.h>
#define N 16
#define PASSES 4
static int a[N], hist[4];
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
            hist[i % 4] = a[i % 4] + 1; /* RACE */
    }
    printf("hist = %d %d %d %d\n", hist[0], hist[1], hist[2], hist[3]);
    return 0;
}
