/* Race-free: simd loops whose lanes never conflict when every SIMD lane is
 * a logical thread (a lard-cc build's window, or --lard-omp-iterations):
 * dependences safelen(4) and safelen(4) + 1 iterations apart (never in one
 * SIMD chunk), independent iterations with a
 * private array (every lane's own, although a loop gcc does not vectorize
 * gives every lane the same slot), a `for simd` in a parallel region, and a
 * simd reduction.  Racy twin: race_omp_simd_lanes.c. */
#include <stdio.h>
#define N 64
static int a[N], c[N], d[N], e[N];
static void fill(int *t, int i)
{
    t[0] = i;
    t[1] = i * 2;
}
int main(void)
{
    long sum = 0;
    int tmp[2];
    for (int i = 0; i < 4; i++)
        c[i] = i;
#pragma omp simd safelen(4)
    for (int i = 4; i < N; i++)
        c[i] = c[i - 4] + 1;
    for (int i = 0; i < 5; i++)
        e[i] = i;
#pragma omp simd safelen(4)
    for (int i = 5; i < N; i++)
        e[i] = e[i - 5] + 1;
#pragma omp simd private(tmp)
    for (int i = 0; i < N; i++) {
        fill(tmp, c[i]);
        a[i] = tmp[0] + tmp[1];
    }
#pragma omp parallel for simd num_threads(2)
    for (int i = 0; i < N; i++)
        d[i] = a[i] + c[i] + e[i];
#pragma omp simd reduction(+ : sum)
    for (int i = 0; i < N; i++)
        sum += d[i];
    printf("c[63] = %d, sum = %ld\n", c[63], sum);
    return 0;
}
