/* Racy: the recursive task program with a shared call counter that no
 * synchronization protects: tasks of different subtrees increment it
 * concurrently.  Thousands of tasks are unordered with each other (one
 * logical thread each), checked exactly in both modes. */
#include <stdio.h>
#include <stdlib.h>

static long calls;

static long fib(int n)
{
    long a, b;
    calls++; /* RACE */
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
