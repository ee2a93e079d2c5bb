/* Race-free: critical (named or not) and the lock routines bind to the
 * contention group (OpenMP 5.2 §15.2, §18.9), and each team of a teams
 * construct starts its own (§1.2.2: an initial thread and its descendants).
 * Within one team they order the team's threads, which update only their
 * team's elements; atomic binds to every thread of the device and orders
 * the update of one counter by every team. */
#include <omp.h>
#include <stdio.h>
#define TEAMS 3
static int crit[TEAMS], named[TEAMS], locked[TEAMS], size[TEAMS], all;
static int tcrit[2], tsize[2];
static omp_lock_t lk;
int main(void)
{
    int ok = 1, sum = 0;
    omp_init_lock(&lk);
#pragma omp teams num_teams(TEAMS)
#pragma omp parallel num_threads(2)
    {
        int t = omp_get_team_num();
#pragma omp single
        size[t] = omp_get_num_threads();
#pragma omp critical
        crit[t] += 1;
#pragma omp critical(per_team)
        named[t] += 1;
        omp_set_lock(&lk);
        locked[t] += 1;
        omp_unset_lock(&lk);
#pragma omp atomic
        all += 1;
    }
#pragma omp target teams num_teams(2) map(tofrom : tcrit, tsize)
#pragma omp parallel num_threads(2)
    {
        int t = omp_get_team_num();
#pragma omp single
        tsize[t] = omp_get_num_threads();
#pragma omp critical
        tcrit[t] += 1;
    }
    omp_destroy_lock(&lk);
    for (int t = 0; t < TEAMS; t++) {
        ok &= crit[t] == size[t] && named[t] == size[t] && locked[t] == size[t];
        sum += size[t];
    }
    for (int t = 0; t < 2; t++)
        ok &= tcrit[t] == tsize[t];
    printf("consistent = %d all = %d\n", ok, all == sum);
    return 0;
}
