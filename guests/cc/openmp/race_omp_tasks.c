/* Racy: two sibling tasks write the same variable; they are concurrent
 * even when one thread runs both. */
#include <stdio.h>
static int x;
int main(void)
{
#pragma omp parallel num_threads(4)
#pragma omp single
    {
#pragma omp task /* TASK */
        x = 1; /* RACE */
#pragma omp task /* TASK */
        x = 2; /* RACE */
    }
    printf("done %d\n", x > 0);
    return 0;
}
