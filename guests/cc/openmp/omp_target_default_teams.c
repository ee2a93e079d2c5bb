/* Race-free: a target region's teams construct without num_teams, run on
 * the host, whatever number of teams the implementation chooses (libgomp's
 * host fallback one, lard two): the iterations update the counter through
 * a reduction, and each element of the array belongs to one iteration. */
#include <stdio.h>
#define N 200
static int hits, a[N];
int main(void)
{
    int ok = 1;
#pragma omp target map(tofrom : hits, a)
#pragma omp teams distribute reduction(+ : hits)
    for (int i = 0; i < N; i++) {
        a[i] = i;
        hits++;
    }
    for (int i = 0; i < N; i++)
        ok &= a[i] == i;
    printf("hits = %d ok = %d\n", hits, ok);
    return 0;
}
