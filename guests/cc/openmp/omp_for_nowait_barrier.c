/* Race-free: two schedule(dynamic) loops with nowait over different arrays,
 * then an explicit barrier before a loop reads both (its chunks follow
 * every chunk of the first two), with teams of one and of two. */
#include <stdio.h>
#define N 16
static int a[N], b[N], c[N];
int main(void)
{
    int s = 0;
    for (int team = 1; team <= 2; team++) {
#pragma omp parallel num_threads(team)
        {
#pragma omp for nowait schedule(dynamic, 4)
            for (int i = 0; i < N; i++)
                a[i] = i + team;
#pragma omp for nowait schedule(dynamic, 4)
            for (int i = 0; i < N; i++)
                b[i] = 2 * i;
#pragma omp barrier
#pragma omp for schedule(guided)
            for (int i = 0; i < N; i++)
                c[i] = a[N - 1 - i] + b[N - 1 - i];
        }
        s += c[0];
    }
    printf("s = %d\n", s);
    return 0;
}
