/* Race-free: the textbook recursive task program.  Every task of one
 * subtree is concurrent with every task of the other, so fib(n) needs one
 * language thread (vector-clock entry) per task.  Built with plain gcc,
 * binary mode checks it exactly (tests/tests/binary_mode.rs); a lard-cc
 * build needs more than the SDK's 64 entries once n >= 10: natively it runs
 * like its plain build, under lard it ends with a one-line reason
 * (docs/lard-cc.md, "Limits"; tests/tests/lard_cc.rs).  Not in the
 * manifest: no verdict for lard-cc builds. */
#include <stdio.h>
#include <stdlib.h>

static long fib(int n)
{
    long a, b;
    if (n < 2)
        return n;
#pragma omp task shared(a)
    a = fib(n - 1);
#pragma omp task shared(b)
    b = fib(n - 2);
#pragma omp taskwait
    return a + b;
}

int main(int argc, char **argv)
{
    long r = 0;
    int n = argc > 1 ? atoi(argv[1]) : 15;
#pragma omp parallel
#pragma omp single
    r = fib(n);
    printf("fib(%d) = %ld\n", n, r);
    return 0;
}
