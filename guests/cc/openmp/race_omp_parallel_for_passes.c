/* Racy: a time-step loop around a combined parallel for, each pass writing
 * every element once in a different order, then a parallel for whose
 * chunks all write the same four bins (the same values, so the output does
 * not depend on the schedule).  The end of each region orders its chunks
 * before the next region; a pool thread between regions runs no program
 * code, so binary mode floors a region's chunks when the next one ends,
 * and the racing chunks of the last region must still be unordered. */
#include <stdio.h>
#define N 16
#define PASSES 4
static int a[N], hist[4];
int main(void)
{
    for (int p = 0; p < PASSES; p++) {
#pragma omp parallel for num_threads(2) schedule(dynamic, 4)
        for (int i = 0; i < N; i++)
            a[(i * 5 + p) % N] += i;
    }
#pragma omp parallel for num_threads(2) schedule(dynamic, 4)
    for (int i = 0; i < N; i++)
        hist[i % 4] = a[i % 4] + 1; /* RACE */
    printf("hist = %d %d %d %d\n", hist[0], hist[1], hist[2], hist[3]);
    return 0;
}
