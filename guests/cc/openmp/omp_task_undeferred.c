/* Race-free: an undeferred task (if(0)) and an included task (created
 * inside a final task) complete before their creator continues, and a
 * taskwait orders a mergeable task before the creator's read, however the
 * runtime ran them. */
#include <stdio.h>
static int x, y, z;
int main(void)
{
#pragma omp parallel num_threads(2)
#pragma omp single
    {
#pragma omp task if (0)
        x = 1;
        x += 1;
#pragma omp task final(1)
        {
#pragma omp task
            y = 1;
            y += 1;
        }
    }
#pragma omp task mergeable
    z += 1;
#pragma omp taskwait
    printf("x = %d y = %d z = %d\n", x, y, z);
    return 0;
}
