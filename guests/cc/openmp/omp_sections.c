/* Race-free: sections write different variables; the implicit barrier at
 * the end orders them before the read in the same region. */
#include <stdio.h>
static int a, b, c, sum;
int main(void)
{
#pragma omp parallel num_threads(3)
    {
#pragma omp sections
        {
#pragma omp section
            a = 1;
#pragma omp section
            b = 2;
#pragma omp section
            c = 3;
        }
#pragma omp single
        sum = a + b + c;
    }
    printf("sum = %d\n", sum);
    return 0;
}
