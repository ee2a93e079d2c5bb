/* Race-free: each thread writes its slot, an explicit barrier, then each
 * reads its neighbour's slot; a second barrier before the slots are
 * overwritten. */
#include <omp.h>
#include <stdio.h>
static int slot[4], got[4];
int main(void)
{
#pragma omp parallel num_threads(4)
    {
        int t = omp_get_thread_num(), n = omp_get_num_threads();
        slot[t] = 10 * (t + 1);
#pragma omp barrier
        got[t] = slot[(t + 1) % n];
#pragma omp barrier
        slot[t] = 0;
    }
    printf("got = %d %d %d %d\n", got[0], got[1], got[2], got[3]);
    return 0;
}
