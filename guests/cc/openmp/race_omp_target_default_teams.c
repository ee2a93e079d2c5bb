/* Racy: a target region's teams construct without num_teams, run on the
 * host (no offload device). The number of teams is the implementation's
 * choice (OpenMP 5.2 §10.2); libgomp's host fallback runs one, lard two.
 * critical orders only the threads of one team's contention group
 * (§15.2), so the iterations that different teams run race on the
 * counter under every choice of more than one team. (No parallel region
 * inside the target region: libgomp ends the thread pool of one
 * asynchronously, and a static binary's exit can then abort while those
 * threads unwind.) */
#include <stdio.h>
#define N 200
static int hits;
int main(void)
{
#pragma omp target map(tofrom : hits)
#pragma omp teams distribute
    for (int i = 0; i < N; i++) {
#pragma omp critical
        hits++; /* RACE */
    }
    printf("hits = %d\n", hits);
    return 0;
}
