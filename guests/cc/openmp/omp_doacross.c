/* Race-free: doacross loops.  Each iteration of an ordered(1) loop reads
 * what the previous one wrote, after depend(sink: i - 1), and posts with
 * depend(source); an ordered(2) loop's iteration (i, j) waits for (i - 1,
 * j) and (i, j - 1).  Every chunk is a worksharing unit; the posts and
 * waits order exactly the iterations they name.  Racy twin:
 * race_omp_doacross.c. */
#include <stdio.h>
#define N 64
#define M 8
static int a[N];
static unsigned b[N][M];
int main(void)
{
    a[0] = 1;
#pragma omp parallel for ordered(1) schedule(dynamic, 4)
    for (int i = 1; i < N; i++) {
#pragma omp ordered depend(sink : i - 1)
        a[i] = a[i - 1] + 1;
#pragma omp ordered depend(source)
    }
#pragma omp parallel for ordered(2) schedule(static, 1)
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++) {
#pragma omp ordered depend(sink : i - 1, j) depend(sink : i, j - 1)
            b[i][j] = ((i > 0 ? b[i - 1][j] : 0) + (j > 0 ? b[i][j - 1] : 0) + 1) % 1000;
#pragma omp ordered depend(source)
        }
    printf("a[63] = %d, b[63][7] = %u\n", a[N - 1], b[N - 1][M - 1]);
    return 0;
}
