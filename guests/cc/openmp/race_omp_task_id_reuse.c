/* Racy: tasks A and B write x unordered.  B writes only after C has
 * started, and C is created after A's taskgroup ended: A's language thread
 * id is free then and ordered before C, so the lard-cc runtime may give C
 * A's id.  A race report must still name A as the earlier writer.  B waits
 * for C through a plain flag, itself a race between B and C. */
#include <stdio.h>
static int x;
static volatile int c_started;
int main(void)
{
#pragma omp parallel num_threads(2)
#pragma omp single
    {
#pragma omp task /* TASK B */
        {
            while (!c_started) /* RACE */
                ;
            x = 2; /* RACE */
        }
#pragma omp taskgroup
        {
#pragma omp task /* TASK A */
            x = 1; /* RACE */
        }
#pragma omp task /* TASK C */
        c_started = 1; /* RACE */
    }
    printf("done %d\n", x);
    return 0;
}
