/* Racy: neighbours' slots are read without a barrier after the writes. */
#include <omp.h>
#include <stdio.h>
static int slot[4], got[4];
int main(void)
{
#pragma omp parallel num_threads(4)
    {
        int t = omp_get_thread_num();
        slot[t] = t + 1; /* RACE */
        got[t] = slot[(t + 1) % 4]; /* RACE */
    }
    printf("done %d\n", got[0] + got[1] + got[2] + got[3] > 0);
    return 0;
}
