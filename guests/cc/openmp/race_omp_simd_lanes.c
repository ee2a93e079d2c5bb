/* Racy: in a simd loop with safelen(4), iterations one apart may run in
 * one SIMD chunk, so b[i - 1]'s write and its read by the next iteration
 * race in the program, however the compiler vectorized it.  A lard-cc
 * build runs every SIMD lane as a logical thread.  `b` is the
 * enclosing function's, shared by the lanes (not a private copy).
 * Race-free twin: omp_simd_lanes.c. */
#include <stdio.h>
#define N 32
int main(void)
{
    int b[N] = {0};
#pragma omp simd safelen(4)
    for (int i = 1; i < N; i++)
        b[i] = b[i - 1] + 1; /* RACE */
    printf("b[31] = %d\n", b[31]);
    return 0;
}
