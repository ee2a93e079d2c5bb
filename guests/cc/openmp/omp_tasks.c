/* Race-free: tasks write distinct elements; taskwait orders them before
 * the creator's reads. */
#include <stdio.h>
#define N 8
static int r[N];
static int fib(int n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}
int main(void)
{
    int total = 0;
#pragma omp parallel num_threads(4)
#pragma omp single
    {
        for (int i = 0; i < N; i++) {
#pragma omp task firstprivate(i)
            r[i] = fib(i + 5);
        }
#pragma omp taskwait
        for (int i = 0; i < N; i++)
            total += r[i];
    }
    printf("total = %d\n", total);
    return 0;
}
