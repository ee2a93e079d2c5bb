/* Race-free: ordered regions run in iteration order, each one's end before
 * the next one's start, across chunks and whichever threads run them (teams
 * of one and of two); the rest of each iteration touches only its own
 * element. */
#include <stdio.h>
#define N 8
static int sq[N], logv[2 * N], pos;
int main(void)
{
    for (int team = 1; team <= 2; team++) {
#pragma omp parallel for num_threads(team) ordered schedule(dynamic, 2)
        for (int i = 0; i < N; i++) {
            sq[i] = i * i + team;
#pragma omp ordered
            logv[pos++] = sq[i];
        }
    }
    printf("pos = %d last = %d\n", pos, logv[2 * N - 1]);
    return 0;
}
