/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Binary mode, racy OpenMP: a shared counter updated without critical, and
 * a loop-carried dependence; the region's end orders the final print. */
#include <omp.h>
#include <stdio.h>
#define N 64
int main(void) {
    long count = 0, a[N + 1];
    for (int i = 0; i <= N; i++)
        a[i] = 1;
#pragma omp parallel num_threads(4)
    {
        count++; /* RACE */
    }
#pragma omp parallel for num_threads(4) schedule(static)
    for (int i = 0; i < N; i++)
        a[i] = a[i + 1] + 1; /* RACE */
    printf("ran = %s\n", count > 0 && a[0] > 1 ? "yes" : "no");
    return 0;
}
