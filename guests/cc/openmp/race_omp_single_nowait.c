/* Racy: single nowait initializes a value the other threads read without
 * waiting. */
#include <omp.h>
#include <stdio.h>
static int config, out[4];
int main(void)
{
#pragma omp parallel num_threads(4)
    {
#pragma omp single nowait
        config = 7; /* RACE */
        out[omp_get_thread_num()] = config; /* RACE */
    }
    printf("done %d\n", out[0] + out[1] + out[2] + out[3] >= 0);
    return 0;
}
