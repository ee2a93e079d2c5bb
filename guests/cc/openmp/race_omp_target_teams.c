/* Racy: a target region run on the host (no offload device) whose teams
 * update one shared element: each team is a logical thread, so the updates
 * race however the host fallback runs the teams. */
#include <stdio.h>
static int total[2];
int main(void)
{
#pragma omp target teams num_teams(2) map(tofrom : total)
    total[0] += 1; /* RACE */
    printf("total = %d\n", total[0]);
    return 0;
}
