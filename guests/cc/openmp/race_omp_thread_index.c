/* Racy: each thread accumulates into its own element, indexed by its thread
 * number, but then reads the other thread's element without a barrier
 * (nowait), racing with that thread's initialisation and chunks, however
 * the chunks were handed out. With a barrier and one reader:
 * omp_thread_index.c. */
#include <omp.h>
#include <stdio.h>
static double partial[2], seen[2];
int main(void)
{
#pragma omp parallel num_threads(2)
    {
        int tid = omp_get_thread_num();
        partial[tid] = 0; /* RACE */
#pragma omp for schedule(dynamic, 8) nowait
        for (int i = 0; i < 256; i++)
            partial[tid] += 1; /* RACE */
        seen[tid] = partial[1 - tid]; /* RACE */
    }
    printf("done %d\n", seen[0] + seen[1] >= 0);
    return 0;
}
