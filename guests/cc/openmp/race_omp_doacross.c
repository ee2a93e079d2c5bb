/* Racy: a doacross loop whose iteration i waits for iteration i - 2 only
 * but reads what iteration i - 1 writes: the two are unordered, and they
 * race wherever they are in different chunks (schedule(dynamic, 4) with a
 * team of two or more).  Race-free twin: omp_doacross.c. */
#include <stdio.h>
#define N 64
static int a[N];
int main(void)
{
    a[0] = a[1] = 1;
#pragma omp parallel for ordered(1) schedule(dynamic, 4)
    for (int i = 2; i < N; i++) {
#pragma omp ordered depend(sink : i - 2)
        a[i] = a[i - 1] + 1; /* RACE */
#pragma omp ordered depend(source)
    }
    printf("a[63] = %s\n", a[N - 1] > 0 ? "set" : "unset");
    return 0;
}
