/* Race-free: the textbook recursive task program.  Every task of one
 * subtree is concurrent with every task of the other, so fib(n) needs one
 * language thread (vector-clock entry) per task: 21,891 for fib(20).  Both
 * lard-cc builds and plain gcc builds (binary mode) check it exactly
 * (tests/tests/lard_cc.rs, tests/tests/binary_mode.rs, the manifest). */
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
