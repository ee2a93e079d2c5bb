/* Racy: an explicit task is a logical thread however the runtime runs it.
 * An undeferred task (if(0)) is ordered before its creator's next step, but
 * not with a deferred sibling created before it; a mergeable task is a
 * deferred task even when the runtime runs it at once, so the creator's
 * read after it needs a taskwait (in a team of one too: a parallel
 * region's team size is a run-time choice). */
#include <stdio.h>
static int x, y, seen;
int main(void)
{
#pragma omp parallel num_threads(1)
#pragma omp single
    {
#pragma omp task
        x = 1; /* RACE */
#pragma omp task if (0)
        x = 2; /* RACE */
#pragma omp task mergeable
        y += 1; /* RACE */
        seen = y; /* RACE */
#pragma omp taskwait
    }
    printf("done %d\n", x + seen > 0);
    return 0;
}
