/* Race-free: the teams of a teams construct (on the host, and in a target
 * region run on the host) write their own elements and their own private
 * variables, and distribute a loop's iterations among themselves; the end
 * of every team happens before the encountering task reads the results. */
#include <omp.h>
#include <stdio.h>
#define N 12
static int hits[4], a[N], b[N];
int main(void)
{
    int sum = 0;
#pragma omp teams num_teams(3)
    {
        int t = omp_get_team_num(), mine = 10 * t;
        mine += 1;
        hits[t] = mine;
    }
#pragma omp teams distribute num_teams(3)
    for (int i = 0; i < N; i++)
        a[i] = i * i;
#pragma omp target teams num_teams(2) map(tofrom : b)
    {
        int t = omp_get_team_num(), mine = t + 1;
        mine *= 2;
        b[t] = mine;
    }
    for (int i = 0; i < N; i++)
        sum += a[i];
    printf("hits = %d %d %d b = %d %d sum = %d\n", hits[0], hits[1], hits[2], b[0], b[1], sum);
    return 0;
}
