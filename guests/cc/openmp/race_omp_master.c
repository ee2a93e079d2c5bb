/* Racy: master has no implied barrier; the others read what it writes. */
#include <omp.h>
#include <stdio.h>
static int scale, out[4];
int main(void)
{
#pragma omp parallel num_threads(4)
    {
#pragma omp master
        scale = 3; /* RACE */
        out[omp_get_thread_num()] = scale * 2; /* RACE */
    }
    printf("done %d\n", out[0] + out[1] + out[2] + out[3] >= 0);
    return 0;
}
