/* Race-free: a taskgroup waits for its tasks and their descendants. */
#include <stdio.h>
static int leaf[4], mid[2];
int main(void)
{
    int sum = 0;
#pragma omp parallel num_threads(4)
#pragma omp single
    {
#pragma omp taskgroup
        {
            for (int i = 0; i < 2; i++) {
#pragma omp task firstprivate(i)
                {
                    mid[i] = i + 1;
#pragma omp task firstprivate(i)
                    leaf[2 * i] = 10 * (i + 1);
#pragma omp task firstprivate(i)
                    leaf[2 * i + 1] = 20 * (i + 1);
                }
            }
        }
        sum = mid[0] + mid[1] + leaf[0] + leaf[1] + leaf[2] + leaf[3];
    }
    printf("sum = %d\n", sum);
    return 0;
}
