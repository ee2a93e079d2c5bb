/* Racy: each team of a teams construct is a logical thread: two teams update
 * the same counter, a race however the host runs them (one after another on
 * the encountering thread). */
#include <stdio.h>
static int hits;
int main(void)
{
#pragma omp teams num_teams(3)
    hits++; /* RACE */
    printf("hits = %d\n", hits);
    return 0;
}
