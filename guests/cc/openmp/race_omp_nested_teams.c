/* Racy: two teams of a nested region run concurrently, one inside each
 * thread of the outer team, and nothing orders one team's members with the
 * other's: each thread writes its slot, passes its own team's barrier,
 * then reads the slot of the other team's thread with its number.  A
 * barrier orders its own team only.  Race-free twin: omp_nested_teams.c. */
#include <omp.h>
#include <stdio.h>
static int a[2][2], b[2][2];
int main(void)
{
    omp_set_max_active_levels(2);
#pragma omp parallel num_threads(2)
    {
        int o = omp_get_thread_num();
#pragma omp parallel num_threads(2)
        {
            int i = omp_get_thread_num();
            a[o][i] = 1; /* RACE */
#pragma omp barrier
            b[o][i] = a[1 - o][i]; /* RACE */
        }
    }
    printf("done %d\n", b[0][0] + b[0][1] + b[1][0] + b[1][1] >= 0);
    return 0;
}
