/* Racy: critical and the lock routines order only the threads of one
 * contention group (OpenMP 5.2 §15.2, §18.9), and each team of a teams
 * construct is its own group: two teams' threads that update one counter
 * under the same critical, or under the same lock, race, however the host
 * fallback runs the teams (one after another on one thread). */
#include <omp.h>
#include <stdio.h>
static int hits, locked;
static omp_lock_t lk;
int main(void)
{
    omp_init_lock(&lk);
#pragma omp target teams num_teams(2) map(tofrom : hits)
#pragma omp parallel num_threads(2)
    {
#pragma omp critical
        hits += 1; /* RACE */
    }
#pragma omp teams num_teams(2)
#pragma omp parallel num_threads(2)
    {
        omp_set_lock(&lk);
        locked += 1; /* RACE */
        omp_unset_lock(&lk);
    }
    omp_destroy_lock(&lk);
    printf("hits = %d locked = %d\n", hits > 0, locked > 0);
    return 0;
}
