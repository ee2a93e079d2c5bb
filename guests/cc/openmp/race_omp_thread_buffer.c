/* Racy: the scratch buffer is allocated before the parallel region and
 * shared by the team, so two chunks of the dynamic loop use it unordered,
 * whichever threads run them (a team of one included). With a buffer per
 * thread, allocated in the region, the loop is race-free:
 * omp_thread_buffer.c. */
#include <stdio.h>
#include <stdlib.h>
static double out[64];
int main(void)
{
    double *tmp = malloc(4 * sizeof *tmp);
#pragma omp parallel num_threads(2)
    {
#pragma omp for schedule(dynamic)
        for (int i = 0; i < 64; i++) {
            tmp[0] = i * 2.0; /* RACE */
            out[i] = tmp[0] + 1; /* RACE */
        }
    }
    free(tmp);
    printf("done\n");
    return 0;
}
