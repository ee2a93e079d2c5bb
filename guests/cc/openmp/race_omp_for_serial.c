/* Racy: each chunk a schedule(dynamic) loop hands out is a logical thread:
 * two chunks update the same histogram bins, a race whichever threads of the
 * team run them, also when a team of one runs every chunk. */
#include <stdio.h>
#define N 16
static int hist[4];
int main(void)
{
#pragma omp parallel for num_threads(1) schedule(dynamic, 4)
    for (int i = 0; i < N; i++)
        hist[i % 4] += i; /* RACE */
    printf("hist = %d %d %d %d\n", hist[0], hist[1], hist[2], hist[3]);
    return 0;
}
