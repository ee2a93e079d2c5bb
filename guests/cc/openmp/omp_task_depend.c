/* Race-free: depend(out) -> depend(in) -> depend(inout) chains order the
 * tasks that share x and y; two readers of x run concurrently. */
#include <stdio.h>
static int x, y, r1, r2;
int main(void)
{
#pragma omp parallel num_threads(4)
#pragma omp single
    {
#pragma omp task depend(out : x)
        x = 5;
#pragma omp task depend(in : x)
        r1 = x + 1;
#pragma omp task depend(in : x)
        r2 = x + 2;
#pragma omp task depend(inout : x) depend(out : y)
        {
            x = x * 10;
            y = x;
        }
#pragma omp task depend(in : y)
        y = y + 1;
#pragma omp taskwait
        printf("x = %d y = %d r = %d %d\n", x, y, r1, r2);
    }
    return 0;
}
