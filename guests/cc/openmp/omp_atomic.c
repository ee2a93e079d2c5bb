/* Race-free: atomic update, capture and read/write of shared counters. */
#include <stdio.h>
static int hits;
static long total;
int main(void)
{
    int last = 0;
#pragma omp parallel for num_threads(4) reduction(max : last)
    for (int i = 0; i < 40; i++) {
        int v;
#pragma omp atomic
        hits++;
#pragma omp atomic capture
        v = total += i;
        if (v > last)
            last = v;
    }
    printf("hits = %d total = %ld last = %d\n", hits, total, last);
    return 0;
}
