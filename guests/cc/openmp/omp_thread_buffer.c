/* Race-free: each thread allocates a scratch buffer inside the parallel
 * region and reaches it through a private pointer, and the chunks of a
 * dynamic loop and the sections one thread runs use that thread's buffer,
 * one after another. Under any team size or schedule every thread would use
 * its own buffer, so no two units race on one: while an implicit task owns
 * heap memory it allocated in its region, its units are ordered
 * (docs/lard-cc.md, "A thread's own heap memory"). The same loop on a
 * buffer the team shares races: race_omp_thread_buffer.c. */
#include <stdio.h>
#include <stdlib.h>
static double out[64];
int main(void)
{
#pragma omp parallel num_threads(2)
    {
        double *tmp = malloc(4 * sizeof *tmp);
#pragma omp for schedule(dynamic)
        for (int i = 0; i < 64; i++) {
            tmp[0] = i * 2.0;
            out[i] = tmp[0] + 1;
        }
#pragma omp sections
        {
#pragma omp section
            tmp[1] = 1;
#pragma omp section
            tmp[1] = 2;
        }
        free(tmp);
    }
    printf("out[63] = %g\n", out[63]);
    return 0;
}
