/* Racy: each section of a sections construct is a logical thread: one
 * section writes what another reads, a race whichever threads of the team
 * run them, also when one thread takes both (as it often does here). */
#include <stdio.h>
static int x, y;
int main(void)
{
#pragma omp parallel sections num_threads(2)
    {
#pragma omp section
        x = 1; /* RACE */
#pragma omp section
        y = x; /* RACE */
    }
    printf("done %d\n", x + y > 0);
    return 0;
}
